"""txcourse.training.loop: the one training loop both Trainers run.

Each half's ``Trainer`` provides its framework's step and weights and inherits
``fit``, ``save`` and ``load``; a half that wrote its own loop again fails
here. The loop itself needs no framework: a NumPy stand-in trains with it.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from txcourse.data import WordTokenizer, encode_pairs, get_task
from txcourse.registry import FRAMEWORKS
from txcourse.training import TrainConfig, read_history
from txcourse.training.checkpoint import read_checkpoint
from txcourse.training.distributed import SINGLE
from txcourse.training.loop import TrainingLoop, evaluate_batches

SHARED = ("fit", "save", "load", "_save_finite", "_stop_now")
HOOKS = ("train_step", "_evaluate", "_weights_finite", "_state_arrays", "_num_heads", "_restore")


def _data(n: int = 24):
    splits = get_task("copy", vocab="abcdef", min_len=2, max_len=5, sizes=(n, 4, 4))
    tok = WordTokenizer.fit([s for s, _ in splits.train])
    return tok, encode_pairs(splits.train, tok, tok)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_both_trainers_inherit_the_loop_and_provide_only_the_hooks(framework):
    trainer = importlib.import_module(f"txcourse.{framework}.train").Trainer
    assert issubclass(trainer, TrainingLoop) and trainer.framework == framework
    overridden = [name for name in SHARED if name in vars(trainer)]
    assert not overridden, f"txcourse.{framework}.train.Trainer defines its own {overridden}: use TrainingLoop's"
    assert all(getattr(trainer, name) is getattr(TrainingLoop, name) for name in SHARED)
    missing = [name for name in HOOKS if getattr(trainer, name) is getattr(TrainingLoop, name)]
    assert not missing, f"txcourse.{framework}.train.Trainer does not provide {missing}"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fit_runs_through_the_shared_loop(framework, monkeypatch):
    """A spy on TrainingLoop.fit sees the Trainer's fit: a Trainer with a fit of its own would not call it."""
    train = importlib.import_module(f"txcourse.{framework}.train")
    tok, data = _data()
    cfg = dict(src_vocab_size=len(tok.vocab), tgt_vocab_size=len(tok.vocab), embedding_dim=8, units=8, pad_id=0)
    trainer = train.Trainer(
        train.build_model("seq2seq", cfg),
        "seq2seq",
        cfg,
        data,
        TrainConfig(steps=3, batch_size=8, warmup_steps=2, log_every=1, progress=False, device="cpu"),
    )
    calls = []
    real_fit = TrainingLoop.fit

    def counting_fit(self, *args, **kwargs):
        calls.append(type(self).__module__)
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(TrainingLoop, "fit", counting_fit)
    records = trainer.fit()
    assert calls == [f"txcourse.{framework}.train"]
    assert [r["step"] for r in records] == [1, 2, 3] and trainer.step == 3


class NumpyTrainer(TrainingLoop):
    """A framework-free stand-in: its 'model' is one NumPy weight, its loss falls by 0.5 a step."""

    framework = "numpy"
    _versions = {"numpy_version": np.__version__}

    def __init__(self, data, config, history_path=None, valid=None):
        super().__init__("seq2seq", {"tgt_vocab_size": 10, "pad_id": 0}, data, config, history_path, None, valid)
        self.model, self.replicas, self.evaluated = np.zeros(3), SINGLE, []

    def train_step(self, batch):
        self.model += 1.0
        self.step += 1
        return {
            "loss": 3.0 - 0.5 * self.step,
            "accuracy": 0.1 * self.step,
            "tokens": 4,
            "lr": 1e-3,
            "stop": self._stop_now(),
        }

    def _evaluate(self, data):
        self.evaluated.append(self.step)
        return {"loss": 1.0, "accuracy": 0.5, "tokens": 4.0}

    def _weights_finite(self):
        return bool(np.isfinite(self.model).all())

    def _state_arrays(self):
        return {"model/w": self.model.copy()}


def test_the_loop_needs_no_framework(tmp_path):
    _, data = _data()
    config = TrainConfig(steps=5, batch_size=8, log_every=2, checkpoint_every=4, progress=False, device="cpu")
    trainer = NumpyTrainer(data, config, history_path=str(tmp_path / "history.jsonl"), valid=data)
    records = trainer.fit(checkpoint_path=str(tmp_path / "model.npz"))
    assert [r["step"] for r in records] == [2, 4, 5] and trainer.evaluated == [2, 4, 5]
    assert records[0]["loss"] == pytest.approx((2.5 + 2.0) / 2) and records[0]["valid_loss"] == 1.0
    assert read_history(tmp_path / "history.jsonl") == records
    meta, arrays = read_checkpoint(tmp_path / "model.npz")
    assert meta["framework"] == "numpy" and meta["step"] == 5 and meta["numpy_version"] == np.__version__
    assert np.array_equal(arrays["model/w"], np.full(3, 5.0))
    trainer.model[0] = np.nan  # a weight gone bad: no checkpoint of it, the one on disk stays
    with pytest.raises(FloatingPointError, match="training diverged at step 6: a weight is not finite"):
        trainer.fit(6, checkpoint_path=str(tmp_path / "model.npz"))
    assert read_checkpoint(tmp_path / "model.npz")[0]["step"] == 5


def test_evaluate_batches_weights_each_batch_by_its_tokens():
    """The mean over tokens, whatever the batching: batches of 3 and one batch of all agree."""
    _, data = _data(n=10)

    def score(batch):  # loss: the batch's first target id; accuracy 1; tokens: its non-pad targets
        return float(batch.tgt_out[0, 0]), 1.0, float((batch.tgt_out != data.pad_id).sum())

    small, whole = evaluate_batches(data, 3, score), evaluate_batches(data, 100, score)
    assert (
        small["tokens"]
        == whole["tokens"]
        == float((np.concatenate([b.tgt_out.ravel() for b in _batches(data)]) != data.pad_id).sum())
    )
    assert small["accuracy"] == whole["accuracy"] == 1.0
    with pytest.raises(ValueError, match="valid must be None or non-empty EncodedPairs"):
        evaluate_batches([], 3, score)


def _batches(data):
    from txcourse.data.batching import make_batches

    return make_batches(data, batch_size=100, shuffle=False)
