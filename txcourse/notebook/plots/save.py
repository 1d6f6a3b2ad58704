"""Saving a figure so that the same figure always gives the same bytes (PNG, SVG, PDF)."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from txcourse.notebook.plots.common import quiet_missing_glyphs

__all__ = ["save_figure"]

_SAVE_FORMATS = {
    "png": {"metadata": {"Software": None}},
    "svg": {"metadata": {"Date": None}},
    "pdf": {"metadata": {"CreationDate": None, "ModDate": None}},
}


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
        >>> import numpy as np
        >>> from txcourse.notebook.plots import plot_mask
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
        raise ValueError(f"path must end in one of {['.' + f for f in _SAVE_FORMATS]}, got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    options = dict(format=fmt, dpi=dpi, facecolor="white", bbox_inches="tight", **_SAVE_FORMATS[fmt])
    with matplotlib.rc_context({"svg.hashsalt": "txcourse"}), quiet_missing_glyphs():
        # The layout engine starts from the positions of the previous draw, which
        # may have been at another dpi: one throwaway draw at these settings
        # first makes the result independent of the figure's history.
        fig.savefig(io.BytesIO(), **options)
        fig.savefig(path, **options)
    return path
