"""What a lab forbids, found in the submitted source by the grader (txcourse/course/grading/forbidden.py).

Each way of calling a forbidden built-in (directly, through an alias or an import, by a string, in a thread,
from a cell the student added) is found, for the exercise it is in; every honest notebook of the course (the
solutions, the unchanged student versions, the catalogue's correct variants) has no finding; the probe
kernel's prelude makes the forbidden callables raise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from txcourse.course.grading.forbidden import (  # noqa: E402
    FORBIDDEN,
    PATCHED,
    forbidden_findings,
    forbidden_prelude,
    source_findings,
)
from txcourse.course.labs import LABS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "labs" / "mutants"))

W3 = "week3_attention"
ALIASES = {"torch": "torch", "F": "torch.nn.functional", "tx": "txcourse.torch", "keras": "keras", "np": "numpy"}

# (what the student wrote in an exercise cell of week 3, a word the reason must contain)
EVASIONS = [
    ("F.scaled_dot_product_attention(q, k, v)", "torch.nn.functional.scaled_dot_product_attention"),
    ("torch.nn.functional.scaled_dot_product_attention(q, k, v)", "scaled_dot_product_attention"),
    ("from torch.nn.functional import scaled_dot_product_attention as s\ns(q, k, v)", "imports"),
    ("G = torch.nn.functional\nG.scaled_dot_product_attention(q, k, v)", "scaled_dot_product_attention"),
    ("torch._C._nn.scaled_dot_product_attention(q, k, v)", "scaled_dot_product_attention"),
    ("getattr(F, 'scaled_dot_product_attention')(q, k, v)", "the string"),
    # red team 2026-11-27 (8/17 in week 3): the math kernel underneath, reached by reduce(getattr, ...)
    ("functools.reduce(getattr, ['_scaled_dot' + '_product_attention_math'], torch.ops.aten)(q, k, v)", "as a value"),
    ("torch.ops.aten._scaled_dot_product_attention_math(q, k, v)", "torch.ops"),
    # round B: other routes to the same kernels, and lookups by string of the standard library
    ("torch._C._jit_get_operation('aten::_scaled_dot_product_attention' + '_math')[0](q, k, v)", "torch._C"),
    ("from torch import ops as O\nO.aten.__getattr__('_scaled_dot' + '_product_attention_math')", "imports torch.ops"),
    ("torch._native_multi_head_attention(q, k, v, 4, 1, w, b, w2, b2)", "_native_multi_head_attention"),
    ("string.Formatter().get_field('0.src.layers.MultiHead' + 'Attention', (keras,), {})[0]", "by string"),
    ("import pydoc\npydoc.locate('torch._scaled_dot' + '_product_attention_math')", "by string"),
    ("import pkgutil\npkgutil.resolve_name('torch:_scaled_dot' + '_product_attention_math')", "by string"),
    ("getattr(F, 'scaled_' + 'dot_product_attention')(q, k, v)", "computed name"),
    ("name = ''.join(['scaled', '_dot_product', '_attention'])\ngetattr(F, name)(q, k, v)", "computed name"),
    ("getattr(F, bytes([115]).decode() + 'caled_dot_product_attention')(q, k, v)", "computed name"),
    ("import importlib\nimportlib.import_module('torch.nn.functional')", "imports"),
    ("__import__('torch').nn", "__import__"),
    ("eval('F.scaled_dot_product_' + 'attention')(q, k, v)", "eval"),
    ("exec(code)", "exec"),
    ("vars(F)['scaled_dot_product_attention']", "vars"),
    ("globals()['helper'](q, k, v)", "globals"),
    ("F.__dict__['scaled_dot_product_attention']", "__dict__"),
    ("import operator\noperator.attrgetter('x')(F)", "attrgetter"),
    ("import sys\nsys.modules['torch'].nn", "modules"),
    ("import threading\nthreading.Thread(target=work).start()", "thread"),
    ("from concurrent.futures import ThreadPoolExecutor\nThreadPoolExecutor().submit(work)", "thread"),
    ("import multiprocessing", "elsewhere"),
    ("get_ipython().events.register('pre_run_cell', hook)", "kernel's hooks"),
    ("sys.setprofile(None)", "frames"),
    # round C: the probe's own line read through the stack, leaked through the numbers the feedback quotes
    ("import traceback\ncaller = traceback.extract_stack()[-2]", "frames"),
    ("import linecache\nlinecache.getlines(name)", "frames"),
    ("from traceback import extract_stack as es\nes()", "frames"),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame.f_back", "frames"),
    ("sys.exc_info()[2].tb_frame", "frames"),
    ("f.__wrapped__(q, k, v)", "code objects"),
    ("tx.scaled_dot_product_attention(q, k, v)", "txcourse.torch.scaled_dot_product_attention"),
    ("tx.tiled_attention(q, k, v)", "tiled_attention"),
    ("tx.MultiHeadAttention(8, 2).split_heads(x)", "split_heads"),
    ("keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)", "keras.layers.MultiHeadAttention"),
    ("from keras.layers import MultiHeadAttention", "imports"),
    ("keras.ops.dot_product_attention(q, k, v)", "dot_product_attention"),
    ("torch.nn.MultiheadAttention(8, 2)", "MultiheadAttention"),
    ("def f(:\n", "cannot read"),
]


@pytest.mark.parametrize("source,reason", EVASIONS, ids=[e[0].split("\n")[-1][:40] for e in EVASIONS])
def test_each_evasion_is_found(source, reason):
    found = source_findings(source, W3, ALIASES, "scaled_dot_product_attention")
    assert found and any(reason in f for f in found), (source, found)


HONEST = [
    "def scaled_dot_product_attention(q, k, v, mask=None):\n"
    "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
    "    return torch.softmax(scores, dim=-1) @ v, torch.softmax(scores, dim=-1)",
    "raise ValueError('scaled_dot_product_attention needs 3 tensors')",  # a sentence, not a name
    "x = self.split_heads(y)",  # the student's own method
    "import sys, warnings\nprint('to stderr', file=sys.stderr)",
    "out = padding_mask(tokens)",  # the student's own function
    "n = sum(1 for m in self.modules())",  # nn.Module.modules, not sys.modules
]


@pytest.mark.parametrize("source", HONEST)
def test_honest_code_has_no_finding(source):
    assert source_findings(source, W3, ALIASES, "scaled_dot_product_attention") == []


def test_the_building_blocks_an_exercise_names_are_allowed():
    week4 = "self.self_attn = tx.MultiHeadAttention(d_model, num_heads)\nself.norm = nn.LayerNorm(d_model)"
    assert source_findings(week4, "week4_encoder", {**ALIASES, "nn": "torch.nn"}) == []
    assert source_findings("self.x = keras.layers.MultiHeadAttention(2, 4)", "week4_encoder", ALIASES)
    assert source_findings("tx.EncoderLayer(config)", "week4_encoder", ALIASES)
    # week 2's worked table may not use positional_encoding at all, not even the student's own
    assert source_findings("t = positional_encoding(4, 4)", "week2_positional", ALIASES, "worked_table")
    assert not source_findings("t = positional_encoding(4, 4)", "week2_positional", ALIASES, "positional_encoding")


def _source(lab, fw, kind="source"):
    return nbformat.read(ROOT / "labs" / kind / lab / f"{lab}_{fw}.ipynb", as_version=4)


@pytest.mark.parametrize("fw", ["torch", "tf"])
@pytest.mark.parametrize("lab", LABS)
def test_the_course_notebooks_have_no_finding(lab, fw):
    """The solutions and the unchanged student versions: nothing found (every rule can be met honestly)."""
    master = _source(lab, fw)
    assert forbidden_findings(master, lab, fw, master) == {}
    assert forbidden_findings(_source(lab, fw, "release"), lab, fw, master) == {}


def test_the_correct_variants_of_the_catalogue_have_no_finding():
    from catalogue import MUTANTS
    from support.scripts import load_script

    run = load_script(ROOT / "labs" / "mutants" / "run.py", "mutants_run")  # not labs/attacks/run.py

    correct = [m for m in MUTANTS if m.kind == "correct"]
    assert correct
    for m in correct:
        for fw in m.frameworks():
            assert forbidden_findings(run.mutant_notebook(m, fw), m.lab, fw, _source(m.lab, fw)) == {}, m.name


def _with_cell(master, grade_id, source, added=None):
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell.source = source
    if added is not None:
        nb.cells.insert(5, nbformat.v4.new_code_cell(added))
    return nb


def test_a_finding_zeroes_its_exercise_only_and_an_added_cell_every_exercise():
    master = _source(W3, "torch")
    heads = next(c.source for c in master.cells if c.get("id") == "heads")
    nb = _with_cell(master, "heads", heads + "\nimport threading\nthreading.Thread(target=print).start()")
    assert set(forbidden_findings(nb, W3, "torch", master)) == {"test_heads"}
    helper = "import torch.nn.functional as F\ndef attend(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)"
    nb = _with_cell(master, "heads", heads, added=helper)
    findings = forbidden_findings(nb, W3, "torch", master)
    tests = {
        c.metadata.nbgrader["grade_id"] for c in master.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")
    }
    assert set(findings) == tests and all("a cell you added" in why for why in findings.values())
    # an edited course cell: judged on what the edit adds
    course = next(c for c in master.cells if c.cell_type == "code" and not c.get("metadata", {}).get("nbgrader"))
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    next(c for c in nb.cells if c.get("id") == course.get("id")).source = course.source + "\nprint(1)"
    assert forbidden_findings(nb, W3, "torch", master) == {}
    next(c for c in nb.cells if c.get("id") == course.get("id")).source = course.source + "\neval('1')"
    assert forbidden_findings(nb, W3, "torch", master)


def test_every_lab_has_rules_and_patches():
    assert set(FORBIDDEN) == set(LABS) == set(PATCHED)


@pytest.mark.parametrize(
    "fw,module,setup,call",
    [
        (
            "torch",
            "torch",
            "import torch",
            "torch.nn.functional.scaled_dot_product_attention(*(torch.zeros(1, 1, 2),) * 3)",
        ),
        ("torch", "torch", "import torch", "torch.nn.MultiheadAttention(4, 2)"),
        (
            "torch",
            "torch",
            "import torch",
            "torch.ops.aten._scaled_dot_product_attention_math(*(torch.zeros(1, 1, 2),) * 3)",
        ),
        # round B: the operator-level refusal catches every route to the kernels, and a class refuses by any alias
        ("torch", "torch", "import torch", "torch._scaled_dot_product_attention_math(*(torch.zeros(1, 1, 2),) * 3)"),
        (
            "torch",
            "torch",
            "import torch",
            "torch._C._jit_get_operation('aten::_scaled_dot_product_attention_math')[0](*(torch.zeros(1, 1, 2),) * 3)",
        ),
        ("torch", "torch", "import torch", "torch.nn.modules.activation.MultiheadAttention(4, 2)"),
        ("tf", "keras", "import keras", "keras.src.layers.MultiHeadAttention(num_heads=1, key_dim=2)"),
        ("tf", "keras", "import keras", "keras.layers.MultiHeadAttention(num_heads=1, key_dim=2)"),
        ("tf", "keras", "import keras", "keras.ops.dot_product_attention(1, 1, 1)"),
    ],
)
def test_the_prelude_makes_the_forbidden_callables_raise(fw, module, setup, call):
    pytest.importorskip(module)
    code = f"{forbidden_prelude(W3, fw)}\n{setup}\ntry:\n    {call}\n"
    code += "except RuntimeError as error:\n    print('refused:', error)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert "refused:" in done.stdout and "not allowed in this lab" in done.stdout, done.stdout + done.stderr[-2000:]
