"""The encoder: a stack of self-attention + FFN layers (Vaswani et al. 2017, Sec. 3.1). Book: week 4."""

from __future__ import annotations

from typing import Optional, Union

import torch
from torch import nn

from txcourse.cache import AttentionOutput
from txcourse.config import TransformerConfig, check_config
from txcourse.torch._checks import check_float
from txcourse.torch.attention import MultiHeadAttention
from txcourse.torch.embedding import TransformerEmbedding
from txcourse.torch.feed_forward import PositionwiseFeedForward
from txcourse.torch.init import layer_norm
from txcourse.torch.residual import residual

__all__ = ["EncoderLayer", "Encoder"]


class EncoderLayer(nn.Module):
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

    def __init__(self, config: TransformerConfig):
        super().__init__()
        check_config(config)
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(
            config.d_model, config.num_heads, config.fused, config.positions, config.num_kv_heads
        )
        self.self_attn_norm = layer_norm(config.d_model, config.layer_norm_eps)
        self.feed_forward = PositionwiseFeedForward(config.d_model, config.d_ff)
        self.feed_forward_norm = layer_norm(config.d_model, config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, return_weights: bool = False
    ) -> Union[torch.Tensor, AttentionOutput]:
        check_float("x", x, self)
        dropout = self.dropout
        x, _, weights = residual(
            x,
            lambda h: self.self_attn(h, h, h, mask, return_weights=True),
            self.self_attn_norm,
            dropout,
            self.norm_first,
        )  # (B, T, D), (B, H, T, T)
        x = residual(x, self.feed_forward, self.feed_forward_norm, dropout, self.norm_first)  # (B, T, D)
        return AttentionOutput(x, None, weights) if return_weights else x


class Encoder(nn.Module):
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

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.embedding = TransformerEmbedding(config)
        self.layers = nn.ModuleList([EncoderLayer(config) for _ in range(config.num_encoder_layers)])
        self.final_norm = layer_norm(config.d_model, config.layer_norm_eps) if config.norm_first else None

    def forward(
        self, tokens: torch.Tensor, mask: Optional[torch.Tensor] = None, return_weights: bool = False
    ) -> Union[torch.Tensor, AttentionOutput]:
        x = self.embedding(tokens)  # (B, T_src, D)
        weights = []
        for layer in self.layers:
            x, _, layer_weights = layer(x, mask, return_weights=True)  # (B, T_src, D), (B, H, T_src, T_src)
            weights.append(layer_weights)
        if self.final_norm is not None:
            x = self.final_norm(x)  # (B, T_src, D)
        return AttentionOutput(x, None, tuple(weights)) if return_weights else x
