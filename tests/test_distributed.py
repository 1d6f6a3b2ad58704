"""Data-parallel training computes the single-process step (txcourse.distributed; book: appendix "Scaling up").

Each run is a ``txcourse train`` subprocess (torchrun with 2 gloo processes, or TensorFlow with 2 logical CPU
devices, which must be configured before TensorFlow initialises) on a tiny model, dropout 0 (the rule of the
book: with dropout the replicas draw their own masks). The key projections' biases are not compared: their
gradient is 0 in exact arithmetic (softmax is shift-invariant, Eq. (1)), so Adam turns rounding noise into
steps of about lr; they change no output, and the losses are compared too.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from txcourse.checkpoint import read_checkpoint
from txcourse.data.batching import Batch
from txcourse.distributed import check_divisible, shard, target_tokens, tf_config, torchrun_env

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--task", "numbers", "--batch-size", "8", "--set", "d_model=16", "--set", "num_heads=2", "--set", "d_ff=32",
        "--set", "num_encoder_layers=1", "--set", "num_decoder_layers=1", "--set", "dropout=0.0", "--log-every", "1",
        "--no-progress", "--cooldown", "0", "--threads", "1", "--warmup", "2", "--lr-factor", "0.02",
        "--device", "cpu"]
TOL = 1e-5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _train(out: Path, framework: str, steps: int, procs: int = 1, replicas: int = 1, extra=()) -> None:
    cmd = [sys.executable]
    if procs > 1:
        cmd += ["-m", "torch.distributed.run", "--nproc-per-node", str(procs), "--master-addr", "127.0.0.1",
                "--master-port", str(_free_port())]
    cmd += ["-m", "txcourse", "train", "--framework", framework, "--steps", str(steps), "--out", str(out), *TINY,
            *extra] + (["--replicas", str(replicas)] if replicas > 1 else [])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]


def _losses(out: Path) -> np.ndarray:
    return np.array([json.loads(line)["loss"] for line in (out / "history.jsonl").read_text().splitlines()])


def _weights(out: Path) -> dict[str, np.ndarray]:
    meta, arrays = read_checkpoint(str(out / "model.npz"))
    return {k: v for k, v in arrays.items() if k.startswith("model/") and v.dtype.kind == "f"
            and not (k.endswith("w_k.bias") or k.endswith("w_k/bias"))}


def _assert_same(a: Path, b: Path) -> None:
    la, lb = _losses(a), _losses(b)
    assert la.shape == lb.shape and np.abs(la - lb).max() < TOL, (la, lb)
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys() and wa
    worst = max((float(np.abs(wa[k] - wb[k]).max()), k) for k in wa)
    assert worst[0] < TOL, f"largest weight difference {worst}"


def test_torch_two_processes_match_one(tmp_path):
    _train(tmp_path / "one", "torch", 4)
    _train(tmp_path / "two", "torch", 4, procs=2)
    _assert_same(tmp_path / "one", tmp_path / "two")
    # resume across process counts: 2 processes for 2 steps, then 1 process to step 4
    _train(tmp_path / "cut", "torch", 2, procs=2)
    _train(tmp_path / "cut", "torch", 4, extra=["--resume"])
    _assert_same(tmp_path / "one", tmp_path / "cut")


def test_tf_two_replicas_match_one(tmp_path):
    _train(tmp_path / "one", "tf", 4)
    _train(tmp_path / "two", "tf", 4, replicas=2)
    _assert_same(tmp_path / "one", tmp_path / "two")


def _batch(rows: list[list[int]]) -> Batch:
    tgt = np.array(rows, dtype=np.int64)
    lengths = (tgt != 0).sum(1)
    return Batch(tgt, tgt, tgt, lengths, lengths, np.arange(len(rows)))


def test_shard_splits_rows_and_pads_empty_replicas():
    batch = _batch([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    parts = [shard(batch, r, 2) for r in range(2)]
    assert [p.indices.tolist() for p in parts] == [[0, 1], [2]]
    assert sum(target_tokens(p) for p in parts) == target_tokens(batch) == 6
    empty = shard(batch, 3, 4)  # 3 rows, 4 replicas: the last gets a row that counts for nothing
    assert len(empty) == 1 and target_tokens(empty) == 0


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match=r"--batch-size 63 .* multiple of 2"):
        check_divisible(63, 2)
    with pytest.raises(ValueError, match="RANK=2, WORLD_SIZE=2"):
        torchrun_env({"RANK": "2", "WORLD_SIZE": "2"})
    with pytest.raises(ValueError, match="TF_CONFIG must be JSON"):
        tf_config({"TF_CONFIG": "{oops"})
