"""Sinusoidal positional encoding (Vaswani et al. 2017, Sec. 3.5) and a learned table (BERT, GPT). Book: week 2."""

from __future__ import annotations

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.tf._checks import check_float
from txcourse.tf.init import embedding

__all__ = ["positional_encoding", "PositionalEncoding", "LearnedPositionalEmbedding"]


def positional_encoding(max_len: int, d_model: int, dtype: tf.DType = tf.float32) -> tf.Tensor:
    """The table of sinusoidal encodings, Sec. 3.5 of Vaswani et al. (2017).

    The paper leaves this formula unnumbered (only Eqs. (1)-(3) are numbered).

    PE(pos, 2i) = sin(pos / 10000^(2i / d_model)) and
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model)): dimensions 2i and 2i+1
    share one frequency. The source notes wrote the exponent as ``2 * i // 2``,
    which is ``i``; the exponent is ``2 * (i // 2)`` (errata E1). An odd
    ``d_model`` is allowed: its last dimension is a sine.

    Args:
        max_len: number of positions (rows).
        d_model: width of each encoding (columns).
        dtype: dtype of the result; the angles are computed in float64.

    Shape:
        Returns (max_len, D).

    Example:
        >>> positional_encoding(4, 4)[1].numpy().round(4)
        array([0.8415, 0.5403, 0.01  , 0.9999], dtype=float32)
    """
    V.check_positive("max_len", max_len)
    V.check_positive("d_model", d_model)
    pos = tf.range(max_len, dtype=tf.float64)[:, tf.newaxis]  # (max_len, 1)
    i = tf.range(d_model, dtype=tf.float64)[tf.newaxis, :]  # (1, D)
    angle_rates = 1.0 / tf.pow(tf.constant(10000.0, tf.float64), (2 * tf.math.floordiv(i, 2)) / d_model)  # (1, D)
    angles = pos * angle_rates  # (max_len, D)
    table = tf.where(i % 2 == 0, tf.sin(angles), tf.cos(angles))  # (max_len, D)
    return tf.cast(table, dtype)  # (max_len, D)


def _check_rows(layer: keras.layers.Layer, x: tf.Tensor, offset) -> None:
    """x (B, T, D) of ``layer``'s width, its rows offset .. offset + T - 1 within ``layer.max_len``."""
    check_float("x", x, layer)
    V.check_rank("x", tuple(x.shape), 3, "(B, T, D)")
    V.check_width("x", tuple(x.shape), layer.d_model)
    known = x.shape[1] is not None and not tf.is_tensor(offset)  # a tensor offset: a compiled decoding step
    V.check_length("x", offset + x.shape[1] if known else None, layer.max_len)
    if not known:
        tf.debugging.assert_less_equal(
            offset + tf.shape(x)[1], layer.max_len, message=f"x is longer than max_len={layer.max_len}"
        )


class PositionalEncoding(keras.layers.Layer):
    """Adds the sinusoidal encodings to a batch of embeddings (Sec. 3.5).

    The table is a constant, not a weight. The source notes sliced it with
    ``inputs.shape[-1]`` (the width) instead of the sequence length
    ``inputs.shape[1]`` (errata E2).

    Args:
        max_len: longest sequence the table covers.
        d_model: width of the embeddings.

    Shape:
        x: (B, T, D) with offset + T <= max_len; ``offset`` is the position
        of the first row (non-zero when decoding one token at a time).
        Returns (B, T, D).
    """

    def __init__(self, max_len: int, d_model: int, **kwargs):
        super().__init__(autocast=False, **kwargs)  # other dtypes raise, as in PyTorch (check_float in debug mode)
        self.max_len = max_len
        self.d_model = d_model
        self.table = positional_encoding(max_len, d_model)  # (max_len, D)
        self.built = True

    def call(self, x: tf.Tensor, offset: int = 0) -> tf.Tensor:
        _check_rows(self, x, offset)
        return x + tf.cast(self.table[offset : offset + tf.shape(x)[1]], x.dtype)  # (B, T, D)


class LearnedPositionalEmbedding(keras.layers.Layer):
    """Adds a trained position embedding to a batch of embeddings, as BERT (Devlin et al. 2019) and GPT do.

    The table is a weight, ``table`` (max_len x d_model, initialised like
    the token embeddings, N(0, d^-1/2)), trained with the rest of the model.
    Vaswani et al. (2017, Sec. 3.5 and Table 3, row (E)) found it about as
    good as the sinusoids; unlike them it has no row for a position beyond
    max_len, and rows for positions never seen in training stay as
    initialised.

    Args:
        max_len: longest sequence the table covers.
        d_model: width of the embeddings.

    Shape:
        x: (B, T, D) with offset + T <= max_len; ``offset`` is the position
        of the first row (non-zero when decoding one token at a time).
        Returns (B, T, D).
    """

    def __init__(self, max_len: int, d_model: int, **kwargs):
        super().__init__(autocast=False, **kwargs)  # other dtypes raise, as in PyTorch (check_float in debug mode)
        V.check_positive("max_len", max_len)
        V.check_positive("d_model", d_model)
        self.max_len = max_len
        self.d_model = d_model
        self.table = embedding(max_len, d_model, name="table")  # (max_len, D) one trained row per position
        self.built = True

    def call(self, x: tf.Tensor, offset: int = 0) -> tf.Tensor:
        _check_rows(self, x, offset)
        return x + tf.cast(self.table.embeddings[offset : offset + tf.shape(x)[1]], x.dtype)  # (B, T, D)
