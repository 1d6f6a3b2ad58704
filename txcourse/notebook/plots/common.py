"""What every figure of :mod:`txcourse.notebook.plots` shares: CJK fonts for Korean labels, new or given
axes, argument checks, and the one layout pass that silences missing-glyph warnings.

Korean (or other CJK) token labels need a font with Hangul glyphs; matplotlib's default DejaVu
Sans has none. When one is installed (:data:`CJK_FONT_NAMES`) tick labels fall back to it
(:func:`label_fonts`); otherwise the missing glyphs show as boxes and the warnings are silenced
(:func:`finish`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from contextlib import contextmanager

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "CJK_FONT_NAMES",
    "cjk_font",
    "quiet_missing_glyphs",
    "label_fonts",
    "finish",
    "new_axes",
    "axes_grid",
    "as_2d",
    "check_tokens",
]

# Font families with Hangul (and most CJK) glyphs, in order of preference.
CJK_FONT_NAMES = (
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Noto Sans CJK",
    "Source Han Sans",
    "NanumGothic",
    "NanumBarunGothic",
    "Nanum Gothic",
    "UnDotum",
    "Malgun Gothic",
    "Apple SD Gothic Neo",
    "AppleGothic",
    "Noto Serif CJK",
    "NanumMyeongjo",
    "UnBatang",
)


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
def quiet_missing_glyphs():
    """Silence matplotlib's "Glyph ... missing from font(s)" warnings inside the block."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        yield


def _non_ascii(labels) -> bool:
    return any(not s.isascii() for s in labels)


def label_fonts(ax, labels: Sequence[str]) -> None:
    """Let the tick labels of ``ax`` fall back to a CJK font when they need one."""
    font = cjk_font() if _non_ascii(labels) else None
    if font is None:
        return
    family = list(matplotlib.rcParams["font.sans-serif"][:1]) + [font]
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        label.set_fontfamily(family)


def finish(fig: Figure, labels: Sequence[str]) -> Figure:
    """Lay the figure out once with glyph warnings off: text layouts are cached afterwards."""
    if _non_ascii(labels):
        with quiet_missing_glyphs():
            fig.canvas.draw()
    return fig


def new_axes(ax, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    if not isinstance(ax, Axes):
        raise ValueError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax.figure, ax


def as_2d(name: str, array, layout: str) -> np.ndarray:
    """``array`` as a 2-D numpy array; leading dimensions of size 1 are dropped."""
    a = np.asarray(array)
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 2 or 0 in a.shape:
        raise ValueError(f"{name} must be a non-empty 2-D array {layout}, got shape {a.shape}")
    return a


def check_tokens(name: str, tokens, n: int, what: str, shape) -> list[str] | None:
    if tokens is None:
        return None
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise ValueError(f"{name} must be a list of strings or None, got {tokens!r}")
    if len(tokens) != n:
        raise ValueError(
            f"{name} has {len(tokens)} tokens but the weights have {n} {what} "
            f"(weights shape {tuple(shape)}); pass one token per {what[:-1]}"
        )
    return [str(t) for t in tokens]


def axes_grid(ax, n: int, ncols: int, panel: tuple[float, float]):
    """(figure, list of n Axes): the given ones, or a new grid of ``ncols`` columns."""
    if ax is None:
        nrows = -(-n // ncols)
        fig, grid = plt.subplots(
            nrows, ncols, squeeze=False, layout="constrained", figsize=(panel[0] * ncols + 1.2, panel[1] * nrows + 0.6)
        )
        axes = list(grid.flat)
        for extra in axes[n:]:
            extra.remove()
        return fig, axes[:n]
    axes = [ax] if isinstance(ax, Axes) else list(np.ravel(ax))
    if len(axes) < n or not all(isinstance(a, Axes) for a in axes):
        raise ValueError(f"ax must be None or a sequence of at least {n} matplotlib Axes (one per panel), got {ax!r}")
    return axes[0].figure, axes[:n]
