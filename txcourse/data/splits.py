"""``TranslationSplits``: the train / valid / test pairs of a sequence-to-sequence task.

Every task generator of :mod:`txcourse.data` (``numbers``, ``copy``,
``reverse``) returns one, so training code never cares which task it got.

Example:
    >>> s = TranslationSplits(train=[("a", "A")], valid=[("b", "B")], test=[("c", "C")])
    >>> s["train"], len(s)
    ([('a', 'A')], 3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from txcourse.data._checks import is_int
from txcourse.errors import TxcourseError

__all__ = ["Pair", "TranslationSplits", "SPLIT_NAMES", "check_sizes"]

Pair = tuple[str, str]  # (source text, target text)
SPLIT_NAMES = ("train", "valid", "test")


@dataclass
class TranslationSplits:
    """Three lists of (source, target) string pairs plus how they were made.

    Attributes:
        train, valid, test: lists of ``(src, tgt)`` string pairs.
        metadata: the generator's arguments and facts about the splits
            (e.g. which test examples are the long ones).

    Example:
        >>> s = TranslationSplits([("a", "A")], [], [])
        >>> s.as_dict()["train"]
        [('a', 'A')]
    """

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, split: str) -> list[Pair]:
        if split not in SPLIT_NAMES:
            raise TxcourseError(f"split must be one of {list(SPLIT_NAMES)}, got {split!r}", "split")
        return getattr(self, split)

    def __len__(self) -> int:
        return len(self.train) + len(self.valid) + len(self.test)

    def as_dict(self) -> dict[str, list[Pair]]:
        """``{"train": [...], "valid": [...], "test": [...]}``."""
        return {name: getattr(self, name) for name in SPLIT_NAMES}


def check_sizes(sizes) -> tuple[int, int, int]:
    """``sizes`` must be three non-negative integers (train, valid, test).

    Returns:
        The sizes as a tuple of ints.
    """
    if not isinstance(sizes, (tuple, list)) or len(sizes) != 3:
        raise TxcourseError(f"sizes must be a tuple (train, valid, test) of 3 integers, got {sizes!r}", "sizes")
    for name, value in zip(SPLIT_NAMES, sizes):
        if not is_int(value) or value < 0:
            raise TxcourseError(
                f"sizes must hold non-negative integers, got {name}={value!r} in sizes={sizes!r}", "sizes"
            )
    return tuple(int(v) for v in sizes)
