"""Week 6 in both halves: the loss, the schedule, the Trainer (checkpoints, exact resume, history) and decoding.

Every test body runs once per framework (the ``fw`` fixture); the
cross-framework tests convert weights PyTorch -> TensorFlow and check that
both decoders produce the same tokens.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
import torch

from conftest import Framework, assert_close, small_config
from txcourse.training.checkpoint import read_checkpoint, read_checkpoint_meta
from txcourse.config import TransformerConfig
from txcourse.convert import torch_to_tf
from txcourse.data import EOS_ID, PAD_ID, SOS_ID, WordTokenizer, encode_pairs, get_task
from txcourse.training import TrainConfig, noam_lr, read_history, validation_curve
from txcourse.registry import FRAMEWORKS, MODEL_KINDS



def _module(fw: Framework | str, stem: str):
    name = fw if isinstance(fw, str) else fw.name
    return importlib.import_module(f"txcourse.{name}.{stem}")


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """Tiny models gain nothing from threads, and a busy machine makes OpenMP spin: use one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _weights(fw_name: str, model) -> dict[str, np.ndarray]:
    """Every weight (and, in Keras, every dropout seed state) as NumPy, by position."""
    if fw_name == "torch":
        return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    return {f"{i:04d}:{v.path}": np.asarray(v.numpy()).copy() for i, v in enumerate(model.variables)}


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
    loss_fn = _module(fw, "loss").label_smoothed_cross_entropy
    loss, count = loss_fn(fw.tensor(logits), fw.tensor(targets), smoothing=eps)
    expected = torch.nn.functional.cross_entropy(torch.from_numpy(logits).double().flatten(0, 1),
                                                 torch.from_numpy(targets).flatten(), ignore_index=PAD_ID,
                                                 label_smoothing=eps)
    assert np.isfinite(fw.numpy(loss))
    assert_close(fw.numpy(loss), expected.item(), 1e-6, f"loss eps={eps}")
    assert int(fw.numpy(count)) == int((targets != PAD_ID).sum())


def test_loss_padding_only_batch_is_zero_not_nan(fw):
    mod = _module(fw, "loss")
    logits = fw.tensor(np.random.default_rng(1).normal(size=(2, 3, 7)).astype(np.float32))
    targets = fw.tensor(np.full((2, 3), PAD_ID))
    loss, count = mod.label_smoothed_cross_entropy(logits, targets)
    assert float(fw.numpy(loss)) == 0.0 and int(fw.numpy(count)) == 0
    assert float(fw.numpy(mod.token_accuracy(logits, targets))) == 0.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_loss_of_half_precision_logits_is_float32(fw, dtype):
    logits, targets = _logits_targets(2)
    loss_fn = _module(fw, "loss").label_smoothed_cross_entropy
    loss, _ = loss_fn(fw.tensor(logits, dtype), fw.tensor(targets))
    assert loss.dtype == fw.lib.float32
    reference, _ = loss_fn(fw.tensor(logits), fw.tensor(targets))
    assert np.isfinite(fw.numpy(loss))
    assert_close(fw.numpy(loss), fw.numpy(reference), 0.05, f"{dtype} loss")


def test_loss_rejects_bad_arguments(fw):
    loss_fn = _module(fw, "loss").label_smoothed_cross_entropy
    logits, targets = _logits_targets()
    with pytest.raises(ValueError, match="must agree on"):
        loss_fn(fw.tensor(logits), fw.tensor(targets[:, :4]))
    with pytest.raises(ValueError, match="smoothing"):
        loss_fn(fw.tensor(logits), fw.tensor(targets), smoothing=1.5)
    with pytest.raises(ValueError):
        loss_fn(fw.tensor(logits[0]), fw.tensor(targets))


def test_token_accuracy(fw):
    acc_fn = _module(fw, "loss").token_accuracy
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
    assert peak == pytest.approx(d ** -0.5 * warmup ** -0.5)
    assert noam_lr(warmup - 1, d, warmup) < peak and noam_lr(warmup + 1, d, warmup) < peak
    for step in (1, 10, 50, 100):  # linear: lr(s) = s * lr(1)
        assert noam_lr(step, d, warmup) == pytest.approx(step * noam_lr(1, d, warmup))
    for step in (100, 400, 1600, 10_000):  # 1/sqrt: lr(s) sqrt(s) is constant
        assert noam_lr(step, d, warmup) * step ** 0.5 == pytest.approx(d ** -0.5)
    assert noam_lr(0, d, warmup) == noam_lr(1, d, warmup)
    assert noam_lr(10, d, warmup, factor=2.5) == pytest.approx(2.5 * noam_lr(10, d, warmup))


def test_noam_lr_cooldown_falls_linearly_over_the_last_steps():
    d, warmup, total, cool = 64, 100, 1000, 200
    for step in (1, 50, 400, 800):  # before the cool-down: Eq. (3) unchanged
        assert noam_lr(step, d, warmup, 1.0, total, cool) == noam_lr(step, d, warmup)
    for step in (801, 900, 1000):  # (total - step + 1) / cooldown of Eq. (3)
        assert noam_lr(step, d, warmup, 1.0, total, cool) == pytest.approx(
            noam_lr(step, d, warmup) * (total - step + 1) / cool)
    assert noam_lr(1001, d, warmup, 1.0, total, cool) == 0.0  # past the end: nothing
    with pytest.raises(ValueError, match="cooldown_steps needs total_steps"):
        noam_lr(5, d, warmup, cooldown_steps=3)
    with pytest.raises(ValueError, match=r"TrainConfig.cooldown_steps must be an integer >= 0, got -1"):
        TrainConfig(steps=10, cooldown_steps=-1)


# ---------------------------------------------------------------------------
# the Trainer: one scenario per framework, shared by the tests below
# ---------------------------------------------------------------------------

def _copy_data(vocab: str = "abcdefgh", min_len: int = 2, max_len: int = 6, n: int = 1000):
    splits = get_task("copy", vocab=vocab, min_len=min_len, max_len=max_len, sizes=(n, 4, 4))
    tok = WordTokenizer.fit([s for s, _ in splits.train])
    return tok, encode_pairs(splits.train, tok, tok)


def _tiny_config(vocab_size: int, **changes) -> dict:
    base = dict(src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, d_model=16, num_heads=2,
                num_encoder_layers=1, num_decoder_layers=1, d_ff=32, dropout=0.1, max_len=16)
    base.update(changes)
    return TransformerConfig(**base).to_dict()


SCENARIO_CONFIG = TrainConfig(steps=6, batch_size=8, warmup_steps=4, cooldown_steps=3, lr_factor=1.0, log_every=1,
                              progress=False, device="cpu", seed=0)


@pytest.fixture(scope="module", params=FRAMEWORKS)
def scenario(request, tmp_path_factory):
    """Train 6 steps, checkpointing at step 3; then a NEW model loads that checkpoint and trains from 3 to 6.

    Both runs write the same history file: the resumed run must drop the
    records after step 3 before it writes its own.
    """
    name = request.param
    train = _module(name, "train")
    folder = tmp_path_factory.mktemp(f"run_{name}")
    tok, data = _copy_data(n=64)
    cfg = _tiny_config(len(tok.vocab))
    history = str(folder / "history.jsonl")
    train.set_seed(0)
    straight = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, SCENARIO_CONFIG,
                             history_path=history, metadata={"task": "copy"})
    straight.fit(3, checkpoint_path=str(folder / "step3.npz"))
    straight_records = list(straight.fit())  # saving at step 3 does not disturb the run
    train.set_seed(123)  # the resumed run starts from other random weights: load() must replace them all
    resumed = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, SCENARIO_CONFIG,
                            history_path=history, metadata={"task": "copy"})
    resumed.load(str(folder / "step3.npz"))
    resumed.fit(checkpoint_path=str(folder / "final.npz"))
    return {"name": name, "train": train, "folder": folder, "cfg": cfg, "data": data,
            "straight": straight, "straight_records": straight_records, "resumed": resumed}


def test_exact_resume_gives_identical_weights(scenario):
    straight = _weights(scenario["name"], scenario["straight"].model)
    resumed = _weights(scenario["name"], scenario["resumed"].model)
    assert scenario["resumed"].step == scenario["straight"].step == 6
    assert len(straight) == len(resumed)
    differ = [a for a, b in zip(straight, resumed) if not np.array_equal(straight[a], resumed[b])]
    assert not differ, f"{scenario['name']}: weights differ after a resume: {differ[:5]}"


def test_stripped_checkpoint_loads_the_same_model_but_refuses_to_resume(scenario):
    from txcourse.training.checkpoint import main as checkpoint_main, read_checkpoint

    folder, train = scenario["folder"], scenario["train"]
    full, stripped = folder / "final.npz", folder / "final-weights.npz"
    assert checkpoint_main(["strip", str(full), str(stripped)]) == 0
    meta, arrays = read_checkpoint(stripped)
    assert meta["weights_only"] is True and arrays and all(name.startswith(("model/", "arch/")) for name in arrays)
    assert len(read_checkpoint(full)[1]) > len(arrays)  # optimizer state dropped
    assert stripped.stat().st_size < full.stat().st_size
    original, _ = train.load_model(str(full))
    loaded, loaded_meta = train.load_model(str(stripped))
    a, b = _weights(scenario["name"], original), _weights(scenario["name"], loaded)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a.values(), b.values()))
    assert loaded_meta["model"] == meta["model"]
    trainer = train.Trainer(train.build_model("transformer", scenario["cfg"]), "transformer", scenario["cfg"],
                            scenario["data"], SCENARIO_CONFIG)
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
    train = _module(name, "train")
    tok, data = _copy_data(n=64)
    cfg = _tiny_config(len(tok.vocab))
    config = SCENARIO_CONFIG.replace(steps=8, log_every=4, cooldown_steps=0)
    train.set_seed(0)
    straight = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config,
                             history_path=str(tmp_path / "straight.jsonl"))
    straight.fit()
    history = tmp_path / "stopped.jsonl"
    train.set_seed(0)
    stopped = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config,
                            history_path=str(history))
    step = stopped.train_step

    def stop_at_five(batch):
        out = step(batch)
        stopped.stop_requested = stopped.step >= 5
        return out

    stopped.train_step = stop_at_five
    stopped.fit(checkpoint_path=str(tmp_path / "model.npz"))
    partial = read_history(history)
    assert [r["step"] for r in partial] == [4, 5] and "partial" in partial[1] and "partial" not in partial[0]
    resumed = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config,
                            history_path=str(history))
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
    train = _module(name, "train")
    tok, data = _copy_data(n=64)
    valid = encode_pairs(get_task("copy", vocab="abcdefgh", min_len=2, max_len=6, sizes=(64, 12, 4)).valid, tok, tok)
    cfg = _tiny_config(len(tok.vocab))
    config = SCENARIO_CONFIG.replace(log_every=2)
    runs = {}
    for key, held_out in (("plain", None), ("valid", valid)):
        train.set_seed(0)
        trainer = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config, valid=held_out)
        first = list(trainer.fit(4))
        scores = train.evaluate(trainer.model, valid, config.label_smoothing)  # the weights of step 4
        runs[key] = (first + list(trainer.fit())[len(first):], _weights(name, trainer.model), scores)
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
    train = _module(fw, "train")
    tok, data = _copy_data(n=10)
    cfg = _tiny_config(len(tok.vocab), dropout=0.5)
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
    expected = torch.nn.functional.cross_entropy(torch.from_numpy(np.asarray(logits)).double().flatten(0, 1),
                                                 torch.from_numpy(batch.tgt_out).flatten(), ignore_index=PAD_ID,
                                                 label_smoothing=0.1)
    assert whole["loss"] == pytest.approx(expected.item(), rel=1e-5)
    if fw.name == "torch":
        assert not model.training  # model.eval() above; evaluate() leaves the mode as it found it
        model.train()
        train.evaluate(model, data)
        assert model.training


@pytest.mark.parametrize("bad", [[], "pairs", None])
def test_evaluate_and_trainer_refuse_bad_validation_data(fw, bad):
    train = _module(fw, "train")
    tok, data = _copy_data(n=8)
    cfg = _tiny_config(len(tok.vocab))
    empty = encode_pairs([], tok, tok) if bad is None else bad
    with pytest.raises(ValueError, match=r"valid must be None or non-empty EncodedPairs .* got \w+ of length"):
        train.evaluate(train.build_model("transformer", cfg), empty)
    with pytest.raises(ValueError, match=r"valid must be None or non-empty EncodedPairs"):
        train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, SCENARIO_CONFIG, valid=empty)


def test_validation_curve_needs_a_history_with_validation():
    assert validation_curve([{"step": 1, "loss": 2.0}, {"step": 2, "loss": 1.0, "valid_loss": 1.5,
                                                                 "valid_accuracy": 0.5}]) == [
        {"step": 2, "loss": 1.5, "accuracy": 0.5}]
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
    loaded, trained = _weights(scenario["name"], model), _weights(scenario["name"], scenario["resumed"].model)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.values(), trained.values()))


def test_checkpoint_of_other_framework_or_kind_is_refused(fw, tmp_path):
    tok, data = _copy_data(n=16)
    cfg = _tiny_config(len(tok.vocab))
    other = "tf" if fw.name == "torch" else "torch"
    other_train, train = _module(other, "train"), _module(fw, "train")
    config = SCENARIO_CONFIG.replace(steps=1)
    other_train.Trainer(other_train.build_model("transformer", cfg), "transformer", cfg, data,
                        config).save(str(tmp_path / "other.npz"))
    gru_cfg = dict(src_vocab_size=len(tok.vocab), tgt_vocab_size=len(tok.vocab), embedding_dim=8, units=8, pad_id=0)
    train.Trainer(train.build_model("bahdanau", gru_cfg), "bahdanau", gru_cfg, data,
                  config).save(str(tmp_path / "gru.npz"))
    trainer = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config)
    with pytest.raises(ValueError, match=f"written by the '{other}' half") as err:
        trainer.load(str(tmp_path / "other.npz"))
    assert "\n" not in str(err.value) and f"'{fw.name}'" in str(err.value)
    with pytest.raises(ValueError, match="written by the"):
        train.load_model(str(tmp_path / "other.npz"))
    with pytest.raises(ValueError, match="holds a 'bahdanau' model, not 'transformer'") as err:
        trainer.load(str(tmp_path / "gru.npz"))
    assert "\n" not in str(err.value)
    bigger = _tiny_config(len(tok.vocab), num_decoder_layers=2)  # same kind, other shapes
    train.Trainer(train.build_model("transformer", bigger), "transformer", bigger, data,
                  config).save(str(tmp_path / "bigger.npz"))
    with pytest.raises(ValueError, match="does not fit"):
        trainer.load(str(tmp_path / "bigger.npz"))


def test_build_model_and_resolve_device(fw):
    train = _module(fw, "train")
    with pytest.raises(ValueError, match="model kind"):
        train.build_model("lstm", {})
    assert "cpu" in str(train.resolve_device("cpu")).lower()
    with pytest.raises(ValueError, match="kind must be one of"):
        train.Trainer(None, "lstm", {}, None)


def test_copy_task_is_learnt(fw):
    """A tiny Transformer learns to copy: the loss drops by more than half in 120 steps."""
    train = _module(fw, "train")
    tok, data = _copy_data()
    cfg = _tiny_config(len(tok.vocab), d_model=32, d_ff=64, dropout=0.0)
    config = TrainConfig(steps=120, batch_size=32, warmup_steps=30, lr_factor=0.3, label_smoothing=0.0,
                         log_every=10, progress=False, device="cpu")
    train.set_seed(0)
    records = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config).fit()
    first, last = records[0]["loss"], records[-1]["loss"]
    assert last < 0.5 * first, f"{fw.name}: loss {first:.3f} -> {last:.3f}"
    assert records[-1]["accuracy"] > 0.6


# ---------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------

SRC = np.array([[5, 9, 3, 7, 11, 4], [8, 8, 6, 3, PAD_ID, PAD_ID], [12, 4, PAD_ID, PAD_ID, PAD_ID, PAD_ID]])
DECODE_CONFIG = dict(num_encoder_layers=1, num_decoder_layers=1, max_len=20)  # small_config, one layer each


def _transformer(fw: Framework, seed: int = 0, **changes):
    cfg = small_config(**{**DECODE_CONFIG, **changes})
    if fw.name == "torch":
        torch.manual_seed(seed)
        return fw.module.Transformer(cfg).eval()
    import keras

    keras.utils.set_random_seed(seed)
    return fw.module.Transformer(cfg)


@pytest.fixture(scope="module", params=FRAMEWORKS)
def decoded(request):
    """One random Transformer per framework, decoded every way (eager Keras decoding is slow: decode once)."""
    fw = Framework(request.param)
    decode = _module(fw, "decode")
    model = _transformer(fw, seed=1)
    src = fw.tensor(SRC)
    runs = {
        "greedy": decode.greedy_decode(model, src, max_len=8),
        "greedy, no cache": decode.greedy_decode(model, src, max_len=8, use_cache=False),
        "beam 1": decode.beam_search(model, src, beam_size=1, max_len=8, length_penalty_alpha=0.0),
        "beam 4": decode.beam_search(model, src, beam_size=4, max_len=8),
        "beam 4, no cache": decode.beam_search(model, src, beam_size=4, max_len=8, use_cache=False),
    }
    return fw, model, {key: (fw.numpy(o.tokens), fw.numpy(o.scores), fw.numpy(o.attention))
                       for key, o in runs.items()}


@pytest.mark.parametrize("a,b", [("greedy", "greedy, no cache"), ("beam 1", "greedy"),
                                 ("beam 4", "beam 4, no cache")])
def test_decoders_agree(decoded, a, b):
    """Cached = uncached (greedy and beam 4); beam 1 with alpha 0 = greedy."""
    fw, _, runs = decoded
    np.testing.assert_array_equal(runs[a][0], runs[b][0], err_msg=f"{fw}: {a} != {b}")
    assert_close(runs[a][1], runs[b][1], 1e-4, f"{fw}: scores of {a} and {b}")
    assert_close(runs[a][2], runs[b][2], 1e-5, f"{fw}: attention of {a} and {b}")


def test_decoded_shapes(decoded):
    fw, model, runs = decoded
    for key, (tokens, scores, attention) in runs.items():
        assert tokens.shape[0] == scores.shape[0] == 3 and 1 <= tokens.shape[1] <= 8, key
        assert attention.shape == (3, model.config.num_heads, tokens.shape[1], SRC.shape[1]), key
        assert np.isfinite(scores).all(), key


def _prefer_specials(fw: Framework, model) -> None:
    """Make <pad> and <sos> the most probable outputs by far, and <eos> likely: the decoder must still refuse them."""
    layer = model.output_projection
    bias = (layer.bias.detach() if fw.name == "torch" else layer.bias).numpy().copy()  # (V,)
    bias[[PAD_ID, SOS_ID]] = 50.0
    bias[EOS_ID] = 2.5
    if fw.name == "torch":
        with torch.no_grad():
            model.output_projection.bias.copy_(torch.from_numpy(bias))
    else:
        model.output_projection.bias.assign(bias)


def test_decoders_never_generate_pad_or_sos_and_pad_after_eos(fw):
    decode = _module(fw, "decode")
    model = _transformer(fw, seed=3, tie_embeddings=False)
    _prefer_specials(fw, model)
    for out in (decode.greedy_decode(model, fw.tensor(SRC), max_len=8),
                decode.beam_search(model, fw.tensor(SRC), beam_size=3, max_len=8)):
        tokens = fw.numpy(out.tokens)
        assert (tokens == EOS_ID).any(axis=1).sum() >= 1  # some rows finish
        for row in tokens:
            end = list(row).index(EOS_ID) if EOS_ID in row else len(row)
            assert SOS_ID not in row and PAD_ID not in row[:end], row
            assert (row[end + 1:] == PAD_ID).all(), row


def test_max_len_longer_than_the_model_is_refused(fw):
    decode = _module(fw, "decode")
    model = _transformer(fw)
    with pytest.raises(ValueError, match="longer than the model's max_len=20"):
        decode.greedy_decode(model, fw.tensor(SRC), max_len=21)
    with pytest.raises(ValueError, match="longer than the model's max_len=20"):
        decode.beam_search(model, fw.tensor(SRC), max_len=21)
    with pytest.raises(ValueError, match="beam_size"):
        decode.beam_search(model, fw.tensor(SRC), beam_size=0)
    with pytest.raises(ValueError, match="length_penalty_alpha"):
        decode.beam_search(model, fw.tensor(SRC), length_penalty_alpha=-1.0)


def test_decoders_refuse_token_ids_outside_the_vocabulary(fw):
    """A clear ValueError, also where TensorFlow encodes in a graph (whose check is an assertion)."""
    decode = _module(fw, "decode")
    model = _transformer(fw)
    bad = fw.tensor(np.array([[5, 9, 99]]))
    with pytest.raises(ValueError, match="token id 99, outside the vocabulary"):
        decode.greedy_decode(model, bad, max_len=4)
    with pytest.raises(ValueError, match="token id 99, outside the vocabulary"):
        decode.beam_search(model, bad, beam_size=2, max_len=4)


def test_reorder_state_selects_rows_of_the_cache(fw):
    from txcourse.cache import DecoderLayerCache, KVCache

    decode = _module(fw, "decode")
    rows = fw.tensor(np.arange(3.0)[:, None] * np.ones((3, 2), np.float32))
    cache = (DecoderLayerCache(KVCache(rows, rows), KVCache(rows, rows)),)
    given = {"memory": fw.tensor(np.arange(3)), "cache": cache}
    state = decode.reorder_state(given, fw.tensor(np.array([2, 2, 0])))
    np.testing.assert_array_equal(fw.numpy(state["memory"]), [2, 2, 0])
    assert isinstance(state["cache"], tuple) and isinstance(state["cache"][0], DecoderLayerCache)
    np.testing.assert_array_equal(fw.numpy(state["cache"][0].self_attn.key)[:, 0], [2, 2, 0])
    np.testing.assert_array_equal(fw.numpy(state["cache"][0].cross_attn.value)[:, 0], [2, 2, 0])
    np.testing.assert_array_equal(fw.numpy(given["cache"][0].self_attn.key)[:, 0], [0, 1, 2])  # a new state


def _seq2seq(fw: Framework, seed: int = 0):
    if fw.name == "torch":
        torch.manual_seed(seed)
        return fw.module.Seq2Seq(small_config().src_vocab_size, small_config().tgt_vocab_size, 12, 16).eval()
    import keras

    keras.utils.set_random_seed(seed)
    return fw.module.Seq2Seq(small_config().src_vocab_size, small_config().tgt_vocab_size, 12, 16)


@pytest.mark.parametrize("kind, use_cache", [("transformer", True), ("transformer", False), ("seq2seq", True)])
def test_decode_step_returns_a_new_state_and_changes_nothing(fw, kind, use_cache):
    """decode_step(token, state) is a function: the same state twice gives the same result, the state is left as it was."""
    model = _transformer(fw, seed=2) if kind == "transformer" else _seq2seq(fw, seed=2)
    src = fw.tensor(SRC)
    state = model.start_decoding(src, use_cache)
    token = fw.tensor(np.array([SOS_ID] * 3))
    logits, state, _ = model.decode_step(token, state)  # one step in: a non-empty cache or prefix
    flat = lambda nest: [fw.numpy(x).copy() for x in _tensors(nest)]  # noqa: E731
    before = flat(state)
    token = fw.tensor(np.array([5, 6, 7]))
    first = model.decode_step(token, state)
    second = model.decode_step(token, state)
    for a, b in zip(before, flat(state)):
        np.testing.assert_array_equal(a, b, err_msg=f"{fw}: decode_step changed its input state")
    assert len(_tensors(first)) == len(_tensors(second))
    for a, b in zip(_tensors(first), _tensors(second)):
        assert_close(fw.numpy(a), fw.numpy(b), 0.0, f"{fw}: decode_step twice on the same state")
    assert first[1] is not state


def _tensors(nest) -> list:
    """The tensors of a nest of dicts and tuples, in a fixed order."""
    if isinstance(nest, dict):
        return [x for key in sorted(nest) for x in _tensors(nest[key])]
    if isinstance(nest, (tuple, list)):
        return [x for item in nest for x in _tensors(item)]
    return [] if nest is None or isinstance(nest, (int, float)) else [nest]


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_and_uncached_decode_steps_agree(fw, norm_first):
    """The key/value cache changes the work, not the numbers: logits and cross-attention of every step agree to 1e-5."""
    model = _transformer(fw, seed=4, norm_first=norm_first, num_decoder_layers=2)
    src = fw.tensor(SRC)
    cached, uncached = model.start_decoding(src, True), model.start_decoding(src, False)
    for t, ids in enumerate([[SOS_ID] * 3, [5, 6, 7], [8, 8, 9], [10, 4, 5]]):
        token = fw.tensor(np.array(ids))
        logits, cached, attention = model.decode_step(token, cached)
        ref_logits, uncached, ref_attention = model.decode_step(token, uncached)
        assert_close(fw.numpy(logits), fw.numpy(ref_logits), 1e-5, f"{fw}: logits of step {t}")
        assert_close(fw.numpy(attention), fw.numpy(ref_attention), 1e-5, f"{fw}: cross-attention of step {t}")
        assert tuple(cached["cache"][0].self_attn.key.shape)[2] == t + 1
        assert tuple(uncached["prefix"].shape) == (3, t + 1)


def test_tf_decoding_runs_traced_graphs_and_decodes_as_eagerly(monkeypatch):
    """TensorFlow decodes through start_decoding and its decoding steps traced into graphs, once per model
    and step (not once per step, length or batch), and returns what eager step-by-step decoding returns."""
    import tensorflow as tf

    fw = Framework("tf")
    decode = _module(fw, "decode")
    model = _transformer(fw, seed=1)
    calls = {"start_decoding": 0, "decode_step": 0}  # Python runs of each method: traces, or eager calls
    for name in calls:
        def counted(self, *args, _method=getattr(type(model), name), _name=name):
            calls[_name] += 1
            return _method(self, *args)
        monkeypatch.setattr(type(model), name, counted)
    src = fw.tensor(SRC)
    compiled = {}
    for key, run in (("greedy 5", lambda: decode.greedy_decode(model, src, max_len=5, eos_id=-1)),
                     ("greedy 9", lambda: decode.greedy_decode(model, src, max_len=9, eos_id=-1)),
                     ("greedy 2 rows", lambda: decode.greedy_decode(model, src[:2], max_len=7, eos_id=-1))):
        compiled[key] = run()
    assert calls == {"start_decoding": 1, "decode_step": 1}, f"one trace for every step, length and batch: {calls}"
    compiled["beam 3"] = decode.beam_search(model, src, beam_size=3, max_len=9, eos_id=-1)
    assert calls == {"start_decoding": 1, "decode_step": 2}, f"the beam step: one trace of its own: {calls}"
    compiled["greedy, no cache"] = decode.greedy_decode(model, src, max_len=9, eos_id=-1, use_cache=False)
    assert calls == {"start_decoding": 2, "decode_step": 3}, f"no cache: another state, one more trace: {calls}"
    assert not any(hasattr(m, "attention_weights") for layer in model.decoder.layers
                   for m in (layer.self_attn, layer.cross_attn)), "nothing is kept on a layer"

    tf.config.run_functions_eagerly(True)
    try:
        eager = {"greedy 9": decode.greedy_decode(model, src, max_len=9, eos_id=-1),
                 "beam 3": decode.beam_search(model, src, beam_size=3, max_len=9, eos_id=-1)}
    finally:
        tf.config.run_functions_eagerly(False)
    assert calls["decode_step"] == 3 + 2 * 9, "eagerly, decode_step runs once per step"
    for a, b in (("greedy 9", "greedy 9"), ("beam 3", "beam 3"), ("greedy, no cache", "greedy 9")):
        np.testing.assert_array_equal(fw.numpy(compiled[a].tokens), fw.numpy(eager[b].tokens), err_msg=f"{a} vs eager")
        assert_close(fw.numpy(compiled[a].scores), fw.numpy(eager[b].scores), 1e-5, f"scores of {a} vs eager")
        assert_close(fw.numpy(compiled[a].attention), fw.numpy(eager[b].attention), 1e-6, f"attention of {a} vs eager")
    eager_tokens = fw.numpy(eager["greedy 9"].tokens)  # (3, 9); a shorter decode or fewer rows: a part of it
    np.testing.assert_array_equal(fw.numpy(compiled["greedy 5"].tokens), eager_tokens[:, :5])
    np.testing.assert_array_equal(fw.numpy(compiled["greedy 2 rows"].tokens), eager_tokens[:2, :7])


def test_tf_decoding_traces_once_per_model(monkeypatch):
    """A second model gets its own trace; the first model's graphs are not traced again."""
    fw = Framework("tf")
    decode = _module(fw, "decode")
    models = [_transformer(fw, seed=1), _transformer(fw, seed=2)]
    traced = []
    method = type(models[0]).decode_step

    def counted(self, *args):
        traced.append(self)
        return method(self, *args)
    monkeypatch.setattr(type(models[0]), "decode_step", counted)
    for _ in range(2):
        for model in models:
            decode.greedy_decode(model, fw.tensor(SRC), max_len=6, eos_id=-1)
    assert [models.index(m) for m in traced] == [0, 1], "one trace per model, whatever the number of steps and runs"


# ---------------------------------------------------------------------------
# PyTorch and TensorFlow decode alike
# ---------------------------------------------------------------------------

def _model_pair(kind: str):
    torch_fw, tf_fw = Framework("torch"), Framework("tf")
    torch.manual_seed(7)
    if kind == "transformer":
        cfg = small_config(**DECODE_CONFIG)
        pair = torch_fw.module.Transformer(cfg).eval(), tf_fw.module.Transformer(cfg)
    else:
        args = dict(src_vocab_size=23, tgt_vocab_size=19, embedding_dim=12, units=16, attention=kind == "bahdanau")
        pair = torch_fw.module.Seq2Seq(**args).eval(), tf_fw.module.Seq2Seq(**args)
    torch_to_tf(*pair)
    return torch_fw, tf_fw, pair


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_decoding_agrees_across_frameworks(kind):
    torch_fw, tf_fw, (t_model, k_model) = _model_pair(kind)
    heads = {"transformer": small_config().num_heads, "bahdanau": 1, "seq2seq": None}[kind]
    for name, run in (("greedy", lambda fw, m: _module(fw, "decode").greedy_decode(m, fw.tensor(SRC), max_len=10)),
                      ("beam", lambda fw, m: _module(fw, "decode").beam_search(m, fw.tensor(SRC), beam_size=4,
                                                                               max_len=10))):
        t_out, k_out = run(torch_fw, t_model), run(tf_fw, k_model)
        t_tokens, k_tokens = torch_fw.numpy(t_out.tokens), tf_fw.numpy(k_out.tokens)
        np.testing.assert_array_equal(k_tokens, t_tokens, err_msg=f"{kind} {name}: tokens differ")
        assert_close(tf_fw.numpy(k_out.scores), torch_fw.numpy(t_out.scores), 1e-4, f"{kind} {name} scores")
        if heads is None:
            assert t_out.attention is None and k_out.attention is None
        else:
            assert torch_fw.numpy(t_out.attention).shape == (3, heads, t_tokens.shape[1], SRC.shape[1])
            assert_close(tf_fw.numpy(k_out.attention), torch_fw.numpy(t_out.attention), 1e-4,
                         f"{kind} {name} attention")


def test_trained_weights_decode_alike_across_frameworks(tmp_path):
    """A short PyTorch training run, its checkpoint's weights moved to TensorFlow: the same translations."""
    t_train, k_train = _module("torch", "train"), _module("tf", "train")
    tok, data = _copy_data(n=200)
    cfg = _tiny_config(len(tok.vocab), dropout=0.0)
    t_train.set_seed(0)
    trainer = t_train.Trainer(t_train.build_model("transformer", cfg), "transformer", cfg, data,
                              SCENARIO_CONFIG.replace(steps=20, lr_factor=0.5, log_every=10))
    trainer.fit(checkpoint_path=str(tmp_path / "torch.npz"))
    t_model, _ = t_train.load_model(str(tmp_path / "torch.npz"))
    k_model = k_train.build_model("transformer", cfg)
    torch_to_tf(t_model, k_model)
    src = np.array([tok.encode("a b c d"), tok.encode("h g f e")])
    t_fw, k_fw = Framework("torch"), Framework("tf")
    for beam in (1, 3):
        t_out = _module("torch", "decode").beam_search(t_model, t_fw.tensor(src), beam_size=beam, max_len=10)
        k_out = _module("tf", "decode").beam_search(k_model, k_fw.tensor(src), beam_size=beam, max_len=10)
        np.testing.assert_array_equal(k_fw.numpy(k_out.tokens), t_fw.numpy(t_out.tokens))

