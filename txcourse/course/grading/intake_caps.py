"""How many cells, outputs and attachments a submitted notebook may have, counted before nbformat reads it.

Red team round D (2026-11-28): 120,000 one-character cells (11.7 MB, under :data:`~txcourse.course.grading.
submissions.MAX_NOTEBOOK_BYTES`; 117 KB of source, under :data:`~txcourse.course.grading.submissions.
MAX_NOTEBOOK_SOURCE`) kept the grader's intake busy ~5 min (nbformat's validation) and the run 38 min. The
course's notebooks have 12 to 28 cells: a submission may have :data:`CELLS_PER_MASTER_CELL` times its released
notebook's cells, never fewer than :data:`MIN_CELL_CAP` (a student adds scratch cells), and
:data:`OUTPUTS_PER_CELL` outputs and attachments per allowed cell. :func:`why_too_many_cells` counts them on a
plain ``json`` parse (no validation) and refuses with the count and the cap. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Optional

__all__ = [
    "CELLS_PER_MASTER_CELL",
    "MIN_CELL_CAP",
    "OUTPUTS_PER_CELL",
    "MARKDOWN_RENDER_CAP",
    "cell_cap",
    "why_too_many_cells",
    "renders_as_markdown",
]

CELLS_PER_MASTER_CELL = 10
MIN_CELL_CAP = 300
OUTPUTS_PER_CELL = 10


def cell_cap(master_cells: int) -> int:
    """The most cells a submission of a notebook released with ``master_cells`` cells may have."""
    return max(CELLS_PER_MASTER_CELL * int(master_cells), MIN_CELL_CAP)


def _count(items: Any) -> int:
    return len(items) if isinstance(items, (list, dict)) else 0


def why_too_many_cells(data: bytes, master_cells: int) -> Optional[str]:
    """None when the notebook ``data`` (its bytes, not yet parsed by nbformat) has at most
    :func:`cell_cap` cells and :data:`OUTPUTS_PER_CELL` times that many outputs and attachments, else why
    not ("120000 cells, over the cap of 300"). Bytes that are not a JSON notebook pass: nbformat says why."""
    try:
        nb = json.loads(data)
    except (ValueError, RecursionError):
        return None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return None
    cap = cell_cap(master_cells)
    if len(cells) > cap:
        return f"{len(cells)} cells, over the cap of {cap} (10 times the course's notebook, at least {MIN_CELL_CAP})"
    cells = [c for c in cells if isinstance(c, dict)]
    for what in ("outputs", "attachments"):
        count = sum(_count(c.get(what)) for c in cells)
        if count > OUTPUTS_PER_CELL * cap:
            return f"{count} {what}, over the cap of {OUTPUTS_PER_CELL * cap}"
    return None


# The feedback renders each Markdown cell with mistune: some long patterns ('*_' * N, '[a](' * N) take 7-11 s per
# 128 KiB cell (red team round D). The course's Markdown cells hold at most ~3.5 KB; a longer one is shown as
# escaped plain text instead (labs/nbgrader_config.py, InertMarkdown).
MARKDOWN_RENDER_CAP = 16 << 10


def renders_as_markdown(source: str) -> bool:
    """Whether the feedback renders the Markdown cell ``source`` as Markdown (at most
    :data:`MARKDOWN_RENDER_CAP` bytes of UTF-8), not as escaped plain text."""
    return len(source.encode("utf-8", "surrogatepass")) <= MARKDOWN_RENDER_CAP
