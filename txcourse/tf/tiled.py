"""Memory-efficient attention: the output of Eq. (1) computed block by block, with an online softmax. Book: interlude.

Plain attention (:func:`~txcourse.tf.attention.scaled_dot_product_attention`)
forms the scores Q K^T, one (T_q, T_k) matrix per head, and its softmax:
memory that grows as n^2 (Vaswani et al. 2017, Table 1). The output needs
neither in full. Walk over the keys and values in blocks of b positions and
keep, for every query, three running quantities: the largest score seen so
far, the sum of the exponentials and the weighted sum of the values; rescale
them whenever a block brings a larger score. The first two are the online
softmax of Milakov and Gimelshein (2018); Rabe and Staats (2021) carried
the third along to compute attention, and FlashAttention (Dao et al. 2022)
runs it as one fused GPU kernel. The largest score tensor it forms is
(..., T_q, b).
"""

from __future__ import annotations

import math
from typing import Optional

import tensorflow as tf

from txcourse import _validation as V

__all__ = ["tiled_attention"]


# long-function: teaching code; the tiled (flash) attention loop reads as one algorithm, as in the paper
def tiled_attention(
    query: tf.Tensor,
    key: tf.Tensor,
    value: tf.Tensor,
    mask: Optional[tf.Tensor] = None,
    block_size: int = 128,
) -> tf.Tensor:
    """softmax(Q K^T / sqrt(d_k)) V, Eq. (1) of Vaswani et al. (2017), over blocks of keys, never all scores at once.

    For one query q, split the keys and values into blocks K_j, V_j of
    ``block_size`` positions and start from m_0 = -inf (the dtype's most
    negative number), l_0 = 0, o_0 = 0. For each block j:

        s_j = q K_j^T / sqrt(d_k)                  scores of the block
        m_j = max(m_{j-1}, max(s_j))               running maximum
        p_j = exp(s_j - m_j)                       unnormalised weights, <= 1
        l_j = l_{j-1} exp(m_{j-1} - m_j) + sum(p_j)    running sum
        o_j = o_{j-1} exp(m_{j-1} - m_j) + p_j V_j     running output

    and after the last block the output is o / l. The factor exp(m_{j-1} -
    m_j) re-bases what was summed against the old maximum onto the new one,
    so o / l equals softmax(s) V exactly in real arithmetic (Milakov and
    Gimelshein 2018; Rabe and Staats 2021; Dao et al. 2022, Sec. 3.1), and
    no exponential ever exceeds 1. Masked keys get p = 0; a query whose
    keys are all masked keeps l = 0 and gets a zero output, as
    :func:`~txcourse.tf.attention.scaled_dot_product_attention` gives
    (errata E6).

    Args:
        query: Q, one row per query position.
        key: K, one row per key position, same width d_k as the queries.
        value: V, one row per key position.
        mask: optional, bool or 0/1; ``True``/1 marks a key that may NOT be
            attended. Must broadcast to the scores (..., T_q, T_k).
        block_size: keys per block b, a positive integer; the last block
            holds the T_k mod b that remain.

    Shape:
        query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v).
        Returns the output (..., T_q, d_v); no weights (they are never
        formed). The largest score tensor is (..., T_q, b); the running
        output o, like the output, is (..., T_q, d_v).

    Example:
        >>> q, k, v = tf.random.normal((2, 5, 8)), tf.random.normal((2, 7, 8)), tf.random.normal((2, 7, 4))
        >>> out = tiled_attention(q, k, v, block_size=3)
        >>> bool(tf.reduce_all(tf.abs(out - tf.nn.softmax(q @ tf.transpose(k, (0, 2, 1)) / 8**0.5) @ v) < 1e-6))
        True
    """
    V.check_attention_inputs(tuple(query.shape), tuple(key.shape), tuple(value.shape))
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise V.ArgumentError(
            f"block_size must be a positive integer (keys per block), got {block_size!r}", "block_size"
        )
    t_k, d_k = key.shape[-2], query.shape[-1]
    if mask is not None:
        V.check_mask(tuple(mask.shape), tuple(query.shape[:-1]) + (t_k,))
        mask = mask if mask.dtype == tf.bool else tf.not_equal(mask, 0)  # (..., T_q, T_k) broadcastable
    lowest = tf.constant(query.dtype.min, query.dtype)  # the mask's -inf, finite (errata E6)
    rows = tf.shape(query)[:-1]  # (..., T_q): query, key and value share the leading dimensions
    running_max = tf.fill(tf.concat([rows, [1]], 0), lowest)  # (..., T_q, 1) m
    running_sum = tf.zeros(tf.concat([rows, [1]], 0), query.dtype)  # (..., T_q, 1) l
    running_out = tf.zeros(tf.concat([rows, tf.shape(value)[-1:]], 0), query.dtype)  # (..., T_q, d_v) o
    for start in range(0, t_k, block_size):
        end = min(start + block_size, t_k)
        k_block = key[..., start:end, :]  # (..., b, d_k)
        v_block = value[..., start:end, :]  # (..., b, d_v)
        scores = tf.matmul(query, k_block, transpose_b=True) / math.sqrt(d_k)  # (..., T_q, b) s_j
        if mask is not None:
            blocked = mask if mask.shape[-1] == 1 else mask[..., start:end]  # (..., T_q, b) broadcastable
            scores = tf.where(blocked, lowest, scores)  # (..., T_q, b)
        new_max = tf.maximum(running_max, tf.reduce_max(scores, axis=-1, keepdims=True))  # (..., T_q, 1) m_j
        weights = tf.exp(scores - new_max)  # (..., T_q, b) p_j, each <= 1
        if mask is not None:
            weights = tf.where(blocked, tf.zeros_like(weights), weights)  # (..., T_q, b) masked keys weigh exactly 0
        rescale = tf.exp(running_max - new_max)  # (..., T_q, 1) exp(m_{j-1} - m_j) <= 1
        running_sum = running_sum * rescale + tf.reduce_sum(weights, axis=-1, keepdims=True)  # (..., T_q, 1) l_j
        running_out = running_out * rescale + tf.matmul(weights, v_block)  # (..., T_q, d_v) o_j
        running_max = new_max  # (..., T_q, 1)
    safe_sum = tf.where(running_sum > 0, running_sum, tf.ones_like(running_sum))  # (..., T_q, 1)
    return running_out / safe_sum  # (..., T_q, d_v); fully masked rows: 0 / 1 = 0
