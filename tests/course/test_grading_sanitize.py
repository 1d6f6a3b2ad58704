"""The grammar of what a student's code prints (txcourse/course/grading/sanitize.py), and the sandbox's launcher
caps one by one (issue 30, item 6): a CPU quota (or the affinity fallback), the kernel's file descriptors
drained into at most ``log_cap`` bytes, the settings the launcher gets. The notebooks graded as students
are: tests/course/test_grading_caps.py."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from txcourse.course.grading import cgroups, probes, sandbox, sanitize


def _line(key: str, value, tol: str = "1e-05") -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return f"@txprobe {key} {tol} {base64.b64encode(buffer.getvalue()).decode('ascii')}"


def test_clean_text_strips_escapes_controls_and_bidi_and_cuts():
    text = "\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x9b2J\u202eevil\u2066 \x00\x07tab\tend"
    clean = sanitize.clean_text(text, 200)
    assert clean == "red ok evil tab end", clean
    cut = sanitize.clean_text("a" * 5000, 100)
    assert len(cut) == 100 and cut.endswith(" [cut]")
    with pytest.raises(ValueError, match="limit must be at least"):
        sanitize.clean_text("x", 3)


def test_probe_lines_accept_the_course_lines_and_refuse_forgeries_without_quoting_them():
    good = _line("apply_rotary(xofshape(2,3,4))", [1.0, 2.0])
    found, problem = sanitize.probe_lines(f"noise\n{good}\nmore noise\n")
    assert problem == "" and [(k, t) for k, t, _ in found] == [("apply_rotary(xofshape(2,3,4))", 1e-05)]
    forged = {
        "\x1b[31m" + "K" * 12000: "key that is not a name",
        "K" * 121: "key that is not a name",
    }
    for key, why in forged.items():
        found, problem = sanitize.probe_lines(good + "\n" + _line(key, [1.0]))
        assert found == [] and why in problem and "KKK" not in problem and "\x1b" not in problem, problem
    for tol in ("nan", "inf", "-1", "1e5000", "0x10"):
        assert "tolerance" in sanitize.probe_lines(_line("k", [1.0], tol))[1], tol
    assert "4 fields" in sanitize.probe_lines("@txprobe k 0.0 AAAA extra")[1]
    assert "4 fields" in sanitize.probe_lines("@txprobe  k 0.0 AAAA")[1]  # two spaces: an empty field
    assert "base64" in sanitize.probe_lines("@txprobe k 0.0 AA\x1b[2JAA")[1]
    assert "base64" in sanitize.probe_lines("@txprobe k 0.0 AAA")[1]  # not a multiple of 4


def test_read_probe_outputs_fails_a_probe_on_a_forged_line():
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    def cell(text):
        return new_code_cell("", outputs=[new_output("stream", name="stdout", text=text)])

    nb = new_notebook(
        cells=[cell(_line("f(3)", 6.0) + "\n"), cell(f"@txprobe \x1b[31m{'K' * 12000} 0.0 AAAA\n" + _line("f(3)", 6.0))]
    )
    out = probes.read_probe_outputs(nb, {"test_f": 0, "test_g": 1})
    assert set(out["test_f"]) == {"f(3)"} and float(out["test_f"]["f(3)"][1]) == 6.0
    assert isinstance(out["test_g"], str) and "not a name" in out["test_g"] and "KKK" not in out["test_g"]


def test_csv_row_and_failure_reasons_are_clean_and_cut():
    row = {
        "student": "s",
        "score": 2.0,
        "status": "error: \x1b[2J" + "x" * 3000,
        "note": "=HYPERLINK(1)\n" + "n" * 5000,
    }
    out = sanitize.csv_row(row, ("student", "score", "status", "note", "log"))
    assert out["score"] == 2.0 and out["log"] == "" and "\x1b" not in out["status"]
    assert len(out["status"]) == sanitize.FIELD_CHARS and len(out["note"]) == sanitize.NOTE_CHARS + 1
    assert out["note"].startswith("'=HYPERLINK(1) n")  # not a formula in a spreadsheet
    reasons = sanitize.failure_reasons({f"t{i}\x1b[1m": "\x1b[31m" + "w" * 999 for i in range(50)})
    assert len(reasons) == sanitize.MAX_REASONS + 1 and reasons["..."] == "10 more tests failed the check"
    assert all("\x1b" not in g + w and len(w) <= sanitize.REASON_CHARS for g, w in reasons.items())


def test_cpu_set_is_a_round_robin_share_of_the_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert [cgroups.cpu_set(str(t), 1.0) for t in range(5)] == [[0], [1], [2], [3], [0]]
    assert cgroups.cpu_set("1", 2.0) == [2, 3] and cgroups.cpu_set("3", 1.5) == [2, 3]  # 1.5 cores: 2 of them
    assert (
        cgroups.cpu_set("0", 4.0) == [] and cgroups.cpu_set("master-x", 1.0) == [] and cgroups.cpu_set("0", None) == []
    )


def test_launch_settings_give_a_cpu_quota_or_the_affinity_fallback(tmp_path, monkeypatch):
    box = sandbox.Sandbox(bwrap="/usr/bin/bwrap", cpus=1.0)
    env = {sandbox.MARKER: "run1/3/"}
    monkeypatch.setattr(sandbox, "cgroup_parents", lambda: (1, {"cpu": tmp_path / "cpu", "pids": tmp_path / "p"}))
    monkeypatch.setattr(sandbox, "_task_cgroups", lambda m: [tmp_path / "cpu" / "txcourse-run1" / "3"])
    monkeypatch.setattr(sandbox, "_CGROUP_FS", tmp_path)
    monkeypatch.setattr(sandbox, "cpu_controller", lambda: True)
    monkeypatch.setattr(cgroups, "cpu_controller", lambda: True)
    settings = box._launch_settings(env)
    run, task = settings["cgroups"]
    assert run == (str(tmp_path / "cpu" / "txcourse-run1"), {"cpu.shares": str(1024 * (os.cpu_count() or 1))}, False)
    assert task == (
        str(tmp_path / "cpu" / "txcourse-run1" / "3"),
        {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"},
        True,
    )
    assert settings["affinity"] == [] and settings["log_cap"] == sandbox.KERNEL_LOG_CAP
    monkeypatch.setattr(sandbox, "cpu_controller", lambda: False)
    monkeypatch.setattr(sandbox, "cpu_set", lambda task, cpus: [int(task) % 2])
    assert box._launch_settings(env)["affinity"] == [1]
    assert cgroups.cgroup_limits(2, "unified", 1 << 30, 64, 0.5)["cpu.max"] == "50000 100000"
    assert cgroups.run_limits(2, "unified") == {"cgroup.subtree_control": "+memory +pids +cpu"}


def _launch(box: sandbox.Sandbox, tmp_path: Path, code: str, task: str) -> subprocess.CompletedProcess:
    """Run ``code`` with the sandbox's Python through the launcher (cgroups, drain, rlimits) and bwrap."""
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "run").mkdir(exist_ok=True)
    groups = sandbox.ProcessGroups(f"caps{os.getpid()}")
    env = groups.env(dict(os.environ), task)
    argv = box.kernel_argv(tmp_path / "work", tmp_path / "run", env)
    end = argv.index("--", argv.index(box.bwrap))
    argv = argv[: end + 1] + [str(Path(sys.prefix) / "bin" / "python"), "-c", code]
    try:
        return subprocess.run(argv, capture_output=True, timeout=120, env=env)
    finally:
        groups.kill_all()


CPU_BURN = """
import os, resource, time
start = time.perf_counter()
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        while time.perf_counter() - start < 3:
            pass
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print("CPU", (used.ru_utime + used.ru_stime) / (time.perf_counter() - start), os.sched_getaffinity(0))
"""


@pytest.mark.timeout(300)
def test_the_sandbox_gets_its_cpu_quota_and_its_log_cap(tmp_path):
    from test_grading import need_sandbox

    need_sandbox()
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap(), cpus=0.1, log_cap=1 << 16)
    done = _launch(box, tmp_path, CPU_BURN, "0")
    assert done.returncode == 0, done.stderr[-2000:]
    rate = float(done.stdout.split()[1])
    if (
        cgroups.cpu_controller()
    ):  # three busy processes in a tenth of a core (unconfined: 0.44 on a loaded 2-core machine)
        assert rate < 0.2, done.stdout
    else:  # the fallback: pinned to one core (cpus rounded up)
        assert "{" in done.stdout and len(done.stdout.split("{")[1].split(",")) == 1, done.stdout
    flood = _launch(
        box, tmp_path, "import os\nfor _ in range(64): os.write(1, b'z' * (1 << 16))\nos.write(2, b'e' * 99)", "1"
    )
    assert flood.returncode == 0, flood.stderr[-2000:]
    out = flood.stdout + flood.stderr
    assert (1 << 16) <= len(out) < (1 << 16) + 200 and out.endswith(
        b"[txcourse grade: kernel log cut at 65536 bytes]\n"
    )
    assert json.loads(json.dumps(box._launch_settings({})))["cgroups"] == []  # no marker: no cgroup


def test_the_grader_caps_outputs_keeps_errors_and_results(monkeypatch):
    """RestartingExecute (nbgrader's side): past the cell's cap one note, then nothing; an error is kept
    (shortened: it fails the test cell); a result stays a result; the notebook's cap holds across cells."""
    from nbformat.v4 import new_code_cell

    from txcourse.course.grading.execute import OUTPUT_CUT, RestartingExecute

    client = RestartingExecute(cell_output_cap=1000, notebook_output_cap=2500)
    client.reset_execution_trackers()
    client.clear_before_next_output = False  # set by nbclient when it starts a cell

    def msg(kind, content):
        return {"msg_type": kind, "header": {"msg_type": kind}, "parent_header": {"msg_id": "m"}, "content": content}

    def stream(n):
        return msg("stream", {"name": "stdout", "text": "s" * n})

    cell = new_code_cell("")
    for _ in range(3):
        client.process_message(stream(400), cell, 0)
    client.process_message(msg("display_data", {"data": {"text/plain": "d" * 5000}, "metadata": {}}), cell, 0)
    client.process_message(
        msg("execute_result", {"data": {"text/plain": "r" * 5000}, "metadata": {}, "execution_count": 1}), cell, 0
    )
    client.process_message(msg("error", {"ename": "E" * 9000, "evalue": "v", "traceback": ["t" * 9000] * 50}), cell, 0)
    kinds = [o.output_type for o in cell.outputs]
    assert kinds == ["stream", "stream", "stream", "execute_result", "error"], kinds
    assert cell.outputs[2].text.startswith("[txcourse grade: output cut by the grader")
    assert cell.outputs[3].data == {"text/plain": OUTPUT_CUT.format(cell=1000, notebook=2500)}
    error = cell.outputs[4]
    assert len(error.ename) == 4000 and len(error.traceback) == 21 and "output cut" in error.traceback[-1]
    other = new_code_cell("")  # the next cell: its own cap, but the kept error spent the notebook's
    client.process_message(stream(900), other, 1)
    client.process_message(stream(900), other, 1)
    assert [o.text[:40] for o in other.outputs] == ["[txcourse grade: output cut by the grade"]
