"""Grading the lab notebooks with nbgrader: the instructor's side of the course, never the student's.

The labs live in ``labs/`` as an nbgrader course (``labs/nbgrader_config.py``); the modules here
are grouped by role:

- :mod:`~txcourse.course.grading.release` (``make labs``): the student versions, ``labs/release``;
- :mod:`~txcourse.course.grading.check` (``make test-labs``): every lab notebook executed, re-validated
  and autograded (the solution must get full marks, the blank version zero);
- :mod:`~txcourse.course.grading.grade` (``make grade``, ``txcourse grade``): a folder of submissions
  graded into a CSV, logs and HTML feedback in phases (intake, masters, dispatch and collect, CSV) of one
  run object (:mod:`~txcourse.course.grading.context`), each notebook in a workspace of its own
  (:mod:`~txcourse.course.grading.workspace`, :mod:`~txcourse.course.grading.submissions`) with its kernel in
  a bubblewrap sandbox (:mod:`~txcourse.course.grading.sandbox`);
- shared: :mod:`~txcourse.course.grading.course` (lab names, notebook ids),
  :mod:`~txcourse.course.grading.nbgrader_run` (the tools as subprocesses, the gradebook),
  :mod:`~txcourse.course.grading.hidden` (the one scanner of hidden-test lines, used by the feedback
  and by ``labs/nbgrader_config.py``) and :mod:`~txcourse.course.grading.execute` (nbgrader's Execute,
  restarting a kernel that ignores the interrupt; nbgrader is imported there, so only the config does).

The commands: ``python -m txcourse.course.grading release | check | grade`` (:mod:`txcourse.course.grading.__main__`).
Nothing of the student package (``txcourse.torch``, ``txcourse.tf``, ``txcourse.data`` ...)
imports this package (tests/course/test_grading_imports.py). Imports nothing heavy at import time (no
framework, no nbgrader).
"""

from txcourse.course.grading.check import LabCheck, check_labs, format_check_table
from txcourse.course.grading.command import add_grade_options, failures, grade_command
from txcourse.course.grading.course import DEFAULT_CELL_TIMEOUT, FRAMEWORKS, LABS, TRAINING_LABS, notebook_name
from txcourse.course.grading.grade import DEFAULT_NOTEBOOK_TIMEOUT, GradingInterrupted, grade_submissions
from txcourse.course.grading.hidden import feedback_leaks, hidden_test_lines
from txcourse.course.grading.release import release
from txcourse.course.grading.workspace import GRADED, MISSING

__all__ = [
    "LABS",
    "FRAMEWORKS",
    "TRAINING_LABS",
    "DEFAULT_CELL_TIMEOUT",
    "DEFAULT_NOTEBOOK_TIMEOUT",
    "GRADED",
    "MISSING",
    "notebook_name",
    "release",
    "LabCheck",
    "check_labs",
    "format_check_table",
    "grade_submissions",
    "GradingInterrupted",
    "failures",
    "add_grade_options",
    "grade_command",
    "hidden_test_lines",
    "feedback_leaks",
]
