"""The mistakes of the source lecture notes that this course corrects.

One entry per mistake: where it is, what it says, what is right, and the
test in ``tests/test_errata.py`` that fails on the mistaken version. The
book's errata appendix is generated from this list, so the two never drift.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Erratum", "ERRATA"]


@dataclass(frozen=True)
class Erratum:
    id: str
    source: str  # file in the source notes
    topic: str
    wrong: str  # what the notes say or do
    right: str  # what the course does instead
    why: str
    test: str  # test function in tests/test_errata.py


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "E1", "001 (notebook), get_angles", "positional-encoding exponent",
        "angle_rates = 1 / np.power(10000, (2 * i // 2) / np.float32(d_model))",
        "angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))",
        "Python evaluates 2 * i // 2 as (2 * i) // 2 = i, so every dimension gets its own "
        "frequency and dimensions 2i and 2i+1 no longer share one, as Eq. (5) requires.",
        "test_E1_angle_exponent"),
    Erratum(
        "E2", "002 (notebook), PositionalEncoding.call", "slicing the encoding table",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[-1], :]",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[1], :]",
        "The last axis of the inputs is the model width, not the sequence length: the slice takes "
        "d_model rows, which fails (or silently takes the wrong rows) whenever T != d_model.",
        "test_E2_slice_by_length"),
    Erratum(
        "E3", "002 (notebook), MultiHeadAttention.call", "concatenating the heads",
        "concat_attention = tf.reshape(scaled_dot_product_attention, (batch_size, -1, self.d_model))",
        "concat_attention = tf.reshape(scaled_attention, (batch_size, -1, self.d_model))",
        "The line reshapes the function object instead of its result, so the layer cannot run at all.",
        "test_E3_reshape_the_result"),
    Erratum(
        "E4", "002 (notebook), encoder()", "applying the positional encoding",
        "embeddings = PositionalEncoding(vocab_size, d_model)",
        "embeddings = PositionalEncoding(max_len, d_model)(embeddings)",
        "The layer is built (with the vocabulary size as its length) but never called, so "
        "'embeddings' becomes the layer object and the encoder has no positional information.",
        "test_E4_encoding_is_added"),
    Erratum(
        "E5", "003 (book notes), multi-head attention", "combining the heads",
        "the results of the heads are added (멀티로 한 값들을 더한다)",
        "MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O",
        "Adding the heads would give a d_k-wide sum that mixes the subspaces; the paper concatenates "
        "them back to d_model and projects with W^O.",
        "test_E5_heads_are_concatenated"),
    Erratum(
        "E6", "001 (notebook), scaled_dot_product_attention", "masking under mixed precision",
        "scaled_attention_logits += (mask * -1e9)",
        "logits = where(mask, finfo(dtype).min, logits)",
        "TensorFlow rounds -1e9 to the tensor's dtype before multiplying: in float16 it is -inf, and "
        "0 * -inf is NaN, so every unmasked logit (mask 0) and every output becomes NaN. PyTorch's "
        "mask.half() * -1e9 multiplies by the Python number in float32 and rounds the product: 0 for "
        "unmasked and -inf for masked logits, no NaN; it does give NaN when the -1e9 is itself a float16 "
        "tensor (torch.tensor(-1e9, dtype=torch.half) * mask) or when a row has all its keys masked "
        "(softmax of only -inf). In float32, -1e9 is finite in both frameworks: no NaN, but a fully "
        "masked row gets uniform weights instead of zeros.",
        "test_E6_mask_in_float16"),
    Erratum(
        "E7", "002 (notebook), BahdanauAttention.call", "the context vector",
        "context_vec = attn * h_enc  # after h_enc = self.w_enc(h_enc)",
        "context = sum_j alpha_j h_j over the encoder states themselves",
        "The notes overwrite h_enc with its projection U_a h_j and sum that; Bahdanau et al. (2015) "
        "weight the annotations h_j, so the context has the encoder's width and meaning.",
        "test_E7_bahdanau_context"),
    Erratum(
        "E8", "000 (slides), positional-encoding table", "the worked 4x4 table",
        "denominators 1, 10, 100, 1000 and sin(3/100) in row 2",
        "d_model = 4: columns sin(pos/1), cos(pos/1), sin(pos/100), cos(pos/100); row 2 has sin(2/100)",
        "With d_model = 4 the denominators are 10000^(2i/4) for i = 0, 1, each shared by a sine and a "
        "cosine; row 2 evaluates position 2, not 3.",
        "test_E8_worked_table"),
    Erratum(
        "E9", "004 (slides), 10x10 distance table", "distances between encodings",
        "a distance table whose entries at the same offset differ (1.275, 1.104, 1.296, ...)",
        "||PE(p + k) - PE(p)|| depends on the offset k only",
        "For sinusoidal encodings ||PE(p+k) - PE(p)||^2 = sum_i (2 - 2 cos(k w_i)), the same for "
        "every p, so the table cannot be the distance between the encodings alone.",
        "test_E9_distance_table"),
)
