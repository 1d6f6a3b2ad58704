"""Hostile week-2 submissions graded in the sandbox (issue 13), next to correct ones.

``txcourse grade`` on a copy of the course (``--labs-dir COPY``), as an instructor runs it, with
seven notebooks graded two at a time: the source notebooks of both frameworks (correct), a
hostile notebook per framework that, before its correct solution, deletes ``../../../gradebook.db``
and ``../../../source`` and everything else it can find, reads the solutions, the other students'
submissions and the gradebook, writes outside its workspace, connects to a port on the host, forks
a process that outlives the notebook and allocates 20 GB; an endless loop; ``os._exit(1)``; and a
correct notebook saved as ``week2_positional_torch (1).ipynb``. The correct ones get full marks,
the hostile ones what their cells earn, nothing outside the workspaces changes and no process
survives. Minutes of CPU (TensorFlow and PyTorch kernels), so it runs with TXCOURSE_LAB_TESTS=1
(``make test-labs``).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from support.hostile_imports import hostile_imports_allowed  # noqa: E402
from test_grading import ROOT, hostile_code, need_sandbox, processes_with, tree_digest  # noqa: E402

from txcourse.registry import FRAMEWORKS  # noqa: E402

LAB = "week2_positional"
MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", re.MULTILINE)

pytestmark = pytest.mark.skipif(os.environ.get("TXCOURSE_LAB_TESTS") != "1", reason="slow: run by `make test-labs`")


def _source(fw: str):
    return nbformat.read(ROOT / "labs" / "source" / LAB / f"{LAB}_{fw}.ipynb", as_version=4)


def _without_markers(nb):
    """The source notebook as a student who solved everything hands it in: no nbgrader markers."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        cell.source = MARKERS.sub("", cell.source)
    return nb


def _edit(nb, cell_id: str, before: str):
    nb = nbformat.from_dict(nb)
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    cell.source = before + "\n" + cell.source
    return nb


@pytest.fixture(autouse=True)
def _hostile_imports_allowed():
    """The hostile cell imports what a submission may not (socket, ...): the kernel's list is widened so that the
    test shows the sandbox, not the import guard, confining it (tests/support/hostile_imports.py)."""
    with hostile_imports_allowed():
        yield


@pytest.mark.timeout(1500)
def test_hostile_week2_submissions(tmp_path):
    need_sandbox()
    labs = tmp_path / "labs"  # the course copy the instructor grades with
    (labs / "source").mkdir(parents=True)
    shutil.copy(ROOT / "labs" / "nbgrader_config.py", labs / "nbgrader_config.py")
    shutil.copytree(ROOT / "labs" / "source" / LAB, labs / "source" / LAB)
    subs, grades = tmp_path / "subs", tmp_path / "grades"
    grades.mkdir()
    (grades / "keep.txt").write_text("the instructor's file")
    token = uuid.uuid4().hex
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0)
    solution = {fw: str(labs / "source" / LAB / f"{LAB}_{fw}.ipynb") for fw in FRAMEWORKS}
    targets = {
        "delete": [str(labs), str(subs), str(grades), str(tmp_path)],
        "read": [
            *solution.values(),
            str(ROOT / "labs" / "source" / LAB / f"{LAB}_torch.ipynb"),
            str(subs / "correct" / f"{LAB}_torch.ipynb"),
            str(subs),
            str(grades),
            str(ROOT / ".git" / "HEAD"),
            "../../../gradebook.db",
            "../../../source",
        ],
        "write": [str(labs), str(subs), str(grades), str(tmp_path), str(ROOT), os.path.expanduser("~")],
        "private": [tempfile.gettempdir(), "../../.."],
    }
    hostile = hostile_code(targets, server.getsockname()[1], token)
    notebooks = {
        ("correct", "torch"): _source("torch"),
        ("correct", "tf"): _source("tf"),
        ("hostile", "torch"): _edit(_without_markers(_source("torch")), "positional_encoding", hostile),
        ("hostile", "tf"): _edit(_without_markers(_source("tf")), "positional_encoding", hostile),
        ("looping", "tf"): _edit(_without_markers(_source("tf")), "worked_table", "while True:\n    pass\n"),
        ("crashing", "torch"): _edit(_without_markers(_source("torch")), "worked_table", "import os\nos._exit(1)\n"),
    }
    for (student, fw), nb in notebooks.items():
        (subs / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, subs / student / f"{LAB}_{fw}.ipynb")
    (subs / "nearmiss").mkdir()
    nbformat.write(_without_markers(_source("torch")), subs / "nearmiss" / f"{LAB}_torch (1).ipynb")
    before = tree_digest(labs, subs, grades, ROOT / "labs")

    tmpdir = Path(tempfile.mkdtemp(prefix="txs-"))
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "txcourse",
            "grade",
            str(subs),
            "--lab",
            LAB,
            "--labs-dir",
            str(labs),
            "--out",
            str(grades / "week2.csv"),
            "--jobs",
            "2",
            "--cell-timeout",
            "60",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir)},
        capture_output=True,
        text=True,
        timeout=1400,
    )
    seconds = time.perf_counter() - start
    print(done.stdout[-3000:], done.stderr[-3000:], f"{seconds:.0f} s", sep="\n")
    leftovers = os.listdir(tmpdir)
    shutil.rmtree(tmpdir, ignore_errors=True)

    with open(grades / "week2.csv", newline="", encoding="utf-8") as f:
        rows = {(r["student"], r["framework"]): r for r in csv.DictReader(f)}
    # one submission could not be graded (os._exit): exit status 1, the reason in the CSV, the log kept
    assert done.returncode == 1 and "1 submission(s) could not be graded" in done.stderr, done.stderr[-2000:]
    assert re.search(r"graded 7 notebook\(s\) in \d+ s with 2 job\(s\): [\d.]+ s per notebook", done.stdout)
    for fw in FRAMEWORKS:  # the hostile code sits in the positional_encoding cell: the source check (issue 30, item 3)
        # zeroes that exercise (7 points: subprocess, sockets, threads are code that hides calls) and flags it
        row = rows["hostile", fw]
        assert (row["score"], row["max_score"], row["status"]) == ("7.0", "14.0", "graded"), row
        assert row["forbidden"], row
    for key in (
        ("correct", "torch"),
        ("correct", "tf"),
        ("nearmiss", "torch"),
    ):
        assert (rows[key]["score"], rows[key]["max_score"], rows[key]["status"]) == ("14.0", "14.0", "graded"), (
            key,
            rows[key],
        )
    assert rows["nearmiss", "torch"]["note"] == f"graded from '{LAB}_torch (1).ipynb' (expected {LAB}_torch.ipynb)"
    assert (rows["looping", "tf"]["score"], rows["looping", "tf"]["failed_tests"]) == ("12.0", "test_worked_table")
    crash = rows["crashing", "torch"]
    assert crash["status"].startswith("error: nbgrader could not grade it: ") and crash["score"] == "0.0"
    assert "DeadKernelError" in crash["status"] or "died" in crash["status"], crash["status"]
    assert (
        "DeadKernelError" in (grades / crash["log"]).read_text() or "Kernel died" in (grades / crash["log"]).read_text()
    )
    for fw in FRAMEWORKS:
        html = (grades / rows["hostile", fw]["feedback"]).read_text()
        for marker in ("DELETED", "LEAK", "WROTE", "CONNECTED", "ALLOCATED", "BEGIN SOLUTION", "BEGIN HIDDEN TESTS"):
            assert marker not in html, f"{marker} in the hostile {fw} notebook's feedback"
        assert "MemoryError: 20 GB refused" in html and "no network" in html and "cannot read" in html
    written = ("week2.csv", "week2-logs", "feedback")
    changed = [k for k, v in tree_digest(labs, subs, grades, ROOT / "labs").items() if before.get(k) != v]
    assert [
        k for k in changed if not (k.startswith(f"{grades}:") and k.split(":", 1)[1].split("/")[0] in written)
    ] == []
    assert [k for k in before if not Path(k.replace(":", "/", 1)).exists()] == [], "files were deleted"
    assert list(tmp_path.rglob("pwned-*")) == [] and list(Path(tempfile.gettempdir()).glob("pwned-*")) == []
    try:
        server.accept()
        raise AssertionError("a notebook connected to the host")
    except BlockingIOError:
        pass
    assert processes_with(token) == [], "a forked process outlived its notebook"
    assert leftovers == [], f"temporary files left: {leftovers}"
