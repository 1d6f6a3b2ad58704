"""``python -m txcourse.course.grading release | check | grade``: the instructor's grading commands.

``release`` makes the student versions (``make labs``), ``check`` checks every lab notebook
(``make test-labs``), ``grade`` grades a folder of submissions (``make grade``; the same as
``txcourse grade``). ``workspace`` is internal: one notebook in its workspace, run by
:func:`txcourse.course.grading.workspace.grade_one`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Optional

from txcourse.course.grading.check import check_labs, format_check_table
from txcourse.course.grading.command import add_grade_options, grade_command
from txcourse.course.grading.course import DEFAULT_CELL_TIMEOUT, FRAMEWORKS, LABS
from txcourse.course.grading.release import release
from txcourse.course.grading.workspace import grade_workspace

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m txcourse.course.grading`` and its four commands."""
    parser = argparse.ArgumentParser(prog="python -m txcourse.course.grading", description=__doc__.splitlines()[0])
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
    p.add_argument("--probe", action="store_true")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; its exit status."""
    args = build_parser().parse_args(argv)

    if args.command == "workspace":
        return grade_workspace(args.lab, args.student, args.cell_timeout, args.feedback, args.probe)

    if args.command == "release":
        release(args.labs_dir, tuple(args.lab or LABS))
        return 0
    if args.command == "check":
        return _check(args)
    if args.timeout < 1:
        print(
            f"python -m txcourse.course.grading grade: error: --timeout must be at least 1 second, got {args.timeout}",
            file=sys.stderr,
        )
        return 2
    return grade_command(args, args.timeout, prog="python -m txcourse.course.grading grade")


def _check(args: argparse.Namespace) -> int:
    """``check``: check the labs, print the table and every problem; 1 if there is any."""
    start = time.perf_counter()
    results = check_labs(
        args.labs_dir,
        args.build_dir,
        tuple(args.lab or LABS),
        tuple(args.framework or FRAMEWORKS),
        jobs=args.jobs,
        timeout=args.timeout,
        threads=args.threads,
    )
    total = time.perf_counter() - start
    print()
    print(format_check_table(results))
    print(f"\ntotal {total:.0f} s ({total / 60:.1f} min) with {args.jobs} job(s)")
    problems = [p for r in results for p in r.problems]
    for problem in problems:
        print(f"\nPROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
