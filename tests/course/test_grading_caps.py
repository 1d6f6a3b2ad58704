"""Every channel capped, nothing unbounded on the host (issue 30, item 6): graded exactly as students are.

One ``grade_submissions`` run of the toy lab (tests/course/test_grading.py), with a probe for ``test_f``
(``labs/probes/toy.json`` written here), two at a time, ``--memory 2G``, in a subprocess that reports the
peak memory of the grader and of each workspace process (``[peak]`` lines) and the least free space of the
temporary folder's disk while grading. Beside a correct notebook (full marks), notebooks that each add, to
a correct solution:

- ``result``: a cell whose *result* is a 150 MB string (the kernel turns it into one line);
- ``sender``: the kernel's own ``session.send`` around the kernel-side cap: twelve 6 MB stream messages,
  one 100 MB message and a 20 MB display (the grader's caps: frames over ``max_message`` dropped, the cell's
  and the notebook's output cut);
- ``fdwriter``: 300 MB written to the kernel's original stdout file descriptor (the launcher's drain passes
  ``KERNEL_LOG_CAP`` bytes to the log);
- ``fallocator``: ``posix_fallocate`` of three 1 GiB files in the kernel's runtime folder (read-only inside
  the sandbox), its working folder and ``/tmp`` (tmpfs of ``WORK_SIZE`` and ``TMP_SIZE``);
- ``forger``: ``f`` prints forged ``@txprobe`` lines, a 12 KB key with ANSI escapes: the probe fails with a
  reason that quotes none of it, and the CSV and the banner hold no control character;
- ``bloater``: a 40 MB comment and 32 MB of output (what the grader keeps of it: four cells of 8 M characters),
  graded with the source caps lifted (they refuse it at intake; GRADED_CAP is the defence behind them):
  its autograded notebook is over ``GRADED_CAP`` and is never loaded by nbgrader's feedback step nor the
  grader: 0 points, status ``error: ... over its cap``.

Each keeps the points of its correct solution (but the forger's probed test and the bloater), the honest
notebook all of them, every feedback page is small, the log of ``fdwriter`` is under the cap, no workspace
process grows past :data:`WORKSPACE_PEAK` (nor past :data:`HONEST_TIMES` the honest one's, the sender
:data:`SENDER_TIMES`, the bloater aside), and the disk loses less than 1 GiB.

``test_cpu_quota_keeps_the_neighbour_on_time``: a notebook that starts 200 busy processes (each in a session
of its own: Linux's scheduler autogroups share the CPU between sessions, so without that 200 processes in
the sandbox's one session would be one share among others, cgroup or not) graded beside one
whose ``f`` cell needs 3 s of CPU within a 30 s cell timeout (interrupted, ``f`` is never defined): the
neighbour keeps full marks because each
sandbox has its equal share of the cores (cgroup cpu quota, or the affinity fallback).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from support.hostile_imports import hostile_imports_allowed  # noqa: E402
from test_grading import ROOT, need_sandbox, toy_course  # noqa: E402

from txcourse.course.grading import nbgrader_run, sandbox, sanitize  # noqa: E402

WORKSPACE_PEAK = 1 << 20  # kB of any workspace process (nbgrader, unconfined): the bloater holds its 40 MB source
HONEST_TIMES = 1.5  # an attack's workspace process against the honest one's (140 MB), but the sender's and bloater's
SENDER_TIMES = 5.0  # the sender makes it receive and cut 92 MB of messages: measured 4.0x (558 MB, loaded machine)
PROBES = {
    "allow": {"torch": [], "tf": []},
    "probes": {"torch": {"test_f": "probe_emit('f(3)', f(3) * 1.0)\n"}},
    "skip": {},
}

RESULT = "'x' * (150 << 20)"
SENDER = """
k = get_ipython().kernel
for _ in range(12):
    k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'q' * (6 << 20)}, parent=k.get_parent())
k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'w' * (100 << 20)}, parent=k.get_parent())
k.session.send(k.iopub_socket, 'display_data', {'data': {'text/plain': 'd' * (20 << 20)}, 'metadata': {},
               'transient': {}}, parent=k.get_parent())
"""
FDWRITER = """
import os, sys
chunk = b'z' * (1 << 20)
for _ in range(300):
    os.write(sys.stdout._original_stdstream_copy, chunk)
print('FD WRITES DONE')
"""
FALLOCATOR = """
import os
from ipykernel.kernelapp import IPKernelApp
runtime = os.path.dirname(IPKernelApp.instance().connection_file)
for folder in (runtime, '.', '/tmp'):
    done = 0
    for i in range(3):
        try:
            fd = os.open(os.path.join(folder, f'big{i}'), os.O_CREAT | os.O_WRONLY, 0o600)
            os.posix_fallocate(fd, 0, 1 << 30)
            os.close(fd)
            done += 1
        except OSError as err:
            print('FALLOCATE REFUSED', folder == runtime, i, err.errno)
            break
    print('FALLOCATED', folder == runtime, done)
"""
FORGER = (
    "def f(x):\n"
    "    key = '\\x1b[31m' + 'K' * 12000 + '\\x1b]0;pwned\\x07'\n"
    "    print('@txprobe', key, '0.0', 'AAAA')\n"
    "    print('@txprobe f(3) 1e-5 \\x1b[2J' + 'A' * 12000)\n"
    "    return 2 * x"
)
BLOATER_CELL = "print('x' * (8 << 20))"

GRADE = """
import json, os, shutil, sys, tempfile, threading, time
from txcourse.course import grading
from txcourse.course.grading import submissions, workspace
# The bloater's 40 MB of source is refused at intake by the source caps (tests/course/test_grading_source_caps.py);
# lifted here so that it gets past intake and GRADED_CAP, the defence behind them, is what is checked.
submissions.MAX_CELL_SOURCE = submissions.MAX_NOTEBOOK_SOURCE = submissions.MAX_NOTEBOOK_BYTES
SHIM = (  # VmHWM: the peak of this process's own memory (ru_maxrss would count the grader's, inherited at fork)
    "import atexit, runpy, sys; "
    "atexit.register(lambda: print('[peak] workspace vmhwm_kb', "
    "[line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')][0], flush=True)); "
    "sys.argv[0] = 'txcourse.course.grading'; runpy.run_module('txcourse.course.grading', run_name='__main__', alter_sys=True)"
)
_run = workspace.run_tool
def run_tool(cmd, *args, **kwargs):  # the same workspace process, reporting its own peak memory at exit
    cmd = list(cmd)
    at = cmd.index("-m")
    cmd[at : at + 2] = ["-c", SHIM]
    return _run(cmd, *args, **kwargs)
workspace.run_tool = run_tool
free = [shutil.disk_usage(tempfile.gettempdir()).free]
stop = threading.Event()
def watch():
    while not stop.wait(0.2):
        free.append(shutil.disk_usage(tempfile.gettempdir()).free)
threading.Thread(target=watch, daemon=True).start()
rows = grading.grade_submissions(sys.argv[1], "toy", sys.argv[2], timeout=int(sys.argv[5]), labs_dir=sys.argv[3],
                                 course_dir=sys.argv[4], verbose=True, jobs=2, memory="2G", probe_seed=7)
stop.set()
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(json.dumps({"grader_vmhwm_kb": hwm,
                  "free_before": free[0], "free_least": min(free)}))
"""


def _notebook(source, *cells: str, f_source: str = ""):
    """``source`` as a student hands it in (no markers), ``cells`` added before the first test, f replaced."""
    nb = nbformat.from_dict(source)
    for cell in nb.cells:
        cell.source = re.sub(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", "", cell.source, flags=re.M)
    if f_source:
        nb.cells[1].source = f_source
    for at, code in enumerate(cells):
        nb.cells.insert(2 + at, nbformat.v4.new_code_cell(code))
    return nb


def _grade(tmp_path: Path, students: dict, timeout: int = 60) -> tuple[dict, dict, subprocess.CompletedProcess]:
    labs, _ = toy_course(tmp_path)
    (labs / "probes").mkdir()
    (labs / "probes" / "toy.json").write_text(json.dumps(PROBES))
    subs = tmp_path / "subs"
    for student, nb in students.items():
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    grades, course = tmp_path / "grades", tmp_path / "course"
    tmpdir = Path(tempfile.mkdtemp(prefix="txc-"))
    try:
        done = subprocess.run(
            [sys.executable, "-c", GRADE, str(subs), str(grades / "toy.csv"), str(labs), str(course), str(timeout)],
            env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir)},
            capture_output=True,
            text=True,
            timeout=1500,
        )
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
    with open(grades / "toy.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(done.stdout[-3000:])
    return rows, report, done


def _peaks(grades: Path, rows: dict) -> dict[str, int]:
    """kB of each notebook's workspace process, from the ``[peak]`` line of its log."""
    out = {}
    for student, row in rows.items():
        found = re.findall(r"\[peak\] workspace vmhwm_kb (\d+)", (grades / row["log"]).read_text(errors="replace"))
        out[student] = int(found[-1]) if found else -1
    return out


# Minutes of grading and gigabytes of hostile output, and 200 busy processes for a minute and a half: `make
# test-caps` (and `make mutants`) run them; `make test` keeps the oversized-output tests below (CI's 45 minutes).
CAPS_ONLY = pytest.mark.skipif(os.environ.get("TXCOURSE_CAPS_TESTS") != "1", reason="slow: run by `make test-caps`")


@pytest.fixture(autouse=True)
def _hostile_imports_allowed():
    """The capped cells import what a submission may not (ipykernel, ...): the kernel's list is widened so that
    these tests show the caps, not the import guard, holding them (tests/support/hostile_imports.py)."""
    with hostile_imports_allowed():
        yield


@CAPS_ONLY
@pytest.mark.timeout(1800)
def test_every_channel_is_capped(tmp_path):
    need_sandbox()
    labs_source = toy_course(tmp_path / "src")[1]
    bloater = _notebook(labs_source, *[BLOATER_CELL] * 4)
    bloater.cells[3].source = "# " + "b" * (40 << 20) + "\n" + bloater.cells[3].source
    students = {
        "alice": labs_source,
        "result": _notebook(labs_source, RESULT),
        "sender": _notebook(labs_source, SENDER),
        "fdwriter": _notebook(labs_source, FDWRITER),
        "fallocator": _notebook(labs_source, FALLOCATOR),
        "forger": _notebook(labs_source, f_source=FORGER),
        "bloater": bloater,
    }
    rows, report, done = _grade(tmp_path, students)
    grades = tmp_path / "grades"
    peaks = _peaks(grades, rows)
    print("peaks (kB):", peaks, "report:", report)

    for student in ("alice", "result", "sender", "fdwriter", "fallocator"):  # right answers: every point
        assert (rows[student]["score"], rows[student]["status"]) == ("5.0", "graded"), rows[student]
    forged = rows["forger"]  # nbgrader passed test_f, the probe's forged lines failed it
    assert (forged["score"], forged["failed_tests"]) == ("3.0", "test_f"), forged
    assert "@txprobe key that is not a name" in forged["note"], forged["note"]  # quotes none of the line
    assert len(forged["note"]) <= sanitize.NOTE_CHARS
    with open(grades / "toy.csv", encoding="utf-8") as f:
        text = f.read()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text) and "KKKK" not in text
    banner = (grades / forged["feedback"]).read_text(encoding="utf-8").split("Checked outside your notebook")[1]
    banner = banner.split("</div>")[0]
    assert "not a name" in banner and "\x1b" not in banner and "KKKK" not in banner and len(banner) < 2000

    bloated = rows["bloater"]
    assert bloated["score"] == "0.0" and bloated["status"].startswith("error: the autograded notebook is "), bloated
    assert "over its 64 MB cap" in bloated["status"] and not bloated["feedback"], bloated

    for student, row in rows.items():
        if row["feedback"]:  # every page that was written is small
            assert (grades / row["feedback"]).stat().st_size < 3 * sandbox.OUTPUT_CAP, student
    assert "output cut" in (grades / rows["result"]["feedback"]).read_text()
    assert "output cut by the grader" in (grades / rows["sender"]["feedback"]).read_text()
    log = (grades / rows["fdwriter"]["log"]).stat().st_size
    assert log < 4 * sandbox.KERNEL_LOG_CAP, f"the log grew to {log} bytes"
    feedback = (grades / rows["fallocator"]["feedback"]).read_text()
    assert re.search(r"FALLOCATED True 0", feedback) and "FALLOCATE REFUSED True 0 30" in feedback  # EROFS
    assert "FALLOCATED False 3" not in feedback  # the tmpfs of the working folder and /tmp stop it

    assert min(peaks.values()) > 0, peaks  # every workspace reported
    assert max(peaks.values()) < WORKSPACE_PEAK, f"a workspace process peaked at {max(peaks.values()) >> 10} MB"
    honest = peaks.pop("alice")
    assert peaks.pop("sender") < SENDER_TIMES * honest, (honest, peaks)
    peaks.pop("bloater")  # holds its 40 MB of source (the source caps lifted, as in the GRADE script)
    assert max(peaks.values()) < HONEST_TIMES * honest, (honest, peaks)
    assert report["grader_vmhwm_kb"] < 1 << 20, report
    lost = report["free_before"] - report["free_least"]
    assert lost < 1 << 30, f"the disk lost {lost >> 20} MB while grading"  # the fallocator asked for 3 GiB


CPU_HOG = """
import os, time
for _ in range(200):
    if os.fork() == 0:
        os.setsid()  # a session each: Linux's autogroups would otherwise share the CPU by session, not process
        while True:
            pass
time.sleep(20)
"""
CPU_WORK = """
import time
time.sleep(4)
start = time.process_time()
while time.process_time() - start < 3:
    pass
print('CPU WORK DONE', time.perf_counter())
"""


@CAPS_ONLY
@pytest.mark.timeout(1200)
def test_cpu_quota_keeps_the_neighbour_on_time(tmp_path):
    need_sandbox()
    labs_source = toy_course(tmp_path / "src")[1]
    neighbour = _notebook(labs_source, f_source=CPU_WORK + "\ndef f(x):\n    return 2 * x")  # no f if interrupted
    students = {"hog": _notebook(labs_source, CPU_HOG), "neighbour": neighbour}
    rows, _, done = _grade(tmp_path, students, timeout=30)
    print(sandbox.confinement())
    assert (rows["neighbour"]["score"], rows["neighbour"]["status"]) == ("5.0", "graded"), rows["neighbour"]
    assert "CPU WORK DONE" in (tmp_path / "grades" / rows["neighbour"]["feedback"]).read_text()
    # the hog starves its own kernel in its one core (its cell may time out): its points are its business
    assert rows["hog"]["status"] == "graded" and float(rows["hog"]["score"]) <= 5.0, rows["hog"]


def test_oversized_outputs_names_the_file_over_its_cap(tmp_path):
    graded = tmp_path / "autograded" / "s" / "lab"
    graded.mkdir(parents=True)
    (graded / "lab_torch.ipynb").write_bytes(b"x" * 10)
    assert nbgrader_run.oversized_outputs(tmp_path, "lab", "s") == ""
    with open(graded / "lab_torch.ipynb", "wb") as f:
        f.truncate(nbgrader_run.GRADED_CAP + 1)  # sparse: no disk used
    assert nbgrader_run.oversized_outputs(tmp_path, "lab", "s").startswith("the autograded notebook is 64.0 MB")
    (graded / "lab_torch.ipynb").unlink()
    with open(tmp_path / "probe-out.ipynb", "wb") as f:
        f.truncate(nbgrader_run.PROBE_NOTEBOOK_CAP + (1 << 20))
    assert nbgrader_run.oversized_outputs(tmp_path, "lab", "s").startswith("the executed probe notebook is 65.0 MB")
