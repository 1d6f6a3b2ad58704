"""Token embedding, scaled and position-encoded (Vaswani et al. 2017, Sec. 3.4-3.5). Book: week 2."""

from __future__ import annotations

import math
from typing import Optional

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.config import check_positions
from txcourse.tf._checks import check_tokens
from txcourse.tf.init import embedding
from txcourse.tf.positional import LearnedPositionalEmbedding, PositionalEncoding

__all__ = ["TransformerEmbedding"]


class TransformerEmbedding(keras.layers.Layer):
    """dropout(Embedding(tokens) * sqrt(d_model) + PE), Sec. 3.4 and 3.5 (PE: the table ``positions`` names).

    The source notes built ``PositionalEncoding(vocab_size, d_model)`` and
    never called it on the embeddings (errata E4); here the encoding is
    added to every input.

    Args:
        vocab_size: number of token ids V.
        d_model: width D.
        max_len: longest sequence allowed.
        dropout: dropout rate applied to the sum (P_drop).
        positions: one of :data:`~txcourse.config.POSITIONS`: "sinusoidal"
            adds :class:`PositionalEncoding`, "learned" a
            :class:`LearnedPositionalEmbedding`; "rope" and "alibi" add
            nothing here (attention sees the positions, and no length
            limit applies).

    Shape:
        tokens (B, T) integer ids in [0, V); ``offset`` is the position of
        the first token (see :class:`PositionalEncoding`). Returns (B, T, D).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        max_len: int,
        dropout: float = 0.1,
        positions: str = "sinusoidal",
        **kwargs,
    ):
        super().__init__(**kwargs)
        V.check_positive("vocab_size", vocab_size)
        V.check_probability("dropout", dropout)
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.token_embedding = embedding(vocab_size, d_model, name="token_embedding")  # (V, D) lookup table
        check_positions(positions)
        self.positions = positions
        self.positional_encoding = None  # rope, alibi: the positions enter in the self-attention
        if positions == "sinusoidal":
            self.positional_encoding = PositionalEncoding(max_len, d_model, name="positional_encoding")
        elif positions == "learned":
            self.positional_encoding = LearnedPositionalEmbedding(max_len, d_model, name="positional_encoding")
        self.dropout = keras.layers.Dropout(dropout, name="dropout")
        self.built = True

    def call(self, tokens: tf.Tensor, offset: int = 0, training: Optional[bool] = None) -> tf.Tensor:
        V.check_rank("tokens", tuple(tokens.shape), 2, "(B, T)")
        check_tokens("tokens", tokens, self.vocab_size)
        x = self.token_embedding(tokens) * math.sqrt(self.d_model)  # (B, T, D)
        if self.positional_encoding is not None:
            x = self.positional_encoding(x, offset=offset)  # (B, T, D)
        return self.dropout(x, training=training)  # (B, T, D)
