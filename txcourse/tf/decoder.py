"""The decoder: masked self-attention, encoder-decoder attention, FFN (Vaswani et al. 2017, Sec. 3.1). Book: week 5."""

from __future__ import annotations

import functools
from typing import Optional, Union

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.cache import AttentionOutput, DecoderLayerCache, KVCache
from txcourse.config import TransformerConfig, check_config
from txcourse.tf._checks import check_float
from txcourse.tf.attention import MultiHeadAttention
from txcourse.tf.embedding import TransformerEmbedding
from txcourse.tf.feed_forward import PositionwiseFeedForward
from txcourse.tf.init import layer_norm
from txcourse.tf.residual import residual

__all__ = ["DecoderLayer", "Decoder"]


class DecoderLayer(keras.layers.Layer):
    """One decoder layer: masked self-attention, encoder-decoder attention, FFN.

    Each of the three sublayers is wrapped as in :class:`EncoderLayer`
    (post-LN by default, pre-LN with ``norm_first``). In the second
    sublayer the queries come from the decoder and the keys and values from
    the encoder output (the memory), Sec. 3.2.3.

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`; the layer reads
            what :class:`EncoderLayer` reads. Its positions act in the
            self-attention only; the encoder-decoder attention gets none
            (``positions=None``: the memory's positions are not the
            decoder's).

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

    def __init__(self, config: TransformerConfig, **kwargs):
        super().__init__(autocast=False, **kwargs)  # other dtypes raise, as in PyTorch (check_float in debug mode)
        check_config(config)
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(
            config.d_model, config.num_heads, config.fused, config.positions, config.num_kv_heads, name="self_attn"
        )
        self.self_attn_norm = layer_norm(config.d_model, config.layer_norm_eps, name="self_attn_norm")
        self.cross_attn = MultiHeadAttention(
            config.d_model, config.num_heads, config.fused, None, config.num_kv_heads, name="cross_attn"
        )
        self.cross_attn_norm = layer_norm(config.d_model, config.layer_norm_eps, name="cross_attn_norm")
        self.feed_forward = PositionwiseFeedForward(config.d_model, config.d_ff, name="feed_forward")
        self.feed_forward_norm = layer_norm(config.d_model, config.layer_norm_eps, name="feed_forward_norm")
        self.dropout = keras.layers.Dropout(config.dropout, name="dropout")
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
        if V.debugging():
            V.check_cache(cache, DecoderLayerCache, False, False)
        self_cache, cross_cache = (None, None) if cache is None else cache
        keys = (memory, memory) if cross_cache is None else (None, None)  # with a cache: the memory projected once
        wrap = (functools.partial(self.dropout, training=training), self.norm_first)
        x, self_cache, self_weights = residual(
            x,
            lambda h: self.self_attn(h, h, h, self_attn_mask, self_cache, return_weights=True),
            self.self_attn_norm,
            *wrap,
        )  # (B, T_tgt, D), cache, (B, H, T_tgt, T_cached + T_tgt)
        x, cross_cache, cross_weights = residual(
            x,
            lambda h: self.cross_attn(h, *keys, cross_attn_mask, cross_cache, return_weights=True),
            self.cross_attn_norm,
            *wrap,
        )  # (B, T_tgt, D), cache, (B, H, T_tgt, T_src)
        x = residual(x, self.feed_forward, self.feed_forward_norm, *wrap)  # (B, T_tgt, D)
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
        self.embedding = TransformerEmbedding(config, target=True, name="embedding")
        self.layers = [DecoderLayer(config, name=f"layers_{i}") for i in range(config.num_decoder_layers)]
        self.final_norm = (
            layer_norm(config.d_model, config.layer_norm_eps, name="final_norm") if config.norm_first else None
        )
        self.built = True

    def init_cache(self, memory: tf.Tensor) -> tuple[DecoderLayerCache, ...]:
        """The cache before the first token, one DecoderLayerCache per layer: feed it with one new token at a time.

        The self-attention caches are empty (B, H_kv, 0, d_k); the
        encoder-decoder caches hold the memory (B, T_src, D) projected once
        into keys and values (B, H_kv, T_src, d_k). H_kv is
        ``config.kv_heads`` (``num_kv_heads``, or ``num_heads`` when None): grouped-query
        attention keeps fewer heads here, which is its saving.
        """
        d_k, kv_heads = self.config.d_k, self.config.kv_heads  # d_k, H_kv
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
