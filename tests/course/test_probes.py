"""The verdict outside the student's process (txcourse/course/grading/probes.py): the probe
notebook, reading and comparing probe outputs. The end-to-end runs are the attack catalogue's
(labs/attacks, `make test-mutants` and `make mutants`) and tests/course/test_grading_sandbox.py."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")

from txcourse.course.grading.allowlist import load_allow, package_for_lab  # noqa: E402
from txcourse.course.grading.probes import (  # noqa: E402
    BIND_EMITTER,
    RESTORE,
    SNAPSHOT,
    compare,
    load_probes,
    probe_notebook,
    read_probe_outputs,
)

ROOT = Path(__file__).resolve().parents[2]


def _line(key, value, tol=1e-5):
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return f"@txprobe {key} {tol!r} {base64.b64encode(buffer.getvalue()).decode()}\n"


def _executed(texts):
    """A notebook whose cell i printed texts[i] (as an executed probe notebook would hold it)."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    cells = [new_code_cell("", outputs=[new_output("stream", name="stdout", text=t)]) for t in texts]
    return new_notebook(cells=cells)


def test_probe_notebook_replaces_tests_restores_locked_cells_and_adds_deleted_probes():
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    def meta(grade_id, **kw):
        return {"nbgrader": {"grade_id": grade_id, **kw}}

    master = new_notebook(
        cells=[
            new_code_cell("import numpy as np", metadata=meta("setup", locked=True)),
            new_code_cell("def f(): ...", metadata=meta("ex1", solution=True)),
            new_code_cell("assert f() == 1", metadata=meta("test_a", grade=True, locked=True, points=1)),
            new_code_cell("assert f() == 2", metadata=meta("test_b", grade=True, locked=True, points=1)),
        ]
    )
    student = new_notebook(
        cells=[
            new_code_cell("import os  # the student edited a locked cell", metadata=meta("setup", locked=True)),
            new_markdown_cell("my notes"),
            new_code_cell("def f(): return 1", metadata=meta("ex1", solution=True)),
            new_code_cell("x = 3  # a cell of their own"),
            new_code_cell("plot(f)  # a course cell the probes do not need"),
            new_code_cell("plot(f)  # a course cell the probes do not need, edited"),
            new_code_cell("pass  # emptied test", metadata=meta("test_a", grade=True, locked=True, points=1)),
        ]
    )  # test_b deleted
    probes = {"test_a": "probe_emit('a', f())", "test_b": "probe_emit('b', 2)"}
    skip = frozenset({"plot(f)  # a course cell the probes do not need"})
    nb, positions = probe_notebook(student, master, probes, 7, skip)
    sources = [c.source for c in nb.cells]
    assert sources[0] == "import numpy as np"  # the master's locked cell, not the student's edit
    assert sources[1:4] == [
        "def f(): return 1",
        "x = 3  # a cell of their own",
        "plot(f)  # a course cell the probes do not need, edited",  # not the skipped source: it runs
    ]
    assert sources[4] == SNAPSHOT  # the student's definitions, taken once
    # the emitter is bound in each probe cell, after the restore: no name of the student's replaces it (round E)
    assert sources[5] == f"{RESTORE}\n{BIND_EMITTER}PROBE_SEED = 7\nprobe_emit('a', f())" and positions["test_a"] == 5
    assert sources[6] == f"{RESTORE}\n{BIND_EMITTER}PROBE_SEED = 7\nprobe_emit('b', 2)" and positions["test_b"] == 6
    assert len(sources) == 7
    assert not any("pass  # emptied test" in s or "assert" in s for s in sources)
    assert all(c.cell_type == "code" for c in nb.cells)  # the markdown left out


def test_read_probe_outputs_per_cell_and_what_is_refused():
    nb = _executed(
        [
            _line("a", [1.0, 2.0]) + "noise\n" + _line("b", np.eye(2, dtype=bool)),
            "nothing here\n",
            _line("c", [1]) + _line("c", [2]),
            "@txprobe d 1e-5 bm90IGFuIGFycmF5\n",  # base64 of "not an array"
        ]
    )
    got = read_probe_outputs(nb, {"t1": 0, "t2": 1, "t3": 2, "t4": 3, "t5": 9})
    assert set(got["t1"]) == {"a", "b"} and got["t1"]["b"][1].dtype == bool
    assert "printed nothing" in got["t2"]
    assert "twice" in got["t3"]
    assert "not a plain array" in got["t4"]
    assert "did not run" in got["t5"]


def test_a_pickled_object_is_never_loaded():
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    line = f"@txprobe a 1e-05 {base64.b64encode(buffer.getvalue()).decode()}\n"
    assert "not a plain array" in read_probe_outputs(_executed([line]), {"t": 0})["t"]


def test_compare_by_tolerance_shape_kind_and_finiteness():
    reference = {"t": {"x": (1e-5, np.array([1.0, 200.0], np.float32)), "m": (0.0, np.array([True, False]))}}

    def student(x, m=np.array([True, False])):
        return {"t": {"x": (1e-5, np.asarray(x)), "m": (0.0, np.asarray(m))}}

    assert compare(student([1.0, 200.0]), reference) == {"t": ""}
    assert compare(student([1.0, 200.001]), reference) == {"t": ""}  # 1e-5 relative to the largest, 200
    assert "by more than 10 times the tolerance 1e-05" in compare(student([1.0, 200.1]), reference)["t"]
    assert "by up to 10 times the tolerance" in compare(student([1.0, 200.01]), reference)["t"]
    assert "shape" in compare(student([1.0, 200.0, 3.0]), reference)["t"]
    assert "not finite" in compare(student([np.nan, 200.0]), reference)["t"]
    for bad in (np.nan, np.inf):  # red team 2026-11-27: a non-finite reference made every difference NaN: all passed
        broken = {"t": {"x": (1e-5, np.array([1.0, bad], np.float32)), "m": reference["t"]["m"]}}
        assert "expected values are not finite" in compare(student([5.0, -7.0]), broken)["t"]
    assert "dtype" in compare(student([1.0, 200.0], np.array([1, 0])), reference)["t"]
    assert "differ" in compare(student([1.0, 200.0], np.array([False, False])), reference)["t"]
    assert "missing" in compare({"t": {"x": (1e-5, np.array([1.0, 200.0]))}}, reference)["t"]
    assert compare({"t": "the probe printed nothing"}, reference)["t"] == "the probe printed nothing"
    with pytest.raises(RuntimeError, match="reference run"):
        compare({}, {"t": "the probe printed nothing"})


def test_no_reason_echoes_what_the_students_code_chose():
    """A reason reaches the CSV note and the feedback banner: the student's shape (an empty array can have any
    shape, so any numbers), key, dtype (a structured one names its fields) and size must not show in it."""
    reference = {"t": {"out": (1e-5, np.zeros(3, np.float32))}}
    empty = np.zeros((0, 112, 101, 102, 33), np.float32)
    reason = compare(read_probe_outputs(_executed([_line("out", empty)]), {"t": 0}), reference)["t"]
    assert "shape" in reason and "(3,)" in reason
    for dim in ("112", "101", "102", "33"):
        assert dim not in reason, reason
    structured = np.zeros(2, dtype=[("secret_field_name", "f8")])
    texts = [
        _line("out", structured),
        _line("secret_key_name", [1.0]) + _line("secret_key_name", [2.0]),
        "@txprobe secret_key_two 1e-5 bm90IGFuIGFycmF5\n",
    ]
    got = read_probe_outputs(_executed(texts), {"a": 0, "b": 1, "c": 2})
    assert all(isinstance(got[g], str) for g in "abc"), got
    for grade_id in "abc":
        assert "secret" not in got[grade_id], got[grade_id]


def test_committed_probe_files_are_what_the_specs_make():
    """labs/probes/<lab>.json: one probe per test cell of each framework, an allow-list, no "redact"."""

    found = sorted((ROOT / "labs" / "probes").glob("*.json"))
    assert found, "no lab has probes"
    for path in found:
        probes = load_probes(ROOT / "labs", path.stem)
        for fw in ("torch", "tf"):
            nb = nbformat.read(ROOT / "labs" / "source" / path.stem / f"{path.stem}_{fw}.ipynb", as_version=4)
            tests = [
                c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
            ]
            assert sorted(probes.probes[fw]) == sorted(tests), path.stem
            assert all("probe_emit(" in source for source in probes.probes[fw].values())
        assert json.loads(path.read_text())["lab"] == path.stem
        assert "redact" not in json.loads(path.read_text()), path.stem  # the allow-list replaced it
        assert set(load_allow(ROOT / "labs", path.stem)) == {"torch", "tf"}, path.stem


def test_compare_quotes_no_number_the_students_code_picked():
    """Round D 2026-11-28: a graded function wrote the probe's seed (3 digits at a time) and source characters into
    its output, and the note quoted them as "largest difference 158": the note says only how far, coarsely."""
    reference = {"t": {"x": (1e-5, np.zeros(4, np.float32))}}
    for leak in (158.0, 729.0, 1.5e-4, 2.35e-3):
        note = compare({"t": {"x": (1e-5, np.array([0.0, leak, 0.0, 0.0], np.float32))}}, reference)["t"]
        assert note.startswith("x: differs") and not any(d in note for d in ("158", "729", "15", "235")), note


def _probe_run(lab, fw, student_path, seed, tmp_path):
    """The probe notebook of ``student_path`` run unconfined with the lab's allow-listed package and the
    forbidden prelude (as the reference is)."""
    import txcourse
    from txcourse.course.grading.verdict import execute_notebook, unconfined_kernel

    probes = load_probes(ROOT / "labs", lab)
    name = f"{lab}_{fw}"
    copy = tmp_path / "redacted" / "txcourse"
    if not copy.exists():
        package_for_lab(Path(txcourse.__file__).resolve().parent, ROOT / "labs", lab, tmp_path / "redacted")
    master = nbformat.read(ROOT / "labs" / "source" / lab / f"{name}.ipynb", as_version=4)
    student = nbformat.read(student_path, as_version=4)
    nb, positions = probe_notebook(student, master, probes.for_notebook(name), seed, probes.skipped(name), (lab, fw))
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="txp-", dir="/tmp"))  # short: the kernel's Unix socket paths
    try:
        execute_notebook(nb, unconfined_kernel(work / "jupyter", "txref", copy, work / "rt"), 300, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return read_probe_outputs(nb, positions)


@pytest.mark.skipif(os.environ.get("TXCOURSE_LAB_TESTS") != "1", reason="slow: run by `make test-labs`")
@pytest.mark.parametrize("fw", ["torch", "tf"])
@pytest.mark.parametrize("lab", sorted(p.stem for p in (ROOT / "labs" / "probes").glob("*.json")))
def test_every_probe_passes_the_solution_and_fails_the_blank_notebook(lab, fw, tmp_path):
    """Each lab's probes run after its solutions (the reference: every test prints its values) and after the
    unchanged student version, where every test's probe must fail: a probe that a blank notebook passes
    could not take a point away."""
    pytest.importorskip(fw if fw == "torch" else "tensorflow")
    seed = 20261126
    reference = _probe_run(lab, fw, ROOT / "labs" / "source" / lab / f"{lab}_{fw}.ipynb", seed, tmp_path)
    failed = {g: why for g, why in reference.items() if isinstance(why, str)}
    assert not failed, f"the reference run failed: {failed}"
    assert compare(reference, reference) == dict.fromkeys(reference, "")
    blank = _probe_run(lab, fw, ROOT / "labs" / "release" / lab / f"{lab}_{fw}.ipynb", seed, tmp_path)
    verdicts = compare(blank, reference)
    assert all(verdicts.values()), f"probes the blank notebook passes: {[g for g, w in verdicts.items() if not w]}"


def _meta(grade_id, **kw):
    return {"nbgrader": {"grade_id": grade_id, **kw}}


def _toy_master():
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    return new_notebook(
        cells=[
            new_markdown_cell("# title", id="cell-00"),
            new_code_cell("import numpy as np", id="setup", metadata=_meta("setup", locked=True)),
            new_code_cell("def f(): ...", id="ex1", metadata=_meta("ex1", solution=True)),
            new_code_cell("assert f() == 1", id="test_a", metadata=_meta("test_a", grade=True, locked=True, points=1)),
            new_code_cell("def g(): ...", id="ex2", metadata=_meta("ex2", solution=True)),
            new_code_cell("assert g() == 2", id="test_b", metadata=_meta("test_b", grade=True, locked=True, points=1)),
            new_code_cell("print(f(), g())", id="cell-06"),
        ]
    )


def test_cells_go_back_to_the_masters_order():
    import random

    from txcourse.course.grading.submissions import in_master_order

    master = _toy_master()
    honest = copy_notebook(master)
    assert not in_master_order(honest, master)  # in place: nothing moves
    assert [c.id for c in honest.cells] == [c.id for c in master.cells]
    rng = random.Random(0)
    for _ in range(20):  # any permutation comes back to the master's order
        shuffled = copy_notebook(master)
        rng.shuffle(shuffled.cells)
        in_master_order(shuffled, master)
        assert [c.id for c in shuffled.cells] == [c.id for c in master.cells]
    moved = copy_notebook(master)
    test_b = moved.cells.pop(5)
    moved.cells.insert(2, test_b)  # the second test moved up, right after the setup
    from nbformat.v4 import new_code_cell

    moved.cells.insert(5, new_code_cell("helper = 1  # the student's own cell, after their ex1", id="mine"))
    assert in_master_order(moved, master)
    assert [c.id for c in moved.cells] == ["cell-00", "setup", "ex1", "test_a", "mine", "ex2", "test_b", "cell-06"]


def copy_notebook(nb):
    import copy

    return copy.deepcopy(nb)


def test_each_probe_starts_from_the_students_definitions_only(capsys):
    """The probe notebook run cell by cell in one namespace (as a kernel runs it): a probe that puts its own
    function in a student's name, or defines a helper, leaves nothing for the next probe, and a test cell
    moved up changes nothing."""
    master = _toy_master()
    student = copy_notebook(master)
    # the student's own globals() and dict() do not fool the snapshot nor the restore
    student.cells[2].source = "def f(): return 1\n\nglobals = lambda: {}\ndict = lambda *a, **k: {}"
    student.cells[4].source = "def g(): return f() + 1"
    student.cells.insert(2, student.cells.pop(5))  # test_b moved right after the setup
    probes = {
        "test_a": "f = lambda: 2  # the grader's own piece, in the student's name\nhelper = 5\nprobe_emit('a', f())",
        "test_b": "probe_emit('b', g())\nprobe_emit('helper_left', 'helper' in (lambda: 0).__globals__)",
    }
    nb, positions = probe_notebook(student, master, probes, 3)
    namespace: dict = {}
    outputs = []
    for cell in nb.cells:
        exec(compile(cell.source, "<cell>", "exec"), namespace)  # noqa: S102 - the course's own cells
        outputs.append(capsys.readouterr().out)
    executed = _executed(outputs)
    got = read_probe_outputs(executed, positions)
    assert float(got["test_a"]["a"][1]) == 2.0  # the probe's own f, inside the probe
    assert float(got["test_b"]["b"][1]) == 2.0  # the student's g with the student's f, not the probe's
    assert not bool(got["test_b"]["helper_left"][1])
    assert list(positions) == ["test_a", "test_b"]  # the master's order, not the student's


def _week3_student(fw, written, move_multi_head, delete=()):
    """A week-3 notebook: the release version with the solutions of ``written`` (grade ids) filled in from the
    source and the cells of ``delete`` removed; ``move_multi_head``: Exercise 4's test cell moved up right
    after the setup (issue 30)."""
    lab = "week3_attention"
    source = nbformat.read(ROOT / "labs" / "source" / lab / f"{lab}_{fw}.ipynb", as_version=4)
    student = nbformat.read(ROOT / "labs" / "release" / lab / f"{lab}_{fw}.ipynb", as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells if "nbgrader" in c.metadata}
    for cell in student.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in written:
            lines = solutions[grade_id].splitlines()
            cell.source = "\n".join(
                line for line in lines if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line
            )
    student.cells = [c for c in student.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in delete]
    if move_multi_head:
        ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in student.cells]
        test = student.cells.pop(ids.index("test_multi_head_attention"))
        student.cells.insert(ids.index("setup") + 1, test)
    return student


@pytest.mark.timeout(900)
def test_week3_moved_cell_and_permutations_give_the_scores_in_place(tmp_path):
    """Issue 30: with Exercise 4's test cell moved up and exercises 1 and 3 not written, the probes passed every
    test (the multi-head probe left the grader's pieces in the student's names). Now the moved notebook gets
    the verdicts of the same notebook in place (only what it wrote), and a shuffled honest notebook passes all."""
    import random

    pytest.importorskip("torch")
    lab, fw, seed = "week3_attention", "torch", 20261127
    everything = ("scaled_dot_product_attention", "masks", "heads", "multi_head_attention")
    honest = _week3_student(fw, everything, False)
    shuffled = copy_notebook(honest)
    random.Random(1).shuffle(shuffled.cells)
    attack_ids = ("masks", "multi_head_attention")  # exercises 2 and 4 written, 1 and 3 not (deleted)
    unwritten = ("scaled_dot_product_attention", "heads")
    runs = {}
    for name, nb in (
        ("honest", honest),
        ("shuffled", shuffled),
        ("attack in place", _week3_student(fw, attack_ids, False, unwritten)),
        ("attack moved", _week3_student(fw, attack_ids, True, unwritten)),
    ):
        path = tmp_path / f"{name.replace(' ', '_')}.ipynb"
        nbformat.write(nb, path)
        runs[name] = _probe_run(lab, fw, path, seed, tmp_path)
    reference = _probe_run(lab, fw, ROOT / "labs" / "source" / lab / f"{lab}_{fw}.ipynb", seed, tmp_path)
    verdicts = {name: {g: bool(why) for g, why in compare(got, reference).items()} for name, got in runs.items()}
    assert not any(verdicts["honest"].values()), compare(runs["honest"], reference)
    assert verdicts["shuffled"] == verdicts["honest"]
    failed = sorted(g for g, bad in verdicts["attack moved"].items() if bad)
    assert verdicts["attack moved"] == verdicts["attack in place"], failed
    assert failed == [
        "test_attention_mask",
        "test_attention_matches_reference",
        "test_attention_notes_example",
        "test_heads",
    ]  # exercises 1 and 3, not written: their points lost; exercises 2 and 4 kept
