"""The mutants: plausible wrong answers and shortcuts, one exercise each, written as edits of the solution.

A :class:`Mutant` changes the solution cell ``cell`` of a lab's source notebook by replacing text
(``edits``: ``{"torch": [(old, new), ...], "tf": [...]}`` or ``{"both": [...]}``; every ``old`` must
occur in the cell, each occurrence is replaced; a ``new`` with line breaks is indented like the line it
lands on). ``kind`` is ``"wrong"`` (must lose points on the tests of its exercise) or ``"correct"``
(a correct answer written differently, e.g. one that warns: must keep full marks). ``subset`` marks the
mutants ``make test`` grades; ``make mutants`` grades them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from txcourse.registry import FRAMEWORKS

# exercise -> (solution cell, test cells) per lab
EXERCISES = {
    "week1_seq2seq": {
        "ex1 BahdanauAttention": (
            "bahdanau_attention",
            (
                "test_attention_properties",
                "test_attention_matches_reference",
                "test_context_of_the_states",
                "test_training_with_your_attention",
            ),
        ),
    },
    "week2_positional": {
        "ex1 positional_encoding": (
            "positional_encoding",
            ("test_positional_encoding", "test_shared_frequency", "test_distance_depends_on_offset"),
        ),
        "ex2 worked table": ("worked_table", ("test_worked_table",)),
        "ex3 apply_rotary": ("apply_rotary", ("test_apply_rotary", "test_rotary_relative")),
    },
    "week3_attention": {
        "ex1 attention": (
            "scaled_dot_product_attention",
            ("test_attention_notes_example", "test_attention_matches_reference", "test_attention_mask"),
        ),
        "ex2 masks": ("masks", ("test_masks", "test_no_look_ahead")),
        "ex3 heads": ("heads", ("test_heads",)),
        "ex4 multi-head": ("multi_head_attention", ("test_multi_head_attention",)),
    },
    "week4_encoder": {
        "ex1 EncoderLayer": (
            "encoder_layer",
            (
                "test_encoder_layer_parts",
                "test_encoder_layer_matches_reference",
                "test_padding_does_not_leak",
                "test_dropout_in_training_only",
            ),
        ),
    },
    "week5_decoder": {
        "ex1 DecoderLayer": ("decoder_layer", ("test_decoder_layer_parts", "test_decoder_layer_matches_reference")),
        "ex2 decoder mask": ("decoder_mask", ("test_decoder_mask",)),
        "ex3 future_leak": ("future_leak", ("test_future_leak_detects_leaks", "test_decoder_does_not_look_ahead")),
    },
    "week6_training": {  # test_training_worked: nbgrader judges txcourse's Trainer, its probe trains with your loss
        "ex1 label smoothing": (
            "label_smoothed_loss",
            (
                "test_loss_without_smoothing",
                "test_loss_matches_reference",
                "test_loss_ignores_padding",
                "test_training_worked",
            ),
        ),
        "ex2 greedy decoding": ("greedy_decode", ("test_greedy_decode", "test_your_decoder_translates")),
        "ex3 top-p": ("top_p_filter", ("test_top_p_worked", "test_top_p_matches_reference")),
    },
}


@dataclass(frozen=True)
class Mutant:
    lab: str
    exercise: str
    name: str
    edits: dict
    kind: str = "wrong"
    subset: tuple[str, ...] = field(default_factory=tuple)  # frameworks graded by `make test`

    @property
    def cell(self) -> str:
        return EXERCISES[self.lab][self.exercise][0]

    @property
    def tests(self) -> tuple[str, ...]:
        return EXERCISES[self.lab][self.exercise][1]

    def frameworks(self) -> tuple[str, ...]:
        return FRAMEWORKS if "both" in self.edits else tuple(fw for fw in FRAMEWORKS if fw in self.edits)

    def edits_for(self, fw: str) -> list[tuple[str, str]]:
        return list(self.edits.get("both", [])) + list(self.edits.get(fw, []))


def M(lab, exercise, name, kind="wrong", subset=(), **edits):
    return Mutant(lab, exercise, name, edits, kind, tuple(subset))


W1, W2, W3, W4, W5, W6 = (
    "week1_seq2seq",
    "week2_positional",
    "week3_attention",
    "week4_encoder",
    "week5_decoder",
    "week6_training",
)
BAH, LOSS, GREEDY, TOP_P = "ex1 BahdanauAttention", "ex1 label smoothing", "ex2 greedy decoding", "ex3 top-p"
PE, WT, ROPE = "ex1 positional_encoding", "ex2 worked table", "ex3 apply_rotary"
SDPA, MASKS, HEADS, MHA = "ex1 attention", "ex2 masks", "ex3 heads", "ex4 multi-head"
ENC = "ex1 EncoderLayer"
DEC, DMASK, LEAK = "ex1 DecoderLayer", "ex2 decoder mask", "ex3 future_leak"
WARN = (
    'import sys, warnings\nwarnings.warn("a warning never costs points")\nprint("nor does stderr", file=sys.stderr)\n'
)

MUTANTS = [
    # week 1 (a GPU lab: each notebook trains two models, about a minute on a CPU; not in the subset)
    M(
        W1,
        BAH,
        "errata_E7_context_of_projections",
        torch=[
            (
                "torch.sum(weights[:, :, None] * values, dim=1)",
                "torch.sum(weights[:, :, None] * self.u_a(values), dim=1)",
            )
        ],
        tf=[
            (
                "tf.reduce_sum(weights[:, :, tf.newaxis] * values, axis=1)",
                "tf.reduce_sum(weights[:, :, tf.newaxis] * self.u_a(values), axis=1)",
            )
        ],
    ),
    M(W1, BAH, "ignores_the_mask", both=[("if mask is not None:", "if False:")]),
    M(
        W1,
        BAH,
        "softmax_over_the_batch",
        torch=[("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=0)")],
        tf=[("tf.nn.softmax(scores, axis=-1)", "tf.nn.softmax(scores, axis=0)")],
    ),
    M(
        W1,
        BAH,
        "w_a_without_bias",
        torch=[("self.w_a = linear(units, units)", "self.w_a = linear(units, units, bias=False)")],
        tf=[('self.w_a = linear(units, units, name="w_a")', 'self.w_a = linear(units, units, bias=False, name="w_a")')],
    ),
    M(
        W1,
        BAH,
        "subclasses_tx_bahdanau",
        torch=[
            ("class BahdanauAttention(nn.Module):", "class BahdanauAttention(tx.BahdanauAttention):"),
            ("super().__init__()", "super().__init__(units)"),
            ("scores = self.v_a(", "return super().forward(query, values, mask)\nscores = self.v_a("),
        ],
        tf=[
            ("class BahdanauAttention(keras.layers.Layer):", "class BahdanauAttention(tx.BahdanauAttention):"),
            ("super().__init__(**kwargs)", "super().__init__(units, **kwargs)"),
            ("scores = self.v_a(", "return super().call(query, values, mask)\nscores = self.v_a("),
        ],
    ),
    # week 2, exercise 1
    M(W2, PE, "errata_E1_exponent", both=[("(2 * (j // 2)) / d_model", "(2 * j // 2) / d_model")]),
    M(W2, PE, "own_frequency_per_column", both=[("(2 * (j // 2)) / d_model", "j / d_model")]),
    M(
        W2,
        PE,
        "sin_cos_swapped",
        both=[
            (
                "np.where(j % 2 == 0, np.sin(angles), np.cos(angles))",
                "np.where(j % 2 == 0, np.cos(angles), np.sin(angles))",
            )
        ],
    ),
    M(
        W2,
        PE,
        "float64_table",
        torch=[("dtype=torch.float32)", "dtype=torch.float64)")],
        tf=[("dtype=tf.float32)", "dtype=tf.float64)")],
    ),
    M(
        W2,
        PE,
        "calls_tx_positional_encoding",
        subset=FRAMEWORKS,
        torch=[("return torch.tensor(table, dtype=torch.float32)", "return tx.positional_encoding(max_len, d_model)")],
        tf=[("return tf.constant(table, dtype=tf.float32)", "return tx.positional_encoding(max_len, d_model)")],
    ),
    M(
        W2,
        PE,
        "warns_and_copy_constructs",
        kind="correct",
        subset=("torch",),
        torch=[
            (
                "return torch.tensor(table, dtype=torch.float32)",
                WARN
                + "return torch.tensor(torch.tensor(table, dtype=torch.float32))  # PyTorch's copy-construct warning",
            )
        ],
        tf=[("return tf.constant(table, dtype=tf.float32)", WARN + "return tf.constant(table, dtype=tf.float32)")],
    ),
    # week 2, exercise 3 (RoPE)
    M(
        W2,
        ROPE,
        "rotates_the_wrong_way",
        subset=("tf",),
        both=[
            ("x_even * cos - x_odd * sin", "x_even * cos + x_odd * sin"),
            ("x_even * sin + x_odd * cos", "-x_even * sin + x_odd * cos"),
        ],
    ),
    M(W2, ROPE, "frequency_of_dimension_not_pair", both=[("10000.0 ** (-2 * i / d_k)", "10000.0 ** (-i / d_k)")]),
    M(
        W2,
        ROPE,
        "forgets_the_cos_term",
        both=[
            ("x_even * cos - x_odd * sin", "x_even - x_odd * sin"),
            ("x_even * sin + x_odd * cos", "x_even * sin + x_odd"),
        ],
    ),
    M(W2, ROPE, "ignores_the_offset", both=[("np.arange(offset, offset + length,", "np.arange(0, length,")]),
    M(
        W2,
        ROPE,
        "rotates_halves_not_pairs",
        both=[("x[..., 0::2], x[..., 1::2]", "x[..., : d_k // 2], x[..., d_k // 2 :]")],
    ),
    M(
        W2,
        ROPE,
        "calls_tx_apply_rotary",
        subset=FRAMEWORKS,
        torch=[
            (
                "return torch.stack([rotated_even, rotated_odd], dim=-1).reshape(x.shape)",
                "return tx.apply_rotary(x, offset)",
            )
        ],
        tf=[
            (
                "return tf.reshape(tf.stack([rotated_even, rotated_odd], axis=-1), tf.shape(x))",
                "return tx.apply_rotary(x, offset)",
            )
        ],
    ),
    # week 2, exercise 2
    M(
        W2,
        WT,
        "errata_E8_denominators",
        both=[("np.array([1.0, 1.0, 100.0, 100.0])", "np.array([1.0, 10.0, 100.0, 1000.0])")],
    ),
    M(
        W2,
        WT,
        "errata_E8_sin_3_over_100",
        subset=("tf",),
        both=[("np.sin(p / 100)", "np.sin((3 if p == 2 else p) / 100)")],
    ),
    M(
        W2,
        WT,
        "calls_positional_encoding",
        both=[
            (
                'print("denominators:", denominators)',
                'worked_table = to_numpy(positional_encoding(4, 4)).astype(np.float64)\nprint("denominators:", denominators)',
            )
        ],
    ),
    M(
        W2,
        WT,
        "float32_table",
        kind="correct",
        subset=("tf",),
        both=[("for p in range(4)])", "for p in range(4)], dtype=np.float32)")],
    ),
    # week 3, exercise 1
    M(W3, SDPA, "no_scaling", both=[(" / math.sqrt(d_k)", "")]),
    M(W3, SDPA, "scaled_by_d_k", both=[("/ math.sqrt(d_k)", "/ d_k")]),
    M(W3, SDPA, "softmax_over_queries", torch=[("dim=-1)", "dim=-2)")], tf=[("axis=-1)", "axis=-2)")]),
    M(
        W3,
        SDPA,
        "masked_weights_not_zeroed",
        torch=[("weights = weights.masked_fill(mask, 0.0)", "pass")],
        tf=[("weights = tf.where(mask, tf.zeros_like(weights), weights)", "pass")],
    ),
    M(
        W3,
        SDPA,
        "errata_E6_mask_times_minus_1e9",
        tf=[
            (
                "scores = tf.where(mask, tf.constant(scores.dtype.min, scores.dtype), scores)",
                "scores = scores + tf.cast(mask, scores.dtype) * -1e9",
            )
        ],
    ),
    M(
        W3,
        SDPA,
        "calls_tx_attention",
        subset=("tf",),
        both=[("d_k = query.shape[-1]", "return tx.scaled_dot_product_attention(query, key, value, mask)")],
    ),
    M(
        W3,
        SDPA,
        "warns",
        kind="correct",
        subset=("torch",),
        both=[("d_k = query.shape[-1]", WARN + "d_k = query.shape[-1]")],
    ),
    # week 3, exercise 2
    M(
        W3,
        MASKS,
        "padding_mask_wrong_axes",
        torch=[("[:, None, None, :]", "[:, None, :, None]")],
        tf=[("[:, tf.newaxis, tf.newaxis, :]", "[:, tf.newaxis, :, tf.newaxis]")],
    ),
    M(
        W3,
        MASKS,
        "padding_mask_ignores_pad_id",
        torch=[("tokens == pad_id", "tokens == 0")],
        tf=[("tf.equal(tokens, pad_id)", "tf.equal(tokens, 0)")],
    ),
    M(
        W3,
        MASKS,
        "look_ahead_masks_diagonal",
        subset=("torch",),
        torch=[("diagonal=1)", "diagonal=0)")],
        tf=[
            (
                "positions[tf.newaxis, :] > positions[:, tf.newaxis]",
                "positions[tf.newaxis, :] >= positions[:, tf.newaxis]",
            )
        ],
    ),
    M(
        W3,
        MASKS,
        "look_ahead_masks_the_past",
        torch=[
            (
                "torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)",
                "torch.tril(torch.ones(length, length, dtype=torch.bool), diagonal=-1)",
            )
        ],
        tf=[
            (
                "positions[tf.newaxis, :] > positions[:, tf.newaxis]",
                "positions[tf.newaxis, :] < positions[:, tf.newaxis]",
            )
        ],
    ),
    M(
        W3,
        MASKS,
        "calls_tx_masks",
        torch=[
            ("return (tokens == pad_id)[:, None, None, :]", "return tx.padding_mask(tokens, pad_id)"),
            (
                "return torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)",
                "return tx.look_ahead_mask(length)",
            ),
        ],
        tf=[
            ("return tf.equal(tokens, pad_id)[:, tf.newaxis, tf.newaxis, :]", "return tx.padding_mask(tokens, pad_id)"),
            ("positions = tf.range(length)", "return tx.look_ahead_mask(length)"),
        ],
    ),
    # week 3, exercise 3
    M(
        W3,
        HEADS,
        "split_by_direct_reshape",
        torch=[("return x.transpose(1, 2)", "return x.reshape(batch, num_heads, length, width // num_heads)")],
        tf=[
            (
                "return tf.transpose(x, (0, 2, 1, 3))  # (B, H, T, d_k)",
                "return tf.reshape(x, (batch, num_heads, length, width // num_heads))",
            )
        ],
    ),
    M(
        W3,
        HEADS,
        "merge_without_transpose",
        torch=[
            (
                "return x.transpose(1, 2).reshape(batch, length, heads * d_k)",
                "return x.reshape(batch, length, heads * d_k)",
            )
        ],
        tf=[
            (
                "x = tf.transpose(x, (0, 2, 1, 3))  # (B, T, H, d_k)",
                "x = tf.reshape(x, (batch, length, x.shape[1], x.shape[3]))",
            )
        ],
    ),
    M(
        W3,
        HEADS,
        "calls_tx_split_heads",
        subset=("torch",),
        torch=[
            ("batch, length, width = x.shape", "return tx.MultiHeadAttention(x.shape[-1], num_heads).split_heads(x)")
        ],
        tf=[
            (
                "batch, length, width = tf.shape(x)[0], tf.shape(x)[1], x.shape[-1]",
                "return tx.MultiHeadAttention(x.shape[-1], num_heads).split_heads(x)",
            )
        ],
    ),
    # week 3, exercise 4
    M(
        W3,
        MHA,
        "no_output_projection",
        both=[("return mha.w_o(merge_heads(heads)), weights", "return merge_heads(heads), weights")],
    ),
    M(W3, MHA, "values_through_w_k", both=[("split_heads(mha.w_v(value)", "split_heads(mha.w_k(value)")]),
    M(W3, MHA, "keys_from_the_query", both=[("split_heads(mha.w_k(key)", "split_heads(mha.w_k(query)")]),
    M(
        W3,
        MHA,
        "returns_the_layer",
        subset=("tf",),
        both=[
            (
                "q = split_heads(mha.w_q(query), mha.num_heads)",
                "return mha(query, key, value, mask, return_weights=True)[::2]",
            )
        ],
    ),
    # week 4
    M(
        W4,
        ENC,
        "pre_ln_attention",
        torch=[
            (
                "x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask)))",
                "h = self.self_attn_norm(x)\nx = x + self.dropout(self.self_attn(h, h, h, mask))",
            )
        ],
        tf=[
            (
                "x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask), training=training))",
                "h = self.self_attn_norm(x)\nx = x + self.dropout(self.self_attn(h, h, h, mask), training=training)",
            )
        ],
    ),
    M(
        W4,
        ENC,
        "no_residual_around_ffn",
        torch=[("self.feed_forward_norm(x + self.dropout(", "self.feed_forward_norm(0 * x + self.dropout(")],
        tf=[("self.feed_forward_norm(x + self.dropout(", "self.feed_forward_norm(0 * x + self.dropout(")],
    ),
    M(
        W4,
        ENC,
        "ignores_layer_norm_eps",
        subset=("tf",),
        torch=[("nn.LayerNorm(d_model, eps=layer_norm_eps)", "nn.LayerNorm(d_model)")],
        tf=[("keras.layers.LayerNormalization(epsilon=layer_norm_eps)", "keras.layers.LayerNormalization()")],
    ),
    M(W4, ENC, "ignores_the_mask", both=[("self.self_attn(x, x, x, mask)", "self.self_attn(x, x, x)")]),
    M(
        W4,
        ENC,
        "dropout_on_the_residual_sum",
        subset=("torch",),
        torch=[
            (
                "self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask)))",
                "self.self_attn_norm(self.dropout(x + self.self_attn(x, x, x, mask)))",
            )
        ],
        tf=[
            (
                "self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask), training=training))",
                "self.self_attn_norm(self.dropout(x + self.self_attn(x, x, x, mask), training=training))",
            )
        ],
    ),
    M(
        W4,
        ENC,
        "subclasses_tx_encoder_layer",
        torch=[
            ("class EncoderLayer(nn.Module):", "class EncoderLayer(tx.EncoderLayer):"),
            ("super().__init__()", "super().__init__(d_model, num_heads, d_ff, dropout, layer_norm_eps)"),
            (
                "x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask)))",
                "return super().forward(x, mask)",
            ),
        ],
        tf=[
            ("class EncoderLayer(keras.layers.Layer):", "class EncoderLayer(tx.EncoderLayer):"),
            (
                "super().__init__(**kwargs)",
                "super().__init__(d_model, num_heads, d_ff, dropout, layer_norm_eps, **kwargs)",
            ),
            (
                "x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask), training=training))",
                "return super().call(x, mask, training=training)",
            ),
        ],
    ),
    # week 5, exercise 1
    M(
        W5,
        DEC,
        "dropout_on_the_residual_sum",
        subset=("torch",),
        torch=[
            (
                "self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, self_attn_mask)))",
                "self.self_attn_norm(self.dropout(x + self.self_attn(x, x, x, self_attn_mask)))",
            )
        ],
        tf=[
            (
                "x = self.self_attn_norm(x + self.dropout(attended, training=training))",
                "x = self.self_attn_norm(self.dropout(x + attended, training=training))",
            )
        ],
    ),
    M(
        W5,
        DEC,
        "no_dropout",
        subset=("tf",),
        torch=[("self.dropout(", "(")],
        tf=[
            ("self.dropout(attended, training=training)", "attended"),
            ("self.dropout(self.feed_forward(x), training=training)", "self.feed_forward(x)"),
        ],
    ),
    M(
        W5,
        DEC,
        "ignores_layer_norm_eps",
        torch=[("nn.LayerNorm(d_model, eps=layer_norm_eps)", "nn.LayerNorm(d_model)")],
        tf=[("keras.layers.LayerNormalization(epsilon=layer_norm_eps)", "keras.layers.LayerNormalization()")],
    ),
    M(
        W5,
        DEC,
        "cross_attention_without_its_mask",
        both=[("self.cross_attn(x, memory, memory, cross_attn_mask)", "self.cross_attn(x, memory, memory)")],
    ),
    M(
        W5,
        DEC,
        "no_residual_around_cross_attention",
        torch=[("self.cross_attn_norm(x + self.dropout(", "self.cross_attn_norm(0 * x + self.dropout(")],
        tf=[
            (
                "x = self.cross_attn_norm(x + self.dropout(attended",
                "x = self.cross_attn_norm(0 * x + self.dropout(attended",
            )
        ],
    ),
    M(
        W5,
        DEC,
        "subclasses_tx_decoder_layer",
        subset=("torch",),
        torch=[
            ("class DecoderLayer(nn.Module):", "class DecoderLayer(tx.DecoderLayer):"),
            ("super().__init__()", "super().__init__(d_model, num_heads, d_ff, dropout, layer_norm_eps)"),
            (
                "x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, self_attn_mask)))",
                "return super().forward(x, memory, self_attn_mask, cross_attn_mask)",
            ),
        ],
        tf=[
            ("class DecoderLayer(keras.layers.Layer):", "class DecoderLayer(tx.DecoderLayer):"),
            (
                "super().__init__(**kwargs)",
                "super().__init__(d_model, num_heads, d_ff, dropout, layer_norm_eps, **kwargs)",
            ),
            (
                "attended = self.self_attn(x, x, x, self_attn_mask)  # (B, T_tgt, D)",
                "return super().call(x, memory, self_attn_mask, cross_attn_mask, training=training)",
            ),
        ],
    ),
    # week 5, exercise 2
    M(
        W5,
        DMASK,
        "future_and_padding_and",
        subset=("tf",),
        torch=[(") | tx.padding_mask", ") & tx.padding_mask")],
        tf=[("tf.logical_or(", "tf.logical_and(")],
    ),
    M(W5, DMASK, "ignores_pad_id", both=[("tx.padding_mask(tgt, pad_id)", "tx.padding_mask(tgt)")]),
    M(
        W5,
        DMASK,
        "look_ahead_only",
        torch=[
            (
                "return tx.look_ahead_mask(length).to(tgt.device) | tx.padding_mask(tgt, pad_id)",
                "return tx.look_ahead_mask(length)[None, None].expand(tgt.shape[0], 1, length, length)",
            )
        ],
        tf=[
            (
                "return tf.logical_or(tx.look_ahead_mask(length), tx.padding_mask(tgt, pad_id))",
                "return tf.tile(tx.look_ahead_mask(length)[None, None], (tgt.shape[0], 1, 1, 1))",
            )
        ],
    ),
    # week 5, exercise 3
    M(
        W5,
        LEAK,
        "replacements_may_equal_the_old_ids",
        subset=("torch",),
        both=[
            (
                "changed[:, t + 1:] = (tail - 1 + shift) % (vocab_size - 1) + 1",
                "changed[:, t + 1:] = rng.integers(1, vocab_size, size=tail.shape)",
            )
        ],
    ),
    M(W5, LEAK, "mean_instead_of_max", subset=("tf",), both=[(".max())", ".mean())")]),
    M(
        W5,
        LEAK,
        "replaces_from_t",
        both=[
            ("tail = changed[:, t + 1:]", "tail = changed[:, t:]"),
            ("changed[:, t + 1:] = (tail", "changed[:, t:] = (tail"),
        ],
    ),
    M(W5, LEAK, "compares_every_position", both=[("[:, :t + 1]", "[:, :]")]),
    M(W5, LEAK, "not_a_python_float", both=[("return float(", "return np.float32(")]),
    # week 6 (a GPU lab: each notebook trains a Transformer, about a minute on a CPU; not in the subset)
    M(
        W6,
        LOSS,
        "log_of_softmax",
        torch=[("torch.log_softmax(logits.float(), dim=-1)", "torch.log(torch.softmax(logits.float(), dim=-1))")],
        tf=[
            (
                "tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)",
                "tf.math.log(tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1))",
            )
        ],
    ),
    M(
        W6,
        LOSS,
        "mean_over_padding_too",
        torch=[("(per_token * keep).sum() / keep.sum().clamp(min=1.0)", "per_token.mean()")],
        tf=[("tf.reduce_sum(per_token * keep) / tf.maximum(tf.reduce_sum(keep), 1.0)", "tf.reduce_mean(per_token)")],
    ),
    M(
        W6,
        LOSS,
        "smoothing_added_not_mixed",
        both=[("(1.0 - smoothing) * nll + smoothing * uniform", "nll + smoothing * uniform")],
    ),
    M(
        W6,
        LOSS,
        "nan_for_padding_only",
        torch=[(".clamp(min=1.0)", "")],
        tf=[("tf.maximum(tf.reduce_sum(keep), 1.0)", "tf.reduce_sum(keep)")],
    ),
    M(
        W6,
        LOSS,
        "calls_tx_loss",
        torch=[
            (
                "log_probs = torch.log_softmax(",
                "return label_smoothed_cross_entropy(logits, targets, smoothing, pad_id)[0]\nlog_probs = torch.log_softmax(",
            )
        ],
        tf=[
            (
                "log_probs = tf.nn.log_softmax(",
                "return label_smoothed_cross_entropy(logits, targets, smoothing, pad_id)[0]\nlog_probs = tf.nn.log_softmax(",
            )
        ],
    ),
    M(
        W6,
        GREEDY,
        "may_generate_pad_and_sos",
        torch=[('logits[:, [pad_id, sos_id]] = float("-inf")', "pass")],
        tf=[('logits = tf.where(banned, float("-inf"), logits)', "pass")],
    ),
    M(
        W6,
        GREEDY,
        "no_padding_after_eos",
        torch=[("token = torch.where(finished, torch.full_like(token, pad_id), token)", "pass")],
        tf=[("token = tf.where(finished, tf.constant(pad_id, tf.int64), token)", "pass")],
    ),
    M(
        W6,
        GREEDY,
        "ignores_the_new_state",
        both=[("logits, state, _ = model.decode_step(token, state)", "logits, _, _ = model.decode_step(token, state)")],
    ),
    M(
        W6,
        GREEDY,
        "never_stops_early",
        torch=[("if bool(finished.all()):", "if False:")],
        tf=[("if bool(tf.reduce_all(finished)):", "if False:")],
    ),
    M(
        W6,
        GREEDY,
        "calls_tx_greedy_decode",
        torch=[("model.eval()", "return tx_greedy_decode(model, src, max_len=max_len).tokens")],
        tf=[("state = model.start_decoding(src)", "return tx_greedy_decode(model, src, max_len=max_len).tokens")],
    ),
    M(  # keeps the tokens whose running total, their own probability included, is below p: one too few
        W6,
        TOP_P,
        "keeps_tokens_strictly_below_p",
        torch=[
            ("above = torch.cumsum(sorted_probs, dim=-1) - sorted_probs", "above = torch.cumsum(sorted_probs, dim=-1)")
        ],
        tf=[("above = tf.cumsum(sorted_probs, axis=-1) - sorted_probs", "above = tf.cumsum(sorted_probs, axis=-1)")],
    ),
    M(  # a confident model (the best token alone above p) is left with no token at all
        W6,
        TOP_P,
        "drops_the_top_token",
        both=[("keep_sorted = above < top_p", "keep_sorted = (above < top_p) & (above > 0)")],
    ),
    M(
        W6,
        TOP_P,
        "forgets_to_renormalise",
        torch=[("return kept / kept.sum(dim=-1, keepdim=True)", "return kept")],
        tf=[("return kept / tf.reduce_sum(kept, axis=-1, keepdims=True)", "return kept")],
    ),
    M(
        W6,
        TOP_P,
        "sorts_ascending",
        torch=[("torch.sort(probs, dim=-1, descending=True)", "torch.sort(probs, dim=-1, descending=False)")],
        tf=[
            ('tf.argsort(probs, axis=-1, direction="DESCENDING")', 'tf.argsort(probs, axis=-1, direction="ASCENDING")')
        ],
    ),
    M(  # the mask is left in sorted order: right only where the logits happen to be sorted already
        W6,
        TOP_P,
        "keeps_the_sorted_order",
        torch=[("keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)", "keep = keep_sorted")],
        tf=[("keep = tf.gather(keep_sorted, tf.argsort(order, axis=-1), batch_dims=1)", "keep = keep_sorted")],
    ),
    M(
        W6,
        TOP_P,
        "calls_tx_filter_logits",
        torch=[("probs = torch.softmax(logits.float(), dim=-1)", "return tx_filter_logits(logits, top_p=top_p).exp()")],
        tf=[
            (
                "probs = tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)",
                "return tf.exp(tx_filter_logits(logits, top_p=top_p))",
            )
        ],
    ),
    M(  # a correct variant: the nucleus found with a stable sort and an exclusive cumulative sum
        W6,
        TOP_P,
        "exclusive_cumsum",
        kind="correct",
        torch=[
            (
                "above = torch.cumsum(sorted_probs, dim=-1) - sorted_probs",
                "above = torch.cat([torch.zeros_like(sorted_probs[:, :1]), sorted_probs.cumsum(-1)[:, :-1]], dim=-1)",
            )
        ],
        tf=[
            (
                "above = tf.cumsum(sorted_probs, axis=-1) - sorted_probs",
                "above = tf.cumsum(sorted_probs, axis=-1, exclusive=True)",
            )
        ],
    ),
]
