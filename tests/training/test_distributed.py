"""Data-parallel training computes the single-process step (txcourse.training.distributed; book: appendix "Scaling up").

The runs are those of :mod:`txcourse.distributed_check`: a tiny Transformer, dropout 0 (with dropout the
replicas draw their own masks), a synthetic set whose batches have a short half and a long half, so that the
replicas hold very different token counts and the mean of per-replica mean losses would fail these tests
(checked: losses then differ by about 1e-2). One torchrun launch (2 gloo processes) runs the 2-process
scenarios, the 1-process ones run in this process; one TensorFlow subprocess (2 logical CPU devices, which
must be configured before TensorFlow initialises) runs both replica counts.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from txcourse.data.batching import Batch
from txcourse.distributed_check import BATCH, compare, mixed_lengths, run
from txcourse.training.distributed import check_divisible, shard, target_tokens, tf_config, torchrun_env

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check(cmd: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    env.pop("WORLD_SIZE", None)
    result = subprocess.run([sys.executable, *cmd], env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]


def _assert_same(a: Path, b: Path) -> None:
    diff = compare(a, b)
    assert diff["loss"] < TOL and diff["valid_loss"] < TOL and diff["weight"] < TOL, diff


def test_the_halves_hold_unequal_token_counts():
    from txcourse.training import BatchStream

    stream = BatchStream(mixed_lengths(), BATCH, None, 0)
    for _ in range(4):
        batch = next(stream)
        halves = [target_tokens(shard(batch, r, 2)) for r in range(2)]
        assert halves[1] >= 1.5 * halves[0], halves  # else a wrong averaging could pass


def test_torch_two_processes_match_one(tmp_path):
    _check(
        [
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-addr",
            "127.0.0.1",
            "--master-port",
            str(_free_port()),
            "-m",
            "txcourse.distributed_check",
            "--framework",
            "torch",
            "--out",
            str(tmp_path),
        ]
    )
    run("torch", tmp_path)  # 1 process: 'full-1', and 'resumed-1' from the 2 processes' 'cut-2'
    _assert_same(tmp_path / "full-1.npz", tmp_path / "full-2.npz")
    _assert_same(tmp_path / "full-1.npz", tmp_path / "resumed-1.npz")  # resume across process counts


def test_tf_two_replicas_match_one(tmp_path):
    _check(
        [
            "-m",
            "txcourse.distributed_check",
            "--framework",
            "tf",
            "--replicas",
            "2",
            "--no-resume",
            "--out",
            str(tmp_path),
        ]
    )
    _assert_same(tmp_path / "full-1.npz", tmp_path / "full-2.npz")


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
    from txcourse.errors import TxcourseError

    with pytest.raises(TxcourseError, match=r"--batch-size 63 .* multiple of 2") as refused:
        check_divisible(63, 2)
    assert refused.value.field == "batch_size"
    with pytest.raises(TxcourseError, match="RANK=2, WORLD_SIZE=2") as refused:
        torchrun_env({"RANK": "2", "WORLD_SIZE": "2"})
    assert refused.value.arguments == ("RANK", "WORLD_SIZE")
    with pytest.raises(TxcourseError, match="RANK must be an integer") as refused:
        torchrun_env({"RANK": "x", "WORLD_SIZE": "2"})
    assert refused.value.field == "RANK"
    with pytest.raises(TxcourseError, match="TF_CONFIG must be JSON") as refused:
        tf_config({"TF_CONFIG": "{oops"})
    assert refused.value.field == "TF_CONFIG"
    with pytest.raises(TxcourseError, match="not in the cluster") as refused:
        tf_config({"TF_CONFIG": '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}'})
    assert refused.value.field == "TF_CONFIG"


@pytest.mark.parametrize("name", ["torch", "tf"])
def test_resolve_device_names_the_device(name):
    """An unknown or absent device is the user's mistake (a TxcourseError about ``device``), in both halves."""
    from support.training import module

    from txcourse.errors import TxcourseError

    devices = module(name, "devices")
    for device, message in (("gpu", "device must be 'auto', 'cpu'"), ("cuda:99", "'cuda:99' is not available")):
        with pytest.raises(TxcourseError, match=message) as refused:
            devices.resolve_device(device)
        assert refused.value.field == "device"


def test_ddp_trains_on_the_gpu_of_its_local_rank(monkeypatch):
    """Under torchrun each process sets its current GPU to LOCAL_RANK and resolves 'auto' to a bare 'cuda':
    DDP must get that GPU's index, not 0 (which would send every rank's inputs to GPU 0)."""
    import torch

    from txcourse.torch.train import ddp_device_ids

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    assert ddp_device_ids(torch.device("cuda")) == [3]
    assert ddp_device_ids(torch.device("cuda:1")) == [1]
    assert ddp_device_ids(torch.device("cpu")) is None


@pytest.mark.parametrize("native, expected", [(True, "bfloat16"), (False, "float16")])
def test_mixed_precision_ignores_emulated_bfloat16(monkeypatch, native, expected):
    """An older GPU 'supports' bfloat16 only by emulation: the trainer then takes float16 with a GradScaler."""
    import torch

    from txcourse.torch.train import amp_dtype_for_gpu

    def is_bf16_supported(including_emulation=True):
        return native or including_emulation

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", is_bf16_supported)
    assert amp_dtype_for_gpu() == getattr(torch, expected)
