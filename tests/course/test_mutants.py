"""The mutation suite of the labs (labs/mutants): its catalogue is complete and every mutant builds.

Grading the mutants takes minutes: ``make test-mutants`` (part of ``make test``) grades the subset,
``make mutants`` all of them (labs/mutants/run.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "labs" / "mutants"))

import run  # noqa: E402
from catalogue import EXERCISES, MUTANTS  # noqa: E402

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
