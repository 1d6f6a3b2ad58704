"""``txcourse grade``: autograde lab submissions with the course's grading tool, imported here only.

The grading tool (nbgrader, the sandbox) is instructor code, outside what a student's
``import txcourse`` loads; its options are defined with it and parsed here, when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from txcourse.cli.options import OneLineParser, OptionError

__all__ = ["add_arguments", "grade_command", "grade_parser"]


def add_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``txcourse grade`` to the ``txcourse`` parser's subcommands; its options are :func:`grade_parser`'s."""
    # The grading tool is instructor code: its options are parsed by txcourse.cli.grade, which imports it only
    # when `txcourse grade` runs (`txcourse grade --help` lists them).
    return subparsers.add_parser(
        "grade",
        add_help=False,
        help="autograde a folder of lab submissions: a CSV of scores and HTML "
        "feedback (nbgrader); `txcourse grade --help` for its options",
    )


def grade_parser() -> argparse.ArgumentParser:
    """The parser of ``txcourse grade`` (imports the grading tool)."""
    from txcourse.course.grading import DEFAULT_CELL_TIMEOUT, LABS, add_grade_options

    grade = OneLineParser(
        prog="txcourse grade",
        description="autograde a folder of lab submissions: a CSV of scores and HTML feedback (nbgrader)",
    )
    grade.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    grade.add_argument("--lab", required=True, help=f"one of {list(LABS)}")
    grade.add_argument("--out", type=Path, default=None, help="CSV to write (default _build/grades/LAB.csv)")
    grade.add_argument(
        "--cell-timeout",
        type=int,
        default=DEFAULT_CELL_TIMEOUT,
        metavar="S",
        help=f"seconds a cell may run before it is interrupted (default {DEFAULT_CELL_TIMEOUT})",
    )
    grade.add_argument("--labs-dir", type=Path, default=Path("labs"), help="the nbgrader course (default labs)")
    grade.add_argument("--no-feedback", action="store_true", help="skip the HTML feedback")
    add_grade_options(grade)  # --jobs, --notebook-timeout, --memory, --probe-seed, --no-sandbox
    return grade


def grade_command(args: argparse.Namespace) -> int:
    """Exit status: 0, 1 when a submission could not be graded, 2 for a bad argument or no sandbox,
    128 + signal when interrupted (txcourse.course.grading.grade_command)."""
    from txcourse.course.grading import grade_command as grade

    options = grade_parser().parse_args(args.rest)
    check_grade_options(options)
    return grade(options, options.cell_timeout, prog="txcourse", raise_errors=True)


def check_grade_options(options: argparse.Namespace) -> None:
    """The user's mistakes in the options, refused before anything is graded (the grading pipeline refuses them
    too, with a bare ValueError, until it is restructured: these are the same messages, named by their option)."""
    from txcourse.course.grading import LABS

    if options.cell_timeout < 1:
        raise OptionError(f"--cell-timeout must be at least 1 second, got {options.cell_timeout}", "--cell-timeout")
    labs_dir, lab = options.labs_dir.resolve(), options.lab
    if lab not in LABS and not (labs_dir / "source" / lab).is_dir():
        raise OptionError(f"unknown lab {lab!r}; labs are {list(LABS)}", "--lab")
    submissions = options.submissions.resolve()
    if not submissions.is_dir():
        raise OptionError(f"submissions folder {str(submissions)!r} does not exist", "submissions")
    if not (labs_dir / "source" / lab).is_dir():
        raise OptionError(
            f"no lab sources {str(labs_dir / 'source' / lab)!r}: run from the repository root or "
            f"pass the course folder (labs_dir, --labs-dir)",
            "--labs-dir",
        )
