"""Framework-free figures for the course: positional encodings, masks, attention, results.

Imports numpy and matplotlib only, never PyTorch or TensorFlow: convert
tensors with ``.numpy()`` (``.detach().cpu().numpy()`` in PyTorch) first. Every
function draws on ``ax`` when given (on a new figure otherwise) and returns the
:class:`matplotlib.figure.Figure`; nothing calls ``plt.show()``, so the module
works under the headless ``Agg`` backend. :func:`save_figure` writes files
that are byte-for-byte reproducible.

Korean (or other CJK) token labels need a font with Hangul glyphs; matplotlib's
default DejaVu Sans has none. When one is installed (Noto Sans CJK, Nanum
Gothic, UnDotum...; on Debian/Ubuntu ``apt-get install fonts-noto-cjk`` or
``fonts-nanum``) tick labels fall back to it; otherwise the missing glyphs
show as boxes and the "Glyph ... missing" warnings are silenced.

Example:
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> w = np.full((2, 3), 1 / 3)
    >>> fig = plot_attention(w, ["je", "suis", "<eos>"], ["I", "am"])
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['je', 'suis', '<eos>']
"""

from __future__ import annotations

import functools
import io
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

__all__ = ["plot_positional_encoding", "plot_mask", "plot_attention", "plot_attention_heads",
           "plot_accuracy_by_length", "plot_training_curves", "plot_distributions", "save_figure", "cjk_font"]

# Font families with Hangul (and most CJK) glyphs, in order of preference.
CJK_FONT_NAMES = ("Noto Sans CJK KR", "Noto Sans KR", "Noto Sans CJK", "Source Han Sans",
                  "NanumGothic", "NanumBarunGothic", "Nanum Gothic", "UnDotum", "Malgun Gothic",
                  "Apple SD Gothic Neo", "AppleGothic", "Noto Serif CJK", "NanumMyeongjo",
                  "UnBatang")
_MASK_COLOURS = ("#deebf7", "#525252")  # False: may attend, True: masked
_SAVE_FORMATS = {
    "png": {"metadata": {"Software": None}},
    "svg": {"metadata": {"Date": None}},
    "pdf": {"metadata": {"CreationDate": None, "ModDate": None}},
}


def _pick_cjk_font(names: Sequence[str]) -> str | None:
    """The first family in ``names`` matching :data:`CJK_FONT_NAMES` (substring), or None."""
    for wanted in CJK_FONT_NAMES:
        for name in sorted(set(names)):
            if wanted.lower() in name.lower():
                return name
    return None


@functools.lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The name of an installed font family with Hangul glyphs, or None when there is none.

    Returns:
        A family name from ``matplotlib.font_manager.fontManager.ttflist`` such
        as ``"Noto Sans CJK JP"`` or ``"NanumGothic"``; None when none is
        installed (then Korean labels print as boxes).

    Example:
        >>> cjk_font() is None or isinstance(cjk_font(), str)
        True
    """
    from matplotlib import font_manager

    return _pick_cjk_font([f.name for f in font_manager.fontManager.ttflist])


@contextmanager
def _quiet_missing_glyphs():
    """Silence matplotlib's "Glyph ... missing from font(s)" warnings inside the block."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font",
                                category=UserWarning)
        yield


def _non_ascii(labels) -> bool:
    return any(not s.isascii() for s in labels)


def _label_fonts(ax, labels: Sequence[str]) -> None:
    """Let the tick labels of ``ax`` fall back to a CJK font when they need one."""
    font = cjk_font() if _non_ascii(labels) else None
    if font is None:
        return
    family = list(matplotlib.rcParams["font.sans-serif"][:1]) + [font]
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        label.set_fontfamily(family)


def _finish(fig: Figure, labels: Sequence[str]) -> Figure:
    """Lay the figure out once with glyph warnings off: text layouts are cached afterwards."""
    if _non_ascii(labels):
        with _quiet_missing_glyphs():
            fig.canvas.draw()
    return fig


def _new_axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax.figure, ax


def _as_2d(name: str, array, layout: str) -> np.ndarray:
    """``array`` as a 2-D numpy array; leading dimensions of size 1 are dropped."""
    a = np.asarray(array)
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 2 or 0 in a.shape:
        raise ValueError(f"{name} must be a non-empty 2-D array {layout}, got shape {a.shape}")
    return a


def _check_tokens(name: str, tokens, n: int, what: str, shape) -> list[str] | None:
    if tokens is None:
        return None
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise ValueError(f"{name} must be a list of strings or None, got {tokens!r}")
    if len(tokens) != n:
        raise ValueError(f"{name} has {len(tokens)} tokens but the weights have {n} {what} "
                         f"(weights shape {tuple(shape)}); pass one token per {what[:-1]}")
    return [str(t) for t in tokens]


def plot_positional_encoding(table, title: str = "Sinusoidal positional encoding",
                             ax=None) -> Figure:
    """Heat map of a positional-encoding table, positions down, dimensions across.

    Args:
        table: array (T, D), or (1, T, D) as some tutorials return it.
        title: the axes title.
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure (the heat map and its colour bar).

    Example:
        >>> fig = plot_positional_encoding(np.sin(np.arange(12.0)[:, None] * np.ones((1, 8))))
        >>> fig.axes[0].get_ylabel()
        'position'
    """
    table = _as_2d("table", table, "(T, D) of positions x dimensions")
    fig, ax = _new_axes(ax, (7, 4))
    bound = float(np.abs(table).max()) or 1.0
    mesh = ax.pcolormesh(table, cmap="RdBu", vmin=-bound, vmax=bound)
    ax.invert_yaxis()  # position 0 on top, like a table
    ax.set(title=title, xlabel="dimension", ylabel="position")
    fig.colorbar(mesh, ax=ax, label="encoding value")
    return fig


def plot_mask(mask, title: str = "Attention mask", xlabel: str = "key position",
              ylabel: str = "query position", ax=None) -> Figure:
    """Show a boolean attention mask; ``True`` (dark) marks a position that may NOT be attended.

    Args:
        mask: bool (or 0/1) array (T_q, T_k); leading size-1 dimensions, as in a
            (B=1, 1, 1, T_k) padding mask, are dropped; a 1-D mask is one row.
        title: the axes title.
        xlabel: x-axis label (keys).
        ylabel: y-axis label (queries).
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure (the mask and a two-colour colour bar naming the colours).

    Example:
        >>> look_ahead = np.triu(np.ones((4, 4), dtype=bool), k=1)
        >>> fig = plot_mask(look_ahead, "look-ahead mask")
        >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]
        ['False: may attend', 'True: masked']
    """
    m = np.asarray(mask)
    if m.ndim == 1:
        m = m[None, :]
    m = _as_2d("mask", m, "(T_q, T_k)")
    if m.dtype != bool and not np.isin(m, (0, 1)).all():
        raise ValueError(f"mask must be boolean (or 0/1), got dtype {m.dtype} with values "
                         f"{np.unique(m)[:5].tolist()}")
    t_q, t_k = m.shape
    fig, ax = _new_axes(ax, (min(1.5 + 0.4 * t_k, 12), min(1.2 + 0.4 * t_q, 10)))
    image = ax.imshow(m.astype(int), cmap=ListedColormap(_MASK_COLOURS), vmin=-0.5, vmax=1.5)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xticks(np.arange(t_k + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(t_q + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    bar = fig.colorbar(image, ax=ax, ticks=[0, 1], shrink=0.8)
    bar.ax.set_yticklabels(["False: may attend", "True: masked"])
    return fig


def _draw_weights(ax, weights, vmax, src_tokens, tgt_tokens):
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=vmax)
    t_q, t_k = weights.shape
    if src_tokens is not None:
        ax.set_xticks(np.arange(t_k), labels=src_tokens, rotation=90)
    if tgt_tokens is not None:
        ax.set_yticks(np.arange(t_q), labels=tgt_tokens)
    _label_fonts(ax, (src_tokens or []) + (tgt_tokens or []))
    return image


def plot_attention(weights, src_tokens: Sequence[str] | None = None,
                   tgt_tokens: Sequence[str] | None = None, title: str = "Attention weights",
                   ax=None) -> Figure:
    """Alignment heat map: which source token (key) each target token (query) attends to.

    Args:
        weights: array (T_q, T_k) of attention weights, e.g. one head of one
            sentence: ``attn[0, h]`` of a (B, H, T_q, T_k) tensor.
        src_tokens: T_k labels for the x axis (keys, the source), or None for positions.
        tgt_tokens: T_q labels for the y axis (queries, the target), or None.
        title: the axes title.
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure (the heat map and an "attention weight" colour bar).

    Example:
        >>> fig = plot_attention(np.eye(2), ["a", "b"], ["x", "y"], "identity")
        >>> fig.axes[0].images[0].get_array().tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    w = _as_2d("weights", weights, "(T_q, T_k)")
    t_q, t_k = w.shape
    src = _check_tokens("src_tokens", src_tokens, t_k, "key columns", w.shape)
    tgt = _check_tokens("tgt_tokens", tgt_tokens, t_q, "query rows", w.shape)
    fig, ax = _new_axes(ax, (min(2.5 + 0.45 * t_k, 14), min(1.8 + 0.4 * t_q, 12)))
    image = _draw_weights(ax, w, float(w.max()) or 1.0, src, tgt)
    ax.set(title=title, xlabel="source (keys)" if src else "key position",
           ylabel="target (queries)" if tgt else "query position")
    fig.colorbar(image, ax=ax, label="attention weight", shrink=0.8)
    return _finish(fig, (src or []) + (tgt or []))


def _axes_grid(ax, n: int, ncols: int, panel: tuple[float, float]):
    """(figure, list of n Axes): the given ones, or a new grid of ``ncols`` columns."""
    if ax is None:
        nrows = -(-n // ncols)
        fig, grid = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                                 figsize=(panel[0] * ncols + 1.2, panel[1] * nrows + 0.6))
        axes = list(grid.flat)
        for extra in axes[n:]:
            extra.remove()
        return fig, axes[:n]
    axes = [ax] if isinstance(ax, Axes) else list(np.ravel(ax))
    if len(axes) < n or not all(isinstance(a, Axes) for a in axes):
        raise ValueError(f"ax must be None or a sequence of at least {n} matplotlib Axes "
                         f"(one per panel), got {ax!r}")
    return axes[0].figure, axes[:n]


def plot_attention_heads(weights, src_tokens: Sequence[str] | None = None,
                         tgt_tokens: Sequence[str] | None = None,
                         title: str = "Attention weights per head", ncols: int = 4,
                         ax=None) -> Figure:
    """One heat map per head on a shared colour scale, so the heads can be compared.

    Args:
        weights: array (H, T_q, T_k), e.g. ``attn[0]`` of a (B, H, T_q, T_k) tensor.
        src_tokens: T_k labels for the x axes (keys), or None for positions.
        tgt_tokens: T_q labels for the y axes (queries), or None.
        title: the figure title (each panel is titled "head h").
        ncols: panels per row.
        ax: None (a new grid) or a sequence of at least H Axes, e.g. ``axs.flat``.

    Returns:
        The Figure (H panels and one shared "attention weight" colour bar).

    Example:
        >>> fig = plot_attention_heads(np.full((3, 2, 2), 0.5), ncols=2)
        >>> [a.get_title() for a in fig.axes[:3]]
        ['head 0', 'head 1', 'head 2']
    """
    w = np.asarray(weights)
    if w.ndim == 4 and w.shape[0] == 1:
        w = w[0]
    if w.ndim != 3 or 0 in w.shape:
        raise ValueError(f"weights must be a non-empty 3-D array (H, T_q, T_k), got shape "
                         f"{w.shape}")
    if isinstance(ncols, bool) or not isinstance(ncols, (int, np.integer)) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    heads, t_q, t_k = w.shape
    src = _check_tokens("src_tokens", src_tokens, t_k, "key columns", w.shape)
    tgt = _check_tokens("tgt_tokens", tgt_tokens, t_q, "query rows", w.shape)
    ncols = min(int(ncols), heads)
    panel = (min(1.0 + 0.3 * t_k, 6), min(1.0 + 0.3 * t_q, 5))
    fig, axes = _axes_grid(ax, heads, ncols, panel)
    vmax = float(w.max()) or 1.0
    for h, a in enumerate(axes):
        image = _draw_weights(a, w[h], vmax, src, tgt)
        a.set_title(f"head {h}")
        if ax is None:  # our grid: labels on the outer panels only
            bottom, left = h + ncols >= heads, h % ncols == 0
            a.tick_params(labelbottom=bottom, labelleft=left)
            if bottom:
                a.set_xlabel("source (keys)" if src else "key position")
            if left:
                a.set_ylabel("target (queries)" if tgt else "query position")
        else:
            a.set(xlabel="source (keys)" if src else "key position",
                  ylabel="target (queries)" if tgt else "query position")
    fig.suptitle(title)
    fig.colorbar(image, ax=axes, label="attention weight", shrink=0.8)
    return _finish(fig, (src or []) + (tgt or []))


def plot_accuracy_by_length(results: Mapping[str, Sequence], title: str = "Exact match by "
                            "source length", ax=None) -> Figure:
    """Exact match (%) against source length, one line per model.

    Args:
        results: model name -> list of :class:`txcourse.metrics.LengthBucket`
            (from :func:`txcourse.metrics.accuracy_by_length`). Each point sits
            at the bucket midpoint.
        title: the axes title.
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure.

    Example:
        >>> from txcourse.metrics import LengthBucket
        >>> fig = plot_accuracy_by_length({"gru": [LengthBucket(1, 1, 5, 0.8),
        ...                                        LengthBucket(2, 3, 5, 0.4)]})
        >>> fig.axes[0].lines[0].get_ydata().tolist()
        [80.0, 40.0]
    """
    from txcourse.metrics import LengthBucket

    if not isinstance(results, Mapping) or not results:
        raise ValueError(f"results must be a non-empty dict of model name -> list of "
                         f"LengthBucket, got {results!r}")
    for name, buckets in results.items():
        if (isinstance(buckets, str) or not isinstance(buckets, Sequence) or not buckets
                or not all(isinstance(b, LengthBucket) for b in buckets)):
            raise ValueError(f"results[{name!r}] must be a non-empty list of LengthBucket "
                             f"(from txcourse.metrics.accuracy_by_length), got {buckets!r}")
    fig, ax = _new_axes(ax, (6, 4))
    for name, buckets in results.items():
        buckets = sorted(buckets, key=lambda b: b.low)
        ax.plot([b.midpoint for b in buckets], [100 * b.exact_match for b in buckets],
                marker="o", label=str(name), clip_on=False)
    ax.set(title=title, xlabel="source length (bucket midpoint)",
           ylabel="exact match (%)", ylim=(0, 100))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


_KEY_LABELS = {"lr": "learning rate", "loss": "loss", "accuracy": "accuracy"}


def _check_history(history) -> dict:
    runs = history if isinstance(history, Mapping) else {None: history}
    if not runs:
        raise ValueError("history is an empty dict: expected run name -> list of records")
    for name, records in runs.items():
        where = "history" if name is None else f"history[{name!r}]"
        if isinstance(records, (str, Mapping)) or not isinstance(records, Sequence) or not records:
            raise ValueError(f"{where} must be a non-empty list of dicts such as "
                             f"{{'step': 100, 'loss': 2.3}}, got {records!r}")
        for i, r in enumerate(records):
            if not isinstance(r, Mapping) or "step" not in r:
                raise ValueError(f"{where}[{i}] must be a dict with a 'step' entry, got {r!r}")
    return runs


def plot_training_curves(history, keys: Sequence[str] = ("loss", "accuracy", "lr"),
                         title: str = "Training curves", ax=None) -> Figure:
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
    if isinstance(keys, str) or not isinstance(keys, Sequence) or not keys or not all(
            isinstance(k, str) for k in keys):
        raise ValueError(f"keys must be a non-empty list of record keys such as "
                         f"('loss', 'accuracy', 'lr'), got {keys!r}")
    present = [k for k in keys if any(r.get(k) is not None for rs in runs.values() for r in rs)]
    if not present:
        seen = sorted({k for rs in runs.values() for r in rs for k in r})
        raise ValueError(f"none of keys {list(keys)} appear in the history records; they "
                         f"hold {seen}")
    fig, axes = _axes_grid(ax, len(present), len(present), (4.2, 3.2))
    for key, a in zip(present, axes):
        for name, records in runs.items():
            points = [(r["step"], r[key]) for r in records if r.get(key) is not None]
            if points:
                steps, values = zip(*points)
                a.plot(steps, values, label=None if name is None else str(name))
        a.set(title=key, xlabel="step", ylabel=_KEY_LABELS.get(key, key))
        a.grid(alpha=0.3)
        if len(runs) > 1:
            a.legend()
    fig.suptitle(title)
    return fig


def plot_distributions(distributions: Mapping[str, Sequence[float]], labels: Sequence[str],
                       title: str = "Distributions", ylabel: str = "probability", log: bool = False,
                       ax=None) -> Figure:
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
            raise ValueError(f"distributions[{name!r}] must have one value per label ({len(labels)}), "
                             f"got shape {row.shape}")
    fig, ax = _new_axes(ax, (min(2.0 + 0.45 * len(labels), 14), 3.6))
    width = 0.8 / len(rows)
    x = np.arange(len(labels))
    for i, (name, row) in enumerate(rows.items()):
        ax.bar(x + (i - (len(rows) - 1) / 2) * width, row, width, label=name)
    ax.set_xticks(x, labels=labels)
    _label_fonts(ax, labels)
    ax.set(title=title, xlabel="class (target token)", ylabel=ylabel)
    if log:
        ax.set_yscale("log")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return _finish(fig, labels)


def save_figure(fig: Figure, path, dpi: int = 150) -> Path:
    """Save ``fig`` so that the same figure always gives the same bytes.

    PNG files drop the "Software" (matplotlib version) entry, SVG files the
    date and use a fixed ``svg.hashsalt`` for their ids, PDF files the dates.
    The figure is drawn once before it is saved, so the constrained layout
    no longer depends on earlier draws at other resolutions (a notebook's
    inline display, say). Parent folders are created.

    Args:
        fig: the Figure to save.
        path: where to write; the suffix picks the format: ``.png``, ``.svg`` or ``.pdf``.
        dpi: resolution of PNG files.

    Returns:
        The path written, as a :class:`pathlib.Path`.

    Example:
        >>> import tempfile, os
        >>> fig = plot_mask(np.eye(3, dtype=bool))
        >>> out = save_figure(fig, os.path.join(tempfile.mkdtemp(), "mask.png"))
        >>> out.read_bytes()[:4]
        b'\\x89PNG'
    """
    if not isinstance(fig, Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in _SAVE_FORMATS:
        raise ValueError(f"path must end in one of {['.' + f for f in _SAVE_FORMATS]}, got "
                         f"{str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    options = dict(format=fmt, dpi=dpi, facecolor="white", bbox_inches="tight",
                   **_SAVE_FORMATS[fmt])
    with matplotlib.rc_context({"svg.hashsalt": "txcourse"}), _quiet_missing_glyphs():
        # The layout engine starts from the positions of the previous draw, which
        # may have been at another dpi: one throwaway draw at these settings
        # first makes the result independent of the figure's history.
        fig.savefig(io.BytesIO(), **options)
        fig.savefig(path, **options)
    return path
