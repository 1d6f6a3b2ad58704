"""Grading one submitted notebook in a workspace of its own, its kernel in the sandbox.

:func:`grade_one` (run by :func:`~txcourse.course.grading.grade.dispatch`, ``jobs`` at a time, with the
run's :class:`~txcourse.course.grading.context.GradingRun`) builds the workspace (a copy of the
gradebook, the config and the notebook's bytes, nothing else: :func:`make_workspace`), writes a
kernelspec that starts the kernel inside bubblewrap (:mod:`txcourse.course.grading.sandbox`), writes
the probe notebook and its kernel's (:func:`write_probe_run`), runs ``python -m txcourse.course.grading workspace`` there
(:func:`run_workspace`): :func:`grade_workspace` autogrades the notebook and writes its feedback with
nbgrader's Python API, in one process, then runs the probes; :func:`workspace_result` reads the scores
and the verdict.

Two folders per notebook, apart: the workspace, where nbgrader (unconfined, as the grader's user)
reads and writes the gradebook, the graded notebook and the feedback, is never bound into the
sandbox; the kernel works in a scratch folder of its own (its only writable folder besides the one
of its connection file and sockets), thrown away afterwards. Nothing the student's code leaves
behind is in a path nbgrader opens, writes or chmods, and the feedback is copied out only as a
regular file with one name, opened with ``O_NOFOLLOW`` (:func:`copy_out`).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any, Optional

import txcourse
from txcourse.course.grading.context import GradeTask, GradingRun
from txcourse.course.grading.nbgrader_run import ToolRun, last_error, oversized_outputs, read_scores, run_tool
from txcourse.course.grading.sandbox import write_kernelspec
from txcourse.course.grading.verdict import (
    MAX_PROBE_OUT,
    PROBE_IN,
    PROBE_KERNEL,
    PROBE_OUT,
    apply_verdict,
    run_student_probes,
    write_unconfined_kernelspec,
)

__all__ = ["GRADED", "MISSING", "GradeTask", "grade_one", "grade_workspace", "copy_out", "read_regular", "write_new"]

GRADED, MISSING = "graded", "missing"  # the statuses that are not failures (see command.failures)


# Appended to each workspace's nbgrader_config.py when the kernel is sandboxed: the kernel has no
# network, so nbgrader reaches it over Unix sockets in the runtime folder bound into the sandbox.
_SANDBOX_CONFIG = """
# --- txcourse.course.grading: the kernel runs in bwrap without network; talk to it over Unix sockets
c.KernelManager.transport = "ipc"
c.KernelManager.ip = {ip!r}
c.KernelManager.connection_file = {connection!r}
c.RestartingExecute.sandboxed_runtime = True
"""


def _write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, a file that must not exist yet (``O_EXCL``: never through a link)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def read_regular(path: Path, limit: Optional[int] = None) -> bytes:
    """The bytes of ``path`` only if it is a regular file with one name (opened with ``O_NOFOLLOW`` and
    checked with ``fstat``: no link, device or FIFO is followed) of at most ``limit`` bytes. Raises
    OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise OSError(f"{path.name} is not a regular file with one name")
        if limit is not None and info.st_size > limit:
            raise OSError(f"{path.name} is larger than {limit} bytes")
        return f.read()


def write_new(path: Path, data: bytes) -> None:
    """Replace ``path`` with a new file holding ``data``: a link or file there is removed, never written through."""
    if os.path.lexists(path):
        os.unlink(path)
    _write_new(path, data)


def copy_out(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` only if ``src`` is a regular file with one name (:func:`read_regular`);
    ``dest`` is replaced, never written through a link (:func:`write_new`). Raises OSError otherwise."""
    write_new(dest, read_regular(src))


def grade_one(run: GradingRun, task: GradeTask) -> dict[str, Any]:
    """Grade one notebook in a workspace of its own: a copy of the gradebook, the config and the
    notebook, nothing else (:func:`make_workspace`). In the sandbox the kernel works in
    ``<runtime root>/<n>s``, a scratch folder outside the workspace, removed afterwards. With the run's
    probes, the lab's probes then run in a second sandboxed kernel whose ``txcourse`` is the allow-listed copy
    (:func:`write_probe_run`: its own runtime and scratch folders), and a test cell whose probe does not
    match the reference scores 0 (:mod:`~txcourse.course.grading.verdict`). Returns the CSV fields it
    decides (score, status, ...), ``html`` (the feedback in the workspace) and ``probe_failures``."""
    env, scratch = make_workspace(run, task)
    positions, probe_scratch = write_probe_run(run, task, env)
    try:
        done = run_workspace(run, task, env, bool(positions))
    finally:
        for folder in (scratch, probe_scratch):  # what the student's code left: never read, thrown away
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        if run.runtime_root is not None:  # the runtime folders (connection files, sockets), emptied: issue 30
            for name in (str(task.index), f"{task.index}p"):
                shutil.rmtree(run.runtime_root / name, ignore_errors=True)
    return workspace_result(run, task, done, positions)


def make_workspace(run: GradingRun, task: GradeTask) -> tuple[dict[str, str], Optional[Path]]:
    """The workspace of ``task`` (which must not exist yet) and, in the sandbox, the kernel's runtime and
    scratch folders and its kernelspec. Returns the environment of the workspace's tools and the scratch
    folder (None unconfined)."""
    ws, tag, lab = task.workspace, str(task.index), run.lab
    ws.mkdir(parents=True)  # fresh: it must not exist yet
    (ws / "submitted" / task.student / lab).mkdir(parents=True)
    master = run.masters[task.name]
    shutil.copy2(master / "gradebook.db", ws / "gradebook.db")
    shutil.copy2(master / "nbgrader_config.py", ws / "nbgrader_config.py")
    _write_new(ws / "submitted" / task.student / lab / f"{task.name}.ipynb", task.data)
    env = dict(run.env)
    if run.box is None:
        return env, None
    assert run.runtime_root is not None and run.groups is not None
    runtime, scratch = run.runtime_root / tag, run.runtime_root / f"{tag}s"
    runtime.mkdir(mode=0o700)
    scratch.mkdir(mode=0o700)  # the kernel's working folder: nothing of the workspace is in it
    with open(ws / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write(_SANDBOX_CONFIG.format(ip=str(runtime / "k"), connection=str(runtime / "kernel.json")))
    write_kernelspec(ws / "jupyter", run.box.kernel_argv(scratch, runtime, run.groups.env(env, tag)))
    env.update(JUPYTER_PATH=str(ws / "jupyter"), JUPYTER_RUNTIME_DIR=str(runtime))
    return env, scratch


def write_probe_run(run: GradingRun, task: GradeTask, env: dict[str, str]) -> tuple[dict[str, int], Optional[Path]]:
    """The probe notebook of ``task`` in its workspace (:func:`~txcourse.course.grading.probes.probe_notebook`)
    and the kernelspec of the kernel that runs it (sandboxed, or unconfined with ``--no-sandbox``), ``env``
    updated. Returns grade id -> index of each probe cell (empty: no probes) and the probe kernel's scratch
    folder (None unconfined)."""
    probing, ws, tag = run.probing, task.workspace, str(task.index)
    if probing is None or not probing.reference.get(task.name):
        return {}, None
    import nbformat

    from txcourse.course.grading.probes import probe_notebook

    student = nbformat.reads(task.data.decode("utf-8"), as_version=4)
    probes, skip = probing.probes.for_notebook(task.name), probing.probes.skipped(task.name)
    forbid = (run.lab, task.name.rsplit("_", 1)[-1])  # what the lab forbids raises first (issue 30)
    probe_nb, positions = probe_notebook(student, run.master_notebooks[task.name], probes, probing.seed, skip, forbid)
    nbformat.write(probe_nb, ws / PROBE_IN)
    if run.box is None:  # unconfined (--no-sandbox): the allow-listed copy first on the kernel's path
        probe_runtime = ws / "probe-runtime"
        probe_runtime.mkdir()
        write_unconfined_kernelspec(ws / "jupyter", PROBE_KERNEL, probing.package_copy)
        env.update(JUPYTER_PATH=str(ws / "jupyter"), TXPROBE_RUNTIME=str(probe_runtime))
        return positions, None
    assert run.runtime_root is not None and run.groups is not None
    probe_runtime, probe_scratch = run.runtime_root / f"{tag}p", run.runtime_root / f"{tag}ps"
    probe_runtime.mkdir(mode=0o700)
    probe_scratch.mkdir(mode=0o700)
    argv = run.box.kernel_argv(probe_scratch, probe_runtime, run.groups.env(env, tag), probing.package_copy)
    write_kernelspec(ws / "jupyter", argv, name=PROBE_KERNEL)
    env["TXPROBE_RUNTIME"] = str(probe_runtime)
    return positions, probe_scratch


def run_workspace(run: GradingRun, task: GradeTask, env: dict[str, str], probe: bool) -> ToolRun:
    """``python -m txcourse.course.grading workspace`` in the workspace: nbgrader autograde, then
    generate_feedback, then (``probe``) the probe notebook, in one process (one start-up of nbgrader, not
    two), killed after the notebook timeout."""
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []  # not the workspace first on sys.path
    package_root = str(Path(txcourse.__file__).resolve().parents[1])  # the txcourse that runs this, not another install
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    options = run.options
    command = [sys.executable, *safe_path, "-m", "txcourse.course.grading", "workspace", run.lab, task.student]
    command += [str(options.cell_timeout), *(["--feedback"] if options.feedback else [])]
    command += ["--probe"] if probe else []
    return run_tool(
        command,
        task.workspace,
        env,
        task.log,
        timeout=options.notebook_timeout,
        groups=run.groups,
        task=str(task.index),
    )


def workspace_result(run: GradingRun, task: GradeTask, done: ToolRun, positions: dict[str, int]) -> dict[str, Any]:
    """The CSV fields of a workspace's run: its status, nbgrader's scores, the probes' verdict
    (:func:`~txcourse.course.grading.verdict.apply_verdict`) and the feedback file in the workspace."""
    ws, lab = task.workspace, run.lab
    score = read_scores(ws, lab, task.student).get(task.name)
    out: dict[str, Any] = {"seconds": done.seconds}
    if done.timed_out:
        out["status"] = f"timeout: the notebook ran past --notebook-timeout {run.options.notebook_timeout} s"
        return out
    too_big = oversized_outputs(ws, lab, task.student)  # issue 30: nothing over its cap is read
    if too_big:
        out["status"] = f"error: {too_big}"
        return out
    if score is None:
        out["status"] = "error: nbgrader could not grade it: " + last_error(task.log)
        return out
    out.update(
        status=GRADED,
        score=score.score,
        max_score=score.max_score,
        failed_tests=";".join(score.failed),
        cells=dict(score.cells),
    )
    if positions and run.probing is not None:
        try:
            executed = read_regular(ws / PROBE_OUT, MAX_PROBE_OUT)
        except OSError:
            executed = None  # every probe then fails
        apply_verdict(out, run.probing, task.name, executed, positions)
    html = ws / "feedback" / task.student / lab / f"{task.name}.html"
    if run.options.feedback and html.exists():
        out["html"] = html
    return out


def grade_workspace(lab: str, student: str, cell_timeout: int, feedback: bool, probe: bool = False) -> int:
    """``python -m txcourse.course.grading workspace``: in a workspace (the current folder), ``nbgrader
    autograde`` the student's notebook, then ``generate_feedback`` if it was graded, with nbgrader's
    Python API in this one process; the logs go to stdout. With ``probe``, then the probe notebook
    (:func:`~txcourse.course.grading.verdict.run_student_probes`). Exit status 0 when both worked."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=os.getcwd()).load_config()
    config.CourseDirectory.root = os.getcwd()
    config.Execute.timeout = cell_timeout
    api = NbGraderAPI(config=config)
    steps = [("autograde", lambda: api.autograde(lab, student, force=True, create=True))]
    if feedback:
        steps.append(("generate_feedback", lambda: api.generate_feedback(lab, student, force=True)))
    for name, step in steps:
        if oversized_outputs(Path(os.getcwd()), lab, student):  # issue 30: not loaded, 0 points (grade_one)
            print(f"[txcourse.course.grading] {oversized_outputs(Path(os.getcwd()), lab, student)}", flush=True)
            return 1
        print(f"[txcourse.course.grading] nbgrader {name} {lab} --student={student}", flush=True)
        result = step()
        print(result.get("log", ""), result.get("error", ""), sep="\n", flush=True)
        if not result.get("success"):
            return 1
    if probe and not oversized_outputs(Path(os.getcwd()), lab, student):
        print(f"[txcourse.course.grading] probes {lab} --student={student}", flush=True)
        run_student_probes(Path(os.getcwd()), cell_timeout)
    return 0
