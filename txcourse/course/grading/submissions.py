"""Finding a student's notebooks in a folder of submissions, and telling the unreadable ones.

Standard library only at import time (nbformat inside :func:`why_unreadable`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

__all__ = ["STUDENT_ID", "find_submissions", "why_unreadable"]

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")  # a student folder's name, which names the files


def find_submissions(student_dir: Path, notebooks: Sequence[str]) -> tuple[dict[str, Path], dict[str, str]]:
    """A student's notebooks (notebook id -> path), looked up in the student's folder and in its
    ``<lab>/`` subfolder, and a note for each notebook that was not found under its own name.

    A near miss (``week2_positional_torch (1).ipynb``, ``Week2_Positional_torch.ipynb``) stands in for
    a missing notebook when it is the only other notebook that close to that name: it is graded and
    the note says so; otherwise the note names the notebooks that were there."""
    import difflib

    lab = notebooks[0].rsplit("_", 1)[0] if notebooks else ""
    found: dict[str, Path] = {}
    others: list[Path] = []
    for folder in (student_dir / lab, student_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.ipynb")):
            if path.stem in notebooks and path.stem not in found:
                found[path.stem] = path
            elif path.stem not in notebooks:
                others.append(path)
    notes: dict[str, str] = {}
    missing = [n for n in notebooks if n not in found]
    if not missing or not others:
        return found, notes

    def key(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")

    # each other notebook goes to the expected name it is closest to, if it is close enough
    best: dict[str, list[Path]] = {n: [] for n in missing}
    for path in others:
        ratios = {n: difflib.SequenceMatcher(None, key(path.stem), n).ratio() for n in notebooks}
        name = max(ratios, key=ratios.get)
        if name in best and (ratios[name] >= 0.8 or key(path.stem).startswith(name)):
            best[name].append(path)
    for name in missing:
        if len(best[name]) == 1:
            found[name] = best[name][0]
            notes[name] = f"graded from {best[name][0].name!r} (expected {name}.ipynb)"
        else:
            names = ", ".join(repr(p.name) for p in (best[name] or others))
            notes[name] = f"expected {name}.ipynb, found {names}"
    return found, notes


def why_unreadable(path: Path) -> Optional[str]:
    """None if ``path`` is a notebook nbformat can read, else why not."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - any reason makes it ungradable
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None
