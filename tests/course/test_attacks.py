"""The attack catalogue of the labs (labs/attacks): every attack builds, and the runner judges outcomes right.

Grading the attacks takes minutes: ``make test-mutants`` (part of ``make test``) grades the subset,
``make mutants`` all of them (labs/attacks/run.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "labs" / "attacks"))
_spec = importlib.util.spec_from_file_location("attacks_run", ROOT / "labs" / "attacks" / "run.py")
attacks_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(attacks_run)

from attack_catalogue import ATTACKS, LABS, UNPROBED, Attack  # noqa: E402

from txcourse.registry import FRAMEWORKS  # noqa: E402


def test_names_unique_and_expectations_known():
    names = [a.name for a in ATTACKS]
    assert len(names) == len(set(names))
    assert {a.expect for a in ATTACKS} <= {"zero", "error", "refused", "hole"}
    # the labs with probes (the verdict outside the student's process) have no known hole left
    probed = {p.stem for p in (Path(__file__).resolve().parents[2] / "labs" / "probes").glob("*.json")}
    assert "week2_positional" in probed
    assert set(UNPROBED) == set(LABS) - probed, "UNPROBED must name exactly the labs without labs/probes/<lab>.json"
    assert not [(a.name, lab) for a in ATTACKS for lab in a.labs if lab in probed and a.expected(lab) == "hole"]
    # make test grades (week 2, torch) attacks on nbgrader's own verdict, which score 0 only through the probes
    subset = {a.name: a.expected("week2_positional") for a in ATTACKS if a.subset}
    assert subset.get("blank_later_cells") == "zero" and subset.get("reference_in_a_thread") == "zero", subset


@pytest.mark.parametrize("attack", [a for a in ATTACKS if not a.layout], ids=lambda a: a.name)
def test_every_attack_builds_on_the_blank_notebook(attack, tmp_path):
    for lab in attack.labs:
        for fw in FRAMEWORKS:
            nb = attacks_run.attack_notebook(attack, lab, fw)
            text = "\n".join(c.source for c in nb.cells)
            assert "### BEGIN SOLUTION" not in text and 'raise NotImplementedError("write your code here")' in text
            if attack.code:
                assert attack.code in text
            attacks_run.place(attack, lab, fw, tmp_path / f"{lab}-{fw}-{attack.name}")


def test_link_layout_is_a_link(tmp_path):
    attack = next(a for a in ATTACKS if a.layout == "link-to-solution")
    attacks_run.place(attack, "week2_positional", "torch", tmp_path)
    assert (tmp_path / "week2_positional_torch.ipynb").is_symlink()


def test_outcome_judges_each_expectation():
    row = lambda status, score: {"status": status, "score": score, "max_score": 9.0}  # noqa: E731
    zero, hole = Attack("z", "", "zero"), Attack("h", "", "hole")
    lab = "week2_positional"
    assert attacks_run.outcome(zero, row("graded", 0.0), lab)[0]
    assert not attacks_run.outcome(zero, row("graded", 2.0), lab)[0]
    assert not attacks_run.outcome(zero, row("error: kernel died", 0.0), lab)[0]
    assert attacks_run.outcome(Attack("e", "", "error"), row("error: kernel died", 0.0), lab)[0]
    assert attacks_run.outcome(Attack("r", "", "refused"), row("refused: a link", 0.0), lab)[0]
    assert attacks_run.outcome(hole, row("graded", 9.0), lab)[0]
    ok, said = attacks_run.outcome(hole, row("graded", 0.0), lab)
    assert not ok and "move to zero" in said  # a fixed hole fails the run until the catalogue says so
    open_in_3 = Attack("o", "", "zero", open_in=("week3_attention",))
    assert attacks_run.outcome(open_in_3, row("graded", 9.0), "week3_attention")[0]  # still a hole there
    assert not attacks_run.outcome(open_in_3, row("graded", 9.0), lab)[0]  # scoring in week 2 fails the run


def test_digest_sees_a_changed_file_and_a_new_link(tmp_path):
    (tmp_path / "a").write_text("one")
    before = attacks_run.digest(tmp_path)
    (tmp_path / "a").write_text("two")
    (tmp_path / "b").symlink_to("/etc/passwd")
    after = attacks_run.digest(tmp_path)
    assert before[str(tmp_path / "a")] != after[str(tmp_path / "a")]
    assert after[str(tmp_path / "b")] == "link /etc/passwd"


def test_bloated_layout_is_under_the_submission_limit_and_would_outgrow_the_graded_cap(tmp_path):
    """The bloated notebook is under MAX_NOTEBOOK_BYTES and its source and the output the grader keeps
    (4 cells of 8 M characters, up to its notebook cap) are more than GRADED_CAP: nbgrader's feedback step
    and the grader must not load it. Since round C the source caps refuse it at intake, before any of that
    (tests/course/test_grading_caps.py lifts them to test GRADED_CAP behind them)."""
    from txcourse.course.grading import execute, nbgrader_run, submissions

    attack = next(a for a in ATTACKS if a.layout == "bloated")
    assert attack.expect == "refused"
    attacks_run.place(attack, "week2_positional", "torch", tmp_path)
    path = tmp_path / "week2_positional_torch.ipynb"
    size = path.stat().st_size
    assert 40 << 20 < size < submissions.MAX_NOTEBOOK_BYTES, size
    printing = [c for c in nbformat.read(path, as_version=4).cells if "print('x' * (8 << 20))" in c.source]
    assert len(printing) == 4
    kept = execute.RestartingExecute().notebook_output_cap
    assert size + kept > nbgrader_run.GRADED_CAP, (size, kept)
    source = sum(len(c.source.encode()) for c in nbformat.read(path, as_version=4).cells)
    assert source > submissions.MAX_NOTEBOOK_SOURCE, source


@pytest.mark.parametrize(
    "name",
    [
        "result_150mb",
        "session_send_flood",
        "original_stdout_flood",
        "fallocate_runtime",
        "forged_probe_lines",
        "cpu_hog",
    ],
)
def test_host_attacks_are_listed_with_their_outcome(name):
    attack = next(a for a in ATTACKS if a.name == name)
    assert attack.expect == "zero" and attack.cell and set(attack.labs) == set(LABS)
