"""Scaled dot-product and multi-head attention (Vaswani et al. 2017, Sec. 3.2). Book: week 3."""

from __future__ import annotations

import math
from typing import Optional, Union

import torch
import torch.nn.functional as F
from torch import nn

from txcourse import _validation as V
from txcourse.cache import AttentionOutput, KVCache
from txcourse.config import check_heads
from txcourse.torch._checks import check_float
from txcourse.torch.alibi import alibi_bias
from txcourse.torch.init import linear
from txcourse.torch.rotary import apply_rotary

__all__ = ["scaled_dot_product_attention", "one_query_attention", "fused_attention", "MultiHeadAttention"]


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, Eq. (1) of Vaswani et al. (2017).

    Masked scores are set to the dtype's most negative finite number, not
    ``mask * -1e9``: in float16, -1e9 overflows to -inf and ``0 * -inf`` is
    NaN, so the source notes' line turns every unmasked score into NaN under
    mixed precision (errata E6). A row whose keys are all masked gets zero
    weights (and a zero output), never NaN.

    Args:
        query: Q, one row per query position.
        key: K, one row per key position, same width d_k as the queries.
        value: V, one row per key position.
        mask: optional, bool or 0/1; ``True``/1 marks a key that may NOT be
            attended. Must broadcast to the scores (..., T_q, T_k).
        bias: optional, added to the scaled scores before the mask and the
            softmax (ALiBi's -m_h |i - j|, :func:`alibi_bias`). Must
            broadcast to the scores.

    Shape:
        query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v).
        Returns output (..., T_q, d_v) and weights (..., T_q, T_k).

    Example (the source notes' temp_q, temp_k, temp_v):
        >>> k = torch.tensor([[10., 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]])
        >>> v = torch.tensor([[1., 0], [10, 0], [100, 5], [1000, 6]])
        >>> out, w = scaled_dot_product_attention(torch.tensor([[0., 10, 0]]), k, v)
        >>> out
        tensor([[10.,  0.]])
    """
    if V.debugging():  # the shapes' agreement; the product below fails anyway, with the framework's words
        V.check_attention_inputs(tuple(query.shape), tuple(key.shape), tuple(value.shape))
    d_k = query.shape[-1]
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)  # (..., T_q, T_k)
    if bias is not None:
        if V.debugging():
            V.check_mask(tuple(bias.shape), tuple(scores.shape), "bias")
        scores = scores + bias  # (..., T_q, T_k)
    if mask is not None:
        if V.debugging():
            V.check_mask(tuple(mask.shape), tuple(scores.shape))
        mask = mask if mask.dtype == torch.bool else mask != 0  # (..., T_q, T_k) broadcastable
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # (..., T_q, T_k)
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)  # (..., T_q, T_k) fully masked rows: 0, not 1/T_k
    output = torch.matmul(weights, value)  # (..., T_q, d_v)
    return output, weights


def one_query_attention(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: Optional[torch.Tensor] = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`scaled_dot_product_attention` for one query, as in a cached decoding step (Sec. 3.2.3).

    The same Eq. (1) with products of one row written as multiply-and-sum
    and the softmax as exp(x - max) / sum: on a CPU, 1-row matrix products
    and the general softmax cost more in framework calls than in arithmetic.

    Shape:
        query (..., 1, d_k), key (..., T_k, d_k), value (..., T_k, d_v).
        Returns output (..., 1, d_v) and weights (..., 1, T_k).
    """
    scores = (query * key).sum(dim=-1).unsqueeze(-2) / math.sqrt(query.shape[-1])  # (..., 1, T_k)
    if mask is not None:
        mask = mask if mask.dtype == torch.bool else mask != 0  # (..., 1, T_k) broadcastable
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # (..., 1, T_k)
    exp = torch.exp(scores - scores.amax(dim=-1, keepdim=True))  # (..., 1, T_k)
    weights = exp / exp.sum(dim=-1, keepdim=True)  # (..., 1, T_k)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)  # (..., 1, T_k) fully masked rows: 0, not 1/T_k
    output = (weights.transpose(-2, -1) * value).sum(dim=-2, keepdim=True)  # (..., 1, d_v)
    return output, weights


def fused_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """The output of :func:`scaled_dot_product_attention`, computed by the framework's fused path.

    PyTorch: ``F.scaled_dot_product_attention``, whose boolean mask means
    MAY attend; we pass an additive mask (0 or the dtype's most negative
    number) and zero the rows whose keys are all masked, so the result
    equals the teaching path (Sec. 3.2.1). An additive ``bias`` (ALiBi)
    joins the additive mask.
    """
    scores_shape = tuple(query.shape[:-1]) + (key.shape[-2],)  # (..., T_q, T_k)
    if bias is not None and V.debugging():
        V.check_mask(tuple(bias.shape), scores_shape, "bias")
    if mask is None:
        return F.scaled_dot_product_attention(query, key, value, attn_mask=bias)  # (..., T_q, d_v)
    if V.debugging():
        V.check_mask(tuple(mask.shape), scores_shape)
    mask = mask if mask.dtype == torch.bool else mask != 0  # (..., T_q, T_k) broadcastable
    additive = torch.zeros(mask.shape, dtype=query.dtype, device=query.device).masked_fill(
        mask, torch.finfo(query.dtype).min
    )  # (..., T_q, T_k)
    if bias is not None:  # a masked score stays the most negative number: the bias is added where it may attend
        additive = torch.where(mask, additive, additive + bias)  # (..., T_q, T_k) broadcast
    output = F.scaled_dot_product_attention(query, key, value, attn_mask=additive)  # (..., T_q, d_v)
    return output.masked_fill(mask.all(dim=-1, keepdim=True), 0.0)  # fully masked rows: 0


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, Sec. 3.2.2 of Vaswani et al. (2017).

    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V). The h heads are computed
    at once: project with ``w_q``, ``w_k``, ``w_v`` (each d_model x d_model),
    split the width into h heads of d_k, attend, concatenate the heads back
    and project with ``w_o`` (W^O). The heads are concatenated, not added
    (errata E5).

    With ``num_kv_heads`` below ``num_heads``, ``w_k`` and ``w_v`` project
    to fewer heads, H_kv = ``num_kv_heads``, each shared by a group of
    H / H_kv consecutive query heads: multi-query attention for H_kv = 1
    (Shazeer 2019), grouped-query attention in between (Ainslie et al.
    2023). The cache holds the H_kv heads, H / H_kv times less than
    multi-head attention; they are repeated for their query heads only
    when the scores are computed (:meth:`expand_kv_heads`).

    Called as ``mha(query, key, value, mask)``, the order of
    :func:`scaled_dot_product_attention`. (Keras' own layer takes
    ``(query, value, key)`` and the opposite mask convention.) The layer
    keeps nothing between calls: the attention weights and the key/value
    cache are outputs.

    Args:
        d_model: model width D; must be divisible by ``num_heads``.
        num_heads: number of heads H.
        num_kv_heads: number of key/value heads H_kv, a divisor of
            ``num_heads``; None (default) means H_kv = H, the paper's layer.
        fused: compute the attention with the framework's fused kernel
            (PyTorch: ``F.scaled_dot_product_attention``; TensorFlow: the
            same ops, left for XLA to fuse). It computes no weights.
        positions: None (the default: no positions act here, as in the
            encoder-decoder attention) or one of
            :data:`~txcourse.config.POSITIONS`; only two act here, in
            self-attention: "rope" rotates the queries and keys
            after the heads are split (:func:`apply_rotary`, Su et al. 2021)
            and "alibi" adds -m_h |i - j| to the scores (:func:`alibi_bias`,
            Press et al. 2022), both on the fused path too. The queries sit
            after the cached positions, so cached decoding equals full
            decoding; the cache holds rotated keys. The others ("sinusoidal",
            "learned": added to the embeddings) leave the attention as it is.

    Call arguments:
        query, key, value, mask: as above.
        cache: a :class:`~txcourse.cache.KVCache` of earlier positions
            (incremental decoding, Vaswani et al. 2017, Sec. 3.2.3): the
            queries attend to the cached keys and values followed by the
            projections of ``key`` and ``value``, and the layer returns the
            longer cache; it projects one new position per step, not the
            whole prefix. With ``key`` and ``value`` None the cache is
            attended as it is (the encoder memory, projected once by
            :meth:`project_key_value`).
        return_weights: also return the attention weights.

    Shape:
        query (B, T_q, D), key (B, T_k, D), value (B, T_k, D),
        mask broadcastable to (B, H, T_q, T_k) (T_k counting cached
        positions). Returns the output (B, T_q, D); with a cache or
        ``return_weights``, an :class:`~txcourse.cache.AttentionOutput`
        ``(output, cache, weights)``: the new cache, each (B, H_kv, T_k, d_k),
        and the weights (B, H, T_q, T_k) (None when fused), each None where
        not asked.

    Example:
        >>> mha = MultiHeadAttention(d_model=8, num_heads=2)
        >>> x = torch.ones(1, 3, 8)
        >>> out, _, weights = mha(x, x, x, return_weights=True)
        >>> tuple(out.shape), tuple(weights.shape)
        ((1, 3, 8), (1, 2, 3, 3))
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        fused: bool = False,
        positions: Optional[str] = None,
        num_kv_heads: Optional[int] = None,
    ):
        super().__init__()
        check_heads(d_model, num_heads, num_kv_heads, positions)  # the rules TransformerConfig applies
        self.fused = fused
        self.positions = positions
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads  # H_kv
        self.d_k = d_model // num_heads
        self.w_q = linear(d_model, d_model)  # W^Q for all heads
        self.w_k = linear(d_model, self.num_kv_heads * self.d_k)  # W^K for the H_kv key heads
        self.w_v = linear(d_model, self.num_kv_heads * self.d_k)  # W^V for the H_kv value heads
        self.w_o = linear(d_model, d_model)  # W^O

    def split_heads(self, x: torch.Tensor, num_heads: Optional[int] = None) -> torch.Tensor:
        """(B, T, h d_k) -> (B, h, T, d_k), h = ``num_heads`` (default H; H_kv for keys and values)."""
        batch, length, _ = x.shape
        heads = self.num_heads if num_heads is None else num_heads
        x = x.reshape(batch, length, heads, self.d_k)  # (B, T, h, d_k)
        return x.transpose(1, 2)  # (B, h, T, d_k)

    def expand_kv_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, H_kv, T, d_k) -> (B, H, T, d_k): key/value head j serves query heads j g .. j g + g - 1, g = H / H_kv."""
        group = self.num_heads // self.num_kv_heads  # g query heads per key/value head
        if group == 1:
            return x  # (B, H, T, d_k): multi-head attention, nothing shared
        return x.repeat_interleave(group, dim=1)  # (B, H, T, d_k): each head repeated g times, side by side

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, H, T, d_k) -> (B, T, D): the concatenation of the heads."""
        batch, _, length, _ = x.shape
        x = x.transpose(1, 2)  # (B, T, H, d_k)
        return x.reshape(batch, length, self.d_model)  # (B, T, D)

    def project_key_value(self, key: torch.Tensor, value: torch.Tensor) -> KVCache:
        """K W^K and V W^V split into heads: (B, T_k, D) -> a KVCache of (B, H_kv, T_k, d_k) each."""
        k = self.split_heads(self.w_k(key), self.num_kv_heads)  # (B, H_kv, T_k, d_k)
        v = self.split_heads(self.w_v(value), self.num_kv_heads)  # (B, H_kv, T_k, d_k)
        return KVCache(k.contiguous(), v.contiguous())  # copied once: a cached memory is not copied at every step

    def _offset(self, cache: Optional[KVCache], memory: bool) -> int:
        """The position of the first query: the number of cached positions (0 without a cache)."""
        if memory and self.positions in ("rope", "alibi"):
            raise ValueError(
                f"positions={self.positions!r} acts in self-attention only, but key and value are None "
                f"(a cache attended as it is, such as the encoder memory); build this layer with positions=None"
            )
        return 0 if cache is None else cache.key.shape[2]

    def _rotate(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        """RoPE (Su et al. 2021) on queries or keys (B, H, T, d_k) at positions offset, offset + 1, ...; else x."""
        return apply_rotary(x, offset) if self.positions == "rope" else x  # (B, H, T, d_k)

    def _check_inputs(
        self, query: torch.Tensor, key: Optional[torch.Tensor], value: Optional[torch.Tensor], cache: Optional[KVCache]
    ) -> None:
        """Debug mode (:func:`txcourse.debug_checks`): the cache's type, the inputs' dtypes and widths, and that
        key and value agree with the query."""
        V.check_cache(cache, KVCache, key is None, value is None)
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x is not None:
                check_float(name, x, self)
                V.check_width(name, tuple(x.shape), self.d_model)
        if key is not None:
            V.check_attention_inputs(tuple(query.shape), tuple(key.shape), tuple(value.shape))

    def forward(
        self,
        query: torch.Tensor,
        key: Optional[torch.Tensor],
        value: Optional[torch.Tensor],
        mask: Optional[torch.Tensor] = None,
        cache: Optional[KVCache] = None,
        return_weights: bool = False,
    ) -> Union[torch.Tensor, AttentionOutput]:
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x is not None:  # free: the rank is known without reading the tensor
                V.check_rank(name, tuple(x.shape), 3, "(B, T, D)")
        if V.debugging():
            self._check_inputs(query, key, value, cache)
        offset = self._offset(cache, key is None)  # T_cached: the position of the first query
        q = self._rotate(self.split_heads(self.w_q(query)), offset)  # (B, H, T_q, d_k)
        if cache is None:
            k, v = self.project_key_value(key, value)  # (B, H_kv, T_k, d_k) each
            k = self._rotate(k, offset)  # (B, H_kv, T_k, d_k)
        elif key is None:
            k, v = cache  # (B, H_kv, T_k, d_k) each: the memory, projected once
        else:  # self-attention: the new positions after the cached ones
            new = self.project_key_value(key, value)  # (B, H_kv, T_new, d_k) each
            k = torch.cat([cache.key, self._rotate(new.key, offset)], dim=2)  # (B, H_kv, T_cached + T_new, d_k)
            v = torch.cat([cache.value, new.value], dim=2)  # (B, H_kv, T_cached + T_new, d_k)
        k_heads, v_heads = self.expand_kv_heads(k), self.expand_kv_heads(v)  # (B, H, T_k, d_k) each
        bias = None
        if self.positions == "alibi":  # -m_h |i - j| on the scores, Press et al. (2022)
            bias = alibi_bias(self.num_heads, q.shape[2], k.shape[2], q.dtype).to(q.device)  # (H, T_q, T_k)
        if self.fused:  # the same numbers through PyTorch's fused kernel, which computes no weights
            heads, weights = fused_attention(q, k_heads, v_heads, mask, bias), None  # (B, H, T_q, d_k)
        elif cache is not None and q.shape[2] == 1 and bias is None:  # a decoding step: one query, faster on CPU
            heads, weights = one_query_attention(q, k_heads, v_heads, mask)  # (B, H, 1, d_k), (B, H, 1, T_k)
        else:
            heads, weights = scaled_dot_product_attention(
                q, k_heads, v_heads, mask, bias
            )  # (B, H, T_q, d_k), (B, H, T_q, T_k)
        output = self.w_o(self.merge_heads(heads))  # (B, T_q, D)
        if cache is None and not return_weights:
            return output
        return AttentionOutput(output, None if cache is None else KVCache(k, v), weights if return_weights else None)
