"""The mutation suite of the labs (labs/mutants): its catalogue is complete and every mutant builds.

Grading the mutants takes minutes: ``make test-mutants`` (part of ``make test``) grades the subset,
``make mutants`` all of them (labs/mutants/run.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "labs" / "mutants"))

from catalogue import EXERCISES, MUTANTS  # noqa: E402
from support.scripts import load_script  # noqa: E402

# labs/mutants/run.py by its path: labs/attacks/run.py is a `run` too (tests/course/test_attacks.py puts its folder
# first on sys.path), and a worker may import either first
run = load_script(ROOT / "labs" / "mutants" / "run.py", "mutants_run")

from txcourse.course.labs import TRAINING_LABS  # noqa: E402
from txcourse.registry import FRAMEWORKS  # noqa: E402


def test_every_exercise_has_several_wrong_answers_in_each_framework():
    for lab, exercises in EXERCISES.items():
        for exercise in exercises:
            for fw in FRAMEWORKS:
                wrong = [
                    m
                    for m in MUTANTS
                    if m.lab == lab and m.exercise == exercise and m.kind == "wrong" and fw in m.frameworks()
                ]
                assert len(wrong) >= 3, f"{lab} {exercise} ({fw}): {len(wrong)} wrong answers"


def test_every_exercise_is_in_the_subset_and_names_are_unique():
    names = [(m.lab, run.student_id(m)) for m in MUTANTS]
    assert len(names) == len(set(names))
    for lab, exercises in EXERCISES.items():
        if lab in TRAINING_LABS:  # they train models: `make mutants` only
            continue
        for exercise in exercises:
            assert any(m.subset for m in MUTANTS if m.lab == lab and m.exercise == exercise), (lab, exercise)
        assert any(m.kind == "correct" and m.subset for m in MUTANTS if m.lab == lab) or lab in (
            "week4_encoder",
            "week5_decoder",
        ), lab


def test_every_mutant_changes_its_solution_cell_and_compiles():
    for m in MUTANTS:
        for fw in m.frameworks():
            source = nbformat.read(ROOT / "labs" / "source" / m.lab / f"{m.lab}_{fw}.ipynb", as_version=4)
            before = next(c.source for c in source.cells if c.get("id") == m.cell)
            after = next(c.source for c in run.mutant_notebook(m, fw).cells if c.get("id") == m.cell)
            assert after != before, (m.name, fw)
            compile(after, f"{m.lab}/{m.name} ({fw})", "exec")


def test_apply_edits_indents_and_refuses_a_stale_edit():
    assert (
        run.apply_edits("def f():\n    return 1", [("return 1", "x = 1\nreturn x")], "f")
        == "def f():\n    x = 1\n    return x"
    )
    with pytest.raises(ValueError, match="not in the solution cell"):
        run.apply_edits("return 1", [("return 2", "return 3")], "f")


# --------------------------------------------------------------------------------------------------
# The stub mutants (labs/mutants/stubs.py) and the measurement of the probes' power (probe_power.py)

import stubs  # noqa: E402


@pytest.fixture(scope="module")
def every_stub():
    return stubs.stub_mutants(stubs.solution_sources(ROOT / "labs"))


def test_every_exercise_has_its_stubs_in_both_frameworks(every_stub):
    """zeros, random and constant everywhere; its input wherever the exercise is a function or a layer;
    txcourse's version where txcourse has one; a forbidden built-in where the lab forbids one."""
    no_txcourse = {("week5_decoder", "ex2 decoder mask"), ("week5_decoder", "ex3 future_leak")}
    for lab, exercises in EXERCISES.items():
        for exercise in exercises:
            kinds = {m.name.removeprefix("stub_") for m in every_stub if (m.lab, m.exercise) == (lab, exercise)}
            kinds -= set(stubs.EXTRA.get((lab, exercise), {}))
            expected = {"zeros", "random", "constant"}
            expected |= {"input"} if exercise != "ex2 worked table" else set()
            expected |= {"txcourse"} if (lab, exercise) not in no_txcourse else set()
            expected |= {"forbidden"} if lab in stubs.FORBIDDEN_KIND and exercise != "ex2 worked table" else set()
            assert kinds == expected, (lab, exercise, kinds)
            for m in every_stub:
                if (m.lab, m.exercise) == (lab, exercise):
                    assert set(m.frameworks()) == set(FRAMEWORKS), (lab, m.name)


def test_every_stub_builds_and_compiles(every_stub):
    for m in every_stub:
        for fw in m.frameworks():
            after = next(c.source for c in run.mutant_notebook(m, fw).cells if c.get("id") == m.cell)
            compile(after, f"{m.lab}/{m.name} ({fw})", "exec")
    assert len({(m.lab, run.student_id(m)) for m in every_stub}) == len(every_stub)


def test_an_empty_edit_appends():
    assert run.apply_edits("x = 1", [("", "\ny = 2")], "f") == "x = 1\ny = 2"


def test_the_stub_helper_keeps_shapes_and_changes_values():
    """_txstub on NumPy values (the helper of every stub): the shape and dtype of the solution's result,
    other values; "input" returns the first array argument."""
    import numpy as np

    space = {"tensor": np.asarray, "to_numpy": np.asarray}
    exec(stubs.HELPER, space)
    stub = space["_txstub"]
    result = (np.full((2, 3), 0.5, dtype=np.float32), np.array([True, False]), 3.5)
    for kind, check in (
        ("zeros", lambda a: not a.any()),
        ("constant", lambda a: (a == 1).all()),
        ("random", lambda a: not np.array_equal(a, np.full((2, 3), 0.5))),
    ):
        out = stub(result, (), kind)
        assert out[0].shape == (2, 3) and out[0].dtype == np.float32 and check(out[0]), kind
        assert out[1].dtype == bool and out[1].shape == (2,)
    x = np.ones(4)
    assert stub(result, (None, x), "input") is x


@pytest.mark.skipif(os.environ.get("TXCOURSE_LAB_TESTS") != "1", reason="slow: run by `make test-mutants`")
@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_the_stubs_of_week_4_keep_no_point(fw):
    """The measurement itself on one lab (make test-mutants runs weeks 3 and 4, make mutants all): every stub
    keeps 0 points, the unchanged solution all."""
    pytest.importorskip(fw if fw == "torch" else "tensorflow")
    import shutil
    import tempfile

    import probe_power

    chosen = [m for m in stubs.stub_mutants(stubs.solution_sources(ROOT / "labs")) if m.lab == "week4_encoder"]
    work = Path(tempfile.mkdtemp(prefix="txpow-", dir="/tmp"))
    try:
        rows = probe_power.measure("week4_encoder", fw, chosen + probe_power.controls("week4_encoder"), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert [r["stub"] for r in rows if r["kind"] == "stub" and r["kept"] > 0] == []
    assert all(r["kept"] == r["points"] == 10 for r in rows if r["kind"] == "correct")
