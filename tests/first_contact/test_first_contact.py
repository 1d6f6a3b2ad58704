"""A new user's first hour (issue 12): the command line keeps work, and every mistake ends in one line.

Training keeps work: no checkpoint is replaced unless asked (--resume,
--overwrite), SIGINT/SIGTERM save a checkpoint and exit with 128 + the
signal, a bad --out fails before the first step, stale temporary files are
removed, a resume with other settings is refused unless --override. Every
error a user can cause ends in one line ``txcourse: error: ...`` with exit
status 2, in both frameworks. Tiny models, a few steps: the whole file runs
in well under a minute.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY_MODEL_ARGS

from txcourse.cli import main
from txcourse.cli.errors import error_line
from txcourse.registry import FRAMEWORKS
from txcourse.training import TrainConfig, read_history
from txcourse.training.checkpoint import read_checkpoint, read_checkpoint_meta, write_checkpoint

ROOT = Path(__file__).resolve().parents[2]
TINY = [*TINY_MODEL_ARGS, "--set", "max_len=16"]
TASK = ["--task", "copy", "--task-arg", "sizes=(64,8,8)"]
TRAIN = ["train", *TASK, *TINY, "--batch-size", "8", "--log-every", "1", "--no-progress"]


def _gpu(framework: str) -> bool:
    if framework == "torch":
        import torch

        return torch.cuda.is_available() or (
            getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
        )
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU"))


def _fails(argv, capsys, pattern: str, code: int = 2) -> str:
    """``main(argv)`` exits with ``code`` and one stderr line matching ``txcourse: error: <pattern>`` entirely."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert exit_info.value.code == code, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert re.fullmatch(f"txcourse: error: {pattern}\n", err), err
    return err


def _edit_header(src: Path, dst: Path, change) -> Path:
    meta, arrays = read_checkpoint(src)
    change(meta)
    write_checkpoint(dst, {k: v for k, v in meta.items() if k != "format"}, arrays)
    return dst


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An untrained tiny Transformer checkpoint per framework, as `txcourse train` writes it (no training: fast)."""
    from txcourse.backends import backend
    from txcourse.data.prepare import prepare_task
    from txcourse.registry import default_model_config

    folder = tmp_path_factory.mktemp("saved")
    prepared = prepare_task("copy", sizes=(64, 8, 8))
    cfg = default_model_config(
        "transformer",
        prepared.src_tokenizer.vocab_size,
        prepared.tgt_tokenizer.vocab_size,
        dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1, max_len=16),
    )
    metadata = {
        "task": {"name": "copy", "kwargs": {"sizes": [64, 8, 8]}},
        "tokenizers": {"src": prepared.src_tokenizer.to_json(), "tgt": prepared.tgt_tokenizer.to_json()},
    }
    paths = {}
    for name in FRAMEWORKS:
        fw = backend(name)
        fw.set_seed(0)
        trainer = fw.Trainer(
            fw.build_model("transformer", cfg),
            "transformer",
            cfg,
            prepared.train,
            TrainConfig(steps=1, batch_size=8, progress=False, device="cpu"),
            metadata=metadata,
        )
        paths[name] = folder / f"{name}.npz"
        trainer.save(str(paths[name]))
    return paths


# ---------------------------------------------------------------------------
# training keeps work
# ---------------------------------------------------------------------------


def test_train_refuses_to_replace_a_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TRAIN, "--steps", "2", "--out", str(out)]) == 0
    before, history = (out / "model.npz").read_bytes(), (out / "history.jsonl").read_text()
    capsys.readouterr()
    _fails(
        [*TRAIN, "--steps", "2", "--out", out],
        capsys,
        re.escape(
            f"--out '{out}' already holds a checkpoint ('{out / 'model.npz'}'): pass --resume to continue "
            f"it, --overwrite to replace it (and its history), or choose another --out"
        ),
    )
    assert (out / "model.npz").read_bytes() == before and (out / "history.jsonl").read_text() == history
    _fails(
        [*TRAIN, "--out", out, "--resume", "--overwrite"],
        capsys,
        r"--resume and --overwrite exclude each other: .*; pass one of them",
    )
    _fails([*TRAIN, "--out", out, "--override"], capsys, r"--override only applies with --resume .*")
    assert main([*TRAIN, "--steps", "1", "--out", str(out), "--overwrite"]) == 0
    assert read_checkpoint_meta(out / "model.npz")["step"] == 1
    assert [r["step"] for r in read_history(out / "history.jsonl")] == [1]


def test_bad_out_fails_before_training(tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("not a folder")
    _fails(
        [*TRAIN, "--out", a_file],
        capsys,
        re.escape(
            f"--out '{a_file}' is a file, expected a run folder (a directory to write model.npz and "
            f"history.jsonl into): choose another --out"
        ),
    )
    _fails(
        [*TRAIN, "--out", a_file / "run"],
        capsys,
        re.escape(f"--out '{a_file / 'run'}' is not a writable folder (") + r"[^)]+\): choose another --out",
    )
    (tmp_path / "dir" / "model.npz").mkdir(parents=True)
    _fails(
        [*TRAIN, "--out", tmp_path / "dir"],
        capsys,
        re.escape(
            f"--out '{tmp_path / 'dir'}': '{tmp_path / 'dir' / 'model.npz'}' is a folder, expected a file "
            f"(or nothing) there: remove it or choose another --out"
        ),
    )
    _fails(
        [*TRAIN, "--out", tmp_path / "new", "--resume"],
        capsys,
        re.escape(
            f"--resume: no checkpoint '{tmp_path / 'new' / 'model.npz'}' to resume from; drop --resume to "
            f"start a new run"
        ),
    )
    assert not (tmp_path / "new").exists()


def test_read_only_out_fails_before_training(tmp_path, capsys):
    """A folder nobody may write: a read-only folder for a user, /sys for root too (CI runs as root)."""
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        try:
            _fails(
                [*TRAIN, "--out", folder],
                capsys,
                re.escape(f"--out '{folder}' is not a writable folder (Permission denied): choose another --out"),
            )
        finally:
            folder.chmod(0o755)
    if Path("/sys").is_dir():  # sysfs refuses new folders, to root as well
        _fails(
            [*TRAIN, "--out", "/sys/txcourse-run"],
            capsys,
            r"--out '/sys/txcourse-run' is not a writable folder \((Operation not permitted|Permission denied)\): "
            r"choose another --out",
        )
    elif hasattr(os, "geteuid") and os.geteuid() == 0:  # pragma: no cover - root, and not Linux
        pytest.skip("no /sys here and running as root: no folder that refuses writing")


def test_stale_temporary_files_are_removed(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    stale = [out / ".model.npz.k3j2h1.tmp", out / ".history.jsonl.x9y8.tmp"]
    for path in stale:
        path.write_bytes(b"half a checkpoint, left by SIGKILL")
    (out / "notes.tmp").write_text("not ours")
    assert main([*TRAIN, "--steps", "1", "--out", str(out)]) == 0
    assert not any(path.exists() for path in stale)
    assert (out / "notes.tmp").exists() and not list(out.glob(".*.tmp"))


def test_resume_with_other_settings_is_refused_unless_overridden(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TRAIN, "--steps", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    _fails(
        [
            *TRAIN,
            "--steps",
            "4",
            "--out",
            out,
            "--resume",
            "--batch-size",
            "4",
            "--seed",
            "1",
            "--lr-factor",
            "0.3",
            "--warmup",
            "10",
            "--label-smoothing",
            "0",
            "--set",
            "dropout=0.2",
            "--task-arg",
            "sizes=(64,8,9)",
        ],
        capsys,
        re.escape(
            f"--resume: '{out / 'model.npz'}' was trained with other settings: --batch-size 8 (checkpoint) "
            f"vs 4 (now), --warmup 400 (checkpoint) vs 10 (now), --lr-factor 0.5 (checkpoint) vs 0.3 (now), "
            f"--label-smoothing 0.1 (checkpoint) vs 0.0 (now), --seed 0 (checkpoint) vs 1 (now), --set "
            f"dropout 0.1 (checkpoint) vs 0.2 (now), --task-arg sizes [64, 8, 8] (checkpoint) vs [64, 8, 9] "
            f"(now); repeat the checkpoint's settings, or add --override to continue with the new ones"
        ),
    )
    assert read_checkpoint_meta(out / "model.npz")["train_config"]["batch_size"] == 8
    assert main([*TRAIN, "--steps", "3", "--out", str(out), "--resume"]) == 0  # steps may grow
    assert main([*TRAIN, "--steps", "4", "--out", str(out), "--resume", "--batch-size", "4", "--override"]) == 0
    meta = read_checkpoint_meta(out / "model.npz")
    assert meta["step"] == 4 and meta["train_config"]["batch_size"] == 4
    assert [r["step"] for r in read_history(out / "history.jsonl")] == [1, 2, 3, 4]


def test_diverging_run_names_lr_factor_and_keeps_the_last_good_checkpoint(tmp_path, capsys):
    # the validation loss sees it first: the weights of step 1 are finite, but their outputs overflow
    out = tmp_path / "validated"
    _fails(
        [*TRAIN, "--steps", "5", "--lr-factor", "1e30", "--checkpoint-every", "1", "--out", out],
        capsys,
        re.escape(
            "training diverged at step 1: the validation loss is nan (lr_factor 1e+30, warm-up 400 steps); "
            "lower --lr-factor (TrainConfig.lr_factor) or lengthen --warmup, then resume from the last "
            "checkpoint or start again; no checkpoint was written"
        ),
    )
    assert not (out / "model.npz").exists()
    # without validation the training loss sees it one step later
    out = tmp_path / "run"
    _fails(
        [*TRAIN, "--steps", "5", "--lr-factor", "1e30", "--checkpoint-every", "1", "--valid-pairs", "0", "--out", out],
        capsys,
        re.escape(
            "training diverged at step 2: the loss is nan (lr_factor 1e+30, warm-up 400 steps); lower "
            "--lr-factor (TrainConfig.lr_factor) or lengthen --warmup, then resume from the last checkpoint "
            f"or start again; the last good checkpoint '{out / 'model.npz'}' (step 1) is kept"
        ),
    )
    meta, arrays = read_checkpoint(out / "model.npz")
    assert meta["step"] == 1 and all(np.isfinite(a).all() for name, a in arrays.items() if name.startswith("model/"))
    assert not list(out.glob(".*.tmp"))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_finite_but_exploding_loss_is_divergence(framework, tmp_path, capsys):
    """--lr-factor 1e6 used to train to a loss of 2.3e7 and report success; now the loss itself tells."""
    out = tmp_path / "run"
    _fails(
        [*TRAIN, "--framework", framework, "--steps", "40", "--lr-factor", "1e6", "--valid-pairs", "0", "--out", out],
        capsys,
        r"training diverged at step \d+: the loss is [0-9.e+]+, more than 4 times the larger of its first value "
        r"\([0-9.]+\) and log V \([0-9.]+, a uniform guess over the vocabulary\) \(lr_factor 1000000\.0, .*; "
        r"no checkpoint was written",
    )


def test_one_training_per_run_folder(tmp_path, capsys):
    import fcntl

    out = tmp_path / "run"
    out.mkdir()
    with open(out / ".lock", "w") as held:
        held.write("pid 4242, started 2026-11-24 10:00:00: txcourse train --out run\n")
        held.flush()
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # another training holds the folder
        _fails(
            [*TRAIN, "--steps", "1", "--out", out],
            capsys,
            re.escape(
                f"--out '{out}' is in use by another training (pid 4242, started 2026-11-24 10:00:00: "
                f"txcourse train --out run): wait for it to end, or choose another --out"
            ),
        )
    assert not (out / "model.npz").exists() and not (out / "history.jsonl").exists()
    assert main([*TRAIN, "--steps", "1", "--out", str(out)]) == 0  # released: the folder is free again
    assert f"pid {os.getpid()}" in (out / ".lock").read_text()


def test_a_full_disk_at_the_save_is_one_line_naming_what_is_kept(tmp_path, capsys, monkeypatch):
    import errno

    import txcourse.training.checkpoint

    out = tmp_path / "run"
    assert main([*TRAIN, "--steps", "2", "--out", str(out)]) == 0
    capsys.readouterr()

    def full(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(txcourse.training.checkpoint, "atomic_write", full)
    _fails(
        [*TRAIN, "--steps", "4", "--out", out, "--resume"],
        capsys,
        re.escape(
            f"could not write to --out '{out}' at step 4 (No space left on device): free space or fix the "
            f"folder, then resume; the last checkpoint '{out / 'model.npz'}' (step 2) is kept"
        ),
    )


def test_too_little_disk_for_the_checkpoint_is_refused_before_training(tmp_path, capsys, monkeypatch):
    import collections
    import shutil

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 4096, 4096))
    out = tmp_path / "run"
    _fails(
        [*TRAIN, "--steps", "2", "--out", out],
        capsys,
        re.escape(f"--out '{out}': a checkpoint of this model needs about ")
        + r"[0-9.,]+"
        + re.escape(
            " MiB (written beside the previous one), and its disk has 0.0 MiB free: free space or choose another --out"
        ),
    )
    assert not (out / "model.npz").exists() and not (out / "history.jsonl").exists()


def test_a_second_ctrl_c_says_what_was_saved(tmp_path):
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "txcourse",
        *map(str, TRAIN),
        "--task-arg",
        "sizes=(2000,8,8)",
        "--steps",
        "100000",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.time() + 120
    while not ((out / "history.jsonl").is_file() and (out / "history.jsonl").stat().st_size) and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    said = err.strip().splitlines()[-1]
    if "interrupted a second time" in said:  # the usual case: inside a step, nothing of it saved
        assert re.fullmatch(
            r"txcourse: interrupted a second time, inside step \d+: no checkpoint of it was saved; "
            r"no checkpoint was written",
            said,
        ), said
        assert not (out / "model.npz").exists()
    else:  # the step ended and its checkpoint was written before the second signal arrived
        step = int(re.fullmatch(r"txcourse: stopped by SIGINT at step (\d+): saved checkpoint .*", said).group(1))
        assert read_checkpoint_meta(out / "model.npz")["step"] == step


def test_divergence_watch_rules():
    from txcourse.training import DivergenceWatch

    watch = DivergenceWatch(vocab_size=100, patience=3)  # log V = 4.605
    assert watch(5.0) is None and watch(19.0) is None  # 19 < 4 * max(5, 4.6)
    assert "more than 4 times" in watch(20.5)
    assert "the loss is nan" == DivergenceWatch(100)(float("nan"))
    slow = DivergenceWatch(vocab_size=100, patience=3)
    assert [slow(x) for x in (5.0, 5.5, 5.2)] == [None, None, None]  # above max(5, log V) twice in a row
    assert slow(4.0) is None and slow(5.1) is None and slow(5.1) is None  # the count restarts below the line
    assert "stayed above" in slow(5.1)
    healthy = DivergenceWatch(vocab_size=100, patience=3)
    assert all(healthy(x) is None for x in (5.0, 4.0, 3.0, 2.0, 1.0, 2.5, 0.5))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_trainer_stops_on_request_and_diverges_in_one_line(framework, tmp_path):
    """The Trainer half of SIGINT (stop_requested: a history record, a checkpoint) and of divergence, both halves."""
    from txcourse.backends import backend
    from txcourse.data.prepare import prepare_task
    from txcourse.registry import default_model_config

    fw = backend(framework)
    prepared = prepare_task("copy", sizes=(64, 8, 8))
    cfg = default_model_config(
        "transformer",
        prepared.src_tokenizer.vocab_size,
        prepared.tgt_tokenizer.vocab_size,
        dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1),
    )
    config = TrainConfig(steps=50, batch_size=8, log_every=10, progress=False, device="cpu")
    trainer = fw.Trainer(
        fw.build_model("transformer", cfg),
        "transformer",
        cfg,
        prepared.train,
        config,
        history_path=str(tmp_path / "history.jsonl"),
    )
    step = trainer.train_step

    def stop_after_two(batch):
        out = step(batch)
        trainer.stop_requested = trainer.step >= 2
        return out

    trainer.train_step = stop_after_two
    records = trainer.fit(checkpoint_path=str(tmp_path / "model.npz"))
    assert trainer.step == 2 and [r["step"] for r in records] == [2]
    assert read_checkpoint_meta(tmp_path / "model.npz")["step"] == 2
    trainer.stop_requested, trainer.train_step = False, lambda batch: {**step(batch), "loss": float("nan")}
    with pytest.raises(
        FloatingPointError,
        match=r"^training diverged at step 3: the loss is nan \(lr_factor 1\.0, "
        r"warm-up 4000 steps\); lower --lr-factor",
    ) as err:
        trainer.fit(checkpoint_path=str(tmp_path / "model.npz"))
    assert "\n" not in str(err.value)
    # the steps' losses are read at the log step (10), not inside each step: the message names the step that
    # diverged (3), the Trainer stands at the step that read it, and the checkpoint on disk is the last good one
    assert trainer.step == 10
    assert read_checkpoint_meta(tmp_path / "model.npz")["step"] == 2  # the last good one
    # finite training losses but outputs that overflow on the validation pairs: diverged too
    module = importlib.import_module(f"txcourse.{framework}.train")
    trainer.train_step = step
    trainer.valid = prepared.train
    real_evaluate = module.evaluate
    try:
        module.evaluate = lambda *args, **kwargs: {**real_evaluate(*args, **kwargs), "loss": float("inf")}
        with pytest.raises(FloatingPointError, match=r"^training diverged at step 20: the validation loss is inf "):
            trainer.fit(checkpoint_path=str(tmp_path / "model.npz"))
    finally:
        module.evaluate = real_evaluate
    assert read_checkpoint_meta(tmp_path / "model.npz")["step"] == 2


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_saves_a_checkpoint_that_resume_continues(signum, tmp_path):
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "txcourse", *TRAIN, "--steps", "100000", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    history, deadline = out / "history.jsonl", time.monotonic() + 120
    try:
        while not (history.is_file() and len(history.read_text().splitlines()) >= 3):
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.1)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, stderr
    meta = read_checkpoint_meta(out / "model.npz")
    step = meta["step"]
    assert step >= 3 and [r["step"] for r in read_history(history)][-1] == step
    assert stderr == (
        f"txcourse: stopped by {signal.Signals(signum).name} at step {step}: saved checkpoint "
        f"{out / 'model.npz'}; add --resume to the same command to continue\n"
    ), stderr
    assert stdout == "" and not list(out.glob(".*.tmp"))
    assert main([*TRAIN, "--steps", str(step + 2), "--out", str(out), "--resume"]) == 0
    assert read_checkpoint_meta(out / "model.npz")["step"] == step + 2
    assert [r["step"] for r in read_history(history)] == list(range(1, step + 3))


# ---------------------------------------------------------------------------
# one line per mistake
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, pattern",
    [
        (
            [*TRAIN, "--set", "pad_id=5"],
            r"--set pad_id=5: the task's tokenizers pad with id 0; drop --set pad_id \(it is set from the tokenizers\)",
        ),
        (
            [*TRAIN, "--set", "layer_norm_eps=1e999"],
            r"--set layer_norm_eps=inf: TransformerConfig.layer_norm_eps must be a positive finite number such as 1e-6, "
            r"got inf",
        ),
        (
            [*TRAIN, "--set", "src_vocab_size=3"],
            r"--set src_vocab_size=3: the task's src tokenizer has \d+ tokens; "
            r"drop --set src_vocab_size \(it is set from the tokenizer\)",
        ),
        (
            [*TRAIN, "--set", "max_len=3"],
            r"--set max_len=3: the task's training data has sequences of 11 positions "
            r"\(the target with <sos>\); use --set max_len=11 or more",
        ),
        (
            [*TRAIN, "--set", "bogus=1"],
            r"--set bogus=1: TransformerConfig has unknown field\(s\) \['bogus'\]; fields are \['src_vocab_size', .*, "
            r"'fused', 'positions', 'num_kv_heads'\]",
        ),
        (
            [*TRAIN, "--set", "d_model=100000"],  # used to die in an allocation, leaving an empty run folder
            r"--set d_model=100000 num_heads=2 d_ff=32 num_encoder_layers=1 num_decoder_layers=1 max_len=16: "
            r"the transformer model would have [0-9,]{15,} parameters and training needs at least [0-9,.]+ GiB \(weights, "
            r"gradients and Adam's two moments in float32\), but [0-9,.]+ GiB of memory is available: choose a smaller "
            r"model",
        ),
        (
            ["train", *TASK, "--model", "bahdanau", "--set", "units=1000000"],
            r"--set units=1000000: the bahdanau model would have [0-9,]+ parameters .*: choose a smaller model",
        ),
        (
            [*TRAIN, "--lr-factor", "inf"],
            r"argument --lr-factor: expected a finite number > 0, got 'inf' \(see 'txcourse train --help'\)",
        ),
        (
            [*TRAIN, "--lr-factor", "-1"],
            r"argument --lr-factor: expected a finite number > 0, got '-1' \(see 'txcourse train --help'\)",
        ),
        (
            [*TRAIN, "--label-smoothing", "2"],
            r"argument --label-smoothing: expected a finite number in \[0, 1\), got '2' \(see 'txcourse train --help'\)",
        ),
        (
            [*TRAIN, "--label-smoothing", "1"],  # every target spread uniformly: nothing to learn
            r"argument --label-smoothing: expected a finite number in \[0, 1\), got '1' \(see 'txcourse train --help'\)",
        ),
        (
            ["train", "--out", ""],
            r"argument --out: expected a folder name, got '' \(use '\.' for the current folder\) "
            r"\(see 'txcourse train --help'\)",
        ),
        (
            ["figures", "--out", " "],
            r"argument --out: expected a folder name, got ' ' \(use '\.' for the current "
            r"folder\) \(see 'txcourse figures --help'\)",
        ),
        (
            ["figures", "--dpi", "-5"],
            r"argument --dpi: expected an integer from 10 to 2000, got -5 \(see 'txcourse figures "
            r"--help'\)",
        ),
        (
            ["translate", "--checkpoint", "x.npz", "--threads", "0", "a"],
            r"argument --threads: expected an integer >= 1, got 0 \(see 'txcourse translate --help'\)",
        ),
        (
            [*TRAIN, "--steps", "0"],
            r"argument --steps: expected an integer >= 1, got 0 \(see 'txcourse train --help'\)",
        ),
        (
            [*TRAIN, "--device", "gpu"],
            r"argument --device: expected auto, cpu, cuda, cuda:i or mps, got 'gpu' \(see 'txcourse train --help'\)",
        ),
        (["train", "--bogus"], r"unrecognized arguments: --bogus \(see 'txcourse --help'\)"),
        (
            ["evaluate", "--checkpoint", "x.npz", "--limit", "-1"],
            r"argument --limit: expected an integer >= 1, got -1 \(see 'txcourse evaluate --help'\)",
        ),
        (
            ["evaluate", "--checkpoint", "x.npz", "--limit", "0"],
            r"argument --limit: expected an integer >= 1, got 0 \(see 'txcourse evaluate --help'\)",
        ),
        (
            ["translate", "--checkpoint", "x.npz", "--beam", "0", "a"],
            r"argument --beam: expected an integer >= 1, got 0 \(see 'txcourse translate --help'\)",
        ),
    ],
)
def test_user_errors_are_one_line(argv, pattern, capsys, tmp_path):
    _fails([*argv, "--out", tmp_path / "run"] if argv[0] == "train" and len(argv) > 2 else argv, capsys, pattern)
    assert not (tmp_path / "run" / "model.npz").exists()


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_missing_gpu_is_one_line_in_every_command(framework, device, saved, capsys, tmp_path):
    if _gpu(framework):
        pytest.skip("this machine has a GPU")
    name, kind = (
        ("PyTorch", "Apple (mps)" if device == "mps" else "CUDA")
        if framework == "torch"
        else ("TensorFlow", "Apple (tensorflow-metal)" if device == "mps" else "CUDA")
    )
    pattern = re.escape(
        f"--device {device}: device '{device}' is not available: {name} sees 0 {kind} GPU(s) here; "
        f"use 'cpu', or 'auto' (a GPU when there is one)"
    )
    _fails([*TRAIN, "--framework", framework, "--device", device, "--out", tmp_path / "run"], capsys, pattern)
    assert not (tmp_path / "run").exists()
    _fails(["translate", "--checkpoint", saved[framework], "--device", device, "a b"], capsys, pattern)
    _fails(["evaluate", "--checkpoint", saved[framework], "--device", device, "--limit", "2"], capsys, pattern)


def test_evaluate_json_must_name_a_file(saved, capsys, tmp_path):
    _fails(
        ["evaluate", "--checkpoint", saved["torch"], "--json", tmp_path],
        capsys,
        re.escape(
            f"--json '{tmp_path}': expected the name of a file to write the scores to, in an existing, "
            f"writable folder; got a folder: use for example --json scores.json"
        ),
    )
    _fails(
        ["evaluate", "--checkpoint", saved["torch"], "--json", tmp_path / "no" / "s.json"],
        capsys,
        re.escape(
            f"--json '{tmp_path / 'no' / 's.json'}': expected the name of a file to write the scores to, "
            f"in an existing, writable folder; got a path whose folder '{tmp_path / 'no'}' does not exist: "
            f"use for example --json scores.json"
        ),
    )
    a_file = tmp_path / "afile.txt"
    a_file.write_text("")
    _fails(
        ["evaluate", "--checkpoint", saved["torch"], "--json", a_file / "s.json"],
        capsys,
        re.escape(
            f"--json '{a_file / 's.json'}': expected the name of a file to write the scores to, in an "
            f"existing, writable folder; got a path whose folder '{a_file}' is a file: use for example "
            f"--json scores.json"
        ),
    )
    if Path("/proc/self").is_dir():  # a folder that refuses new files, to root as well: checked before evaluating
        _fails(
            ["evaluate", "--checkpoint", saved["torch"], "--json", "/proc/self/s.json"],
            capsys,
            r"--json '/proc/self/s\.json': .*; got a path whose folder '/proc/self' is not writable: .*",
        )


def test_figures_out_must_be_a_writable_folder(tmp_path, capsys):
    a_file = tmp_path / "afile"
    a_file.write_text("")
    _fails(
        ["figures", "--out", a_file, "--only", "week2_*"],
        capsys,
        re.escape(f"--out '{a_file}' is a file, expected a folder to write into: choose another --out"),
    )
    _fails(
        ["figures", "--out", a_file / "figs", "--only", "week2_*"],
        capsys,
        re.escape(
            f"--out '{a_file / 'figs'}': '{a_file}' is a file, so no folder can be made there: choose another --out"
        ),
    )
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        try:
            _fails(
                ["figures", "--out", folder / "figs"],
                capsys,
                re.escape(
                    f"--out '{folder / 'figs'}' is not a writable folder ('{folder}' may not be written): "
                    f"choose another --out"
                ),
            )
        finally:
            folder.chmod(0o755)
    assert a_file.read_text() == ""


def test_checkpoint_strip_into_an_unwritable_place_is_one_line(saved, tmp_path, capsys):
    from txcourse.training.checkpoint import main as checkpoint_main

    a_file = tmp_path / "afile"
    a_file.write_text("")
    assert checkpoint_main(["strip", str(saved["torch"]), str(a_file / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        re.escape(f"txcourse.training.checkpoint: error: cannot write DST '{a_file / 'x.npz'}' (")
        + r"[^)]+"
        + re.escape("); expected a file name in a writable folder with room for the copy")
        + "\n",
        err,
    ), err
    assert checkpoint_main(["strip", str(tmp_path / "none.npz"), str(tmp_path / "x.npz")]) == 2
    assert (
        capsys.readouterr().err
        == f"txcourse.training.checkpoint: error: checkpoint '{tmp_path / 'none.npz'}' does not exist\n"
    )


def test_version_prints_the_package_version(capsys):
    from txcourse import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out == f"txcourse {__version__}\n"


def test_beam_larger_than_the_target_vocabulary_is_refused_before_loading(saved, capsys):
    from txcourse.data.prepare import tokenizers_from_meta

    size = tokenizers_from_meta(read_checkpoint_meta(saved["torch"]))[1].vocab_size
    for command in (
        ["translate", "--checkpoint", saved["torch"], "a b"],
        ["evaluate", "--checkpoint", saved["torch"], "--limit", "2"],
    ):
        _fails(
            [*command, "--beam", 1000000],
            capsys,
            re.escape(
                f"--beam 1000000: expected at most the target vocabulary size of the checkpoint ({size} "
                f"tokens); beams of 4-10 are usual"
            ),
        )
    assert main(["translate", "--checkpoint", str(saved["torch"]), "--beam", str(size), "--threads", "1", "a b"]) == 0
    assert capsys.readouterr().out.startswith("a b\t")


@pytest.mark.parametrize(
    "make, pattern",
    [
        (
            lambda p: p.mkdir(),
            r"checkpoint '{path}' is a folder without txcourse\.json; expected a checkpoint \.npz or a folder written "
            r"by `txcourse export --to ctranslate2`",
        ),
        (
            lambda p: os.mkfifo(p),
            r"checkpoint '{path}' is not a regular file \(a device, a pipe or a socket\); "
            r"expected a \.npz file written by 'txcourse train'",
        ),
        (
            lambda p: np.savez(p, __meta__=np.frombuffer(b"[1, 2]", np.uint8)),
            r"'{path}' is not a txcourse checkpoint: its header is a JSON list, expected a JSON object with format "
            r"'txcourse-checkpoint-1'",
        ),
        (
            lambda p: np.savez(p, __meta__=np.array([{"format": 1}], dtype=object)),
            r"'{path}' is not a txcourse checkpoint: array '__meta__' cannot be read \(Object arrays cannot be loaded when "
            r"allow_pickle=False\); a checkpoint holds numeric arrays only",
        ),
    ],
)
def test_checkpoints_that_are_no_checkpoints_say_what_they_are(make, pattern, capsys, tmp_path):
    path = tmp_path / "model.npz"
    make(path)
    for command in (["translate", "--checkpoint", path, "a"], ["evaluate", "--checkpoint", path]):
        _fails(command, capsys, pattern.format(path=re.escape(str(path))))
    _fails(["translate", "--checkpoint", "/dev/null", "a"], capsys, r"checkpoint '/dev/null' is not a regular file .*")


def test_resume_with_no_steps_left_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TRAIN, "--steps", "3", "--out", str(out)]) == 0
    header, history = read_checkpoint_meta(out / "model.npz"), (out / "history.jsonl").read_text()
    capsys.readouterr()
    for steps in (1, 3):
        _fails(
            [*TRAIN, "--steps", steps, "--out", out, "--resume"],
            capsys,
            re.escape(
                f"--steps {steps}: '{out / 'model.npz'}' is already at step 3, so --resume would train "
                f"nothing; give --steps above 3 (the total step count, not the steps to add)"
            ),
        )
    assert read_checkpoint_meta(out / "model.npz") == header and (out / "history.jsonl").read_text() == history


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}
    return subprocess.run(
        [sys.executable, "-m", "txcourse", *map(str, args)],
        stdout=kwargs.get("stdout", subprocess.PIPE),
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=300,
    )


def test_tensorflow_start_up_log_is_silenced(saved):
    done = _cli("translate", "--checkpoint", saved["tf"], "a b")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # no absl / oneDNN / cpu_feature_guard lines
    assert done.stdout.startswith("a b\t")


def test_closed_or_full_standard_output_is_not_a_traceback(saved, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b\n" * 8000)  # 8000 output lines: more than a pipe buffer (64 KiB) holds
    with source.open() as stdin:
        reader = subprocess.Popen(
            [sys.executable, "-m", "txcourse", "translate", "--checkpoint", str(saved["torch"])],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert reader.stdout.readline().startswith("a b\t")  # `| head -1`
        reader.stdout.close()
        err = reader.stderr.read()
        reader.wait(timeout=300)
    assert reader.returncode == 141 and "Traceback" not in err and "BrokenPipe" not in err, err
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            done = _cli("translate", "--checkpoint", saved["torch"], "a b", stdout=full)
        assert done.returncode == 2 and done.stderr == (
            "txcourse: error: cannot write the output to standard output: No space left on device\n"
        ), done.stderr


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    "change, pattern",
    [
        (
            lambda m: m["model"]["config"].update(num_heads=4),
            r"checkpoint '{path}': its header does not describe its weights: num_heads=4 in the header, 2 in the weights "
            r"\(model.config must be the one the weights were trained with: was the header edited, or copied from another "
            r"run\?\)",
        ),
        (
            lambda m: m["model"]["config"].update(d_model=32, num_decoder_layers=2, tgt_vocab_size=99),
            r"checkpoint '{path}': its header does not describe its weights: tgt_vocab_size=99 in the header, \d+ in the "
            r"weights; d_model=32 in the header, 16 in the weights; num_decoder_layers=2 in the header, 1 in the weights .*",
        ),
        (
            lambda m: m["model"]["config"].pop("d_ff"),
            r"checkpoint '{path}': the model.config of its 'transformer' header lacks \['d_ff'\]; a transformer config has "
            r"exactly \[.*\] \(was the header edited, or the model kind changed\?\)",
        ),
        (
            lambda m: m.pop("step"),
            r"checkpoint '{path}' has an incomplete header: it lacks \['step'\]; a txcourse checkpoint records framework, "
            r"step, model.kind and model.config \(re-save it with Trainer.save, or train again\)",
        ),
        (
            lambda m: m["model"].update(kind="lstm"),
            r"checkpoint '{path}' names model kind 'lstm' in its header, expected one of \['transformer', 'bahdanau', "
            r"'seq2seq'\]",
        ),
        (
            lambda m: m["model"].update(
                kind="bahdanau", config=dict(src_vocab_size=5, tgt_vocab_size=5, embedding_dim=4, units=4, pad_id=0)
            ),
            r"checkpoint '{path}': its header says model kind 'bahdanau', but its weights are those of a 'transformer' "
            r"model \(was the header edited\?\)",
        ),
    ],
)
def test_checkpoint_header_is_checked_against_the_weights(framework, change, pattern, saved, capsys, tmp_path):
    path = _edit_header(saved[framework], tmp_path / "edited.npz", change)
    _fails(["translate", "--checkpoint", path, "a b"], capsys, pattern.format(path=re.escape(str(path))))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_pad_id_and_weights_are_checked_when_loading(framework, saved, capsys, tmp_path):
    """A header with pad_id=5 used to load silently and mask the word of id 5; NaN weights gave empty translations."""
    from txcourse.data.prepare import tokenizers_from_meta

    path = _edit_header(saved[framework], tmp_path / "pad.npz", lambda m: m["model"]["config"].update(pad_id=5))
    word = tokenizers_from_meta(read_checkpoint_meta(path))[0].vocab[5]
    for command in (["translate", "--checkpoint", path, "a b"], ["evaluate", "--checkpoint", path, "--limit", "2"]):
        _fails(
            command,
            capsys,
            re.escape(
                f"checkpoint '{path}': its header says pad_id=5, but its src tokenizer pads "
                f"with id 0; id 5 is the word {word!r}, which would be masked (was the "
                f"header edited?)"
            ),
        )
    meta, arrays = read_checkpoint(saved[framework])
    name = next(n for n in sorted(arrays) if n.startswith("model/") and arrays[n].dtype.kind == "f")
    arrays[name] = np.full_like(arrays[name], np.nan)
    nan_path = tmp_path / "nan.npz"
    write_checkpoint(nan_path, {k: v for k, v in meta.items() if k != "format"}, arrays)
    _fails(
        ["evaluate", "--checkpoint", nan_path, "--limit", "2"],
        capsys,
        re.escape(
            f"checkpoint '{nan_path}' holds non-finite weights (NaN or inf) in 1 array(s), e.g. {name!r}: it "
            f"cannot translate; use an earlier checkpoint or train again"
        ),
    )


def test_an_input_longer_than_max_len_is_the_same_line_in_both_frameworks(saved, capsys):
    """It used to reach the positional encoding and come back as a layer's error (inside Keras: "Exception
    encountered when calling PositionalEncoding.call()"); now the CLI names the line before the model runs. The
    Keras-wrapper path itself is test_keras_wrapper_keeps_its_cause."""
    lines = {
        name: _fails(
            ["translate", "--strict", "--checkpoint", saved[name], " ".join(["a"] * 20)],
            capsys,
            r"--strict: line 1: 20 tokens, more than the 16 positions this model reads .*",
        )
        for name in FRAMEWORKS
    }
    assert lines["tf"] == lines["torch"] and "Exception encountered" not in lines["tf"], lines


def test_heads_are_stored_beside_the_weights(saved):
    for path in saved.values():
        meta, arrays = read_checkpoint(path)
        assert int(arrays["arch/num_heads"]) == meta["model"]["config"]["num_heads"] == 2


def test_keras_wrapper_keeps_its_cause(capsys, saved, tmp_path):
    """Keras wraps a layer's error ('Exception encountered when calling X.call().'); the CLI prints the cause."""
    import tensorflow as tf

    import txcourse.tf as T

    with pytest.raises(ValueError) as err:
        T.PositionalEncoding(max_len=3, d_model=4)(tf.zeros((1, 5, 4)))
    assert str(err.value).startswith("Exception encountered when calling PositionalEncoding.call().")
    assert error_line(err.value) == (
        "x has length 5, longer than max_len=3 positions the positional encoding covers; "
        "raise TransformerConfig.max_len or shorten the input"
    )

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)] * 2)
    def add(a, b):
        return a + b

    with pytest.raises(tf.errors.InvalidArgumentError) as err:
        add(tf.zeros((2, 3)), tf.zeros((4, 5)))
    assert re.fullmatch(r"Incompatible shapes: \[2,3\] vs\. \[4,5\]", error_line(err.value)), error_line(err.value)


# ---------------------------------------------------------------------------
# the library: masks, dtypes, conversion, devices
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_bad_mask_arguments(framework):
    from conftest import Framework

    fw = Framework(framework)
    for offset in (-5, 1.5, True):
        with pytest.raises(ValueError, match=rf"^offset must be an integer >= 0, got {offset!r}$"):
            fw.module.look_ahead_mask(3, offset=offset)
    with pytest.raises(ValueError, match=r"^pad_id must be an integer >= 0, got -1$"):
        fw.module.padding_mask(fw.tensor(np.ones((1, 3), np.int64)), pad_id=-1)
    assert tuple(fw.module.look_ahead_mask(2, offset=3).shape) == (2, 5)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("dtype", ["float64", "float16", "int64"])
def test_float_layers_refuse_another_dtype(framework, dtype):
    """Both halves raise the same ValueError (TensorFlow no longer casts silently, PyTorch no longer fails in matmul),
    in debug mode (txcourse.debug_checks: the check reads the layer's weights at every call)."""
    from conftest import Framework

    import txcourse
    from txcourse.config import TransformerConfig

    fw = Framework(framework)
    x = fw.tensor(np.zeros((1, 3, 8)).astype(dtype))
    message = (
        rf"^{{name}} must have the layer's dtype float32, got {dtype}: cast it first \(PyTorch: "
        rf"{{name}}\.to\(torch\.float32\); TensorFlow: tf\.cast\({{name}}, tf\.float32\)\)"
    )
    layers = [
        ("query", lambda: fw.module.MultiHeadAttention(8, 2)(x, x, x)),
        ("x", lambda: fw.module.PositionwiseFeedForward(8, 16)(x)),
        ("x", lambda: fw.module.PositionalEncoding(10, 8)(x)),
        ("x", lambda: fw.module.EncoderLayer(TransformerConfig(d_model=8, num_heads=2, d_ff=16, norm_first=True))(x)),
    ]
    for name, call in layers:
        with txcourse.debug_checks(), pytest.raises(ValueError) as err:
            call()
        assert re.search(message.format(name=name), error_line(err.value)), error_line(err.value)


def test_mixed_precision_still_runs(tmp_path):
    """torch.autocast and a Keras mixed policy (what the Trainers use on a GPU) pass the dtype checks."""
    import tensorflow as tf
    import torch
    from conftest import small_config

    import txcourse.tf as T
    import txcourse.torch as P
    from txcourse.tf.train import _autocast

    src, tgt = np.array([[3, 4, 5, 0]]), np.array([[1, 3, 4]])
    t_model, k_model = P.Transformer(small_config()).eval(), T.Transformer(small_config())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert t_model(torch.from_numpy(src), torch.from_numpy(tgt)).dtype == torch.bfloat16
    with _autocast(k_model, "mixed_bfloat16"):
        assert k_model(tf.constant(src), tf.constant(tgt)).dtype == tf.bfloat16


def test_convert_refuses_models_that_compute_differently():
    from conftest import small_config

    import txcourse.tf as T
    import txcourse.torch as P
    from txcourse.convert import tf_to_torch, torch_to_tf

    with pytest.raises(
        ValueError,
        match=r"^Transformer: the two models' configs differ in num_heads \(PyTorch 4, "
        r"Keras 2\): the converted weights would compute another function; build "
        r"both from one config \(only dropout and fused may differ\)$",
    ):
        torch_to_tf(P.Transformer(small_config()), T.Transformer(small_config(num_heads=2)))
    with pytest.raises(
        ValueError,
        match=r"differ in pad_id \(PyTorch 1, Keras 0\), norm_first \(PyTorch True, Keras "
        r"False\), layer_norm_eps \(PyTorch 1e-05, Keras 1e-06\)",
    ):
        tf_to_torch(
            T.Transformer(small_config()), P.Transformer(small_config(pad_id=1, norm_first=True, layer_norm_eps=1e-5))
        )
    with pytest.raises(
        ValueError,
        match=r"^MultiHeadAttention: the two layers differ in num_heads \(PyTorch 4, "
        r"Keras 2\)",
    ):
        torch_to_tf(P.MultiHeadAttention(8, 4), T.MultiHeadAttention(8, 2))
    torch_to_tf(P.Transformer(small_config()), T.Transformer(small_config(dropout=0.3, fused=True)))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_resolve_device_refuses_unknown_names(framework):
    from txcourse.backends import backend

    fw = backend(framework)
    with pytest.raises(ValueError, match=r"^device must be 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps', got 'gpu'$"):
        fw.resolve_device("gpu")
    if not _gpu(framework):
        with pytest.raises(ValueError, match=r"^device 'cuda:1' is not available: .* sees 0 CUDA GPU\(s\) here"):
            fw.resolve_device("cuda:1")
