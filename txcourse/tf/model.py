"""The encoder-decoder Transformer (Vaswani et al. 2017, Fig. 1). Book: weeks 5 and 6."""

from __future__ import annotations

from typing import Optional

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.config import TransformerConfig, check_config
from txcourse.tf._checks import check_tokens
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
        check_config(config)
        self.config = config
        self.encoder = Encoder(config, name="encoder")
        self.decoder = Decoder(config, name="decoder")
        self.output_projection = (
            None if config.tie_embeddings else linear(config.d_model, config.tgt_vocab_size, name="output_projection")
        )
        self.built = True

    def encode(self, src: tf.Tensor, training: Optional[bool] = None) -> tuple[tf.Tensor, tf.Tensor]:
        """Run the encoder. Returns the memory (B, T_src, D) and the source mask (B, 1, 1, T_src)."""
        src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, T_src)
        return self.encoder(src, src_mask, training=training), src_mask

    def decode(
        self, tgt: tf.Tensor, memory: tf.Tensor, src_mask: tf.Tensor, training: Optional[bool] = None
    ) -> tf.Tensor:
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
            return tf.tensordot(
                x, self.decoder.embedding.token_embedding.embeddings, [[x.shape.rank - 1], [1]]
            )  # (..., V_tgt)
        return self.output_projection(x)  # (..., V_tgt)

    def start_decoding(self, src: tf.Tensor, use_cache: bool = True) -> dict:
        """Encode ``src`` (B, T_src) once; returns the decoding state for :meth:`decode_step`.

        The state is a dict of tensors: the memory (B, T_src, D), the source
        mask (B, 1, 1, T_src) and either the key/value cache of
        :meth:`Decoder.init_cache` (``use_cache``) or the tokens fed so far,
        ``prefix`` (B, 0).
        """
        check_tokens("src", src, self.config.src_vocab_size, read_values=True)  # where decoding's input enters
        memory, src_mask = self.encode(src)  # (B, T_src, D), (B, 1, 1, T_src)
        state = {"memory": memory, "src_mask": src_mask}
        if use_cache:
            return {**state, "cache": self.decoder.init_cache(memory)}
        return {**state, "prefix": src[:, :0]}  # (B, 0)

    def decode_step(self, token: tf.Tensor, state: dict) -> tuple[tf.Tensor, dict, Optional[tf.Tensor]]:
        """Feed the next token (B,); returns logits (B, V_tgt), the new state and the cross-attention (B, H, T_src).

        The cross-attention is the last layer's, None when fused. ``state``
        is not changed: the new one holds the longer cache (or prefix). With
        a cache only the new token goes through the decoder; without one the
        whole prefix is recomputed (the slow way, kept to compare).
        """
        if "cache" in state:  # one new position; earlier keys and values come from the cache
            new = token[:, tf.newaxis]  # (B, 1)
            x, cache, weights = self.decoder(
                new, state["memory"], None, state["src_mask"], state["cache"], return_weights=True
            )  # (B, 1, D); no look-ahead mask: the one new position may attend to every cached one
            state = {**state, "cache": cache}
        else:  # recompute all t positions
            new = tf.concat([state["prefix"], tf.cast(token[:, tf.newaxis], state["prefix"].dtype)], axis=1)  # (B, t)
            length = new.shape[1] or tf.shape(new)[1]  # t; a tensor in a compiled step
            mask = look_ahead_mask(length)  # (t, t)
            x, _, weights = self.decoder(
                new, state["memory"], mask, state["src_mask"], return_weights=True
            )  # (B, t, D)
            state = {**state, "prefix": new}
        cross = weights[-1][1]  # (B, H, t or 1, T_src): the last layer's encoder-decoder attention
        return self.project(x[:, -1]), state, None if cross is None else cross[:, :, -1]  # (B, V_tgt), (B, H, T_src)

    def call(self, src: tf.Tensor, tgt: tf.Tensor, training: Optional[bool] = None) -> tf.Tensor:
        V.check_rank("src", tuple(src.shape), 2, "(B, T_src)")
        V.check_rank("tgt", tuple(tgt.shape), 2, "(B, T_tgt)")
        if src.shape[0] is not None and tgt.shape[0] is not None and src.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"src and tgt must have the same batch size, got src {tuple(src.shape)} and tgt {tuple(tgt.shape)}"
            )
        memory, src_mask = self.encode(src, training=training)  # (B, T_src, D), (B, 1, 1, T_src)
        return self.decode(tgt, memory, src_mask, training=training)  # (B, T_tgt, V_tgt)
