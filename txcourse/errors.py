"""The one error type for the user's mistakes: :class:`TxcourseError`.

A bad option, config field, task argument, data file or checkpoint raises a
:class:`TxcourseError` naming what it is about (``.field``, all of them in
``.arguments``, the first being the one to change). Everything else a
txcourse function raises is a bug: the command line prints
``txcourse: error: MESSAGE`` (exit status 2) for a ``TxcourseError`` or an
``OSError`` only, and a traceback for anything else (txcourse.cli).

This module imports nothing of txcourse, so every module may import it.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["TxcourseError"]


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
