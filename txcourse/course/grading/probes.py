"""The verdict outside the student's process: probes run with the student's code, checks run without it.

nbgrader scores a test cell by what the student's own kernel reports, and a student who knows
Python can make that kernel report anything (an input transformer that blanks the tests, a patched
``run_cell``, ``session.send`` or ``assert_close``). So every graded test cell of a lab also has a
*probe* (``tests(..., probe=...)`` in ``labs/specs``; ``labs/make_sources.py`` writes them to
``labs/probes/<lab>.json``, which is never released nor bound into the sandbox):

1. :func:`probe_notebook` builds a notebook from the student's: their code cells in the *master's*
   order of cells (the locked ones restored from the master copy, the test cells left out), then each
   probe in a namespace of its own, restored from a snapshot of the student's definitions (so no
   probe's helpers reach a later probe or the student's names), in the master's order. A probe calls
   the student's definitions on inputs drawn from ``PROBE_SEED``, a number the grader draws afresh for
   each run, and prints plain arrays (``probe_emit(key, value, tol)``: ``np.save`` bytes in base64, one line each).
2. It runs in a sandboxed kernel of its own in which ``txcourse`` is the lab's allow-listed copy
   (:func:`~txcourse.course.grading.allowlist.package_for_lab`): every function and method outside the
   lab's ``ALLOW`` raises there (no source, no ``__pycache__``), so "write it yourself" holds whatever the
   student's code does; and its first cell after the preamble makes what the lab forbids raise
   (:func:`~txcourse.course.grading.forbidden.forbidden_prelude`) before the student's code runs.
3. The same probes run after the *solution* cells of the course's own notebook (trusted, with the same
   copy, the same prelude and the same ``PROBE_SEED``): the reference.
4. :func:`compare` reads both with ``np.load(allow_pickle=False)`` in the grader's process, which never
   ran student code, key by key, with the reference's tolerance. A test cell keeps nbgrader's score only
   when its probe matches: no object of the student's ever crosses, only text.

A probe's output is read from its own cell only: once a cell has replied, nothing a later cell does
can add to it. Standard library and NumPy only.
"""

from __future__ import annotations

import base64
import binascii
import copy
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from txcourse.course.grading.forbidden import forbidden_prelude
from txcourse.course.grading.sanitize import probe_lines

__all__ = [
    "PROBE_LINE",
    "LabProbes",
    "load_probes",
    "probe_notebook",
    "read_probe_outputs",
    "compare",
]

PROBE_LINE = "@txprobe"  # the start of each line a probe prints: "@txprobe <key> <tol> <base64 of .npy bytes>"
_MAX_ARRAY = 1 << 22  # elements of one emitted array; more is refused, not loaded

# Bound at the top of every probe cell, after the restore (red team round E 2026-11-28, E2: a student's own
# ``def probe_emit`` in the namespace replaced the grader's for every probe and printed what it liked). Each
# value is made a plain array of a plain dtype FIRST, by the base classes' own methods (a subclass of float,
# int, ndarray or torch.Tensor gives its underlying value, whatever it overrides): no comparison on the student's
# object decides anything. ``tol``: a tolerance, or a rule such as ">1e-3" that the GRADER applies to the
# numbers of both runs (:func:`compare`): a yes/no the probe would have computed in the student's kernel.
EMITTER = '''\
def probe_emit(key, value, tol=1e-5):
    """Print `value` as a plain array: one line "@txprobe <key> <tol or rule> <base64 of np.save bytes>"."""
    import base64 as _b64
    import io as _io
    import sys as _sys

    import numpy as _np

    kind, torch = type(value), _sys.modules.get("torch")
    if torch is not None and issubclass(kind, torch.Tensor):
        value = torch.Tensor.numpy(torch.Tensor.cpu(torch.Tensor.detach(value)))
    elif kind.__module__.split(".")[0] in ("tensorflow", "keras") and hasattr(value, "numpy"):
        value = value.numpy()
    elif issubclass(kind, float):
        value = float.__float__(value)
    elif issubclass(kind, int) and kind is not bool:
        value = int.__int__(value)
    value = _np.array(value, subok=False)
    if value.dtype.kind not in "biuf":
        raise TypeError(f"probe_emit({key!r}): a value of dtype {value.dtype}, expected numbers")
    rule = tol if isinstance(tol, str) else repr(float(tol))
    if isinstance(tol, str):
        op = next(o for o in (">=", "<=", "!=", ">", "<") if tol.startswith(o))
        rule = op + repr(float(tol[len(op):]))
    buffer = _io.BytesIO()
    _np.save(buffer, value, allow_pickle=False)
    print("@txprobe", "".join(str(key).split()), rule, _b64.b64encode(buffer.getvalue()).decode("ascii"), flush=True)
'''

# How each probe cell binds the emitter: run in a dictionary of its own, so that no name of the student's
# namespace (a ``print``, ``float`` or ``np`` of theirs) is looked up by it.
BIND_EMITTER = (
    f"__txprobe_emitter__ = {{}}\nexec({EMITTER!r}, __txprobe_emitter__)\n"
    'probe_emit = __txprobe_emitter__["probe_emit"]  # the grader\'s, defined in a namespace of its own\n'
)

# The probes that judge a cell by running it ALONE (test id -> the solution cell's grade id, per lab): the cell's
# source runs in the names the setup cells left (:data:`SETUP_SNAPSHOT`, before the first solution cell), so no
# function of another cell reaches it under any name (round E 2026-11-28, E2: ``_table_of = positional_encoding``
# in exercise 1, ``_table_of(4, 4)`` in the worked table; a lambda, a functools.partial, a dict, a value computed
# there all come from another cell too).
RUN_ALONE: dict[str, dict[str, str]] = {"week2_positional": {"test_worked_table": "worked_table"}}
SETUP_SNAPSHOT = "__txprobe_setup__ = {**(lambda: 0).__globals__}  # the setup's names, before any solution cell"
RESTORE_SETUP = (
    '(lambda g, s, a: (g.clear(), g.update(a), g.__setitem__("__txprobe_names__", s),'
    ' g.__setitem__("__txprobe_setup__", a)))'
    "((lambda: 0).__globals__, __txprobe_names__, __txprobe_setup__)  # the setup's names only"
)


@dataclass
class LabProbes:
    """The probes of one lab (``labs/probes/<lab>.json``): per framework, the probe source of each graded
    test cell and the course cells the probe run leaves out. (Its ``"allow"`` key, the probe run's
    txcourse, is :func:`~txcourse.course.grading.allowlist.load_allow`'s.)"""

    lab: str
    probes: dict[str, dict[str, str]] = field(default_factory=dict)
    skip: dict[str, list[str]] = field(default_factory=dict)  # course cells the probe run leaves out

    def for_notebook(self, name: str) -> dict[str, str]:
        """grade id -> probe source of notebook ``<lab>_<framework>``."""
        return self.probes.get(name.rsplit("_", 1)[-1], {})

    def skipped(self, name: str) -> frozenset[str]:
        """The sources of the course cells of ``<lab>_<framework>`` the probe run leaves out."""
        return frozenset(self.skip.get(name.rsplit("_", 1)[-1], []))


def load_probes(labs_dir: Path, lab: str) -> Optional[LabProbes]:
    """The probes of ``lab`` from ``labs_dir/probes/<lab>.json``, or None if the lab has none."""
    path = Path(labs_dir) / "probes" / f"{lab}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return LabProbes(lab, data.get("probes", {}), data.get("skip", {}))


# --------------------------------------------------------------------------------------------------
# The probe notebook


def _grading(cell: Mapping[str, Any]) -> dict[str, Any]:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


# Taken once after the student's cells: the names every probe starts from. Restored before each probe, in
# the same namespace object (the student's functions look their globals up there), so that nothing a probe
# assigns or defines -- a helper, a course piece put in a student's name -- reaches a later probe. The
# namespace is reached as ``(lambda: 0).__globals__`` and copied with ``{**...}``, no name the student's code
# could have shadowed (``globals``, ``dict``). A student's code can still undo the restore in its own kernel
# (an input transformer that drops the line); what stops that from paying is the order: the probes run in
# the master's order, and a probe that puts course pieces in the student's names (week 3's multi-head probe
# judges exercise 4 alone) puts in only pieces of earlier exercises, whose probes have run already.
SNAPSHOT = "__txprobe_names__ = {**(lambda: 0).__globals__}  # the student's definitions: every probe starts from these"
RESTORE = (
    '(lambda g, s: (g.clear(), g.update(s), g.__setitem__("__txprobe_names__", s)))'
    "((lambda: 0).__globals__, __txprobe_names__)  # a fresh namespace: the student's definitions only"
)


def _course_cells(
    student: Any, master: Any, locked: Mapping[str, str], probes: Mapping[str, str]
) -> list[tuple[str, bool]]:
    """(source, whether a solution cell) of the student's code cells in the master's order (a locked cell with
    the master's source), without the test cells: those of probes run later, the others not at all."""
    from txcourse.course.grading.submissions import in_master_order

    ordered = copy.deepcopy(student)
    in_master_order(ordered, master)
    sources = []
    for cell in ordered.cells:
        if cell.cell_type != "code":
            continue
        meta = _grading(cell)
        grade_id = meta.get("grade_id")
        if meta.get("grade") and (grade_id in probes or grade_id in locked):
            continue
        source = locked.get(grade_id, cell.source) if meta.get("locked") else cell.source
        sources.append((source, bool(meta.get("solution")) and not meta.get("locked")))
    return sources


def _alone(student: Any, grade_id: str) -> str:
    """The probe lines that run the student's cell ``grade_id`` alone, in the setup's names (:data:`RUN_ALONE`):
    its source as a string literal, compiled and run by the probe (a missing cell: the probe prints nothing)."""
    sources = [c.source for c in student.cells if c.cell_type == "code" and _grading(c).get("grade_id") == grade_id]
    if not sources:
        return f"raise RuntimeError('the cell {grade_id} is missing')"
    return f"{RESTORE_SETUP}\nexec(compile({sources[0]!r}, '<{grade_id}>', 'exec'), (lambda: 0).__globals__)"


def probe_notebook(
    student: Any,
    master: Any,
    probes: Mapping[str, str],
    seed: int,
    skip: frozenset[str] = frozenset(),
    forbid: Optional[tuple[str, str]] = None,
    alone: Optional[Mapping[str, str]] = None,
) -> tuple[Any, dict[str, int]]:
    """The notebook whose run checks the student's answers: with ``forbid`` (lab,
    framework), :func:`~txcourse.course.grading.forbidden.forbidden_prelude` (what the lab forbids
    raises before the student's code runs); the student's code cells in
    the *master's* order (:func:`~txcourse.course.grading.submissions.in_master_order`; a locked cell of
    the master, matched by grade id, with the master's source), without the test cells; :data:`SNAPSHOT`;
    then one cell per probe, in the order of the master's test cells, each starting with :data:`RESTORE`
    (the names of the snapshot, nothing a probe left; for a probe of :data:`RUN_ALONE`, the setup's names and
    the cell it judges run alone), :data:`BIND_EMITTER` (the student's names never include the emitting function)
    and ``PROBE_SEED = seed``. A probe whose test cell the
    student deleted or moved runs all the same, in its place. Markdown and raw cells are left out, and so
    is a cell whose source is exactly one of ``skip`` (course cells the probes do not need: a training
    run, a plot). ``alone``: test id -> the cell its probe runs alone (default: the lab's :data:`RUN_ALONE`).
    Returns the notebook and grade id -> index of its probe cell."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    locked = {
        _grading(c).get("grade_id"): c.source
        for c in master.cells
        if c.cell_type == "code" and _grading(c).get("locked") and _grading(c).get("grade_id")
    }
    if alone is None:  # the lab's (test id -> the cell its probe runs alone)
        alone = RUN_ALONE.get(forbid[0], {}) if forbid is not None else {}
    cells = [new_code_cell(forbidden_prelude(*forbid))] if forbid is not None else []
    for source, solution in _course_cells(student, master, locked, probes):
        if alone and solution and not any(c.source == SETUP_SNAPSHOT for c in cells):
            cells.append(new_code_cell(SETUP_SNAPSHOT))
        if source not in skip:
            cells.append(new_code_cell(source))
    cells.append(new_code_cell(SNAPSHOT))
    order = [_grading(c).get("grade_id") for c in master.cells if _grading(c).get("grade_id") in probes]
    positions: dict[str, int] = {}
    for grade_id in [*order, *probes]:
        if grade_id not in positions:
            positions[grade_id] = len(cells)
            first = _alone(student, alone[grade_id]) if grade_id in alone else RESTORE
            cells.append(new_code_cell(f"{first}\n{BIND_EMITTER}PROBE_SEED = {int(seed)}\n{probes[grade_id]}"))
    nb = new_notebook(cells=cells, metadata=copy.deepcopy(dict(master.metadata)))
    nbformat.validate(nb)
    return nb, positions


# --------------------------------------------------------------------------------------------------
# Reading and comparing


def _stdout(cell: Mapping[str, Any]) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _plain_array(raw: bytes) -> np.ndarray | str:
    """The array of the ``.npy`` bytes ``raw``, or why not: its header is read and checked FIRST (numbers only,
    at most :data:`_MAX_ARRAY` values, exactly as many data bytes as shape x item size), so that nothing is
    allocated from what a header claims (round E 2026-11-28, E2: shape (2**40,) float64 asked for 8 TiB)."""
    buffer = io.BytesIO(raw)
    version = np.lib.format.read_magic(buffer)
    if version not in ((1, 0), (2, 0)):
        return f"a value that is not a plain array (.npy version {version[0]}.{version[1]})"
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(buffer)
    if dtype.hasobject:
        return "a value that is not a plain array (Python objects)"
    if dtype.kind not in "biuf" or dtype.subdtype is not None:
        return f"a value that is not an array of numbers (dtype kind {dtype.kind!r})"
    if any(int(n) < 0 for n in shape):
        return "a value that is not a plain array (a negative dimension)"
    count = 1
    for n in shape:
        count *= int(n)  # Python integers: no overflow
    if count > _MAX_ARRAY:
        return f"an array of more than {_MAX_ARRAY} values"
    if count * dtype.itemsize != len(raw) - buffer.tell():
        return "a value whose .npy header does not match its data"
    return np.load(io.BytesIO(raw), allow_pickle=False)


def read_probe_outputs(nb: Any, positions: Mapping[str, int]) -> dict[str, dict[str, tuple[Any, np.ndarray]] | str]:
    """grade id -> {key: (tol or rule, array)} printed by its probe cell, or a string saying what was wrong
    (nothing printed, a line that is not a plain array, a key printed twice)."""
    out: dict[str, dict[str, tuple[Any, np.ndarray]] | str] = {}
    for grade_id, index in positions.items():
        if index >= len(nb.cells):
            out[grade_id] = "the probe did not run"
            continue
        values: dict[str, tuple[Any, np.ndarray]] = {}
        lines, problem = probe_lines(_stdout(nb.cells[index]))  # the grammar of a line (issue 30)
        problem = problem or None
        for key, tolerance, data in lines:
            try:
                array = _plain_array(base64.b64decode(data, validate=True))
            except (ValueError, binascii.Error, OSError, EOFError) as error:
                problem = f"a value that is not a plain array ({type(error).__name__})"
                break
            # the student's key, dtype (a structured one carries field names) and size are never echoed: only
            # course-chosen text reaches the note and the feedback (issue 30's second read)
            if isinstance(array, str):
                problem = array
                break
            if key in values:
                problem = "a key printed twice"
                break
            values[key] = (tolerance, array)
        out[grade_id] = problem or values or "the probe printed nothing (an error, or the cell did not run)"
    return out


_RULES = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal, "!=": np.not_equal}


def _by_rule(key: str, rule: tuple[str, float], have: np.ndarray, want: np.ndarray) -> str:
    """Why the numbers ``have`` fall on other sides of the reference's ``rule`` (operator, threshold) than
    ``want`` ('' when every value is on the same side): the yes/no a probe used to compute in the student's kernel
    ("leak found", "without the mask the padding matters"), decided here from plain numbers."""
    op, threshold = rule
    a, b = have.astype(np.float64), want.astype(np.float64)
    if not np.isfinite(a).all():
        return f"{key}: not finite"
    wrong = int(np.sum(_RULES[op](a, threshold) != _RULES[op](b, threshold)))
    return f"{key}: {wrong} of {want.size} values on the wrong side of {op} {threshold:g}" if wrong else ""


def compare(student: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, str]:
    """grade id -> why the student's probe output does not match the reference ('' when it does). The
    tolerance (absolute, and relative to the reference's largest magnitude) is the reference's; shapes and
    the kind of values (bool, integer, float) must match exactly; NaN never matches. A difference is quoted
    coarsely (within 10 times the tolerance or beyond), never as the number: the student's code picks it, and
    the red team (round D 2026-11-28) wrote the probe's seed and source into "largest difference N" 3 digits
    at a time; whether it is close is what helps a student, the digits do not."""
    verdicts = {}
    for grade_id, expected in reference.items():
        if isinstance(expected, str):
            raise RuntimeError(f"the reference run of probe {grade_id!r} failed: {expected}")
        got = student.get(grade_id, "the probe did not run")
        if isinstance(got, str):
            verdicts[grade_id] = got
            continue
        problem = ""
        if set(got) != set(expected):
            missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
            # the expected keys are the course's; the student's own keys are counted, never echoed (a key
            # is text the student's code chose: it must not carry anything into the note or the feedback)
            problem = f"printed {len(got)} value(s), expected {sorted(expected)}" + (
                f" (missing {missing})" if missing else ""
            )
            problem += f" ({len(extra)} unexpected)" if extra else ""
        for key, (tol, want) in expected.items():
            if problem:
                break
            have = got[key][1]
            if have.shape != want.shape:
                # the expected shape is the course's; the student's is never echoed (an empty array can have
                # any shape, e.g. (0, 112, 101, 102, 33): text smuggled into the note and the feedback)
                problem = f"{key}: shape differs from the expected {want.shape}"
            elif (have.dtype.kind == "b") != (want.dtype.kind == "b"):
                problem = f"{key}: dtype {have.dtype}, expected {want.dtype}"
            elif isinstance(tol, tuple):  # a rule: the grader decides the yes/no of both runs (round E)
                problem = _by_rule(key, tol, have, want)
            elif want.dtype.kind == "b" or tol == 0:
                if not np.array_equal(have, want):
                    problem = f"{key}: {int(np.sum(have != want))} of {want.size} values differ"
            else:
                a, b = have.astype(np.float64), want.astype(np.float64)
                if not np.isfinite(a).all():
                    problem = f"{key}: not finite"
                elif not np.isfinite(b).all():  # NaN/inf in the reference: every difference would be NaN, never > tol
                    problem = f"{key}: the expected values are not finite, nothing can match them"
                else:
                    scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
                    error = float(np.max(np.abs(a - b))) if b.size else 0.0
                    if error > tol * scale:  # coarse: the student's numbers never reach the note (round D below)
                        by = "up to 10 times" if error <= 10 * tol * scale else "more than 10 times"
                        problem = f"{key}: differs from the expected values by {by} the tolerance {tol:g}"
        verdicts[grade_id] = problem
    return verdicts


def probes_text(data: Mapping[str, Any]) -> str:
    """The text of ``labs/probes/<lab>.json`` (sorted keys, one trailing newline)."""
    return json.dumps(data, indent=1, sort_keys=True) + "\n"
