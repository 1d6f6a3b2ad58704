"""The source notes' code, reproduced as written (mistakes included), to pin each fix.

Each function quotes the lines it reproduces. Nothing here is used by the
package; tests/test_errata.py shows that each mistaken version fails the
check that the package passes.
"""

import numpy as np


def seed_positional_encoding_001(position, d_model):
    """001, get_angles + positional_encoding (E1)."""
    def get_angles(pos, i, d_model):
        angle_rates = 1 / np.power(10000, (2 * i // 2) / np.float32(d_model))
        return np.matmul(pos, angle_rates)

    angle_rads = get_angles(np.arange(position)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return angle_rads.astype(np.float32)


def seed_positional_layer_call_002(pos_encoding, inputs):
    """002, PositionalEncoding.call: ``inputs + self.pos_encoding[:, :tf.shape(inputs)[-1], :]`` (E2)."""
    return inputs + pos_encoding[np.newaxis][:, : inputs.shape[-1], :]


def seed_mha_concat_002(scaled_dot_product_attention, scaled_attention, batch_size, d_model):
    """002, MultiHeadAttention.call step 4: reshapes the function, not the result (E3)."""
    import tensorflow as tf

    return tf.reshape(scaled_dot_product_attention, (batch_size, -1, d_model))


def seed_encoder_embeddings_002(token_embeddings, vocab_size, d_model):
    """002, encoder(): ``embeddings = PositionalEncoding(vocab_size, d_model)`` is built, never called (E4).

    What reaches the encoder layers is the embedding without positions
    (had the code run at all, ``embeddings`` would be the layer object).
    """
    return token_embeddings * np.sqrt(d_model)


def seed_positional_encoding_layer_002():
    """002, ``class PositionalEncoding(tf.keras.layers.Layer)``, as written (E2, E4)."""
    import tensorflow as tf

    class PositionalEncoding(tf.keras.layers.Layer):
        def __init__(self, position, d_model):
            super(PositionalEncoding, self).__init__()
            self.pos_encoding = self.positional_encoding(position, d_model)

        def get_angles(self, position, i, d_model):
            angles = 1 / tf.pow(10000, (2 * (i // 2)) / tf.cast(d_model, tf.float32))
            return position * angles

        def positional_encoding(self, position, d_model):
            angle_rads = self.get_angles(
                position=tf.range(position, dtype=tf.float32)[:, tf.newaxis],
                i=tf.range(d_model, dtype=tf.float32)[tf.newaxis, :],
                d_model=d_model)
            sines = tf.math.sin(angle_rads[:, 0::2])
            cosines = tf.math.cos(angle_rads[:, 1::2])
            angle_rads = np.zeros(angle_rads.shape)
            angle_rads[:, 0::2] = sines
            angle_rads[:, 1::2] = cosines
            pos_encoding = tf.constant(angle_rads)[tf.newaxis, ...]
            return tf.cast(pos_encoding, tf.float32)

        def call(self, inputs):
            return inputs + self.pos_encoding[:, :tf.shape(inputs)[-1], :]

    return PositionalEncoding


def seed_encoder_input_002(vocab_size, d_model, dropout):
    """002, ``encoder()`` lines 2-11, as written (E4): builds the functional model's input part.

    ``embeddings = PositionalEncoding(vocab_size, d_model)`` replaces the embedded
    tensor by a layer object, and ``Dropout(rate=dropout)(embeddings)`` is then
    called on that layer, not on a tensor.
    """
    import tensorflow as tf

    PositionalEncoding = seed_positional_encoding_layer_002()
    inputs = tf.keras.Input(shape=(None,), name="inputs")
    embeddings = tf.keras.layers.Embedding(vocab_size, d_model)(inputs)
    embeddings *= tf.math.sqrt(tf.cast(d_model, tf.float32))
    embeddings = PositionalEncoding(vocab_size, d_model)
    outputs = tf.keras.layers.Dropout(rate=dropout)(embeddings)
    return inputs, outputs


def seed_heads_added_003(heads):
    """003: 'the multi-head results are added' (E5). heads: list of (B, T, d_k)."""
    return np.sum(heads, axis=0)


def seed_scaled_dot_product_attention_001(q, k, v, mask=None):
    """001, scaled_dot_product_attention: ``scaled_attention_logits += (mask * -1e9)`` (E6)."""
    import tensorflow as tf

    matmul_qk = tf.matmul(q, k, transpose_b=True)
    dk = tf.cast(tf.shape(k)[-1], q.dtype)
    scaled_attention_logits = matmul_qk / tf.math.sqrt(dk)
    if mask is not None:
        scaled_attention_logits += (mask * -1e9)
    attention_weights = tf.nn.softmax(scaled_attention_logits, axis=-1)
    return tf.matmul(attention_weights, v), attention_weights


def seed_bahdanau_context_002(w_enc, w_dec, w_com, h_enc, h_dec):
    """002, BahdanauAttention.call (E7): the context sums the projected encoder states.

    w_enc, w_dec, w_com: callables standing for the three Dense layers.
    """
    h_enc = w_enc(h_enc)
    h_dec = w_dec(h_dec[:, None, :])
    score = w_com(np.tanh(h_dec + h_enc))
    attn = np.exp(score - score.max(axis=1, keepdims=True))
    attn = attn / attn.sum(axis=1, keepdims=True)
    context_vec = np.sum(attn * h_enc, axis=1)
    return context_vec, attn


# 000, the worked table for d_model = 4 (rows pos 0..3): the entries as the slides print them (E8).
SEED_TABLE_000 = [
    [("sin", 0, 1), ("cos", 0, 10), ("sin", 0, 100), ("cos", 0, 1000)],
    [("sin", 1, 1), ("cos", 1, 10), ("sin", 1, 100), ("cos", 1, 1000)],
    [("sin", 2, 1), ("cos", 2, 10), ("sin", 3, 100), ("cos", 2, 1000)],
    [("sin", 3, 1), ("cos", 3, 10), ("sin", 3, 100), ("cos", 3, 1000)],
]

# 004, "A Simple Example (n = 10, dim = 10)": distances between position encodings (E9).
SEED_DISTANCES_004 = np.array([
    [0.000, 1.275, 2.167, 2.823, 3.361, 3.508, 3.392, 3.440, 3.417, 3.266],
    [1.275, 0.000, 1.104, 2.195, 3.135, 3.511, 3.452, 3.442, 3.387, 3.308],
    [2.167, 1.104, 0.000, 1.296, 2.468, 3.067, 3.256, 3.464, 3.498, 3.371],
    [2.823, 2.195, 1.296, 0.000, 1.275, 2.110, 2.746, 3.399, 3.624, 3.399],
    [3.361, 3.135, 2.468, 1.275, 0.000, 1.057, 2.176, 3.242, 3.659, 3.434],
    [3.508, 3.511, 3.067, 2.110, 1.057, 0.000, 1.333, 2.601, 3.169, 3.118],
    [3.392, 3.452, 3.256, 2.746, 2.176, 1.333, 0.000, 1.338, 2.063, 2.429],
    [3.440, 3.442, 3.464, 3.399, 3.242, 2.601, 1.338, 0.000, 0.912, 1.891],
    [3.417, 3.387, 3.498, 3.624, 3.659, 3.169, 2.063, 0.912, 0.000, 1.277],
    [3.266, 3.308, 3.371, 3.399, 3.434, 3.118, 2.429, 1.891, 1.277, 0.000],
])


# ---- E10-E21 -------------------------------------------------------------------------------


def seed_decoder_gru_002(gru, x, h_dec):
    """002, Decoder.call: ``out, h_dec = self.gru(out)`` (E10).

    ``gru`` is ``tf.keras.layers.GRU(dec_units, return_sequences=True, return_state=True)``;
    ``x`` (B, 1, U + E) is the concatenation of the context and the embedded token.
    The incoming ``h_dec`` is never passed as ``initial_state``: the GRU starts from zeros
    at every step (``h_dec`` only reaches the attention query).
    """
    del h_dec  # not used by the GRU: that is the mistake
    out, h_dec = gru(x)
    return out, h_dec


def seed_initial_state_002(enc_out):
    """002, train_step: ``h_dec = enc_out[:, -1]`` on post-padded sources (E11)."""
    return enc_out[:, -1]


def seed_loss_function_002(real, pred):
    """002, loss_function: masked, then ``tf.reduce_mean`` over every position, pads included (E12)."""
    import tensorflow as tf

    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    mask = tf.math.logical_not(tf.math.equal(real, 0))
    loss = loss_object(real, pred)
    mask = tf.cast(mask, dtype=loss.dtype)
    loss *= mask
    return tf.reduce_mean(loss)


def seed_preprocess_sentence_002(sentence, s_token=False, e_token=False):
    """002, preprocess_sentence, as written (E13): the last regex keeps only ASCII letters."""
    import re

    sentence = sentence.lower().strip()
    sentence = re.sub(r"([?!.])", r" \1 ", sentence)
    sentence = re.sub(r'[" "]', " ", sentence)
    sentence = re.sub(r"[^a-zA-Z?!.,]+", " ", sentence)
    sentence = sentence.strip()
    if s_token:
        sentence = '<start> ' + sentence
    if e_token:
        sentence += ' <end>'
    return sentence


def seed_split_sizes_002(n_samples, test_size=None):
    """002, Quiz 1 ('split 8:2'): ``train_test_split(enc_tensor, dec_tensor)`` (E14).

    The split sizes of scikit-learn's ``train_test_split`` (its
    ``_validate_shuffle_split``): with neither ``test_size`` nor ``train_size``
    given, ``test_size`` defaults to 0.25; ``n_test = ceil(test_size * n)``.
    """
    import math

    test_size = 0.25 if test_size is None else test_size
    n_test = math.ceil(test_size * n_samples)
    return n_samples - n_test, n_test


def seed_positional_formula_002(max_len, d_model):
    """002, the markdown above PositionalEncoding: ``sin(pos/1000^(2i/d_model))`` (E15)."""
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = pos / np.power(1000.0, 2 * i / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


# 000, the numeric table under the worked 4x4 table (rows pos 0..3), as printed (E16).
SEED_NUMERIC_TABLE_000 = np.array([
    [0.0, 1.0, 0.0, 1.0],
    [0.84, 0.99, 0.009, 0.9999995],
    [0.90, 0.98, 0.01, 0.999998],
    [0.14, 0.95, 0.02, 0.9999955],
])


def seed_recurrent_layer(x, w_h, w_x):
    """A recurrent layer, h_t = tanh(h_{t-1} W_h + x_t W_x), one step per position (E17's baseline)."""
    import torch

    h = torch.zeros(x.shape[0], w_h.shape[0])
    for t in range(x.shape[1]):  # n sequential steps
        h = torch.tanh(h @ w_h + x[:, t] @ w_x)
    return h


def seed_ffn_001():
    """001, class Pointwise_FeedForward_Network, as written: overrides ``__call__``, not ``call`` (E19)."""
    import tensorflow as tf

    class Pointwise_FeedForward_Network(tf.keras.layers.Layer):
        def __init__(self, d_model, dff):
            super().__init__()
            self.d_model = d_model
            self.dff = dff
            self.middle = tf.keras.layers.Dense(dff, activation='relu')
            self.out = tf.keras.layers.Dense(d_model)

        def __call__(self, x):
            middle = self.middle(x)
            out = self.out(middle)
            return out

    return Pointwise_FeedForward_Network


def seed_attention_steps_004(scores, d_k):
    """004, 'Self-Attention의 절차', steps 2-4 in the order the slides give them (E21).

    Step 2: softmax of Q.K ('Q * K 에 소프트맥스 함수를 취해 score 계산'); step 3: divide by
    sqrt(d_k); step 4: softmax.
    """
    def softmax(s):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    step2 = softmax(np.asarray(scores, np.float64))
    step3 = step2 / np.sqrt(d_k)
    return softmax(step3)
