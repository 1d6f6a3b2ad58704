"""Figures of results: exact match by source length, training curves, and distributions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from txcourse.notebook.plots.common import axes_grid, finish, label_fonts, new_axes
from txcourse.notebook.plots.labels import N_, _

__all__ = ["plot_accuracy_by_length", "plot_training_curves", "plot_distributions"]


def plot_accuracy_by_length(
    results: Mapping[str, Sequence], title: str = N_("Exact match by source length"), ax=None
) -> Figure:
    """Exact match (%) against source length, one line per model.

    Args:
        results: model name -> list of :class:`txcourse.evaluation.metrics.LengthBucket`
            (from :func:`txcourse.evaluation.metrics.accuracy_by_length`). Each point sits
            at the bucket midpoint.
        title: the axes title.
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure.

    Example:
        >>> from txcourse.evaluation.metrics import LengthBucket
        >>> fig = plot_accuracy_by_length({"gru": [LengthBucket(1, 1, 5, 0.8),
        ...                                        LengthBucket(2, 3, 5, 0.4)]})
        >>> fig.axes[0].lines[0].get_ydata().tolist()
        [80.0, 40.0]
    """
    from txcourse.evaluation.metrics import check_length_results

    check_length_results(results, allow_empty=False)
    fig, ax = new_axes(ax, (6, 4))
    for name, buckets in results.items():
        buckets = sorted(buckets, key=lambda b: b.low)
        ax.plot(
            [b.midpoint for b in buckets],
            [100 * b.exact_match for b in buckets],
            marker="o",
            label=_(str(name)),
            clip_on=False,
        )
    ax.set(title=_(title), xlabel=_("source length (bucket midpoint)"), ylabel=_("exact match (%)"), ylim=(0, 100))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


_KEY_LABELS = {"lr": N_("learning rate"), "loss": N_("loss"), "accuracy": N_("accuracy")}
_KEY_TITLES = (N_("lr"),)  # a panel's title is its record key (loss and accuracy are marked above)


def _check_history(history) -> dict:
    runs = history if isinstance(history, Mapping) else {None: history}
    if not runs:
        raise ValueError("history is an empty dict: expected run name -> list of records")
    for name, records in runs.items():
        where = "history" if name is None else f"history[{name!r}]"
        if isinstance(records, (str, Mapping)) or not isinstance(records, Sequence) or not records:
            raise ValueError(
                f"{where} must be a non-empty list of dicts such as {{'step': 100, 'loss': 2.3}}, got {records!r}"
            )
        for i, r in enumerate(records):
            if not isinstance(r, Mapping) or "step" not in r:
                raise ValueError(f"{where}[{i}] must be a dict with a 'step' entry, got {r!r}")
    return runs


def plot_training_curves(
    history, keys: Sequence[str] = ("loss", "accuracy", "lr"), title: str = N_("Training curves"), ax=None
) -> Figure:
    """One panel per logged quantity against ``step``; several runs are overlaid.

    Args:
        history: a list of records ``{"step": 100, "loss": 2.3, "lr": 1e-4, ...}``
            (one run), or a dict run name -> such a list (several runs).
        keys: the quantities to plot, one panel each. A key no record has is
            skipped; a record without a key (say, accuracy logged every 500
            steps) is skipped for that key only.
        title: the figure title.
        ax: None (new panels side by side) or a sequence of Axes, one per plotted key.

    Returns:
        The Figure.

    Example:
        >>> hist = [{"step": s, "loss": 3 / (s + 1), "lr": 1e-3} for s in range(5)]
        >>> fig = plot_training_curves(hist)
        >>> [a.get_title() for a in fig.axes]
        ['loss', 'lr']
    """
    runs = _check_history(history)
    if isinstance(keys, str) or not isinstance(keys, Sequence) or not keys or not all(isinstance(k, str) for k in keys):
        raise ValueError(
            f"keys must be a non-empty list of record keys such as ('loss', 'accuracy', 'lr'), got {keys!r}"
        )
    present = [k for k in keys if any(r.get(k) is not None for rs in runs.values() for r in rs)]
    if not present:
        seen = sorted({k for rs in runs.values() for r in rs for k in r})
        raise ValueError(f"none of keys {list(keys)} appear in the history records; they hold {seen}")
    fig, axes = axes_grid(ax, len(present), len(present), (4.2, 3.2))
    for key, a in zip(present, axes):
        for name, records in runs.items():
            points = [(r["step"], r[key]) for r in records if r.get(key) is not None]
            if points:
                steps, values = zip(*points)
                a.plot(steps, values, label=None if name is None else _(str(name)))
        a.set(title=_(key), xlabel=_("step"), ylabel=_(_KEY_LABELS.get(key, key)))
        a.grid(alpha=0.3)
        if len(runs) > 1:
            a.legend()
    fig.suptitle(_(title))
    return fig


def plot_distributions(
    distributions: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    title: str = N_("Distributions"),
    ylabel: str = N_("probability"),
    log: bool = False,
    ax=None,
) -> Figure:
    """Grouped bars: one group per class (``labels``), one bar per named distribution.

    Args:
        distributions: name -> V probabilities, e.g. a one-hot and a label-smoothed target.
        labels: the V class names for the x axis.
        title: the axes title.
        ylabel: the y-axis label.
        log: a logarithmic y axis (small probabilities such as eps / V stay visible).
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure.

    Example:
        >>> fig = plot_distributions({"p": [0.5, 0.5]}, ["a", "b"])
        >>> [float(b.get_height()) for b in fig.axes[0].patches]
        [0.5, 0.5]
    """
    if not isinstance(distributions, Mapping) or not distributions:
        raise ValueError(f"distributions must be a non-empty dict name -> probabilities, got {distributions!r}")
    rows = {str(k): np.asarray(v, dtype=float) for k, v in distributions.items()}
    labels = [str(x) for x in labels]
    for name, row in rows.items():
        if row.shape != (len(labels),):
            raise ValueError(
                f"distributions[{name!r}] must have one value per label ({len(labels)}), got shape {row.shape}"
            )
    fig, ax = new_axes(ax, (min(2.0 + 0.45 * len(labels), 14), 3.6))
    width = 0.8 / len(rows)
    x = np.arange(len(labels))
    for i, (name, row) in enumerate(rows.items()):
        ax.bar(x + (i - (len(rows) - 1) / 2) * width, row, width, label=_(name))
    ax.set_xticks(x, labels=labels)
    label_fonts(ax, labels)
    ax.set(title=_(title), xlabel=_("class (target token)"), ylabel=_(ylabel))
    if log:
        ax.set_yscale("log")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return finish(fig, labels)
