"""The figures of week 6, decoding (book/week6_decoding.md): the trained model's attention, head by head
and map by map.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from txcourse.course.artefacts import TRANSFORMER_CHECKPOINT
from txcourse.course.figures.recipe import Context, decoded_tokens, load_checkpoint, register, torch_no_grad
from txcourse.notebook import plots
from txcourse.notebook.plots.labels import N_, tr


def _test_source(
    ctx: Context, meta: Mapping[str, Any], src_tok: Any, split: str, min_src_tokens: int, max_src_tokens: int
) -> str:
    from txcourse.data import get_task

    task = meta.get("task")
    if not task:
        raise ValueError(f"{TRANSFORMER_CHECKPOINT} does not record its task (was it written by txcourse train?)")
    pairs = get_task(task["name"], **task["kwargs"])[split]
    source = next((s for s, _ in pairs if min_src_tokens <= len(src_tok.encode(s)) <= max_src_tokens), None)
    if source is None:
        raise ValueError(
            f"no {split} sentence of {task['name']!r} has {min_src_tokens} to {max_src_tokens} source tokens"
        )
    return source


@register(
    "week6_attention_heads",
    ["week6_decoding"],
    "fig-trained-heads",
    "Encoder-decoder attention of the last decoder layer of the trained Transformer, one panel per head: "
    "rows are the generated characters, columns the English source tokens.",
    plots.plot_attention_heads,
    params={
        "split": "test",
        "min_src_tokens": 5,
        "max_src_tokens": 8,
        "ncols": 2,
        "space": "\u2423",
        "title": N_("Encoder-decoder attention, last decoder layer"),
    },
    inputs=[TRANSFORMER_CHECKPOINT],
)
def trained_heads(
    ctx: Context, split: str, min_src_tokens: int, max_src_tokens: int, ncols: int, space: str, title: str
):
    model, meta, src_tok, tgt_tok = load_checkpoint(ctx, TRANSFORMER_CHECKPOINT, "transformer")
    source = _test_source(ctx, meta, src_tok, split, min_src_tokens, max_src_tokens)
    ids = [src_tok.encode(source)]  # (1, T_src)
    out = ctx.fw.greedy_decode(model, ctx.tensor(ids))  # attention (1, H, T_out, T_src)
    tokens, length = decoded_tokens(ctx, out, tgt_tok.eos_id)
    return plots.plot_attention_heads(
        ctx.numpy(out.attention)[0, :, :length],
        [src_tok.id_to_token(i) for i in ids[0]],
        [tgt_tok.id_to_token(i).replace(" ", space) for i in tokens[:length]],
        ncols=ncols,
        title=title,
    )


def trained_attention(ctx: Context, model: Any, src_ids: Sequence[int], tgt_in: Sequence[int]) -> dict:
    """Every attention map of a teacher-forced pass: ``{(kind, layer): (H, T_q, T_k)}``.

    ``kind`` is "encoder self", "decoder self" or "cross" (encoder-decoder);
    the model must be built with ``fused=False`` (the fused kernel computes no weights: it returns None).
    """
    src, tgt = ctx.tensor([list(src_ids)]), ctx.tensor([list(tgt_in)])  # (1, T_src), (1, T_tgt)
    lib, length = ctx.lib, len(tgt_in)
    if ctx.framework == "torch":
        model.eval()
    with torch_no_grad() if ctx.framework == "torch" else contextlib.nullcontext():
        src_mask = lib.padding_mask(src, model.config.pad_id)  # (1, 1, 1, T_src)
        memory, _, encoder_weights = model.encoder(src, src_mask, return_weights=True)  # (1, T_src, D)
        tgt_mask = ctx.numpy(lib.look_ahead_mask(length)) | ctx.numpy(lib.padding_mask(tgt))  # (1, 1, T, T)
        _, _, decoder_weights = model.decoder(tgt, memory, ctx.tensor(tgt_mask), src_mask, return_weights=True)
    weights = {
        "encoder self": list(encoder_weights),
        "decoder self": [w[0] for w in decoder_weights],
        "cross": [w[1] for w in decoder_weights],
    }
    maps = {}
    for kind, layers in weights.items():
        for i, layer_weights in enumerate(layers):
            if layer_weights is None:
                raise ValueError(
                    "the model computes no attention weights (built with fused=True?): "
                    "load it with fused=False to plot them"
                )
            maps[(kind, i)] = ctx.numpy(layer_weights)[0]  # (H, T_q, T_k)
    return maps


# the kinds of attention map, as the panel titles name them (translated when drawn: labels.py)
KINDS = {"encoder self": N_("encoder self"), "decoder self": N_("decoder self"), "cross": N_("cross")}


@register(
    "week6_attention_maps",
    ["week6_decoding"],
    "fig-trained-attention-maps",
    "Every attention map of the trained Transformer for one test number, teacher-forced on its greedy "
    "translation: one row per kind and layer (encoder self-attention, decoder self-attention, "
    "encoder-decoder attention), one column per head, each row on its own colour scale.",
    plots.plot_attention_heads,
    params={
        "split": "test",
        "min_src_tokens": 3,
        "max_src_tokens": 4,
        "space": "\u2423",
        "title": N_("All attention maps of the trained model"),
    },
    inputs=[TRANSFORMER_CHECKPOINT],
)
def attention_maps(ctx: Context, split: str, min_src_tokens: int, max_src_tokens: int, space: str, title: str):
    import matplotlib.pyplot as plt

    model, meta, src_tok, tgt_tok = load_checkpoint(ctx, TRANSFORMER_CHECKPOINT, "transformer")
    source = _test_source(ctx, meta, src_tok, split, min_src_tokens, max_src_tokens)
    src_ids = src_tok.encode(source)
    tokens, length = decoded_tokens(ctx, ctx.fw.greedy_decode(model, ctx.tensor([src_ids])), tgt_tok.eos_id)
    tgt_in = [tgt_tok.sos_id] + tokens[: length - 1]  # the decoder's inputs: <sos> and its own outputs
    maps = trained_attention(ctx, model, src_ids, tgt_in)
    src_labels = [src_tok.id_to_token(i) for i in src_ids]
    in_labels = [tgt_tok.id_to_token(i).replace(" ", space) for i in tgt_in]
    out_labels = [tgt_tok.id_to_token(i).replace(" ", space) for i in tokens[:length]]
    heads = next(iter(maps.values())).shape[0]
    fig, grid = plt.subplots(
        len(maps), heads, squeeze=False, layout="constrained", figsize=(2.3 * heads + 1.2, 2.3 * len(maps) + 0.6)
    )
    for row, ((kind, layer), weights) in zip(grid, maps.items()):
        keys, queries = {
            "encoder self": (src_labels, src_labels),
            "decoder self": (in_labels, in_labels),
            "cross": (src_labels, out_labels),
        }[kind]
        plots.plot_attention_heads(weights, keys, queries, ax=row)
        for h, ax in enumerate(row):
            title_of = tr("{kind}, layer {layer}, head {head}")
            ax.set_title(title_of.format(kind=tr(KINDS[kind]), layer=layer, head=h), fontsize="small")
            ax.set_xlabel(tr("keys") if kind != "cross" else tr("source (keys)"), fontsize="small")
            ax.set_ylabel(tr("queries"), fontsize="small")
            ax.tick_params(labelsize="x-small")
    fig.suptitle(f"{tr(title)}: {source}")
    return fig
