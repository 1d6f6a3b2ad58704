"""The figures of week 1 (book/week1_seq2seq.md): accuracy by source length, Bahdanau's alignment."""

from __future__ import annotations

import json
from collections.abc import Mapping

from txcourse.course.figures.recipe import Context, decoded_tokens, load_checkpoint, register
from txcourse.notebook import plots
from txcourse.notebook.plots.labels import N_, tr

LENGTH_CURVES = "benchmarks/results/length_curves.json"
BAHDANAU_CHECKPOINT = "book/data/numbers-bahdanau-torch.npz"


@register(
    "week1_accuracy_by_length",
    ["week1_seq2seq"],
    "fig-length-curves",
    "Exact match on the test split against the length of the source, one line per model, after the same "
    "number of training steps (benchmarks/length_curves.py).",
    plots.plot_accuracy_by_length,
    params={
        # the legend's words: plot_accuracy_by_length translates them (labels.py)
        "labels": {
            "transformer": N_("Transformer"),
            "bahdanau": N_("GRU + Bahdanau attention"),
            "seq2seq": N_("GRU, fixed context"),
        },
        "title": N_("{task}: exact match by source length"),
    },
    inputs=[LENGTH_CURVES],
    frameworks=(),
)
def accuracy_by_length(ctx: Context, labels: Mapping[str, str], title: str):
    from txcourse.evaluation.metrics import LengthBucket

    try:
        results = json.loads(ctx.path(LENGTH_CURVES).read_text(encoding="utf-8"))
        curves = {
            labels.get(kind, kind): [LengthBucket(*bucket) for bucket in model["by_length"]]
            for kind, model in results["models"].items()
        }
        task = results["task"]
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as err:
        raise ValueError(
            f"{LENGTH_CURVES} is not in the format benchmarks/length_curves.py writes "
            f"({{'task': ..., 'models': {{kind: {{'by_length': [[low, high, count, exact_match], "
            f"...]}}}}}}): {type(err).__name__}: {err}"
        ) from None
    return plots.plot_accuracy_by_length(curves, title=tr(title).format(task=task))


@register(
    "week1_bahdanau_alignment",
    ["week1_seq2seq"],
    "fig-bahdanau-alignment",
    "Bahdanau attention weights of the trained GRU while it translates one number: rows are the "
    "generated Korean characters, columns the English source tokens.",
    plots.plot_attention,
    params={
        "sentence": "seven thousand, eight hundred and one",
        "title": N_("Bahdanau attention: {sentence}"),
        "space": "\u2423",
    },
    inputs=[BAHDANAU_CHECKPOINT],
)
def bahdanau_alignment(ctx: Context, sentence: str, title: str, space: str):
    model, _, src_tok, tgt_tok = load_checkpoint(ctx, BAHDANAU_CHECKPOINT, "bahdanau")
    ids = [src_tok.encode(sentence)]  # (1, T_src)
    out = ctx.fw.greedy_decode(model, ctx.tensor(ids))  # attention (1, 1, T_out, T_src)
    tokens, length = decoded_tokens(ctx, out, tgt_tok.eos_id)
    return plots.plot_attention(
        ctx.numpy(out.attention)[0, 0, :length],
        [src_tok.id_to_token(i) for i in ids[0]],
        [tgt_tok.id_to_token(i).replace(" ", space) for i in tokens[:length]],
        title=tr(title).format(sentence=sentence),
    )
