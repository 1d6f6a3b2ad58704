"""Argument checks shared by the data modules (each raises :class:`~txcourse.errors.TxcourseError`, a ``ValueError``)."""

from __future__ import annotations

import numbers

from txcourse.errors import TxcourseError

__all__ = ["is_int", "check_int", "check_fraction"]


def is_int(value) -> bool:
    """True for Python and numpy integers, False for bools and everything else."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value, minimum: int | None = None) -> int:
    """``value`` must be an integer (>= ``minimum`` when given); returns it as ``int``."""
    if not is_int(value) or (minimum is not None and value < minimum):
        expected = "an integer" if minimum is None else f"an integer >= {minimum}"
        raise TxcourseError(f"{name} must be {expected}, got {value!r}", name)
    return int(value)


def check_fraction(name: str, value) -> float:
    """``value`` must be a number in [0, 1]; returns it as ``float``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise TxcourseError(f"{name} must be a number in [0, 1], got {value!r}", name)
    return float(value)
