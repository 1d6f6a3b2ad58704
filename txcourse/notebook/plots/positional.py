"""Figures of week 2: the positional-encoding table as a heat map.

Example:
    >>> import numpy as np
    >>> fig = plot_positional_encoding(np.sin(np.arange(12.0)[:, None] * np.ones((1, 8))))
    >>> fig.axes[0].get_xlabel()
    'dimension'
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from txcourse.notebook.plots.common import as_2d, new_axes

__all__ = ["plot_positional_encoding"]


def plot_positional_encoding(table, title: str = "Sinusoidal positional encoding", ax=None) -> Figure:
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
    ax.set(title=title, xlabel="dimension", ylabel="position")
    fig.colorbar(mesh, ax=ax, label="encoding value")
    return fig
