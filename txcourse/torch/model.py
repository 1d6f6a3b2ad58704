"""The encoder-decoder Transformer (Vaswani et al. 2017, Fig. 1). Book: weeks 5 and 6."""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from txcourse import _validation as V
from txcourse.config import TransformerConfig, check_config
from txcourse.torch._checks import check_tokens
from txcourse.torch.decoder import Decoder
from txcourse.torch.encoder import Encoder
from txcourse.torch.init import linear
from txcourse.torch.masks import look_ahead_mask, padding_mask

__all__ = ["Transformer"]


class Transformer(nn.Module):
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
        >>> model(torch.ones(2, 5, dtype=torch.long), torch.ones(2, 3, dtype=torch.long)).shape
        torch.Size([2, 3, 12])
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        check_config(config)
        self.config = config
        self.encoder = Encoder(config)
        self.decoder = Decoder(config)
        self.output_projection = None if config.tie_embeddings else linear(config.d_model, config.tgt_vocab_size)

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Run the encoder. Returns the memory (B, T_src, D) and the source mask (B, 1, 1, T_src)."""
        src_mask = padding_mask(src, self.config.pad_id)  # (B, 1, 1, T_src)
        return self.encoder(src, src_mask), src_mask

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor) -> torch.Tensor:
        """Run the decoder (teacher forcing) and the final linear layer. Returns logits (B, T_tgt, V_tgt)."""
        V.check_rank("tgt", tuple(tgt.shape), 2, "(B, T_tgt)")
        tgt_mask = look_ahead_mask(tgt.shape[1]).to(tgt.device) | padding_mask(
            tgt, self.config.pad_id
        )  # (B, 1, T_tgt, T_tgt)
        x = self.decoder(tgt, memory, tgt_mask, src_mask)  # (B, T_tgt, D)
        return self.project(x)  # (B, T_tgt, V_tgt)

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """The final linear layer: (..., D) -> logits (..., V_tgt)."""
        if self.output_projection is None:
            # F.linear, not tensordot: under CUDA autocast tensordot ran in float32 (no tensor cores; an H100 profile)
            return F.linear(x, self.decoder.embedding.token_embedding.weight)  # (..., V_tgt)
        return self.output_projection(x)  # (..., V_tgt)

    def start_decoding(self, src: torch.Tensor, use_cache: bool = True) -> dict:
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

    def decode_step(self, token: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict, Optional[torch.Tensor]]:
        """Feed the next token (B,); returns logits (B, V_tgt), the new state and the cross-attention (B, H, T_src).

        The cross-attention is the last layer's, None when fused. ``state``
        is not changed: the new one holds the longer cache (or prefix). With
        a cache only the new token goes through the decoder; without one the
        whole prefix is recomputed (the slow way, kept to compare).
        """
        if "cache" in state:  # one new position; earlier keys and values come from the cache
            new = token[:, None]  # (B, 1)
            x, cache, weights = self.decoder(
                new, state["memory"], None, state["src_mask"], state["cache"], return_weights=True
            )  # (B, 1, D); no look-ahead mask: the one new position may attend to every cached one
            state = {**state, "cache": cache}
        else:  # recompute all t positions
            new = torch.cat([state["prefix"], token[:, None]], dim=1)  # (B, t)
            mask = look_ahead_mask(new.shape[1])  # (t, t)
            x, _, weights = self.decoder(
                new, state["memory"], mask.to(new.device), state["src_mask"], return_weights=True
            )  # (B, t, D)
            state = {**state, "prefix": new}
        cross = weights[-1][1]  # (B, H, t or 1, T_src): the last layer's encoder-decoder attention
        return self.project(x[:, -1]), state, None if cross is None else cross[:, :, -1]  # (B, V_tgt), (B, H, T_src)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        V.check_rank("src", tuple(src.shape), 2, "(B, T_src)")
        V.check_rank("tgt", tuple(tgt.shape), 2, "(B, T_tgt)")
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"src and tgt must have the same batch size, got src {tuple(src.shape)} and tgt {tuple(tgt.shape)}"
            )
        memory, src_mask = self.encode(src)  # (B, T_src, D), (B, 1, 1, T_src)
        return self.decode(tgt, memory, src_mask)  # (B, T_tgt, V_tgt)
