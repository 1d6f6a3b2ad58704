"""Sinusoidal positional encoding (Vaswani et al. 2017, Sec. 3.5) and a learned table (BERT, GPT). Book: week 2."""

from __future__ import annotations

import torch
from torch import nn

from txcourse import _validation as V
from txcourse.torch._checks import check_float
from txcourse.torch.init import embedding

__all__ = ["positional_encoding", "PositionalEncoding", "LearnedPositionalEmbedding"]


def positional_encoding(max_len: int, d_model: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
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
        >>> positional_encoding(4, 4)[1]
        tensor([0.8415, 0.5403, 0.0100, 0.9999])
    """
    V.check_positive("max_len", max_len)
    V.check_positive("d_model", d_model)
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    i = torch.arange(d_model, dtype=torch.float64)[None, :]  # (1, D)
    angle_rates = 1.0 / torch.pow(10000.0, (2 * torch.div(i, 2, rounding_mode="floor")) / d_model)  # (1, D)
    angles = pos * angle_rates  # (max_len, D)
    table = torch.where(i % 2 == 0, torch.sin(angles), torch.cos(angles))  # (max_len, D)
    return table.to(dtype)  # (max_len, D)


def _check_rows(layer: nn.Module, x: torch.Tensor, offset: int) -> None:
    """x (B, T, D) of ``layer``'s width, its rows offset .. offset + T - 1 within ``layer.max_len``."""
    check_float("x", x, layer)
    V.check_rank("x", tuple(x.shape), 3, "(B, T, D)")
    V.check_width("x", tuple(x.shape), layer.d_model)
    V.check_length("x", offset + x.shape[1], layer.max_len)


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encodings to a batch of embeddings (Sec. 3.5).

    The table is a constant (a non-persistent buffer), not a weight. The
    source notes sliced it with ``inputs.shape[-1]`` (the width) instead of
    the sequence length ``inputs.shape[1]`` (errata E2).

    Args:
        max_len: longest sequence the table covers.
        d_model: width of the embeddings.

    Shape:
        x: (B, T, D) with offset + T <= max_len; ``offset`` is the position
        of the first row (non-zero when decoding one token at a time).
        Returns (B, T, D).
    """

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = max_len
        self.d_model = d_model
        self.register_buffer("table", positional_encoding(max_len, d_model), persistent=False)  # (max_len, D)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        _check_rows(self, x, offset)
        return x + self.table[offset : offset + x.shape[1]].to(x.dtype)  # (B, T, D)


class LearnedPositionalEmbedding(nn.Module):
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

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        V.check_positive("max_len", max_len)
        V.check_positive("d_model", d_model)
        self.max_len = max_len
        self.d_model = d_model
        self.table = embedding(max_len, d_model)  # (max_len, D) one trained row per position

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        _check_rows(self, x, offset)
        return x + self.table.weight[offset : offset + x.shape[1]].to(x.dtype)  # (B, T, D)
