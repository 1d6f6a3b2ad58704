"""Nothing the grader runs unconfined acts on what a student leaves behind or submits (issue 21, items 1, 7, 8, 10).

Week-2 submissions graded exactly as students are (:func:`grading.grade_submissions`, two at a time,
in the sandbox), each attack beside a correct and a blank submission:

- ``planter`` (torch and tf): the blank notebook with a first cell that plants, in the kernel's working
  folder and where nbgrader's folders used to be (``../../../``), symbolic links named like the graded
  notebook, the gradebook and the feedback file, pointing at host files: a 0600 secret, an executable
  script, the course's source notebook and the run's master gradebook. Before issue 21 the kernel's
  working folder was the one nbgrader writes the graded notebook into: the secret was overwritten
  with notebook JSON and made 0444;
- a notebook that is a symbolic link to the course's solution notebook, a student folder that is a
  symbolic link to ``labs/source/<lab>``, a ``<lab>/`` subfolder that is one, a link to a 0600 file
  (standing for a root-only one: its contents and its path never reach the CSV or the console), a hard
  link to the solution, a FIFO named like the notebook, a notebook over 50 MB: refused, with the reason;
- honest mistakes: a test cell pasted twice (full marks, a note), a hidden student folder (``.eve``:
  a refused row, not silently skipped), the same notebook at the top and in ``<lab>/`` (graded once,
  with a note) and two different ones (refused, saying which).

Checksums and modes of the host files the attacks target are taken before and after. About a minute
of CPU (seven notebooks run); the sandbox tests run under `make test` (TXCOURSE_SANDBOX_TESTS=1).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import uuid
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from test_grading import ROOT, need_sandbox  # noqa: E402

from txcourse.course import grading  # noqa: E402
from txcourse.course.grading import submissions  # noqa: E402

LAB = "week2_positional"
TORCH, TF = f"{LAB}_torch", f"{LAB}_tf"

PLANTER = r"""
import os
TARGETS = {targets!r}
# where the graded notebook, the gradebook and the feedback are written, relative to the kernel's folder
# (the kernel's folder was <workspace>/autograded/<student>/<lab> before issue 21)
for name, target in TARGETS.items():
    for where in ("", "../../../", "../../../feedback/{student}/{lab}/"):
        try:
            if os.path.lexists(where + name):
                os.remove(where + name)
            os.symlink(target, where + name)
            print("planted", where + name)
        except OSError as error:
            print("cannot plant", where + name, type(error).__name__)
try:
    os.link(TARGETS["{notebook}.ipynb"], "hard.ipynb")
except OSError as error:
    print("cannot link", type(error).__name__)
"""


def _snapshot(paths):
    """Path -> (mode, SHA-256 or link target) of each path and, for a folder, everything under it;
    nothing is followed or opened but regular files."""
    out = {}
    for top in paths:
        walk = [(str(top), [], [])]
        if os.path.isdir(top) and not os.path.islink(top):
            walk = [(d, [], [os.path.join(d, n) for n in dirs + files]) for d, dirs, files in os.walk(top)]
        for folder, _, entries in walk:
            for path in [folder, *entries]:
                info = os.lstat(path)
                if stat.S_ISREG(info.st_mode):
                    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                elif stat.S_ISLNK(info.st_mode):
                    digest = "-> " + os.readlink(path)
                else:
                    digest = ""
                out[path] = (stat.filemode(info.st_mode), digest)
    return out


def _nb(fw, kind="source"):
    return nbformat.read(ROOT / "labs" / kind / LAB / f"{LAB}_{fw}.ipynb", as_version=4)


def _planter(fw, targets):
    nb = _nb(fw, "release")  # blank: every point it earned would have come from the attack
    code = PLANTER.format(targets=targets, student="planter", lab=LAB, notebook=f"{LAB}_{fw}")
    nb.cells.insert(1, nbformat.v4.new_code_cell(code))
    return nb


def _pasted_test_cell():
    nb = _nb("torch")
    i = next(i for i, c in enumerate(nb.cells) if c.get("id") == "test_shared_frequency")
    copy = nbformat.from_dict(nb.cells[i])
    copy["id"] = "pasted-copy"
    nb.cells.insert(i + 1, copy)
    return nb


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    need_sandbox()
    root = tmp_path_factory.mktemp("ws21")
    labs = root / "labs"
    (labs / "source").mkdir(parents=True)
    shutil.copy(ROOT / "labs" / "nbgrader_config.py", labs / "nbgrader_config.py")
    shutil.copytree(ROOT / "labs" / "source" / LAB, labs / "source" / LAB)
    solution = labs / "source" / LAB / f"{TORCH}.ipynb"
    host = root / "host"  # files of the grader's machine, outside the submissions
    host.mkdir()
    token = "HOST-SECRET-" + uuid.uuid4().hex
    secret, script, private = host / "secret.txt", host / "script.sh", host / "private.txt"
    secret.write_text(token + "\n")
    secret.chmod(0o600)
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    private.write_text(token + " private\n")  # stands for a root-only file (the tests may run as root)
    private.chmod(0o600)
    course = root / "course"  # the run's course folder: its master gradebooks are known in advance
    gradebook = course / "master" / TORCH / "gradebook.db"

    subs = root / "subs"

    def put(student, name, nb, subfolder=False):
        folder = subs / student / (LAB if subfolder else "")
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / name)

    put("correct", f"{TORCH}.ipynb", _nb("torch"))
    put("correct", f"{TF}.ipynb", _nb("tf"))
    put("blank", f"{TORCH}.ipynb", _nb("torch", "release"))
    for fw, name in (("torch", TORCH), ("tf", TF)):
        targets = {
            f"{name}.ipynb": str(secret),
            "gradebook.db": str(gradebook),
            f"{name}.html": str(script),
            "nbgrader_config.py": str(solution),
        }
        put("planter", f"{name}.ipynb", _planter(fw, targets))
    (subs / "solution_link").mkdir()
    (subs / "solution_link" / f"{TORCH}.ipynb").symlink_to(solution)
    (subs / "folder_link").symlink_to(labs / "source" / LAB)
    (subs / "lab_link").mkdir()
    (subs / "lab_link" / LAB).symlink_to(labs / "source" / LAB)
    (subs / "private_link").mkdir()
    (subs / "private_link" / f"{TORCH}.ipynb").symlink_to(private)
    (subs / "hard_link").mkdir()
    os.link(solution, subs / "hard_link" / f"{TORCH}.ipynb")
    (subs / "fifo").mkdir()
    os.mkfifo(subs / "fifo" / f"{TORCH}.ipynb")
    (subs / "huge").mkdir()
    with open(subs / "huge" / f"{TORCH}.ipynb", "wb") as f:
        f.truncate(submissions.MAX_NOTEBOOK_BYTES + 1)
    put("pasted", f"{TORCH}.ipynb", _pasted_test_cell())
    put(".eve", f"{TORCH}.ipynb", _nb("torch"))
    put("twice_same", f"{TORCH}.ipynb", _nb("torch"))
    put("twice_same", f"{TORCH}.ipynb", _nb("torch"), subfolder=True)
    put("twice_differ", f"{TORCH}.ipynb", _nb("torch"))
    put("twice_differ", f"{TORCH}.ipynb", _nb("torch", "release"), subfolder=True)

    watched = [host, labs, subs, ROOT / "labs" / "source" / LAB]
    before = _snapshot(watched)
    out = root / "grades" / "week2.csv"
    import contextlib
    import io

    console = io.StringIO()
    with contextlib.redirect_stdout(console), contextlib.redirect_stderr(console):
        rows = grading.grade_submissions(
            subs, LAB, out, timeout=60, labs_dir=labs, course_dir=course, verbose=True, jobs=2
        )
    after = _snapshot(watched)
    return {
        "rows": {(r["student"], r["notebook"]): r for r in rows},
        "csv": out.read_text(encoding="utf-8"),
        "console": console.getvalue(),
        "changed": sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)),
        "gradebook": gradebook,
        "token": token,
        "paths": [str(secret), str(private), str(solution), str(labs / "source" / LAB)],
        "out": out,
    }


def _score(a, student, notebook=TORCH):
    r = a["rows"][student, notebook]
    return r["score"], r["status"]


def _full(a, notebook=TORCH):
    """The correct notebook's score: full marks (14 of 14), the reference its neighbours are held to."""
    r = a["rows"]["correct", notebook]
    assert (r["status"], r["failed_tests"], r["score"]) == ("graded", "", r["max_score"]) and r["max_score"] == 14, r
    return r["score"]


@pytest.mark.timeout(900)
def test_neighbours_keep_their_scores(attacked):
    for notebook in (TORCH, TF):
        assert _score(attacked, "correct", notebook) == (_full(attacked, notebook), "graded")
    assert _score(attacked, "blank") == (0.0, "graded")


def test_planted_links_change_nothing_outside_the_workspace(attacked):
    """The kernel works in a scratch folder: its links are never followed by nbgrader."""
    for notebook in (TORCH, TF):
        assert _score(attacked, "planter", notebook) == (0.0, "graded"), attacked["rows"]["planter", notebook]
    assert attacked["changed"] == [], "host files changed: " + ", ".join(attacked["changed"])
    with sqlite3.connect(attacked["gradebook"]) as db:  # still the master gradebook, not a notebook
        assert db.execute("select name from assignment").fetchall() == [(LAB,)]
    html = (attacked["out"].parent / attacked["rows"]["planter", TORCH]["feedback"]).read_text()
    assert f"planted {TORCH}.ipynb" in html  # the link was made, in the kernel's own scratch folder


@pytest.mark.parametrize(
    "student, reason",
    [
        ("solution_link", f"solution_link/{TORCH}.ipynb is a symbolic link"),
        ("folder_link", "folder_link is a symbolic link"),
        ("lab_link", f"lab_link/{LAB} is a symbolic link"),
        ("private_link", f"private_link/{TORCH}.ipynb is a symbolic link"),
        ("hard_link", f"hard_link/{TORCH}.ipynb is a hard link (2 names for one file)"),
        ("fifo", f"fifo/{TORCH}.ipynb is a FIFO"),
        ("huge", f"huge/{TORCH}.ipynb is larger than 50 MB"),
    ],
)
def test_unsafe_submissions_are_refused_with_the_reason(attacked, student, reason):
    score, status = _score(attacked, student)
    assert score == 0.0 and status.startswith(f"refused: {reason}"), status


def test_refusals_never_show_what_a_link_points_to(attacked):
    for text in (attacked["csv"], attacked["console"]):
        assert attacked["token"] not in text
        for path in attacked["paths"]:
            assert path not in text, path
    assert "BEGIN SOLUTION" not in attacked["csv"]


def test_a_pasted_test_cell_costs_nothing_more(attacked):
    r = attacked["rows"]["pasted", TORCH]
    correct = attacked["rows"]["correct", TORCH]
    assert (r["score"], r["status"], r["failed_tests"]) == (_full(attacked), "graded", correct["failed_tests"])
    assert r["note"] == "test cell 'test_shared_frequency' pasted twice: the copy graded as an ordinary cell"


def test_hidden_student_folders_get_a_row(attacked):
    score, status = _score(attacked, ".eve")
    assert (
        score == 0.0
        and status == "refused: student folder '.eve' starts with '.' (a hidden folder); rename it to grade it"
    )


def test_a_notebook_at_both_levels_is_never_chosen_silently(attacked):
    r = attacked["rows"]["twice_same", TORCH]
    assert (r["score"], r["status"]) == (_full(attacked), "graded")
    assert (
        r["note"] == f"{TORCH}.ipynb submitted twice, in twice_same/ and in twice_same/{LAB}/ (the same): graded once"
    )
    score, status = _score(attacked, "twice_differ")
    assert (score, status) == (
        0.0,
        f"refused: {TORCH}.ipynb submitted twice, in twice_differ/ and in twice_differ/{LAB}/, and they differ; keep one",
    )


def test_read_submission_checks_what_it_opened(tmp_path):
    """The unit under the fixture: every path component is checked with lstat, nothing is followed."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "n.ipynb").write_bytes(b"{}")
    assert submissions.read_submission(tmp_path / "a" / "n.ipynb", tmp_path) == b"{}"
    assert (
        submissions.read_submission(tmp_path / "a" / "n.ipynb", tmp_path, limit=1)
        == "a/n.ipynb is larger than 0 MB (2 bytes)"
    )
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert submissions.read_submission(tmp_path / "b" / "n.ipynb", tmp_path) == "b is a symbolic link"
    assert (
        submissions.read_submission(tmp_path / "a" / "gone.ipynb", tmp_path)
        == "a/gone.ipynb cannot be inspected (FileNotFoundError)"
    )
