"""The figures of week 6, training (book/week6_training.md): the warm-up schedule, label smoothing, the
training curves.

Every number these figures show about the shipped model is read from its checkpoint header
and history (:mod:`txcourse.course.artefacts`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from txcourse.course.artefacts import TRANSFORMER_CHECKPOINT, TRANSFORMER_HISTORY
from txcourse.course.figures.recipe import Context, load_checkpoint, register
from txcourse.notebook import plots
from txcourse.notebook.plots.labels import N_, tr


def _history(ctx: Context) -> list[dict[str, Any]]:
    from txcourse.training import read_history

    try:
        return read_history(ctx.path(TRANSFORMER_HISTORY))
    except json.JSONDecodeError as err:
        raise ValueError(f"{TRANSFORMER_HISTORY} is not a history file (one JSON record a line): {err}") from None


def _meta(ctx: Context) -> dict[str, Any]:
    from txcourse.training.checkpoint import read_checkpoint_meta

    return read_checkpoint_meta(ctx.path(TRANSFORMER_CHECKPOINT))


def shipped_schedule_label(meta: Mapping[str, Any]) -> str:
    """The legend entry of the shipped model's schedule, from its checkpoint header."""
    from txcourse.course.artefacts import schedule

    s = schedule(meta)
    return tr("shipped model: d_model {d}, warm-up {warmup}, x{factor:g}, cool-down {cooldown} of {total}").format(
        d=s["d_model"],
        warmup=s["warmup_steps"],
        factor=s["factor"],
        cooldown=s["cooldown_steps"],
        total=s["total_steps"],
    )


LOGGED_LR = N_("logged by the trainer (history)")  # a legend entry: plots translates it (labels.py)


@register(
    "week6_warmup_schedule",
    ["week6_training"],
    "fig-noam",
    "The learning rate of Eq. (3) (txcourse.training.noam_lr) for the paper's base model and for the shipped "
    "week 6 model, its parameters read from the checkpoint (with its cool-down); the dots are the rates "
    "its training history logged.",
    plots.plot_training_curves,
    params={
        "steps": {"start": 1, "stop": 20001, "step": 20},
        "paper": {"label": N_("paper: d_model 512, warm-up 4000"), "d_model": 512, "warmup": 4000, "factor": 1.0},
        "yscale": "log",
        "title": N_("The warm-up schedule, Eq. (3)"),
    },
    inputs=[TRANSFORMER_CHECKPOINT, TRANSFORMER_HISTORY],
    frameworks=(),
)
def warmup_schedule(ctx: Context, steps: Mapping[str, int], paper: Mapping[str, Any], yscale: str, title: str):
    from txcourse.course.artefacts import schedule, schedule_lr
    from txcourse.training import noam_lr

    meta, history = _meta(ctx), _history(ctx)
    grid = range(steps["start"], steps["stop"], steps["step"])
    total = schedule(meta)["total_steps"]
    curves = {
        paper["label"]: [
            {"step": i, "lr": noam_lr(i, paper["d_model"], paper["warmup"], paper["factor"])} for i in grid
        ],
        shipped_schedule_label(meta): [{"step": i, "lr": schedule_lr(meta, i)} for i in range(1, total + 1)],
        LOGGED_LR: [{"step": r["step"], "lr": r["lr"]} for r in history if r.get("lr") is not None],
    }
    fig = plots.plot_training_curves(curves, keys=("lr",), title=title)
    ax = fig.axes[0]
    ax.lines[-1].set(linestyle="none", marker="o", markersize=3)  # the logged rates: points on the curve
    ax.set_yscale(yscale)
    ax.legend(fontsize="small")
    return fig


@register(
    "week6_label_smoothing",
    ["week6_training"],
    "fig-label-smoothing",
    "The target distribution of one position whose reference token is the vocabulary's first Korean "
    "character, 십, without label smoothing (one-hot) and with the shipped model's eps spread over all V "
    "target tokens, <pad> included, as txcourse's loss does (log scale).",
    plots.plot_distributions,
    params={"title": N_("The target of one position, with and without label smoothing")},
    inputs=[TRANSFORMER_CHECKPOINT],
    frameworks=(),
)
def label_smoothing(ctx: Context, title: str):
    from txcourse.course.artefacts import smoothed_target
    from txcourse.data.prepare import tokenizers_from_meta

    meta = _meta(ctx)
    eps = float(meta["train_config"]["label_smoothing"])
    _, tgt_tok = tokenizers_from_meta(meta)
    vocab = int(meta["model"]["config"]["tgt_vocab_size"])
    labels = [tgt_tok.id_to_token(i).replace(" ", "\u2423") for i in range(vocab)]
    target = next(i for i in range(vocab) if not labels[i].startswith("<"))  # the first real token
    true, other = smoothed_target(vocab, eps)
    one_hot = np.eye(vocab)[target]
    smoothed = np.where(np.arange(vocab) == target, true, other)
    fig = plots.plot_distributions(
        {N_("one-hot (eps = 0)"): one_hot, tr("smoothed (eps = {eps:g})").format(eps=eps): smoothed},
        labels,
        title=title,
        log=True,
    )
    fig.axes[0].set_ylim(other / 3, 1.5)  # the zeros of the one-hot fall off the log axis
    return fig


VALID_CURVE = N_("validation split (dropout off)")


@register(
    "week6_training_curves",
    ["week6_training"],
    "fig-training-curves",
    "Training curves of the week 6 Transformer: label-smoothed loss and token accuracy on the training "
    "batches (with dropout), averaged over each logging interval, and on the validation split at every "
    "logged step (teacher-forced, dropout off, from the history); the squares are the final weights on "
    "training sentences with dropout off; the dashed line is the loss floor, the entropy of the smoothed "
    "target.",
    plots.plot_training_curves,
    params={
        "keys": ["loss", "accuracy"],
        "train_sentences": 1000,
        "title": N_("Training a small Transformer on numbers (en -> ko)"),
    },
    inputs=[TRANSFORMER_HISTORY, TRANSFORMER_CHECKPOINT],
)
def training_curves(ctx: Context, keys: Sequence[str], train_sentences: int, title: str):
    from txcourse.course.artefacts import smoothed_target_entropy, teacher_forced
    from txcourse.data import get_task
    from txcourse.training import validation_curve

    history = _history(ctx)
    model, meta, src_tok, tgt_tok = load_checkpoint(ctx, TRANSFORMER_CHECKPOINT, "transformer")
    splits = get_task(meta["task"]["name"], **meta["task"]["kwargs"])
    eps = float(meta["train_config"]["label_smoothing"])
    final = teacher_forced(ctx.fw, model, splits.train[:train_sentences], src_tok, tgt_tok, eps)
    runs = {
        N_("training batches (dropout on)"): history,
        VALID_CURVE: validation_curve(history),
        N_("training sentences, final weights (dropout off)"): [{"step": int(meta["step"]), **final}],
    }
    fig = plots.plot_training_curves(runs, keys=tuple(keys), title=title)
    for ax in fig.axes:
        ax.lines[1].set(marker="o", markersize=3)
        ax.lines[2].set(linestyle="none", marker="s", markersize=7, markerfacecolor="none")
        if ax.get_title() == tr("loss"):
            floor = smoothed_target_entropy(int(meta["model"]["config"]["tgt_vocab_size"]), eps)
            ax.axhline(
                floor,
                color="0.3",
                linestyle="--",
                linewidth=1,
                label=tr("floor H(q) = {floor:.3f}").format(floor=floor),
            )
        ax.legend(fontsize="x-small")
    return fig
