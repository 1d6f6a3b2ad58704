"""``make grade`` / ``txcourse grade``: autograding a folder of submissions into a CSV and feedback.

:func:`grade_submissions` runs the phases of one grading run, each a function of the run's one
context object (:class:`~txcourse.course.grading.context.GradingRun`):

1. :func:`open_run`: the options checked, the student folders listed (a link, a device, a hidden folder:
   refused, never followed), the sandbox found;
2. :func:`intake`: each student's notebooks found and read (:mod:`~txcourse.course.grading.submissions`:
   nothing through a link, at most 50 MB, the same notebook at both levels graded once, two different
   ones refused, a test cell pasted twice graded once), parsed (a cell over 128 KiB of source or a
   notebook over 512 KiB refused), and their cells put back in the master's
   order; each becomes a :class:`~txcourse.course.grading.context.GradeTask`;
3. :func:`masters`: the master copy of each lab notebook recorded in a gradebook of its own (``nbgrader
   generate_assignment``), the maximum scores, and the probes' reference outputs
   (:func:`~txcourse.course.grading.verdict.prepare_probes`);
4. :func:`dispatch`: every notebook graded in a workspace of its own
   (:func:`~txcourse.course.grading.workspace.grade_one`), its kernel in bubblewrap
   (:mod:`txcourse.course.grading.sandbox`), ``jobs`` at a time; :func:`collect` takes each result as
   it comes (the probes' verdict in the note and at the top of the feedback, the feedback and log paths);
5. :func:`write_csv`: one row per student and notebook.

:func:`grade_command` (:mod:`~txcourse.course.grading.command`) runs it for a parsed command line.

One submission cannot change another's score: a cell that raises fails the tests that need it, a cell
running past the cell timeout is interrupted (the rest of the notebook runs), a notebook running past
``notebook_timeout`` seconds is killed (0, status ``timeout``), a deleted or edited test cell is restored
from the master copy and run (``labs/nbgrader_config.py`` sets ``OverwriteCells.add_missing_cells``).
With ``sandbox`` (the default) the kernel that runs the student's code has no network, nothing of the
host but the system, Python and the ``txcourse`` package, read-only, its own working folder the only
writable one, ``memory`` bytes of address space, and every process it forks ends with it; without bwrap
this raises :class:`~txcourse.course.grading.sandbox.SandboxUnavailable`, and ``sandbox=False`` grades
unconfined. A lab with probes (``labs_dir/probes/<lab>.json``) is also judged outside the students'
processes (:mod:`~txcourse.course.grading.probes`): a test cell keeps nbgrader's points only when its
probe, run in a second sandboxed kernel whose txcourse keeps only the lab's allow-list, prints what
the same probe prints after the course's solutions, on inputs drawn from a seed drawn for this run
(``probe_seed`` fixes it).
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import stat
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Optional

from txcourse.course.grading.context import MAX_TMPDIR, GradeTask, GradingOptions, GradingRun
from txcourse.course.grading.course import DEFAULT_CELL_TIMEOUT, copy_config
from txcourse.course.grading.forbidden import FORBIDDEN, forbidden_findings
from txcourse.course.grading.intake_caps import why_too_many_cells
from txcourse.course.grading.nbgrader_run import max_scores, run_nbgrader, tool_env
from txcourse.course.grading.probes import load_probes
from txcourse.course.grading.sandbox import DEFAULT_MEMORY, ProcessGroups, Sandbox, find_bwrap
from txcourse.course.grading.sanitize import csv_row, failure_reasons
from txcourse.course.grading.submissions import (
    STUDENT_ID,
    TOOL_FOLDERS,
    both_levels,
    drop_duplicate_grade_ids,
    find_submissions,
    in_master_order,
    parse_notebook,
    read_submission,
    why_refused,
    why_too_much_source,
    why_uncompilable,
)
from txcourse.course.grading.verdict import prepare_probes
from txcourse.course.grading.workspace import MISSING, copy_out, grade_one, read_regular, write_new

__all__ = [
    "CSV_FIELDS",
    "DEFAULT_NOTEBOOK_TIMEOUT",
    "GradingInterrupted",
    "grade_submissions",
    "open_run",
    "intake",
    "masters",
    "dispatch",
    "collect",
    "write_csv",
]

CSV_FIELDS = (
    "student",
    "lab",
    "notebook",
    "framework",
    "score",
    "max_score",
    "status",
    "failed_tests",
    "feedback",
    "log",
    "note",
    "forbidden",  # the test cells scored 0 for what the lab forbids in the source (issue 30): read them
)
DEFAULT_NOTEBOOK_TIMEOUT = 1800  # seconds per notebook, all cells and the kernel's start included


class GradingInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived while grading; every process was ended and the temporary files removed."""


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


def grade_submissions(
    submissions_dir: str | os.PathLike,
    lab: str,
    out_csv: str | os.PathLike,
    timeout: int = DEFAULT_CELL_TIMEOUT,
    labs_dir: str | os.PathLike = "labs",
    feedback: bool = True,
    course_dir: Optional[str | os.PathLike] = None,
    verbose: bool = True,
    jobs: Optional[int] = None,
    sandbox: bool = True,
    memory: str | int = DEFAULT_MEMORY,
    notebook_timeout: int = DEFAULT_NOTEBOOK_TIMEOUT,
    bwrap_path: Optional[str] = None,
    probe_seed: Optional[int] = None,
) -> list[dict[str, Any]]:
    """Autograde every student's submission of ``lab`` and write a CSV of scores, logs and HTML feedback
    (the phases and the guarantees: the module docstring).

    ``submissions_dir`` holds one folder per student (the folder name is the student id) with
    ``<lab>_torch.ipynb`` and/or ``<lab>_tf.ipynb``, directly or in a ``<lab>/`` subfolder (a near miss
    of a name, ``<lab>_torch (1).ipynb``, is graded with a note). ``timeout`` is the cell timeout,
    ``jobs`` the notebooks graded at a time (default: the number of cores), ``memory`` each kernel's
    address space (``"8G"``), ``course_dir`` keeps the master course there instead of a temporary folder.

    The CSV (``out_csv``) has one row per student and notebook: :data:`CSV_FIELDS`; status is ``graded``,
    ``missing``, ``refused: ...``, ``unreadable: ...``, ``error: ...`` (nbgrader could not grade it: the
    kernel died, ...) or ``timeout: ...``. nbgrader's log of each graded notebook is kept in ``<out_csv
    stem>-logs/<student>-<notebook>.log``, the feedback in ``<out_csv folder>/feedback/<student>/
    <notebook>.html``. SIGINT/SIGTERM end every process started and remove the temporary files, then raise
    :class:`GradingInterrupted`. Returns the rows, each also with ``cells`` (grade id -> (score, max
    score) of each test cell; not in the CSV).
    """
    options = GradingOptions(
        lab=lab,
        submissions=Path(submissions_dir).resolve(),
        out_csv=Path(out_csv).resolve(),
        labs_dir=Path(labs_dir).resolve(),
        cell_timeout=timeout,
        notebook_timeout=notebook_timeout,
        feedback=feedback,
        jobs=GradingRun.default_jobs() if jobs is None else jobs,
        sandbox=sandbox,
        memory=memory,
        bwrap_path=bwrap_path,
        probe_seed=probe_seed,
        course_dir=Path(course_dir).resolve() if course_dir is not None else None,
        verbose=verbose,
    )
    return run_phases(open_run(options))


def run_phases(run: GradingRun) -> list[dict[str, Any]]:
    """Intake, masters, dispatch (and collect), CSV, in the run's temporary folder, with its process
    groups and thread pool; whatever happens, every process is ended and the folder removed."""
    run.tmp = Path(tempfile.mkdtemp(prefix="txgrade-"))  # short: Unix socket paths must stay under 108 bytes
    run.root = run.options.course_dir or run.tmp
    if run.options.course_dir is not None and run.root.exists():
        shutil.rmtree(run.root)
    run.groups = ProcessGroups(uuid.uuid4().hex)
    run.env = tool_env(threads=max(1, GradingRun.default_jobs() // run.options.jobs))
    previous = _install_signal_handlers()
    run.pool = ThreadPoolExecutor(max_workers=run.options.jobs)
    try:
        if run.options.logs.is_dir():
            shutil.rmtree(run.options.logs)
        intake(run)
        masters(run)
        dispatch(run)
        write_csv(run)
    except BaseException:
        run.groups.kill_all()
        run.pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        run.pool.shutdown(wait=True)
        run.groups.kill_all()
        shutil.rmtree(run.tmp, ignore_errors=True)
        if previous:
            for s, h in previous.items():
                signal.signal(s, h)
    return run.rows


# --------------------------------------------------------------------------------------------------
# 1. The run: options, student folders, sandbox


def open_run(options: GradingOptions) -> GradingRun:
    """The run of ``options``: its student folders (:func:`student_folders`), the lab's notebooks and the
    sandbox (bwrap found, the temporary folder short enough for its Unix sockets). Raises ValueError
    (no student folder, a long ``TMPDIR``) or SandboxUnavailable before anything runs."""
    students, refused = student_folders(options)
    notebooks = sorted(p.stem for p in options.source.glob("*.ipynb"))
    cores = max(1.0, (os.cpu_count() or 1) / options.jobs)  # each sandbox's CPU quota: an equal share (issue 30)
    box = Sandbox(find_bwrap(options.bwrap_path), options.memory, cpus=cores) if options.sandbox else None
    if box is not None and len(tempfile.gettempdir()) > MAX_TMPDIR:  # <tmp>/txgrade-XXXXXXXX/rt/<n>/k-5
        raise ValueError(
            f"the temporary folder {tempfile.gettempdir()!r} is too long for the sandboxed kernels' "
            f"Unix sockets: expected at most {MAX_TMPDIR} characters; set TMPDIR=/tmp"
        )
    run = GradingRun(options, notebooks, box, students, refused)
    if box is not None:
        from txcourse.course.grading.cgroups import confinement

        run.say(f"sandbox limits: {confinement()}")
    else:
        run.warn(
            "grading WITHOUT a sandbox (--no-sandbox): students' code can read the "
            "solutions and the other submissions, write anywhere you can and use the network"
        )
    return run


def student_folders(options: GradingOptions) -> tuple[list[Path], dict[str, str]]:
    """Every student folder of the submissions folder, and why each refused one is refused (a link, a
    device, a FIFO, a name starting with '.'); plain files and tools' folders (``.git``) are skipped."""
    students, refused = [], {}
    for entry in sorted(options.submissions.iterdir()):
        if stat.S_ISREG(entry.lstat().st_mode):
            continue  # a plain file beside the student folders (a list, a readme): not a student
        why = why_refused(entry, options.submissions)  # a link, a device, a FIFO: refused, never followed
        if entry.name in TOOL_FOLDERS and why is None:
            GradingRun.warn(f"skipped {entry.name}/ (a tool's folder, not a student)")
            continue
        if why is None and entry.name.startswith("."):
            why = f"student folder {entry.name!r} starts with '.' (a hidden folder); rename it to grade it"
        students.append(entry)
        if why is not None:
            refused[entry.name] = why
    if not students:
        raise ValueError(
            f"{options.submissions} holds no student folders (expected <student>/{options.lab}_torch.ipynb ...)"
        )
    return students, refused


# --------------------------------------------------------------------------------------------------
# 2. Intake: each student's notebooks, read, parsed, in the master's order


def intake(run: GradingRun) -> None:
    """Fill ``run.statuses`` (a row per student and notebook, with the status of those that will not be
    graded) and ``run.tasks`` (one per notebook to grade)."""
    import nbformat

    for name in run.notebooks:
        run.master_notebooks[name] = nbformat.read(run.options.source / f"{name}.ipynb", as_version=4)
    for student_dir in run.students:
        student = student_dir.name
        status = None
        if student in run.refused:
            status = f"refused: {run.refused[student]}"
        elif not STUDENT_ID.match(student):
            status = "error: student folder names may hold only letters, digits and _.@-"
        if status is not None:
            for name in run.notebooks:
                run.statuses[student, name] = {"status": status}
            continue
        intake_student(run, student_dir)


def intake_student(run: GradingRun, student_dir: Path) -> None:
    """The rows and tasks of one student's notebooks (a refused ``<lab>/`` subfolder refuses them all)."""
    student, submissions = student_dir.name, run.options.submissions
    lab_dir = student_dir / run.lab
    lab_folder = why_refused(lab_dir, submissions) if os.path.lexists(lab_dir) else None
    found, notes = find_submissions(student_dir, run.notebooks)
    twice = both_levels(student_dir, run.notebooks)
    for name in run.notebooks:
        row: dict[str, Any] = {"note": notes.get(name, "")}
        run.statuses[student, name] = row
        if lab_folder is not None:
            row["status"] = f"refused: {lab_folder}"
            continue
        if name not in found:
            row["status"] = MISSING
            continue
        data = submitted_bytes(run, student_dir, name, found[name], name in twice, row)
        data = normalised(run, name, data, row) if data is not None else None
        if data is None:
            continue
        if row["note"]:
            run.warn(f"{student}: {row['note']}")
        index = len(run.tasks)
        workspace, log = run.root / "ws" / str(index), run.options.logs / f"{student}-{name}.log"
        run.tasks.append(GradeTask(index, student, name, found[name], workspace, log, row["note"], data))


def submitted_bytes(
    run: GradingRun, student_dir: Path, name: str, path: Path, twice: bool, row: dict[str, Any]
) -> Optional[bytes]:
    """The bytes of the notebook at ``path`` (:func:`~txcourse.course.grading.submissions.read_submission`),
    or None with ``row``'s status saying why not; ``twice``: also submitted at the other level, graded
    once when both are the same."""
    submissions = run.options.submissions
    data = read_submission(path, submissions)
    if isinstance(data, str):
        row["status"] = f"refused: {data}"
        return None
    if twice:
        other = read_submission(student_dir / f"{name}.ipynb", submissions)
        where = f"{name}.ipynb submitted twice, in {student_dir.name}/ and in {student_dir.name}/{run.lab}/"
        if isinstance(other, str):
            row["status"] = f"refused: {other}"
            return None
        if other != data:
            row["status"] = f"refused: {where}, and they differ; keep one"
            return None
        row["note"] = f"{where} (the same): graded once"
    return data


def normalised(run: GradingRun, name: str, data: bytes, row: dict[str, Any]) -> Optional[bytes]:
    """The notebook ``data`` as the workspace gets it: parsed (None and status ``unreadable`` when it is
    not a notebook; ``refused`` when a cell's source or the notebook's is over its cap,
    :func:`~txcourse.course.grading.submissions.why_too_much_source`, or a code cell Python's compiler cannot take,
    :func:`~txcourse.course.grading.submissions.why_uncompilable`), a repeated test cell made an
    ordinary cell, its cells in the master's order
    (:func:`~txcourse.course.grading.submissions.in_master_order`); the note says what changed."""
    import nbformat

    too_many = why_too_many_cells(data, len(run.master_notebooks[name].cells))  # before nbformat validates it
    if too_many:
        row["status"] = f"refused: {too_many}"
        return None
    nb, problem = parse_notebook(data)
    if problem:
        row["status"] = f"unreadable: {problem}"
        return None
    too_much = why_too_much_source(nb)  # before the AST check, nbgrader and the feedback parse or render it
    if too_much:
        row["status"] = f"refused: {too_much}"
        return None
    uncompilable = why_uncompilable(nb)  # before the AST check and the kernels: a cell the compiler cannot take
    if uncompilable:
        row["status"] = f"refused: {uncompilable}"
        return None
    repeated = drop_duplicate_grade_ids(nb)
    moved = in_master_order(nb, run.master_notebooks[name])
    found = forbidden_source(run, name, nb)
    if found:
        row["forbidden_cells"] = found  # applied by collect (the scores come later)
    notes = [row["note"]]
    if repeated:
        copies = ", ".join(repr(r) for r in repeated)
        notes.append(f"test cell {copies} pasted twice: the copy graded as an ordinary cell")
    if moved:
        notes.append("cells put back in the course's order (graded and checked there)")
    row["note"] = "; ".join(n for n in notes if n)
    return nbformat.writes(nb).encode("utf-8") if repeated or moved else data


def forbidden_source(run: GradingRun, name: str, nb: Any) -> dict[str, str]:
    """``{test cell grade id: reason}``: the tests of the exercises whose source uses or hides what the lab
    forbids (:func:`~txcourse.course.grading.forbidden.forbidden_findings`, in this process, on the
    notebook in the master's order; only for the course's labs, :data:`~txcourse.course.grading.forbidden.
    FORBIDDEN`); source the grader cannot walk counts against every test."""
    master = run.master_notebooks[name]
    if run.lab not in FORBIDDEN:
        return {}  # a lab of no course week (a test's toy lab): nothing forbidden
    try:
        return forbidden_findings(nb, run.lab, name.rsplit("_", 1)[-1], master)
    except (RecursionError, ValueError, TypeError, AttributeError) as error:
        why = f"code the grader cannot read ({type(error).__name__})"
        tests = [c.metadata.get("nbgrader", {}).get("grade_id") for c in master.cells]
        return {g: why for g, c in zip(tests, master.cells) if g and c.metadata["nbgrader"].get("grade")}


def apply_forbidden(result: dict[str, Any], found: dict[str, str]) -> None:
    """Each test cell of ``found`` (:func:`forbidden_source`) scores 0 in ``result``, the CSV's ``forbidden``
    column lists them and the note says why (reasons cleaned and cut, :func:`~txcourse.course.grading.
    sanitize.failure_reasons`)."""
    reasons = failure_reasons(found)
    result["forbidden"] = ";".join(sorted(found))
    if "cells" in result:
        cells = dict(result["cells"])
        for grade_id in found:
            if grade_id in cells:
                cells[grade_id] = (0.0, cells[grade_id][1])
        result["cells"] = cells
        result["score"] = sum(score for score, _ in cells.values())
        result["failed_tests"] = ";".join(g for g, (score, top) in cells.items() if score < top)
    said = "scored 0 for what the lab forbids: " + "; ".join(f"{g}: {w}" for g, w in reasons.items())
    result["note"] = "; ".join(n for n in (result.get("note", ""), said) if n)


# --------------------------------------------------------------------------------------------------
# 3. Masters: the gradebooks, the maximum scores, the probes' reference


def masters(run: GradingRun) -> None:
    """One master course per notebook (a workspace's gradebook then knows only its own notebook), made by
    ``nbgrader generate_assignment``; the maximum scores; the probes' reference outputs, if the lab has
    probes. Raises RuntimeError when nbgrader or a reference probe fails (the course is wrong)."""
    lab, options = run.lab, run.options
    run.masters = {name: run.root / "master" / name for name in run.notebooks}
    for name, master in run.masters.items():
        (master / "source" / lab).mkdir(parents=True)
        copy_config(options.labs_dir, master)
        shutil.copy2(options.source / f"{name}.ipynb", master / "source" / lab / f"{name}.ipynb")

    def generate(master: Path):
        log = run.root / "logs" / f"generate_{master.name}.log"
        command = ["generate_assignment", lab, "--force"]
        return run_nbgrader(command, master, run.env, log, groups=run.groups, task=f"master-{master.name}")

    for made in list(run.pool.map(generate, run.masters.values())):
        if made.returncode != 0:
            raise RuntimeError(
                f"nbgrader generate_assignment {lab} failed (exit status {made.returncode}):\n{made.tail()}"
            )
    run.top = {name: max_scores(master, lab).get(name, "") for name, master in run.masters.items()}
    lab_probes = load_probes(options.labs_dir, lab)
    if lab_probes is not None:
        run.probing = prepare_probes(
            lab_probes, options.labs_dir, run.notebooks, run.tmp, options.cell_timeout, options.probe_seed, run.pool
        )
        references = sum(len(r) for r in run.probing.reference.values())
        run.say(f"probes: {references} reference outputs (seed {run.probing.seed})")


# --------------------------------------------------------------------------------------------------
# 4. Dispatch and collect


def dispatch(run: GradingRun) -> None:
    """Grade every task in a workspace of its own, ``jobs`` at a time, and :func:`collect` each result as
    it comes; a task that raises is an ``error`` row, the others are graded all the same."""
    if run.box is not None:
        (run.tmp / "rt").mkdir()
    start = time.perf_counter()
    futures = {run.pool.submit(grade_one, run, task): task for task in run.tasks}
    for future in as_completed(futures):
        task = futures[future]
        try:
            result = future.result()
        except Exception as error:  # noqa: BLE001 - report it with the submission, grade the others
            result = {"status": f"error: {type(error).__name__}: {str(error).splitlines()[0][:200]}"}
        collect(run, task, result)
    elapsed = time.perf_counter() - start
    if run.tasks:
        n = len(run.tasks)
        run.say(
            f"graded {n} notebook(s) in {elapsed:.0f} s with {run.options.jobs} job(s)"
            f"{'' if run.box else ' WITHOUT sandbox'}: {elapsed / n:.1f} s per notebook, "
            f"{60 * n / elapsed:.1f} notebooks per minute"
        )


def collect(run: GradingRun, task: GradeTask, result: dict[str, Any]) -> None:
    """Merge one notebook's result into its row: the probes' verdict in the note, the feedback copied out
    (with the verdict at its top), the log's path; then say how it went."""
    out_dir = run.options.out_csv.parent
    html = result.pop("html", None)
    failures = failure_reasons(result.pop("probe_failures", {}))  # cleaned, cut (issue 30)
    if failures:
        checked = "checked outside the notebook: " + "; ".join(f"{g}: {w}" for g, w in failures.items())
        result["note"] = "; ".join(n for n in (task.note, checked) if n)
    found = run.statuses[task.student, task.name].pop("forbidden_cells", None)
    if found:
        result.setdefault("note", task.note)
        apply_forbidden(result, found)
    if html is not None:
        dest = run.options.feedback_root / task.student / f"{task.name}.html"
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            copy_out(html, dest)
            if failures:
                add_verdict_banner(dest, failures, result)
            result["feedback"] = os.path.relpath(dest, out_dir)
        except OSError as error:
            result["note"] = f"no feedback: {error}"
    result["log"] = os.path.relpath(task.log, out_dir)
    run.statuses[task.student, task.name].update(result)
    run.say(
        f"{task.student} {task.name}: {result['status'].split(':')[0]} in {result.get('seconds', 0):.0f} s"
        + (f" ({result['score']:g}/{result['max_score']:g})" if "score" in result else "")
    )


# --------------------------------------------------------------------------------------------------
# 5. The CSV


def write_csv(run: GradingRun) -> None:
    """``run.rows``: one per student and notebook, sorted, written to the CSV (:data:`CSV_FIELDS`)."""
    for (student, name), found in run.statuses.items():
        row = dict.fromkeys(CSV_FIELDS, "")
        row.update(student=student, lab=run.lab, notebook=name, framework=name.rsplit("_", 1)[-1], score=0.0)
        row["max_score"] = run.top.get(name, "")
        row.update({k: v for k, v in found.items() if k in CSV_FIELDS})
        row["cells"] = found.get("cells", {})  # grade id -> (score, max); not in the CSV
        run.rows.append(row)
    run.rows.sort(key=lambda r: (r["student"], r["notebook"]))
    out_csv = run.options.out_csv
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(csv_row(r, CSV_FIELDS) for r in run.rows)  # no control characters (issue 30)
    run.say(f"wrote {out_csv} ({len(run.rows)} rows)")


def add_verdict_banner(html: Path, failures: dict[str, str], result: dict[str, Any]) -> None:
    """Put at the top of a feedback page the tests that nbgrader passed but the check outside the
    notebook failed, and the score that counts (the page's own cell scores are nbgrader's)."""
    import html as html_lib

    failures = failure_reasons(failures)  # issue 30: no control characters, each reason cut
    rows = "".join(f"<li><code>{html_lib.escape(g)}</code>: {html_lib.escape(w)}</li>" for g, w in failures.items())
    banner = (
        '<div style="border:2px solid #b00;padding:8px;margin:8px"><b>Checked outside your notebook</b>: '
        "these tests scored 0 (your answers, run again on fresh inputs without txcourse's versions of the "
        f"exercises, did not give the expected values):<ul>{rows}</ul>"
        f"Score that counts: {result.get('score', 0):g} / {result.get('max_score', 0):g}</div>"
    )
    text = read_regular(html).decode("utf-8")
    at = text.find("<body")
    at = text.find(">", at) + 1 if at >= 0 else 0
    write_new(html, (text[:at] + banner + text[at:]).encode("utf-8"))
