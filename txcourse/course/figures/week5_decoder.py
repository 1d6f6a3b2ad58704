"""The figures of week 5 (book/week5_decoder.md): the look-ahead mask, and that the future does not leak."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from txcourse.course.figures.recipe import Context, register, subplots, torch_no_grad
from txcourse.notebook import plots
from txcourse.notebook.plots.labels import N_, tr
from txcourse.registry import FRAMEWORKS


@register(
    "week5_look_ahead_mask",
    ["week5_decoder"],
    "fig-look-ahead",
    "Left: the look-ahead mask for six positions. Right: combined with the padding mask of a target with "
    "two <pad> tokens at the end. Dark = True = may not be attended.",
    plots.plot_mask,
    params={
        "tgt": [[1, 7, 8, 9, 0, 0]],
        "figsize": [9, 3.6],
        "titles": ["look-ahead mask", "look-ahead | target padding"],
    },
    frameworks=FRAMEWORKS,
)
def look_ahead_mask(ctx: Context, tgt, figsize, titles):
    t = len(tgt[0])
    look_ahead = ctx.numpy(ctx.lib.look_ahead_mask(t))  # (T, T)
    combined = look_ahead | ctx.numpy(ctx.lib.padding_mask(ctx.tensor(tgt, np.int64)))  # (1, 1, T, T)
    fig, axes = subplots(2, figsize)
    plots.plot_mask(look_ahead, title=titles[0], ax=axes[0])
    plots.plot_mask(combined[0, 0], title=titles[1], ax=axes[1])
    return fig


_WEEK5_MODEL = {
    "seed": 0,
    "config": {
        "src_vocab_size": 30,
        "tgt_vocab_size": 30,
        "d_model": 32,
        "num_heads": 4,
        "num_encoder_layers": 2,
        "num_decoder_layers": 2,
        "d_ff": 64,
        "dropout": 0.0,
    },
    "src": [[5, 6, 7, 8, 9, 2]],
    "tgt": [[1, 11, 12, 13, 14, 15, 16, 17]],
}


def _week5_logits(ctx: Context, seed: int, config: Mapping[str, Any], src, tgt):
    """Week 5's untrained model and its ``logits_of(tgt, causal)``."""
    import torch

    from txcourse import TransformerConfig

    txt = ctx.lib
    torch.manual_seed(seed)
    model = txt.Transformer(TransformerConfig(**config)).eval()
    src_t = torch.tensor(src)  # (B, T_src)

    def logits_of(tgt_t, causal=True):
        memory, src_mask = model.encode(src_t)
        mask = txt.padding_mask(tgt_t)  # (B, 1, 1, T)
        if causal:
            mask = mask | txt.look_ahead_mask(tgt_t.shape[1])  # (B, 1, T, T)
        return model.project(model.decoder(tgt_t, memory, mask, src_mask))  # (B, T, V)

    return model, logits_of, torch.tensor(tgt)


@register(
    "week5_no_leak",
    ["week5_decoder"],
    "fig-no-leak",
    "How much the logits at output position t (columns) change when the input token at position j (rows) "
    "is edited, scaled to the largest change, with and without the look-ahead mask.",
    plots.plot_attention,
    params={
        **_WEEK5_MODEL,
        "edit_offset": 20,
        "figsize": [10, 4.2],
        "titles": [N_("with the look-ahead mask"), N_("without it: the future leaks")],
        "xlabel": N_("output position t"),
        "ylabel": N_("edited input position j"),
        "colorbar_label": N_("change of the logits (scaled)"),
    },
)
def no_leak(ctx: Context, seed, config, src, tgt, edit_offset: int, figsize, titles, xlabel, ylabel, colorbar_label):
    _, logits_of, tgt_t = _week5_logits(ctx, seed, config, src, tgt)
    t = tgt_t.shape[1]

    def dependence(causal):
        """change[j, t] = largest change of the logits at position t when token j is edited."""
        with torch_no_grad():
            base = logits_of(tgt_t, causal)
            change = np.zeros((t, t))
            for j in range(1, t):  # position 0 is always <sos>
                edited = tgt_t.clone()
                edited[0, j] = edit_offset + j
                change[j] = (logits_of(edited, causal) - base).abs().amax(-1)[0].numpy()
        return change

    positions = [str(i) for i in range(t)]
    fig, axes = subplots(2, figsize)
    for ax, change, title in zip(axes, (dependence(True), dependence(False)), titles):
        plots.plot_attention(change[1:] / change.max(), positions, positions[1:], title=title, ax=ax)
        ax.set(xlabel=tr(xlabel), ylabel=tr(ylabel))
    for bar in fig.axes[2:]:
        bar.set_ylabel(tr(colorbar_label))
    return fig


@register(
    "week5_decoder_heads",
    ["week5_decoder"],
    "fig-decoder-heads",
    "Masked self-attention weights of the first decoder layer (four heads, untrained model): everything "
    "above the diagonal is zero.",
    plots.plot_attention_heads,
    params={**_WEEK5_MODEL, "ncols": 4, "title": "Decoder layer 1, masked self-attention"},
)
def decoder_heads(ctx: Context, seed, config, src, tgt, ncols: int, title: str):
    model, _, tgt_t = _week5_logits(ctx, seed, config, src, tgt)
    with torch_no_grad():
        memory, src_mask = model.encode(ctx.tensor(src, np.int64))
        mask = ctx.lib.padding_mask(tgt_t) | ctx.lib.look_ahead_mask(tgt_t.shape[1])  # (B, 1, T, T)
        _, _, weights = model.decoder(tgt_t, memory, mask, src_mask, return_weights=True)  # per layer: (self, cross)
    weights = weights[0][0][0]  # layer 0, self-attention, sentence 0: (H, T, T)
    positions = [str(i) for i in range(tgt_t.shape[1])]
    return plots.plot_attention_heads(weights.numpy(), positions, positions, ncols=ncols, title=title)
