"""Cells of a lab, written once for both frameworks.

A cell's source is a string (the same in both notebooks), a dict
``{"torch": ..., "tf": ...}`` or a tuple of such parts (joined by a blank line). In either, ``[[FW]]`` becomes "PyTorch" or
"TensorFlow/Keras", ``[[fw]]`` "torch" or "tf", ``[[OTHER]]`` the other
framework's name and ``[[LAB]]`` the lab's name. Sources are dedented and
stripped, so they can be written as indented triple-quoted strings.

Kinds (with the nbgrader metadata ``labs/make_sources.py`` gives them):

- ``md`` / ``code``: ordinary cells, no nbgrader metadata;
- ``readonly``: locked (restored from the master copy when grading);
- ``parameters``: read-only and tagged ``parameters`` for papermill;
- ``solution``: the student's cell, with a ``### BEGIN SOLUTION`` region;
- ``tests``: a graded, locked test cell worth ``points``, with its ``probe`` (see :func:`tests`). Its
  source holds visible tests only: no ``### BEGIN HIDDEN TESTS`` (``labs/make_sources.py`` refuses one).
  What a hidden test would check goes into the probe: the grader compares the probe's values with the
  reference in its own process, so the student's kernel never receives the check's code.

A spec with probes also sets ``ALLOW = {"torch": [...], "tf": [...]}``: the txcourse functions and methods
(``"txcourse.torch.init:linear"``, ``"txcourse.torch.attention:MultiHeadAttention.__init__"``) the probe run's
copy of txcourse keeps (``txcourse/course/grading/allowlist.py``); everything else raises there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

Source = Union[str, dict, tuple]


@dataclass(frozen=True)
class Cell:
    kind: str
    source: Source
    grade_id: Optional[str] = None
    points: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)
    probe: Optional[Source] = None
    in_probe_run: bool = True  # False: a course cell the probe notebook leaves out (training, plots)


def md(source: Source) -> Cell:
    return Cell("md", source)


def code(source: Source, in_probe_run: bool = True) -> Cell:
    """An ordinary cell. ``in_probe_run=False``: left out of the probe run (a training run or a plot the
    probes do not need); a student's cell is left out only if its source is exactly this cell's."""
    return Cell("code", source, in_probe_run=in_probe_run)


def readonly(grade_id: str, source: Source) -> Cell:
    return Cell("readonly", source, grade_id)


def parameters(source: Source) -> Cell:
    return Cell("parameters", source, "parameters", tags=("parameters",))


def solution(grade_id: str, source: Source) -> Cell:
    return Cell("solution", source, grade_id)


def tests(grade_id: str, points: int, source: Source, probe: Optional[Source] = None) -> Cell:
    """A graded test cell. ``probe``: code the grader runs in the student's place instead of this cell,
    with only the spec's ``ALLOW`` of txcourse working (the rest raises), printing plain
    arrays with ``probe_emit(key, value, tol)`` from inputs drawn with ``PROBE_SEED``; the same probe after
    the solution cells is the reference (``txcourse/course/grading/probes.py``)."""
    return Cell("tests", source, grade_id, points, probe=probe)


HOW_IT_WORKS = """
    **How this lab works.** Each *Exercise* cell holds `raise NotImplementedError("write your code here")`:
    replace that line with your code, keeping the names and arguments. The cell after an exercise tests it
    with `assert`s. When your notebook is graded, your code is also checked outside your notebook, on fresh
    inputs the grader draws for each grading (against what the course's solutions give), so keep your code
    general rather than fitted to the visible checks. Do not edit or delete the test cells and the read-only
    cells: grading restores them from the master copy. Before you submit, run everything from the top
    (*Kernel → Restart Kernel and Run All Cells*).

    Grading judges the `assert`s only: a warning or anything your code writes to stderr never costs points
    (the grader shows it as ordinary output). Where an exercise asks you to write something `txcourse` also
    has (`tx.positional_encoding`, `tx.scaled_dot_product_attention`, the heads of `tx.MultiHeadAttention`,
    `tx.EncoderLayer`, ...), write it yourself: while your answers are checked, txcourse's version of it
    raises, so code that calls it loses the points (the building blocks an exercise names, such as
    `tx.MultiHeadAttention` inside your layer, are fine). The tests of a later exercise run with
    txcourse's versions of the earlier pieces, so one mistake costs points once. The grader also reads your
    source without running it, and code that could hide a call scores 0 for its exercise (in a cell you
    added or edited: for every test): avoid IPython magics and `!` commands (even `%time`: the grader cannot
    read them), `eval`/`exec`, `getattr` with a computed name, `vars`/`globals`/`__dict__`, threads and
    processes, `gc`/`pickle`, reading the call stack (`traceback`, `linecache`, `inspect`) and `get_ipython`.

    This is the **[[FW]]** notebook; `[[LAB]]_[[OTHER_fw]].ipynb` has the same exercises in [[OTHER]].
    The rest of the notebook uses the course package `txcourse` (`txcourse.[[fw]]`), whose classes and
    functions have the same names and arguments in both frameworks.
"""

# The imports and helpers every lab starts with (a read-only cell).
# The first cell of every lab. Where the course package is missing (Colab, Binder, a fresh Python) it
# installs it from GitHub, without the framework extras: those hosts bring their own (CUDA) PyTorch and
# TensorFlow, which `txcourse[torch]` / `[tf]` (CPU builds) would replace. In the course's environment
# the package is there and the cell does nothing.
INSTALL = """
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("txcourse") is None:  # e.g. on Colab: install the course package first
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                        "txcourse @ git+https://github.com/txcourse/txcourse"], check=True)
"""

SETUP = {
    "torch": """
        import math
        import os

        import matplotlib.pyplot as plt
        import numpy as np
        import torch
        from torch import nn

        import txcourse.torch as tx
        from txcourse import TransformerConfig
        from txcourse.notebook import plots
        from txcourse.notebook.checks import assert_close, assert_equal, normal, to_numpy
        from txcourse.torch.train import set_seed


        def tensor(array, dtype=None):
            \"\"\"A NumPy array (or nested list) as a tensor; dtype is a NumPy name such as "float32".\"\"\"
            return torch.as_tensor(np.asarray(array, dtype=dtype))
    """,
    "tf": """
        import math
        import os

        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # hide TensorFlow's start-up messages

        import keras
        import matplotlib.pyplot as plt
        import numpy as np
        import tensorflow as tf

        import txcourse.tf as tx
        from txcourse import TransformerConfig
        from txcourse.notebook import plots
        from txcourse.notebook.checks import assert_close, assert_equal, normal, to_numpy
        from txcourse.tf.train import set_seed


        def tensor(array, dtype=None):
            \"\"\"A NumPy array (or nested list) as a tensor; dtype is a NumPy name such as "float32".\"\"\"
            return tf.constant(np.asarray(array, dtype=dtype))
    """,
}

SETUP_NOTE = """
    The helpers below come from `txcourse.notebook.checks` and work on tensors of either framework:
    `to_numpy(x)`, `normal(*shape, seed=...)` (fixed-seed float32 numbers, the same in both frameworks),
    `assert_close(actual, expected, atol, what)` and `assert_equal(actual, expected, what)`, which print
    the largest difference and where it is when they fail. `set_seed(s)` seeds Python, NumPy and [[FW]].
"""
