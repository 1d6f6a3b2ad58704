"""The mistakes of the source lecture notes that this course corrects.

One entry per mistake: where it is, what it says, what is right, and the
test in ``tests/course/test_errata.py`` that fails on the mistaken version. The
book's errata appendix is generated from this list, so the two never drift.
The entries live by the source notes they correct (``notes_000.py``: the
slides, ``notes_001.py`` ... ``notes_004.py``: the notebooks); :data:`ERRATA`
holds them all in the order of their ids (E1, E2, ...).
"""

from __future__ import annotations

from txcourse.course.errata import notes_000, notes_001, notes_002, notes_003, notes_004
from txcourse.course.errata.erratum import Erratum

__all__ = ["Erratum", "ERRATA"]

ERRATA: tuple[Erratum, ...] = tuple(
    sorted(
        notes_000.ERRATA + notes_001.ERRATA + notes_002.ERRATA + notes_003.ERRATA + notes_004.ERRATA,
        key=lambda erratum: int(erratum.id[1:]),
    )
)
