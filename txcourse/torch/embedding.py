"""Token embedding, scaled and position-encoded (Vaswani et al. 2017, Sec. 3.4-3.5). Book: week 2."""

from __future__ import annotations

import math

import torch
from torch import nn

from txcourse import _validation as V
from txcourse.config import TransformerConfig, check_config
from txcourse.torch._checks import check_tokens
from txcourse.torch.init import embedding
from txcourse.torch.positional import LearnedPositionalEmbedding, PositionalEncoding

__all__ = ["TransformerEmbedding"]


class TransformerEmbedding(nn.Module):
    """dropout(Embedding(tokens) * sqrt(d_model) + PE), Sec. 3.4 and 3.5 (PE: the table ``positions`` names).

    The source notes built ``PositionalEncoding(vocab_size, d_model)`` and
    never called it on the embeddings (errata E4); here the encoding is
    added to every input.

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`; the layer reads
            src_vocab_size (tgt_vocab_size with ``target``), the number of
            token ids V; d_model, the width D; max_len, the longest sequence
            allowed; dropout, applied to the sum (P_drop); and positions:
            "sinusoidal" adds :class:`PositionalEncoding`, "learned" a
            :class:`LearnedPositionalEmbedding`; "rope" and "alibi" add
            nothing here (attention sees the positions, and no length
            limit applies).
        target: the decoder's embedding (V = tgt_vocab_size) instead of the
            encoder's (V = src_vocab_size).

    Shape:
        tokens (B, T) integer ids in [0, V); ``offset`` is the position of
        the first token (see :class:`PositionalEncoding`). Returns (B, T, D).
        The ids' range is checked in debug mode (:func:`txcourse.debug_checks`)
        and where the data enters, not here: reading the ids is a
        device-to-host copy.
    """

    def __init__(self, config: TransformerConfig, target: bool = False):
        super().__init__()
        check_config(config)
        vocab_size, d_model = config.tgt_vocab_size if target else config.src_vocab_size, config.d_model
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.token_embedding = embedding(vocab_size, d_model)  # (V, D) lookup table
        self.positions = config.positions
        self.positional_encoding = None  # rope, alibi: the positions enter in the self-attention
        if config.positions == "sinusoidal":
            self.positional_encoding = PositionalEncoding(config.max_len, d_model)
        elif config.positions == "learned":
            self.positional_encoding = LearnedPositionalEmbedding(config.max_len, d_model)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, tokens: torch.Tensor, offset: int = 0) -> torch.Tensor:
        V.check_rank("tokens", tuple(tokens.shape), 2, "(B, T)")
        check_tokens("tokens", tokens, self.vocab_size)
        x = self.token_embedding(tokens) * math.sqrt(self.d_model)  # (B, T, D)
        if self.positional_encoding is not None:
            x = self.positional_encoding(x, offset=offset)  # (B, T, D)
        return self.dropout(x)  # (B, T, D)
