"""Run a lab's probe-kernel prelude (txcourse.course.grading.forbidden.forbidden_prelude) in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

from txcourse.course.grading.forbidden import forbidden_prelude


def run_prelude(lab: str, fw: str, setup: str, calls: list[str], honest: str) -> str:
    """Runs the prelude of ``lab``, then ``setup``, then each call (printing ``refused: True`` or ``RAN:``), then
    the ``honest`` code (``HONEST OK``): stdout and the end of stderr."""
    code = f"{forbidden_prelude(lab, fw)}\n{setup}\n"
    for call in calls:
        code += f"try:\n    {call}\n    print('RAN:', {call!r})\nexcept RuntimeError as error:\n"
        code += "    print('refused:', 'not allowed in this lab' in str(error), type(error).__name__)\n"
    code += f"{honest}\nprint('HONEST OK')\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    return done.stdout + done.stderr[-3000:]
