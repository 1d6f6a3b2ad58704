"""``make test-labs``: the course's own lab notebooks checked end to end (``grading check``).

For every lab notebook, :func:`check_labs` executes the source version with papermill (smoke
parameters), re-runs the result under ``pytest --nbval-lax``, then autogrades the source version
(it must get full marks) and the unchanged student version (it must get zero), checks that the
committed student version is what nbgrader makes now, and that the feedback of both shows no hidden
test code (:func:`~txcourse.course.grading.hidden.feedback_leaks`). :func:`format_check_table` prints the
scores and times. The course's own notebooks are trusted: they run without the sandbox.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from txcourse.course.grading.course import (
    FRAMEWORKS,
    LABS,
    SMOKE_PARAMETERS,
    TRAINING_LABS,
    copy_config,
    normalise_notebook,
    notebook_name,
)
from txcourse.course.grading.hidden import feedback_leaks, hidden_test_lines
from txcourse.course.grading.nbgrader_run import (
    NotebookScore,
    ToolRun,
    read_scores,
    run_nbgrader,
    run_tool,
    tool_command,
    tool_env,
)

__all__ = ["LabCheck", "make_course", "check_labs", "format_check_table"]

SOLUTION, BLANK = "solution", "blank"  # the two pseudo-students of check_labs


def make_course(labs_dir: Path, course: Path, labs: Iterable[str], env: dict[str, str], logs: Path) -> list[ToolRun]:
    """A fresh nbgrader course in ``course``: the config, ``source/<lab>`` and a gradebook made by
    ``generate_assignment`` (which also writes ``release/<lab>``). Returns the nbgrader runs."""
    if course.exists():
        shutil.rmtree(course)
    (course / "source").mkdir(parents=True)
    copy_config(labs_dir, course)
    runs = []
    for lab in labs:
        shutil.copytree(labs_dir / "source" / lab, course / "source" / lab)
        run = run_nbgrader(["generate_assignment", lab, "--force"], course, env, logs / f"generate_{lab}.log")
        if run.returncode != 0 or not (course / "release" / lab).is_dir():
            raise RuntimeError(f"nbgrader generate_assignment {lab} failed:\n{run.tail()}")
        runs.append(run)
    return runs


@dataclass
class LabCheck:
    """What :func:`check_labs` found for one lab notebook."""

    lab: str
    framework: str
    run_seconds: float = float("nan")
    nbval_seconds: float = float("nan")
    autograde_seconds: float = float("nan")  # for the whole lab (both notebooks, both students)
    solution: Optional[NotebookScore] = None
    blank: Optional[NotebookScore] = None
    problems: list[str] = field(default_factory=list)

    @property
    def notebook(self) -> str:
        return notebook_name(self.lab, self.framework)

    @property
    def ok(self) -> bool:
        return not self.problems


def _stale_release(labs_dir: Path, course: Path, lab: str) -> list[str]:
    """Differences between the committed student notebooks and the ones nbgrader makes now."""
    problems = []
    fresh, committed = course / "release" / lab, labs_dir / "release" / lab
    for path in sorted(fresh.glob("*.ipynb")):
        mine = committed / path.name
        if not mine.exists():
            problems.append(f"labs/release/{lab}/{path.name} is missing (run `make labs`)")
        elif normalise_notebook(path.read_text(encoding="utf-8")) != mine.read_text(encoding="utf-8"):
            problems.append(f"labs/release/{lab}/{path.name} is out of date (run `make labs`)")
    return problems


@dataclass(frozen=True)
class _LabRun:
    """Where one lab's check runs: its nbgrader course, logs and executed notebooks, and how."""

    lab: str
    labs_dir: Path
    build: Path
    env: dict
    timeout: int
    say: Callable[[str], None]

    @property
    def logs(self) -> Path:
        return self.build / "logs" / self.lab

    @property
    def course(self) -> Path:
        return self.build / "course" / self.lab


def _check_one_lab(
    lab: str, labs_dir: Path, build: Path, frameworks: Sequence[str], timeout: int, threads: Optional[int], say
) -> list[LabCheck]:
    """Check one lab in every framework: execute and nbval its source, autograde the solution and the blank
    student version, and look for hidden tests in their feedback."""
    run = _LabRun(lab, labs_dir, build, tool_env(threads=threads), timeout, say)
    (build / "executed").mkdir(parents=True, exist_ok=True)
    results = [LabCheck(lab, fw) for fw in frameworks]
    try:
        make_course(labs_dir, run.course, [lab], run.env, run.logs)
    except RuntimeError as error:
        for r in results:
            r.problems.append(str(error))
        return results
    stale = _stale_release(labs_dir, run.course, lab)
    for r in results:
        r.problems += [p for p in stale if r.notebook in p]
        _execute(run, r)
    autograde = _autograde(run, results, frameworks)
    feedback = _check_feedback(run, results)
    say(f"  {lab}: autograde {autograde.seconds:.0f} s, feedback {feedback.seconds:.0f} s")
    return results


def _execute(run: _LabRun, r: LabCheck) -> None:
    """Run the source notebook with papermill (smoke parameters for a training lab), then nbval its outputs."""
    name, executed = r.notebook, run.build / "executed"
    source = run.labs_dir / "source" / run.lab / f"{name}.ipynb"
    out = executed / f"{name}.ipynb"
    params = []
    if run.lab in TRAINING_LABS:
        for key, value in SMOKE_PARAMETERS.items():
            params += ["-p", key, str(value)]
    papermill = [*tool_command("papermill"), source, out, "-k", "python3", "--no-progress-bar"]
    papermill += ["--cwd", executed, "--execution-timeout", str(run.timeout), *params]
    done = run_tool(papermill, run.build, run.env, run.logs / f"papermill_{name}.log")
    r.run_seconds = done.seconds
    if done.returncode != 0:
        r.problems.append(f"papermill failed on {source} (log {done.log}):\n{done.tail()}")
        run.say(f"  {name}: papermill FAILED ({done.seconds:.0f} s)")
        return
    nbval = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env"]
    nbval += [f"--nbval-sanitize-with={run.labs_dir / 'nbval_sanitize.cfg'}", f"--nbval-cell-timeout={run.timeout}"]
    done = run_tool([*nbval, str(out)], run.build, run.env, run.logs / f"nbval_{name}.log")
    r.nbval_seconds = done.seconds
    if done.returncode != 0:
        r.problems.append(f"pytest --nbval-lax failed on {out} (log {done.log}):\n{done.tail()}")
    run.say(
        f"  {name}: papermill {r.run_seconds:.0f} s, nbval {r.nbval_seconds:.0f} s"
        f"{'' if done.returncode == 0 else ' FAILED'}"
    )


def _autograde(run: _LabRun, results: list[LabCheck], frameworks: Sequence[str]):
    """The source version and the unchanged student version, graded like submissions: the first scores every
    point, the second none."""
    lab, course = run.lab, run.course
    for student, folder in ((SOLUTION, run.labs_dir / "source" / lab), (BLANK, run.labs_dir / "release" / lab)):
        target = course / "submitted" / student / lab
        target.mkdir(parents=True, exist_ok=True)
        for fw in frameworks:
            name = notebook_name(lab, fw)
            shutil.copy2(folder / f"{name}.ipynb", target / f"{name}.ipynb")
    done = run_nbgrader(
        ["autograde", lab, "--create", "--force", f"--Execute.timeout={run.timeout}"],
        course,
        run.env,
        run.logs / "autograde.log",
    )
    scores = {student: read_scores(course, lab, student) for student in (SOLUTION, BLANK)}
    for r in results:
        r.autograde_seconds = done.seconds
        r.solution = scores[SOLUTION].get(r.notebook)
        r.blank = scores[BLANK].get(r.notebook)
        if r.solution is None or r.blank is None:
            r.problems.append(f"nbgrader autograde did not grade {r.notebook} (log {done.log}):\n{done.tail()}")
            continue
        if r.solution.max_score <= 0:
            r.problems.append(f"{r.notebook} has no graded test cells")
        if r.solution.failed:
            r.problems.append(
                f"the source version of {r.notebook} loses points in {r.solution.failed} "
                f"(autograded notebook: {course / 'autograded' / SOLUTION / lab})"
            )
        if r.blank.passed:
            r.problems.append(
                f"the unchanged student version of {r.notebook} passes {r.blank.passed}: "
                f"those tests do not call the student's code"
            )
    return done


def _check_feedback(run: _LabRun, results: list[LabCheck]):
    """The feedback both pseudo-students would get: never any hidden test code (markers, lines, tracebacks)."""
    lab, course = run.lab, run.course
    feedback = run_nbgrader(["generate_feedback", lab, "--force"], course, run.env, run.logs / "feedback.log")
    for r in results:
        hidden = hidden_test_lines(run.labs_dir / "source" / lab / f"{r.notebook}.ipynb")
        for student in (SOLUTION, BLANK):
            html = course / "feedback" / student / lab / f"{r.notebook}.html"
            if not html.exists():
                r.problems.append(f"nbgrader generate_feedback wrote no {html} (log {feedback.log})")
                continue
            leaks = feedback_leaks(html.read_text(encoding="utf-8"), hidden)
            if leaks:
                r.problems.append(f"the feedback {html} shows hidden tests: {leaks[:5]}")
    return feedback


def check_labs(
    labs_dir: str | os.PathLike = "labs",
    build_dir: str | os.PathLike = "_build/labs",
    labs: Sequence[str] = LABS,
    frameworks: Sequence[str] = FRAMEWORKS,
    jobs: int = 2,
    timeout: int = 600,
    threads: Optional[int] = None,
    verbose: bool = True,
) -> list[LabCheck]:
    """Execute, re-validate and autograde every lab notebook; see the module docstring.

    Labs run ``jobs`` at a time, each in its own course under ``build_dir/course/<lab>`` (its own
    gradebook), the slowest first. ``threads`` limits the CPU threads of every notebook (default:
    the cores divided among the jobs). Executed notebooks land in ``build_dir/executed``, logs in
    ``build_dir/logs``.
    """
    labs_dir, build = Path(labs_dir).resolve(), Path(build_dir).resolve()
    build.mkdir(parents=True, exist_ok=True)
    if threads is None:
        threads = max(1, (os.cpu_count() or 1) // max(1, jobs))

    def say(message: str) -> None:
        if verbose:
            print(message, flush=True)

    def check_one(lab: str) -> list[LabCheck]:
        try:
            return _check_one_lab(lab, labs_dir, build, frameworks, timeout, threads, say)
        except Exception as error:  # noqa: BLE001 - report it with the lab, check the others
            say(f"  {lab}: {type(error).__name__}: {error}")
            return [LabCheck(lab, fw, problems=[f"{lab}: {type(error).__name__}: {error}"]) for fw in frameworks]

    order = sorted(labs, key=lambda lab: (lab not in TRAINING_LABS, LABS.index(lab) if lab in LABS else 99))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        found = dict(zip(order, pool.map(check_one, order)))
    return [r for lab in labs for r in found[lab]]


def _score(s: Optional[NotebookScore]) -> str:
    return "-" if s is None else f"{s.score:g}/{s.max_score:g}"


def format_check_table(results: Sequence[LabCheck]) -> str:
    """The table ``make test-labs`` prints: lab, framework, scores, times, verdict."""
    rows = [("lab", "framework", "solution", "blank", "run (s)", "nbval (s)", "autograde (s)", "ok")]
    for r in results:
        rows.append(
            (
                r.lab,
                r.framework,
                _score(r.solution),
                _score(r.blank),
                f"{r.run_seconds:.0f}",
                f"{r.nbval_seconds:.0f}",
                f"{r.autograde_seconds:.0f}",
                "yes" if r.ok else "NO",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
