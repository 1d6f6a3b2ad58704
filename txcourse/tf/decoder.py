"""The decoder: masked self-attention, encoder-decoder attention, FFN (Vaswani et al. 2017, Sec. 3.1). Book: week 5."""

from __future__ import annotations

from typing import Optional

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.tf._checks import check_float
from txcourse.cache import DecoderCache, DecoderLayerCache
from txcourse.config import TransformerConfig
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

    Shape:
        x (B, T_tgt, D), memory (B, T_src, D);
        self_attn_mask broadcastable to (B, H, T_tgt, T_tgt) (look-ahead and
        target padding); cross_attn_mask broadcastable to (B, H, T_tgt, T_src)
        (source padding). Returns (B, T_tgt, D). ``cache``, from
        :meth:`Decoder.init_cache`, holds this layer's keys and values for
        incremental decoding.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, layer_norm_eps: float = 1e-6, fused: bool = False, **kwargs):
        super().__init__(autocast=False, **kwargs)  # inputs of another dtype raise (check_float), as in PyTorch
        V.check_probability("dropout", dropout)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, fused, name="self_attn")
        self.self_attn_norm = layer_norm(d_model, layer_norm_eps, name="self_attn_norm")
        self.cross_attn = MultiHeadAttention(d_model, num_heads, fused, name="cross_attn")
        self.cross_attn_norm = layer_norm(d_model, layer_norm_eps, name="cross_attn_norm")
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, name="feed_forward")
        self.feed_forward_norm = layer_norm(d_model, layer_norm_eps, name="feed_forward_norm")
        self.dropout = keras.layers.Dropout(dropout, name="dropout")
        self.built = True

    def call(self, x: tf.Tensor, memory: tf.Tensor,
             self_attn_mask: Optional[tf.Tensor] = None,
             cross_attn_mask: Optional[tf.Tensor] = None,
             cache: Optional[DecoderLayerCache] = None,
             training: Optional[bool] = None) -> tf.Tensor:
        check_float("x", x, self)
        check_float("memory", memory, self)
        self_cache, cross_cache = (None, None) if cache is None else (cache.self_attn, cache.cross_attn)
        if self.norm_first:
            h = self.self_attn_norm(x)  # (B, T_tgt, D)
            x = x + self.dropout(self.self_attn(h, h, h, self_attn_mask, cache=self_cache), training=training)  # (B, T_tgt, D)
            h = self.cross_attn_norm(x)  # (B, T_tgt, D)
            x = x + self.dropout(self.cross_attn(h, memory, memory, cross_attn_mask, cache=cross_cache), training=training)  # (B, T_tgt, D)
            x = x + self.dropout(self.feed_forward(self.feed_forward_norm(x)), training=training)  # (B, T_tgt, D)
        else:
            x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, self_attn_mask, cache=self_cache), training=training))  # (B, T_tgt, D)
            x = self.cross_attn_norm(x + self.dropout(self.cross_attn(x, memory, memory, cross_attn_mask, cache=cross_cache), training=training))  # (B, T_tgt, D)
            x = self.feed_forward_norm(x + self.dropout(self.feed_forward(x), training=training))  # (B, T_tgt, D)
        return x


class Decoder(keras.layers.Layer):
    """Embedding + positional encoding, then N decoder layers (Fig. 1, right).

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`.

    Shape:
        tokens (B, T_tgt) ids (the target shifted right, starting with
        <sos>), memory (B, T_src, D), masks as in :class:`DecoderLayer`.
        With ``cache`` (see :meth:`init_cache`) ``tokens`` are the next
        positions only and the self-attention mask covers (T_tgt, offset + T_tgt).
        Returns (B, T_tgt, D); :class:`~txcourse.tf.model.Transformer`
        projects it to the vocabulary.
    """

    def __init__(self, config: TransformerConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.embedding = TransformerEmbedding(config.tgt_vocab_size, config.d_model,
                                              config.max_len, config.dropout, name="embedding")
        self.layers = [
            DecoderLayer(config.d_model, config.num_heads, config.d_ff, config.dropout,
                         config.norm_first, config.layer_norm_eps, config.fused, name=f"layers_{i}")
            for i in range(config.num_decoder_layers)
        ]
        self.final_norm = layer_norm(config.d_model, config.layer_norm_eps, name="final_norm") if config.norm_first else None
        self.built = True

    def init_cache(self) -> DecoderCache:
        """An empty key/value cache: feed it to the decoder with one new token at a time."""
        return DecoderCache(len(self.layers))

    def call(self, tokens: tf.Tensor, memory: tf.Tensor,
             self_attn_mask: Optional[tf.Tensor] = None,
             cross_attn_mask: Optional[tf.Tensor] = None,
             cache: Optional[DecoderCache] = None,
             training: Optional[bool] = None) -> tf.Tensor:
        offset = 0 if cache is None else cache.offset
        x = self.embedding(tokens, offset=offset, training=training)  # (B, T_tgt, D)
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, self_attn_mask, cross_attn_mask, cache=None if cache is None else cache.layers[i], training=training)  # (B, T_tgt, D)
        if cache is not None:
            cache.offset = offset + tokens.shape[1]
        if self.final_norm is not None:
            x = self.final_norm(x)  # (B, T_tgt, D)
        return x
