"""Weeks 3 and 5: masks. True = may not attend, in both frameworks."""

import numpy as np
import pytest
from conftest import assert_close, small_config


def test_padding_mask_example(fw):
    """The source notes' example: [[1, 21, 777, 0, 0]] -> [[[[0, 0, 0, 1, 1]]]]."""
    mask = fw.module.padding_mask(fw.tensor(np.array([[1, 21, 777, 0, 0]])))
    assert tuple(mask.shape) == (1, 1, 1, 5)
    assert fw.numpy(mask).dtype == np.bool_
    assert fw.numpy(mask).astype(int).tolist() == [[[[0, 0, 0, 1, 1]]]]


def test_padding_mask_other_pad_id(fw):
    mask = fw.module.padding_mask(fw.tensor(np.array([[5, 7, 7], [7, 1, 2]])), pad_id=7)
    assert fw.numpy(mask)[:, 0, 0].astype(int).tolist() == [[0, 1, 1], [1, 0, 0]]


def test_look_ahead_mask(fw):
    mask = fw.numpy(fw.module.look_ahead_mask(4))
    assert mask.dtype == np.bool_
    assert (mask == np.triu(np.ones((4, 4), bool), k=1)).all()


def test_padded_key_gets_exactly_zero_weight(fw):
    rng = np.random.default_rng(0)
    tokens = np.array([[4, 5, 6, 0, 0], [7, 0, 0, 0, 0]])
    q, k, v = (rng.normal(size=(2, 3, 5, 4)).astype(np.float32) for _ in range(3))
    mask = fw.module.padding_mask(fw.tensor(tokens))
    out, weights = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v), mask)
    weights = fw.numpy(weights)
    assert (weights[0, :, :, 3:] == 0).all() and (weights[1, :, :, 1:] == 0).all()
    assert_close(weights.sum(-1), np.ones((2, 3, 5)), atol=1e-6, what="rows still sum to 1")
    # the output is a mix of unmasked values only: row 1 attends to key 0 alone
    assert_close(fw.numpy(out)[1], np.broadcast_to(v[1, :, :1], (3, 5, 4)), atol=1e-6, what="only key 0")


def test_float_01_mask_means_the_same(fw):
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(1, 4, 3)).astype(np.float32) for _ in range(3))
    bool_mask = np.array([[False, True, False, True]])
    a = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v), fw.tensor(bool_mask))
    b = fw.module.scaled_dot_product_attention(
        fw.tensor(q), fw.tensor(k), fw.tensor(v), fw.tensor(bool_mask.astype(np.float32))
    )
    assert_close(fw.numpy(a[1]), fw.numpy(b[1]), atol=0, what="bool vs 0/1 mask")


def test_fully_padded_row_gives_zeros_not_nan(fw):
    rng = np.random.default_rng(2)
    q, k, v = (rng.normal(size=(2, 3, 4)).astype(np.float32) for _ in range(3))
    mask = fw.module.padding_mask(fw.tensor(np.array([[0, 0, 0], [1, 2, 0]])))[:, 0]  # (B, 1, T_k)
    out, weights = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v), mask)
    out, weights = fw.numpy(out), fw.numpy(weights)
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    assert (weights[0] == 0).all() and (out[0] == 0).all()


def test_fully_padded_source_through_the_model_is_finite(fw):
    cfg = small_config()
    model = fw.eval(fw.module.Transformer(cfg))
    logits = fw.numpy(model(fw.tensor(np.zeros((2, 4), np.int64)), fw.tensor(np.array([[1, 3, 4], [1, 0, 0]]))))
    assert np.isfinite(logits).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_masked_attention_has_no_nan(fw, dtype):
    """The source notes' ``mask * -1e9`` gives NaN in float16 (errata E6); ours does not."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(2, 2, 5, 8)).astype(np.float32) for _ in range(3))
    mask = fw.module.padding_mask(fw.tensor(np.array([[3, 4, 0, 0, 0], [3, 4, 5, 6, 0]])))
    out, weights = fw.module.scaled_dot_product_attention(
        fw.tensor(q, dtype), fw.tensor(k, dtype), fw.tensor(v, dtype), mask
    )
    ref_out, _ = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v), mask)
    out, weights = fw.numpy(out), fw.numpy(weights)
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    assert (weights[0, :, :, 2:] == 0).all()
    assert_close(out, fw.numpy(ref_out), atol=0.05, what=f"{dtype} vs float32")


@pytest.mark.parametrize("norm_first", [False, True])
def test_no_look_ahead_leak(fw, norm_first):
    """Changing target tokens after position t leaves the outputs at positions <= t unchanged."""
    cfg = small_config(norm_first=norm_first)
    model = fw.eval(fw.module.Transformer(cfg))
    rng = np.random.default_rng(4)
    src = rng.integers(1, cfg.src_vocab_size, size=(2, 6))
    tgt = rng.integers(1, cfg.tgt_vocab_size, size=(2, 7))
    base = fw.numpy(model(fw.tensor(src), fw.tensor(tgt)))
    for t in range(6):
        changed = tgt.copy()
        changed[:, t + 1 :] = rng.integers(1, cfg.tgt_vocab_size, size=(2, 6 - t))
        assert (changed[:, t + 1 :] != tgt[:, t + 1 :]).any()
        out = fw.numpy(model(fw.tensor(src), fw.tensor(changed)))
        assert_close(out[:, : t + 1], base[:, : t + 1], atol=1e-5, what=f"positions <= {t}")
        assert np.abs(out[:, t + 1 :] - base[:, t + 1 :]).max() > 1e-4, "later positions should change"


def test_padded_source_token_changes_nothing(fw):
    """With the padding mask, what stands in a padded source position cannot matter...

    ...so replacing the pad embedding row by a different vector leaves the logits unchanged.
    """
    cfg = small_config()
    model = fw.eval(fw.module.Transformer(cfg))
    src = np.array([[5, 6, 7, 0, 0]])
    tgt = np.array([[1, 4, 9]])
    before = fw.numpy(model(fw.tensor(src), fw.tensor(tgt)))
    table = model.encoder.embedding.token_embedding
    if fw.name == "torch":
        import torch

        with torch.no_grad():
            table.weight[0] += 3.0
    else:
        table.embeddings.assign(table.embeddings.numpy() + 3.0 * (np.arange(cfg.src_vocab_size) == 0)[:, None])
    after = fw.numpy(model(fw.tensor(src), fw.tensor(tgt)))
    assert_close(after, before, atol=1e-5, what="logits after changing the pad embedding")
