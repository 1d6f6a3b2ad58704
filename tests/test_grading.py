"""Grading with nbgrader (txcourse.grading): bad submissions cost their own points and nothing else.

The fast tests grade a tiny pure-Python lab built here with the course's real
``labs/nbgrader_config.py``: a correct submission, one with an endless loop in a
solution cell, one with a deleted test cell, one with wrong code and a cell that
raises, an unreadable file and a missing notebook. ``test_real_lab_submissions`` does the same with the
week 3 lab; it takes a few minutes, so it runs only with TXCOURSE_LAB_TESTS=1
(``make test-labs`` sets it).
"""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from txcourse import grading  # noqa: E402
from txcourse.checks import assert_close, assert_equal, normal, to_numpy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _cell(source: str, kind: str, grade_id: str, points: int = 0):
    cell = nbformat.v4.new_code_cell(source, id=grade_id)
    meta = {"grade": kind == "tests", "solution": kind == "solution", "locked": kind != "solution",
            "grade_id": grade_id, "schema_version": 3}
    if kind == "tests":
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def _toy_source():
    """A two-exercise notebook: f (2 points) and g (3 points), with a hidden test for f."""
    return nbformat.v4.new_notebook(cells=[
        _cell("import math", "readonly", "setup"),
        _cell("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "solution", "f"),
        _cell("assert f(2) == 4\n### BEGIN HIDDEN TESTS\nassert f(-3) == -6\n### END HIDDEN TESTS",
              "tests", "test_f", 2),
        _cell("def g(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION", "solution", "g"),
        _cell("assert g(1) == 2", "tests", "test_g", 3),
    ], metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})


@pytest.fixture(scope="module")
def toy_grades(tmp_path_factory):
    """Grade six fake submissions of the toy lab with a 5-second cell timeout; returns the CSV rows by student."""
    root = tmp_path_factory.mktemp("grading")
    labs = root / "labs"
    (labs / "source" / "toy").mkdir(parents=True)
    shutil.copy(LABS / "nbgrader_config.py", labs / "nbgrader_config.py")
    source = _toy_source()
    nbformat.write(source, labs / "source" / "toy" / "toy_torch.ipynb")

    subs = root / "submissions"

    def submit(student, nb=None, text=None, subfolder=False):
        folder = subs / student / ("toy" if subfolder else "")
        folder.mkdir(parents=True, exist_ok=True)
        if text is not None:
            (folder / "toy_torch.ipynb").write_text(text)
        elif nb is not None:
            nbformat.write(nb, folder / "toy_torch.ipynb")

    submit("alice", source, subfolder=True)  # correct (in the <student>/<lab>/ layout)
    looping = nbformat.from_dict(source)
    looping.cells[3].source = "while True:\n    pass\n\ndef g(x):\n    return x + 1"  # never gets to g
    submit("bob", looping)
    deleted = nbformat.from_dict(source)
    del deleted.cells[2]  # test_f deleted; the code is right
    submit("carol", deleted)
    broken = nbformat.from_dict(source)
    broken.cells[1].source = "def f(x):\n    return x"
    broken.cells[3].source = "1 / 0"  # raises: g is never defined
    submit("erin", broken)
    submit("frank", text="{ this is not a notebook")
    (subs / "grace").mkdir()  # nothing submitted

    out = root / "grades" / "toy.csv"
    rows = grading.grade_submissions(subs, "toy", out, timeout=5, labs_dir=labs, verbose=False)
    with open(out, newline="", encoding="utf-8") as f:
        assert list(csv.DictReader(f)) == [{k: str(v) for k, v in r.items()} for r in rows]
    return {r["student"]: r for r in rows}, out


@pytest.mark.timeout(900)
def test_correct_submission_gets_full_marks(toy_grades):
    rows, out = toy_grades
    assert (rows["alice"]["score"], rows["alice"]["max_score"], rows["alice"]["status"]) == (5.0, 5.0, "graded")
    assert rows["alice"]["failed_tests"] == ""
    feedback = out.parent / rows["alice"]["feedback"]
    assert feedback.is_file() and "test_f" in feedback.read_text()


def test_endless_loop_costs_only_its_tests(toy_grades):
    rows, _ = toy_grades
    assert (rows["bob"]["score"], rows["bob"]["status"], rows["bob"]["failed_tests"]) == (2.0, "graded", "test_g")


def test_deleted_test_cell_is_restored_and_run(toy_grades):
    rows, _ = toy_grades
    assert (rows["carol"]["score"], rows["carol"]["failed_tests"]) == (5.0, "")


def test_raising_cells_cost_only_their_tests(toy_grades):
    rows, _ = toy_grades
    assert (rows["erin"]["score"], rows["erin"]["failed_tests"]) == (0.0, "test_f;test_g")


def test_unreadable_and_missing_notebooks_get_zero(toy_grades):
    rows, _ = toy_grades
    assert rows["frank"]["status"].startswith("unreadable") and rows["frank"]["score"] == 0
    assert rows["grace"]["status"] == "missing" and rows["grace"]["score"] == 0
    assert rows["grace"]["max_score"] == 5.0


def test_grade_rejects_a_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        grading.grade_submissions(tmp_path / "nope", "week3_attention", tmp_path / "out.csv", labs_dir=LABS)


def test_normalise_notebook_drops_outputs_and_is_idempotent():
    nb = _toy_source()
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi\n")]
    nb.cells[1].execution_count = 3
    nb.cells[1].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    nb.metadata["papermill"] = {"duration": 1.0}
    once = grading.normalise_notebook(nbformat.writes(nb))
    assert grading.normalise_notebook(once) == once
    clean = nbformat.reads(once, as_version=4)
    assert clean.cells[1].outputs == [] and clean.cells[1].execution_count is None
    assert set(clean.cells[1].metadata) == {"nbgrader"} and "papermill" not in clean.metadata


def test_committed_labs_are_complete():
    """Every lab has a source and a student version per framework, with the same graded cells and points."""
    for lab in grading.LABS:
        for fw in grading.FRAMEWORKS:
            name = grading.notebook_name(lab, fw)
            source = nbformat.read(LABS / "source" / lab / f"{name}.ipynb", as_version=4)
            student = nbformat.read(LABS / "release" / lab / f"{name}.ipynb", as_version=4)

            def graded(nb):
                return [(c.metadata["nbgrader"]["grade_id"], c.metadata["nbgrader"].get("points"))
                        for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]

            assert graded(source) and graded(source) == graded(student), name
            text = nbformat.writes(student)
            assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, name
            assert all(not c.get("outputs") for c in source.cells if c.cell_type == "code"), name
            if lab in grading.TRAINING_LABS:
                tagged = [c for c in source.cells if "parameters" in c.metadata.get("tags", [])]
                assert len(tagged) == 1 and "SMOKE = True" in tagged[0].source, name


def test_checks_helpers():
    assert_close(normal(3, seed=0), normal(3, seed=0), 0.0, "same seed")
    with pytest.raises(AssertionError, match="largest difference"):
        assert_close([1.0, float("nan")], [1.0, 2.0], 1e-3, "nan")
    with pytest.raises(AssertionError, match="shape"):
        assert_equal([[1, 2]], [1, 2], "ids")
    assert to_numpy([1, 2]).tolist() == [1, 2]


@pytest.mark.skipif(os.environ.get("TXCOURSE_LAB_TESTS") != "1", reason="slow: run by `make test-labs`")
@pytest.mark.timeout(1200)
def test_real_lab_submissions(tmp_path):
    """Week 3 (PyTorch): a correct submission, an endless loop in a solution cell, a deleted test cell."""
    lab, name = "week3_attention", "week3_attention_torch"
    source = nbformat.read(LABS / "source" / lab / f"{name}.ipynb", as_version=4)
    ids = [c.get("id") for c in source.cells]
    subs = tmp_path / "submissions"
    for student in ("correct", "looping", "deleted"):
        (subs / student).mkdir(parents=True)
    nbformat.write(source, subs / "correct" / f"{name}.ipynb")
    looping = nbformat.from_dict(source)
    looping.cells[ids.index("heads")].source = "while True:\n    pass\n\n" + looping.cells[ids.index("heads")].source
    nbformat.write(looping, subs / "looping" / f"{name}.ipynb")
    deleted = nbformat.from_dict(source)
    del deleted.cells[ids.index("test_masks")]
    nbformat.write(deleted, subs / "deleted" / f"{name}.ipynb")

    rows = grading.grade_submissions(subs, lab, tmp_path / "grades.csv", timeout=30, labs_dir=LABS)
    got = {(r["student"], r["framework"]): r for r in rows}
    assert got["correct", "torch"]["score"] == got["correct", "torch"]["max_score"] == 17.0
    # the loop is interrupted: split_heads/merge_heads never exist, so their test and the multi-head test fail
    assert got["looping", "torch"]["score"] == 12.0
    assert got["looping", "torch"]["failed_tests"] == "test_heads;test_multi_head_attention"
    # the deleted test cell is restored from the gradebook and run
    assert got["deleted", "torch"]["score"] == 17.0
    assert all(got[s, "tf"]["status"] == "missing" for s in ("correct", "looping", "deleted"))
