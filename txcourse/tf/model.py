"""The encoder-decoder Transformer (Vaswani et al. 2017, Fig. 1). Book: weeks 5 and 6."""

from __future__ import annotations

from typing import Optional

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.config import TransformerConfig
from txcourse.tf.decoder import Decoder
from txcourse.tf.encoder import Encoder
from txcourse.tf.init import linear
from txcourse.tf.masks import look_ahead_mask, padding_mask

__all__ = ["Transformer"]


class Transformer(keras.Model):
    """Encoder, decoder and the final linear layer to the target vocabulary.

    The softmax of Fig. 1 is left to the loss (it takes logits). With
    ``config.tie_embeddings`` the final linear layer reuses the target
    embedding matrix (Sec. 3.4, Press & Wolf 2017) and has no weights of its
    own; otherwise it is ``output_projection``.

    Args:
        config: a :class:`~txcourse.config.TransformerConfig`.

    Shape:
        src (B, T_src) ids, tgt (B, T_tgt) ids (decoder input: <sos> + target).
        Returns logits (B, T_tgt, V_tgt).

    Example:
        >>> model = Transformer(TransformerConfig(src_vocab_size=10, tgt_vocab_size=12,
        ...     d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32))
        >>> model(tf.ones((2, 5), tf.int32), tf.ones((2, 3), tf.int32)).shape
        TensorShape([2, 3, 12])
    """

    def __init__(self, config: TransformerConfig, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(config, TransformerConfig):
            raise ValueError(f"config must be a TransformerConfig, got {type(config).__name__}")
        self.config = config
        self.encoder = Encoder(config, name="encoder")
        self.decoder = Decoder(config, name="decoder")
        self.output_projection = None if config.tie_embeddings else linear(config.d_model, config.tgt_vocab_size, name="output_projection")
        self.built = True

    def encode(self, src: tf.Tensor, training: Optional[bool] = None) -> tuple[tf.Tensor, tf.Tensor]:
        """Run the encoder. Returns the memory (B, T_src, D) and the source mask (B, 1, 1, T_src)."""
        src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, T_src)
        return self.encoder(src, src_mask, training=training), src_mask

    def decode(self, tgt: tf.Tensor, memory: tf.Tensor, src_mask: tf.Tensor,
               training: Optional[bool] = None) -> tf.Tensor:
        """Run the decoder (teacher forcing) and the final linear layer. Returns logits (B, T_tgt, V_tgt)."""
        V.check_rank("tgt", tuple(tgt.shape), 2, "(B, T_tgt)")
        length = tgt.shape[1] if tgt.shape[1] is not None else tf.shape(tgt)[1]
        tgt_mask = tf.logical_or(look_ahead_mask(length), padding_mask(tgt, self.config.pad_id))  # (B, 1, T_tgt, T_tgt)
        x = self.decoder(tgt, memory, tgt_mask, src_mask, training=training)  # (B, T_tgt, D)
        return self.project(x)  # (B, T_tgt, V_tgt)

    def project(self, x: tf.Tensor) -> tf.Tensor:
        """The final linear layer: (..., D) -> logits (..., V_tgt)."""
        if self.output_projection is None:
            # tensordot, not einsum("...d,vd->...v"): TF's gradient of that einsum builds a (B, T, V, D) tensor
            return tf.tensordot(x, self.decoder.embedding.token_embedding.embeddings, [[x.shape.rank - 1], [1]])  # (..., V_tgt)
        return self.output_projection(x)  # (..., V_tgt)

    def start_decoding(self, src: tf.Tensor, use_cache: bool = True) -> dict:
        """Encode ``src`` once and return the decoding state for :meth:`decode_step`."""
        memory, src_mask = self.encode(src)  # (B, T_src, D), (B, 1, 1, T_src)
        return {"memory": memory, "src_mask": src_mask, "prefix": src[:, :0],
                "cache": self.decoder.init_cache() if use_cache else None}

    def decode_step(self, token: tf.Tensor, state: dict) -> tuple[tf.Tensor, tf.Tensor]:
        """Feed the next token (B,); returns logits (B, V_tgt) and cross-attention (B, H, T_src) (None when fused).

        With a cache only the new token goes through the decoder; without
        one the whole prefix is recomputed (the slow way, kept to compare).
        """
        token = tf.cast(token[:, tf.newaxis], state["prefix"].dtype)  # (B, 1)
        state["prefix"] = tf.concat([state["prefix"], token], axis=1)  # (B, t)
        cache = state["cache"]
        if cache is None:  # recompute all t positions
            length = state["prefix"].shape[1] or tf.shape(state["prefix"])[1]  # t; a tensor in a compiled step
            new, mask = state["prefix"], look_ahead_mask(length)  # (B, t), (t, t)
        else:  # one new position; earlier keys and values come from the cache
            new, mask = token, look_ahead_mask(1, cache.offset)  # (B, 1), (1, t)
        x = self.decoder(new, state["memory"], mask, state["src_mask"], cache=cache)  # (B, t or 1, D)
        weights = self.decoder.layers[-1].cross_attn.attention_weights  # (B, H, t or 1, T_src)
        return self.project(x[:, -1]), None if weights is None else weights[:, :, -1]  # (B, V_tgt), (B, H, T_src)

    def call(self, src: tf.Tensor, tgt: tf.Tensor, training: Optional[bool] = None) -> tf.Tensor:
        V.check_rank("src", tuple(src.shape), 2, "(B, T_src)")
        V.check_rank("tgt", tuple(tgt.shape), 2, "(B, T_tgt)")
        if src.shape[0] is not None and tgt.shape[0] is not None and src.shape[0] != tgt.shape[0]:
            raise ValueError(f"src and tgt must have the same batch size, got src {tuple(src.shape)} "
                             f"and tgt {tuple(tgt.shape)}")
        memory, src_mask = self.encode(src, training=training)  # (B, T_src, D), (B, 1, 1, T_src)
        return self.decode(tgt, memory, src_mask, training=training)  # (B, T_tgt, V_tgt)
