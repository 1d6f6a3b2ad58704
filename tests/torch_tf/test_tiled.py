"""Tiled attention with an online softmax equals plain attention, in both halves, and the halves agree.

``tiled_attention`` walks over blocks of keys (Milakov and Gimelshein 2018; Rabe and Staats 2021;
Dao et al. 2022); its output must equal ``scaled_dot_product_attention``'s whatever the block size
(1, one that does not divide T_k, one larger than T_k) and whatever the mask (padding, look-ahead,
rows with every key masked, which give 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import Framework, assert_close

SHAPES = {  # query (..., T_q, d_k), key length T_k, value width d_v
    "2-d": ((6, 8), 11, 8),
    "batch, heads": ((2, 3, 5, 4), 9, 6),
    "one query": ((2, 1, 1, 8), 17, 8),
    "long keys": ((1, 2, 4, 16), 64, 16),
    "one key": ((3, 4, 8), 1, 2),
}
BLOCKS = [1, 3, 4, 8, 1000]


def _qkv(shape, t_k, d_v, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    q = (scale * rng.normal(size=shape)).astype(np.float32)
    k = (scale * rng.normal(size=shape[:-2] + (t_k, shape[-1]))).astype(np.float32)
    v = rng.normal(size=shape[:-2] + (t_k, d_v)).astype(np.float32)
    return q, k, v


def _compare(fw, q, k, v, mask, block):
    t = [fw.tensor(a) for a in (q, k, v)]
    m = None if mask is None else fw.tensor(mask)
    expected, _ = fw.module.scaled_dot_product_attention(*t, m)
    got = fw.module.tiled_attention(*t, m, block_size=block)
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(fw.numpy(got), fw.numpy(expected), atol=1e-5, what=f"tiled (block {block}) vs plain")
    return fw.numpy(got)


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_equals_plain_attention_without_mask(fw, shape, block):
    _compare(fw, *_qkv(*SHAPES[shape]), None, block)


@pytest.mark.parametrize("block", [1, 3, 5, 16])
def test_equals_plain_attention_with_padding_mask(fw, block):
    q, k, v = _qkv((3, 2, 5, 8), 12, 8, seed=1)
    lengths = np.array([12, 7, 2])
    mask = np.arange(12)[None, :] >= lengths[:, None]  # (B, T_k) True = padding
    _compare(fw, q, k, v, mask[:, None, None, :], block)  # (B, 1, 1, T_k)


@pytest.mark.parametrize("block", [1, 2, 3, 7])
def test_equals_plain_attention_with_look_ahead_mask(fw, block):
    q, k, v = _qkv((2, 2, 7, 4), 7, 4, seed=2)
    mask = np.triu(np.ones((7, 7), bool), k=1)  # (T_q, T_k) True above the diagonal
    _compare(fw, q, k, v, mask, block)
    _compare(fw, q, k, v, mask.astype(np.int32), block)  # 0/1 masks too


@pytest.mark.parametrize("block", [1, 4, 64])
def test_fully_masked_rows_give_zero(fw, block):
    q, k, v = _qkv((2, 4, 8), 10, 3, seed=3)
    mask = np.zeros((2, 4, 10), bool)
    mask[0, 1] = True  # every key of one query
    mask[1, :, :6] = True  # the first blocks of every query of the second sequence, not the last
    out = _compare(fw, q, k, v, mask, block)
    assert np.array_equal(out[0, 1], np.zeros(3, np.float32))
    assert np.isfinite(out).all()


def test_large_scores_do_not_overflow(fw):
    """Scores of several hundred: exp would overflow float32 without the running maximum."""
    q, k, v = _qkv((1, 3, 8), 20, 4, seed=4, scale=10.0)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(8)
    assert scores.max() > 100
    out = _compare(fw, q, k, v, None, 3)
    assert np.isfinite(out).all()


@pytest.mark.parametrize("block", [1, 3, 100])
def test_torch_and_tf_agree(block):
    q, k, v = _qkv((2, 3, 6, 8), 13, 5, seed=5)
    mask = np.zeros((2, 1, 6, 13), bool)
    mask[0, 0, :, 9:] = True
    mask[1, 0, 2] = True
    outs = []
    for name in ("torch", "tf"):
        fw = Framework(name)
        t = [fw.tensor(a) for a in (q, k, v)]
        outs.append(fw.numpy(fw.module.tiled_attention(*t, fw.tensor(mask), block_size=block)))
    assert_close(outs[1], outs[0], atol=1e-5, what=f"tf vs torch, block {block}")


@pytest.mark.parametrize("block", [0, -2, 2.0, "8", True, None])
def test_bad_block_size_raises(fw, block):
    q, k, v = (fw.tensor(a) for a in _qkv((2, 4), 5, 4))
    with pytest.raises(ValueError, match=r"block_size must be a positive integer \(keys per block\), got") as info:
        fw.module.tiled_attention(q, k, v, block_size=block)
    assert info.value.arguments == ("block_size",)


def test_bad_shapes_raise_as_plain_attention_does(fw):
    q, k, v = (fw.tensor(a) for a in _qkv((2, 4), 5, 4))
    with pytest.raises(ValueError, match="query and key must have the same width d_k"):
        fw.module.tiled_attention(q, fw.tensor(np.zeros((5, 3), np.float32)), v)
    with pytest.raises(ValueError, match="does not broadcast to the attention scores"):
        fw.module.tiled_attention(q, k, v, fw.tensor(np.zeros((2, 4), bool)))


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="the benchmark reads Linux's VmHWM")
def test_memory_benchmark_quick_run(tmp_path):
    """benchmarks/attention_memory.py --quick runs, writes its JSON and counts the intermediates by construction."""
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "attention_memory.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "attention_memory.py"), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    rows = {(r["method"], r["n"]): r for r in result["rows"]}
    assert set(rows) == {(m, n) for m in ("plain", "tiled", "torch_sdpa") for n in (64, 256)}
    assert rows[("plain", 256)]["largest_intermediate_bytes"] == 256 * 256 * 4
    assert rows[("tiled", 256)]["largest_intermediate_bytes"] == 256 * 128 * 4
    assert all(r["peak_bytes"] >= 0 for r in rows.values())
    sums = {r["out_sum"] for r in rows.values() if r["n"] == 256}  # the three methods computed the same output
    assert max(sums) - min(sums) < 1e-2
    assert any("scaled_dot_product" in k for k in result["torch_sdpa_cpu_kernels"])
    assert "| 256 |" in done.stdout
