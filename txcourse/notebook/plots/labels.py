"""Figures in each edition's language: the labels' translations and one image per language.

The book has an English and a Korean edition built from one execution of
each chapter (issue 33). A figure whose labels are words is drawn once per
language: :func:`show_in_each_edition` calls a cell's ``draw`` function under
each language of :data:`LANGUAGES` and displays one PNG per language, tagged
``{"txcourse": {"lang": ...}}`` in the output's metadata; the book keeps the
images of the edition's language (book/_ext/editions.py). In Jupyter, the
cell shows both.

The words come from ONE source, the English strings in the code, marked
``_("...")`` where they are drawn (or ``N_("...")`` where they are defined
before any language is known, as default arguments); ``make translations``
extracts them into ``locales/<lang>/LC_MESSAGES/figures.po``, whose
translations :func:`_` returns while a language is active::

    >>> _("attention weight")
    'attention weight'
    >>> with in_language("ko"):
    ...     _("attention weight")
    '어텐션 가중치'

Token labels that are data (the words of a sentence) are not labels: they
are drawn as they are.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.text
from matplotlib.figure import Figure

from txcourse.notebook.plots.common import cjk_font, quiet_missing_glyphs

__all__ = [
    "LANGUAGES",
    "LOCALES",
    "N_",
    "_",
    "tr",
    "current_language",
    "in_language",
    "catalogue",
    "show_in_each_edition",
    "hangul_fonts",
]

LANGUAGES = ("en", "ko")  # the book's editions; English is the source language
# The repository's catalogues: locales/<lang>/LC_MESSAGES/figures.po
LOCALES = Path(__file__).resolve().parents[3] / "locales"
_LANGUAGE: ContextVar[str] = ContextVar("txcourse_figure_language", default="en")


def N_(message: str) -> str:  # noqa: N802 (gettext's name)
    """Mark ``message`` for the catalogue without translating it (a default argument, a constant)."""
    return message


def current_language() -> str:
    """The language figures are being drawn in (``"en"`` outside :func:`in_language`)."""
    return _LANGUAGE.get()


@functools.cache
def catalogue(lang: str, locales: Path = LOCALES) -> dict[str, str]:
    """Return {English message: translation} of ``locales/<lang>/LC_MESSAGES/figures.po``.

    Untranslated and fuzzy messages are left out (they fall back to English).

    Raises:
        ValueError: ``lang`` is not one of :data:`LANGUAGES`.
        FileNotFoundError: the catalogue of a language other than English is missing.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    if lang == "en":
        return {}
    from babel.messages.pofile import read_po

    path = Path(locales) / lang / "LC_MESSAGES" / "figures.po"
    if not path.is_file():
        raise FileNotFoundError(f"the figures' catalogue for {lang!r} is missing: expected {path}")
    with open(path, "rb") as f:
        po = read_po(f)
    return {m.id: m.string for m in po if m.id and m.string and not m.fuzzy}


def _(message: str) -> str:
    """Return ``message`` in the language figures are drawn in (itself in English, or when untranslated).

    None (no label) stays None.
    """
    if message is None:
        return None
    if not isinstance(message, str):
        raise ValueError(f"message must be a string, got {type(message).__name__}: {message!r}")
    lang = _LANGUAGE.get()
    return message if lang == "en" else catalogue(lang).get(message, message)


def tr(message: str) -> str:
    """:func:`_` under the name the book's code cells use (IPython binds ``_`` to the last result)."""
    return _(message)


@contextmanager
def in_language(lang: str) -> Iterator[None]:
    """Draw figures in ``lang`` inside the block: :func:`_` translates, and Hangul gets a font that has it.

    Raises:
        ValueError: ``lang`` is not one of :data:`LANGUAGES`.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    token = _LANGUAGE.set(lang)
    font = cjk_font() if lang != "en" else None
    family = [*matplotlib.rcParams["font.sans-serif"][:1], font] if font else matplotlib.rcParams["font.family"]
    try:
        with matplotlib.rc_context({"font.family": family}):
            yield
    finally:
        _LANGUAGE.reset(token)


def hangul_fonts(fig: Figure) -> None:
    """Let every text of ``fig`` that is not ASCII fall back to a font with Hangul (:func:`cjk_font`).

    The texts keep the family they were drawn with when :func:`in_language`
    set it; a figure drawn under other settings (a recipe resets matplotlib's,
    txcourse.course.figures.draw and build_figures) gets it here, before it is saved.
    """
    font = cjk_font()
    if font is None:
        return
    for text in fig.findobj(matplotlib.text.Text):
        family = list(text.get_fontfamily())
        if not text.get_text().isascii() and font not in family:
            text.set_fontfamily([matplotlib.rcParams["font.sans-serif"][0], font])


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    with quiet_missing_glyphs():
        fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def draw_in_each_language(draw: Callable[[], Figure], languages=LANGUAGES) -> dict[str, tuple[Figure, bytes]]:
    """Draw ``draw()`` once per language; return {language: (the Figure, its PNG bytes)}.

    Args:
        draw: a function of no arguments that draws one figure (labels
            through :func:`_` or :func:`tr`) and returns it.
        languages: the languages to draw in, from :data:`LANGUAGES`.

    Raises:
        ValueError: a language is unknown, or ``draw`` returns no Figure.
    """
    drawn = {}
    for lang in languages:
        with in_language(lang):
            fig = draw()
            if not isinstance(fig, Figure):
                raise ValueError(f"draw must return a matplotlib Figure, got {type(fig).__name__}")
            if lang != "en":
                hangul_fonts(fig)
            drawn[lang] = (fig, _png(fig))
        plt.close(fig)  # pyplot must not show it again at the end of the cell
    return drawn


def show_in_each_edition(draw: Callable[[], Figure], languages=LANGUAGES) -> None:
    """Display the figure ``draw()`` draws once per language, each PNG tagged with its language.

    The output's metadata ``{"txcourse": {"lang": ...}}`` tells the book which
    edition shows which image (book/_ext/editions.py); in Jupyter both show.

    Raises:
        ValueError: a language is unknown, or ``draw`` returns no Figure.
    """
    from IPython.display import Image, display

    for lang, (_fig, png) in draw_in_each_language(draw, languages).items():
        display(Image(data=png, format="png"), metadata={"txcourse": {"lang": lang}})
