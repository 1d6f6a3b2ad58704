"""Attention masks (Vaswani et al. 2017, Sec. 3.2.3). Book: weeks 3 and 5.

Convention, the same in both frameworks: ``True`` marks a position that may
NOT be attended (the source notes' and ``torch.nn.Transformer``'s
convention). Keras' own ``MultiHeadAttention`` uses the opposite; pass it
``~mask``.
"""

from __future__ import annotations

import torch

from txcourse import _validation as V

__all__ = ["padding_mask", "look_ahead_mask"]


def padding_mask(tokens: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """``True`` where a key is padding, shaped to broadcast over heads and queries.

    Args:
        tokens: integer token ids.
        pad_id: the id of ``<pad>``.

    Shape:
        tokens: (B, T_k). Returns a bool tensor (B, 1, 1, T_k).

    Example:
        >>> padding_mask(torch.tensor([[1, 21, 777, 0, 0]])).int()
        tensor([[[[0, 0, 0, 1, 1]]]], dtype=torch.int32)
    """
    V.check_rank("tokens", tuple(tokens.shape), 2, "(B, T)")
    V.check_non_negative("pad_id", pad_id)
    return (tokens == pad_id)[:, None, None, :]  # (B, 1, 1, T_k)


def look_ahead_mask(length: int, offset: int = 0) -> torch.Tensor:
    """``True`` above the diagonal: query t may not see keys after t.

    Args:
        length: the number T of new query positions.
        offset: number (>= 0) of earlier positions already in a key/value cache;
            query i stands at position offset + i and sees keys 0..offset + i.

    Shape:
        Returns a bool tensor (T, offset + T); row i is the query position.

    Example:
        >>> look_ahead_mask(3).int()
        tensor([[0, 1, 1],
                [0, 0, 1],
                [0, 0, 0]], dtype=torch.int32)
    """
    V.check_positive("length", length)
    V.check_non_negative("offset", offset)
    query_pos = torch.arange(length)[:, None] + offset  # (T, 1)
    key_pos = torch.arange(offset + length)[None, :]  # (1, offset + T)
    return key_pos > query_pos  # (T, offset + T)
