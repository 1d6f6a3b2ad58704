"""Grading the lab notebooks with nbgrader: the instructor's side of the course, never the student's.

The labs live in ``labs/`` as an nbgrader course (``labs/nbgrader_config.py``); the modules here
are grouped by role:

- :mod:`~txcourse.grading.release` (``make labs``): the student versions, ``labs/release``;
- :mod:`~txcourse.grading.check` (``make test-labs``): every lab notebook executed, re-validated
  and autograded (the solution must get full marks, the blank version zero);
- :mod:`~txcourse.grading.grade` (``make grade``, ``txcourse grade``): a folder of submissions
  graded into a CSV, logs and HTML feedback, each notebook in a workspace of its own
  (:mod:`~txcourse.grading.workspace`, :mod:`~txcourse.grading.submissions`) with its kernel in
  a bubblewrap sandbox (:mod:`~txcourse.grading.sandbox`);
- shared: :mod:`~txcourse.grading.course` (lab names, notebook ids),
  :mod:`~txcourse.grading.nbgrader_run` (the tools as subprocesses, the gradebook) and
  :mod:`~txcourse.grading.hidden` (the one scanner of hidden-test lines, used by the feedback
  and by ``labs/nbgrader_config.py``).

The commands: ``python -m txcourse.grading release | check | grade`` (:mod:`txcourse.grading.__main__`).
Nothing of the student package (``txcourse.torch``, ``txcourse.tf``, ``txcourse.data`` ...)
imports this package (tests/test_grading_imports.py). Imports nothing heavy at import time (no
framework, no nbgrader).
"""

from txcourse.grading.check import LabCheck, check_labs, format_check_table
from txcourse.grading.course import DEFAULT_CELL_TIMEOUT, FRAMEWORKS, LABS, TRAINING_LABS, notebook_name
from txcourse.grading.grade import (DEFAULT_NOTEBOOK_TIMEOUT, GradingInterrupted, add_grade_options, failures,
                                    grade_command, grade_submissions)
from txcourse.grading.hidden import feedback_leaks, hidden_test_lines
from txcourse.grading.release import release
from txcourse.grading.workspace import GRADED, MISSING

__all__ = ["LABS", "FRAMEWORKS", "TRAINING_LABS", "DEFAULT_CELL_TIMEOUT", "DEFAULT_NOTEBOOK_TIMEOUT", "GRADED",
           "MISSING", "notebook_name", "release", "LabCheck", "check_labs", "format_check_table",
           "grade_submissions", "GradingInterrupted", "failures", "add_grade_options", "grade_command",
           "hidden_test_lines", "feedback_leaks"]
