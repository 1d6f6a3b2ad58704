"""The source notes' code, reproduced as written (mistakes included), to pin each fix.

Each function quotes the lines it reproduces. Nothing here is used by the
package; tests/course/test_errata.py shows that each mistaken version fails the
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
            super().__init__()
            self.pos_encoding = self.positional_encoding(position, d_model)

        def get_angles(self, position, i, d_model):
            angles = 1 / tf.pow(10000, (2 * (i // 2)) / tf.cast(d_model, tf.float32))
            return position * angles

        def positional_encoding(self, position, d_model):
            angle_rads = self.get_angles(
                position=tf.range(position, dtype=tf.float32)[:, tf.newaxis],
                i=tf.range(d_model, dtype=tf.float32)[tf.newaxis, :],
                d_model=d_model,
            )
            sines = tf.math.sin(angle_rads[:, 0::2])
            cosines = tf.math.cos(angle_rads[:, 1::2])
            angle_rads = np.zeros(angle_rads.shape)
            angle_rads[:, 0::2] = sines
            angle_rads[:, 1::2] = cosines
            pos_encoding = tf.constant(angle_rads)[tf.newaxis, ...]
            return tf.cast(pos_encoding, tf.float32)

        def call(self, inputs):
            return inputs + self.pos_encoding[:, : tf.shape(inputs)[-1], :]

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
        scaled_attention_logits += mask * -1e9
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
SEED_DISTANCES_004 = np.array(
    [
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
    ]
)


# ---- E10-E21 -------------------------------------------------------------------------------


def seed_bahdanau_decoder_002():
    """002, ``class BahdanauAttention`` and ``class Decoder``, as written (E7, E10).

    ``Decoder.call`` ends with ``out, h_dec = self.gru(out)``: the incoming ``h_dec`` is
    never passed as ``initial_state``, so the GRU restarts from zeros at every step and
    the previous state reaches the step only as the attention query. (Line 7 of the class
    is cut off in the notes after ``return_``; ``return_state=True`` is what
    ``out, h_dec = self.gru(out)`` needs.)
    """
    import tensorflow as tf

    class BahdanauAttention(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.w_dec = tf.keras.layers.Dense(units)
            self.w_enc = tf.keras.layers.Dense(units)
            self.w_com = tf.keras.layers.Dense(1)

        def call(self, h_enc, h_dec):
            h_enc = self.w_enc(h_enc)
            h_dec = tf.expand_dims(h_dec, 1)
            h_dec = self.w_dec(h_dec)
            score = self.w_com(tf.nn.tanh(h_dec + h_enc))
            attn = tf.nn.softmax(score, axis=1)
            context_vec = attn * h_enc
            context_vec = tf.reduce_sum(context_vec, axis=1)
            return context_vec, attn

    class Decoder(tf.keras.Model):
        def __init__(self, vocab_size, embedding_dim, dec_units):
            super().__init__()
            self.dec_units = dec_units
            self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
            self.gru = tf.keras.layers.GRU(dec_units, return_sequences=True, return_state=True)
            self.fc = tf.keras.layers.Dense(vocab_size)
            self.attention = BahdanauAttention(self.dec_units)

        def call(self, x, h_dec, enc_out):
            context_vec, attn = self.attention(enc_out, h_dec)
            out = self.embedding(x)
            out = tf.concat([tf.expand_dims(context_vec, 1), out], axis=-1)
            out, h_dec = self.gru(out)
            out = tf.reshape(out, (-1, out.shape[2]))
            out = self.fc(out)
            return out, h_dec, attn

    return Decoder


def seed_initial_state_002(enc_out):
    """002, train_step: ``h_dec = enc_out[:, -1]`` on post-padded sources (E11)."""
    return enc_out[:, -1]


def seed_loss_function_002(real, pred):
    """002, loss_function, as written (E12). The notes call it once per decoder step, on
    ``real = tgt[:, t]`` (B,) and ``pred`` (B, V): the masked losses of that step, averaged
    over the B rows of the batch (rows already padded at step t included)."""
    import tensorflow as tf

    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    mask = tf.math.logical_not(tf.math.equal(real, 0))
    loss = loss_object(real, pred)
    mask = tf.cast(mask, dtype=loss.dtype)
    loss *= mask
    return tf.reduce_mean(loss)


def seed_eval_step_002(src, tgt, encoder, decoder, dec_tok):
    """002, ``eval_step`` (its lines 3-16 are ``train_step``'s lines 3-17 without the tape), as written (E12, E31).

    Returns ``(loss, batch_loss)``: the notes return ``batch_loss``, the printed number;
    ``loss``, the sum over the T - 1 steps, is what ``train_step`` differentiates
    (``tape.gradient(loss, variables)``). ``encoder``, ``decoder`` and ``dec_tok`` stand
    for the notes' Encoder, Decoder and Keras Tokenizer (only ``word_index['<start>']``
    is used). The ``@tf.function`` decorator is left out: it does not change the numbers.
    """
    import tensorflow as tf

    bsz = src.shape[0]
    loss = 0

    enc_out = encoder(src)
    h_dec = enc_out[:, -1]

    dec_src = tf.expand_dims([dec_tok.word_index["<start>"]] * bsz, 1)

    for t in range(1, tgt.shape[1]):
        pred, h_dec, _ = decoder(dec_src, h_dec, enc_out)
        loss += seed_loss_function_002(tgt[:, t], pred)
        dec_src = tf.expand_dims(tgt[:, t], 1)

    batch_loss = loss / int(tgt.shape[1])

    return loss, batch_loss


def seed_preprocess_sentence_002(sentence, s_token=False, e_token=False):
    """002, preprocess_sentence, as written (E13): the last regex keeps only ASCII letters."""
    import re

    sentence = sentence.lower().strip()
    sentence = re.sub(r"([?!.])", r" \1 ", sentence)
    sentence = re.sub(r'[" "]', " ", sentence)
    sentence = re.sub(r"[^a-zA-Z?!.,]+", " ", sentence)
    sentence = sentence.strip()
    if s_token:
        sentence = "<start> " + sentence
    if e_token:
        sentence += " <end>"
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
SEED_NUMERIC_TABLE_000_PRINTED = [
    ["0", "1", "0", "1"],
    ["0.84", "0.99", "0.009", "0.9999995"],
    ["0.90", "0.98", "0.01", "0.999998"],
    ["0.14", "0.95", "0.02", "0.9999955"],
]
SEED_NUMERIC_TABLE_000 = np.array([[float(x) for x in row] for row in SEED_NUMERIC_TABLE_000_PRINTED])


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
            self.middle = tf.keras.layers.Dense(dff, activation="relu")
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


# ---- E22-E36 -------------------------------------------------------------------------------


def seed_attention_divided_by_dk_003(q, k, v):
    """003:478, the decoder's masked attention: 'Q와 K의 내적 후 ... 키 벡터 차원으로 나눈다' (E22).

    The scores are divided by the key width d_k itself, not by sqrt(d_k). NumPy,
    q (..., T_q, d_k), k (..., T_k, d_k), v (..., T_k, d_v); returns output and weights.
    """
    scores = q @ np.swapaxes(k, -1, -2) / q.shape[-1]
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def seed_scores_divided_by_sqrt_n_001(q, k):
    """001:216, ``score(q,k) = q*k / sqrt(n)`` with n read as the sequence length, the n of
    this course and of the paper's Table 1 (E22). q (T_q, d_k), k (T_k, d_k)."""
    return q @ k.T / np.sqrt(k.shape[0])


def seed_positional_i_as_dimension_003(max_len, d_model):
    """003:308/328 (and 000:194, 004:182): i read as the index of the dimension (E24).

    '512 차원중 3번째 차원이면 i는 3': dimension j gets sin or cos of pos / 10000^(2j / d_model),
    sine on even j and cosine on odd j.
    """
    pos = np.arange(max_len)[:, None]
    j = np.arange(d_model)[None, :]
    angles = pos / np.power(10000.0, 2 * j / d_model)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


def seed_padding_mask_on_embeddings_000(x, tokens):
    """000:1188: the padding mask 'sets the embedding values at the <pad> positions to a very
    small negative number' (E25), then attention Q = K = V = x with no mask on the scores.

    x (B, T, d) NumPy embeddings, tokens (B, T) with 0 = <pad>. Returns output, weights.
    """
    x = np.where((tokens == 0)[..., None], -1e9, x)
    scores = x @ np.swapaxes(x, -1, -2) / np.sqrt(x.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ x, weights


def seed_scaled_embedding_001(vocab_size, d_model):
    """001:506-521, TransformerEmbedding: ``Embedding(input_vocab_size, d_model)`` with Keras'
    default initialiser, times ``sqrt(d_model)`` (E27). Returns the (V, d_model) scaled table."""
    import tensorflow as tf

    embedding = tf.keras.layers.Embedding(vocab_size, d_model)
    out = embedding(tf.range(vocab_size)[tf.newaxis])  # every token once: (1, V, d_model)
    out = out * tf.math.sqrt(tf.cast(d_model, tf.float32))
    return out.numpy()[0]


def seed_decoder_layer_000(dff, d_model, num_heads, dropout, name="decoder_layer"):
    """000:1304-1379, ``decoder_layer``, as written (E28): no Dropout after the first sublayer.

    The notes' own ``MultiHeadAttention`` class (called with a dict) is replaced by a stand-in
    that calls Keras' ``MultiHeadAttention`` with the notes' mask convention (1 = blocked);
    every other line is the notes'. Dropout appears after sublayers 2 and 3 only.
    """
    import tensorflow as tf

    class MultiHeadAttention(tf.keras.layers.Layer):  # stand-in for the notes' class (000:746-)
        def __init__(self, d_model, num_heads, name="multi_head_attention"):
            super().__init__(name=name)
            self.mha = tf.keras.layers.MultiHeadAttention(num_heads, d_model // num_heads)

        def call(self, inputs):
            may_attend = tf.equal(inputs["mask"][:, 0], 0)  # (B, T_q or 1, T_k): notes' 1 = blocked
            return self.mha(inputs["query"], inputs["value"], inputs["key"], attention_mask=may_attend)

    inputs = tf.keras.Input(shape=(None, d_model), name="inputs")
    enc_outputs = tf.keras.Input(shape=(None, d_model), name="encoder_outputs")
    look_ahead_mask = tf.keras.Input(shape=(1, None, None), name="look_ahead_mask")
    padding_mask = tf.keras.Input(shape=(1, 1, None), name="padding_mask")

    attention1 = MultiHeadAttention(d_model, num_heads, name="attention_1")(
        inputs={"query": inputs, "key": inputs, "value": inputs, "mask": look_ahead_mask}
    )
    attention1 = tf.keras.layers.LayerNormalization(epsilon=1e-6)(attention1 + inputs)

    attention2 = MultiHeadAttention(d_model, num_heads, name="attention_2")(
        inputs={"query": attention1, "key": enc_outputs, "value": enc_outputs, "mask": padding_mask}
    )
    attention2 = tf.keras.layers.Dropout(rate=dropout)(attention2)
    attention2 = tf.keras.layers.LayerNormalization(epsilon=1e-6)(attention2 + attention1)

    outputs = tf.keras.layers.Dense(units=dff, activation="relu")(attention2)
    outputs = tf.keras.layers.Dense(units=d_model)(outputs)
    outputs = tf.keras.layers.Dropout(rate=dropout)(outputs)
    outputs = tf.keras.layers.LayerNormalization(epsilon=1e-6)(outputs + attention2)

    return tf.keras.Model(inputs=[inputs, enc_outputs, look_ahead_mask, padding_mask], outputs=outputs, name=name)


def seed_positional_encoding_layer_000():
    """000:447-488, ``class PositionalEncoding``, as used by 000's encoder() and decoder() (E32).

    Like 002's class, but ``call`` slices by the sequence length (``tf.shape(inputs)[1]``).
    The slide prints ``tf.range(position, dtype=tf.float32)[:], tf.newaxis]`` (a slide typo that
    cannot parse); ``[:, tf.newaxis]`` is read here. 000:1257 and 000:1413 build it as
    ``PositionalEncoding(vocab_size, d_model)``: a table of vocab_size positions.
    """
    import tensorflow as tf

    class PositionalEncoding(seed_positional_encoding_layer_002()):
        def call(self, inputs):
            return inputs + self.pos_encoding[:, : tf.shape(inputs)[1], :]

    return PositionalEncoding


# 002:1862-1863, the position-wise feed-forward network, the two lines as printed (E33).
SEED_FFN_LINES_002 = (
    "outputs = tf.keras.layers.Dense(units=dff, activation='relu')(attention)\n"
    "outpus = tf.kears.layers.Dense(units=d_model)(outpus)\n"
)


def seed_ffn_lines_002(attention, dff, d_model, source=SEED_FFN_LINES_002):
    """Run 002's two feed-forward lines (E33) on ``attention``; returns the names they define."""
    import tensorflow as tf

    names = {"tf": tf, "attention": attention, "dff": dff, "d_model": d_model}
    exec(source, names)  # noqa: S102 - the notes' lines, verbatim
    return names


def seed_mha_002():
    """002:1765-1834, ``class MultiHeadAttention`` (E34): ``self.dense`` is commented
    '# wQ에 해당하는 dense' and applied, in step 5, to the concatenated heads.

    Two repairs so that the class runs: the reshape of step 4 takes ``scaled_attention``
    (E3), and the lines the notes print cut off at the page edge (``inputs['value']``
    then ``mask``; the call of ``scaled_dot_product_attention``) are completed with
    ``inputs['mask']`` and ``mask)``. ``scaled_dot_product_attention`` is 001's.
    """
    import tensorflow as tf

    class MultiHeadAttention(tf.keras.layers.Layer):
        def __init__(self, d_model, num_heads, name="multi_head_attention"):
            super().__init__(name=name)
            self.num_heads = num_heads
            self.d_model = d_model
            assert d_model % self.num_heads == 0
            self.depth = d_model // self.num_heads
            self.query_dense = tf.keras.layers.Dense(units=d_model)
            self.key_dense = tf.keras.layers.Dense(units=d_model)
            self.value_dense = tf.keras.layers.Dense(units=d_model)

            # wQ에 해당하는 dense
            self.dense = tf.keras.layers.Dense(units=d_model)

        def split_heads(self, inputs, batch_size):
            inputs = tf.reshape(inputs, shape=(batch_size, -1, self.num_heads, self.depth))
            return tf.transpose(inputs, perm=[0, 2, 1, 3])

        def call(self, inputs):
            query, key, value, mask = inputs["query"], inputs["key"], inputs["value"], inputs["mask"]
            batch_size = tf.shape(query)[0]
            query = self.query_dense(query)
            key = self.key_dense(key)
            value = self.value_dense(value)
            query = self.split_heads(query, batch_size)
            key = self.split_heads(key, batch_size)
            value = self.split_heads(value, batch_size)
            scaled_attention, _ = seed_scaled_dot_product_attention_001(query, key, value, mask)
            scaled_attention = tf.transpose(scaled_attention, perm=[0, 2, 1, 3])
            concat_attention = tf.reshape(scaled_attention, (batch_size, -1, self.d_model))
            outputs = self.dense(concat_attention)
            return outputs

    return MultiHeadAttention


def seed_output_layer_000(vocab_size):
    """000:1497, transformer(): ``Dense(units=vocab_size, name="outputs")`` on the decoder
    outputs, no activation (E36). 000:1288 calls the decoder's output '단어의 확률'."""
    import tensorflow as tf

    return tf.keras.layers.Dense(units=vocab_size, name="outputs")
