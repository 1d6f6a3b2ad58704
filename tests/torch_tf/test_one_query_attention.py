"""The cached decoding step's one_query_attention equals scaled_dot_product_attention (Eq. 1) for one query."""

import importlib

import numpy as np
import pytest
from conftest import assert_close


@pytest.mark.parametrize("mask_kind", ["none", "padding", "fully masked row", "0/1 floats"])
def test_one_query_attention_equals_eq1(fw, mask_kind):
    rng = np.random.default_rng(7)
    q, k, v = (rng.normal(size=shape).astype(np.float32) * 3 for shape in ((5, 2, 1, 4), (5, 2, 6, 4), (5, 2, 6, 3)))
    mask = None
    if mask_kind != "none":
        mask = np.zeros((5, 1, 1, 6), dtype=bool)
        mask[:, :, :, 4:] = True  # padding at the end of the keys
        if mask_kind == "fully masked row":
            mask[2] = True
        if mask_kind == "0/1 floats":
            mask = mask.astype(np.float32)
    args = [fw.tensor(x) for x in (q, k, v)] + [None if mask is None else fw.tensor(mask)]
    attention = importlib.import_module(f"txcourse.{fw.name}.attention")
    out, weights = attention.one_query_attention(*args)
    ref_out, ref_weights = attention.scaled_dot_product_attention(*args)
    assert fw.numpy(out).shape == (5, 2, 1, 3) and fw.numpy(weights).shape == (5, 2, 1, 6)
    assert_close(fw.numpy(weights), fw.numpy(ref_weights), atol=1e-6, what="attention weights")
    assert_close(fw.numpy(out), fw.numpy(ref_out), atol=1e-5, what="attention output")
    if mask is not None:
        assert not np.any(fw.numpy(weights)[np.broadcast_to(mask != 0, (5, 2, 1, 6))]), "masked keys got weight"
