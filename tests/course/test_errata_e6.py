"""Errata E6, precisely: when `mask * -1e9` makes NaN in each framework (txcourse/course/errata/notes_001.py says the same)."""

from __future__ import annotations

import numpy as np
import pytest

from txcourse.course.errata import ERRATA


def test_E6_text_names_both_frameworks():
    why = next(e for e in ERRATA if e.id == "E6").why
    for phrase in (
        "TensorFlow",
        "PyTorch",
        "mask.half() * -1e9",
        "0 * -inf is NaN",
        "all its keys masked",
        "depending on the CPU kernel",
    ):
        assert phrase in why


def test_E6_tensorflow_float16_mask_times_minus_1e9_is_nan():
    tf = pytest.importorskip("tensorflow")
    mask = tf.constant([[0.0, 0.0, 1.0]], tf.float16)
    scaled = (mask * -1e9).numpy()
    assert np.isnan(scaled[0, :2]).all() and np.isneginf(scaled[0, 2])  # 0 * -inf = NaN, 1 * -inf = -inf
    weights = tf.nn.softmax(tf.zeros((1, 3), tf.float16) + mask * -1e9).numpy()
    # The softmax of [nan, nan, -inf]: the unmasked keys' weights are NaN on every CPU kernel, so the
    # row is useless; the masked key's weight is NaN on some kernels and 0 on others (one AVX-512 CI
    # machine gives 0 in float16; in float32, oneDNN gives 0 and TF_ENABLE_ONEDNN_OPTS=0 NaN), so only
    # "NaN or 0" is asserted for it.
    assert np.isnan(weights[0, :2]).all(), f"unmasked weights: got {weights[0, :2]}, expected NaN"
    assert np.isnan(weights[0, 2]) or weights[0, 2] == 0.0, f"masked weight: got {weights[0, 2]}, expected NaN or 0"
    values = tf.constant([[1.0], [2.0], [3.0]], tf.float16)
    assert np.isnan((tf.constant(weights) @ values).numpy()).all()  # so the output is NaN either way
    in_float32 = tf.nn.softmax(tf.zeros((1, 3)) + tf.cast(mask, tf.float32) * -1e9).numpy()
    assert np.isfinite(in_float32).all() and in_float32[0, 2] == 0.0


def test_E6_pytorch_float16_mask_times_python_minus_1e9_is_not_nan():
    torch = pytest.importorskip("torch")
    mask = torch.tensor([[0.0, 0.0, 1.0]]).half()
    scaled = mask * -1e9  # the Python number: product in float32, rounded to float16
    assert not torch.isnan(scaled).any() and torch.isneginf(scaled[0, 2]) and (scaled[0, :2] == 0).all()
    weights = torch.softmax(torch.zeros(1, 3).half() + scaled, dim=-1)
    assert not torch.isnan(weights).any() and weights[0, 2] == 0
    # NaN where the -1e9 is a float16 tensor, and where every key of a row is masked
    assert torch.isnan(mask * torch.tensor(-1e9, dtype=torch.half)).any()
    all_masked = torch.softmax(torch.zeros(1, 3).half() + torch.ones(1, 3).half() * -1e9, dim=-1)
    assert torch.isnan(all_masked).all()
    in_float32 = torch.softmax(torch.ones(1, 3) * -1e9, dim=-1)  # finite, but uniform, not zero
    assert torch.allclose(in_float32, torch.full((1, 3), 1 / 3))
