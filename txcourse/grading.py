"""Grading the lab notebooks with nbgrader: student versions, self-checks, and grading submissions.

The labs live in ``labs/`` as an nbgrader course (``labs/nbgrader_config.py``):
``labs/source/<lab>/<lab>_<framework>.ipynb`` are the instructor versions with
solutions and hidden tests (built by ``labs/make_sources.py``),
``labs/release/<lab>/`` the student versions made from them by nbgrader.

Three jobs, each also a command (``python -m txcourse.grading ...``):

- :func:`release` (``make labs``): run ``nbgrader generate_assignment`` for
  every lab inside ``labs/`` and normalise the student notebooks it writes;
- :func:`check_labs` (``make test-labs``): for every lab notebook, execute
  the source version with papermill (smoke parameters), re-run the result
  under ``pytest --nbval-lax``, then autograde the source version (it must get
  full marks) and the unchanged student version (it must get zero) and print
  a table of the scores read from nbgrader's gradebook, and check that their
  feedback shows no hidden test code (:func:`feedback_leaks`);
- :func:`grade_submissions` (``make grade``): autograde a folder of student
  submissions, each notebook in a workspace of its own (a copy of the
  gradebook, the config, the notebook) with its kernel confined by bubblewrap
  (:mod:`txcourse.sandbox`), ``jobs`` at a time, and write a CSV of scores,
  one log and one HTML feedback file per notebook.

nbgrader, papermill and nbval run as subprocesses of this Python, so one bad
notebook never takes the grader down with it. :func:`check_labs` runs the
course's own notebooks, which are trusted, without the sandbox. Imports
nothing heavy at import time (no framework, no nbgrader).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from txcourse.sandbox import (DEFAULT_MEMORY, ProcessGroups, Sandbox, SandboxUnavailable, find_bwrap, parse_size,
                              write_kernelspec)

__all__ = ["LABS", "FRAMEWORKS", "TRAINING_LABS", "SMOKE_PARAMETERS", "DEFAULT_CELL_TIMEOUT", "notebook_name",
           "normalise_notebook", "release", "make_course", "read_scores", "NotebookScore", "LabCheck",
           "check_labs", "format_check_table", "grade_submissions", "GradingInterrupted", "DEFAULT_NOTEBOOK_TIMEOUT",
           "CSV_FIELDS", "failures", "hidden_test_lines", "feedback_leaks", "add_grade_options", "grade_command", "default_grades_csv", "format_grades", "main"]

LABS = ("week1_seq2seq", "week2_positional", "week3_attention", "week4_encoder", "week5_decoder",
        "week6_training")
FRAMEWORKS = ("torch", "tf")
TRAINING_LABS = ("week1_seq2seq", "week6_training")  # the labs with a papermill `parameters` cell
SMOKE_PARAMETERS = {"SMOKE": True, "DEVICE": "cpu"}  # one minute on a CPU
DEFAULT_CELL_TIMEOUT = 300  # seconds per cell when grading; an endless loop costs this much, then its points
SOLUTION, BLANK = "solution", "blank"  # the two pseudo-students of check_labs
_STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")


def notebook_name(lab: str, framework: str) -> str:
    """``week3_attention``, ``torch`` -> ``week3_attention_torch`` (the nbgrader notebook id)."""
    return f"{lab}_{framework}"


# ---------------------------------------------------------------------------
# Subprocesses
# ---------------------------------------------------------------------------

def _env(threads: Optional[int] = None, progress: bool = False) -> dict[str, str]:
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
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS",
                     "TF_NUM_INTEROP_THREADS"):
            env[name] = str(threads)
    return env


@dataclass
class _Run:
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


def _run(cmd: Sequence[str], cwd: Path, env: dict[str, str], log: Path, timeout: Optional[float] = None,
         groups: Optional[ProcessGroups] = None, task: str = "") -> _Run:
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
            out.write(f"\n[txcourse.grading] killed after {timeout:.0f} s\n")
        finally:
            if groups is not None:
                groups.done(proc, task)
    return _Run(code, time.perf_counter() - start, log, timed_out)


def _tool(name: str) -> list[str]:
    """The command of a console script installed next to this Python (nbgrader, papermill)."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", name]


def _nbgrader(args: Sequence[str], course: Path, env: dict[str, str], log: Path,
              timeout: Optional[float] = None, groups: Optional[ProcessGroups] = None, task: str = "") -> _Run:
    return _run([*_tool("nbgrader"), *args], course, env, log, timeout, groups, task)


# ---------------------------------------------------------------------------
# Notebooks and courses
# ---------------------------------------------------------------------------

_KEEP_CELL_METADATA = ("nbgrader", "tags", "deletable", "editable")


def normalise_notebook(text: str) -> str:
    """A notebook's JSON in the committed form: no outputs, no execution counts, only the cell
    metadata that matters (nbgrader's, tags, deletable/editable), nbformat's key order."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in _KEEP_CELL_METADATA}
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    return nbformat.writes(nb) + "\n"


def _copy_config(labs_dir: Path, course: Path) -> None:
    shutil.copy2(labs_dir / "nbgrader_config.py", course / "nbgrader_config.py")


def make_course(labs_dir: Path, course: Path, labs: Iterable[str], env: dict[str, str], logs: Path) -> list[_Run]:
    """A fresh nbgrader course in ``course``: the config, ``source/<lab>`` and a gradebook made by
    ``generate_assignment`` (which also writes ``release/<lab>``). Returns the nbgrader runs."""
    if course.exists():
        shutil.rmtree(course)
    (course / "source").mkdir(parents=True)
    _copy_config(labs_dir, course)
    runs = []
    for lab in labs:
        shutil.copytree(labs_dir / "source" / lab, course / "source" / lab)
        run = _nbgrader(["generate_assignment", lab, "--force"], course, env, logs / f"generate_{lab}.log")
        if run.returncode != 0 or not (course / "release" / lab).is_dir():
            raise RuntimeError(f"nbgrader generate_assignment {lab} failed:\n{run.tail()}")
        runs.append(run)
    return runs


def release(labs_dir: str | os.PathLike = "labs", labs: Sequence[str] = LABS, verbose: bool = True) -> list[Path]:
    """Make the student versions: ``nbgrader generate_assignment <lab>`` inside ``labs_dir`` for every
    lab (its gradebook goes to a temporary folder), then normalise ``labs_dir/release/<lab>/*.ipynb``.

    Returns the notebooks written.
    """
    labs_dir = Path(labs_dir).resolve()
    written = []
    with tempfile.TemporaryDirectory(prefix="txcourse-release-") as tmp:
        env = _env()
        db = f"sqlite:///{Path(tmp) / 'gradebook.db'}"
        for lab in labs:
            log = Path(tmp) / f"generate_{lab}.log"
            run = _nbgrader(["generate_assignment", lab, "--force", f"--db={db}"], labs_dir, env, log)
            out_dir = labs_dir / "release" / lab
            if run.returncode != 0 or not out_dir.is_dir():
                raise RuntimeError(f"nbgrader generate_assignment {lab} failed:\n{run.tail()}")
            for path in sorted(out_dir.glob("*.ipynb")):
                path.write_text(normalise_notebook(path.read_text(encoding="utf-8")), encoding="utf-8")
                written.append(path)
                if verbose:
                    print(f"wrote {path.relative_to(labs_dir.parent) if labs_dir.parent in path.parents else path}")
    return written


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
            out[notebook.name] = NotebookScore(notebook.name, sum(s for s, _ in cells.values()),
                                               float(sub.max_score), cells)
    return out


HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def hidden_test_lines(source_notebook: str | os.PathLike) -> set[str]:
    """The code lines (stripped, 12 characters or more) that only the hidden tests of a source notebook
    hold: each appears between the hidden-test markers and nowhere else in the notebook (not even as
    part of a longer line)."""
    import nbformat

    nb = nbformat.read(str(source_notebook), as_version=4)
    hidden, shown = set(), []
    for cell in nb.cells:
        inside = False
        for line in cell.source.splitlines():
            text = " ".join(line.split())
            if HIDDEN_BEGIN in line:
                inside = True
            elif HIDDEN_END in line:
                inside = False
            elif inside:
                if len(text) >= 12:
                    hidden.add(text)
            else:
                shown.append(text)
    visible = "\n".join(shown)
    return {line for line in hidden if line not in visible}


def feedback_leaks(html: str, hidden_lines: Iterable[str]) -> list[str]:
    """What a feedback file shows of the hidden tests: the markers, and each hidden code line found in its
    text (tags taken out and entities decoded, so a highlighted or escaped line is found too)."""
    import html as html_module

    text = html_module.unescape(re.sub(r"<[^>]*>", "", html))
    text = "\n".join(" ".join(line.split()) for line in text.splitlines())
    found = [marker for marker in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS") if marker in text]
    found += sorted(line for line in hidden_lines if line in text)
    return found


# ---------------------------------------------------------------------------
# make test-labs
# ---------------------------------------------------------------------------

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


def _check_one_lab(lab: str, labs_dir: Path, build: Path, frameworks: Sequence[str], timeout: int,
                   threads: Optional[int], say) -> list[LabCheck]:
    env = _env(threads=threads)
    logs = build / "logs" / lab
    course = build / "course" / lab
    executed = build / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    results = [LabCheck(lab, fw) for fw in frameworks]
    try:
        make_course(labs_dir, course, [lab], env, logs)
    except RuntimeError as error:
        for r in results:
            r.problems.append(str(error))
        return results
    stale = _stale_release(labs_dir, course, lab)
    for r in results:
        name = r.notebook
        r.problems += [p for p in stale if name in p]
        source = labs_dir / "source" / lab / f"{name}.ipynb"
        out = executed / f"{name}.ipynb"
        params = []
        if lab in TRAINING_LABS:
            for key, value in SMOKE_PARAMETERS.items():
                params += ["-p", key, str(value)]
        run = _run([*_tool("papermill"), source, out, "-k", "python3", "--no-progress-bar", "--cwd", executed,
                    "--execution-timeout", str(timeout), *params], build, env, logs / f"papermill_{name}.log")
        r.run_seconds = run.seconds
        if run.returncode != 0:
            r.problems.append(f"papermill failed on {source} (log {run.log}):\n{run.tail()}")
            say(f"  {name}: papermill FAILED ({run.seconds:.0f} s)")
            continue
        run = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
                    "--nbval-current-env", f"--nbval-sanitize-with={labs_dir / 'nbval_sanitize.cfg'}",
                    f"--nbval-cell-timeout={timeout}", str(out)], build, env, logs / f"nbval_{name}.log")
        r.nbval_seconds = run.seconds
        if run.returncode != 0:
            r.problems.append(f"pytest --nbval-lax failed on {out} (log {run.log}):\n{run.tail()}")
        say(f"  {name}: papermill {r.run_seconds:.0f} s, nbval {r.nbval_seconds:.0f} s"
            f"{'' if run.returncode == 0 else ' FAILED'}")
    # The source version and the unchanged student version, graded like submissions.
    for student, folder in ((SOLUTION, labs_dir / "source" / lab), (BLANK, labs_dir / "release" / lab)):
        target = course / "submitted" / student / lab
        target.mkdir(parents=True, exist_ok=True)
        for fw in frameworks:
            name = notebook_name(lab, fw)
            shutil.copy2(folder / f"{name}.ipynb", target / f"{name}.ipynb")
    run = _nbgrader(["autograde", lab, "--create", "--force", f"--Execute.timeout={timeout}"], course, env,
                    logs / "autograde.log")
    scores = {student: read_scores(course, lab, student) for student in (SOLUTION, BLANK)}
    for r in results:
        r.autograde_seconds = run.seconds
        r.solution = scores[SOLUTION].get(r.notebook)
        r.blank = scores[BLANK].get(r.notebook)
        if r.solution is None or r.blank is None:
            r.problems.append(f"nbgrader autograde did not grade {r.notebook} (log {run.log}):\n{run.tail()}")
            continue
        if r.solution.max_score <= 0:
            r.problems.append(f"{r.notebook} has no graded test cells")
        if r.solution.failed:
            r.problems.append(f"the source version of {r.notebook} loses points in {r.solution.failed} "
                              f"(autograded notebook: {course / 'autograded' / SOLUTION / lab})")
        if r.blank.passed:
            r.problems.append(f"the unchanged student version of {r.notebook} passes {r.blank.passed}: "
                              f"those tests do not call the student's code")
    # the feedback both pseudo-students would get: never any hidden test code (markers, lines, tracebacks)
    feedback = _nbgrader(["generate_feedback", lab, "--force"], course, env, logs / "feedback.log")
    for r in results:
        hidden = hidden_test_lines(labs_dir / "source" / lab / f"{r.notebook}.ipynb")
        for student in (SOLUTION, BLANK):
            html = course / "feedback" / student / lab / f"{r.notebook}.html"
            if not html.exists():
                r.problems.append(f"nbgrader generate_feedback wrote no {html} (log {feedback.log})")
                continue
            leaks = feedback_leaks(html.read_text(encoding="utf-8"), hidden)
            if leaks:
                r.problems.append(f"the feedback {html} shows hidden tests: {leaks[:5]}")
    say(f"  {lab}: autograde {run.seconds:.0f} s, feedback {feedback.seconds:.0f} s")
    return results


def check_labs(labs_dir: str | os.PathLike = "labs", build_dir: str | os.PathLike = "_build/labs",
               labs: Sequence[str] = LABS, frameworks: Sequence[str] = FRAMEWORKS, jobs: int = 2,
               timeout: int = 600, threads: Optional[int] = None, verbose: bool = True) -> list[LabCheck]:
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
        rows.append((r.lab, r.framework, _score(r.solution), _score(r.blank), f"{r.run_seconds:.0f}",
                     f"{r.nbval_seconds:.0f}", f"{r.autograde_seconds:.0f}", "yes" if r.ok else "NO"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# make grade
# ---------------------------------------------------------------------------

def _find_submissions(student_dir: Path, notebooks: Sequence[str]) -> tuple[dict[str, Path], dict[str, str]]:
    """A student's notebooks (notebook id -> path), looked up in the student's folder and in its
    ``<lab>/`` subfolder, and a note for each notebook that was not found under its own name.

    A near miss (``week2_positional_torch (1).ipynb``, ``Week2_Positional_torch.ipynb``) stands in for
    a missing notebook when it is the only other notebook that close to that name: it is graded and
    the note says so; otherwise the note names the notebooks that were there."""
    import difflib

    lab = notebooks[0].rsplit("_", 1)[0] if notebooks else ""
    found: dict[str, Path] = {}
    others: list[Path] = []
    for folder in (student_dir / lab, student_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.ipynb")):
            if path.stem in notebooks and path.stem not in found:
                found[path.stem] = path
            elif path.stem not in notebooks:
                others.append(path)
    notes: dict[str, str] = {}
    missing = [n for n in notebooks if n not in found]
    if not missing or not others:
        return found, notes

    def key(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")

    # each other notebook goes to the expected name it is closest to, if it is close enough
    best: dict[str, list[Path]] = {n: [] for n in missing}
    for path in others:
        ratios = {n: difflib.SequenceMatcher(None, key(path.stem), n).ratio() for n in notebooks}
        name = max(ratios, key=ratios.get)
        if name in best and (ratios[name] >= 0.8 or key(path.stem).startswith(name)):
            best[name].append(path)
    for name in missing:
        if len(best[name]) == 1:
            found[name] = best[name][0]
            notes[name] = f"graded from {best[name][0].name!r} (expected {name}.ipynb)"
        else:
            names = ", ".join(repr(p.name) for p in (best[name] or others))
            notes[name] = f"expected {name}.ipynb, found {names}"
    return found, notes


def _readable(path: Path) -> Optional[str]:
    """None if ``path`` is a notebook nbformat can read, else why not."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - any reason makes it ungradable
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None


def _max_scores(course: Path, lab: str) -> dict[str, float]:
    """Notebook id -> its total points, from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            return {nb.name: float(nb.max_score) for nb in gb.find_assignment(lab).notebooks}
        except MissingEntry:
            return {}


def _last_error(log: Path) -> str:
    """The last error nbgrader logged, in one line."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "no log"
    # the exception behind it (``nbclient.exceptions.DeadKernelError: Kernel died``), else nbgrader's last error
    raised = [line.strip() for line in lines
              if re.match(r"^\s*[\w.]*(Error|Exception|Interrupt)\b: ", line) and not line.startswith("[")
              and "NbGraderException" not in line]  # nbgrader's own: "Please see the above traceback"
    errors = raised or [line.strip() for line in lines if "ERROR" in line or "Error" in line]
    return (errors[-1] if errors else (lines[-1].strip() if lines else "no output"))[:300]


CSV_FIELDS = ("student", "lab", "notebook", "framework", "score", "max_score", "status", "failed_tests",
              "feedback", "log", "note")
DEFAULT_NOTEBOOK_TIMEOUT = 1800  # seconds per notebook, all cells and the kernel's start included
GRADED, MISSING = "graded", "missing"  # the statuses that are not failures (see GradeRun.failures)

# Appended to each workspace's nbgrader_config.py when the kernel is sandboxed: the kernel has no
# network, so nbgrader reaches it over Unix sockets in the runtime folder bound into the sandbox.
_SANDBOX_CONFIG = """
# --- txcourse.grading: the kernel runs in bwrap without network; talk to it over Unix sockets
c.KernelManager.transport = "ipc"
c.KernelManager.ip = {ip!r}
c.KernelManager.connection_file = {connection!r}
"""


@dataclass
class _Task:
    """One notebook of one student, graded in ``workspace``."""

    index: int
    student: str
    name: str
    path: Path
    workspace: Path
    log: Path
    note: str = ""


class GradingInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived while grading; every process was ended and the temporary files removed."""


def _grade_one(task: _Task, lab: str, master: Path, runtime_root: Optional[Path], sandbox: Optional[Sandbox],
               groups: ProcessGroups, env: dict[str, str], cell_timeout: int, notebook_timeout: int,
               feedback: bool) -> dict[str, Any]:
    """Grade one notebook in a workspace of its own: a copy of the gradebook, the config and the
    notebook, nothing else. Returns the CSV fields it decides (score, status, ...)."""
    ws, tag = task.workspace, str(task.index)
    (ws / "submitted" / task.student / lab).mkdir(parents=True)
    shutil.copy2(master / "gradebook.db", ws / "gradebook.db")
    shutil.copy2(master / "nbgrader_config.py", ws / "nbgrader_config.py")
    shutil.copy2(task.path, ws / "submitted" / task.student / lab / f"{task.name}.ipynb")
    env = dict(env)
    if sandbox is not None:
        assert runtime_root is not None
        workdir = ws / "autograded" / task.student / lab
        workdir.mkdir(parents=True)
        runtime = runtime_root / tag
        runtime.mkdir(mode=0o700)
        with open(ws / "nbgrader_config.py", "a", encoding="utf-8") as f:
            f.write(_SANDBOX_CONFIG.format(ip=str(runtime / "k"), connection=str(runtime / "kernel.json")))
        write_kernelspec(ws / "jupyter", sandbox.kernel_argv(workdir, runtime, groups.env(env, tag)))
        env.update(JUPYTER_PATH=str(ws / "jupyter"), JUPYTER_RUNTIME_DIR=str(runtime))
    # nbgrader autograde, then generate_feedback, in one process (one start-up of nbgrader, not two)
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []  # not the workspace first on sys.path
    package_root = str(Path(__file__).resolve().parents[1])  # the txcourse that runs this, not another install
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    run = _run([sys.executable, *safe_path, "-m", "txcourse.grading", "workspace", lab, task.student, str(cell_timeout),
                *(["--feedback"] if feedback else [])], ws, env, task.log, timeout=notebook_timeout,
               groups=groups, task=tag)
    scores = read_scores(ws, lab, task.student)
    score = scores.get(task.name)
    out: dict[str, Any] = {"seconds": run.seconds}
    if run.timed_out:
        out["status"] = f"timeout: the notebook ran past --notebook-timeout {notebook_timeout} s"
    elif score is None:
        out["status"] = "error: nbgrader could not grade it: " + _last_error(task.log)
    else:
        out.update(status=GRADED, score=score.score, max_score=score.max_score, failed_tests=";".join(score.failed),
                   cells=dict(score.cells))
        html = ws / "feedback" / task.student / lab / f"{task.name}.html"
        if feedback and html.exists():
            out["html"] = html
    return out


def _grade_workspace(lab: str, student: str, cell_timeout: int, feedback: bool) -> int:
    """``python -m txcourse.grading workspace``: in a workspace (the current folder), ``nbgrader
    autograde`` the student's notebook, then ``generate_feedback`` if it was graded, with nbgrader's
    Python API in this one process; the logs go to stdout. Exit status 0 when both worked."""
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
        print(f"[txcourse.grading] nbgrader {name} {lab} --student={student}", flush=True)
        result = step()
        print(result.get("log", ""), result.get("error", ""), sep="\n", flush=True)
        if not result.get("success"):
            return 1
    return 0


def _install_signal_handlers():
    """SIGTERM (and SIGINT, SIGHUP) raise :class:`GradingInterrupted` in the main thread; returns
    the previous handlers (None outside the main thread, where handlers cannot be set)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        for s in signals:  # one is enough: clean-up must not be interrupted
            signal.signal(s, signal.SIG_IGN)
        raise GradingInterrupted(signal.Signals(signum).name)

    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    return {s: signal.signal(s, handler) for s in signals}


def grade_submissions(submissions_dir: str | os.PathLike, lab: str, out_csv: str | os.PathLike,
                      timeout: int = DEFAULT_CELL_TIMEOUT, labs_dir: str | os.PathLike = "labs",
                      feedback: bool = True, course_dir: Optional[str | os.PathLike] = None,
                      verbose: bool = True, jobs: Optional[int] = None, sandbox: bool = True,
                      memory: str | int = DEFAULT_MEMORY, notebook_timeout: int = DEFAULT_NOTEBOOK_TIMEOUT,
                      bwrap_path: Optional[str] = None) -> list[dict[str, Any]]:
    """Autograde every student's submission of ``lab`` and write a CSV of scores, logs and HTML feedback.

    ``submissions_dir`` holds one folder per student (the folder name is the student id) with
    ``<lab>_torch.ipynb`` and/or ``<lab>_tf.ipynb``, directly or in a ``<lab>/`` subfolder; a near
    miss of a name (``<lab>_torch (1).ipynb``) is graded with a note. The master copy of each
    notebook is recorded in a gradebook of its own (``nbgrader generate_assignment`` in a temporary
    folder, or ``course_dir``); then every notebook is graded in a workspace of its own holding only
    the config, a copy of that gradebook and the notebook, ``jobs`` at a time (default: the number
    of cores), and the scores are merged. One submission cannot change another's score: a cell that
    raises fails the tests that need it, a cell running past ``timeout`` seconds is interrupted (the
    rest of the notebook runs), a notebook running past ``notebook_timeout`` seconds is killed (0,
    status ``timeout``), a deleted or edited test cell is restored from the master copy and run
    (``labs/nbgrader_config.py`` sets ``OverwriteCells.add_missing_cells``).

    With ``sandbox`` (the default) the kernel that runs the student's code is confined by bubblewrap
    (:mod:`txcourse.sandbox`): no network, nothing of the host but the system, Python and the
    ``txcourse`` package, read-only, its own working folder the only writable one, ``memory`` bytes
    of address space (``"8G"``), and every process it forks ends with it. Without bwrap this raises
    :class:`~txcourse.sandbox.SandboxUnavailable`; ``sandbox=False`` grades unconfined.

    The CSV (``out_csv``) has one row per student and notebook: ``student, lab, notebook, framework,
    score, max_score, status, failed_tests, feedback, log, note``; status is ``graded``, ``missing``
    (no such notebook submitted), ``unreadable: ...``, ``error: ...`` (nbgrader could not grade it:
    the kernel died, ...) or ``timeout: ...``. nbgrader's log of each graded notebook is kept in
    ``<out_csv stem>-logs/<student>-<notebook>.log``, the feedback in ``<out_csv folder>/feedback/
    <student>/<notebook>.html``. SIGINT/SIGTERM end every process started and remove the temporary
    files, then raise :class:`GradingInterrupted`. Returns the rows, each also with ``cells`` (grade id ->
    (score, max score) of each test cell; not in the CSV).
    """
    labs_dir = Path(labs_dir).resolve()
    submissions = Path(submissions_dir).resolve()
    out_csv = Path(out_csv).resolve()
    if lab not in LABS and not (labs_dir / "source" / lab).is_dir():
        raise ValueError(f"unknown lab {lab!r}; labs are {list(LABS)}")
    if not submissions.is_dir():
        raise ValueError(f"submissions folder {str(submissions)!r} does not exist")
    if not (labs_dir / "source" / lab).is_dir():
        raise ValueError(f"no lab sources {str(labs_dir / 'source' / lab)!r}: run from the repository root or "
                         f"pass the course folder (labs_dir, --labs-dir)")
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    if notebook_timeout < 1:
        raise ValueError(f"--notebook-timeout must be at least 1 second, got {notebook_timeout}")
    memory_bytes = parse_size(memory)
    students = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        raise ValueError(f"{submissions} holds no student folders (expected <student>/{lab}_torch.ipynb ...)")
    notebooks = sorted(p.stem for p in (labs_dir / "source" / lab).glob("*.ipynb"))
    box = Sandbox(find_bwrap(bwrap_path), memory_bytes) if sandbox else None
    if box is not None and len(tempfile.gettempdir()) > 60:  # <tmp>/txgrade-XXXXXXXX/rt/<n>/k-5 < 108 bytes
        raise ValueError(f"the temporary folder {tempfile.gettempdir()!r} is too long for the sandboxed kernels' "
                         f"Unix sockets: expected at most 60 characters; set TMPDIR=/tmp")

    def say(message: str) -> None:
        if verbose:
            print(message, flush=True)

    if box is None:
        print("txcourse grade: warning: grading WITHOUT a sandbox (--no-sandbox): students' code can read the "
              "solutions and the other submissions, write anywhere you can and use the network", file=sys.stderr)
    import uuid

    tmp = Path(tempfile.mkdtemp(prefix="txgrade-"))  # short: Unix socket paths must stay under 108 bytes
    root = Path(course_dir).resolve() if course_dir is not None else tmp
    if course_dir is not None and root.exists():
        shutil.rmtree(root)
    logs = out_csv.parent / f"{out_csv.stem}-logs"
    groups = ProcessGroups(uuid.uuid4().hex)
    env = _env(threads=max(1, (os.cpu_count() or 1) // jobs))
    previous = _install_signal_handlers()
    pool = ThreadPoolExecutor(max_workers=jobs)
    rows: list[dict[str, Any]] = []
    try:
        if logs.is_dir():
            shutil.rmtree(logs)
        # one master course per notebook, so a workspace's gradebook knows only its own notebook
        masters = {name: root / "master" / name for name in notebooks}
        for name, master in masters.items():
            (master / "source" / lab).mkdir(parents=True)
            _copy_config(labs_dir, master)
            shutil.copy2(labs_dir / "source" / lab / f"{name}.ipynb", master / "source" / lab / f"{name}.ipynb")
        made = list(pool.map(lambda m: _nbgrader(["generate_assignment", lab, "--force"], m, env,
                                                 root / "logs" / f"generate_{m.name}.log", groups=groups,
                                                 task=f"master-{m.name}"), masters.values()))
        for run in made:
            if run.returncode != 0:
                raise RuntimeError(f"nbgrader generate_assignment {lab} failed (exit status {run.returncode}):\n"
                                   f"{run.tail()}")
        top = {name: _max_scores(master, lab).get(name, "") for name, master in masters.items()}

        statuses: dict[tuple[str, str], dict[str, Any]] = {}
        tasks: list[_Task] = []
        for student_dir in students:
            student = student_dir.name
            if not _STUDENT_ID.match(student):
                for name in notebooks:
                    statuses[student, name] = {"status": "error: student folder names may hold only letters, "
                                                         "digits and _.@-"}
                continue
            found, notes = _find_submissions(student_dir, notebooks)
            for name in notebooks:
                row: dict[str, Any] = {"note": notes.get(name, "")}
                statuses[student, name] = row
                if name not in found:
                    row["status"] = MISSING
                    continue
                problem = _readable(found[name])
                if problem:
                    row["status"] = f"unreadable: {problem}"
                    continue
                if row["note"]:
                    print(f"txcourse grade: warning: {student}: {row['note']}", file=sys.stderr)
                index = len(tasks)
                tasks.append(_Task(index, student, name, found[name], root / "ws" / str(index),
                                   logs / f"{student}-{name}.log", row["note"]))

        if box is not None:
            (tmp / "rt").mkdir()
        start = time.perf_counter()
        futures = {pool.submit(_grade_one, task, lab, masters[task.name], tmp / "rt" if box else None, box, groups,
                               env, timeout, notebook_timeout, feedback): task for task in tasks}
        from concurrent.futures import as_completed

        feedback_root = out_csv.parent / "feedback"
        for future in as_completed(futures):
            task = futures[future]
            try:
                result = future.result()
            except Exception as error:  # noqa: BLE001 - report it with the submission, grade the others
                result = {"status": f"error: {type(error).__name__}: {str(error).splitlines()[0][:200]}"}
            html = result.pop("html", None)
            if html is not None:
                dest = feedback_root / task.student / f"{task.name}.html"
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(html, dest)
                result["feedback"] = os.path.relpath(dest, out_csv.parent)
            result["log"] = os.path.relpath(task.log, out_csv.parent)
            statuses[task.student, task.name].update(result)
            say(f"{task.student} {task.name}: {result['status'].split(':')[0]} in {result.get('seconds', 0):.0f} s"
                + (f" ({result['score']:g}/{result['max_score']:g})" if "score" in result else ""))
        elapsed = time.perf_counter() - start
        if tasks:
            say(f"graded {len(tasks)} notebook(s) in {elapsed:.0f} s with {jobs} job(s)"
                f"{'' if box else ' WITHOUT sandbox'}: {elapsed / len(tasks):.1f} s per notebook, "
                f"{60 * len(tasks) / elapsed:.1f} notebooks per minute")
        for (student, name), found_row in statuses.items():
            row = {"student": student, "lab": lab, "notebook": name, "framework": name.rsplit("_", 1)[-1],
                   "score": 0.0, "max_score": top.get(name, ""), "status": "", "failed_tests": "", "feedback": "",
                   "log": "", "note": ""}
            row.update({k: v for k, v in found_row.items() if k in CSV_FIELDS})
            row["cells"] = found_row.get("cells", {})  # grade id -> (score, max); not in the CSV
            rows.append(row)
        rows.sort(key=lambda r: (r["student"], r["notebook"]))
        out_csv.parent.mkdir(parents=True, exist_ok=True)
        with open(out_csv, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
        say(f"wrote {out_csv} ({len(rows)} rows)")
    except BaseException:
        groups.kill_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        groups.kill_all()
        shutil.rmtree(tmp, ignore_errors=True)
        if previous:
            for s, h in previous.items():
                signal.signal(s, h)
    return rows


def failures(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of submissions that were there but could not be graded (unreadable, error, timeout)."""
    return [r for r in rows if r["status"] not in (GRADED, MISSING)]


def default_grades_csv(lab: str) -> str:
    """Where ``make grade`` and ``txcourse grade`` write the CSV unless told otherwise."""
    return os.path.join("_build", "grades", f"{lab}.csv")


def format_grades(rows: Sequence[dict[str, Any]]) -> str:
    """One line per student and notebook: score / max score and status."""
    width = max((len(r["student"]) for r in rows), default=0)
    return "\n".join(f"{r['student']:<{width}}  {r['notebook']:<24} {r['score']!s:>5} / {r['max_score']!s:<5} "
                     f"{r['status']}" for r in rows)


def add_grade_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``txcourse grade`` and ``python -m txcourse.grading grade`` beyond the folder,
    the lab, the CSV and the cell timeout."""
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="notebooks graded at the same time (default: the number of cores)")
    parser.add_argument("--notebook-timeout", type=int, default=DEFAULT_NOTEBOOK_TIMEOUT, metavar="S",
                        help=f"seconds a whole notebook may run before it is killed (default {DEFAULT_NOTEBOOK_TIMEOUT})")
    parser.add_argument("--memory", default=DEFAULT_MEMORY, metavar="SIZE",
                        help=f"address space of each sandboxed kernel, e.g. 4G or 512M (default {DEFAULT_MEMORY})")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run students' code unconfined (when bubblewrap cannot run here; see the instructor page)")


def grade_command(args: argparse.Namespace, cell_timeout: int, prog: str = "txcourse grade",
                  raise_errors: bool = False) -> int:
    """Run :func:`grade_submissions` for a parsed command line and print the table. Returns the
    exit status: 0, 1 when any submission could not be graded (the CSV says why), 2 for a bad
    argument or no sandbox, 128 + the signal when interrupted (one line on stderr each time).
    With ``raise_errors`` a bad argument or a missing sandbox raises ValueError instead (for a
    caller that prints its own one-line errors, like ``txcourse``)."""
    out = args.out or default_grades_csv(args.lab)
    try:
        rows = grade_submissions(args.submissions, args.lab, out, timeout=cell_timeout, labs_dir=args.labs_dir,
                                 feedback=not args.no_feedback, jobs=args.jobs, sandbox=not args.no_sandbox,
                                 memory=args.memory, notebook_timeout=args.notebook_timeout)
    except (ValueError, SandboxUnavailable) as error:
        if raise_errors:
            raise ValueError(str(error)) from None
        print(f"{prog}: error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    except GradingInterrupted as stop:
        name = str(stop) or "SIGINT"
        print(f"{prog}: interrupted by {name}: stopped every process it started and removed its temporary files; "
              f"no CSV written", file=sys.stderr)
        return 128 + getattr(signal, name, signal.SIGINT).value
    print(format_grades(rows))
    bad = failures(rows)
    if bad:
        logs = Path(out).with_name(Path(out).stem + "-logs")  # made only when a notebook ran
        print(f"{prog}: {len(bad)} submission(s) could not be graded (status column of {out}"
              + (f"; logs in {logs})" if logs.is_dir() else "; no notebook ran, so there are no logs)"),
              file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m txcourse.grading", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("release", help="make the student versions in LABS_DIR/release (nbgrader generate_assignment)")
    p.add_argument("--labs-dir", default="labs")
    p.add_argument("--lab", action="append", choices=LABS, help="only this lab (repeatable)")
    p = sub.add_parser("check", help="execute, nbval and autograde every lab notebook (make test-labs)")
    p.add_argument("--labs-dir", default="labs")
    p.add_argument("--build-dir", default="_build/labs")
    p.add_argument("--lab", action="append", choices=LABS, help="only this lab (repeatable)")
    p.add_argument("--framework", action="append", choices=FRAMEWORKS, help="only this framework (repeatable)")
    p.add_argument("--jobs", type=int, default=2, help="labs checked at the same time")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    p.add_argument("--threads", type=int, default=None, help="CPU threads per notebook (default: cores / jobs)")
    p = sub.add_parser("grade", help="autograde a folder of submissions, write a CSV and feedback (make grade)")
    p.add_argument("submissions", help="folder with one subfolder per student")
    p.add_argument("--lab", required=True, choices=LABS)
    p.add_argument("--out", default=None, help="CSV to write (default: _build/grades/LAB.csv)")
    p.add_argument("--timeout", type=int, default=DEFAULT_CELL_TIMEOUT, help="seconds per cell")
    p.add_argument("--labs-dir", default="labs")
    p.add_argument("--no-feedback", action="store_true", help="skip the HTML feedback")
    add_grade_options(p)
    p = sub.add_parser("workspace", help=argparse.SUPPRESS)  # internal: one notebook in its workspace (cwd)
    p.add_argument("lab")
    p.add_argument("student")
    p.add_argument("cell_timeout", type=int)
    p.add_argument("--feedback", action="store_true")
    args = parser.parse_args(argv)

    if args.command == "workspace":
        return _grade_workspace(args.lab, args.student, args.cell_timeout, args.feedback)

    if args.command == "release":
        release(args.labs_dir, tuple(args.lab or LABS))
        return 0
    if args.command == "check":
        start = time.perf_counter()
        results = check_labs(args.labs_dir, args.build_dir, tuple(args.lab or LABS), tuple(args.framework or FRAMEWORKS),
                             jobs=args.jobs, timeout=args.timeout, threads=args.threads)
        total = time.perf_counter() - start
        print()
        print(format_check_table(results))
        print(f"\ntotal {total:.0f} s ({total / 60:.1f} min) with {args.jobs} job(s)")
        problems = [p for r in results for p in r.problems]
        for problem in problems:
            print(f"\nPROBLEM: {problem}", file=sys.stderr)
        return 1 if problems else 0
    if args.timeout < 1:
        print(f"python -m txcourse.grading grade: error: --timeout must be at least 1 second, got {args.timeout}",
              file=sys.stderr)
        return 2
    return grade_command(args, args.timeout, prog="python -m txcourse.grading grade")


if __name__ == "__main__":
    sys.exit(main())
