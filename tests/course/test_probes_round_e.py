"""Red team round E 2026-11-28 (attacker E2) against the probe machinery (txcourse/course/grading/probes.py):
the emitter out of the student's reach, plain values only, yes/no decided by the grader, .npy headers checked
before anything is allocated, and the worked table's cell run alone. The probe notebooks here are run by exec
in one namespace (as one kernel would run their cells), without Jupyter."""

from __future__ import annotations

import base64
import contextlib
import io

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")

from txcourse.course.grading.forbidden import forbidden_findings, probe_name_findings  # noqa: E402
from txcourse.course.grading.probes import compare, probe_notebook, read_probe_outputs  # noqa: E402
from txcourse.course.grading.sanitize import probe_lines  # noqa: E402


def _meta(grade_id, **kw):
    return {"nbgrader": {"grade_id": grade_id, **kw}}


def _master(probe, exercise="def f():\n    return 1.0", worked="table = 2.0"):
    from nbformat.v4 import new_code_cell, new_notebook

    return new_notebook(
        cells=[
            new_code_cell("import numpy as np", metadata=_meta("setup", locked=True)),
            new_code_cell(exercise, metadata=_meta("ex1", solution=True)),
            new_code_cell(worked, metadata=_meta("worked", solution=True)),
            new_code_cell("assert True", metadata=_meta("test_a", grade=True, locked=True, points=1)),
        ]
    )


def _student(exercise, worked="table = 2.0", extra=()):
    from nbformat.v4 import new_code_cell, new_notebook

    cells = [
        new_code_cell("import numpy as np", metadata=_meta("setup", locked=True)),
        new_code_cell(exercise, metadata=_meta("ex1", solution=True)),
        *(new_code_cell(source) for source in extra),
        new_code_cell(worked, metadata=_meta("worked", solution=True)),
    ]
    return new_notebook(cells=cells)


def _run(nb, positions):
    """Execute the cells of ``nb`` in one namespace; each probe cell's stdout (an error ends that cell only)."""
    from nbformat.v4 import new_output

    namespace: dict = {}
    for index, cell in enumerate(nb.cells):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(cell.source, f"<cell {index}>", "exec"), namespace)
            except Exception as error:  # noqa: BLE001 -- a kernel reports it and goes on
                print(f"error {type(error).__name__}")
        if index in positions.values():
            cell.outputs = [new_output("stream", name="stdout", text=out.getvalue())]
    return read_probe_outputs(nb, positions)


def _grade(student, probe, reference_exercise="def f():\n    return 1.0", **kw):
    master = _master(probe, reference_exercise)
    reference = _run(*probe_notebook(master, master, {"test_a": probe}, 7, **kw))
    return compare(_run(*probe_notebook(student, master, {"test_a": probe}, 7, **kw)), reference)["test_a"]


def test_a_students_probe_emit_does_not_replace_the_graders():
    """E2: ``def probe_emit`` in the student's cells printed the expected value for every probe."""
    liar = "def f():\n    return 0.0\n\ndef probe_emit(key, value, tol=1e-5):\n    print('@txprobe', key, '1e-05', 'x')"
    assert "differs" in _grade(_student(liar), "probe_emit('f', f(), 1e-6)")
    honest = "def f():\n    return 1.0"
    assert _grade(_student(honest), "probe_emit('f', f(), 1e-6)") == ""


@pytest.mark.parametrize(
    "lie",
    [
        "class V(float):\n    def __float__(self): return 1.0\n    def __array__(self, *a, **k): return np.array(1.0)",
        "class V(np.ndarray):\n    def __array__(self, *a, **k): return np.array(1.0)\n"
        "    def __float__(self): return 1.0\n"
        "V_ = V\nV = lambda x: np.asarray(x).view(V_)",
        "class V(int):\n    def __int__(self): return 1\n    def __index__(self): return 1",
    ],
)
def test_a_subclass_is_emitted_by_its_underlying_value(lie):
    """E2: a ``class Leak(float)`` chose what it converts to; the emitter reads the base class's value."""
    student = _student(f"{lie}\n\ndef f():\n    return V(0)")
    assert "differs" in _grade(student, "probe_emit('f', f(), 1e-6)")


def test_a_yes_no_is_decided_by_the_grader_from_the_numbers():
    """E2: ``leak > 1e-3`` on the student's float subclass was True whatever its value: the probe now emits the
    number with a rule, and the grader applies the rule to both runs."""
    liar = (
        "class Leak(float):\n    __gt__ = __ge__ = __lt__ = __le__ = __eq__ = lambda s, o: True\n\n"
        "def f():\n    return Leak(0.0)"
    )
    probe = "probe_emit('leak found', [f(), f()], '>1e-3')"
    assert "2 of 2 values on the wrong side of > 0.001" in _grade(_student(liar), probe)
    assert _grade(_student("def f():\n    return 0.5"), probe) == ""  # not the reference's 1.0: same side


def test_compare_by_rule():
    reference = {"t": {"x": ((">", 1e-3), np.array([0.5, 0.0]))}}
    assert compare({"t": {"x": (1e-5, np.array([0.01, 0.0]))}}, reference) == {"t": ""}
    assert "1 of 2 values on the wrong side" in compare({"t": {"x": (0.0, np.array([0.0, 0.0]))}}, reference)["t"]
    assert "not finite" in compare({"t": {"x": (0.0, np.array([np.nan, 0.0]))}}, reference)["t"]
    # the student's line never picks the rule: the reference's applies
    assert "wrong side" in compare({"t": {"x": (("<", 1.0), np.array([0.0, 0.0]))}}, reference)["t"]


def test_probe_lines_reads_rules_and_refuses_other_text():
    found, why = probe_lines("@txprobe k >=1e-05 AAAA\n@txprobe j !=0.0 AAAA\n@txprobe i 0.001 AAAA")
    assert why == "" and [t for _, t, _ in found] == [(">=", 1e-5), ("!=", 0.0), 0.001]
    for bad in (">>1", "=1", ">nan", ">inf", "gt1", ">1e999"):
        assert "not a number nor a rule" in probe_lines(f"@txprobe k {bad} AAAA")[1], bad


def _npy(descr, shape, data=b"\0" * 64):
    text = repr({"descr": descr, "fortran_order": False, "shape": shape})
    text = text + " " * (63 - (10 + len(text)) % 64) + "\n"
    raw = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1") + data
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("descr", "shape", "why"),
    [
        ("<f8", (1 << 40,), "more than"),  # E2: 8 TiB asked of the grader's process
        ("<f8", (1 << 62, 4), "more than"),
        ("<f4", (1 << 21,), "does not match its data"),  # under the cap, but 8 MiB claimed for 64 bytes
        ("|V2000000000", (6,), "not an array of numbers"),
        ("<f8", (-1,), "not a plain array"),
        ("<f8", (9,), "does not match its data"),  # 72 bytes claimed, 64 sent
    ],
)
def test_an_npy_header_is_checked_before_anything_is_allocated(descr, shape, why):
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    text = f"@txprobe a 1e-05 {_npy(descr, shape)}\n"
    nb = new_notebook(cells=[new_code_cell("", outputs=[new_output("stream", name="stdout", text=text)])])
    got = read_probe_outputs(nb, {"t": 0})["t"]
    assert isinstance(got, str) and why in got
    assert isinstance(read_probe_outputs(_one(_npy("<f8", (8,))), {"t": 0})["t"], dict)  # an honest header loads


def _one(data):
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    text = f"@txprobe a 1e-05 {data}\n"
    return new_notebook(cells=[new_code_cell("", outputs=[new_output("stream", name="stdout", text=text)])])


@pytest.mark.parametrize(
    "source",
    [
        "def probe_emit(key, value, tol=1e-5):\n    pass",
        "probe_emit = print",
        "from math import pi as probe_emit",
        "class probe_emit:\n    pass",
        "__txprobe_names__ = {}",
        "x = __txprobe_setup__",
        "def f(probe_emit=None):\n    pass",
        "PROBE_SEED = 3",
    ],
)
def test_the_source_check_refuses_the_probe_machinerys_names(source):
    assert probe_name_findings(source)
    # in a submission: the exercise's tests score 0, with the reason
    student = _student("def f():\n    return 1.0", f"table = 2.0\n{source}")
    found = forbidden_findings(student, "week2_positional", "torch", _master("probe_emit('f', f())"))
    assert "a name of the grader's probes" in found["test_a"]


def test_an_honest_cell_names_none_of_the_probe_machinery():
    assert probe_name_findings("def probe(x):\n    emit = x\n    return emit") == []
    assert forbidden_findings(_student("def f():\n    return 1.0"), "week2_positional", "torch", _master("")) == {}


ALONE = {"test_a": "worked"}
WORKED_PROBE = "probe_emit('table', np.asarray(table, dtype=np.float64), 1e-6)"


@pytest.mark.parametrize(
    ("exercise", "worked"),
    [
        ("def f():\n    return 2.0\n_t = f", "table = _t()"),  # E2's alias made in another cell
        ("def f():\n    return 2.0\n_t = lambda: f()", "table = _t()"),
        ("import functools\ndef f(x=1):\n    return 2.0 * x\n_t = functools.partial(f, 1)", "table = _t()"),
        ("def f():\n    return 2.0\n_d = {'go': f}", "table = _d['go']()"),
        ("def f():\n    return 2.0\n_v = f()", "table = _v"),  # a value computed in another cell
    ],
)
def test_the_worked_cell_runs_alone(exercise, worked):
    """Round E (E2): the worked table's cell may not use the exercise's function under any name; its probe runs
    the cell alone in the setup's names, so nothing of another cell reaches it."""
    student = _student(exercise, worked)
    assert "printed nothing" in _grade(student, WORKED_PROBE, alone=ALONE)
    assert _grade(student, WORKED_PROBE, alone={}) == ""  # without running it alone, each one passed


def test_an_honest_worked_cell_alone_keeps_its_marks():
    student = _student("def f():\n    return 2.0", "import math\ntable = 2.0 * math.cos(0.0)")
    assert _grade(student, WORKED_PROBE, alone=ALONE) == ""
    student = _student("def f():\n    return 2.0", "table = 3.0")
    assert "differs" in _grade(student, WORKED_PROBE, alone=ALONE)


def test_the_emitter_looks_up_no_name_of_the_students():
    """A student's global ``print`` (or ``float``, ``np``) is not the emitter's: it runs in a dictionary of its own."""
    one = base64.b64encode(_npy_bytes(np.array(1.0))).decode()
    liar = (
        "import builtins as _b\n\ndef f():\n    return 0.0\n\n"
        f"def print(*args, **kwargs):\n    _b.print('@txprobe f 1e-06 {one}')\n"
    )
    assert "differs" in _grade(_student(liar), "probe_emit('f', f(), 1e-6)")


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "source",
    [
        "np = object()",  # the probes compute with the setup's np
        "import math as np",
        "np.abs = lambda x: 1.0",
        "del np.abs",
        "setattr(np, 'abs', len)",
        "np.linalg.norm = len",
        "def print(*args):\n    pass",
        "float = int",
        "for max in range(3):\n    pass",
        "def f():\n    global abs\n    abs = len",
    ],
)
def test_the_source_check_refuses_rebinding_what_the_probes_compute_with(source):
    student = _student("def f():\n    return 1.0", f"table = 2.0\n{source}")
    found = forbidden_findings(student, "week2_positional", "torch", _master(""))
    assert "rebinds" in found.get("test_a", "") or "sets an attribute of" in found.get("test_a", ""), found


def test_own_objects_and_local_names_are_not_rebinding():
    source = (
        "class Layer:\n    def __init__(self):\n        self.abs = 1\n\n"
        "def f(max=3):\n    sum = max + 1\n    layer = Layer()\n    layer.np = 2\n    return float(sum)\n\n"
        "table = 2.0\nlayer = Layer()\nlayer.weights = [1.0]\n"
    )
    assert (
        forbidden_findings(_student("def f():\n    return 1.0", source), "week2_positional", "torch", _master("")) == {}
    )
