"""``make grade`` / ``txcourse grade``: autograding a folder of submissions into a CSV and feedback.

:func:`grade_submissions` grades each notebook in a workspace of its own
(:func:`~txcourse.course.grading.workspace.grade_one`) with its kernel confined by bubblewrap
(:mod:`txcourse.course.grading.sandbox`), ``jobs`` at a time, and writes a CSV of scores, one log and one
HTML feedback file per notebook. :func:`grade_command` runs it for a parsed command line (the
options of :func:`add_grade_options`).
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional

from txcourse.course.grading.course import DEFAULT_CELL_TIMEOUT, LABS, copy_config
from txcourse.course.grading.nbgrader_run import max_scores, run_nbgrader, tool_env
from txcourse.course.grading.probes import load_probes
from txcourse.course.grading.sandbox import (
    DEFAULT_MEMORY,
    ProcessGroups,
    Sandbox,
    find_bwrap,
    parse_size,
)
from txcourse.course.grading.sanitize import csv_row, failure_reasons
from txcourse.course.grading.submissions import (
    STUDENT_ID,
    TOOL_FOLDERS,
    both_levels,
    drop_duplicate_grade_ids,
    find_submissions,
    parse_notebook,
    read_submission,
    why_refused,
)
from txcourse.course.grading.verdict import prepare_probes
from txcourse.course.grading.workspace import MISSING, GradeTask, copy_out, grade_one, read_regular, write_new

__all__ = [
    "CSV_FIELDS",
    "DEFAULT_NOTEBOOK_TIMEOUT",
    "GradingInterrupted",
    "grade_submissions",
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


# long-function: the grading pipeline, restructured together with the red-team issue (issue 31, item 5)
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
    """Autograde every student's submission of ``lab`` and write a CSV of scores, logs and HTML feedback.

    ``submissions_dir`` holds one folder per student (the folder name is the student id) with
    ``<lab>_torch.ipynb`` and/or ``<lab>_tf.ipynb``, directly or in a ``<lab>/`` subfolder; a near
    miss of a name (``<lab>_torch (1).ipynb``) is graded with a note. Nothing there is read through a
    link (:mod:`~txcourse.course.grading.submissions`): a student folder, ``<lab>/`` subfolder or
    notebook that is a symbolic link, a hard link to a file elsewhere, a device or a FIFO, a notebook
    over 50 MB, a student folder whose name starts with ``.`` (but ``.git`` and
    ``.ipynb_checkpoints``, skipped with a warning) and a notebook submitted both at the top and in
    ``<lab>/`` with different contents get status ``refused: <why>`` and 0 (the same notebook twice
    is graded once, with a note). A test cell pasted twice (the same nbgrader ``grade_id``) is graded
    once: the copy runs as an ordinary cell. The master copy of each
    notebook is recorded in a gradebook of its own (``nbgrader generate_assignment`` in a temporary
    folder, or ``course_dir``); then every notebook is graded in a workspace of its own holding only
    the config, a copy of that gradebook and the notebook, ``jobs`` at a time (default: the number
    of cores), and the scores are merged. One submission cannot change another's score: a cell that
    raises fails the tests that need it, a cell running past ``timeout`` seconds is interrupted (the
    rest of the notebook runs), a notebook running past ``notebook_timeout`` seconds is killed (0,
    status ``timeout``), a deleted or edited test cell is restored from the master copy and run
    (``labs/nbgrader_config.py`` sets ``OverwriteCells.add_missing_cells``).

    With ``sandbox`` (the default) the kernel that runs the student's code is confined by bubblewrap
    (:mod:`txcourse.course.grading.sandbox`): no network, nothing of the host but the system, Python and the
    ``txcourse`` package, read-only, its own working folder the only writable one, ``memory`` bytes
    of address space (``"8G"``), and every process it forks ends with it. Without bwrap this raises
    :class:`~txcourse.course.grading.sandbox.SandboxUnavailable`; ``sandbox=False`` grades unconfined.

    The CSV (``out_csv``) has one row per student and notebook: ``student, lab, notebook, framework,
    score, max_score, status, failed_tests, feedback, log, note``; status is ``graded``, ``missing``
    (no such notebook submitted), ``refused: ...``, ``unreadable: ...``, ``error: ...`` (nbgrader could not grade it:
    the kernel died, ...) or ``timeout: ...``. nbgrader's log of each graded notebook is kept in
    ``<out_csv stem>-logs/<student>-<notebook>.log``, the feedback in ``<out_csv folder>/feedback/
    <student>/<notebook>.html``. SIGINT/SIGTERM end every process started and remove the temporary
    files, then raise :class:`GradingInterrupted`. Returns the rows, each also with ``cells`` (grade id ->
    (score, max score) of each test cell; not in the CSV).

    A lab with probes (``labs_dir/probes/<lab>.json``) is also judged outside the students' processes
    (:mod:`~txcourse.course.grading.probes`): a test cell keeps nbgrader's points only when its probe,
    run in a second sandboxed kernel with txcourse's versions of the exercises redacted, prints what
    the same probe prints after the course's solutions, on inputs drawn from a seed drawn for this run
    (``probe_seed`` fixes it). Where it does not, the cell scores 0 and the note and the feedback say why.
    """
    labs_dir = Path(labs_dir).resolve()
    submissions = Path(submissions_dir).resolve()
    out_csv = Path(out_csv).resolve()
    if lab not in LABS and not (labs_dir / "source" / lab).is_dir():
        raise ValueError(f"unknown lab {lab!r}; labs are {list(LABS)}")
    if not submissions.is_dir():
        raise ValueError(f"submissions folder {str(submissions)!r} does not exist")
    if not (labs_dir / "source" / lab).is_dir():
        raise ValueError(
            f"no lab sources {str(labs_dir / 'source' / lab)!r}: run from the repository root or "
            f"pass the course folder (labs_dir, --labs-dir)"
        )
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    if notebook_timeout < 1:
        raise ValueError(f"--notebook-timeout must be at least 1 second, got {notebook_timeout}")
    memory_bytes = parse_size(memory)
    students, refused = [], {}  # refused: student folder name -> why (its notebooks all get that status)
    for entry in sorted(submissions.iterdir()):
        if stat.S_ISREG(entry.lstat().st_mode):
            continue  # a plain file beside the student folders (a list, a readme): not a student
        why = why_refused(entry, submissions)  # a link, a device, a FIFO: refused, never followed
        if entry.name in TOOL_FOLDERS and why is None:
            print(f"txcourse grade: warning: skipped {entry.name}/ (a tool's folder, not a student)", file=sys.stderr)
            continue
        if why is None and entry.name.startswith("."):
            why = f"student folder {entry.name!r} starts with '.' (a hidden folder); rename it to grade it"
        students.append(entry)
        if why is not None:
            refused[entry.name] = why
    if not students:
        raise ValueError(f"{submissions} holds no student folders (expected <student>/{lab}_torch.ipynb ...)")
    notebooks = sorted(p.stem for p in (labs_dir / "source" / lab).glob("*.ipynb"))
    cores = max(1.0, (os.cpu_count() or 1) / jobs)  # each sandbox's CPU quota: an equal share (issue 30)
    box = Sandbox(find_bwrap(bwrap_path), memory_bytes, cpus=cores) if sandbox else None
    if box is not None and len(tempfile.gettempdir()) > 60:  # <tmp>/txgrade-XXXXXXXX/rt/<n>/k-5 < 108 bytes
        raise ValueError(
            f"the temporary folder {tempfile.gettempdir()!r} is too long for the sandboxed kernels' "
            f"Unix sockets: expected at most 60 characters; set TMPDIR=/tmp"
        )

    def say(message: str) -> None:
        if verbose:
            print(message, flush=True)

    if box is not None:
        from txcourse.course.grading.cgroups import confinement

        say(f"sandbox limits: {confinement()}")
    if box is None:
        print(
            "txcourse grade: warning: grading WITHOUT a sandbox (--no-sandbox): students' code can read the "
            "solutions and the other submissions, write anywhere you can and use the network",
            file=sys.stderr,
        )
    import uuid

    tmp = Path(tempfile.mkdtemp(prefix="txgrade-"))  # short: Unix socket paths must stay under 108 bytes
    root = Path(course_dir).resolve() if course_dir is not None else tmp
    if course_dir is not None and root.exists():
        shutil.rmtree(root)
    logs = out_csv.parent / f"{out_csv.stem}-logs"
    groups = ProcessGroups(uuid.uuid4().hex)
    env = tool_env(threads=max(1, (os.cpu_count() or 1) // jobs))
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
            copy_config(labs_dir, master)
            shutil.copy2(labs_dir / "source" / lab / f"{name}.ipynb", master / "source" / lab / f"{name}.ipynb")
        made = list(
            pool.map(
                lambda m: run_nbgrader(
                    ["generate_assignment", lab, "--force"],
                    m,
                    env,
                    root / "logs" / f"generate_{m.name}.log",
                    groups=groups,
                    task=f"master-{m.name}",
                ),
                masters.values(),
            )
        )
        for run in made:
            if run.returncode != 0:
                raise RuntimeError(
                    f"nbgrader generate_assignment {lab} failed (exit status {run.returncode}):\n{run.tail()}"
                )
        top = {name: max_scores(master, lab).get(name, "") for name, master in masters.items()}
        lab_probes = load_probes(labs_dir, lab)
        probing = None
        if lab_probes is not None:
            probing = prepare_probes(lab_probes, labs_dir, notebooks, tmp, timeout, seed=probe_seed, pool=pool)
            say(f"probes: {sum(len(r) for r in probing.reference.values())} reference outputs (seed {probing.seed})")

        statuses: dict[tuple[str, str], dict[str, Any]] = {}
        tasks: list[GradeTask] = []
        for student_dir in students:
            student = student_dir.name
            if student in refused:
                for name in notebooks:
                    statuses[student, name] = {"status": f"refused: {refused[student]}"}
                continue
            if not STUDENT_ID.match(student):
                for name in notebooks:
                    statuses[student, name] = {
                        "status": "error: student folder names may hold only letters, digits and _.@-"
                    }
                continue
            lab_folder = why_refused(student_dir / lab, submissions) if os.path.lexists(student_dir / lab) else None
            found, notes = find_submissions(student_dir, notebooks)
            twice = both_levels(student_dir, notebooks)
            for name in notebooks:
                row: dict[str, Any] = {"note": notes.get(name, "")}
                statuses[student, name] = row
                if lab_folder is not None:
                    row["status"] = f"refused: {lab_folder}"
                    continue
                if name not in found:
                    row["status"] = MISSING
                    continue
                data = read_submission(found[name], submissions)
                if isinstance(data, str):
                    row["status"] = f"refused: {data}"
                    continue
                if name in twice:
                    other = read_submission(student_dir / f"{name}.ipynb", submissions)
                    where = f"{name}.ipynb submitted twice, in {student}/ and in {student}/{lab}/"
                    if isinstance(other, str):
                        row["status"] = f"refused: {other}"
                        continue
                    if other != data:
                        row["status"] = f"refused: {where}, and they differ; keep one"
                        continue
                    row["note"] = f"{where} (the same): graded once"
                nb, problem = parse_notebook(data)
                if problem:
                    row["status"] = f"unreadable: {problem}"
                    continue
                repeated = drop_duplicate_grade_ids(nb)
                if repeated:
                    import nbformat

                    data = nbformat.writes(nb).encode("utf-8")
                    copies = ", ".join(repr(r) for r in repeated)
                    pasted = f"test cell {copies} pasted twice: the copy graded as an ordinary cell"
                    row["note"] = "; ".join(n for n in (row["note"], pasted) if n)
                if row["note"]:
                    print(f"txcourse grade: warning: {student}: {row['note']}", file=sys.stderr)
                index = len(tasks)
                tasks.append(
                    GradeTask(
                        index,
                        student,
                        name,
                        found[name],
                        root / "ws" / str(index),
                        logs / f"{student}-{name}.log",
                        row["note"],
                        data,
                    )
                )

        if box is not None:
            (tmp / "rt").mkdir()
        start = time.perf_counter()
        futures = {
            pool.submit(
                grade_one,
                task,
                lab,
                masters[task.name],
                tmp / "rt" if box else None,
                box,
                groups,
                env,
                timeout,
                notebook_timeout,
                feedback,
                probing,
            ): task
            for task in tasks
        }
        from concurrent.futures import as_completed

        feedback_root = out_csv.parent / "feedback"
        for future in as_completed(futures):
            task = futures[future]
            try:
                result = future.result()
            except Exception as error:  # noqa: BLE001 - report it with the submission, grade the others
                result = {"status": f"error: {type(error).__name__}: {str(error).splitlines()[0][:200]}"}
            html = result.pop("html", None)
            failures = failure_reasons(result.pop("probe_failures", {}))  # cleaned, cut (issue 30)
            if failures:
                checked = "checked outside the notebook: " + "; ".join(f"{g}: {w}" for g, w in failures.items())
                result["note"] = "; ".join(n for n in (task.note, checked) if n)
            if html is not None:
                dest = feedback_root / task.student / f"{task.name}.html"
                dest.parent.mkdir(parents=True, exist_ok=True)
                try:
                    copy_out(html, dest)
                    if failures:
                        add_verdict_banner(dest, failures, result)
                    result["feedback"] = os.path.relpath(dest, out_csv.parent)
                except OSError as error:
                    result["note"] = f"no feedback: {error}"
            result["log"] = os.path.relpath(task.log, out_csv.parent)
            statuses[task.student, task.name].update(result)
            say(
                f"{task.student} {task.name}: {result['status'].split(':')[0]} in {result.get('seconds', 0):.0f} s"
                + (f" ({result['score']:g}/{result['max_score']:g})" if "score" in result else "")
            )
        elapsed = time.perf_counter() - start
        if tasks:
            say(
                f"graded {len(tasks)} notebook(s) in {elapsed:.0f} s with {jobs} job(s)"
                f"{'' if box else ' WITHOUT sandbox'}: {elapsed / len(tasks):.1f} s per notebook, "
                f"{60 * len(tasks) / elapsed:.1f} notebooks per minute"
            )
        for (student, name), found_row in statuses.items():
            row = {
                "student": student,
                "lab": lab,
                "notebook": name,
                "framework": name.rsplit("_", 1)[-1],
                "score": 0.0,
                "max_score": top.get(name, ""),
                "status": "",
                "failed_tests": "",
                "feedback": "",
                "log": "",
                "note": "",
            }
            row.update({k: v for k, v in found_row.items() if k in CSV_FIELDS})
            row["cells"] = found_row.get("cells", {})  # grade id -> (score, max); not in the CSV
            rows.append(row)
        rows.sort(key=lambda r: (r["student"], r["notebook"]))
        out_csv.parent.mkdir(parents=True, exist_ok=True)
        with open(out_csv, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(csv_row(r, CSV_FIELDS) for r in rows)  # no control characters (issue 30)
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
