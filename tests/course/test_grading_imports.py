"""The student package imports no grading code: nbgrader, the grader and its sandbox stay the instructor's.

A student installs txcourse for the labs and the book; ``txcourse.course.grading`` (and with it nbgrader and
the bubblewrap sandbox) is loaded only by the instructor's commands. Each check runs in a fresh
Python, so what other tests imported does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUDENT_MODULES = (
    "txcourse",
    "txcourse.torch",
    "txcourse.tf",
    "txcourse.data",
    "txcourse.notebook.checks",
    "txcourse.notebook.plots",
)


def _grading_modules_after(*modules: str) -> list[str]:
    """The grading modules (txcourse.course.grading*, nbgrader*, any *sandbox) loaded by importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'txcourse.course.grading' or m.startswith("
        "('txcourse.course.grading.', 'nbgrader')) or m.split('.')[-1] == 'sandbox')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_check_can_fail():
    assert "txcourse.course.grading.sandbox" in _grading_modules_after("txcourse.course.grading")


@pytest.mark.timeout(300)
def test_student_modules_load_no_grading_code():
    pytest.importorskip("torch")
    pytest.importorskip("tensorflow")
    assert _grading_modules_after(*STUDENT_MODULES) == []


def test_cli_module_loads_no_grading_code():
    assert _grading_modules_after("txcourse.cli") == []
