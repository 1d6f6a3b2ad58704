"""Running nbgrader, papermill and pytest as subprocesses, and reading nbgrader's gradebook.

Every tool runs as a subprocess of this Python, in a process group of its own with its output in a
log file, so one bad notebook never takes the grader down with it (:func:`run_tool`). The scores
come back from the gradebook (:func:`read_scores`). nbgrader is imported only inside the functions
that read a gradebook.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from txcourse.course.grading.sandbox import ProcessGroups

__all__ = [
    "tool_env",
    "ToolRun",
    "run_tool",
    "tool_command",
    "run_nbgrader",
    "NotebookScore",
    "read_scores",
    "max_scores",
    "last_error",
    "GRADED_CAP",
    "FEEDBACK_CAP",
    "PROBE_NOTEBOOK_CAP",
    "oversized_outputs",
]

# Bytes of the files a workspace writes from what the student's code sent, checked (lstat, no link followed)
# before an unconfined process loads them: nbgrader's feedback step the autograded notebook, the grader the
# feedback page and the executed probe notebook (issue 30). A notebook whose files are over gets 0.
GRADED_CAP = 64 << 20
FEEDBACK_CAP = 128 << 20
PROBE_NOTEBOOK_CAP = 64 << 20


def tool_env(threads: Optional[int] = None, progress: bool = False) -> dict[str, str]:
    """The environment of every tool run: this Python's scripts first on PATH (nbgrader calls
    ``alembic`` by name), no progress bars, TensorFlow's C++ log off, and optionally a CPU thread
    limit for parallel runs.

    nbgrader scores a test cell with any stderr output as failed, and TensorFlow's C++ runtime logs
    even errors it recovers from there (``E0000 ... oneDNN supports DT_HALF only on platforms with
    AVX-512. Falling back to ...`` in week 3's float16 test): such a line must never cost points, so
    the level is 3 whatever the caller's environment says.
    """
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    if not progress:
        env["TXCOURSE_PROGRESS"] = "0"
    if threads:
        for name in (
            "OMP_NUM_THREADS",
            "MKL_NUM_THREADS",
            "OPENBLAS_NUM_THREADS",
            "TF_NUM_INTRAOP_THREADS",
            "TF_NUM_INTEROP_THREADS",
        ):
            env[name] = str(threads)
    return env


@dataclass
class ToolRun:
    """A finished tool run: its exit status, seconds, log file, and whether its timeout killed it."""

    returncode: int
    seconds: float
    log: Path
    timed_out: bool = False

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def run_tool(
    cmd: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    log: Path,
    timeout: Optional[float] = None,
    groups: Optional[ProcessGroups] = None,
    task: str = "",
) -> ToolRun:
    """Run ``cmd`` in its own process group, output to ``log``; on timeout kill the whole group.
    With ``groups`` the process is registered there (marked ``task``), so an interrupted grading
    run can end it, and what it leaves behind is ended when it returns."""
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        out.write("$ " + " ".join(str(c) for c in cmd) + "\n")
        out.flush()
        kwargs = dict(cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if groups is None:
            proc = subprocess.Popen([str(c) for c in cmd], env=env, start_new_session=True, **kwargs)
        else:
            proc = groups.popen([str(c) for c in cmd], env, task, **kwargs)
        try:
            code = proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
            timed_out = True
            out.write(f"\n[txcourse.course.grading] killed after {timeout:.0f} s\n")
        finally:
            if groups is not None:
                groups.done(proc, task)
    return ToolRun(code, time.perf_counter() - start, log, timed_out)


def tool_command(name: str) -> list[str]:
    """The command of a console script installed next to this Python (nbgrader, papermill)."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", name]


def run_nbgrader(
    args: Sequence[str],
    course: Path,
    env: dict[str, str],
    log: Path,
    timeout: Optional[float] = None,
    groups: Optional[ProcessGroups] = None,
    task: str = "",
) -> ToolRun:
    """``nbgrader <args>`` in the course folder ``course`` (:func:`run_tool`)."""
    return run_tool([*tool_command("nbgrader"), *args], course, env, log, timeout, groups, task)


@dataclass
class NotebookScore:
    """One student's autograded notebook, from the gradebook. ``cells``: grade id -> (score, max)."""

    notebook: str
    score: float
    max_score: float
    cells: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        return [name for name, (score, top) in self.cells.items() if score < top]

    @property
    def passed(self) -> list[str]:
        return [name for name, (score, top) in self.cells.items() if score > 0]


def read_scores(course: Path, lab: str, student: str) -> dict[str, NotebookScore]:
    """The autograded scores of ``student`` for ``lab`` in ``course``'s gradebook, by notebook.

    A notebook that was never autograded is left out. A test cell without an automatic score
    (nbgrader wants a manual grade, e.g. a deleted cell when add_missing_cells is off) counts 0.
    """
    from nbgrader.api import Gradebook, MissingEntry

    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            assignment = gb.find_assignment(lab)
        except MissingEntry:
            return out
        for notebook in assignment.notebooks:
            try:
                sub = gb.find_submission_notebook(notebook.name, lab, student)
            except MissingEntry:
                continue
            cells = {g.name: (float(g.auto_score or 0.0), float(g.max_score)) for g in sub.grades}
            if not (course / "autograded" / student / lab / f"{notebook.name}.ipynb").exists():
                continue
            out[notebook.name] = NotebookScore(
                notebook.name, sum(s for s, _ in cells.values()), float(sub.max_score), cells
            )
    return out


def max_scores(course: Path, lab: str) -> dict[str, float]:
    """Notebook id -> its total points, from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            return {nb.name: float(nb.max_score) for nb in gb.find_assignment(lab).notebooks}
        except MissingEntry:
            return {}


def oversized_outputs(course: Path, lab: str, student: str) -> str:
    """Why the files graded from ``student``'s ``lab`` in the workspace ``course`` may not be loaded: the
    first of the autograded notebook (over :data:`GRADED_CAP`), the feedback page (:data:`FEEDBACK_CAP`)
    and the executed probe notebook (``probe-out.ipynb``, :data:`PROBE_NOTEBOOK_CAP`) that is over its
    cap, in words; "" when none is (a file that does not exist is not over)."""
    checks = [(p, GRADED_CAP, "the autograded notebook") for p in _files(course / "autograded" / student / lab)]
    checks += [(p, FEEDBACK_CAP, "the feedback page") for p in _files(course / "feedback" / student / lab)]
    checks.append((course / "probe-out.ipynb", PROBE_NOTEBOOK_CAP, "the executed probe notebook"))
    for path, cap, what in checks:
        try:
            size = os.lstat(path).st_size
        except OSError:
            continue
        if size > cap:
            return f"{what} is {size / 2**20:.1f} MB, over its {cap >> 20} MB cap (too much output): not read, 0 points"
    return ""


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(folder / name for name in os.listdir(folder))
    except OSError:
        return []


def last_error(log: Path) -> str:
    """The last error nbgrader logged, in one line."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "no log"
    # the exception behind it (``nbclient.exceptions.DeadKernelError: Kernel died``), else nbgrader's last error
    raised = [
        line.strip()
        for line in lines
        if re.match(r"^\s*[\w.]*(Error|Exception|Interrupt)\b: ", line)
        and not line.startswith("[")
        and "NbGraderException" not in line
    ]  # nbgrader's own: "Please see the above traceback"
    errors = raised or [line.strip() for line in lines if "ERROR" in line or "Error" in line]
    return (errors[-1] if errors else (lines[-1].strip() if lines else "no output"))[:300]
