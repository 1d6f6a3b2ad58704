"""Finding a student's notebooks in a folder of submissions, refusing the unsafe ones, telling the unreadable ones.

Nothing under the submissions folder is read through a link: :func:`why_refused` checks every path
component below the folder with ``lstat`` (a symbolic link, a hard link to a file elsewhere, a
device, a FIFO or a socket is refused, and the reason names the entry, never its target), and
:func:`read_submission` opens the notebook with ``O_NOFOLLOW`` and checks what it opened before
reading at most :data:`MAX_NOTEBOOK_BYTES`. :func:`parse_notebook` parses those bytes,
:func:`why_too_much_source` refuses a cell over :data:`MAX_CELL_SOURCE` or cells over
:data:`MAX_NOTEBOOK_SOURCE` in all (before anything else parses or renders them), :func:`why_uncompilable`
a code cell Python's compiler cannot take (in a child process with a time and memory limit),
:func:`drop_duplicate_grade_ids` makes a copy-pasted test cell an ordinary cell, and
:func:`in_master_order` puts the cells back in the master's order (a moved test or exercise cell
runs where the course put it, for nbgrader and for the probes alike).

Standard library only at import time (nbformat inside :func:`parse_notebook`).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, Union

__all__ = [
    "STUDENT_ID",
    "MAX_NOTEBOOK_BYTES",
    "MAX_CELL_SOURCE",
    "MAX_NOTEBOOK_SOURCE",
    "TOOL_FOLDERS",
    "find_submissions",
    "both_levels",
    "why_refused",
    "read_submission",
    "parse_notebook",
    "why_too_much_source",
    "why_uncompilable",
    "drop_duplicate_grade_ids",
    "in_master_order",
    "why_unreadable",
]

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")  # a student folder's name, which names the files
MAX_NOTEBOOK_BYTES = 50 << 20  # a bigger notebook is refused by its size, before it is parsed
# Source caps (UTF-8 bytes of a cell's source; outputs are not source). The course's own notebooks
# (labs/source and labs/release, every lab, both frameworks) have at most 3,541 bytes in a cell and
# 22,829 in all (week 6); the caps are 37 and 22 times that, room for any long answer. What they stop:
# the grader's unconfined processes (the AST check, nbgrader, the HTML feedback) grow about 2.5 GB per
# MB of source (round C: a 4 MB cell, 7.08 GB and 862 s; 1 MB, 1.82 GB), so at most ~0.3 GB a cell
# and ~1.3 GB a notebook, where the 50 MB file limit alone allowed ~120 GB.
MAX_CELL_SOURCE = 128 << 10
MAX_NOTEBOOK_SOURCE = 512 << 10
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


def why_too_much_source(nb: Any, cell_cap: Optional[int] = None, notebook_cap: Optional[int] = None) -> Optional[str]:
    """None when every cell's source of the parsed notebook ``nb`` (code, markdown or raw; UTF-8 bytes)
    is at most ``cell_cap`` and all of them together at most ``notebook_cap``, else why not: the first
    cell over (its number counting from 1, its kind, its nbgrader grade id if it has one), its size and
    the cap, never its content. Outputs are not counted. The caps default to :data:`MAX_CELL_SOURCE` and
    :data:`MAX_NOTEBOOK_SOURCE` as they are when it is called."""
    cell_cap = MAX_CELL_SOURCE if cell_cap is None else cell_cap
    notebook_cap = MAX_NOTEBOOK_SOURCE if notebook_cap is None else notebook_cap
    total = 0
    for number, cell in enumerate(nb.cells, 1):
        source = cell.get("source", "")
        text = source if isinstance(source, str) else "".join(map(str, source))
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        total += size
        if size > cell_cap:
            meta = cell.get("metadata")
            meta = meta.get("nbgrader") if isinstance(meta, dict) else None
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            kind = cell.get("cell_type") if cell.get("cell_type") in ("code", "markdown", "raw") else "unknown kind"
            name = f"cell {number} ({kind}" + (f", grade id {grade_id[:60]!r})" if isinstance(grade_id, str) else ")")
            return f"{name} has {size:,} bytes of source, over the {cell_cap >> 10} KiB cap per cell"
    if total > notebook_cap:
        return f"the cells have {total:,} bytes of source in all, over the {notebook_cap >> 10} KiB cap per notebook"
    return None


# Compiling a cell (red team round C and D, 2026-11-27/28): a 3,000-term expression (x = 1+1+...+1) makes the
# compiler raise RecursionError inside ipykernel's message handler, the kernel never replies and the grader waits
# the cell timeout out three times (931 s against ~30 s) before the notebook scores 0. The child compiles each code
# cell as IPython would (magics and shell lines transformed first) and prints "cell <i>" before it, "refuse <i>
# <reason>" for a cell the compiler cannot take; an ordinary SyntaxError is the student's (that cell fails).
COMPILE_TIMEOUT = 30  # seconds for all the cells of a notebook (the course's compile in well under a second)
COMPILE_MEMORY = 1 << 30  # bytes of address space of the child
_COMPILE_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))  # in the child: no preexec_fn
try:
    from IPython.core.inputtransformer2 import TransformerManager
    transform = TransformerManager().transform_cell
except Exception:
    transform = None
for index, source in enumerate(json.load(sys.stdin)):
    print("cell", index, flush=True)
    try:
        source = transform(source) if transform else source
    except Exception:
        continue  # IPython cannot transform it: the kernel will say so, in that cell
    try:
        compile(source, "<cell>", "exec")
    except SyntaxError as error:
        if "too many" in str(error):
            print("refuse", index, "SyntaxError:", str(error)[:100], flush=True)
            break
    except (RecursionError, MemoryError, OverflowError, ValueError) as error:
        print("refuse", index, type(error).__name__ + ":", str(error)[:100], flush=True)
        break
print("done", flush=True)
"""


def why_uncompilable(nb: Any, timeout: Optional[float] = None) -> Optional[str]:
    """None when Python's compiler takes every code cell of ``nb`` (IPython's magics and shell lines transformed
    first; a cell with an ordinary SyntaxError counts as taken: the student loses that cell, as in the kernel),
    else why not: the first cell the compiler cannot take (its number counting from 1; RecursionError, "too many
    nested ...", MemoryError past :data:`COMPILE_MEMORY` bytes, a crash) or that all of them took over
    ``timeout`` seconds (default :data:`COMPILE_TIMEOUT`). Compiled in a child process (it runs nothing)."""
    code = [(n, c.get("source", "")) for n, c in enumerate(nb.cells, 1) if c.get("cell_type") == "code"]
    sources = [s if isinstance(s, str) else "".join(map(str, s)) for _, s in code]
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _COMPILE_CHILD, str(COMPILE_MEMORY)],
            input=json.dumps(sources),
            capture_output=True,
            text=True,
            timeout=COMPILE_TIMEOUT if timeout is None else timeout,
            check=False,
        )
        lines = done.stdout.splitlines()
    except subprocess.TimeoutExpired as error:
        out = error.stdout or b""
        lines = (out.decode("utf-8", "replace") if isinstance(out, bytes) else out).splitlines()
        started = [line for line in lines if line.startswith("cell ")]
        where = f"cell {code[int(started[-1].split()[1])][0]}" if started else "the cells"
        return f"{where}: compiling took over {COMPILE_TIMEOUT if timeout is None else timeout:g} s"
    for line in lines:
        if line.startswith("refuse "):
            _, index, reason = line.split(" ", 2)
            return f"cell {code[int(index)][0]} (code): Python's compiler cannot take it ({reason})"
    if "done" not in lines:
        started = [line for line in lines if line.startswith("cell ")]
        where = f"cell {code[int(started[-1].split()[1])][0]} (code)" if started else "the cells"
        return f"{where}: Python's compiler stopped on it (exit status {done.returncode})"
    return None


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


def _anchor(cell: Any) -> Optional[tuple[str, str]]:
    """What ties a cell to the master's: ``("grade", grade_id)`` for a cell with nbgrader metadata,
    ``("id", cell id)`` for an ordinary one (the course's own markdown and code cells keep their ids)."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if isinstance(meta, dict) and meta.get("grade_id"):
        return "grade", str(meta["grade_id"])
    return ("id", str(cell["id"])) if cell.get("id") else None


def in_master_order(nb: Any, master: Any) -> bool:
    """Put the cells of the student's notebook ``nb`` in the order of the ``master`` notebook's cells; returns
    whether anything moved (``nb`` is changed in place).

    A cell of ``nb`` that is one of the master's (the same nbgrader ``grade_id``; for an ordinary cell, the
    same cell id) goes to the master's place; a cell of the student's own (or a second copy) stays after the
    course cell it followed, cells before any course cell first. So an honest notebook keeps its order, any
    permutation of its cells comes back to it, and a test cell moved up (to run before the exercises it
    judges, or to leave something behind for them) runs in its place."""
    places = {}
    for index, cell in enumerate(master.cells):
        key = _anchor(cell)
        if key is not None and (key[0] == "grade" or "nbgrader" not in cell.get("metadata", {})):
            places.setdefault(key, index)
    head: list[Any] = []
    groups: dict[int, list[Any]] = {}
    current = head
    for cell in nb.cells:
        place = places.get(_anchor(cell))
        if place is not None and place not in groups:
            current = groups[place] = [cell]
        else:
            current.append(cell)
    ordered = head + [cell for place in sorted(groups) for cell in groups[place]]
    moved = [id(c) for c in ordered] != [id(c) for c in nb.cells]
    nb.cells = ordered
    return moved


def why_unreadable(path: Path) -> Optional[str]:
    """None if ``path`` is a notebook nbformat can read, else why not."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - any reason makes it ungradable
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None
