"""Week 6 in both halves: the loss, the schedule and the Trainer (checkpoints, exact resume, history).

Every test body runs once per framework (the ``fw`` fixture). Decoding: tests/torch_tf/test_decode.py."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from conftest import assert_close
from support.training import SCENARIO_CONFIG, copy_data, module, tiny_config_dict, weights

from txcourse.data import PAD_ID, encode_pairs, get_task
from txcourse.registry import FRAMEWORKS
from txcourse.training import TrainConfig, noam_lr, read_history, validation_curve
from txcourse.training.checkpoint import read_checkpoint, read_checkpoint_meta

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------------------
# the loss
# ---------------------------------------------------------------------------


def _logits_targets(seed: int = 0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=3.0, size=(3, 5, 11)).astype(np.float32)
    targets = rng.integers(1, 11, size=(3, 5))
    targets[1, 3:] = PAD_ID
    targets[2, 1:] = PAD_ID
    return logits, targets


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5, 1.0])
def test_loss_equals_torch_cross_entropy(fw, eps):
    logits, targets = _logits_targets()
    loss_fn = module(fw, "loss").label_smoothed_cross_entropy
    loss, count = loss_fn(fw.tensor(logits), fw.tensor(targets), smoothing=eps)
    expected = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits).double().flatten(0, 1),
        torch.from_numpy(targets).flatten(),
        ignore_index=PAD_ID,
        label_smoothing=eps,
    )
    assert np.isfinite(fw.numpy(loss))
    assert_close(fw.numpy(loss), expected.item(), 1e-6, f"loss eps={eps}")
    assert int(fw.numpy(count)) == int((targets != PAD_ID).sum())


def test_loss_padding_only_batch_is_zero_not_nan(fw):
    mod = module(fw, "loss")
    logits = fw.tensor(np.random.default_rng(1).normal(size=(2, 3, 7)).astype(np.float32))
    targets = fw.tensor(np.full((2, 3), PAD_ID))
    loss, count = mod.label_smoothed_cross_entropy(logits, targets)
    assert float(fw.numpy(loss)) == 0.0 and int(fw.numpy(count)) == 0
    assert float(fw.numpy(mod.token_accuracy(logits, targets))) == 0.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_loss_of_half_precision_logits_is_float32(fw, dtype):
    logits, targets = _logits_targets(2)
    loss_fn = module(fw, "loss").label_smoothed_cross_entropy
    loss, _ = loss_fn(fw.tensor(logits, dtype), fw.tensor(targets))
    assert loss.dtype == fw.lib.float32
    reference, _ = loss_fn(fw.tensor(logits), fw.tensor(targets))
    assert np.isfinite(fw.numpy(loss))
    assert_close(fw.numpy(loss), fw.numpy(reference), 0.05, f"{dtype} loss")


def test_loss_rejects_bad_arguments(fw):
    loss_fn = module(fw, "loss").label_smoothed_cross_entropy
    logits, targets = _logits_targets()
    with pytest.raises(ValueError, match="must agree on"):
        loss_fn(fw.tensor(logits), fw.tensor(targets[:, :4]))
    with pytest.raises(ValueError, match="smoothing"):
        loss_fn(fw.tensor(logits), fw.tensor(targets), smoothing=1.5)
    with pytest.raises(ValueError):
        loss_fn(fw.tensor(logits[0]), fw.tensor(targets))


def test_token_accuracy(fw):
    acc_fn = module(fw, "loss").token_accuracy
    logits, targets = _logits_targets(3)
    keep = targets != PAD_ID
    expected = ((logits.argmax(-1) == targets) & keep).sum() / keep.sum()
    assert_close(fw.numpy(acc_fn(fw.tensor(logits), fw.tensor(targets))), expected, 1e-6, "accuracy")


# ---------------------------------------------------------------------------
# the schedule
# ---------------------------------------------------------------------------


def test_noam_lr_warms_up_linearly_then_decays_as_inverse_sqrt():
    d, warmup = 64, 100
    peak = noam_lr(warmup, d, warmup)
    assert peak == pytest.approx(d**-0.5 * warmup**-0.5)
    assert noam_lr(warmup - 1, d, warmup) < peak and noam_lr(warmup + 1, d, warmup) < peak
    for step in (1, 10, 50, 100):  # linear: lr(s) = s * lr(1)
        assert noam_lr(step, d, warmup) == pytest.approx(step * noam_lr(1, d, warmup))
    for step in (100, 400, 1600, 10_000):  # 1/sqrt: lr(s) sqrt(s) is constant
        assert noam_lr(step, d, warmup) * step**0.5 == pytest.approx(d**-0.5)
    assert noam_lr(0, d, warmup) == noam_lr(1, d, warmup)
    assert noam_lr(10, d, warmup, factor=2.5) == pytest.approx(2.5 * noam_lr(10, d, warmup))


def test_noam_lr_cooldown_falls_linearly_over_the_last_steps():
    d, warmup, total, cool = 64, 100, 1000, 200
    for step in (1, 50, 400, 800):  # before the cool-down: Eq. (3) unchanged
        assert noam_lr(step, d, warmup, 1.0, total, cool) == noam_lr(step, d, warmup)
    for step in (801, 900, 1000):  # (total - step + 1) / cooldown of Eq. (3)
        assert noam_lr(step, d, warmup, 1.0, total, cool) == pytest.approx(
            noam_lr(step, d, warmup) * (total - step + 1) / cool
        )
    assert noam_lr(1001, d, warmup, 1.0, total, cool) == 0.0  # past the end: nothing
    with pytest.raises(ValueError, match="cooldown_steps needs total_steps"):
        noam_lr(5, d, warmup, cooldown_steps=3)
    with pytest.raises(ValueError, match=r"TrainConfig.cooldown_steps must be an integer >= 0, got -1"):
        TrainConfig(steps=10, cooldown_steps=-1)


def test_tf_noam_schedule_is_noam_lr():
    """Keras' schedule runs noam_lr's own arithmetic (noam_rate): equal to the last digit, cool-down included."""
    import tensorflow as tf

    from txcourse.tf.train import NoamSchedule

    d, warmup, total, cool = 64, 100, 1000, 200
    for cooldown in (0, cool):
        schedule = NoamSchedule(d, warmup, 2.0, total, cooldown)
        steps = [0, 1, 50, 99, 100, 400, 799, 800, 900, 999, 1000, 1500]
        got = [float(schedule(tf.constant(s, tf.int64))) for s in steps]
        assert got == [noam_lr(s + 1, d, warmup, 2.0, total, cooldown) for s in steps]


# ---------------------------------------------------------------------------
# the Trainer: one scenario per framework, shared by the tests below
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=FRAMEWORKS)
def scenario(request, tmp_path_factory):
    """Train 6 steps, checkpointing at step 3; then a NEW model loads that checkpoint and trains from 3 to 6.

    Both runs write the same history file: the resumed run must drop the
    records after step 3 before it writes its own.
    """
    name = request.param
    train = module(name, "train")
    folder = tmp_path_factory.mktemp(f"run_{name}")
    tok, data = copy_data(n=64)
    cfg = tiny_config_dict(len(tok.vocab))
    history = str(folder / "history.jsonl")
    train.set_seed(0)
    straight = train.Trainer(
        train.build_model("transformer", cfg),
        "transformer",
        cfg,
        data,
        SCENARIO_CONFIG,
        history_path=history,
        metadata={"task": "copy"},
    )
    straight.fit(3, checkpoint_path=str(folder / "step3.npz"))
    straight_records = list(straight.fit())  # saving at step 3 does not disturb the run
    train.set_seed(123)  # the resumed run starts from other random weights: load() must replace them all
    resumed = train.Trainer(
        train.build_model("transformer", cfg),
        "transformer",
        cfg,
        data,
        SCENARIO_CONFIG,
        history_path=history,
        metadata={"task": "copy"},
    )
    resumed.load(str(folder / "step3.npz"))
    resumed.fit(checkpoint_path=str(folder / "final.npz"))
    return {
        "name": name,
        "train": train,
        "folder": folder,
        "cfg": cfg,
        "data": data,
        "straight": straight,
        "straight_records": straight_records,
        "resumed": resumed,
    }


def test_exact_resume_gives_identical_weights(scenario):
    straight = weights(scenario["name"], scenario["straight"].model)
    resumed = weights(scenario["name"], scenario["resumed"].model)
    assert scenario["resumed"].step == scenario["straight"].step == 6
    assert len(straight) == len(resumed)
    differ = [a for a, b in zip(straight, resumed) if not np.array_equal(straight[a], resumed[b])]
    assert not differ, f"{scenario['name']}: weights differ after a resume: {differ[:5]}"


def test_stripped_checkpoint_loads_the_same_model_but_refuses_to_resume(scenario):
    from txcourse.training.checkpoint import main as checkpoint_main
    from txcourse.training.checkpoint import read_checkpoint

    folder, train = scenario["folder"], scenario["train"]
    full, stripped = folder / "final.npz", folder / "final-weights.npz"
    assert checkpoint_main(["strip", str(full), str(stripped)]) == 0
    meta, arrays = read_checkpoint(stripped)
    assert meta["weights_only"] is True and arrays and all(name.startswith(("model/", "arch/")) for name in arrays)
    assert len(read_checkpoint(full)[1]) > len(arrays)  # optimizer state dropped
    assert stripped.stat().st_size < full.stat().st_size
    original, _ = train.load_model(str(full))
    loaded, loaded_meta = train.load_model(str(stripped))
    a, b = weights(scenario["name"], original), weights(scenario["name"], loaded)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a.values(), b.values()))
    assert loaded_meta["model"] == meta["model"]
    trainer = train.Trainer(
        train.build_model("transformer", scenario["cfg"]),
        "transformer",
        scenario["cfg"],
        scenario["data"],
        SCENARIO_CONFIG,
    )
    with pytest.raises(ValueError, match="holds only the weights.*not resumed"):
        trainer.load(str(stripped))
    assert checkpoint_main(["strip", str(folder / "missing.npz"), str(folder / "x.npz")]) == 2


def test_history_records_and_no_duplicated_steps_after_resume(scenario):
    straight = scenario["straight_records"]
    resumed = read_history(scenario["folder"] / "history.jsonl")
    assert [r["step"] for r in straight] == [1, 2, 3, 4, 5, 6]
    assert [r["step"] for r in resumed] == [1, 2, 3, 4, 5, 6]
    assert set(straight[0]) == {"step", "loss", "accuracy", "lr", "tokens_per_s"}
    assert scenario["resumed"].history.records == resumed
    for a, b in zip(straight, resumed):  # the same run, interrupted or not
        assert a["loss"] == b["loss"] and a["accuracy"] == b["accuracy"] and a["lr"] == b["lr"]


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_a_stop_between_two_records_resumes_into_the_same_history(name, tmp_path):
    """Stopped at step 5 with a record every 4 steps, then resumed: the history reads as the uninterrupted run's
    (records 4 and 8 average the same steps, no extra record at 5), not 4, 5, 8 with record 8 averaging 6-8."""
    train = module(name, "train")
    tok, data = copy_data(n=64)
    cfg = tiny_config_dict(len(tok.vocab))
    config = SCENARIO_CONFIG.replace(steps=8, log_every=4, cooldown_steps=0)
    train.set_seed(0)
    straight = train.Trainer(
        train.build_model("transformer", cfg),
        "transformer",
        cfg,
        data,
        config,
        history_path=str(tmp_path / "straight.jsonl"),
    )
    straight.fit()
    history = tmp_path / "stopped.jsonl"
    train.set_seed(0)
    stopped = train.Trainer(
        train.build_model("transformer", cfg), "transformer", cfg, data, config, history_path=str(history)
    )
    step = stopped.train_step

    def stop_at_five(batch):
        out = step(batch)
        stopped.stop_requested = stopped.step >= 5
        return out

    stopped.train_step = stop_at_five
    stopped.fit(checkpoint_path=str(tmp_path / "model.npz"))
    partial = read_history(history)
    assert [r["step"] for r in partial] == [4, 5] and "partial" in partial[1] and "partial" not in partial[0]
    resumed = train.Trainer(
        train.build_model("transformer", cfg), "transformer", cfg, data, config, history_path=str(history)
    )
    resumed.load(str(tmp_path / "model.npz"))
    resumed.fit()
    expected, got = read_history(tmp_path / "straight.jsonl"), read_history(history)
    assert [r["step"] for r in got] == [r["step"] for r in expected] == [4, 8]
    for a, b in zip(expected, got):
        assert (a["loss"], a["accuracy"], a["lr"]) == (b["loss"], b["accuracy"], b["lr"]) and "partial" not in b


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_validation_curve_leaves_the_run_unchanged(name):
    """The same run with and without ``valid``: the same losses and weights (evaluating draws no random number,
    and the PyTorch model is back in training mode, dropout on, afterwards); each record's valid_loss is
    evaluate() of the weights at that step."""
    train = module(name, "train")
    tok, data = copy_data(n=64)
    valid = encode_pairs(get_task("copy", vocab="abcdefgh", min_len=2, max_len=6, sizes=(64, 12, 4)).valid, tok, tok)
    cfg = tiny_config_dict(len(tok.vocab))
    config = SCENARIO_CONFIG.replace(log_every=2)
    runs = {}
    for key, held_out in (("plain", None), ("valid", valid)):
        train.set_seed(0)
        trainer = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config, valid=held_out)
        first = list(trainer.fit(4))
        scores = train.evaluate(trainer.model, valid, config.label_smoothing)  # the weights of step 4
        runs[key] = (first + list(trainer.fit())[len(first) :], weights(name, trainer.model), scores)
    plain, with_valid = runs["plain"], runs["valid"]
    assert [r["loss"] for r in plain[0]] == [r["loss"] for r in with_valid[0]]
    assert all(np.array_equal(a, b) for a, b in zip(plain[1].values(), with_valid[1].values()))
    assert "valid_loss" not in plain[0][0]
    records = with_valid[0]
    assert [r["step"] for r in records] == [2, 4, 6]
    assert records[1]["valid_loss"] == with_valid[2]["loss"]
    assert records[1]["valid_accuracy"] == with_valid[2]["accuracy"]
    assert len({r["valid_loss"] for r in records}) == 3


def test_evaluate_is_the_token_mean_in_any_batching(fw):
    """evaluate() weights each batch by its tokens: batches of 3 and one batch of all give the same mean, which
    is PyTorch's cross_entropy over every non-pad token (dropout off)."""
    train = module(fw, "train")
    tok, data = copy_data(n=10)
    cfg = tiny_config_dict(len(tok.vocab), dropout=0.5)
    train.set_seed(0)
    model = train.build_model("transformer", cfg)
    small, whole = (train.evaluate(model, data, 0.1, batch_size=b) for b in (3, 100))
    assert small["tokens"] == whole["tokens"] == sum(len(t) + 1 for t in data.tgt)  # + <eos>
    assert small["loss"] == pytest.approx(whole["loss"], rel=1e-6)
    assert small["accuracy"] == pytest.approx(whole["accuracy"], rel=1e-6)
    from txcourse.data import make_batches

    batch = make_batches(data, batch_size=100, shuffle=False)[0]
    if fw.name == "torch":
        model.eval()
        logits = fw.numpy(model(fw.tensor(batch.src), fw.tensor(batch.tgt_in)))  # (B, T_tgt, V)
    else:
        logits = fw.numpy(model(fw.tensor(batch.src), fw.tensor(batch.tgt_in), training=False))
    expected = torch.nn.functional.cross_entropy(
        torch.from_numpy(np.asarray(logits)).double().flatten(0, 1),
        torch.from_numpy(batch.tgt_out).flatten(),
        ignore_index=PAD_ID,
        label_smoothing=0.1,
    )
    assert whole["loss"] == pytest.approx(expected.item(), rel=1e-5)
    if fw.name == "torch":
        assert not model.training  # model.eval() above; evaluate() leaves the mode as it found it
        model.train()
        train.evaluate(model, data)
        assert model.training


@pytest.mark.parametrize("bad", [[], "pairs", None])
def test_evaluate_and_trainer_refuse_bad_validation_data(fw, bad):
    train = module(fw, "train")
    tok, data = copy_data(n=8)
    cfg = tiny_config_dict(len(tok.vocab))
    empty = encode_pairs([], tok, tok) if bad is None else bad
    with pytest.raises(ValueError, match=r"valid must be None or non-empty EncodedPairs .* got \w+ of length"):
        train.evaluate(train.build_model("transformer", cfg), empty)
    with pytest.raises(ValueError, match=r"valid must be None or non-empty EncodedPairs"):
        train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, SCENARIO_CONFIG, valid=empty)


def test_validation_curve_needs_a_history_with_validation():
    assert validation_curve(
        [{"step": 1, "loss": 2.0}, {"step": 2, "loss": 1.0, "valid_loss": 1.5, "valid_accuracy": 0.5}]
    ) == [{"step": 2, "loss": 1.5, "accuracy": 0.5}]
    with pytest.raises(ValueError, match="history holds no valid_loss: retrain"):
        validation_curve([{"step": 1, "loss": 2.0}])


def test_reported_lr_equals_noam_lr(scenario):
    records = scenario["straight_records"]
    width, c = scenario["cfg"]["d_model"], SCENARIO_CONFIG
    for r in records[:5]:  # steps 4 and 5 are in the cool-down (the last 3 of 6 steps)
        expected = noam_lr(r["step"], width, c.warmup_steps, c.lr_factor, c.steps, c.cooldown_steps)
        assert r["lr"] == pytest.approx(expected, rel=1e-12, abs=0)
    assert records[4]["lr"] == pytest.approx(noam_lr(5, width, c.warmup_steps, c.lr_factor) * 2 / 3, rel=1e-12)


def test_checkpoint_header_and_no_temporary_files(scenario):
    folder = scenario["folder"]
    assert not [p for p in os.listdir(folder) if p.endswith(".tmp")]
    meta = read_checkpoint_meta(folder / "final.npz")
    assert meta["framework"] == scenario["name"] and meta["model"]["kind"] == "transformer"
    assert meta["model"]["config"] == scenario["cfg"] and meta["step"] == 6 and meta["task"] == "copy"
    assert meta["train_config"]["steps"] == SCENARIO_CONFIG.steps
    assert f"{'torch' if scenario['name'] == 'torch' else 'tf'}_version" in meta


def test_checkpoint_write_is_atomic(scenario, monkeypatch, tmp_path):
    path = tmp_path / "model.npz"
    trainer = scenario["resumed"]
    trainer.save(str(path))
    before = read_checkpoint(path)

    def broken_savez(file, *args, **kwargs):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        trainer.save(str(path))
    monkeypatch.undo()
    after = read_checkpoint(path)
    assert after[0] == before[0] and sorted(after[1]) == sorted(before[1])
    assert all(np.array_equal(after[1][k], before[1][k]) for k in before[1])
    assert os.listdir(tmp_path) == ["model.npz"]


def test_load_model_returns_the_trained_weights(scenario):
    model, meta = scenario["train"].load_model(str(scenario["folder"] / "final.npz"))
    assert meta["step"] == 6
    loaded, trained = weights(scenario["name"], model), weights(scenario["name"], scenario["resumed"].model)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.values(), trained.values()))


def test_checkpoint_of_other_framework_or_kind_is_refused(fw, tmp_path):
    tok, data = copy_data(n=16)
    cfg = tiny_config_dict(len(tok.vocab))
    other = "tf" if fw.name == "torch" else "torch"
    other_train, train = module(other, "train"), module(fw, "train")
    config = SCENARIO_CONFIG.replace(steps=1)
    other_train.Trainer(other_train.build_model("transformer", cfg), "transformer", cfg, data, config).save(
        str(tmp_path / "other.npz")
    )
    gru_cfg = dict(src_vocab_size=len(tok.vocab), tgt_vocab_size=len(tok.vocab), embedding_dim=8, units=8, pad_id=0)
    train.Trainer(train.build_model("bahdanau", gru_cfg), "bahdanau", gru_cfg, data, config).save(
        str(tmp_path / "gru.npz")
    )
    trainer = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config)
    with pytest.raises(ValueError, match=f"written by the '{other}' half") as err:
        trainer.load(str(tmp_path / "other.npz"))
    assert "\n" not in str(err.value) and f"'{fw.name}'" in str(err.value)
    with pytest.raises(ValueError, match="written by the"):
        train.load_model(str(tmp_path / "other.npz"))
    with pytest.raises(ValueError, match="holds a 'bahdanau' model, not 'transformer'") as err:
        trainer.load(str(tmp_path / "gru.npz"))
    assert "\n" not in str(err.value)
    bigger = tiny_config_dict(len(tok.vocab), num_decoder_layers=2)  # same kind, other shapes
    train.Trainer(train.build_model("transformer", bigger), "transformer", bigger, data, config).save(
        str(tmp_path / "bigger.npz")
    )
    with pytest.raises(ValueError, match="does not fit"):
        trainer.load(str(tmp_path / "bigger.npz"))


def test_build_model_and_resolve_device(fw):
    train = module(fw, "train")
    with pytest.raises(ValueError, match="model kind"):
        train.build_model("lstm", {})
    assert "cpu" in str(train.resolve_device("cpu")).lower()
    with pytest.raises(ValueError, match="kind must be one of"):
        train.Trainer(None, "lstm", {}, None)


def test_copy_task_is_learnt(fw):
    """A tiny Transformer learns to copy: the loss drops by more than half in 120 steps."""
    train = module(fw, "train")
    tok, data = copy_data()
    cfg = tiny_config_dict(len(tok.vocab), d_model=32, d_ff=64, dropout=0.0)
    config = TrainConfig(
        steps=120,
        batch_size=32,
        warmup_steps=30,
        lr_factor=0.3,
        label_smoothing=0.0,
        log_every=10,
        progress=False,
        device="cpu",
    )
    train.set_seed(0)
    records = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config).fit()
    first, last = records[0]["loss"], records[-1]["loss"]
    assert last < 0.5 * first, f"{fw.name}: loss {first:.3f} -> {last:.3f}"
    assert records[-1]["accuracy"] > 0.6
