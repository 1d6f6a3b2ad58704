"""Figures of attention: masks (which positions may be attended) and attention weights, for one
head or every head of a layer on a shared colour scale.

Mask convention of the course: ``True`` (dark in :func:`plot_mask`) marks a position that may NOT
be attended.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from txcourse.notebook.plots.common import as_2d, axes_grid, check_tokens, finish, label_fonts, new_axes
from txcourse.notebook.plots.labels import N_, _

__all__ = ["plot_mask", "plot_attention", "plot_attention_heads"]

_MASK_COLOURS = ("#deebf7", "#525252")  # False: may attend, True: masked


def plot_mask(
    mask,
    title: str = N_("Attention mask"),
    xlabel: str = N_("key position"),
    ylabel: str = N_("query position"),
    ax=None,
) -> Figure:
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
        >>> import numpy as np
        >>> look_ahead = np.triu(np.ones((4, 4), dtype=bool), k=1)
        >>> fig = plot_mask(look_ahead, "look-ahead mask")
        >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]
        ['False: may attend', 'True: masked']
    """
    m = np.asarray(mask)
    if m.ndim == 1:
        m = m[None, :]
    m = as_2d("mask", m, "(T_q, T_k)")
    if m.dtype != bool and not np.isin(m, (0, 1)).all():
        raise ValueError(f"mask must be boolean (or 0/1), got dtype {m.dtype} with values {np.unique(m)[:5].tolist()}")
    t_q, t_k = m.shape
    fig, ax = new_axes(ax, (min(1.5 + 0.4 * t_k, 12), min(1.2 + 0.4 * t_q, 10)))
    image = ax.imshow(m.astype(int), cmap=ListedColormap(_MASK_COLOURS), vmin=-0.5, vmax=1.5)
    ax.set(title=_(title), xlabel=_(xlabel), ylabel=_(ylabel))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xticks(np.arange(t_k + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(t_q + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    bar = fig.colorbar(image, ax=ax, ticks=[0, 1], shrink=0.8)
    bar.ax.set_yticklabels([_("False: may attend"), _("True: masked")])
    return fig


def _draw_weights(ax, weights, vmax, src_tokens, tgt_tokens):
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=vmax)
    t_q, t_k = weights.shape
    if src_tokens is not None:
        ax.set_xticks(np.arange(t_k), labels=src_tokens, rotation=90)
    if tgt_tokens is not None:
        ax.set_yticks(np.arange(t_q), labels=tgt_tokens)
    label_fonts(ax, (src_tokens or []) + (tgt_tokens or []))
    return image


def plot_attention(
    weights,
    src_tokens: Sequence[str] | None = None,
    tgt_tokens: Sequence[str] | None = None,
    title: str = N_("Attention weights"),
    ax=None,
) -> Figure:
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
        >>> import numpy as np
        >>> fig = plot_attention(np.eye(2), ["a", "b"], ["x", "y"], "identity")
        >>> fig.axes[0].images[0].get_array().tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    w = as_2d("weights", weights, "(T_q, T_k)")
    t_q, t_k = w.shape
    src = check_tokens("src_tokens", src_tokens, t_k, "key columns", w.shape)
    tgt = check_tokens("tgt_tokens", tgt_tokens, t_q, "query rows", w.shape)
    fig, ax = new_axes(ax, (min(2.5 + 0.45 * t_k, 14), min(1.8 + 0.4 * t_q, 12)))
    image = _draw_weights(ax, w, float(w.max()) or 1.0, src, tgt)
    ax.set(
        title=_(title),
        xlabel=_("source (keys)") if src else _("key position"),
        ylabel=_("target (queries)") if tgt else _("query position"),
    )
    fig.colorbar(image, ax=ax, label=_("attention weight"), shrink=0.8)
    return finish(fig, (src or []) + (tgt or []))


def plot_attention_heads(
    weights,
    src_tokens: Sequence[str] | None = None,
    tgt_tokens: Sequence[str] | None = None,
    title: str = N_("Attention weights per head"),
    ncols: int = 4,
    ax=None,
) -> Figure:
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
        >>> import numpy as np
        >>> fig = plot_attention_heads(np.full((3, 2, 2), 0.5), ncols=2)
        >>> [a.get_title() for a in fig.axes[:3]]
        ['head 0', 'head 1', 'head 2']
    """
    w = np.asarray(weights)
    if w.ndim == 4 and w.shape[0] == 1:
        w = w[0]
    if w.ndim != 3 or 0 in w.shape:
        raise ValueError(f"weights must be a non-empty 3-D array (H, T_q, T_k), got shape {w.shape}")
    if isinstance(ncols, bool) or not isinstance(ncols, (int, np.integer)) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    heads, t_q, t_k = w.shape
    src = check_tokens("src_tokens", src_tokens, t_k, "key columns", w.shape)
    tgt = check_tokens("tgt_tokens", tgt_tokens, t_q, "query rows", w.shape)
    ncols = min(int(ncols), heads)
    panel = (min(1.0 + 0.3 * t_k, 6), min(1.0 + 0.3 * t_q, 5))
    fig, axes = axes_grid(ax, heads, ncols, panel)
    vmax = float(w.max()) or 1.0
    for h, a in enumerate(axes):
        image = _draw_weights(a, w[h], vmax, src, tgt)
        a.set_title(_("head {h}").format(h=h))
        if ax is None:  # our grid: labels on the outer panels only
            bottom, left = h + ncols >= heads, h % ncols == 0
            a.tick_params(labelbottom=bottom, labelleft=left)
            if bottom:
                a.set_xlabel(_("source (keys)") if src else _("key position"))
            if left:
                a.set_ylabel(_("target (queries)") if tgt else _("query position"))
        else:
            a.set(
                xlabel=_("source (keys)") if src else _("key position"),
                ylabel=_("target (queries)") if tgt else _("query position"),
            )
    fig.suptitle(_(title))
    fig.colorbar(image, ax=axes, label=_("attention weight"), shrink=0.8)
    return finish(fig, (src or []) + (tgt or []))
