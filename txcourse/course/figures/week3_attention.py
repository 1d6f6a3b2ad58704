"""The figures of week 3 (book/week3_attention.md): scaled dot-product attention, its scaling, masks, heads."""

from __future__ import annotations

import numpy as np

from txcourse.course.figures.recipe import Context, register, subplots
from txcourse.notebook import plots
from txcourse.registry import FRAMEWORKS


@register(
    "week3_attention_example",
    ["week3_attention"],
    "fig-temp-attention",
    "The weights of the three-query temp_q / temp_k example of notebook 001; each row sums to one.",
    plots.plot_attention,
    params={
        "temp_q": [[0.0, 0, 10], [0, 10, 0], [10, 10, 0]],
        "temp_k": [[10.0, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]],
        "temp_v": [[1.0, 0], [10, 0], [100, 5], [1000, 6]],
        "key_labels": ["k1", "k2", "k3", "k4"],
        "query_labels": ["(0,0,10)", "(0,10,0)", "(10,10,0)"],
        "title": "temp_q against temp_k",
    },
    frameworks=FRAMEWORKS,
)
def attention_example(ctx: Context, temp_q, temp_k, temp_v, key_labels, query_labels, title: str):
    _, attn = ctx.lib.scaled_dot_product_attention(*(ctx.tensor(a, np.float32) for a in (temp_q, temp_k, temp_v)))
    return plots.plot_attention(ctx.numpy(attn), key_labels, query_labels, title=title)  # (T_q, T_k)


@register(
    "week3_scaling",
    ["week3_attention"],
    "fig-scaling",
    "The same random queries and keys (d_k = 256) without and with the division by sqrt(d_k): unscaled, "
    "most rows are nearly one-hot (the softmax saturates).",
    plots.plot_attention,
    params={
        "seed": 1,
        "n": 8,
        "d_k": 256,
        "figsize": [10, 4.2],
        "titles": ["softmax(QK^T), unscaled", "softmax(QK^T / sqrt(d_k))"],
    },
)
def scaling(ctx: Context, seed: int, n: int, d_k: int, figsize, titles):
    import torch

    sdpa = ctx.lib.scaled_dot_product_attention
    gen = torch.Generator().manual_seed(seed)
    queries, keys = torch.randn(n, d_k, generator=gen), torch.randn(n, d_k, generator=gen)  # (T, d_k)
    _, w_scaled = sdpa(queries, keys, torch.zeros(n, 1))
    _, w_unscaled = sdpa(queries * d_k**0.5, keys, torch.zeros(n, 1))  # undoes the division
    fig, axes = subplots(2, figsize)
    plots.plot_attention(w_unscaled.numpy(), title=titles[0], ax=axes[0])
    plots.plot_attention(w_scaled.numpy(), title=titles[1], ax=axes[1])
    return fig


@register(
    "week3_padding_mask",
    ["week3_attention"],
    "fig-padding-mask",
    "The padding mask of [[5, 7, 9, 0, 0]] broadcast to all five queries; dark = True = may not be attended.",
    plots.plot_mask,
    params={"tokens": [[5, 7, 9, 0, 0]], "title": "padding mask"},
    frameworks=FRAMEWORKS,
)
def padding_mask(ctx: Context, tokens, title: str):
    mask = ctx.numpy(ctx.lib.padding_mask(ctx.tensor(tokens, np.int64)))  # (1, 1, 1, T)
    t = mask.shape[-1]
    return plots.plot_mask(np.broadcast_to(mask[0, 0], (t, t)), title=title)


@register(
    "week3_attention_heads",
    ["week3_attention"],
    "fig-heads-untrained",
    "The four heads of an untrained MultiHeadAttention (d_model = 32) on nine random token vectors.",
    plots.plot_attention_heads,
    params={
        "seed": 3,
        "d_model": 32,
        "num_heads": 4,
        "words": "A dog ate the food because it was hungry",
        "ncols": 4,
        "title": "Self-attention of an untrained layer, one map per head",
    },
)
def attention_heads(ctx: Context, seed: int, d_model: int, num_heads: int, words: str, ncols: int, title: str):
    import torch

    words_list = words.split()
    torch.manual_seed(seed)
    mha = ctx.lib.MultiHeadAttention(d_model=d_model, num_heads=num_heads).eval()
    x = torch.randn(1, len(words_list), d_model)  # (B, T, D)
    with torch.no_grad():
        _, _, weights = mha(x, x, x, return_weights=True)  # (B, H, T, T)
    return plots.plot_attention_heads(
        weights[0].numpy(),
        words_list,
        words_list,  # (H, T, T)
        ncols=ncols,
        title=title,
    )
