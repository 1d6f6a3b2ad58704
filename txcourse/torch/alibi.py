"""Attention with linear biases, ALiBi (Press et al. 2022, Sec. 3). Book: week 2, "Positions as built today".

Nothing is added to the embeddings. Each head h adds -m_h * (i - j) to the
score of query i and key j; the slopes m_h are a geometric sequence
(2^(-8/H), 2^(-16/H), ..., 2^-8 for H heads, a power of two).

The paper's decoder is causal: key j <= i, so i - j = |i - j|. This package
uses -m_h |i - j| everywhere: in the causal decoder it is the paper's bias on
every key a query may attend (the look-ahead mask removes the others), and
in the bidirectional encoder it is the symmetric extension (the paper leaves
the encoder out; |i - j| is what bidirectional uses of ALiBi do).

The symmetric bias cannot tell left from right in the encoder. Reversing a
source leaves |i - j| between any two tokens unchanged, so the encoder's
output rows for the reversal are its rows for the source in reverse order,
and encoder-decoder attention ignores the order of those rows: an
encoder-decoder model with ALiBi gives the same output for a source and its
reversal (tests/torch_tf/test_positions.py).
"""

from __future__ import annotations

import math

import torch

from txcourse import _validation as V

__all__ = ["alibi_slopes", "alibi_bias"]


def _slopes(num_heads: int) -> list[float]:
    """The slopes of the authors' code (get_slopes): 2^(-8h/n) for h = 1..n, n the power of two at or below H;
    the other heads take every other slope of 2n heads. For H a power of two this is the paper's rule (Press et
    al. 2022, Sec. 3); otherwise it is the code's workaround, not the paper's general rule (the geometric
    sequence from 2^(-8/H) with that ratio)."""
    n = 2 ** math.floor(math.log2(num_heads))
    slopes = [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    if n == num_heads:
        return slopes
    return slopes + [2.0 ** (-8.0 * h / (2 * n)) for h in range(1, 2 * n, 2)][: num_heads - n]


def alibi_slopes(num_heads: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The head-specific slopes m_1, ..., m_H of Press et al. (2022), Sec. 3.

    For 8 heads: 1/2, 1/4, ..., 1/256. For H a power of two the sequence
    starts at 2^(-8/H) with that ratio; otherwise the rule of the authors'
    code (see :func:`_slopes`).

    Shape:
        Returns (H,).

    Example:
        >>> alibi_slopes(4)
        tensor([0.2500, 0.0625, 0.0156, 0.0039])
    """
    V.check_positive("num_heads", num_heads)
    return torch.tensor(_slopes(num_heads), dtype=dtype)  # (H,)


def alibi_bias(num_heads: int, query_length: int, key_length: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The additive bias -m_h |i - j| for every head, query i and key j (Press et al. 2022, Eq. in Sec. 3).

    The queries are the last ``query_length`` of the ``key_length``
    positions (the new positions after a cache), so query row r sits at
    i = key_length - query_length + r.

    Shape:
        Returns (H, T_q, T_k), to add to scores (B, H, T_q, T_k).

    Example:
        >>> alibi_bias(1, 3, 3)[0]
        tensor([[ 0.0000, -0.0039, -0.0078],
                [-0.0039,  0.0000, -0.0039],
                [-0.0078, -0.0039,  0.0000]])
    """
    slopes = alibi_slopes(num_heads, torch.float64)  # (H,)
    i = torch.arange(query_length, dtype=torch.float64) + (key_length - query_length)  # (T_q,)
    j = torch.arange(key_length, dtype=torch.float64)  # (T_k,)
    distance = torch.abs(i[:, None] - j[None, :])  # (T_q, T_k)
    return (0.0 - slopes[:, None, None] * distance[None, :, :]).to(dtype)  # (H, T_q, T_k), 0 not -0
