"""The figure of week 4 (book/week4_encoder.md): an encoder's input and the output of its first layer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from txcourse.course.figures.recipe import Context, register, subplots
from txcourse.notebook import plots


@register(
    "week4_encoder_representations",
    ["week4_encoder"],
    "fig-encoder-activations",
    "Left: the input of a random encoder (sqrt(d) * embedding + positional encoding) for 12 tokens, "
    "d_model = 64. Right: the output of its first post-LN layer; every row has mean 0 and variance 1.",
    plots.plot_positional_encoding,
    params={
        "seed": 0,
        "config": {
            "src_vocab_size": 50,
            "tgt_vocab_size": 50,
            "d_model": 64,
            "num_heads": 4,
            "num_encoder_layers": 2,
            "num_decoder_layers": 2,
            "d_ff": 256,
            "dropout": 0.0,
        },
        "num_tokens": 12,
        "figsize": [11, 3.6],
        "titles": ["input: sqrt(d) * embedding + PE", "after encoder layer 1 (post-LN)"],
    },
)
def encoder_representations(ctx: Context, seed: int, config: Mapping[str, Any], num_tokens: int, figsize, titles):
    import torch

    from txcourse import TransformerConfig

    torch.manual_seed(seed)
    cfg = TransformerConfig(**config)
    encoder = ctx.lib.Encoder(cfg).eval()
    tokens = torch.randint(1, cfg.src_vocab_size, (1, num_tokens))  # (B, T_src)
    with torch.no_grad():
        h0 = encoder.embedding(tokens)  # (1, T_src, D)
        h1 = encoder.layers[0](h0, ctx.lib.padding_mask(tokens))  # (1, T_src, D)
    fig, axes = subplots(2, figsize)
    plots.plot_positional_encoding(h0[0].numpy(), title=titles[0], ax=axes[0])
    plots.plot_positional_encoding(h1[0].numpy(), title=titles[1], ax=axes[1])
    return fig
