"""What the attention layers take and return when decoding, shared by both frameworks. Book: week 6.

Why a key/value cache works: when the decoder generates token t, the keys
and values of positions 0..t-1 do not change (the look-ahead mask keeps
them from seeing t, Vaswani et al. 2017, Sec. 3.2.3), so they can be kept
instead of recomputed: each step then projects one new position, not the
whole prefix. The encoder memory's keys and values are the same at every
step and are projected once.

The caches are values, not containers: immutable NamedTuples of tensors
that the layers take as input and return updated, never change in place
(keras-hub's cached attention returns ``(output, cache)``, Hugging Face
returns ``past_key_values``). A decoding step is then a function of
tensors in and tensors out: TensorFlow traces it into one ``tf.function``,
and beam search reorders a cache by selecting rows of every tensor in it
(``tf.nest.map_structure``; in PyTorch ``reorder_state``).

A decoder's cache is a tuple holding one :class:`DecoderLayerCache` per
layer (``Decoder.init_cache``); how many positions it holds is the length
of its self-attention keys.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

__all__ = ["KVCache", "DecoderLayerCache", "AttentionOutput"]


class KVCache(NamedTuple):
    """Projected keys and values of one attention sublayer, each (B, H, T_cached, d_k)."""

    key: Any
    value: Any


class DecoderLayerCache(NamedTuple):
    """The two caches of one decoder layer.

    ``self_attn`` grows by the new positions at every step (it starts with
    T_cached = 0); ``cross_attn`` holds the encoder memory's keys and
    values, projected once, (B, H, T_src, d_k).
    """

    self_attn: KVCache
    cross_attn: KVCache


class AttentionOutput(NamedTuple):
    """What an attention layer (or a layer or stack built on it) returns when asked for more than its output.

    output: the layer's output.
    cache: the updated cache when one was given, else None.
    weights: the attention weights when ``return_weights=True``, else None
        (None also for the fused path, which computes no weights).
    """

    output: Any
    cache: Optional[Any] = None
    weights: Optional[Any] = None
