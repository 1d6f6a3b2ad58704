"""Red team round E (2026-11-28), attacker E1 (issue 30, item 7): the holes it found, each closed by its family.

1. Strings turned into names or code by the standard library and installed packages (a Jinja2 template,
   ``logging.config``'s resolve, ``timeit.Timer``, ``torch._utils._import_dotted_name``, ...): a submission may
   import only the labs' modules (:data:`import_guard.ALLOWED_IMPORTS`, in the source; in the kernel
   :data:`import_guard.KERNEL_IMPORTS`, judged for the notebook's own code), never a private (``_``) name of a
   library nor ``keras.src``.
2. ``zipimporter("helper.dat").load_module(name)``: no code compiled from a file, or an archive, the notebook wrote,
   whatever its name.
3. and 4. The originals behind the disabled public names (Keras Attention's ``_calculate_scores``, the
   ``keras.src`` losses, the Keras torch backend's loss): refused in the probe kernel, walked by name, also in a
   module imported later.
5. ``ctranslate2`` (installed, not a lab's dependency): not on the list.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.prelude import run_prelude

nbformat = pytest.importorskip("nbformat")

from tests.course.test_grading import _python_in_sandbox, need_sandbox  # noqa: E402
from txcourse.course.grading import sandbox  # noqa: E402
from txcourse.course.grading.forbidden import _aliases, forbidden_findings, forbidden_prelude, source_findings  # noqa: E402
from txcourse.course.grading.import_guard import GUARD, NOT_LISTED, REFUSED  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
W2, W3, W6 = "week2_positional", "week3_attention", "week6_training"
ALIASES = {"torch": "torch", "F": "torch.nn.functional", "tf": "tensorflow", "keras": "keras", "np": "numpy"}

# (what the student wrote, a word the reason must contain)
OFF_THE_LIST = [
    ("import jinja2", NOT_LISTED),
    ("import jinja2.loaders\nz = jinja2.loaders.zipimport.zipimporter(p)", NOT_LISTED),
    ("import logging.config\nA = logging.config.BaseConfigurator({}).resolve(s)", NOT_LISTED),
    ("from logging import config", NOT_LISTED),
    ("import timeit\ntimeit.Timer(code, globals=box).timeit(number=1)", NOT_LISTED),
    *((f"import {m}", NOT_LISTED) for m in ("cProfile", "profile", "pdb", "trace", "code", "codeop", "operator")),
    ("from sympy import sympify", NOT_LISTED),
    ("from ctranslate2.converters.marian import _make_sinusoidal_position_encodings", NOT_LISTED),
    ("import types", NOT_LISTED),
    ("import os\nos.system('python -c 1')", "runs code elsewhere"),
    ("import os\nos.popen(cmd).read()", "runs code elsewhere"),
    ("import os\nos.execv(exe, argv)", "runs code elsewhere"),
    ("from os import posix_spawn", "runs code elsewhere"),
    ("from . import helpers", "relative import"),
    ("import torch._utils", "_utils"),
    ("from torch import _utils", "_utils"),
    ("A = torch._utils._import_dotted_name(path)", "_utils"),
    ("f = tf._api.v2.nn", "_api"),
    ("A = keras.src.layers.attention.attention.Attention", "keras.src"),
    ("from keras import src", "keras.src"),
    ("from keras.src.losses.losses import mean_squared_error", "keras.src"),
    ("from txcourse import course", "txcourse.course"),
    ("from txcourse.course.grading import probes", "txcourse.course"),
]


@pytest.mark.parametrize("source,reason", OFF_THE_LIST, ids=[s.split("\n")[0][:40] for s, _ in OFF_THE_LIST])
def test_what_is_off_the_labs_list_is_a_finding(source, reason):
    found = source_findings(source, W3, ALIASES, "scaled_dot_product_attention")
    assert found and any(reason in f for f in found), (source, found)


HONEST = [
    "import math\nimport numpy as np\nimport torch\nimport torch.nn.functional as F",
    "import tensorflow as tf\nimport keras\nfrom typing import Optional\nfrom dataclasses import dataclass",
    "from __future__ import annotations\nimport functools, itertools, collections, random, re, warnings",
    "from txcourse.notebook.checks import assert_close\nx = tf.__version__",
    "y = self._cache[0]\nz = layer._built",  # the student's own objects
    "import os, sys\nos.write(2, b'to fd 2')\nprint(os.path.join('a', 'b'), file=sys.stderr)",
]


@pytest.mark.parametrize("source", HONEST)
def test_honest_imports_have_no_finding(source):
    assert source_findings(source, W3, ALIASES, "scaled_dot_product_attention") == []


@pytest.mark.parametrize("path", sorted(ROOT.glob("labs/source/*/*.ipynb")), ids=lambda p: p.stem)
def test_the_solutions_import_only_what_the_list_allows(path):
    nb = nbformat.read(path, as_version=4)
    lab = path.parent.name
    assert forbidden_findings(nb, lab, "tf" if path.stem.endswith("_tf") else "torch", nb) == {}


def _round_e1_attacks():
    """The catalogue's round E1 entries (labs/attacks/attack_catalogue.py), one case per lab and framework."""
    sys.path.insert(0, str(ROOT / "labs" / "attacks"))
    from attack_catalogue import ATTACKS

    return [(a, lab, fw) for a in ATTACKS if a.name.startswith("e1_") for lab in a.labs for fw in ("torch", "tf")]


@pytest.mark.parametrize("attack, lab, fw", _round_e1_attacks(), ids=lambda x: getattr(x, "name", str(x)))
def test_the_round_e1_attacks_are_refused_in_the_source(attack, lab, fw):
    """Each of attacker E1's working attacks, as the catalogue hands it in (the released notebook with the attack's
    cells), has a source finding, and only in graded cells."""
    master = nbformat.read(ROOT / f"labs/source/{lab}/{lab}_{fw}.ipynb", as_version=4)
    submission = nbformat.read(ROOT / f"labs/release/{lab}/{lab}_{fw}.ipynb", as_version=4)
    attack.notebook(submission)
    found = forbidden_findings(submission, lab, fw, master)
    graded = [c.metadata["nbgrader"]["grade_id"] for c in master.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert found and set(found) <= set(graded), found


def test_the_course_cells_are_not_judged_by_the_list():
    """The course's own cells (os, subprocess, importlib.util in the setup) are not the student's: no finding."""
    path = ROOT / "labs/source/week3_attention/week3_attention_torch.ipynb"
    nb = nbformat.read(path, as_version=4)
    trees = [ast.parse(c.source) for c in nb.cells if c.cell_type == "code"]
    assert "os" in _aliases(trees) and forbidden_findings(nb, W3, "torch", nb) == {}


# The kernel's guard: each import a cell runs is judged (the notebook's namespace, not the boot's); a library's
# own imports are not; code from a zip the cell wrote (any name) is refused.
CELLS = {
    "honest": "import numpy, math, os, subprocess, importlib.util\nfrom typing import Optional\n",
    "jinja2": "import jinja2",
    "logging.config": "import logging.config",
    "timeit": "import timeit",
    "ctranslate2": "from ctranslate2.converters.marian import _make_sinusoidal_position_encodings",
    "torch._utils": "import torch._utils",
    "from torch import _utils": "from torch import _utils",
    "keras.src": "from keras import src",
    "txcourse.course": "from txcourse import course",
    "import_module": "import importlib\nimportlib.import_module('cProfile')",
}
# C code's own lazy imports, attributed to the cell calling it (numpy imports numpy._core._methods on a first .max())
LAZY = "import numpy as np\nx = np.ones(3)\nx.max(); x.std()\n"
KERNEL_PROBE = """
import zipfile
with zipfile.ZipFile("helper.dat", "w") as z:  # what the cell wrote (the boot writes it here: zipfile is off the list)
    z.writestr("hid.py", "X = 1")
for name, code in CELLS.items():
    code = LAZY_CODE + code if name == "honest" else code
    try:
        exec(compile(code, "/tmp/ipykernel_0/cell.py", "exec"), {"__name__": "__main__"})
        print("ran", name)
    except ImportError as error:
        print("refused" if NOT_LISTED in str(error) else "OTHER " + repr(error)[:200], name)
cell = "import math\\nm = z.zipimporter('helper.dat').load_module('hid')"
try:
    exec(compile(cell, "/tmp/ipykernel_0/zip.py", "exec"), {"__name__": "__main__", "z": __import__("zipimport")})
    print("ran zipimporter")
except PermissionError as error:
    print("refused" if REFUSED in str(error) else "OTHER " + repr(error)[:200], "zipimporter")
import json, logging.config  # the boot's (and a library's) own imports stay allowed
print("library imports ok")
"""


def _kernel_probe() -> str:
    cells = repr(CELLS)
    probe = KERNEL_PROBE.replace("LAZY_CODE", repr(LAZY))
    return GUARD + probe.replace("CELLS.items()", f"{cells}.items()").replace(
        "NOT_LISTED in", f"{NOT_LISTED!r} in"
    ).replace("REFUSED in", f"{REFUSED!r} in")


def _check_kernel(stdout: str) -> None:
    lines = [
        line for line in stdout.strip().splitlines() if line.split(" ")[0] in ("ran", "refused", "OTHER", "library")
    ]
    expected = ["ran honest", *(f"refused {name}" for name in CELLS if name != "honest")]
    assert lines == [*expected, "refused zipimporter", "library imports ok"], stdout


def test_the_kernel_guard_keeps_cells_to_the_list_and_refuses_a_written_zip(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", _kernel_probe()], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    _check_kernel(done.stdout)


def test_the_kernel_guard_in_the_sandbox(tmp_path):
    need_sandbox()
    work, run = tmp_path / "work", tmp_path / "run"
    work.mkdir(), run.mkdir()
    box = sandbox.Sandbox(bwrap=sandbox.find_bwrap())
    argv = box.kernel_argv(work, run, {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    done = _python_in_sandbox(box, argv, _kernel_probe())
    assert done.returncode == 0, done.stderr[-2000:]
    _check_kernel(done.stdout)


def test_week3_tf_prelude_refuses_every_method_of_keras_attention():
    pytest.importorskip("tensorflow")
    setup = "import importlib\nimport tensorflow as tf\nimport keras\n"
    setup += "A = importlib.import_module('keras.src.layers.attention.attention').Attention\n"
    setup += "nn = importlib.import_module('keras.src.backend.tensorflow.nn')\n"
    calls = ["A._calculate_scores(None, 1, 1)", "A._apply_scores(None, 1, 1)", "nn.dot_product_attention(1, 1, 1)"]
    honest = "w = tf.nn.softmax(tf.ones((2, 3)) @ tf.ones((3, 2)), axis=-1)"
    out = run_prelude(W3, "tf", setup, calls, honest)
    assert out.count("refused: True") == len(calls) and "RAN:" not in out and "HONEST OK" in out, out


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_week6_prelude_refuses_the_keras_originals_also_imported_later(fw):
    """keras.src's categorical_crossentropy behind keras.losses', and the Keras torch backend's (a module no one
    imported before the prelude: walked once loaded)."""
    pytest.importorskip("tensorflow")
    pytest.importorskip("torch")
    setup = "import importlib\nimport torch\n" + ("import tensorflow as tf\n" if fw == "tf" else "")
    setup += "L = importlib.import_module('keras.src.losses.losses')\n"
    setup += "T = importlib.import_module('keras.src.backend.torch.nn')\n"
    calls = [
        "L.categorical_crossentropy(1, 1)",
        "T.categorical_crossentropy(1, 1)",
        "T.sparse_categorical_crossentropy(1, 1)",
    ]
    honest = "import numpy as np\nz = float(np.log(np.exp(1.0)))"
    out = run_prelude(W6, fw, setup, calls, honest)
    assert out.count("refused: True") == len(calls) and "RAN:" not in out and "HONEST OK" in out, out


def test_the_prelude_and_the_kernel_guard_together_import_a_new_framework_module():
    """In the probe kernel both finders ask every other finder: a framework module imported after the prelude
    (week 6 trained, importing new torch modules) must load once, not recurse between them, and be walked."""
    pytest.importorskip("torch")
    pytest.importorskip("keras")
    code = (
        GUARD
        + forbidden_prelude(W6, "torch")
        + (
            "\nimport importlib\nT = importlib.import_module('keras.src.backend.torch.nn')\n"
            "try:\n    T.categorical_crossentropy(1, 1)\n    print('RAN')\n"
            "except RuntimeError as error:\n    print('refused', 'not allowed in this lab' in str(error))\n"
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and done.stdout.split()[-2:] == ["refused", "True"], done.stdout + done.stderr[-3000:]
