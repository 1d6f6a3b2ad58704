"""Red team round D (2026-11-28), attacker D2: the holes it found, each closed.

- names looked up by string through ``unittest.mock`` (``patch.object(owner, "Name").get_original()``,
  ``patch("pkg.mod.name")``): refused in the source like ``getattr`` with a computed name;
- week 6 tf: ``gen_nn_ops.SoftmaxCrossEntropyWithLogits`` (the raw op's CamelCase function): the probe kernel
  refuses every name of the refused operators (CamelCase, snake_case, ``_eager_fallback``, ``tf.raw_ops``);
- week 6 torch: ``torch.distributions.kl_divergence`` + entropy is the cross-entropy: refused in the source and in
  the probe kernel (the function, ``_kl_*`` and the registry that dispatches to them);
- the probe cell's source and seed read from the kernel's input history (``In[-1]``): the probe run keeps no
  history, the source check refuses the history's names, and the note quotes no number the student's code picks;
- a cell the compiler cannot take (a 3,000-term expression): refused at intake, in a child process.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from support.prelude import run_prelude

nbformat = pytest.importorskip("nbformat")

from txcourse.course.grading.forbidden import forbidden_findings, source_findings  # noqa: E402
from txcourse.course.grading.submissions import why_uncompilable  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
W4, W6 = "week4_encoder", "week6_training"
ALIASES = {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn", "tf": "tensorflow", "keras": "keras"}
LOSS = "label_smoothed_loss"

# (lab, exercise cell, what the student wrote, a word the reason must contain)
EVASIONS = [
    (W6, LOSS, "from unittest import mock\nf = mock.patch.object(o, 'a' + 'b').get_original()[0]", "mock"),
    (W6, LOSS, "import unittest.mock as um\nf = um.patch('torch.nn.' + name)", "unittest"),
    (W6, LOSS, "from unittest.mock import patch\nwith patch.dict(d, {}):\n    pass", "unittest"),
    (W6, LOSS, "m = __import__('unittest.mock')", "unittest"),
    (W6, None, "f = thing.get_original()[0]", "get_original"),
    (W6, LOSS, "kl = torch.distributions.kl_divergence(p, q)", "kl_divergence"),
    (W6, LOSS, "from torch.distributions import kl_divergence", "kl_divergence"),
    (W6, LOSS, "f = torch.distributions.kl._KL_REGISTRY[(A, B)]", "_KL_REGISTRY"),
    (W6, LOSS, "f = torch.distributions.kl._kl_categorical_categorical", "_kl_categorical_categorical"),
    (W6, LOSS, "from torch.distributions.kl import _dispatch_kl", "_dispatch_kl"),
    (W6, LOSS, "from tensorflow.python.ops import gen_nn_ops\nf = gen_nn_ops.SoftmaxCrossEntropyWithLogits", "Cross"),
    (W6, LOSS, "f = gen_nn_ops.softmax_cross_entropy_with_logits_eager_fallback", "cross_entropy"),
    *((W4, "encoder_layer", f"src = {name}[-1]", name) for name in ("In", "_ih", "Out", "_oh")),
    *((W4, "encoder_layer", f"src = {name}", name) for name in ("_i", "_ii", "_iii", "_i12")),
    (W4, "encoder_layer", "h = shell.history_manager.input_hist_raw", "history_manager"),
    (W4, "encoder_layer", "code = sys.displayhook.shell.kernel.get_parent()['content']", "displayhook"),
    (W4, None, "code = k._parents['shell']", "_parents"),
]


@pytest.mark.parametrize("lab,cell,source,reason", EVASIONS, ids=[f"{e[0][:6]}-{e[2][:40]}" for e in EVASIONS])
def test_each_round_d_evasion_is_found(lab, cell, source, reason):
    found = source_findings(source, lab, ALIASES, cell)
    assert found and any(reason in f for f in found), (source, found)


HONEST = [
    "for _ in range(3):\n    pass",
    "_ = model(src)\nindex = 0\ni = 1",
    "log_p = torch.log_softmax(logits, dim=-1)\nnll = -log_p.gather(-1, targets[..., None])[..., 0]",
    "dist = torch.distributions.Categorical(logits=logits)\nnext_token = dist.sample()",  # sampling is allowed
    "inputs, outputs = batch\nhistory = trainer_history",
]


@pytest.mark.parametrize("source", HONEST)
def test_honest_code_has_no_round_d_finding(source):
    assert source_findings(source, W6, ALIASES, LOSS) == []
    assert source_findings(source, W4, ALIASES, "encoder_layer") == []


TF_CALLS = [
    "gen_nn_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)",
    "gen_nn_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=[0, 1])",
    "gen_nn_ops.softmax_cross_entropy_with_logits_eager_fallback(x, y, name=None, ctx=None)",
    "gen_nn_ops.sparse_softmax_cross_entropy_with_logits(x, [0, 1])",
    "mock.patch.object(gen_nn_ops, 'Softmax' + 'CrossEntropyWithLogits').get_original()[0](features=x, labels=y)",
    "mock.patch('tensorflow.raw_ops.SoftmaxCrossEntropyWithLogits').get_original()[0](features=x, labels=y)",
    "gen_ctc_ops.CTCLoss",
    "gen_ctc_ops.ctc_loss(x[None], [[0, 0]], [1], [2])",
]


def test_the_prelude_refuses_every_name_of_the_tensorflow_loss_ops():
    pytest.importorskip("tensorflow")
    setup = "from unittest import mock\nimport tensorflow as tf\nfrom tensorflow.python.ops import gen_nn_ops, gen_ctc_ops\n"
    setup += "x = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])\ny = tf.constant([[1.0, 0, 0], [0, 1.0, 0]])"
    honest = "print(float(-tf.reduce_sum(y * tf.nn.log_softmax(x, axis=-1))))"
    calls = [c if c != "gen_ctc_ops.CTCLoss" else "gen_ctc_ops.CTCLoss(x[None], [[0, 0]], [0], [2])" for c in TF_CALLS]
    out = run_prelude(W6, "tf", setup, calls, honest)
    assert out.count("refused: True") == len(calls) and "RAN:" not in out and "HONEST OK" in out, out


TORCH_CALLS = [
    "torch.distributions.kl_divergence(p, q)",
    "torch.distributions.kl.kl_divergence(p, q)",
    "kl_divergence(p, q)",  # imported after the prelude: the refusal
    "torch.distributions.kl._kl_categorical_categorical(p, q)",
    "torch.distributions.kl._KL_REGISTRY[(Categorical, Categorical)](p, q)",
    "torch.distributions.kl._dispatch_kl(Categorical, Categorical)(p, q)",
    "mock.patch.object(torch.distributions, 'kl_' + 'divergence').get_original()[0](p, q)",
]


def test_the_prelude_refuses_the_kl_divergence_of_torch_distributions():
    pytest.importorskip("torch")
    setup = "from unittest import mock\nimport torch\nfrom torch.distributions import Categorical\n"
    setup += "from torch.distributions import kl_divergence\n"
    setup += "p, q = Categorical(logits=torch.zeros(2, 3)), Categorical(logits=torch.ones(2, 3))"
    # what the exercise is written with stays: log-softmax, and Categorical's sampling, log_prob and entropy
    honest = "print(float(p.log_prob(torch.tensor([0, 1])).sum() + p.entropy().sum()), p.sample().shape)"
    out = run_prelude(W6, "torch", setup, TORCH_CALLS, honest)
    assert out.count("refused: True") == len(TORCH_CALLS) and "RAN:" not in out and "HONEST OK" in out, out


def test_the_probe_run_keeps_no_input_history(tmp_path):
    """The probe kernel runs every cell with store_history off: a function called from a later cell finds no
    In[-1], _ih, _i, Out of that cell (its source and PROBE_SEED), and %history has nothing."""
    pytest.importorskip("ipykernel")
    from nbformat.v4 import new_code_cell, new_notebook

    import txcourse
    from txcourse.course.grading.verdict import execute_notebook, unconfined_kernel

    student = "def peek():\n    g = globals()\n    return [In, _ih, g.get('_i'), g.get('_ii'), g.get('_iii'), Out, _oh]"
    probe = "PROBE_SEED = 157728853\nprint('@', peek(), repr(get_ipython().history_manager.input_hist_raw[-1:]))"
    nb = new_notebook(cells=[new_code_cell(student), new_code_cell("1 + 1"), new_code_cell(probe)])
    work = Path(tempfile.mkdtemp(prefix="txh-", dir="/tmp"))  # short: the kernel's Unix socket paths
    try:
        copy = Path(txcourse.__file__).resolve().parent
        execute_notebook(nb, unconfined_kernel(work / "jupyter", "txhist", copy, work / "rt"), 120, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs if o.get("output_type") == "stream")
    expected = "@ [[''], [''], None, None, None, {0: 2}, {0: 2}] ['']"  # Out: the values of cells, not their source
    assert printed.strip() == expected, nb.cells[2].outputs


def _code_notebook(*sources):
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    return new_notebook(cells=[new_markdown_cell("# lab"), *(new_code_cell(s) for s in sources)])


def test_a_cell_the_compiler_cannot_take_is_refused_at_intake():
    deep = "x = " + "+".join(["1"] * 3000)
    why = why_uncompilable(_code_notebook("import numpy as np", deep))
    assert why is not None and why.startswith("cell 3 (code)") and "RecursionError" in why, why
    nested = "x = " + "(" * 300 + "1" + ")" * 300
    why = why_uncompilable(_code_notebook(nested))
    assert why is not None and "too many nested parentheses" in why, why
    assert "took over" in why_uncompilable(_code_notebook("x = 1"), timeout=0.001)


def test_an_honest_cell_with_a_syntax_error_or_magics_is_not_refused():
    """An ordinary SyntaxError is the student's (the kernel fails that cell); magics and shell lines compile as
    IPython transforms them; the course's own notebooks compile."""
    assert why_uncompilable(_code_notebook("def f(:\n    pass", "%time y = 2\n!ls", "%%bash\necho hi")) is None
    for lab in ("week4_encoder", "week6_training"):
        for fw in ("torch", "tf"):
            master = nbformat.read(ROOT / "labs" / "source" / lab / f"{lab}_{fw}.ipynb", as_version=4)
            assert why_uncompilable(master) is None, (lab, fw)


ROUND_D = {  # catalogue entry -> (lab, framework -> the test cells its source finding must cost)
    "mock_raw_op_loss": (W6, {"tf": {"test_loss_without_smoothing", "test_loss_matches_reference"}}),
    "mock_distributions_kl_loss": (W6, {"torch": {"test_loss_without_smoothing", "test_training_worked"}}),
    "probe_seed_through_input_history": (W4, {fw: {"test_encoder_layer_matches_reference"} for fw in ("torch", "tf")}),
}


def _master(lab, fw):
    return nbformat.read(ROOT / "labs" / "source" / lab / f"{lab}_{fw}.ipynb", as_version=4)


@pytest.mark.parametrize("name", sorted(ROUND_D))
def test_the_round_d_catalogue_entries_are_found_in_the_source(name):
    """Each working attack of round D is in the catalogue (expect "zero") and its notebook, as run.py builds it,
    has the findings that zero what it earned; the other framework's notebook is left blank."""
    sys.path.insert(0, str(ROOT / "labs" / "attacks"))
    spec = importlib.util.spec_from_file_location("attacks_run", ROOT / "labs" / "attacks" / "run.py")
    attacks_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attacks_run)
    from attack_catalogue import ATTACKS

    attack = next(a for a in ATTACKS if a.name == name)
    lab, costs = ROUND_D[name]
    assert attack.expect == "zero" and attack.labs == (lab,) and "round D 2026-11-28" in attack.what
    for fw in ("torch", "tf"):
        found = forbidden_findings(attacks_run.attack_notebook(attack, lab, fw), lab, fw, _master(lab, fw))
        assert costs.get(fw, set()) <= set(found) and bool(found) == (fw in costs), (fw, found)


def test_the_compile_bomb_entry_is_refused_at_intake():
    sys.path.insert(0, str(ROOT / "labs" / "attacks"))
    spec = importlib.util.spec_from_file_location("attacks_run", ROOT / "labs" / "attacks" / "run.py")
    attacks_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attacks_run)
    from attack_catalogue import ATTACKS

    attack = next(a for a in ATTACKS if a.name == "compile_recursion_cell")
    assert attack.expect == "refused" and "round D 2026-11-28" in attack.what
    why = why_uncompilable(attacks_run.attack_notebook(attack, W4, "torch"))
    assert why is not None and "RecursionError" in why, why
