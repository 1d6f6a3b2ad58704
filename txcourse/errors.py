"""The one error type for the user's mistakes: :class:`TxcourseError`.

A bad option, config field, task argument, data file or checkpoint raises a
:class:`TxcourseError` naming what it is about (``.field``, all of them in
``.arguments``, the first being the one to change). Everything else a
txcourse function raises is a bug: the command line prints
``txcourse: error: MESSAGE`` (exit status 2) for a ``TxcourseError`` or an
``OSError`` only, and a traceback for anything else (txcourse.cli).

A message that quotes what the user typed quotes at most :data:`SHOWN`
characters of it (:func:`quote`, :func:`quote_each`): a skip note on a
10,000-character line is one short line, not the line again.

This module imports nothing of txcourse, so every module may import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Optional

__all__ = ["SHOWN", "TxcourseError", "quote", "quote_each", "shorten"]

SHOWN = 40  # at most this many characters of the user's text are quoted in a message


class TxcourseError(ValueError):
    """A mistake of the user's, about the named fields (config fields, options, function arguments).

    A ``ValueError`` (what such mistakes raised before, so ``except ValueError`` still catches it) whose message
    names the field, what arrived and what was expected; ``arguments`` names the field(s) as data, the first
    being the one to change, so that a caller can say which of its own inputs set it (the command line maps a
    config field to its option) without reading the message.

    Example:
        >>> err = TxcourseError("d_model (100) must be divisible by num_heads (8)", "d_model", "num_heads")
        >>> str(err), err.arguments, err.field
        ('d_model (100) must be divisible by num_heads (8)', ('d_model', 'num_heads'), 'd_model')
    """

    def __init__(self, message: str, *arguments: str) -> None:
        super().__init__(message)
        self.arguments: tuple[str, ...] = arguments

    @property
    def field(self) -> Optional[str]:
        """The first field named (the one to change), or None."""
        return self.arguments[0] if self.arguments else None

    @property
    def argument(self) -> Optional[str]:
        """The same as :attr:`field` (the name it had as ``ArgumentError``)."""
        return self.field

    def __reduce__(self):  # pickled (across processes) with its arguments, not only its message
        return type(self), (str(self), *self.arguments)


def shorten(text: str) -> str:
    """``text`` if it has at most :data:`SHOWN` characters, else its first SHOWN - 3 and "...".

    Example:
        >>> shorten("x" * 100)
        'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'
    """
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def quote(text: str) -> str:
    """``text`` quoted as Python writes a string, at most :data:`SHOWN` characters of it (:func:`shorten`).

    Example:
        >>> quote("March 3, 2026"), len(quote("x" * 10_000))
        ("'March 3, 2026'", 42)
    """
    return repr(shorten(text))


def quote_each(texts: Iterable[str], most: int = 5) -> str:
    """The first ``most`` of ``texts``, each :func:`quote`-d, joined by commas; "(and N more)" after them.

    Example:
        >>> quote_each(["a", "b", "c"], most=2)
        "'a', 'b' (and 1 more)"
    """
    texts = list(texts)
    more = f" (and {len(texts) - most} more)" if len(texts) > most else ""
    return ", ".join(quote(text) for text in texts[:most]) + more
