"""The residual connection around a sublayer: post-LN (Vaswani et al. 2017, Sec. 3.1 and 5.4) or pre-LN (Xiong et al. 2020).

Book: week 4.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Union

import keras
import tensorflow as tf

from txcourse.cache import AttentionOutput

__all__ = ["residual"]


def residual(
    x: tf.Tensor,
    sublayer: Callable[[tf.Tensor], Union[tf.Tensor, AttentionOutput]],
    norm: keras.layers.Layer,
    dropout: Callable[[tf.Tensor], tf.Tensor],
    norm_first: bool,
) -> Union[tf.Tensor, AttentionOutput]:
    """One sublayer wrapped in its residual connection and layer norm, the body every layer repeats.

    Post-LN (the paper, Sec. 3.1; dropout Sec. 5.4): LayerNorm(x + Dropout(Sublayer(x))).
    Pre-LN (``norm_first``, Xiong et al. 2020): x + Dropout(Sublayer(LayerNorm(x))).

    Args:
        x: the sublayer's input, (B, T, D).
        sublayer: a function of one (B, T, D) tensor, returning (B, T, D) or an
            :class:`~txcourse.cache.AttentionOutput` (an attention with its cache and weights).
        norm: the LayerNorm of this sublayer.
        dropout: the ``keras.layers.Dropout`` on the sublayer's output (P_drop),
            with the layer's ``training`` flag bound to it.
        norm_first: pre-LN instead of post-LN.

    Returns:
        The new x (B, T, D); when ``sublayer`` returned an AttentionOutput, that
        AttentionOutput with the new x as its output.
    """
    out = sublayer(norm(x) if norm_first else x)  # (B, T, D), or (output, cache, weights)
    attention = out if isinstance(out, AttentionOutput) else None
    y = x + dropout(out if attention is None else attention.output)  # (B, T, D)
    y = y if norm_first else norm(y)  # (B, T, D)
    return y if attention is None else attention._replace(output=y)
