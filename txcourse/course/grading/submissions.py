"""Finding a student's notebooks in a folder of submissions, refusing the unsafe ones, telling the unreadable ones.

Nothing under the submissions folder is read through a link: :func:`why_refused` checks every path
component below the folder with ``lstat`` (a symbolic link, a hard link to a file elsewhere, a
device, a FIFO or a socket is refused, and the reason names the entry, never its target), and
:func:`read_submission` opens the notebook with ``O_NOFOLLOW`` and checks what it opened before
reading at most :data:`MAX_NOTEBOOK_BYTES`. :func:`parse_notebook` parses those bytes, and
:func:`drop_duplicate_grade_ids` makes a copy-pasted test cell an ordinary cell.

Standard library only at import time (nbformat inside :func:`parse_notebook`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, Union

__all__ = [
    "STUDENT_ID",
    "MAX_NOTEBOOK_BYTES",
    "TOOL_FOLDERS",
    "find_submissions",
    "both_levels",
    "why_refused",
    "read_submission",
    "parse_notebook",
    "drop_duplicate_grade_ids",
    "why_unreadable",
]

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")  # a student folder's name, which names the files
MAX_NOTEBOOK_BYTES = 50 << 20  # a bigger notebook is refused by its size, before it is parsed
TOOL_FOLDERS = (".git", ".ipynb_checkpoints")  # dot-folders of tools, not students: skipped with a warning


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
        if not _is_real_dir(folder):  # a link is never followed (why_refused says why the student is refused)
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


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def both_levels(student_dir: Path, notebooks: Sequence[str]) -> list[str]:
    """The notebooks submitted twice: at the top of ``student_dir`` and in its ``<lab>/`` subfolder."""
    lab = notebooks[0].rsplit("_", 1)[0] if notebooks else ""
    if not _is_real_dir(student_dir / lab):
        return []
    return [n for n in notebooks if all(os.path.lexists(d / f"{n}.ipynb") for d in (student_dir, student_dir / lab))]


def _kind(mode: int, links: int) -> Optional[str]:
    """Why an entry of this ``lstat`` mode and link count is refused (None for a plain folder or file)."""
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISFIFO(mode):
        return "is a FIFO"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    if stat.S_ISREG(mode) and links > 1:
        return f"is a hard link ({links} names for one file)"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "is not a plain file or folder"
    return None


def why_refused(path: Path, root: Path) -> Optional[str]:
    """None when ``path`` and every folder between ``root`` and it are plain (``lstat``: no symbolic
    link, no hard link to a file elsewhere, no device, FIFO or socket), else why not, naming the
    entry relative to ``root`` (never where a link points, never what it holds)."""
    rel = Path(path).relative_to(root)
    here = Path(root)
    for part in rel.parts:
        here = here / part
        try:
            info = os.lstat(here)
        except OSError as error:
            return f"{here.relative_to(root)} cannot be inspected ({type(error).__name__})"
        kind = _kind(info.st_mode, info.st_nlink)
        if kind is None and here != path and not stat.S_ISDIR(info.st_mode):
            kind = "is not a folder"
        if kind is not None:
            return f"{here.relative_to(root)} {kind}"
    return None


def read_submission(path: Path, root: Path, limit: int = MAX_NOTEBOOK_BYTES) -> Union[bytes, str]:
    """The bytes of the notebook ``path`` under the submissions folder ``root``, or why it is refused.

    :func:`why_refused` first; then the file is opened with ``O_NOFOLLOW | O_NONBLOCK`` (a link put
    there since is not followed, a FIFO does not block) and what was opened is checked again (a
    regular file with one name, at most ``limit`` bytes) before it is read."""
    problem = why_refused(path, root)
    if problem:
        return problem
    rel = Path(path).relative_to(root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        return f"{rel} cannot be opened ({type(error).__name__})"
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode, info.st_nlink)
        if kind is not None:
            return f"{rel} {kind}"
        if info.st_size > limit:
            return f"{rel} is larger than {limit >> 20} MB ({info.st_size} bytes)"
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            return f"{rel} is larger than {limit >> 20} MB"
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_notebook(data: bytes) -> tuple[Any, Optional[str]]:
    """``(notebook, None)`` if nbformat can read ``data``, else ``(None, why not)``."""
    import nbformat

    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4), None
    except Exception as error:  # noqa: BLE001 - any reason makes it ungradable
        return None, f"{type(error).__name__}: {str(error)[:200]}"


def drop_duplicate_grade_ids(nb: Any) -> list[str]:
    """Make every cell that repeats an earlier cell's nbgrader ``grade_id`` (a copy-pasted test cell)
    an ordinary cell: its nbgrader metadata is removed, so it runs but is not graded, and the first
    cell with that id is graded as usual (nbgrader fails the whole notebook on a repeated id). Returns
    the repeated ids, in order; ``nb`` is changed in place."""
    seen: set[str] = set()
    repeated = []
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id is None:
            continue
        if grade_id in seen:
            del cell.metadata["nbgrader"]
            repeated.append(str(grade_id))
        seen.add(grade_id)
    return repeated


def why_unreadable(path: Path) -> Optional[str]:
    """None if ``path`` is a notebook nbformat can read, else why not."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - any reason makes it ungradable
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None
