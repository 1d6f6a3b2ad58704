"""The figure after week 6 (book/bert_gpt.md): one layer's attention under BERT's and GPT's masks."""

from __future__ import annotations

from txcourse.config import TransformerConfig
from txcourse.course.figures.recipe import Context, register, subplots
from txcourse.notebook import plots


@register(
    "bert_gpt_attention",
    ["bert_gpt"],
    "fig-bert-gpt-attention",
    "Self-attention weights (head 0, first layer) of the same untrained layer with a padding mask "
    "(BERT-style, left) and a look-ahead mask (GPT-style, right).",
    plots.plot_attention,
    params={
        "seed": 0,
        "vocab_size": 100,
        "d_model": 32,
        "num_heads": 4,
        "d_ff": 64,
        "max_len": 64,
        "num_layers": 2,
        "tokens": [[11, 12, 13, 14, 15, 16]],
        "figsize": [10, 4],
        "titles": ["BERT (padding mask)", "GPT (look-ahead mask)"],
    },
)
def bert_gpt_attention(
    ctx: Context,
    seed: int,
    vocab_size: int,
    d_model: int,
    num_heads: int,
    d_ff: int,
    max_len: int,
    num_layers: int,
    tokens,
    figsize,
    titles,
):
    import torch

    txt = ctx.lib
    torch.manual_seed(seed)
    embed = txt.TransformerEmbedding(
        TransformerConfig(src_vocab_size=vocab_size, d_model=d_model, max_len=max_len, dropout=0.0)
    ).eval()
    layers = [
        txt.EncoderLayer(TransformerConfig(d_model=d_model, num_heads=num_heads, d_ff=d_ff, dropout=0.0)).eval()
        for _ in range(num_layers)
    ]
    tokens_t = torch.tensor(tokens)  # (B, T)
    t = tokens_t.shape[1]
    masks = [txt.padding_mask(tokens_t), txt.look_ahead_mask(t) | txt.padding_mask(tokens_t)]
    labels = [f"x{i}" for i in range(1, t + 1)]
    fig, axes = subplots(2, figsize)
    with torch.no_grad():
        for ax, mask, title in zip(axes, masks, titles):
            x = embed(tokens_t)  # (B, T, D)
            weights = []
            for layer in layers:
                x, _, layer_weights = layer(x, mask, return_weights=True)  # (B, T, D), (B, H, T, T)
                weights.append(layer_weights)
            plots.plot_attention(weights[0][0, 0].numpy(), labels, labels, title=title, ax=ax)
    return fig
