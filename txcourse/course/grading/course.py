"""The labs as an nbgrader course: their names, the notebook ids, the committed notebook form.

The labs live in ``labs/`` as an nbgrader course (``labs/nbgrader_config.py``):
``labs/source/<lab>/<lab>_<framework>.ipynb`` are the instructor versions with
solutions and hidden tests (built by ``labs/make_sources.py``),
``labs/release/<lab>/`` the student versions made from them by nbgrader
(:mod:`txcourse.course.grading.release`). Standard library only at import time.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from txcourse.course.labs import LABS, TRAINING_LABS  # the lab names: one list, in txcourse.course.labs
from txcourse.registry import FRAMEWORKS

__all__ = [
    "LABS",
    "FRAMEWORKS",
    "TRAINING_LABS",
    "SMOKE_PARAMETERS",
    "DEFAULT_CELL_TIMEOUT",
    "notebook_name",
    "normalise_notebook",
    "copy_config",
]

SMOKE_PARAMETERS = {"SMOKE": True, "DEVICE": "cpu"}  # one minute on a CPU
DEFAULT_CELL_TIMEOUT = 300  # seconds per cell when grading; an endless loop costs this much, then its points


def notebook_name(lab: str, framework: str) -> str:
    """``week3_attention``, ``torch`` -> ``week3_attention_torch`` (the nbgrader notebook id)."""
    return f"{lab}_{framework}"


_KEEP_CELL_METADATA = ("nbgrader", "tags", "deletable", "editable")


def normalise_notebook(text: str) -> str:
    """A notebook's JSON in the committed form: no outputs, no execution counts, only the cell
    metadata that matters (nbgrader's, tags, deletable/editable), nbformat's key order."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in _KEEP_CELL_METADATA}
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    return nbformat.writes(nb) + "\n"


def copy_config(labs_dir: Path, course: Path) -> None:
    """The course's ``nbgrader_config.py`` into a (temporary) course folder."""
    shutil.copy2(labs_dir / "nbgrader_config.py", course / "nbgrader_config.py")
