"""Red team round C (2026-11-27), attacker C1: the holes it found in what a lab forbids, each closed.

- week 3 (tf): ``keras.layers.GroupQueryAttention`` and its private ``_compute_attention`` did the attention
  exercise (8/17, 11/17 with exercise 4): found in the source, and refused in the probe kernel;
- week 6: a library loss that is the cross-entropy up to a constant (``F.poisson_nll_loss`` summed minus 1,
  ``tf.nn.log_poisson_loss``, KL divergence, CTC, focal, the v1 losses, ``tf.raw_ops``) did the loss (10/19):
  the whole family is found in the source and refused in the probe kernel (names and, in PyTorch, the operators);
- week 6: a finding in the loss cell left ``test_training_worked`` (3 points, its probe trains with the
  student's loss) paid, because that test follows another exercise: :data:`JUDGED_BY` costs it too.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from support.prelude import run_prelude

nbformat = pytest.importorskip("nbformat")

from txcourse.course.grading.forbidden import (  # noqa: E402
    JUDGED_BY,
    _exercises,
    forbidden_findings,
    source_findings,
)
from txcourse.course.labs import LABS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
W3, W6 = "week3_attention", "week6_training"
ALIASES = {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn", "tf": "tensorflow", "keras": "keras"}

# (lab, exercise cell, what the student wrote, a word the reason must contain)
EVASIONS = [
    # week 3 tf, 8/17: the attention exercise by Keras's grouped-query attention layer (and 11/17 with exercise 4)
    *(
        (
            lab,
            cell,
            "layer = keras.layers.GroupQueryAttention(head_dim=4, num_query_heads=2, num_key_value_heads=2)",
            "",
        )
        for lab in ("week1_seq2seq", W3, "week4_encoder", "week5_decoder")
        for cell in (None, "scaled_dot_product_attention")
    ),
    (W3, "multi_head_attention", "from keras.layers import GroupQueryAttention", "imports"),
    (W3, None, "keras.src.layers.attention.grouped_query_attention.GroupedQueryAttention", "GroupedQueryAttention"),
    (W3, "scaled_dot_product_attention", "out, w = layer._compute_attention(q, k, v, keep)", "_compute_attention"),
    (W3, "scaled_dot_product_attention", "out = make()._compute_attention(q, k, v)", "_compute_attention"),
    # week 6, 10/19: library losses that give the cross-entropy up to a constant
    (
        W6,
        "label_smoothed_loss",
        "F.poisson_nll_loss(log_p, soft, log_input=True, reduction='none').sum(-1) - 1",
        "poisson",
    ),
    (W6, "label_smoothed_loss", "nn.PoissonNLLLoss(log_input=True)(log_p, soft)", "PoissonNLLLoss"),
    (W6, "label_smoothed_loss", "torch.poisson_nll_loss(log_p, soft, True, False, 1e-8, 0)", "poisson"),
    (W6, "label_smoothed_loss", "tf.nn.log_poisson_loss(soft, tf.nn.log_softmax(logits))", "log_poisson_loss"),
    (W6, "label_smoothed_loss", "keras.losses.poisson(soft, tf.nn.softmax(logits))", "poisson"),
    (W6, "label_smoothed_loss", "keras.losses.Poisson()(soft, p)", "Poisson"),
    (W6, "label_smoothed_loss", "F.kl_div(log_p, soft, reduction='none').sum(-1)", "kl_div"),
    (W6, "label_smoothed_loss", "nn.KLDivLoss(reduction='none')(log_p, soft)", "KLDivLoss"),
    (W6, "label_smoothed_loss", "keras.losses.kl_divergence(soft, p)", "kl_divergence"),
    (W6, "label_smoothed_loss", "keras.losses.KLDivergence()(soft, p)", "KLDivergence"),
    (W6, "label_smoothed_loss", "keras.metrics.kld(soft, p)", "kld"),
    (W6, "label_smoothed_loss", "F.ctc_loss(log_p, targets, lengths, ones)", "ctc_loss"),
    (W6, "label_smoothed_loss", "keras.losses.CTC()(y, p)", "CTC"),
    (W6, "label_smoothed_loss", "torchvision.ops.sigmoid_focal_loss(x, y)", "focal"),
    (W6, "label_smoothed_loss", "keras.losses.CategoricalFocalCrossentropy(gamma=0.0)(y, p)", "Focal"),
    (W6, "label_smoothed_loss", "tf.nn.sampled_softmax_loss(w, b, y, x, 4, 4)", "sampled_softmax_loss"),
    (W6, "label_smoothed_loss", "nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(x, y)", "AdaptiveLogSoftmax"),
    (W6, "label_smoothed_loss", "nn.NLLLoss2d()(log_p, y)", "NLLLoss2d"),
    (W6, "label_smoothed_loss", "tf.compat.v1.losses.log_loss(y, p)", "log_loss"),
    (W6, "label_smoothed_loss", "tf.compat.v1.losses.softmax_cross_entropy(y, logits, label_smoothing=0.1)", "soft"),
    (W6, "label_smoothed_loss", "from tensorflow.python.ops.losses import losses_impl", "losses_impl"),
    (W6, "label_smoothed_loss", "tensorflow.python.ops.nn_ops.softmax_cross_entropy_with_logits_v2(y, x)", "cross"),
    (W6, "label_smoothed_loss", "tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)", "raw_ops"),
    (W6, "label_smoothed_loss", "from tensorflow import raw_ops as R\nR.Xlogy(x=y, y=p)", "raw_ops"),
    (W6, "label_smoothed_loss", "getattr(tf.nn, 'log_poisson_loss')(y, x)", "the string"),
]


@pytest.mark.parametrize("lab,cell,source,reason", EVASIONS, ids=[f"{e[0][:6]}-{e[2][:40]}" for e in EVASIONS])
def test_each_round_c_evasion_is_found(lab, cell, source, reason):
    found = source_findings(source, lab, ALIASES, cell)
    assert found and any(reason in f for f in found), (source, found)


HONEST_W6 = [
    'first, last = history[0]["loss"], history[-1]["loss"]',  # the word "loss" is a key of week 6's history
    'losses = []\nlosses.append(float(loss))\nprint("losses", losses)',
    "log_p = torch.log_softmax(logits, dim=-1)\nnll = -log_p.gather(-1, targets[..., None])[..., 0]",
    "log_p = tf.nn.log_softmax(logits, axis=-1)\nsmooth = -tf.reduce_mean(log_p, axis=-1)",
    "def label_smoothed_loss(logits, targets, smoothing=0.1, pad_id=0):\n    return loss_sum / count",
]


@pytest.mark.parametrize("source", HONEST_W6)
def test_honest_week6_code_has_no_finding(source):
    assert source_findings(source, W6, ALIASES, "label_smoothed_loss") == []


def test_a_keras_layer_may_call_its_own_compute_attention():
    assert source_findings("out = self._compute_attention(q, k, v)", W3, ALIASES, "scaled_dot_product_attention") == []


def _master(lab, fw):
    return nbformat.read(ROOT / "labs" / "source" / lab / f"{lab}_{fw}.ipynb", as_version=4)


def _with_cell(master, grade_id, source):
    nb = nbformat.reads(nbformat.writes(master), as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            cell.source = source
    return nb


LOSS_TESTS = {"test_loss_without_smoothing", "test_loss_matches_reference", "test_loss_ignores_padding"}


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_a_finding_in_an_exercise_costs_the_tests_that_judge_it_elsewhere(fw):
    """A forbidden loss costs test_training_worked too (it follows top_p_filter but trains with your loss); a
    forbidden greedy decoder costs test_your_decoder_translates; the exercises in between keep their tests."""
    master = _master(W6, fw)
    loss = "import tensorflow as tf\ndef label_smoothed_loss(logits, targets, smoothing=0.1, pad_id=0):\n"
    loss += "    return tf.compat.v1.losses.softmax_cross_entropy(targets, logits, label_smoothing=smoothing)"
    found = forbidden_findings(_with_cell(master, "label_smoothed_loss", loss), W6, fw, master)
    assert set(found) == LOSS_TESTS | {"test_training_worked"}, found
    decode = "def greedy_decode(model, src, max_len, sos_id=1, eos_id=2, pad_id=0):\n"
    decode += "    return tx.greedy_decode(model, src, max_len)"
    found = forbidden_findings(_with_cell(master, "greedy_decode", decode), W6, fw, master)
    assert set(found) == {"test_greedy_decode", "test_your_decoder_translates"}, found


def _calls(source: str, name: str) -> bool:
    return re.search(rf"(?<![.\w]){re.escape(name)}\(", source) is not None  # name(...), not layer.name(...)


@pytest.mark.parametrize("lab", LABS)
def test_judged_by_names_every_test_whose_probe_runs_another_exercise(lab):
    """JUDGED_BY is complete and right: a test whose probe calls a function that an exercise other than its own
    defines is listed for that exercise, and every listed test exists and calls it."""
    for fw in ("torch", "tf"):
        master = _master(lab, fw)
        owner = {test: exercise for exercise, tests in _exercises(master).items() for test in tests}
        defines = {}
        for cell in master.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("solution"):
                body = ast.parse(cell.source).body
                defines[meta["grade_id"]] = [n.name for n in body if isinstance(n, ast.FunctionDef)]
        probes = json.loads((ROOT / "labs" / "probes" / f"{lab}.json").read_text())["probes"][fw]
        needed: dict[str, set[str]] = {}
        for test, probe in probes.items():
            text = probe if isinstance(probe, str) else json.dumps(probe)
            for exercise, names in defines.items():
                if exercise != owner.get(test) and any(_calls(text, n) for n in names):
                    needed.setdefault(exercise, set()).add(test)
        listed = {exercise: set(tests) for exercise, tests in JUDGED_BY.get(lab, {}).items()}
        assert listed == needed, (lab, fw, listed, needed)
    if lab == W6:
        assert JUDGED_BY[W6]["label_smoothed_loss"] == ["test_training_worked"]


TF_W3_CALLS = [
    "keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=1, num_key_value_heads=1)",
    "keras.src.layers.attention.grouped_query_attention.GroupedQueryAttention(head_dim=2, num_query_heads=1, "
    "num_key_value_heads=1)",
    "keras.src.layers.attention.grouped_query_attention.GroupedQueryAttention._compute_attention(None, 1, 1, 1)",
]


def test_the_prelude_refuses_grouped_query_attention():
    pytest.importorskip("keras")
    setup = "import keras\nimport keras.src.layers.attention.grouped_query_attention"
    out = run_prelude(W3, "tf", setup, TF_W3_CALLS, "keras.layers.Dense(2)")
    assert out.count("refused: True") == len(TF_W3_CALLS) and "RAN:" not in out and "HONEST OK" in out, out


TF_W6_CALLS = [
    "tf.nn.log_poisson_loss(y, x)",
    "nn_impl.log_poisson_loss(y, x)",
    "tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)",
    "tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=[0, 1])",
    "tf.compat.v1.losses.softmax_cross_entropy(y, x)",
    "tf.compat.v1.losses.log_loss(y, tf.nn.softmax(x))",
    "losses_impl.softmax_cross_entropy(y, x)",
    "nn_ops.softmax_cross_entropy_with_logits_v2(labels=y, logits=x)",
    "gen_nn_ops.softmax_cross_entropy_with_logits(x, y)",
    "keras.losses.poisson(y, tf.nn.softmax(x))",
    "keras.losses.Poisson()",
    "keras.losses.kl_divergence(y, tf.nn.softmax(x))",
    "keras.losses.KLDivergence()",
    "keras.metrics.kl_divergence(y, tf.nn.softmax(x))",
    "keras.losses.categorical_focal_crossentropy(y, x, from_logits=True)",
]


def test_the_prelude_refuses_the_cross_entropy_family_in_tensorflow():
    pytest.importorskip("tensorflow")
    setup = "import keras\nimport tensorflow as tf\nfrom tensorflow.python.ops import gen_nn_ops, nn_impl, nn_ops\n"
    setup += "from tensorflow.python.ops.losses import losses_impl\n"
    setup += "x = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])\ny = tf.constant([[1.0, 0, 0], [0, 1.0, 0]])"
    honest = "print(float(-tf.reduce_sum(y * tf.nn.log_softmax(x, axis=-1))))"
    out = run_prelude(W6, "tf", setup, TF_W6_CALLS, honest)
    assert out.count("refused: True") == len(TF_W6_CALLS) and "RAN:" not in out and "HONEST OK" in out, out


TORCH_W6_CALLS = [
    "F.poisson_nll_loss(x.log_softmax(-1), y, log_input=True)",
    "torch.nn.PoissonNLLLoss()",
    "torch.poisson_nll_loss(x.log_softmax(-1), y, True, False, 1e-8, 1)",
    "F.kl_div(x.log_softmax(-1), y)",
    "torch.nn.KLDivLoss()",
    "torch.kl_div(x.log_softmax(-1), y)",
    "torch.ops.aten.nll_loss_nd(x.log_softmax(-1), t)",
    "torch._C._nn.cross_entropy_loss(x, t)",
    "torch.ops.aten.poisson_nll_loss(x.log_softmax(-1), y, True, False, 1e-8, 1)",
    "F.ctc_loss(x.log_softmax(-1)[:, None], t[:1][None], [2], [1])",
    "torch.nn.AdaptiveLogSoftmaxWithLoss(3, 4, [2])",
]


def test_the_prelude_refuses_the_cross_entropy_family_in_pytorch():
    pytest.importorskip("torch")
    setup = "import torch\nimport torch.nn.functional as F\n"
    setup += "x = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], requires_grad=True)\n"
    setup += "y = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])\nt = torch.tensor([1, 2])"
    honest = "loss = -(y * x.log_softmax(-1)).sum()\nloss.backward()\nprint(float(loss), x.grad.shape)"
    out = run_prelude(W6, "torch", setup, TORCH_W6_CALLS, honest)
    assert out.count("refused: True") == len(TORCH_W6_CALLS) and "RAN:" not in out and "HONEST OK" in out, out


ROUND_C = {  # catalogue entry -> (lab, framework -> the test cells its source finding must cost)
    "keras_group_query_attention": (W3, {"tf": {"test_attention_notes_example", "test_attention_matches_reference"}}),
    "keras_group_query_attention_mha": (W3, {"tf": {"test_attention_mask", "test_multi_head_attention"}}),
    "poisson_nll_loss": (W6, {fw: LOSS_TESTS | {"test_training_worked"} for fw in ("torch", "tf")}),
    "v1_loss_training_points": (W6, {"tf": LOSS_TESTS | {"test_training_worked"}}),
    "raw_op_training_points": (W6, {"tf": LOSS_TESTS | {"test_training_worked"}}),
}


@pytest.mark.parametrize("name", sorted(ROUND_C))
def test_the_round_c_catalogue_entries_are_found_in_the_source(name):
    """Each working attack of round C is in the catalogue (expect "zero") and its notebook, as run.py builds it,
    has the findings that zero what it earned; the other framework's notebook is left blank."""
    sys.path.insert(0, str(ROOT / "labs" / "attacks"))
    spec = importlib.util.spec_from_file_location("attacks_run", ROOT / "labs" / "attacks" / "run.py")
    attacks_run = importlib.util.module_from_spec(spec)  # not labs/mutants/run.py, also imported as "run"
    spec.loader.exec_module(attacks_run)
    from attack_catalogue import ATTACKS

    attack = next(a for a in ATTACKS if a.name == name)
    lab, costs = ROUND_C[name]
    assert attack.expect == "zero" and attack.labs == (lab,) and "round C 2026-11-27" in attack.what
    for fw in ("torch", "tf"):
        found = forbidden_findings(attacks_run.attack_notebook(attack, lab, fw), lab, fw, _master(lab, fw))
        assert costs.get(fw, set()) <= set(found) and bool(found) == (fw in costs), (fw, found)
