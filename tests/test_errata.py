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


def test_E10_decoder_keeps_its_state(fw):
    """002's decoder GRU restarts from zeros at every step; the package's carries the state."""
    import tensorflow as tf

    rng = np.random.default_rng(10)
    x = rng.normal(size=(2, 1, 7)).astype(np.float32)  # (B, 1, U + E): context and token
    state_a, state_b = (rng.normal(size=(2, 4)).astype(np.float32) for _ in range(2))
    gru = tf.keras.layers.GRU(4, return_sequences=True, return_state=True)
    _, seed_a = seed.seed_decoder_gru_002(gru, tf.constant(x), tf.constant(state_a))
    _, seed_b = seed.seed_decoder_gru_002(gru, tf.constant(x), tf.constant(state_b))
    _, from_zeros = gru(tf.constant(x), initial_state=tf.zeros((2, 4)))
    assert_close(seed_a.numpy(), seed_b.numpy(), atol=0, what="the notes: the incoming state changes nothing")
    assert_close(seed_a.numpy(), from_zeros.numpy(), atol=1e-6, what="the notes: the GRU starts from zeros")

    dec = fw.eval(fw.module.Seq2SeqDecoder(vocab_size=9, embedding_dim=3, units=4, attention=False))
    token = fw.tensor(np.array([5, 6]))
    enc_out, enc_state = fw.tensor(rng.normal(size=(2, 3, 4)).astype(np.float32)), fw.tensor(state_a)
    _, new_a, _ = dec.step(token, fw.tensor(state_a), enc_out, enc_state)
    _, new_b, _ = dec.step(token, fw.tensor(state_b), enc_out, enc_state)
    assert np.abs(fw.numpy(new_a) - fw.numpy(new_b)).max() > 1e-3  # the state is carried


def test_E11_initial_state_skips_the_padding(fw):
    """``enc_out[:, -1]`` of a post-padded source is the state after the pads, not after the last word."""
    enc = fw.module.Seq2SeqEncoder(vocab_size=12, embedding_dim=5, units=6)
    padded, unpadded = fw.tensor(np.array([[5, 6, 7, 0, 0]])), fw.tensor(np.array([[5, 6, 7]]))
    out_padded, state_padded = (fw.numpy(t) for t in enc(padded))
    out_unpadded, state_unpadded = (fw.numpy(t) for t in enc(unpadded))
    assert_close(state_padded, out_unpadded[:, -1], atol=1e-5, what="the package: state after the last word")
    assert_close(state_padded, state_unpadded, atol=1e-5, what="padding does not change the state")
    seed_state = seed.seed_initial_state_002(out_padded)
    assert np.abs(seed_state - out_unpadded[:, -1]).max() > 1e-3  # the notes: two pads later


def test_E12_loss_averages_over_real_tokens(fw):
    """002's ``reduce_mean`` divides the masked loss by every position: more padding, smaller loss."""
    import tensorflow as tf

    rng = np.random.default_rng(12)
    logits = rng.normal(size=(2, 3, 6)).astype(np.float32)
    targets = np.array([[1, 2, 3], [4, 5, 0]])  # one pad
    longer = np.concatenate([targets, np.zeros((2, 3), int)], axis=1)  # three more pads per row
    logits_longer = np.concatenate([logits, rng.normal(size=(2, 3, 6)).astype(np.float32)], axis=1)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    real = -np.array([log_p[b, t, targets[b, t]] for b in range(2) for t in range(3) if targets[b, t]])
    seed_short = float(seed.seed_loss_function_002(tf.constant(targets), tf.constant(logits)))
    seed_long = float(seed.seed_loss_function_002(tf.constant(longer), tf.constant(logits_longer)))
    assert np.isclose(seed_short, real.sum() / 6, atol=1e-5)  # divided by 6 positions, not 5 tokens
    assert seed_long < 0.6 * seed_short  # the notes: padding alone halves the loss
    loss = fw.module.label_smoothed_cross_entropy
    ours_short = float(fw.numpy(loss(fw.tensor(logits), fw.tensor(targets), smoothing=0.0)[0]))
    ours_long = float(fw.numpy(loss(fw.tensor(logits_longer), fw.tensor(longer), smoothing=0.0)[0]))
    assert np.isclose(ours_short, real.mean(), atol=1e-5) and np.isclose(ours_long, ours_short, atol=1e-5)


def test_E13_accented_letters_survive():
    from txcourse.data.vocab import WordTokenizer

    assert seed.seed_preprocess_sentence_002("Café aquí, señor.") == "caf aqu , se or ."
    tok = WordTokenizer.fit(["café aquí, señor."], lowercase=True)
    assert tok.tokenize("Café aquí, señor.") == ["café", "aquí", ",", "señor", "."]
    assert tok.unk_id not in tok.encode("café aquí, señor.")


def test_E14_split_is_eight_to_two():
    from txcourse.data import get_task

    assert seed.seed_split_sizes_002(30000) == (22500, 7500)  # the notes' call: 3:1, not 8:2
    assert seed.seed_split_sizes_002(30000, test_size=0.2) == (24000, 6000)  # test_size=0.2 asks for 8:2
    task = get_task("numbers", sizes=(800, 100, 100), seed=0)  # the course states its sizes
    assert (len(task.train), len(task.valid) + len(task.test)) == (800, 200)


def test_E15_base_is_10000(fw):
    ours = fw.numpy(fw.module.positional_encoding(50, 16, dtype=fw.lib.float64))
    assert_close(ours, formula(50, 16), atol=1e-9, what="base 10000")
    assert np.abs(seed.seed_positional_formula_002(50, 16) - ours).max() > 0.5  # the notes' base 1000


def test_E16_numeric_table(fw):
    ours = fw.numpy(fw.module.positional_encoding(4, 4, dtype=fw.lib.float64))
    notes = seed.SEED_NUMERIC_TABLE_000
    assert np.abs(notes[:, 1] - ours[:, 1]).max() > 0.4  # cos(pos/10) printed where cos(pos) belongs
    own = np.array([np.sin(np.array([0, 1, 3, 3]) / 100)])  # the notes' own symbolic column 2
    assert np.abs(notes[:, 2] - own).max() > 0.005  # the numbers do not even match it
    assert_close(ours[:, 2], np.sin(np.arange(4) / 100), atol=1e-12, what="column 2 = sin(pos/100)")


def test_E17_attention_is_not_cheaper_than_recurrence():
    """Self-attention costs O(n^2 d) against O(n d^2): cheaper only when n < d; what drops is the
    number of sequential steps (one instead of n), not the arithmetic."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    import txcourse.torch as txt

    def flops(fn, *args):
        with FlopCounterMode(display=False) as counter:
            fn(*args)
        return counter.get_total_flops()

    d = 64
    w_h, w_x = torch.randn(d, d), torch.randn(d, d)
    for n, attention_costs_more in ((256, True), (16, False)):
        x = torch.randn(1, n, d)
        attention = flops(txt.scaled_dot_product_attention, x, x, x)
        recurrent = flops(seed.seed_recurrent_layer, x, w_h, w_x)
        assert attention == 4 * n * n * d and recurrent == 4 * n * d * d
        assert (attention > recurrent) == attention_costs_more, (n, attention, recurrent)


def test_E18_rows_still_sum_to_one(fw):
    """001: after masking the padding 'the attention weights sum to 0'. Each row sums to 1; the pads get 0."""
    import tensorflow as tf

    rng = np.random.default_rng(18)
    x = rng.normal(size=(1, 4, 8)).astype(np.float32)
    tokens = np.array([[5, 7, 0, 0]])
    _, weights = fw.module.scaled_dot_product_attention(fw.tensor(x), fw.tensor(x), fw.tensor(x),
                                                        fw.module.padding_mask(fw.tensor(tokens))[0])
    weights = fw.numpy(weights)
    assert_close(weights.sum(-1), np.ones((1, 4)), atol=1e-6, what="each row sums to 1")
    assert (weights[..., 2:] == 0).all()
    mask = tf.constant((tokens == 0).astype(np.float32)[:, None, :])  # the notes' float mask, 1 = pad
    _, seed_weights = seed.seed_scaled_dot_product_attention_001(tf.constant(x), tf.constant(x), tf.constant(x), mask)
    assert_close(seed_weights.numpy().sum(-1), np.ones((1, 4)), atol=1e-6, what="the notes' own code: 1, not 0")


def test_E19_keras_layers_override_call():
    import keras

    import txcourse.tf as txf

    x = np.ones((2, 3, 8), np.float32)
    seed_ffn = seed.seed_ffn_001()(8, 16)
    seed_ffn(x)
    assert not seed_ffn.built  # Keras' __call__ never ran: no build, no input checks, no training flag
    inputs = keras.Input((3, 8))
    seed_model = keras.Model(inputs, seed.seed_ffn_001()(8, 16)(inputs))
    assert not any(type(layer).__name__ == "Pointwise_FeedForward_Network" for layer in seed_model.layers)

    ours = txf.PositionwiseFeedForward(8, 16)
    ours(x)
    assert ours.built
    model = keras.Model(inputs, txf.PositionwiseFeedForward(8, 16)(inputs))
    assert any(isinstance(layer, txf.PositionwiseFeedForward) for layer in model.layers)


def test_E20_softmax_rows_sum_to_one(fw):
    """003: 'the values sum to 1'. Per row (per query) they do; the whole matrix sums to T."""
    rng = np.random.default_rng(20)
    x = rng.normal(size=(1, 3, 8)).astype(np.float32)  # "I am good"
    _, weights = fw.module.scaled_dot_product_attention(fw.tensor(x), fw.tensor(x), fw.tensor(x))
    weights = fw.numpy(weights)[0]
    assert_close(weights.sum(-1), np.ones(3), atol=1e-6, what="each row sums to 1")
    assert not np.isclose(weights.sum(), 1.0) and np.isclose(weights.sum(), 3.0, atol=1e-5)


def test_E21_scale_before_softmax(fw):
    """004 applies softmax in step 2 and scales in step 3; its own example (112, 96 -> 14, 12 -> 0.88,
    0.12) needs scaling first."""
    q = np.zeros((1, 1, 64), np.float32)
    q[0, 0, 0] = 1.0
    k = np.zeros((1, 2, 64), np.float32)
    k[0, :, 0] = (112.0, 96.0)  # q.k = 112 and 96, d_k = 64
    _, weights = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(k))
    assert_close(fw.numpy(weights)[0, 0], [0.8808, 0.1192], atol=1e-4, what="softmax(112/8, 96/8)")
    notes = seed.seed_attention_steps_004([112.0, 96.0], 64)
    assert abs(notes[0] - 0.8808) > 0.3  # softmax first: (0.531, 0.469)
