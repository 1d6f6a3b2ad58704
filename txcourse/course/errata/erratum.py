"""One mistake of the source notes: where it is, what it says, what is right, and the test that guards the fix."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Erratum"]


@dataclass(frozen=True)
class Erratum:
    id: str
    source: str  # file in the source notes
    topic: str
    wrong: str  # what the notes say or do
    right: str  # what the course does instead
    why: str
    test: str  # test function in tests/course/test_errata.py
