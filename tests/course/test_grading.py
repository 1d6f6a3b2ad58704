"""Grading with nbgrader (txcourse.course.grading): bad submissions cost their own points and nothing else.

The fast tests grade a tiny pure-Python lab built here with the course's real
``labs/nbgrader_config.py``: a correct submission, one with an endless loop in a
solution cell, one with a deleted test cell, one with wrong code and a cell that
raises, an unreadable file and a missing notebook; and, in the sandbox
(txcourse/course/grading/sandbox.py, bubblewrap), a hostile one (deletes the gradebook and the course,
reads the solutions and the other submissions, writes outside its workspace, opens a
network connection, forks a process that outlives it, allocates 20 GB), one that
calls ``os._exit(1)`` and a near-miss file name; a loop that ignores interrupts runs
into ``--notebook-timeout``. ``test_sigterm_stops_everything``
interrupts ``python -m txcourse grade``. ``test_real_lab_submissions`` grades the
week 3 lab and tests/course/test_grading_sandbox.py hostile week-2 submissions; they take
minutes, so they run only with TXCOURSE_LAB_TESTS=1 (``make test-labs`` sets it).

Without a usable ``bwrap`` the sandbox tests skip, except under ``make test``
(TXCOURSE_SANDBOX_TESTS=1, after ``make sandbox-deps``), where they fail.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import shutil
import signal
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

from txcourse.course import grading  # noqa: E402
from txcourse.course.grading import cgroups, command, course, grade, nbgrader_run, sandbox, submissions  # noqa: E402
from txcourse.notebook.checks import assert_close, assert_equal, normal, to_numpy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
SECRET = "SECRET-SOLUTION-7f3a"  # only in the instructor's source (a solution comment) and alice's copy of it


def _sandbox_problem():
    """None when bwrap works here, else why not."""
    try:
        sandbox.find_bwrap()
    except sandbox.SandboxUnavailable as error:
        return str(error)
    return None


SANDBOX_PROBLEM = _sandbox_problem()


def need_sandbox():
    """Skip without a working bwrap, but fail under `make test` (TXCOURSE_SANDBOX_TESTS=1)."""
    if SANDBOX_PROBLEM:
        if os.environ.get("TXCOURSE_SANDBOX_TESTS") == "1":
            pytest.fail(SANDBOX_PROBLEM)
        pytest.skip(SANDBOX_PROBLEM)


def tree_digest(*roots: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``roots`` (folders as "dir")."""
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            key = f"{root}:{path.relative_to(root)}"
            out[key] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def processes_with(token: str) -> list[int]:
    """Pids whose command line holds ``token``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


HOSTILE = r"""
import os, shutil, socket, subprocess, sys
TARGETS, PORT, TOKEN = {targets!r}, {port!r}, {token!r}
# 1. break the grader: its gradebook and course, and anything else it can find
for rel in ("../../../gradebook.db", "../../../source", "../../../nbgrader_config.py", *TARGETS["delete"]):
    try:
        (shutil.rmtree if os.path.isdir(rel) else os.remove)(rel)
        print("DELE" + "TED", rel)
    except OSError as error:
        print("cannot de" + "lete", rel, type(error).__name__)
# 2. read the solutions, the other submissions, the gradebook
for path in TARGETS["read"]:
    try:
        print("LE" + "AK", path, os.listdir(path) if os.path.isdir(path) else open(path, "rb").read()[:20000])
    except OSError as error:
        print("cannot re" + "ad", path, type(error).__name__)
# 3. write outside the workspace
for folder in TARGETS["write"]:
    try:
        with open(os.path.join(folder, "pwned-" + TOKEN), "w") as f:
            f.write("x")
        print("WRO" + "TE", folder)
    except OSError as error:
        print("cannot wr" + "ite", folder, type(error).__name__)
for folder in TARGETS.get("private", []):  # in the sandbox's own /tmp (a tmpfs): gone with it
    try:
        open(os.path.join(folder, "pwned-" + TOKEN), "w").write("x")
    except OSError:
        pass
# 4. the network
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).sendall(b"hello")
    print("CONNEC" + "TED")
except OSError as error:
    print("no net" + "work", type(error).__name__)
# 5. a process that outlives the notebook (its own session, double fork)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", TOKEN], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)", TOKEN])
    os._exit(0)
# 6. 20 GB
try:
    big = bytearray(20 * 10**9)
    print("ALLOCA" + "TED 20 GB")
except MemoryError:
    print("Memory" + "Error: 20 GB refused")
"""


def hostile_code(targets: dict, port: int, token: str) -> str:
    """The hostile cell: ``targets`` maps "delete", "read", "write" to lists of paths."""
    return HOSTILE.format(targets=targets, port=port, token=token)


def _cell(source: str, kind: str, grade_id: str, points: int = 0):
    cell = nbformat.v4.new_code_cell(source, id=grade_id)
    meta = {
        "grade": kind == "tests",
        "solution": kind == "solution",
        "locked": kind != "solution",
        "grade_id": grade_id,
        "schema_version": 3,
    }
    if kind == "tests":
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def _toy_source():
    """A two-exercise notebook: f (2 points) and g (3 points), with a hidden test for f."""
    return nbformat.v4.new_notebook(
        cells=[
            _cell("import math", "readonly", "setup"),
            _cell(
                f"def f(x):\n    ### BEGIN SOLUTION\n    # {SECRET}\n    return 2 * x\n    ### END SOLUTION",
                "solution",
                "f",
            ),
            _cell(
                "assert f(2) == 4\n### BEGIN HIDDEN TESTS\nassert f(-3) == -6\n### END HIDDEN TESTS",
                "tests",
                "test_f",
                2,
            ),
            _cell("def g(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION", "solution", "g"),
            _cell("assert g(1) == 2", "tests", "test_g", 3),
        ],
        metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
    )


def toy_course(root: Path):
    """``root/labs``: the course's nbgrader config and the toy lab's source notebook; returns (labs, source)."""
    labs = root / "labs"
    (labs / "source" / "toy").mkdir(parents=True)
    shutil.copy(LABS / "nbgrader_config.py", labs / "nbgrader_config.py")
    source = _toy_source()
    nbformat.write(source, labs / "source" / "toy" / "toy_torch.ipynb")
    return labs, source


@pytest.fixture(scope="module", autouse=True)
def _hostile_imports_allowed():
    """The toy notebooks' hostile cells import socket, signal, ...: the kernel's list is widened so that these
    tests show the sandbox, not the import guard, confining them (tests/support/hostile_imports.py)."""
    with hostile_imports_allowed():
        yield


@pytest.fixture(scope="module")
def toy_grades(tmp_path_factory):
    """Grade fake submissions of the toy lab with a 5-second cell timeout, two at a time; returns the
    CSV rows by student, the CSV's path and what the hostile submission could have changed."""
    root = tmp_path_factory.mktemp("grading")
    labs, source = toy_course(root)

    subs = root / "submissions"

    def submit(student, nb=None, text=None, subfolder=False, name="toy_torch.ipynb"):
        folder = subs / student / ("toy" if subfolder else "")
        folder.mkdir(parents=True, exist_ok=True)
        if text is not None:
            (folder / name).write_text(text)
        elif nb is not None:
            nbformat.write(nb, folder / name)

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
    shuffled = nbformat.from_dict(source)
    shuffled.cells = shuffled.cells[::-1]  # every test before the code it tests, in the student's order
    submit("sam", shuffled)
    (subs / "grace").mkdir()  # nothing submitted

    out = root / "grades" / "toy.csv"
    out.parent.mkdir()
    (out.parent / "keep.txt").write_text("the instructor's file")
    info = {"token": uuid.uuid4().hex, "sandbox": SANDBOX_PROBLEM is None}
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0)
    if info["sandbox"]:
        # hostile, but right: every cell of mallory's notebook earns its points if nothing escapes
        hostile = nbformat.from_dict(source)
        for cell in hostile.cells:  # a student's copy has no nbgrader markers: any in its feedback leaked
            cell.source = re.sub(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", "", cell.source, flags=re.M)
        targets = {
            "delete": [str(labs), str(subs), str(out.parent), str(root)],
            "read": [
                str(labs / "source" / "toy" / "toy_torch.ipynb"),
                str(labs / "source"),
                str(subs / "alice" / "toy" / "toy_torch.ipynb"),
                str(subs),
                str(out.parent),
                str(ROOT / "labs" / "source" / "week2_positional" / "week2_positional_torch.ipynb"),
                str(ROOT / ".git" / "HEAD"),
                "../../../gradebook.db",
                "../../../source",
            ],
            "write": [str(labs), str(subs), str(out.parent), str(root), os.path.expanduser("~")],
            "private": [tempfile.gettempdir(), "../../.."],
        }
        hostile.cells[1].source = (
            hostile_code(targets, server.getsockname()[1], info["token"]) + "\ndef f(x):\n    return 2 * x"
        )
        submit("mallory", hostile)
        crashing = nbformat.from_dict(source)
        crashing.cells[3].source = "import os\nos._exit(1)"
        submit("oscar", crashing)
        submit("nina", source, name="toy_torch (1).ipynb")  # a near miss of the name
    before = tree_digest(labs, subs, out.parent)

    start = time.perf_counter()
    rows = grading.grade_submissions(
        subs, "toy", out, timeout=5, labs_dir=labs, verbose=False, jobs=2, sandbox=info["sandbox"]
    )
    info["seconds"] = time.perf_counter() - start
    with open(out, newline="", encoding="utf-8") as f:
        assert list(csv.DictReader(f)) == [{k: str(v) for k, v in r.items() if k != "cells"} for r in rows]
    info["changed"] = {k: v for k, v in tree_digest(labs, subs, out.parent).items() if before.get(k) != v}
    try:
        info["connection"] = server.accept()
    except BlockingIOError:
        info["connection"] = None
    server.close()
    info["survivors"] = processes_with(info["token"])
    info["pwned"] = [
        p for p in [*root.rglob("pwned-*"), *Path(tempfile.gettempdir()).glob("pwned-*"), *Path.home().glob("pwned-*")]
    ]
    return {r["student"]: r for r in rows}, out, info


@pytest.mark.timeout(900)
def test_correct_submission_gets_full_marks(toy_grades):
    rows, out, _ = toy_grades
    assert (rows["alice"]["score"], rows["alice"]["max_score"], rows["alice"]["status"]) == (5.0, 5.0, "graded")
    assert rows["alice"]["failed_tests"] == ""
    feedback = out.parent / rows["alice"]["feedback"]
    assert feedback.is_file() and "test_f" in feedback.read_text()


def test_cells_in_another_order_are_graded_in_the_courses_order(toy_grades):
    """Issue 30, item 1: a permutation of a correct notebook grades as the notebook in place, with a note."""
    rows, _, _ = toy_grades
    assert (rows["sam"]["score"], rows["sam"]["status"], rows["sam"]["failed_tests"]) == (5.0, "graded", "")
    assert "cells put back in the course's order" in rows["sam"]["note"]
    assert rows["alice"]["note"] == ""  # in place: nothing moved, nothing said


def test_endless_loop_costs_only_its_tests(toy_grades):
    rows, _, _ = toy_grades
    assert (rows["bob"]["score"], rows["bob"]["status"], rows["bob"]["failed_tests"]) == (2.0, "graded", "test_g")


def test_deleted_test_cell_is_restored_and_run(toy_grades):
    rows, _, _ = toy_grades
    assert (rows["carol"]["score"], rows["carol"]["failed_tests"]) == (5.0, "")


def test_raising_cells_cost_only_their_tests(toy_grades):
    rows, _, _ = toy_grades
    assert (rows["erin"]["score"], rows["erin"]["failed_tests"]) == (0.0, "test_f;test_g")


def test_unreadable_and_missing_notebooks_get_zero(toy_grades):
    rows, _, _ = toy_grades
    assert rows["frank"]["status"].startswith("unreadable") and rows["frank"]["score"] == 0
    assert rows["grace"]["status"] == "missing" and rows["grace"]["score"] == 0
    assert rows["grace"]["max_score"] == 5.0


def test_hostile_submission_is_confined(toy_grades):
    """Mallory deletes, reads, writes, connects, forks and allocates: every cell still earns its points,
    nothing outside its workspace changed, alice still gets full marks, no process survives."""
    need_sandbox()
    rows, out, info = toy_grades
    assert (rows["mallory"]["score"], rows["mallory"]["status"]) == (5.0, "graded"), rows["mallory"]
    assert (rows["alice"]["score"], rows["alice"]["status"]) == (5.0, "graded")
    html = (out.parent / rows["mallory"]["feedback"]).read_text()
    assert "cannot delete ../../../gradebook.db" in html and "cannot read" in html and "cannot write" in html
    for marker in ("DELETED", "LEAK", "WROTE", "CONNECTED", "ALLOCATED", SECRET, "BEGIN SOLUTION"):
        assert marker not in html, f"{marker} in mallory's feedback"
    assert "MemoryError: 20 GB refused" in html and "no network" in html
    assert info["seconds"] < 600
    written = ("toy.csv", "toy-logs", "feedback")  # what grading itself writes next to the CSV
    assert [
        k
        for k in info["changed"]
        if not (k.startswith(f"{out.parent}:") and k.split(":", 1)[1].split("/")[0] in written)
    ] == []
    assert info["pwned"] == [] and info["connection"] is None
    assert info["survivors"] == [], f"processes left behind: {info['survivors']}"


def test_os_exit_is_an_error_with_its_log_kept(toy_grades):
    need_sandbox()
    rows, out, _ = toy_grades
    oscar = rows["oscar"]
    assert oscar["status"].startswith("error: nbgrader could not grade it: ") and oscar["score"] == 0
    assert "DeadKernelError" in oscar["status"] or "died" in oscar["status"], oscar["status"]
    log = out.parent / oscar["log"]
    assert log == out.parent / "toy-logs" / "oscar-toy_torch.log" and log.is_file()
    assert "DeadKernelError" in log.read_text() or "Kernel died" in log.read_text()
    assert [r["student"] for r in grading.failures(list(rows.values()))] == ["frank", "oscar"]


def test_near_miss_name_is_graded_with_a_note(toy_grades):
    need_sandbox()
    rows, _, _ = toy_grades
    assert (rows["nina"]["score"], rows["nina"]["status"]) == (5.0, "graded")
    assert rows["nina"]["note"] == "graded from 'toy_torch (1).ipynb' (expected toy_torch.ipynb)"


def test_near_misses_that_are_ambiguous_are_named(tmp_path):
    for name in ("toy_torch (1).ipynb", "toy_torch (2).ipynb", "notes.ipynb"):
        (tmp_path / name).write_text("{}")
    found, notes = submissions.find_submissions(tmp_path, ["toy_torch"])
    assert (
        found == {}
        and notes["toy_torch"] == "expected toy_torch.ipynb, found 'toy_torch (1).ipynb', 'toy_torch (2).ipynb'"
    )
    (tmp_path / "toy_torch (2).ipynb").unlink()
    (tmp_path / "toy_torch (1).ipynb").unlink()
    found, notes = submissions.find_submissions(tmp_path, ["toy_torch"])
    assert found == {} and notes["toy_torch"] == "expected toy_torch.ipynb, found 'notes.ipynb'"


def test_without_bwrap_grading_refuses_with_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    labs = tmp_path / "labs"
    (labs / "source" / "toy").mkdir(parents=True)
    with pytest.raises(sandbox.SandboxUnavailable, match=r"bwrap \(bubblewrap\) not found on PATH: install bubblewrap"):
        grading.grade_submissions(tmp_path / "subs", "toy", tmp_path / "g.csv", labs_dir=labs, bwrap_path=str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without bwrap
    from txcourse import cli

    with pytest.raises(SystemExit) as stop:
        cli.main(
            ["grade", str(tmp_path / "subs"), "--lab", "toy", "--labs-dir", str(labs), "--out", str(tmp_path / "g.csv")]
        )
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and err[0].startswith("txcourse: error: bwrap (bubblewrap) not found on PATH")
        and "--no-sandbox" in err[0]
    )
    assert not (tmp_path / "g.csv").exists()


def test_bad_limits_are_one_line_errors(tmp_path):
    with pytest.raises(
        ValueError, match=r"^--memory expects a size such as 8G, 512M or a number of bytes, got 'lots'$"
    ):
        sandbox.parse_size("lots")
    assert sandbox.parse_size("512M") == 512 << 20 and sandbox.parse_size("8G") == 8 << 30
    with pytest.raises(ValueError, match="--memory must be at least 64M"):
        sandbox.parse_size("1M")
    (tmp_path / "subs" / "a").mkdir(parents=True)
    for kwargs, message in (
        ({"jobs": 0}, "--jobs must be at least 1, got 0"),
        ({"notebook_timeout": 0}, "--notebook-timeout must be at least 1 second, got 0"),
    ):
        with pytest.raises(ValueError, match=message):
            grading.grade_submissions(
                tmp_path / "subs", "week2_positional", tmp_path / "g.csv", labs_dir=LABS, **kwargs
            )


def test_exit_status_says_when_a_submission_could_not_be_graded(monkeypatch, capsys, tmp_path):
    import argparse

    row = {"student": "s", "notebook": "toy_torch", "score": 0.0, "max_score": 5.0}
    out = tmp_path / "g.csv"
    args = argparse.Namespace(
        out=str(out),
        lab="toy",
        submissions=".",
        labs_dir="labs",
        no_feedback=False,
        jobs=1,
        no_sandbox=False,
        memory="8G",
        notebook_timeout=60,
        probe_seed=None,
    )
    for status, code in (("graded", 0), ("missing", 0), ("error: the kernel died", 1), ("timeout: ...", 1)):
        monkeypatch.setattr(grade, "grade_submissions", lambda *a, status=status, **k: [{**row, "status": status}])
        assert command.grade_command(args, 5) == code, status
    err = capsys.readouterr().err
    assert "1 submission(s) could not be graded" in err
    # no notebook ran: the message names no log folder that does not exist
    assert "g-logs" not in err and "no notebook ran, so there are no logs" in err
    (tmp_path / "g-logs").mkdir()
    assert command.grade_command(args, 5) == 1
    assert f"logs in {tmp_path / 'g-logs'}" in capsys.readouterr().err


@pytest.mark.timeout(300)
def test_sigterm_stops_everything(tmp_path):
    """SIGTERM while a notebook loops: every process ends, the temporary files go, exit status 143."""
    need_sandbox()
    labs, source = toy_course(tmp_path)
    token = uuid.uuid4().hex
    looping = nbformat.from_dict(source)
    looping.cells[1].source = (
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; "
        f"time.sleep(3600)', '{token}'], start_new_session=True)\nwhile True:\n    pass"
    )
    (tmp_path / "subs" / "loop").mkdir(parents=True)
    nbformat.write(looping, tmp_path / "subs" / "loop" / "toy_torch.ipynb")
    tmpdir = Path(tempfile.mkdtemp(prefix="txs-"))  # short: the kernel's Unix sockets live under it
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "txcourse",
            "grade",
            str(tmp_path / "subs"),
            "--lab",
            "toy",
            "--labs-dir",
            str(labs),
            "--out",
            str(tmp_path / "g.csv"),
            "--cell-timeout",
            "600",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 200
        while not processes_with(token) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.5)
        assert processes_with(token), "the looping notebook never started"
        time.sleep(1)
        started = _descendants(proc.pid)
        assert any(b"bwrap" in cmd for cmd in started.values()), "no sandbox among the processes"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        leftovers = os.listdir(tmpdir)
        shutil.rmtree(tmpdir, ignore_errors=True)
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, err)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("txcourse: interrupted by SIGTERM: stopped every process"), err
    time.sleep(0.5)
    alive = {pid: cmd for pid, cmd in started.items() if _cmdline(pid) == cmd}
    assert alive == {} and processes_with(token) == [], f"left behind: {alive}, {processes_with(token)}"
    assert not (tmp_path / "g.csv").exists()
    assert leftovers == [], f"temporary files left: {leftovers}"


@pytest.mark.timeout(300)
def test_notebook_timeout_kills_the_notebook(tmp_path):
    """A loop that ignores interrupts runs into --notebook-timeout: status timeout, 0 points, nothing left running."""
    need_sandbox()
    labs, source = toy_course(tmp_path)
    token = uuid.uuid4().hex
    stubborn = nbformat.from_dict(source)
    stubborn.cells[1].source = (
        f"import signal, subprocess, sys\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)', '{token}'])\n"
        f"while True:\n    pass"
    )
    (tmp_path / "subs" / "stubborn").mkdir(parents=True)
    nbformat.write(stubborn, tmp_path / "subs" / "stubborn" / "toy_torch.ipynb")
    rows = grading.grade_submissions(
        tmp_path / "subs",
        "toy",
        tmp_path / "g.csv",
        timeout=600,
        labs_dir=labs,
        verbose=False,
        jobs=1,
        notebook_timeout=20,
        feedback=False,
    )
    assert rows[0]["status"] == "timeout: the notebook ran past --notebook-timeout 20 s" and rows[0]["score"] == 0
    assert processes_with(token) == []
    assert grading.failures(rows) == rows


@pytest.mark.timeout(300)
def test_cell_that_ignores_the_interrupt_fails_only_later_tests(tmp_path):
    """A cell that ignores SIGINT and sleeps past the cell timeout: the kernel is restarted, the test before
    it keeps its points, the test after it fails, the notebook is graded (not an error), nothing keeps running.
    With nbgrader's own Execute the whole notebook was an error with 0 points. The cell also tries to replace the
    kernel's connection file by a link to a host path, which the restart (unconfined) must not write through, and
    its sockets by folders, which would keep the new kernel from starting unless the restart cleared them: the
    runtime folder is read-only inside the sandbox now (issue 30), so each try is refused."""
    need_sandbox()
    labs, source = toy_course(tmp_path)
    token = uuid.uuid4().hex
    stubborn = nbformat.from_dict(source)
    planted = tmp_path / "written-through"  # the restart must not write the connection file through a link
    stubborn.cells[3].source = (
        f"import os, signal, subprocess, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        f"import json\nfrom ipykernel import get_connection_file\nconnection = get_connection_file()\n"
        f"info = json.load(open(connection))\ntry:\n    os.remove(connection)\n"
        f"    os.symlink({str(planted)!r}, connection)\n"
        f"except OSError as err:\n    print('PLANT REFUSED', err.errno, flush=True)\n"
        f"for name in ('shell_port', 'iopub_port', 'stdin_port', 'control_port', 'hb_port'):\n"
        f"    socket_path = f\"{{info['ip']}}-{{info[name]}}\"\n    try:\n"
        f"        os.remove(socket_path)\n        os.mkdir(socket_path)\n"
        f"    except OSError as err:\n        print('PLANT REFUSED', err.errno, flush=True)\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)', '{token}'])\n"
        f"time.sleep(3600)\n\ndef g(x):\n    return x + 1"
    )
    (tmp_path / "subs" / "stubborn").mkdir(parents=True)
    nbformat.write(stubborn, tmp_path / "subs" / "stubborn" / "toy_torch.ipynb")
    (tmp_path / "subs" / "honest").mkdir(parents=True)
    nbformat.write(source, tmp_path / "subs" / "honest" / "toy_torch.ipynb")
    rows = grading.grade_submissions(
        tmp_path / "subs",
        "toy",
        tmp_path / "g.csv",
        timeout=5,
        labs_dir=labs,
        verbose=False,
        jobs=1,
        notebook_timeout=150,
        feedback=True,
    )
    by_student = {row["student"]: row for row in rows}
    row = by_student["stubborn"]
    assert (row["status"], row["score"], row["failed_tests"]) == ("graded", 2.0, "test_g"), row
    assert (by_student["honest"]["status"], by_student["honest"]["score"]) == ("graded", 5.0)
    assert processes_with(token) == []
    assert not planted.exists() and not planted.is_symlink(), "the restart wrote through the planted link"
    feedback = (tmp_path / row["feedback"]).read_text(encoding="utf-8")
    assert "the kernel was restarted" in feedback, "the feedback does not say why the later tests failed"
    # issue 30: the runtime folder is read-only inside the sandbox (the launcher makes the sockets); the restart
    # still empties it (execute.empty_folder), should anything get there
    assert feedback.count("PLANT REFUSED 30") == 6, "the kernel could change its runtime folder"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(root: int) -> dict[int, bytes]:
    """Every process below ``root``: pid -> command line."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found[child] = _cmdline(child)
                frontier.append(child)
    return found


@pytest.mark.timeout(600)
def test_forbidden_source_scores_its_exercise_0_and_is_flagged(tmp_path, monkeypatch):
    """A solution cell that hides a call (here: a thread) loses its exercise's test cells, whatever nbgrader
    says; the CSV's ``forbidden`` column names them and the note says why; the honest notebook keeps all."""
    from txcourse.course.grading import forbidden

    monkeypatch.setitem(forbidden.FORBIDDEN, "toy", [])  # the toy lab as a course lab: the hiding rules apply
    labs, source = toy_course(tmp_path)
    subs = tmp_path / "submissions"
    threaded = nbformat.from_dict(source)
    threaded.cells[1].source = "import threading\n\ndef f(x):\n    return 2 * x"  # right; a thread hides a call
    for student, nb in (("honest", source), ("threads", threaded)):
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    out = tmp_path / "grades" / "toy.csv"
    rows = grading.grade_submissions(subs, "toy", out, timeout=20, labs_dir=labs, verbose=False, jobs=1, sandbox=False)
    rows = {r["student"]: r for r in rows}
    assert (rows["honest"]["score"], rows["honest"]["forbidden"], rows["honest"]["note"]) == (5.0, "", "")
    flagged = rows["threads"]
    assert (flagged["status"], flagged["score"], flagged["max_score"]) == ("graded", 3.0, 5.0)
    assert flagged["forbidden"] == "test_f" and flagged["failed_tests"] == "test_f"
    assert "threading" in flagged["note"] and "test_f" in flagged["note"] and "test_g" not in flagged["note"]
    with open(out, newline="", encoding="utf-8") as f:
        written = {r["student"]: r for r in csv.DictReader(f)}
    assert written["threads"]["forbidden"] == "test_f" and written["threads"]["score"] == "3.0"


def test_grade_rejects_a_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        grading.grade_submissions(tmp_path / "nope", "week3_attention", tmp_path / "out.csv", labs_dir=LABS)


def test_normalise_notebook_drops_outputs_and_is_idempotent():
    nb = _toy_source()
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="hi\n")]
    nb.cells[1].execution_count = 3
    nb.cells[1].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    nb.metadata["papermill"] = {"duration": 1.0}
    once = course.normalise_notebook(nbformat.writes(nb))
    assert course.normalise_notebook(once) == once
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
                return [
                    (c.metadata["nbgrader"]["grade_id"], c.metadata["nbgrader"].get("points"))
                    for c in nb.cells
                    if c.metadata.get("nbgrader", {}).get("grade")
                ]

            assert graded(source) and graded(source) == graded(student), name
            text = nbformat.writes(student)
            assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, name
            assert all(not c.get("outputs") for c in source.cells if c.cell_type == "code"), name
            if lab in grading.TRAINING_LABS:
                tagged = [c for c in source.cells if "parameters" in c.metadata.get("tags", [])]
                assert len(tagged) == 1 and "SMOKE = True" in tagged[0].source, name


def test_no_lab_sends_hidden_tests_to_the_students_kernel():
    """Issue 30, item 4: the source notebooks (what nbgrader puts back into the student's test cells when it
    grades) hold no hidden test, and labs/make_sources.py refuses one: a hidden check is a probe's, compared
    in the grader's process."""
    import importlib.util

    for lab in grading.LABS:
        for fw in grading.FRAMEWORKS:
            path = LABS / "source" / lab / f"{grading.notebook_name(lab, fw)}.ipynb"
            assert "HIDDEN TESTS" not in path.read_text(encoding="utf-8"), path
            assert grading.hidden_test_lines(path) == set(), path
    spec = importlib.util.spec_from_file_location("make_sources_hidden", LABS / "make_sources.py")
    make_sources = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_sources)
    from specs._cells import solution, tests

    cells = [
        solution("ex", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"),
        tests("test_f", 1, "assert f() == 1", probe="probe_emit('f', f())"),
    ]
    make_sources.check_cells("toy", cells)  # visible tests only: fine
    hidden = "assert f() == 1\n### BEGIN HIDDEN TESTS\nassert f() > 0\n### END HIDDEN TESTS"
    with pytest.raises(ValueError, match=r"toy/test_f \(torch\): hidden tests would run in the student's kernel"):
        make_sources.check_cells("toy", [cells[0], tests("test_f", 1, hidden, probe="probe_emit('f', f())")])


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
    # the loop is interrupted: split_heads/merge_heads never exist, so their test fails; the multi-head test
    # runs with txcourse's pieces (one mistake costs points once)
    assert got["looping", "torch"]["score"] == 15.0
    assert got["looping", "torch"]["failed_tests"] == "test_heads"
    # the deleted test cell is restored from the gradebook and run
    assert got["deleted", "torch"]["score"] == 17.0
    assert all(got[s, "tf"]["status"] == "missing" for s in ("correct", "looping", "deleted"))


def _python_in_sandbox(box, argv, probe: str) -> subprocess.CompletedProcess:
    """Run ``python -c probe`` inside the kernel's sandbox (bwrap's part of ``argv``), not a kernel."""
    command = argv[: argv.index("--", argv.index(box.bwrap)) + 1] + [str(Path(sys.prefix) / "bin" / "python")]
    return subprocess.run([*command, "-c", probe], capture_output=True, text=True, timeout=120)


def test_kernel_sandbox_keeps_what_lives_under_tmp(tmp_path):
    """A venv, checkout or bound folder under /tmp (a CI clone, pytest's tmp_path) stays visible above the
    private /tmp: the kernel's Python imports txcourse and reads a read-only folder bound there."""
    need_sandbox()
    shared, work, run = tmp_path / "ro", tmp_path / "work", tmp_path / "run"
    for folder in (shared, work, run):
        folder.mkdir()
    (shared / "x.txt").write_text("visible")
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap(), extra_ro=(shared,))
    argv = box.kernel_argv(work, run, dict(os.environ))
    assert argv.index("/tmp") < argv.index(str(shared)), "the private /tmp must come before the binds"
    probe = (
        f"import txcourse, numpy, pathlib\nprint(pathlib.Path({str(shared / 'x.txt')!r}).read_text())\n"
        f"try:\n    open({str(tmp_path / 'escape.txt')!r}, 'w').write('x')\n    print('wrote')\n"
        f"except OSError as err:\n    print('refused', type(err).__name__)\n"
    )
    done = _python_in_sandbox(box, argv, probe)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[:2] == ["visible", "refused"], done.stdout  # the folders holding the binds: read-only
    assert not (tmp_path / "escape.txt").exists()


def test_tool_environment_silences_tensorflow_logs(monkeypatch):
    """nbgrader fails a test cell with stderr output; TensorFlow's C++ log lines must not reach it."""
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    env = nbgrader_run.tool_env()
    assert env["TF_CPP_MIN_LOG_LEVEL"] == "3"
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)


@pytest.mark.timeout(600)
def test_warnings_never_cost_points_and_feedback_hides_hidden_tests(tmp_path):
    """A correct answer that warns and writes to stderr (Python and the file descriptor) gets full marks;
    a wrong one that fails a hidden test gets feedback with the error but no hidden test code."""
    labs, source = toy_course(tmp_path)
    subs = tmp_path / "submissions"
    warns = nbformat.from_dict(source)
    warns.cells[1].source = (
        "import os, sys, warnings\n\ndef f(x):\n    warnings.warn('f is slow')\n"
        "    print('to stderr', file=sys.stderr)\n    os.write(2, b'straight to fd 2\\n')\n"
        "    return 2 * x"
    )
    wrong = nbformat.from_dict(source)
    wrong.cells[1].source = "def f(x):\n    return 2 * x if x > 0 else 0"  # passes the visible test only
    for student, nb in (("warns", warns), ("wrong", wrong)):
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    out = tmp_path / "grades" / "toy.csv"
    rows = {
        r["student"]: r
        for r in grading.grade_submissions(
            subs, "toy", out, timeout=30, labs_dir=labs, verbose=False, jobs=2, sandbox=SANDBOX_PROBLEM is None
        )
    }
    assert (rows["warns"]["score"], rows["warns"]["status"]) == (5.0, "graded")
    assert rows["warns"]["cells"] == {"test_f": (2.0, 2.0), "test_g": (3.0, 3.0)}
    assert (rows["wrong"]["score"], rows["wrong"]["failed_tests"]) == (3.0, "test_f")
    hidden = grading.hidden_test_lines(labs / "source" / "toy" / "toy_torch.ipynb")
    assert hidden == {"assert f(-3) == -6"}
    warned = (out.parent / rows["warns"]["feedback"]).read_text(encoding="utf-8")
    assert "f is slow" in warned and "straight to fd 2" in warned  # shown, as stdout
    html = (out.parent / rows["wrong"]["feedback"]).read_text(encoding="utf-8")
    assert "AssertionError" in html and "the test cell (its hidden tests are not shown)" in html
    assert grading.feedback_leaks(html, hidden) == []
    # the check itself finds a leak: the hidden line, however it is highlighted or escaped
    assert grading.feedback_leaks('<span class="n">assert</span> f(-3) <span>==</span> -6', hidden) == [
        "assert f(-3) == -6"
    ]
    assert grading.feedback_leaks("### BEGIN HIDDEN TESTS", hidden) == ["BEGIN HIDDEN TESTS"]


def test_no_calls_to_detects_delegation_however_it_is_reached():
    from txcourse.notebook.checks import no_calls_to

    def reference(x):
        return 2 * x

    class Layer:
        def __init__(self):
            self.k = 2

        def forward(self, x):
            return self.k * x

    class Mine(Layer):  # a subclass that delegates through super()
        def forward(self, x):
            return super().forward(x)

    alias = reference
    with no_calls_to(reference, what="mine"):
        assert (lambda x: x + x)(3) == 6  # written, not delegated
    for delegate in (lambda x: alias(x), lambda x: Mine().forward(x)):
        with pytest.raises(AssertionError, match="calls txcourse's .*write it yourself"):
            with no_calls_to(reference, Layer, what="mine"):
                delegate(3)
    with pytest.raises(AssertionError, match="len"):  # builtins too
        with no_calls_to(len):
            len([1])
    with pytest.raises(ZeroDivisionError):  # the code's own error comes first
        with no_calls_to(reference):
            reference(1) / 0
    assert sys.getprofile() is None


def test_numpy_token_ids_get_a_clear_error():
    """A week-5 student passing NumPy ids to a txcourse layer is told so, not "'numpy.ndarray' object has no
    attribute 'is_floating_point'"."""
    torch = pytest.importorskip("torch")
    import numpy as np

    import txcourse.torch as tx
    from txcourse.config import TransformerConfig

    embed = tx.TransformerEmbedding(TransformerConfig(src_vocab_size=12, d_model=16, num_heads=2, max_len=10))
    with pytest.raises(TypeError, match=r"must be a torch.Tensor of integer token ids, got numpy.ndarray"):
        embed(np.array([[1, 2, 3]]))
    assert tuple(embed(torch.tensor([[1, 2, 3]])).shape) == (1, 3, 16)


def test_cgroup_cleanup_survives_folders_removed_meanwhile(tmp_path, monkeypatch):
    """kill_all (the run's folders) and done() (one task's) may clean up the same cgroup folders at once:
    a folder the other cleaner removed while this one walks the tree is skipped, not an error. (The real
    race, once in CI: a SIGTERM'd run exited 2 with FileNotFoundError from Path.rglob instead of 143;
    this simulation of it does not make the old rglob fail, so it guards the property, not that line.)"""
    top = tmp_path / "txcourse-run"
    (top / "0" / "inner").mkdir(parents=True)
    (top / "1").mkdir()
    monkeypatch.setattr(cgroups, "_task_cgroups", lambda marker: [top])
    real_scandir = os.scandir

    class Listed:  # what os.scandir returns, read at once: an iterator and context manager over its entries
        def __init__(self, entries):
            self.entries = iter(list(entries))

        def __iter__(self):
            return self

        def __next__(self):
            return next(self.entries)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def close(self):
            pass

    def scandir_then_vanish(path="."):
        entries = Listed(real_scandir(path))
        if not isinstance(path, int) and Path(path) == top:
            shutil.rmtree(top / "0", ignore_errors=True)  # the other cleaner got there first
        return entries

    monkeypatch.setattr(os, "scandir", scandir_then_vanish)
    cgroups._remove_cgroups("run/")
    assert not top.exists()
    cgroups._remove_cgroups("run/")  # nothing left: nothing to do, no error


@pytest.mark.timeout(600)
def test_feedback_renders_student_output_inert_and_hides_encoded_hidden_tests(tmp_path):
    """Graded as students are, beside a correct notebook: a student's HTML/JS/Markdown/SVG outputs are
    shown as text (no fake score banner, no script), and a pre_run_cell hook that prints the test cell's
    source in the next (non-test) cell, plain or base64/hex, shows no hidden line."""
    labs, source = toy_course(tmp_path)
    subs = tmp_path / "submissions"
    html = nbformat.from_dict(source)
    html.cells[3].source = (
        "from IPython.display import HTML, SVG, Javascript, Markdown, display\n"
        "display(HTML(\"<div id='fake'>Score: 9 / 9</div><script>alert('pwned-html')</script>\"))\n"
        "display(Javascript(\"alert('pwned-js')\"))\n"
        "display(Markdown(\"<b id='fake-md'>Score: 9 / 9</b>\"))\n"
        "display(SVG(\"<svg xmlns='http://www.w3.org/2000/svg'><script>alert('pwned-svg')</script></svg>\"))\n"
        "def g(x):\n    return x + 1\n"
        "HTML(\"<div id='fake-result'>Score: 9 / 9</div>\")"
    )
    hook = (
        "import base64\n_seen = []\n\ndef _leak(info):\n    for src in _seen:\n{prints}"
        "    _seen.append(info.raw_cell)\n\nget_ipython().events.register('pre_run_cell', _leak)\n\n"
        "def f(x):\n    return 2 * x"
    )
    plain = nbformat.from_dict(source)
    plain.cells[1].source = hook.format(prints="        print(src)\n")
    encoded = nbformat.from_dict(source)
    encoded.cells[1].source = hook.format(
        prints="        print(base64.b64encode(src.encode()).decode())\n"
        "        print('x', base64.encodebytes(src.encode() * 3).decode())\n"
        "        print(base64.urlsafe_b64encode(b'..' + src.encode()).decode())\n"
        "        print(src.encode().hex(), src.encode().hex(' '))\n"
    )
    html.cells.insert(
        2,
        nbformat.v4.new_markdown_cell(
            "<div id='fake-cell'>Score: 9 / 9</div><script>alert('pwned-md')</script>\n\n"
            "[click](javascript:alert('pwned-link')) <img src=x onerror=\"alert('pwned-img')\"> `<kept>` $x < y$"
        ),
    )
    html.cells.insert(3, nbformat.v4.new_raw_cell("<script>alert('pwned-raw')</script><b id='fake-raw'>9 / 9</b>"))
    for student, nb in (("alice", source), ("html", html), ("plain", plain), ("encoded", encoded)):
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    out = tmp_path / "grades" / "toy.csv"
    rows = {
        r["student"]: r
        for r in grading.grade_submissions(
            subs, "toy", out, timeout=30, labs_dir=labs, verbose=False, jobs=2, sandbox=SANDBOX_PROBLEM is None
        )
    }
    assert {s: (r["score"], r["status"]) for s, r in rows.items()} == {
        s: (5.0, "graded") for s in ("alice", "html", "plain", "encoded")
    }
    hidden = grading.hidden_test_lines(labs / "source" / "toy" / "toy_torch.ipynb")
    feedback = {s: (out.parent / r["feedback"]).read_text(encoding="utf-8") for s, r in rows.items()}
    correct = feedback["alice"]
    assert "test_f" in correct and "shown as text" not in correct and "[a hidden test line]" not in correct
    assert "[hidden test code, encoded]" not in correct
    page = feedback["html"]
    assert page.count("Score: 9 / 9") == 7  # three in the cell's source, three outputs, one Markdown cell: text
    assert not re.search(r"<(div|b|img) [^>]*(id=['\"]fake|onerror)", page), "student HTML rendered live"
    assert not re.search(r"<script[^>]*>[^<]*pwned", page), "student script embedded live"
    assert not re.search(r"href=['\"]?\s*javascript:", page), "a javascript: link in the feedback"
    assert "pwned-raw" in page and "pwned-md" in page and "<code>&lt;kept&gt;</code>" in page  # shown as text
    assert "text/html output, shown as text" in page and "pwned-js" in page and "pwned-svg" in page
    for student, note in (("plain", "[a hidden test line]"), ("encoded", "[hidden test code, encoded]")):
        assert note in feedback[student], f"{student}: the hook printed nothing the scrubber found"
        assert grading.feedback_leaks(feedback[student], hidden) == [], student


def test_kernel_sandbox_cannot_write_the_hosts_sysctls(tmp_path):
    """Red team, 2026-11-27: the grader runs as root, bwrap maps the kernel's uid 0 to the host's, and the host's
    root writes /proc/sys with every capability dropped (vm.swappiness changed on the host, vm.drop_caches emptied
    its page cache; kernel.core_pattern runs a program as root). /proc/sys is read-only in the sandbox."""
    need_sandbox()
    work, run = tmp_path / "work", tmp_path / "run"
    for folder in (work, run):
        folder.mkdir()
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap())
    argv = box.kernel_argv(work, run, dict(os.environ))
    probe = (
        "import os\n"
        "for p in ('/proc/sys/vm/swappiness', '/proc/sys/kernel/core_pattern'):\n"
        "    value = open(p).read()\n"
        "    try:\n"
        "        fd = os.open(p, os.O_WRONLY)\n"
        "        os.write(fd, value.encode())  # the same value back: harmless if it gets through\n"
        "        print('WROTE', p)\n"
        "    except OSError as err:\n"
        "        print('refused', p, err.errno)\n"
    )
    done = _python_in_sandbox(box, argv, probe)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "WROTE" not in done.stdout, done.stdout
    assert done.stdout.count("refused") == 2 and done.stdout.count(" 30\n") == 2, done.stdout  # EROFS
