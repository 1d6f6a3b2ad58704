"""``txcourse grade`` and ``python -m txcourse.course.grading grade``: their options, the run, the table and
the exit status around :func:`~txcourse.course.grading.grade.grade_submissions`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import txcourse.course.grading.grade as grade  # the module: tests replace grade.grade_submissions
from txcourse.course.grading.grade import DEFAULT_NOTEBOOK_TIMEOUT, GradingInterrupted
from txcourse.course.grading.sandbox import DEFAULT_MEMORY, SandboxUnavailable
from txcourse.course.grading.workspace import GRADED, MISSING
from txcourse.errors import TxcourseError

__all__ = ["failures", "default_grades_csv", "format_grades", "add_grade_options", "grade_command"]


def failures(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of submissions that were there but could not be graded (unreadable, error, timeout)."""
    return [r for r in rows if r["status"] not in (GRADED, MISSING)]


def default_grades_csv(lab: str) -> str:
    """Where ``make grade`` and ``txcourse grade`` write the CSV unless told otherwise."""
    return os.path.join("_build", "grades", f"{lab}.csv")


def format_grades(rows: Sequence[dict[str, Any]]) -> str:
    """One line per student and notebook: score / max score and status."""
    width = max((len(r["student"]) for r in rows), default=0)
    return "\n".join(
        f"{r['student']:<{width}}  {r['notebook']:<24} {r['score']!s:>5} / {r['max_score']!s:<5} {r['status']}"
        for r in rows
    )


def add_grade_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``txcourse grade`` and ``python -m txcourse.course.grading grade`` beyond the folder,
    the lab, the CSV and the cell timeout."""
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="notebooks graded at the same time (default: the number of cores)",
    )
    parser.add_argument(
        "--notebook-timeout",
        type=int,
        default=DEFAULT_NOTEBOOK_TIMEOUT,
        metavar="S",
        help=f"seconds a whole notebook may run before it is killed (default {DEFAULT_NOTEBOOK_TIMEOUT})",
    )
    parser.add_argument(
        "--memory",
        default=DEFAULT_MEMORY,
        metavar="SIZE",
        help=f"address space of each sandboxed kernel, e.g. 4G or 512M (default {DEFAULT_MEMORY})",
    )
    parser.add_argument(
        "--probe-seed",
        type=int,
        default=None,
        metavar="N",
        help="the seed of the probes' inputs (default: drawn afresh; each run prints the one it used, to regrade alike)",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run students' code unconfined (when bubblewrap cannot run here; see the instructor page)",
    )


def grade_command(
    args: argparse.Namespace, cell_timeout: int, prog: str = "txcourse grade", raise_errors: bool = False
) -> int:
    """Run :func:`grade_submissions` for a parsed command line and print the table. Returns the
    exit status: 0, 1 when any submission could not be graded (the CSV says why), 2 for a bad
    argument or no sandbox, 128 + the signal when interrupted (one line on stderr each time).
    With ``raise_errors`` a bad argument or a missing sandbox raises TxcourseError instead (for a
    caller that prints its own one-line errors, like ``txcourse``)."""
    out = args.out or default_grades_csv(args.lab)
    try:
        rows = grade.grade_submissions(
            args.submissions,
            args.lab,
            out,
            timeout=cell_timeout,
            labs_dir=args.labs_dir,
            feedback=not args.no_feedback,
            jobs=args.jobs,
            sandbox=not args.no_sandbox,
            memory=args.memory,
            notebook_timeout=args.notebook_timeout,
            probe_seed=args.probe_seed,
        )
    except (ValueError, SandboxUnavailable) as error:
        if raise_errors:
            raise TxcourseError(str(error)) from None
        print(f"{prog}: error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    except GradingInterrupted as stop:
        name = str(stop) or "SIGINT"
        print(
            f"{prog}: interrupted by {name}: stopped every process it started and removed its temporary files; "
            f"no CSV written",
            file=sys.stderr,
        )
        return 128 + getattr(signal, name, signal.SIGINT).value
    print(format_grades(rows))
    bad = failures(rows)
    if bad:
        logs = Path(out).with_name(Path(out).stem + "-logs")  # made only when a notebook ran
        print(
            f"{prog}: {len(bad)} submission(s) could not be graded (status column of {out}"
            + (f"; logs in {logs})" if logs.is_dir() else "; no notebook ran, so there are no logs)"),
            file=sys.stderr,
        )
        return 1
    return 0
