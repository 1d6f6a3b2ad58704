"""Each mistake of the source notes (txcourse.errata) is pinned: the check passes on the
package and fails on the notes' version, reproduced in tests/seed_code.py."""

import inspect
import sys

import numpy as np
import pytest

import seed_code as seed
from conftest import Framework, assert_close
from test_positional import formula
from txcourse.errata import ERRATA


def test_every_erratum_has_its_test():
    here = sys.modules[__name__]
    names = {e.test for e in ERRATA}
    assert len(names) == len(ERRATA) == len({e.id for e in ERRATA})
    for name in names:
        assert inspect.isfunction(getattr(here, name, None)), f"missing test {name}"


def check_positional_table(table: np.ndarray) -> None:
    assert_close(table, formula(*table.shape), atol=1e-6, what="positional encoding vs the formula of Sec. 3.5")


def test_E1_angle_exponent(fw):
    check_positional_table(fw.numpy(fw.module.positional_encoding(30, 16)))
    with pytest.raises(AssertionError):
        check_positional_table(seed.seed_positional_encoding_001(30, 16))


def test_E2_slice_by_length(fw):
    layer = fw.module.PositionalEncoding(max_len=50, d_model=16)
    x = np.zeros((2, 7, 16), np.float32)  # T = 7 != d_model = 16
    out = fw.numpy(layer(fw.tensor(x)))
    assert_close(out[0], formula(7, 16), atol=1e-6, what="rows 0..6 of the table")
    table = formula(50, 16).astype(np.float32)
    with pytest.raises(ValueError):  # (2, 7, 16) + (1, 16, 16) does not broadcast
        seed.seed_positional_layer_call_002(table, x)


def test_E3_reshape_the_result():
    tf_fw = Framework("tf")
    import tensorflow as tf

    scaled_attention = tf.zeros((2, 5, 4, 2))  # (B, T, H, d_k) after the transpose
    with pytest.raises((TypeError, ValueError)):
        seed.seed_mha_concat_002(tf_fw.module.scaled_dot_product_attention, scaled_attention, 2, 8)
    mha = tf_fw.module.MultiHeadAttention(8, 4)
    heads = tf.random.normal((2, 4, 5, 2))  # (B, H, T, d_k)
    merged = mha.merge_heads(heads).numpy()
    assert merged.shape == (2, 5, 8)
    assert_close(merged[:, :, 2:4], heads.numpy()[:, 1], atol=0, what="head 1 in columns 2..3")


def test_E4_encoding_is_added(fw):
    """The same token at two positions must embed differently, by exactly PE(p1) - PE(p2)."""
    emb = fw.eval(fw.module.TransformerEmbedding(vocab_size=10, d_model=8, max_len=20, dropout=0.0))
    out = fw.numpy(emb(fw.tensor(np.array([[5, 5, 5]]))))
    pe = formula(3, 8)
    assert_close(out[0, 1] - out[0, 0], pe[1] - pe[0], atol=1e-5, what="position 1 - position 0")
    tokens = out[0] - pe  # what the notes' encoder sees: no position at all
    seed_out = seed.seed_encoder_embeddings_002(tokens, 10, 8)
    assert np.abs(seed_out[1] - seed_out[0]).max() < 1e-5  # indistinguishable positions


def test_E4_seed_encoder_cannot_be_built():
    """Run as written, 002's encoder() stops at Dropout()(embeddings): a layer is not a tensor."""
    with pytest.raises(ValueError, match="positional argument"):
        seed.seed_encoder_input_002(vocab_size=20, d_model=8, dropout=0.1)


def test_E5_heads_are_concatenated(fw):
    rng = np.random.default_rng(0)
    mha = fw.module.MultiHeadAttention(8, 2)
    x = rng.normal(size=(1, 3, 8)).astype(np.float32)
    out = fw.numpy(mha(fw.tensor(x), fw.tensor(x), fw.tensor(x)))
    heads = np.moveaxis(fw.numpy(mha.attention_weights), 1, 0) @ np.stack(
        np.split(fw.numpy(mha.w_v(fw.tensor(x))), 2, axis=-1))  # (H, B, T, d_k)
    concat = fw.numpy(mha.w_o(fw.tensor(np.concatenate(list(heads), -1).astype(np.float32))))
    assert_close(out, concat, atol=1e-5, what="Concat(heads) W^O")
    added = seed.seed_heads_added_003(list(heads))
    assert added.shape[-1] == 4 != out.shape[-1]  # the sum is d_k wide: W^O (d_model x d_model) cannot apply


def test_E6_mask_in_float16():
    import tensorflow as tf

    rng = np.random.default_rng(1)
    q, k, v = (tf.constant(rng.normal(size=(1, 3, 4)), tf.float16) for _ in range(3))
    mask = tf.constant([[[0.0, 0.0, 1.0]]], tf.float16)
    seed_out, _ = seed.seed_scaled_dot_product_attention_001(q, k, v, mask)
    assert np.isnan(seed_out.numpy()).all()  # every output is NaN
    out, weights = Framework("tf").module.scaled_dot_product_attention(q, k, v, mask)
    assert np.isfinite(out.numpy()).all() and (weights.numpy()[..., 2] == 0).all()
    torch_fw = Framework("torch")
    t_out, _ = torch_fw.module.scaled_dot_product_attention(
        *(torch_fw.tensor(np.asarray(t.numpy())) for t in (q, k, v)), torch_fw.tensor(mask.numpy()))
    assert np.isfinite(torch_fw.numpy(t_out)).all()


def test_E7_bahdanau_context(fw):
    rng = np.random.default_rng(2)
    att = fw.module.BahdanauAttention(6)
    query = rng.normal(size=(2, 6)).astype(np.float32)
    values = rng.normal(size=(2, 5, 6)).astype(np.float32)
    context, weights = att(fw.tensor(query), fw.tensor(values))
    context, weights = fw.numpy(context), fw.numpy(weights)
    assert_close(context, np.einsum("bt,btu->bu", weights, values), atol=1e-5, what="sum_j alpha_j h_j")

    def dense(layer):
        return lambda a: fw.numpy(layer(fw.tensor(a.astype(np.float32))))

    seed_context, seed_weights = seed.seed_bahdanau_context_002(dense(att.u_a), dense(att.w_a), dense(att.v_a),
                                                                values, query)
    assert_close(seed_weights[..., 0], weights, atol=1e-5, what="same alignment weights")
    assert np.abs(seed_context - context).max() > 1e-2  # but a different (projected) context


def test_E8_worked_table(fw):
    ours = fw.numpy(fw.module.positional_encoding(4, 4))
    fn = {"sin": np.sin, "cos": np.cos}
    notes = np.array([[fn[f](p / d) for f, p, d in row] for row in seed.SEED_TABLE_000])
    assert_close(ours, [[np.sin(p), np.cos(p), np.sin(p / 100), np.cos(p / 100)] for p in range(4)],
                 atol=1e-6, what="the d_model=4 table done right")
    assert np.isclose(ours[2, 2], np.sin(2 / 100))
    assert np.abs(notes - ours).max() > 0.5  # the notes' table is not the encoding


def test_E9_distance_table(fw):
    table = fw.numpy(fw.module.positional_encoding(10, 10, dtype=fw.lib.float64))
    ours = np.linalg.norm(table[:, None] - table[None], axis=-1)
    for k in range(1, 9):  # offset 9 has a single entry: nothing to compare
        assert np.ptp(np.diagonal(ours, k)) < 1e-9, f"offset {k}"
        assert np.ptp(np.diagonal(seed.SEED_DISTANCES_004, k)) > 0.05, f"notes, offset {k}"
