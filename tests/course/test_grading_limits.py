"""The sandbox's limits hold the host (issue 21): graded exactly as students are, beside a correct one.

One ``grade_submissions`` run of the toy lab (tests/course/test_grading.py) in a subprocess whose
environment holds a secret, ``--memory 2G``, two at a time: a correct notebook and five that, before
their correct solution, fork until refused (a fork bomb), start four children that each fill 700 MB
(a memory hog: 2.8 GB in all), fill their working folder and ``/tmp`` up to 5 GB, print 1 GiB (and
64 MB more straight to file descriptor 1), and read every ``/proc/*/environ`` they can. Each still
gets full marks (its solution is right), the correct one too; the fork bomb stops below the
sandbox's process limit, a hog child is killed, the writes stop at the tmpfs sizes, the flood is cut
in the kernel (the grader's processes stay small) and the secret is nowhere in what grading writes
or prints. Where this process cannot make cgroups (:func:`~txcourse.course.grading.sandbox.
confinement`) the whole-sandbox memory and process limits do not exist, and those two checks say so
instead of failing. Under a minute of CPU: it runs with ``make test`` (TXCOURSE_SANDBOX_TESTS=1).
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from support.hostile_imports import hostile_imports_allowed  # noqa: E402
from test_grading import ROOT, need_sandbox, toy_course  # noqa: E402

from txcourse.course.grading import sandbox  # noqa: E402

FORK_BOMB = """
import os, time
children = []
try:
    for _ in range(2000):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError as err:
    print("FORK REFUSED", type(err).__name__)
print("FORKED", len(children))
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""
MEMORY_HOG = """
import os, time
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(b"\\x01") * (700 << 20)  # 700 MB, every page touched
        time.sleep(3)
        os._exit(0)
    children.append(pid)
statuses = [os.waitpid(pid, 0)[1] for pid in children]
print("HOG CHILDREN KILLED", sum(1 for s in statuses if os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9))
"""
DISK_FILLER = """
import os
for folder in (".", "/tmp"):
    written = 0
    try:
        with open(os.path.join(folder, "fill"), "wb") as f:
            while written < 5 << 30:
                f.write(bytes(16 << 20))
                written += 16 << 20
        print("FILL DONE", folder, written >> 20, "MB")
    except OSError as err:
        print("FILL STOPPED", folder, written >> 20, "MB", type(err).__name__)
    os.remove(os.path.join(folder, "fill"))
"""
FLOOD = """
import os, sys
chunk = "x" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(chunk)
os.write(1, b"y" * (64 << 20))
"""
ENVIRON_READER = """
import glob, os
seen = []
for path in ["/proc/self/environ", "/proc/1/environ", *glob.glob("/proc/*/environ")]:
    try:
        seen.append(path + " " + open(path, "rb").read().decode(errors="replace"))
    except OSError as err:
        seen.append(f"{path}: {type(err).__name__}")
print("ENVIRON", "\\n".join(seen), dict(os.environ))
"""
ATTACKS = {
    "forker": FORK_BOMB,
    "hog": MEMORY_HOG,
    "filler": DISK_FILLER,
    "flooder": FLOOD,
    "snooper": ENVIRON_READER,
}
GRADE = """
import json, resource, sys
from txcourse.course import grading
rows = grading.grade_submissions(sys.argv[1], "toy", sys.argv[2], timeout=30, labs_dir=sys.argv[3],
                                 course_dir=sys.argv[4], verbose=True, jobs=2, memory="2G")
print(json.dumps({"maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def _texts(folder: Path):
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            yield path, path.read_bytes()


@pytest.fixture(autouse=True)
def _hostile_imports_allowed():
    """The hostile cells import what a submission may not: the sandbox is what these tests show confining them
    (tests/support/hostile_imports.py)."""
    with hostile_imports_allowed():
        yield


@pytest.mark.timeout(600)
def test_limits_hold_the_host(tmp_path):
    need_sandbox()
    labs, source = toy_course(tmp_path)
    subs = tmp_path / "subs"
    students = {"alice": source}
    for student, attack in ATTACKS.items():
        nb = nbformat.from_dict(source)
        for cell in nb.cells:
            cell.source = re.sub(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", "", cell.source, flags=re.M)
        nb.cells[1].source = attack + "\ndef f(x):\n    return 2 * x"
        students[student] = nb
    for student, nb in students.items():
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    grades, course = tmp_path / "grades", tmp_path / "course"
    secret = "grader-token-" + uuid.uuid4().hex
    tmpdir = Path(tempfile.mkdtemp(prefix="txl-"))
    try:
        done = subprocess.run(
            [sys.executable, "-c", GRADE, str(subs), str(grades / "toy.csv"), str(labs), str(course)],
            env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir), "GRADER_SECRET": secret},
            capture_output=True,
            text=True,
            timeout=540,
        )
    finally:
        leftovers = os.listdir(tmpdir)
        os.rmdir(tmpdir) if not leftovers else None
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    with open(grades / "toy.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    for student in students:  # every solution is right: the limits cost no points
        assert (rows[student]["score"], rows[student]["status"]) == ("5.0", "graded"), rows[student]
    html = {s: (grades / rows[s]["feedback"]).read_text() for s in students}
    cgroups = sandbox.cgroup_parents()[0] > 0

    forked = int(re.search(r"FORKED (\d+)", html["forker"]).group(1))
    if cgroups:  # without a cgroup (root, no pids controller) nothing stops it before 2000
        assert "FORK REFUSED BlockingIOError" in html["forker"] and forked < sandbox.DEFAULT_PROCESSES, forked
    else:  # what confinement() reports is what happened: no whole-sandbox limit, said as much
        assert sandbox.confinement().startswith("no usable cgroup"), sandbox.confinement()
        assert os.geteuid() != 0 or forked == 2000, forked

    killed = int(re.search(r"HOG CHILDREN KILLED (\d+)", html["hog"]).group(1))
    if cgroups:  # 2.8 GB in four processes under --memory 2G: one at least is killed, not the host
        assert killed >= 1, html["hog"][-2000:]
    else:  # per-process RLIMIT_AS only: each 700 MB child fits its own limit
        assert killed == 0, html["hog"][-2000:]

    stopped = dict(re.findall(r"FILL STOPPED (\S+) (\d+) MB OSError", html["filler"]))
    assert set(stopped) == {".", "/tmp"}, html["filler"][-2000:]
    assert int(stopped["."]) <= sandbox.WORK_SIZE >> 20 and int(stopped["/tmp"]) <= sandbox.TMP_SIZE >> 20

    assert "output cut" in html["flooder"] and len(html["flooder"]) < 4 * sandbox.OUTPUT_CAP
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["maxrss_kb"] < 1 << 20, f"a grading process grew to {report['maxrss_kb'] >> 10} MB"

    assert "ENVIRON" in html["snooper"] and "/proc/1/environ PATH=" in html["snooper"]  # it did read them
    console = done.stdout + done.stderr
    assert secret not in console
    for folder in (grades, course):  # CSV, logs, feedback; the gradebooks and the executed notebooks
        assert [str(p) for p, data in _texts(folder) if secret.encode() in data] == []
    assert leftovers == [], f"temporary files left: {leftovers}"
