"""Each mistake of the source notes (txcourse.course.errata) is pinned: the check passes on the
package and fails on the notes' version, reproduced in tests/support/seed_code.py."""

import inspect
import math
import sys
import types

import numpy as np
import pytest
import support.seed_code as seed
from conftest import Framework, assert_close
from support.references import formula

from txcourse.config import Seq2SeqConfig, TransformerConfig
from txcourse.course.errata import ERRATA


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
    emb = fw.eval(
        fw.module.TransformerEmbedding(
            TransformerConfig(src_vocab_size=10, d_model=8, num_heads=2, max_len=20, dropout=0.0)
        )
    )
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
    out, _, weights = mha(fw.tensor(x), fw.tensor(x), fw.tensor(x), return_weights=True)
    out = fw.numpy(out)
    heads = np.moveaxis(fw.numpy(weights), 1, 0) @ np.stack(
        np.split(fw.numpy(mha.w_v(fw.tensor(x))), 2, axis=-1)
    )  # (H, B, T, d_k)
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
        *(torch_fw.tensor(np.asarray(t.numpy())) for t in (q, k, v)), torch_fw.tensor(mask.numpy())
    )
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

    seed_context, seed_weights = seed.seed_bahdanau_context_002(
        dense(att.u_a), dense(att.w_a), dense(att.v_a), values, query
    )
    assert_close(seed_weights[..., 0], weights, atol=1e-5, what="same alignment weights")
    assert np.abs(seed_context - context).max() > 1e-2  # but a different (projected) context


def test_E8_worked_table(fw):
    ours = fw.numpy(fw.module.positional_encoding(4, 4))
    fn = {"sin": np.sin, "cos": np.cos}
    notes = np.array([[fn[f](p / d) for f, p, d in row] for row in seed.SEED_TABLE_000])
    assert_close(
        ours,
        [[np.sin(p), np.cos(p), np.sin(p / 100), np.cos(p / 100)] for p in range(4)],
        atol=1e-6,
        what="the d_model=4 table done right",
    )
    assert np.isclose(ours[2, 2], np.sin(2 / 100))
    assert np.abs(notes - ours).max() > 0.5  # the notes' table is not the encoding


def test_E9_distance_table(fw):
    table = fw.numpy(fw.module.positional_encoding(10, 10, dtype=fw.lib.float64))
    ours = np.linalg.norm(table[:, None] - table[None], axis=-1)
    for k in range(1, 9):  # offset 9 has a single entry: nothing to compare
        assert np.ptp(np.diagonal(ours, k)) < 1e-9, f"offset {k}"
        assert np.ptp(np.diagonal(seed.SEED_DISTANCES_004, k)) > 0.05, f"notes, offset {k}"


def test_E10_decoder_keeps_its_state(fw):
    """002's decoder GRU restarts from zeros at every step: the previous state reaches the step only
    as the attention query. The package's GRU carries the state."""
    import tensorflow as tf

    rng = np.random.default_rng(10)
    token = np.array([[5], [6]])  # (B, 1): the previous target token
    state_a, state_b = (rng.normal(size=(2, 4)).astype(np.float32) for _ in range(2))
    enc_out = rng.normal(size=(2, 3, 4)).astype(np.float32)  # (B, T_src, U)
    same_rows = np.repeat(enc_out[:, :1], 3, axis=1)  # every source position alike: attention cannot choose

    decoder = seed.seed_bahdanau_decoder_002()(9, 3, 4)  # vocab 9, embedding 3, units 4

    def seed_state(state, values):
        return decoder(tf.constant(token), tf.constant(state), tf.constant(values))[1].numpy()

    # the incoming state still matters through the attention query ...
    assert np.abs(seed_state(state_a, enc_out) - seed_state(state_b, enc_out)).max() > 1e-4
    # ... and only there: when the query cannot change the context, the state has no effect at all
    assert_close(
        seed_state(state_a, same_rows),
        seed_state(state_b, same_rows),
        atol=1e-7,
        what="the notes: new state from two different incoming states",
    )

    dec = fw.eval(fw.module.Seq2SeqDecoder(Seq2SeqConfig(9, 9, embedding_dim=3, units=4), attention=True))
    step_token, values = fw.tensor(token[:, 0]), fw.tensor(same_rows)
    _, new_a, _ = dec.step(step_token, fw.tensor(state_a), values, fw.tensor(state_a))
    _, new_b, _ = dec.step(step_token, fw.tensor(state_b), values, fw.tensor(state_a))
    assert np.abs(fw.numpy(new_a) - fw.numpy(new_b)).max() > 1e-3  # the package: the GRU carries the state


def test_E11_initial_state_skips_the_padding(fw):
    """``enc_out[:, -1]`` of a post-padded source is the state after the pads, not after the last word."""
    enc = fw.module.Seq2SeqEncoder(Seq2SeqConfig(12, 12, embedding_dim=5, units=6))
    padded, unpadded = fw.tensor(np.array([[5, 6, 7, 0, 0]])), fw.tensor(np.array([[5, 6, 7]]))
    out_padded, state_padded = (fw.numpy(t) for t in enc(padded))
    out_unpadded, state_unpadded = (fw.numpy(t) for t in enc(unpadded))
    assert_close(state_padded, out_unpadded[:, -1], atol=1e-5, what="the package: state after the last word")
    assert_close(state_padded, state_unpadded, atol=1e-5, what="padding does not change the state")
    seed_state = seed.seed_initial_state_002(out_padded)
    assert np.abs(seed_state - out_unpadded[:, -1]).max() > 1e-3  # the notes: two pads later


class ReplayDecoder:
    """Stands in for 002's Decoder in the notes' loop: at step t it returns fixed logits[:, t] (B, V)."""

    def __init__(self, logits):
        self.logits, self.t = logits, 0

    def __call__(self, dec_src, h_dec, enc_out):
        import tensorflow as tf

        self.t += 1
        return tf.constant(self.logits[:, self.t]), h_dec, None


def notes_loop(tgt, logits):
    """002's eval_step/train_step loop over tgt (B, T) with the decoder replaced by fixed logits (B, T, V)."""
    import tensorflow as tf

    tok = types.SimpleNamespace(word_index={"<start>": 1})
    batch = tgt.shape[0]
    loss, batch_loss = seed.seed_eval_step_002(
        tf.zeros((batch, 2), tf.int32),
        tf.constant(tgt),
        lambda src: tf.zeros((batch, 2, 3)),
        ReplayDecoder(logits),
        tok,
    )
    return float(loss), float(batch_loss)


# <start> = 1, <end> = 2, <pad> = 0: two targets of 3 and 2 real tokens after <start>, padded to T = 5
LOSS_TARGETS = np.array([[1, 4, 5, 2, 0], [1, 3, 2, 0, 0]])


def loss_example(extra_pads=0, seed_=12):
    """Targets (B, T + extra_pads), logits (B, T + extra_pads, V): the first T steps' logits do not
    depend on extra_pads; the masked per-token losses (B, T + extra_pads)."""
    rng = np.random.default_rng(seed_)
    tgt = np.concatenate([LOSS_TARGETS, np.zeros((2, extra_pads), int)], axis=1)
    logits = np.concatenate(
        [rng.normal(size=(2, LOSS_TARGETS.shape[1], 6)), rng.normal(size=(2, extra_pads, 6))], axis=1
    ).astype(np.float32)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    token_loss = -np.take_along_axis(log_p, tgt[..., None], -1)[..., 0]  # (B, T)
    return tgt, logits, token_loss * (tgt != 0)


def test_E12_per_step_mean_counts_padded_rows(fw):
    """002 calls loss_function(tgt[:, t], pred) once per step: each step's reduce_mean divides by the
    batch size B, rows already padded at step t included. Summed over the steps this is
    sum(token losses) / B, which padding does not change."""
    import tensorflow as tf

    tgt, logits, token_loss = loss_example()
    real = token_loss[:, 1:][tgt[:, 1:] != 0]  # the 5 real target tokens
    batch = tgt.shape[0]
    step3 = float(seed.seed_loss_function_002(tf.constant(tgt[:, 3]), tf.constant(logits[:, 3])))
    assert tgt[1, 3] == 0 and np.isclose(step3, token_loss[0, 3] / batch, atol=1e-6)  # the padded row counts
    loss_step3 = fw.module.label_smoothed_cross_entropy  # the package at the same step: mean over real rows
    ours_step3 = float(fw.numpy(loss_step3(fw.tensor(logits[:, 3:4]), fw.tensor(tgt[:, 3:4]), smoothing=0.0)[0]))
    assert np.isclose(ours_step3, token_loss[0, 3], atol=1e-5) and not np.isclose(step3, ours_step3, atol=1e-3)

    loss, _ = notes_loop(tgt, logits)
    assert np.isclose(loss, real.sum() / batch, atol=1e-5)  # every real token weighs 1/B
    loss_padded, _ = notes_loop(*loss_example(extra_pads=3)[:2])
    assert np.isclose(loss_padded, loss, atol=1e-5)  # the summed loss (what is differentiated) ignores padding
    ours, count = fw.module.label_smoothed_cross_entropy(fw.tensor(logits[:, 1:]), fw.tensor(tgt[:, 1:]), smoothing=0.0)
    assert int(fw.numpy(count)) == real.size
    assert np.isclose(float(fw.numpy(ours)), real.mean(), atol=1e-5)  # per token: the notes' sum * B / N
    assert np.isclose(loss, float(fw.numpy(ours)) * real.size / batch, atol=1e-5)


def test_E13_accented_letters_survive():
    from txcourse.data.char_word import WordTokenizer

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
    """000's numbers are its symbolic table (E8's denominators 1, 10, 100, 1000) truncated, not rounded."""
    ours = fw.numpy(fw.module.positional_encoding(4, 4, dtype=fw.lib.float64))
    notes = seed.SEED_NUMERIC_TABLE_000
    assert np.abs(notes[:, 1] - ours[:, 1]).max() > 0.4  # cos(pos/10) printed where cos(pos) belongs
    assert_close(ours[:, 2], np.sin(np.arange(4) / 100), atol=1e-12, what="column 2 = sin(pos/100)")
    pos = np.arange(4.0)[:, None]
    slide = np.hstack([np.sin(pos / 1), np.cos(pos / 10), np.sin(pos / 100), np.cos(pos / 1000)])
    decimals = np.array([[len(x.partition(".")[2]) for x in row] for row in seed.SEED_NUMERIC_TABLE_000_PRINTED])
    truncated = np.trunc(slide * 10.0**decimals) / 10.0**decimals
    assert_close(notes, truncated, atol=1e-12, what="the slide's numbers vs its formulas, truncated")
    assert not np.allclose(notes, np.round(slide * 10.0**decimals) / 10.0**decimals)  # not rounded
    assert notes[2, 2] == 0.01 != np.trunc(np.sin(3 / 100) * 100) / 100  # row 2 is position 2, not sin(3/100)


def test_E17_cheaper_only_when_n_below_d():
    """Sec. 4: self-attention is cheaper than recurrence when n < d, because it costs O(n^2 d) against
    O(n d^2), not because it reads the input at once: computing the positions together does the
    same arithmetic as computing them one by one; what drops is the number of sequential steps."""
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
        # taking the input "at once" is not what saves work: one query at a time costs the same
        one_by_one = sum(flops(txt.scaled_dot_product_attention, x[:, t : t + 1], x, x) for t in range(n))
        assert one_by_one == attention


def test_E18_rows_still_sum_to_one(fw):
    """001: after masking the padding 'the attention weights sum to 0'. Each row sums to 1; the pads get 0."""
    import tensorflow as tf

    rng = np.random.default_rng(18)
    x = rng.normal(size=(1, 4, 8)).astype(np.float32)
    tokens = np.array([[5, 7, 0, 0]])
    _, weights = fw.module.scaled_dot_product_attention(
        fw.tensor(x), fw.tensor(x), fw.tensor(x), fw.module.padding_mask(fw.tensor(tokens))[0]
    )
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


# ---- E22-E36 -------------------------------------------------------------------------------


def scale_weights(fw, layer, factor):
    """Multiply every weight of a package layer by ``factor`` (0 silences it), in either framework."""
    if fw.name == "torch":
        with fw.lib.no_grad():
            for p in layer.parameters():
                p.mul_(factor)
    else:
        for w in layer.weights:
            w.assign(w * factor)


def score_variance(weights):
    """The variance over the keys of the scores behind softmax weights (B, T_q, T_k), averaged over the
    queries: log w_j = s_j - log sum_i exp(s_i), so log w minus its row mean is s minus its row mean."""
    log_w = np.log(weights)
    return float((log_w - log_w.mean(-1, keepdims=True)).var(-1).mean())


def test_E22_divide_by_sqrt_dk(fw):
    """003:478 divides the scores by d_k, 001:216 by sqrt(n). Eq. (1) divides by sqrt(d_k): for
    components of variance 1, q.k has variance d_k (footnote 4), so the scaled scores keep variance 1
    for every d_k; divided by d_k they have variance 1/d_k and the softmax flattens as d_k grows."""
    rng = np.random.default_rng(22)
    length = 64
    for d_k in (16, 64, 256):
        q, k = (rng.normal(size=(1, length, d_k)) for _ in range(2))
        _, weights = fw.module.scaled_dot_product_attention(*(fw.tensor(a.astype(np.float32)) for a in (q, k, k)))
        weights = fw.numpy(weights).astype(np.float64)
        assert 0.7 < score_variance(weights) < 1.4, (d_k, score_variance(weights))
        _, notes = seed.seed_attention_divided_by_dk_003(q, k, k)
        assert 0.7 < score_variance(notes) * d_k < 1.4, (d_k, score_variance(notes))
        if d_k == 256:  # the notes: nearly uniform rows
            assert notes.max() < 1.5 / length < weights.max()
    # 001's sqrt(n), n the length: the same query and keys get other weights in a longer sentence
    q, keys = rng.normal(size=(1, 1, 8)), rng.normal(size=(1, 16, 8))
    q, keys = q.astype(np.float32), keys.astype(np.float32)
    _, short = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(keys[:, :4]), fw.tensor(keys[:, :4]))
    _, long = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(keys), fw.tensor(keys))
    short, long = fw.numpy(short)[0, 0], fw.numpy(long)[0, 0, :4]
    assert_close(long / long.sum(), short, atol=1e-5, what="sqrt(d_k): the first 4 keys' relative weights")

    def softmax(s):
        e = np.exp(s - s.max())
        return e / e.sum()

    notes_short = softmax(seed.seed_scores_divided_by_sqrt_n_001(q[0], keys[0, :4])[0])
    notes_long = softmax(seed.seed_scores_divided_by_sqrt_n_001(q[0], keys[0])[0])[:4]
    assert np.abs(notes_long / notes_long.sum() - notes_short).max() > 1e-2


def test_E23_weight_is_not_similarity(fw):
    """003:546 calls the encoder-decoder attention of 'Je' self-attention and reads its weight 0.98 on
    'I' as '98% similar, synonyms'. The weights of one query are a softmax over the keys: 0.98 says that
    key outscores the others, not that query and key are alike, and it changes with the other keys."""
    d = 8
    q = np.zeros((1, 1, d), np.float32)
    q[0, 0, 0] = 1.0
    k = np.zeros((1, 3, d), np.float32)
    k[0, 0, 0], k[0, 0, 1:] = 13.0, 60.0  # far from q's direction: cosine 0.08
    cosine = k[0, 0] @ q[0, 0] / np.linalg.norm(k[0, 0])
    _, weights = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(k))
    weights = fw.numpy(weights)[0, 0]
    assert cosine < 0.1 and weights[0] > 0.97
    k[0, 1] = k[0, 0]  # the same key, with a rival equal to it
    _, weights = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(k))
    assert_close(fw.numpy(weights)[0, 0, :2], [0.4975, 0.4975], atol=1e-3, what="the same pair, now 0.5")
    # and it is encoder-decoder attention: rows are target positions, columns source positions
    layer = fw.eval(fw.module.DecoderLayer(TransformerConfig(d_model=8, num_heads=2, d_ff=16, dropout=0.0)))
    rng = np.random.default_rng(23)
    target, source = (fw.tensor(rng.normal(size=(1, n, 8)).astype(np.float32)) for n in (2, 3))
    _, _, (_, cross) = layer(target, source, return_weights=True)  # (self-attention, cross-attention) weights
    cross = fw.numpy(cross)
    assert cross.shape == (1, 2, 2, 3)  # (B, H, T_tgt, T_src): queries from the decoder, keys from the encoder
    assert_close(cross.sum(-1), np.ones((1, 2, 2)), atol=1e-6, what="each target row sums to 1 over the source")


def test_E24_i_is_the_pair_index(fw):
    """In PE(pos, 2i), PE(pos, 2i+1) i counts the pairs: dimensions 2i and 2i+1 are the sine and cosine
    of one angle. Read as the dimension (003: 'the 3rd of 512 dimensions: i = 3'), every dimension gets
    its own frequency, the pairs break, and the longest wavelength passes Sec. 3.5's 10000 * 2 pi."""
    table = fw.numpy(fw.module.positional_encoding(50, 16, dtype=fw.lib.float64))
    assert_close(
        table[:, 0::2] ** 2 + table[:, 1::2] ** 2,
        np.ones((50, 8)),
        atol=1e-12,
        what="sin^2 + cos^2 of each pair (2i, 2i+1)",
    )
    notes = seed.seed_positional_i_as_dimension_003(50, 16)
    assert np.abs(notes[:, 0::2] ** 2 + notes[:, 1::2] ** 2 - 1).max() > 0.1
    i = np.arange(8)
    ours_longest = 2 * np.pi * 10000 ** (2 * i / 16)
    notes_longest = 2 * np.pi * 10000 ** (2 * np.arange(16) / 16)  # i = the dimension, 0..15
    angle_ours = np.arctan2(table[1, 0::2], table[1, 1::2])  # the angle of pair i at pos 1: 1 / 10000^(2i/d)
    assert_close(2 * np.pi / angle_ours, ours_longest, atol=1e-6 * ours_longest.max(), what="wavelengths")
    assert ours_longest.max() < 2 * np.pi * 10000 < notes_longest.max()


def test_E25_padding_mask_acts_on_scores(fw):
    """000:1188: the padding mask sets the <pad> embeddings to a large negative number. It acts on the
    attention scores (000's own code: logits += mask * -1e9): the pads get weight 0 and change nothing."""
    rng = np.random.default_rng(25)
    x = rng.normal(size=(1, 4, 8)).astype(np.float32)
    x[0, 0] = -np.abs(x[0, 0])  # a real token whose components sum below 0
    tokens = np.array([[5, 7, 0, 0]])
    mask = fw.module.padding_mask(fw.tensor(tokens))[0]
    out, weights = fw.module.scaled_dot_product_attention(fw.tensor(x), fw.tensor(x), fw.tensor(x), mask)
    short, _ = fw.module.scaled_dot_product_attention(*(fw.tensor(x[:, :2]) for _ in range(3)))
    assert_close(fw.numpy(out)[:, :2], fw.numpy(short), atol=1e-5, what="real tokens, with and without pads")
    assert (fw.numpy(weights)[..., 2:] == 0).all()
    notes_out, notes_weights = seed.seed_padding_mask_on_embeddings_000(x.astype(np.float64), tokens)
    assert notes_weights[0, 0, 2:].sum() > 0.99  # the pads take all of token 0's attention
    assert np.abs(notes_out[0, 0]).max() > 1e8


def test_E26_heads_are_subspaces(fw):
    """001:200: 'multi-head means running attention in parallel'. Parallel is how the heads are computed,
    not what they are: one head after another gives the same output; merging the h subspaces into one
    attention over the full width (the same projections) gives another."""
    rng = np.random.default_rng(26)
    d_model, heads = 8, 2
    d_k = d_model // heads
    mha = fw.eval(fw.module.MultiHeadAttention(d_model, heads))
    x = fw.tensor(rng.normal(size=(1, 5, d_model)).astype(np.float32))
    out = fw.numpy(mha(x, x, x))
    q, k, v = (fw.numpy(layer(x)) for layer in (mha.w_q, mha.w_k, mha.w_v))  # (1, 5, D) each
    one_by_one = []
    for h in range(heads):  # head h uses the columns h*d_k .. (h+1)*d_k of the projections
        part = (fw.tensor(np.ascontiguousarray(a[..., h * d_k : (h + 1) * d_k])) for a in (q, k, v))
        one_by_one.append(fw.numpy(fw.module.scaled_dot_product_attention(*part)[0]))  # (1, 5, d_k)
    sequential = fw.numpy(mha.w_o(fw.tensor(np.concatenate(one_by_one, -1))))
    assert_close(sequential, out, atol=1e-5, what="heads one after another vs all at once")
    merged, _ = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v))
    assert np.abs(fw.numpy(mha.w_o(merged)) - out).max() > 1e-2


def test_E27_embedding_scale_reason(fw):
    """Sec. 3.4 multiplies the embeddings by sqrt(d_model) and gives no reason. 001:521's reason, that it
    makes the positional encoding weigh less than the embedding, does not hold in 001's own model: which
    part is larger depends on the initialisation, which the sqrt(d_model) does not fix."""
    for d_model in (128, 512):  # 001's PositionalEncoding(50, 128) and its d_model = 512
        pe = fw.numpy(fw.module.positional_encoding(50, d_model))
        pe_rms = float(np.sqrt((pe**2).mean()))
        assert np.isclose(pe_rms, np.sqrt(0.5), atol=1e-5)  # each pair: sin^2 + cos^2 = 1
        notes = seed.seed_scaled_embedding_001(1000, d_model)  # Keras' default init, times sqrt(d_model)
        assert np.sqrt((notes**2).mean()) < pe_rms  # the notes: the scaled embedding is the smaller part
        emb = fw.eval(
            fw.module.TransformerEmbedding(
                TransformerConfig(src_vocab_size=1000, d_model=d_model, num_heads=1, max_len=50, dropout=0.0)
            )
        )
        tokens = np.arange(1000).reshape(20, 50)
        scaled = fw.numpy(emb(fw.tensor(tokens))) - pe[None]
        assert np.sqrt((scaled**2).mean()) > pe_rms  # the package, N(0, 1/d_model) init: the larger part


def test_E28_dropout_on_every_sublayer(fw):
    """000's decoder_layer applies dropout after sublayers 2 and 3 only; Sec. 5.4 applies it to the
    output of every sublayer. With sublayers 2 and 3 silenced (zero weights), only a dropout on
    sublayer 1 can make two training-mode calls differ."""
    import tensorflow as tf

    rng = np.random.default_rng(28)
    x = rng.normal(size=(1, 4, 8)).astype(np.float32)
    memory = rng.normal(size=(1, 3, 8)).astype(np.float32)
    look_ahead = np.triu(np.ones((4, 4), np.float32), 1)[None, None]  # the notes' 1 = blocked
    no_pads = np.zeros((1, 1, 1, 3), np.float32)
    notes = seed.seed_decoder_layer_000(dff=16, d_model=8, num_heads=2, dropout=0.5)
    inputs = [tf.constant(a) for a in (x, memory, look_ahead, no_pads)]
    notes(inputs)
    silenced = [notes.get_layer("attention_2")] + [
        layer for layer in notes.layers if isinstance(layer, tf.keras.layers.Dense) and layer.units == 8
    ]
    assert len(silenced) == 2
    for layer in silenced:
        layer.set_weights([np.zeros_like(w) for w in layer.get_weights()])
    assert_close(
        notes(inputs, training=True).numpy(),
        notes(inputs, training=True).numpy(),
        atol=0,
        what="the notes: two training calls (no dropout on sublayer 1)",
    )

    layer = fw.module.DecoderLayer(TransformerConfig(d_model=8, num_heads=2, d_ff=16, dropout=0.5))
    x_, memory_ = fw.tensor(x), fw.tensor(memory)
    layer(x_, memory_)
    scale_weights(fw, layer.cross_attn, 0.0)
    scale_weights(fw, layer.feed_forward.w_2, 0.0)
    if fw.name == "torch":
        layer.train()
        first, second = layer(x_, memory_), layer(x_, memory_)
    else:
        first, second = layer(x_, memory_, training=True), layer(x_, memory_, training=True)
    assert np.abs(fw.numpy(first) - fw.numpy(second)).max() > 1e-3  # sublayer 1's output is dropped out


def test_E29_convolution_path_length():
    """000:58: CNNs fail by 'no information sharing between kernels'. A convolution's output channels
    each read every input channel; the paper's point (Sec. 4, Table 1) is path length: contiguous
    kernels of width k need O(n/k) layers to connect two positions, dilated ones O(log_k n),
    self-attention one."""
    import torch

    import txcourse.torch as txt

    torch.manual_seed(29)
    n, k, d = 10, 3, 4

    def connected(layers):
        """Does the output at position 0 depend on the input at position n - 1?"""
        x = torch.randn(1, d, n, requires_grad=True)
        y = x
        for layer in layers:
            y = torch.tanh(layer(y))
        y[0, :, 0].sum().backward()
        return bool((x.grad[0, :, n - 1] != 0).any())

    contiguous = [torch.nn.Conv1d(d, d, k, padding=k // 2) for _ in range(n)]
    assert next(depth for depth in range(1, n + 1) if connected(contiguous[:depth])) == (n - 1) // (k // 2)
    dilated = [torch.nn.Conv1d(d, d, k, padding=k**i, dilation=k**i) for i in range(3)]  # 1, 3, 9
    assert next(depth for depth in range(1, 4) if connected(dilated[:depth])) == math.ceil(math.log(n, k))
    x = torch.randn(1, n, d, requires_grad=True)
    txt.scaled_dot_product_attention(x, x, x)[0][0, 0].sum().backward()
    assert (x.grad[0, n - 1] != 0).any()  # one attention layer connects the two ends
    x = torch.randn(1, d, n, requires_grad=True)
    contiguous[0](x)[0, 0].sum().backward()  # output channel 0 ...
    assert (x.grad[0].abs().sum(-1) > 0).all()  # ... reads every input channel: the kernels do share


def test_E30_all_positions_at_once(fw):
    """003:88: the model computes the representation of 'A', then 'dog', then 'ate'. Self-attention
    computes every position from the whole sentence: computed in one product, or one query at a time
    from the last to the first, the outputs are the same, and the first word's already depends on the last."""
    rng = np.random.default_rng(30)
    n, d = 6, 8
    mha = fw.eval(fw.module.MultiHeadAttention(d, 2))
    x = rng.normal(size=(1, n, d)).astype(np.float32)
    whole = fw.tensor(x)
    at_once = fw.numpy(mha(whole, whole, whole))
    last_first = [fw.numpy(mha(fw.tensor(x[:, t : t + 1]), whole, whole)) for t in reversed(range(n))]
    assert_close(
        np.concatenate(last_first[::-1], axis=1),
        at_once,
        atol=1e-5,
        what="positions computed one by one, last to first",
    )
    changed = x.copy()
    changed[0, -1] += 1.0  # change the last word only
    first = fw.numpy(mha(fw.tensor(changed), fw.tensor(changed), fw.tensor(changed)))[0, 0]
    assert np.abs(first - at_once[0, 0]).max() > 1e-4


def test_E31_printed_loss_depends_on_padding(fw):
    """002 prints batch_loss = loss / int(tgt.shape[1]): the summed loss divided by the padded width T,
    though the loop runs T - 1 steps. The sum does not depend on padding; the printed number does."""
    tgt, logits, token_loss = loss_example()
    real = token_loss[:, 1:][tgt[:, 1:] != 0]
    width = tgt.shape[1]
    loss, batch_loss = notes_loop(tgt, logits)
    assert np.isclose(batch_loss, loss / width, atol=1e-6)
    assert not np.isclose(batch_loss, loss / (width - 1), rtol=1e-3)  # not the mean over the T - 1 steps
    assert not np.isclose(batch_loss, real.mean(), rtol=1e-2)  # nor over the real tokens
    loss_padded, batch_loss_padded = notes_loop(*loss_example(extra_pads=3)[:2])
    assert np.isclose(loss_padded, loss, atol=1e-5)
    assert np.isclose(batch_loss_padded, loss / (width + 3), atol=1e-6) and batch_loss_padded < 0.7 * batch_loss
    for extra in (0, 3):  # the package: the mean over the real tokens, whatever the padding
        tg, lg, _ = loss_example(extra_pads=extra)
        ours, count = fw.module.label_smoothed_cross_entropy(fw.tensor(lg[:, 1:]), fw.tensor(tg[:, 1:]), smoothing=0.0)
        assert int(fw.numpy(count)) == real.size and np.isclose(float(fw.numpy(ours)), real.mean(), atol=1e-5)


def test_E32_table_sized_by_length(fw):
    """000:1257/1413 build PositionalEncoding(vocab_size, d_model): a table of vocab_size positions.
    Its length must be the longest sequence: with a small vocabulary a longer sentence fails, with a
    large one most rows are never read."""
    import tensorflow as tf

    PositionalEncoding = seed.seed_positional_encoding_layer_000()
    vocab_size, d_model = 5, 8
    x = np.zeros((1, 7, d_model), np.float32)  # 7 positions, more than the 5 words of the vocabulary
    notes = PositionalEncoding(vocab_size, d_model)
    assert notes.pos_encoding.shape[1] == vocab_size
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        notes(tf.constant(x))
    assert_close(notes(tf.constant(x[:, :5])).numpy()[0], formula(5, d_model), atol=1e-6, what="rows it has")
    ours = fw.module.PositionalEncoding(max_len=12, d_model=d_model)  # sized by the length, any vocabulary
    assert_close(fw.numpy(ours(fw.tensor(x)))[0], formula(7, d_model), atol=1e-6, what="7 positions")
    assert fw.numpy(fw.module.positional_encoding(12, d_model)).shape == (12, d_model)


def test_E33_tf_kears_cannot_run(fw):
    """002:1863 ``outpus = tf.kears.layers.Dense(units=d_model)(outpus)``: the line cannot run."""
    import tensorflow as tf

    attention = tf.zeros((1, 3, 8))
    with pytest.raises(AttributeError, match="kears"):
        seed.seed_ffn_lines_002(attention, 16, 8)
    keras_fixed = seed.SEED_FFN_LINES_002.replace("tf.kears", "tf.keras")
    with pytest.raises(NameError, match="outpus"):  # the second typo: outpus for outputs, read before it exists
        seed.seed_ffn_lines_002(attention, 16, 8, keras_fixed)
    both_fixed = keras_fixed.replace("(outpus)", "(outputs)")
    assert tuple(seed.seed_ffn_lines_002(attention, 16, 8, both_fixed)["outpus"].shape) == (1, 3, 8)
    ffn = fw.module.PositionwiseFeedForward(8, 16)
    x = np.random.default_rng(33).normal(size=(1, 3, 8)).astype(np.float32)
    expected = fw.numpy(ffn.w_2(fw.tensor(np.maximum(fw.numpy(ffn.w_1(fw.tensor(x))), 0))))
    assert_close(fw.numpy(ffn(fw.tensor(x))), expected, atol=1e-5, what="max(0, x W1 + b1) W2 + b2")


def test_E34_the_wq_comment_names_w_o(fw):
    """002:1783 comments ``self.dense`` as 'wQ'. It is W^O: applied after the heads are concatenated
    (with it set to the identity the output is the concatenation), and it does not touch the weights."""
    import tensorflow as tf

    rng = np.random.default_rng(34)
    x = tf.constant(rng.normal(size=(1, 3, 8)).astype(np.float32))
    notes = seed.seed_mha_002()(8, 2)
    inputs = {"query": x, "key": x, "value": x, "mask": tf.zeros((1, 1, 1, 3))}
    notes(inputs)
    notes.dense.set_weights([np.eye(8, dtype=np.float32), np.zeros(8, np.float32)])
    q, k, v = (layer(x) for layer in (notes.query_dense, notes.key_dense, notes.value_dense))
    heads = [
        seed.seed_scaled_dot_product_attention_001(q[..., h : h + 4], k[..., h : h + 4], v[..., h : h + 4])[0]
        for h in (0, 4)
    ]
    assert_close(
        notes(inputs).numpy(),
        tf.concat(heads, -1).numpy(),
        atol=1e-5,
        what="the notes' output with 'wQ' = identity vs the concatenated heads",
    )

    mha = fw.eval(fw.module.MultiHeadAttention(8, 2))
    y = fw.tensor(x.numpy())
    before = fw.numpy(mha(y, y, y, return_weights=True).weights)
    scale_weights(fw, mha.w_o, 2.0)
    assert_close(fw.numpy(mha(y, y, y, return_weights=True).weights), before, atol=0, what="weights after changing W^O")
    scale_weights(fw, mha.w_q, 2.0)
    assert np.abs(fw.numpy(mha(y, y, y, return_weights=True).weights) - before).max() > 1e-3  # W^Q shapes them


def test_E35_context_vector_is_per_step(fw):
    """002:299 calls the encoder outputs enc_out 'the context vector'. enc_out is one vector per source
    position; Bahdanau's context is their attention-weighted sum, one per decoder step, recomputed from
    each decoder state."""
    rng = np.random.default_rng(35)
    enc_out = rng.normal(size=(2, 5, 6)).astype(np.float32)  # (B, T_src, U): what the notes call the context
    att = fw.module.BahdanauAttention(6)
    contexts = []
    for _ in range(2):  # two decoder steps, two decoder states
        state = rng.normal(size=(2, 6)).astype(np.float32)
        context, weights = (fw.numpy(t) for t in att(fw.tensor(state), fw.tensor(enc_out)))
        assert context.shape == (2, 6) != enc_out.shape
        assert_close(context, np.einsum("bt,btu->bu", weights, enc_out), atol=1e-5, what="sum_j alpha_j h_j")
        contexts.append(context)
    assert np.abs(contexts[0] - contexts[1]).max() > 1e-3  # a new context at every step; enc_out stays


def test_E36_outputs_are_logits(fw):
    """000:1288: the decoder's output is 'word probabilities'. The last layer, Dense(vocab_size) with no
    activation, outputs logits: rows that do not sum to 1 and can be negative. A softmax makes them
    probabilities (Fig. 1's last box; in training the loss applies it)."""
    import tensorflow as tf
    from conftest import small_config

    rng = np.random.default_rng(36)
    model = fw.eval(fw.module.Transformer(small_config()))
    src, tgt = fw.tensor(rng.integers(1, 19, size=(2, 5))), fw.tensor(rng.integers(1, 19, size=(2, 4)))
    notes = seed.seed_output_layer_000(19)(tf.constant(rng.normal(size=(2, 4, 8)).astype(np.float32))).numpy()
    for logits in (fw.numpy(model(src, tgt)), notes):
        assert (logits < 0).any() and not np.allclose(logits.sum(-1), 1.0, atol=1e-2)
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        assert_close(probs.sum(-1), np.ones(logits.shape[:2]), atol=1e-6, what="softmax rows")
