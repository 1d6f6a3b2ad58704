"""The training step written out in the book equals the Trainer's step (book: week 6, "One training step, written out").

The functions are read from the page itself (``book/week6_training.md``, the
section "One training step, written out"), not copied: ``train_step_by_hand``
(PyTorch) and ``compiled_step_tf`` / ``train_step_by_hand_tf``
(TensorFlow). Each runs on a copy of a model's initial weights, and the
Trainer's ``fit`` on the model itself, over the same batches (the Trainer's
stream with seed 0), with dropout on: the losses of every step and the
weights after one and after three steps must agree. A Trainer whose
clipping, label smoothing or Adam settings differ from the page's must not
agree, so the check can fail when the Trainer changes and the page does not.

The functions carry the page's constants (eps_ls = 0.1, clip norm 1.0, Adam
0.9 / 0.98 / 1e-9, warm-up 20 steps); the Trainer here gets the same values
through :class:`~txcourse.training.TrainConfig`, whose defaults they are.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import numpy as np
import pytest
from support.training import weights

from txcourse.backends import backend
from txcourse.data import PAD_ID
from txcourse.data.prepare import prepare_task
from txcourse.registry import default_model_config
from txcourse.training import BatchStream, TrainConfig, noam_lr

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "week6_training.md"
SECTION = "## One training step, written out"
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.M | re.S)
FUNCTIONS = {"torch": ["train_step_by_hand"], "tf": ["compiled_step_tf", "train_step_by_hand_tf"]}
STEP = {"torch": "train_step_by_hand", "tf": "train_step_by_hand_tf"}

# The page's settings: its TrainConfig, with a record every step, and its model, with dropout on here.
CONFIG = TrainConfig(steps=40, batch_size=32, warmup_steps=20, log_every=1, progress=False, device="cpu")
MODEL = {"d_model": 32, "num_heads": 2, "d_ff": 64, "num_encoder_layers": 1, "num_decoder_layers": 1, "dropout": 0.1}
SAME = 1e-5  # the same operations, rounded alike or nearly: bit for bit on the page, about 1e-7 with dropout on


def section_cells(text: str) -> list[str]:
    """The code of the section's code cells, their ``:option:`` lines dropped."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    cells = CELL.findall(text[start : end if end >= 0 else len(text)])
    return ["\n".join(line for line in cell.splitlines() if not re.match(r"^:\w+:", line)) for cell in cells]


def page_functions(framework: str) -> dict:
    """The page's step functions for ``framework``, defined from the page's source (decorators included)."""
    namespace: dict = {"PAD_ID": PAD_ID, "noam_lr": noam_lr}
    if framework == "torch":
        import torch

        namespace["torch"] = torch
    else:
        import tensorflow as tf

        namespace["tf"] = tf
    found = {}
    for cell in section_cells(PAGE.read_text(encoding="utf-8")):
        for node in ast.parse(cell).body:
            if isinstance(node, ast.FunctionDef) and node.name in FUNCTIONS[framework]:
                found[node.name] = ast.Module(body=[node], type_ignores=[])
    missing = sorted(set(FUNCTIONS[framework]) - set(found))
    assert not missing, f"{PAGE.name}, section {SECTION!r}: no function {missing} in its code cells"
    for name in FUNCTIONS[framework]:  # in dependency order: the TF step calls the compiled function
        exec(compile(found[name], f"{PAGE.name}:{name}", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def task():
    return prepare_task("numbers", sizes=(512, 64, 64), seed=0)  # the page's `small`


_BY_HAND: dict = {}  # (framework, steps) -> (losses, weights): the page's steps, run once per test session


def by_hand_and_trainer(fw, task, steps: int, config: TrainConfig = CONFIG):
    """(losses by hand, losses of the Trainer's records, weights by hand, weights of the Trainer) after ``steps``.

    Both start from the same weights with the same dropout masks: PyTorch's generator seeded with
    ``config.seed`` as ``Trainer(...)`` seeds it; in Keras the dropout seed states copied from the
    Trainer's model after the Trainer reseeded them. The steps by hand do not depend on ``config``
    (only its seed, always 0 here), so they run once per framework and number of steps.
    """
    half = backend(fw.name)
    tiny = default_model_config("transformer", task.src_tokenizer.vocab_size, task.tgt_tokenizer.vocab_size, MODEL)
    half.set_seed(0)
    model = half.build_model("transformer", tiny)
    key = (fw.name, steps)
    if fw.name == "torch":
        if key not in _BY_HAND:
            hand = copy.deepcopy(model)
            adam = fw.lib.optim.Adam(hand.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
            half.set_seed(CONFIG.seed)  # what Trainer(...) does when built: the same dropout masks
            _BY_HAND[key] = _steps_by_hand(fw, task, hand, adam, steps)
        trainer = half.Trainer(model, "transformer", tiny, task.train, config)
    else:
        trainer = half.Trainer(model, "transformer", tiny, task.train, config)  # it reseeds the dropout
        if key not in _BY_HAND:
            import keras

            from txcourse.tf.weights import load_model_arrays, model_arrays

            hand = half.build_model("transformer", tiny)
            load_model_arrays(hand, model_arrays(model), "model")  # weights and dropout seed states
            adam = keras.optimizers.Adam(learning_rate=1.0, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
            adam.build(hand.trainable_variables)
            _BY_HAND[key] = _steps_by_hand(fw, task, hand, adam, steps)
    records = trainer.fit(steps)
    losses, by_hand = _BY_HAND[key]
    return losses, [r["loss"] for r in records], by_hand, weights(fw.name, trainer.model)


def _steps_by_hand(fw, task, hand, adam, steps: int) -> tuple[list[float], dict]:
    """The page's step function ``steps`` times on the Trainer's first batches; the losses and the weights."""
    step_by_hand = page_functions(fw.name)[STEP[fw.name]]
    stream = BatchStream(task.train, CONFIG.batch_size, seed=CONFIG.seed)  # the batches the Trainer draws
    losses = [step_by_hand(hand, adam, next(stream), step)[0] for step in range(1, steps + 1)]
    return losses, weights(fw.name, hand)


def largest_difference(a: dict, b: dict, key_bias: bool = False) -> float:
    """The largest difference of the weights (by position), without (or only) the biases of W^K and dropout seeds.

    The page explains why the biases of W^K are apart: their gradient is zero but for rounding, and Adam
    turns that noise into moves of a fraction of the learning rate, different wherever the rounding is.
    """
    assert len(a) == len(b), f"{len(a)} and {len(b)} weights"
    names = list(b)  # the Trainer model's names (Keras numbers the layers of a second model differently)
    chosen = [
        i for i, n in enumerate(names) if "seed_generator" not in n and bool(re.search(r"w_k[./]bias$", n)) == key_bias
    ]
    assert chosen, f"no weight to compare (key_bias={key_bias}): {names}"
    values_a, values_b = list(a.values()), list(b.values())
    return max(float(np.abs(values_a[i] - values_b[i]).max()) for i in chosen)


def test_the_page_defines_the_step_functions():
    cells = section_cells(PAGE.read_text(encoding="utf-8"))
    assert len(cells) >= 4, f"{SECTION!r}: expected a PyTorch and a TensorFlow cell for the step and the check"
    defined = {n.name for cell in cells for n in ast.parse(cell).body if isinstance(n, ast.FunctionDef)}
    assert set(FUNCTIONS["torch"] + FUNCTIONS["tf"]) <= defined, defined


@pytest.mark.parametrize("steps", [1, 3])
def test_step_by_hand_equals_the_trainer(fw, task, steps):
    losses, trainer_losses, hand, trained = by_hand_and_trainer(fw, task, steps)
    assert len(trainer_losses) == steps
    for step, (mine, theirs) in enumerate(zip(losses, trainer_losses), 1):
        assert np.isfinite(mine) and abs(mine - theirs) <= SAME, f"{fw}: step {step}: loss {mine} by hand, {theirs}"
    difference = largest_difference(hand, trained)
    assert difference <= SAME, f"{fw}: after {steps} step(s) the weights differ by up to {difference:.3g}"
    rates = sum(noam_lr(step, MODEL["d_model"], CONFIG.warmup_steps) for step in range(1, steps + 1))
    noise = largest_difference(hand, trained, key_bias=True)  # Adam moves each at most about the rate per step
    assert noise <= 2 * rates, f"{fw}: the biases of W^K differ by {noise:.3g}, more than two steps' rates"
    backend(fw.name).set_seed(0)
    tiny = default_model_config("transformer", task.src_tokenizer.vocab_size, task.tgt_tokenizer.vocab_size, MODEL)
    initial = weights(fw.name, backend(fw.name).build_model("transformer", tiny))
    moved = largest_difference(
        {k: v for k, v in hand.items() if "seed_generator" not in k},
        {k: v for k, v in initial.items() if "seed_generator" not in k},
    )
    assert moved > 1e-3, f"{fw}: the steps moved no weight by more than {moved:.3g}: the comparison proves nothing"


@pytest.mark.parametrize(
    "change",
    [{"clip_norm": 0.5}, {"clip_norm": None}, {"label_smoothing": 0.0}, {"adam_betas": (0.9, 0.999)}],
    ids=["clip 0.5", "no clipping", "no smoothing", "beta2 0.999"],
)
def test_a_trainer_that_steps_differently_is_caught(fw, task, change):
    """The check above fails for a Trainer that clips, smooths or updates otherwise than the page writes."""
    losses, trainer_losses, hand, trained = by_hand_and_trainer(fw, task, 3, CONFIG.replace(**change))
    loss_gap = max(abs(a - b) for a, b in zip(losses, trainer_losses))
    difference = largest_difference(hand, trained)
    assert max(loss_gap, difference) > 10 * SAME, (
        f"{fw}: a Trainer with {change} agrees with the page's step (loss gap {loss_gap:.3g}, "
        f"weights {difference:.3g}): the check cannot see that change"
    )
