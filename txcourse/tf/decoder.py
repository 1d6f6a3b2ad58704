"""The decoder: masked self-attention, encoder-decoder attention, FFN (Vaswani et al. 2017, Sec. 3.1). Book: week 5."""

from __future__ import annotations

from typing import Optional, Union

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.cache import AttentionOutput, DecoderLayerCache, KVCache
from txcourse.config import TransformerConfig
from txcourse.tf._checks import check_float
from txcourse.tf.attention import MultiHeadAttention
from txcourse.tf.embedding import TransformerEmbedding
from txcourse.tf.feed_forward import PositionwiseFeedForward
from txcourse.tf.init import layer_norm

__all__ = ["DecoderLayer", "Decoder"]


class DecoderLayer(keras.layers.Layer):
    """One decoder layer: masked self-attention, encoder-decoder attention, FFN.

    Each of the three sublayers is wrapped as in :class:`EncoderLayer`
    (post-LN by default, pre-LN with ``norm_first``). In the second
    sublayer the queries come from the decoder and the keys and values from
    the encoder output (the memory), Sec. 3.2.3.

    Args:
        d_model: width D.
        num_heads: attention heads H.
        d_ff: inner width F of the FFN.
        dropout: P_drop on each sublayer output.
        norm_first: pre-LN instead of post-LN.
        layer_norm_eps: epsilon of the layer norms.
        fused: use the fused attention path (see :class:`MultiHeadAttention`).
        positions: one of :data:`~txcourse.config.POSITIONS`, given to the
            self-attention ("rope" and "alibi" act there; see
            :class:`MultiHeadAttention`).
        num_kv_heads: key/value heads H_kv of every attention sublayer
            (see :class:`MultiHeadAttention`); None means H.

    Shape:
        x (B, T_tgt, D), memory (B, T_src, D);
        self_attn_mask broadcastable to (B, H, T_tgt, T_tgt) (look-ahead and
        target padding); cross_attn_mask broadcastable to (B, H, T_tgt, T_src)
        (source padding). Returns (B, T_tgt, D).

        With a ``cache`` (a :class:`~txcourse.cache.DecoderLayerCache`, one
        of :meth:`Decoder.init_cache`), ``x`` holds the new positions only:
        their self-attention sees the cached keys and values, and the
        encoder-decoder attention the memory's keys and values projected
        once. With a cache or ``return_weights=True`` the layer returns an
        :class:`~txcourse.cache.AttentionOutput` ``(output, cache, weights)``:
        the updated cache (the given one is never changed) and the weights
        ``(self-attention (B, H, T_tgt, T_cached + T_tgt), encoder-decoder
        attention (B, H, T_tgt, T_src))``, each None where not asked.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-6,
        fused: bool = False,
        positions: str = "sinusoidal",
        num_kv_heads: Optional[int] = None,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)  # inputs of another dtype raise (check_float), as in PyTorch
        V.check_probability("dropout", dropout)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, fused, positions, num_kv_heads, name="self_attn")
        self.self_attn_norm = layer_norm(d_model, layer_norm_eps, name="self_attn_norm")
        self.cross_attn = MultiHeadAttention(d_model, num_heads, fused, num_kv_heads=num_kv_heads, name="cross_attn")
        self.cross_attn_norm = layer_norm(d_model, layer_norm_eps, name="cross_attn_norm")
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, name="feed_forward")
        self.feed_forward_norm = layer_norm(d_model, layer_norm_eps, name="feed_forward_norm")
        self.dropout = keras.layers.Dropout(dropout, name="dropout")
        self.built = True

    def call(
        self,
        x: tf.Tensor,
        memory: tf.Tensor,
        self_attn_mask: Optional[tf.Tensor] = None,
        cross_attn_mask: Optional[tf.Tensor] = None,
        cache: Optional[DecoderLayerCache] = None,
        return_weights: bool = False,
        training: Optional[bool] = None,
    ) -> Union[tf.Tensor, AttentionOutput]:
        check_float("x", x, self)
        check_float("memory", memory, self)
        V.check_cache(cache, DecoderLayerCache, False, False)
        self_cache, cross_cache = (None, None) if cache is None else cache
        keys = (memory, memory) if cross_cache is None else (None, None)  # with a cache: the memory projected once
        if self.norm_first:
            h = self.self_attn_norm(x)  # (B, T_tgt, D)
            attended, self_cache, self_weights = self.self_attn(
                h, h, h, self_attn_mask, self_cache, return_weights=True
            )
            x = x + self.dropout(attended, training=training)  # (B, T_tgt, D)
            h = self.cross_attn_norm(x)  # (B, T_tgt, D)
            attended, cross_cache, cross_weights = self.cross_attn(
                h, *keys, cross_attn_mask, cross_cache, return_weights=True
            )
            x = x + self.dropout(attended, training=training)  # (B, T_tgt, D)
            x = x + self.dropout(self.feed_forward(self.feed_forward_norm(x)), training=training)  # (B, T_tgt, D)
        else:
            attended, self_cache, self_weights = self.self_attn(
                x, x, x, self_attn_mask, self_cache, return_weights=True
            )
            x = self.self_attn_norm(x + self.dropout(attended, training=training))  # (B, T_tgt, D)
            attended, cross_cache, cross_weights = self.cross_attn(
                x, *keys, cross_attn_mask, cross_cache, return_weights=True
            )
            x = self.cross_attn_norm(x + self.dropout(attended, training=training))  # (B, T_tgt, D)
            x = self.feed_forward_norm(x + self.dropout(self.feed_forward(x), training=training))  # (B, T_tgt, D)
        if cache is None and not return_weights:
            return x
        return AttentionOutput(
            x,
            None if cache is None else DecoderLayerCache(self_cache, cross_cache),
            (self_weights, cross_weights) if return_weights else None,
        )


class Decoder(keras.layers.Layer):
    """Embedding + positional encoding, then N decoder layers (Fig. 1, right).

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`.

    Shape:
        tokens (B, T_tgt) ids (the target shifted right, starting with
        <sos>), memory (B, T_src, D), masks as in :class:`DecoderLayer`.
        Returns (B, T_tgt, D); :class:`~txcourse.tf.model.Transformer`
        projects it to the vocabulary.

        With a ``cache`` (see :meth:`init_cache`) ``tokens`` are the next
        positions only, placed after the T_cached positions the cache holds,
        and the self-attention mask covers (T_tgt, T_cached + T_tgt). With a
        cache or ``return_weights=True`` the decoder returns an
        :class:`~txcourse.cache.AttentionOutput` ``(output, cache, weights)``:
        the new cache and, per layer, the pair of weights of
        :class:`DecoderLayer`, each None where not asked.
    """

    def __init__(self, config: TransformerConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.embedding = TransformerEmbedding(
            config.tgt_vocab_size, config.d_model, config.max_len, config.dropout, config.positions, name="embedding"
        )
        self.layers = [
            DecoderLayer(
                config.d_model,
                config.num_heads,
                config.d_ff,
                config.dropout,
                config.norm_first,
                config.layer_norm_eps,
                config.fused,
                config.positions,
                config.num_kv_heads,
                name=f"layers_{i}",
            )
            for i in range(config.num_decoder_layers)
        ]
        self.final_norm = (
            layer_norm(config.d_model, config.layer_norm_eps, name="final_norm") if config.norm_first else None
        )
        self.built = True

    def init_cache(self, memory: tf.Tensor) -> tuple[DecoderLayerCache, ...]:
        """The cache before the first token, one DecoderLayerCache per layer: feed it with one new token at a time.

        The self-attention caches are empty (B, H_kv, 0, d_k); the
        encoder-decoder caches hold the memory (B, T_src, D) projected once
        into keys and values (B, H_kv, T_src, d_k). H_kv is
        ``config.num_kv_heads`` (``num_heads`` when None): grouped-query
        attention keeps fewer heads here, which is its saving.
        """
        d_k = self.config.d_model // self.config.num_heads
        kv_heads = self.config.num_kv_heads or self.config.num_heads  # H_kv
        empty = tf.zeros((tf.shape(memory)[0], kv_heads, 0, d_k), memory.dtype)  # (B, H_kv, 0, d_k)
        return tuple(
            DecoderLayerCache(KVCache(empty, empty), layer.cross_attn.project_key_value(memory, memory))
            for layer in self.layers
        )

    def call(
        self,
        tokens: tf.Tensor,
        memory: tf.Tensor,
        self_attn_mask: Optional[tf.Tensor] = None,
        cross_attn_mask: Optional[tf.Tensor] = None,
        cache: Optional[tuple[DecoderLayerCache, ...]] = None,
        return_weights: bool = False,
        training: Optional[bool] = None,
    ) -> Union[tf.Tensor, AttentionOutput]:
        if cache is not None and (not isinstance(cache, tuple) or len(cache) != len(self.layers)):
            got = f"a tuple of {len(cache)}" if isinstance(cache, tuple) else type(cache).__name__
            raise ValueError(
                f"cache must be a tuple of {len(self.layers)} DecoderLayerCache (one per layer, "
                f"from init_cache), got {got}"
            )
        offset = 0 if cache is None else cache[0].self_attn.key.shape[2]  # T_cached
        if offset is None:  # a compiled decoding step, traced for any length
            offset = tf.shape(cache[0].self_attn.key)[2]
        x = self.embedding(tokens, offset=offset, training=training)  # (B, T_tgt, D)
        caches, weights = [], []
        for i, layer in enumerate(self.layers):
            x, layer_cache, layer_weights = layer(
                x,
                memory,
                self_attn_mask,
                cross_attn_mask,
                None if cache is None else cache[i],
                return_weights=True,
                training=training,
            )  # (B, T_tgt, D)
            caches.append(layer_cache)
            weights.append(layer_weights)
        if self.final_norm is not None:
            x = self.final_norm(x)  # (B, T_tgt, D)
        if cache is None and not return_weights:
            return x
        return AttentionOutput(x, None if cache is None else tuple(caches), tuple(weights) if return_weights else None)
