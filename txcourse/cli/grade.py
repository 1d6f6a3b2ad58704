"""``txcourse grade``: autograde lab submissions (txcourse.grading.grade_command, imported here only)."""

from __future__ import annotations

import argparse

from txcourse.cli.options import OptionError

__all__ = ["grade_command"]


def grade_command(args: argparse.Namespace) -> int:
    """Exit status: 0, 1 when a submission could not be graded, 2 for a bad argument or no sandbox,
    128 + signal when interrupted (txcourse.grading.grade_command)."""
    from txcourse.grading import grade_command as grade

    if args.cell_timeout < 1:
        raise OptionError(f"--cell-timeout must be at least 1 second, got {args.cell_timeout}", "--cell-timeout")
    return grade(args, args.cell_timeout, prog="txcourse", raise_errors=True)
