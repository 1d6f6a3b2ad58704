"""Figures of week 2: the positional-encoding table and the ALiBi bias as heat maps.

Example:
    >>> import numpy as np
    >>> fig = plot_positional_encoding(np.sin(np.arange(12.0)[:, None] * np.ones((1, 8))))
    >>> fig.axes[0].get_xlabel()
    'dimension'
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from txcourse.notebook.plots.common import as_2d, new_axes
from txcourse.notebook.plots.labels import N_, _

__all__ = ["plot_positional_encoding", "plot_alibi_bias"]


def plot_positional_encoding(table, title: str = N_("Sinusoidal positional encoding"), ax=None) -> Figure:
    """Heat map of a positional-encoding table, positions down, dimensions across.

    Args:
        table: array (T, D), or (1, T, D) as some tutorials return it.
        title: the axes title.
        ax: the Axes to draw on; default: a new figure.

    Returns:
        The Figure (the heat map and its colour bar).

    Example:
        >>> import numpy as np
        >>> fig = plot_positional_encoding(np.sin(np.arange(12.0)[:, None] * np.ones((1, 8))))
        >>> fig.axes[0].get_ylabel()
        'position'
    """
    table = as_2d("table", table, "(T, D) of positions x dimensions")
    fig, ax = new_axes(ax, (7, 4))
    bound = float(np.abs(table).max()) or 1.0
    mesh = ax.pcolormesh(table, cmap="RdBu", vmin=-bound, vmax=bound)
    ax.invert_yaxis()  # position 0 on top, like a table
    ax.set(title=_(title), xlabel=_("dimension"), ylabel=_("position"))
    fig.colorbar(mesh, ax=ax, label=_("encoding value"))
    return fig


def plot_alibi_bias(bias, slopes, heads=(0, 1, 3, 7), title: str = N_("ALiBi bias")) -> Figure:
    """Heat maps of the ALiBi bias -m_h |i - j| (Press et al. 2022) of some heads, one panel each.

    Args:
        bias: array (H, T_q, T_k), e.g. ``alibi_bias(8, 16, 16)``.
        slopes: array (H,) of the heads' slopes m_h (``alibi_slopes(8)``), shown in the panel titles.
        heads: the head indices to draw (0-based), at least one.
        title: the figure's title.

    Returns:
        The Figure (one panel per head and a shared colour bar).

    Example:
        >>> import numpy as np
        >>> i = np.arange(4.0)
        >>> fig = plot_alibi_bias(-np.abs(i[:, None] - i[None, :])[None] * np.array([0.5, 0.25])[:, None, None],
        ...                       np.array([0.5, 0.25]), heads=(0, 1))
        >>> [ax.get_title() for ax in fig.axes[:2]]
        ['head 1: m = 1/2', 'head 2: m = 1/4']
    """
    bias = np.asarray(bias, dtype=float)
    slopes = np.asarray(slopes, dtype=float)
    if bias.ndim != 3:
        raise ValueError(f"bias must be (H, T_q, T_k), got shape {bias.shape}")
    if slopes.shape != (bias.shape[0],):
        raise ValueError(f"slopes must be ({bias.shape[0]},), one per head of bias, got shape {slopes.shape}")
    heads = tuple(heads)
    if not heads or any(not 0 <= h < bias.shape[0] for h in heads):
        raise ValueError(f"heads must be indices in [0, {bias.shape[0]}), got {heads}")
    fig, axes = plt.subplots(1, len(heads), figsize=(3.25 * len(heads), 3.4), layout="constrained", squeeze=False)
    axes = axes[0]
    low = float(bias[list(heads)].min()) or -1.0
    for ax, h in zip(axes, heads):
        image = ax.imshow(bias[h], cmap="viridis", vmin=low, vmax=0)
        ax.set(
            title=_("head {h}: m = 1/{inverse:.0f}").format(h=h + 1, inverse=1 / slopes[h]),
            xlabel=_("key position j"),
            ylabel=_("query position i"),
        )
    fig.colorbar(image, ax=list(axes), label=_("bias added to the score"))
    fig.suptitle(_(title))
    return fig
