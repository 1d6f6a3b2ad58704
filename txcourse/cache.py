"""Key/value caches for incremental decoding, shared by both frameworks. Book: week 6.

When the decoder generates token t, the keys and values of positions
0..t-1 do not change (the look-ahead mask keeps them from seeing t), so
they can be kept instead of recomputed: each step then projects one new
position, not the whole prefix. The encoder memory's keys and values are
the same at every step and are projected once.

These are plain Python objects holding framework tensors, so Keras passes
them through its layers untouched (it copies dicts and lists).
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["KVCache", "DecoderLayerCache", "DecoderCache"]


class KVCache:
    """Projected keys and values of one attention sublayer, shape (B, H, T_cached, d_k).

    Args:
        static: ``False`` for self-attention (each call appends the new
            positions); ``True`` for encoder-decoder attention (the memory
            is projected on the first call and reused).
    """

    def __init__(self, static: bool = False):
        self.static = static
        self.key: Optional[Any] = None
        self.value: Optional[Any] = None

    def __repr__(self) -> str:
        shape = None if self.key is None else tuple(self.key.shape)
        return f"KVCache(static={self.static}, key={shape})"


class DecoderLayerCache:
    """The two caches of one decoder layer."""

    def __init__(self):
        self.self_attn = KVCache(static=False)
        self.cross_attn = KVCache(static=True)


class DecoderCache:
    """Caches for every decoder layer, and ``offset``: how many positions are cached."""

    def __init__(self, num_layers: int):
        self.offset = 0
        self.layers = [DecoderLayerCache() for _ in range(num_layers)]

    def tensors(self) -> list[KVCache]:
        """Every KVCache, for reordering beams."""
        return [c for layer in self.layers for c in (layer.self_attn, layer.cross_attn)]

    def __repr__(self) -> str:
        return f"DecoderCache(offset={self.offset}, layers={len(self.layers)})"
