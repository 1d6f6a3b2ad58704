"""The encoder: a stack of self-attention + FFN layers (Vaswani et al. 2017, Sec. 3.1). Book: week 4."""

from __future__ import annotations

import functools
from typing import Optional, Union

import keras
import tensorflow as tf

from txcourse.cache import AttentionOutput
from txcourse.config import TransformerConfig, check_config
from txcourse.tf._checks import check_float
from txcourse.tf.attention import MultiHeadAttention
from txcourse.tf.embedding import TransformerEmbedding
from txcourse.tf.feed_forward import PositionwiseFeedForward
from txcourse.tf.init import layer_norm
from txcourse.tf.residual import residual

__all__ = ["EncoderLayer", "Encoder"]


class EncoderLayer(keras.layers.Layer):
    """One encoder layer: self-attention, then the FFN, each wrapped in a residual.

    Post-LN (the paper, Sec. 3.1; dropout Sec. 5.4): x = LayerNorm(x + Dropout(Sublayer(x))).
    Pre-LN (``norm_first=True``, Xiong et al. 2020): x = x + Dropout(Sublayer(LayerNorm(x))).
    LayerNorm(x) = gamma * (x - mean) / sqrt(var + eps) + beta over the last
    dimension (Ba et al. 2016).

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`; the layer reads
            d_model, num_heads, num_kv_heads, fused and positions (its
            self-attention: "rope" and "alibi" act there, see
            :class:`MultiHeadAttention`), d_ff, dropout (P_drop on each
            sublayer output), norm_first (pre-LN) and layer_norm_eps.

    Shape:
        x (B, T, D); mask broadcastable to (B, H, T, T), ``True`` = do not
        attend (a padding mask (B, 1, 1, T)). Returns (B, T, D); with
        ``return_weights=True`` an :class:`~txcourse.cache.AttentionOutput`
        ``(output, None, weights)``, the self-attention weights (B, H, T, T)
        (None when fused).
    """

    def __init__(self, config: TransformerConfig, **kwargs):
        super().__init__(autocast=False, **kwargs)  # other dtypes raise, as in PyTorch (check_float in debug mode)
        check_config(config)
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(
            config.d_model, config.num_heads, config.fused, config.positions, config.num_kv_heads, name="self_attn"
        )
        self.self_attn_norm = layer_norm(config.d_model, config.layer_norm_eps, name="self_attn_norm")
        self.feed_forward = PositionwiseFeedForward(config.d_model, config.d_ff, name="feed_forward")
        self.feed_forward_norm = layer_norm(config.d_model, config.layer_norm_eps, name="feed_forward_norm")
        self.dropout = keras.layers.Dropout(config.dropout, name="dropout")
        self.built = True

    def call(
        self,
        x: tf.Tensor,
        mask: Optional[tf.Tensor] = None,
        return_weights: bool = False,
        training: Optional[bool] = None,
    ) -> Union[tf.Tensor, AttentionOutput]:
        check_float("x", x, self)
        dropout = functools.partial(self.dropout, training=training)
        x, _, weights = residual(
            x,
            lambda h: self.self_attn(h, h, h, mask, return_weights=True),
            self.self_attn_norm,
            dropout,
            self.norm_first,
        )  # (B, T, D), (B, H, T, T)
        x = residual(x, self.feed_forward, self.feed_forward_norm, dropout, self.norm_first)  # (B, T, D)
        return AttentionOutput(x, None, weights) if return_weights else x


class Encoder(keras.layers.Layer):
    """Embedding + positional encoding, then N encoder layers (Fig. 1, left).

    With pre-LN a final LayerNorm (``final_norm``) normalises the output;
    post-LN layers already end with one.

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`.

    Shape:
        tokens (B, T_src) ids; mask broadcastable to (B, H, T_src, T_src),
        usually ``padding_mask(tokens)``. Returns the memory (B, T_src, D);
        with ``return_weights=True`` an :class:`~txcourse.cache.AttentionOutput`
        ``(memory, None, weights)``, one (B, H, T_src, T_src) per layer.
    """

    def __init__(self, config: TransformerConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.embedding = TransformerEmbedding(config, name="embedding")
        self.layers = [EncoderLayer(config, name=f"layers_{i}") for i in range(config.num_encoder_layers)]
        self.final_norm = (
            layer_norm(config.d_model, config.layer_norm_eps, name="final_norm") if config.norm_first else None
        )
        self.built = True

    def call(
        self,
        tokens: tf.Tensor,
        mask: Optional[tf.Tensor] = None,
        return_weights: bool = False,
        training: Optional[bool] = None,
    ) -> Union[tf.Tensor, AttentionOutput]:
        x = self.embedding(tokens, training=training)  # (B, T_src, D)
        weights = []
        for layer in self.layers:
            # Keras fills an argument named `mask` itself: pass ours positionally, or not at all when None
            inputs = (x, mask) if mask is not None else (x,)
            x, _, layer_weights = layer(
                *inputs, return_weights=True, training=training
            )  # (B, T_src, D), (B, H, T_src, T_src)
            weights.append(layer_weights)
        if self.final_norm is not None:
            x = self.final_norm(x)  # (B, T_src, D)
        return AttentionOutput(x, None, tuple(weights)) if return_weights else x
