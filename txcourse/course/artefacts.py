"""What the book's shipped artefacts say: named values for the prose, read from the files at build time.

The book ships a trained checkpoint and its training history in
``book/data/``. Every number the prose states about them (its width, its
schedule, its loss) is one of the values of :func:`book_values`, which the
Sphinx extension ``book/_ext/artefact_values.py`` hands to MyST as
substitutions: ``{{ tx_d_model }}`` in a page is the checkpoint's own
``d_model``, so the text cannot drift from the weights. ``tests/course/test_artefacts.py``
checks the values against the files and the week-6 pages for hand-copied ones.

Framework-free: only the checkpoint's JSON header and the history are read.

Example:
    >>> round(smoothed_target_entropy(19, 0.1), 4)
    0.5872
    >>> round(smoothed_target_entropy(19, 0.0), 4)
    0.0
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

import txcourse
from txcourse.training import noam_lr, read_history
from txcourse.training.checkpoint import read_checkpoint_meta

__all__ = [
    "TRANSFORMER_CHECKPOINT",
    "TRANSFORMER_HISTORY",
    "LENGTH_CURVES",
    "PREFIX",
    "length_curve_values",
    "smoothed_target",
    "smoothed_target_entropy",
    "schedule",
    "schedule_lr",
    "book_values",
    "teacher_forced",
]

TRANSFORMER_CHECKPOINT = "book/data/numbers-transformer-torch.npz"
TRANSFORMER_HISTORY = "book/data/numbers-transformer-torch.history.jsonl"
LENGTH_CURVES = (
    "benchmarks/results/length_curves.json"  # week 1's accuracy by source length (benchmarks/length_curves.py)
)
PREFIX = "tx_"  # every substitution name starts with it, so it cannot clash with another extension's


def _check_smoothing(vocab_size: int, smoothing: float) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
        raise ValueError(f"vocab_size must be an integer >= 2, got {vocab_size!r}")
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing!r}")


def smoothed_target(vocab_size: int, smoothing: float) -> tuple[float, float]:
    """(probability of the true token, probability of each other token) of the smoothed target.

    txcourse's ``label_smoothed_cross_entropy`` spreads ``smoothing`` evenly over
    all ``vocab_size`` classes, ``<pad>`` and the true token included (the
    convention of ``torch.nn.CrossEntropyLoss(label_smoothing=...)``): the true
    token gets ``1 - eps + eps / V``, every other token ``eps / V``.
    """
    _check_smoothing(vocab_size, smoothing)
    return 1.0 - smoothing + smoothing / vocab_size, smoothing / vocab_size


def smoothed_target_entropy(vocab_size: int, smoothing: float) -> float:
    """The floor of the label-smoothed loss: the entropy H(q) of the smoothed target q.

    The loss is the cross-entropy H(q, p) = H(q) + KL(q || p) >= H(q), reached
    when the model predicts p = q exactly:
    H(q) = -(1 - eps + eps/V) log(1 - eps + eps/V) - (V - 1) (eps/V) log(eps/V).
    """
    true, other = smoothed_target(vocab_size, smoothing)
    plogp = lambda p: p * math.log(p) if p > 0 else 0.0  # noqa: E731 - 0 log 0 = 0
    return 0.0 - plogp(true) - (vocab_size - 1) * plogp(other)


def schedule(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of :func:`txcourse.training.noam_lr` a checkpoint was trained with (from its header)."""
    try:
        train, model = meta["train_config"], meta["model"]["config"]
        return {
            "d_model": int(model["d_model"]),
            "warmup_steps": int(train["warmup_steps"]),
            "factor": float(train["lr_factor"]),
            "total_steps": int(train["steps"]),
            "cooldown_steps": int(train.get("cooldown_steps") or 0),
        }
    except (KeyError, TypeError) as err:
        raise ValueError(
            f"meta must be a checkpoint header with model.config.d_model and train_config "
            f"(steps, warmup_steps, lr_factor); it lacks {err}"
        ) from None


def schedule_lr(meta: Mapping[str, Any], step: int) -> float:
    """The learning rate of ``step`` in the run that wrote the checkpoint ``meta``."""
    return noam_lr(step, **schedule(meta))


def _fmt(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}"


def length_curve_values(path: str | os.PathLike) -> dict[str, str]:
    """Week 1's numbers from ``benchmarks/results/length_curves.json``, without the prefix.

    For each model kind K (``seq2seq``, ``bahdanau``, ``transformer``): ``lc_K_steps``,
    ``lc_K_seconds`` (training time), ``lc_K_exact`` (exact match in %, one decimal) and one
    ``lc_K_LO_HI`` per source-length bucket (exact match in %, rounded); ``lc_steps`` (the one
    number of steps every model trained for), ``lc_minutes`` (all three together),
    ``lc_min_len``/``lc_max_len`` (the task's lengths).

    Raises:
        ValueError: the models did not train for the same number of steps (the comparison's premise).
    """
    results = json.loads(Path(path).read_text(encoding="utf-8"))
    models = results["models"]
    values: dict[str, Any] = {
        "lc_min_len": results["task_kwargs"]["min_len"],
        "lc_max_len": results["task_kwargs"]["max_len"],
    }
    steps = {model["steps"] for model in models.values()}
    if len(steps) != 1:
        raise ValueError(
            f"{path}: the models trained for different numbers of steps {sorted(steps)}; "
            f"week 1 compares them at one budget"
        )
    values["lc_steps"] = steps.pop()
    values["lc_minutes"] = round(sum(model["train_seconds"] for model in models.values()) / 60)
    for kind, model in models.items():
        values[f"lc_{kind}_steps"] = model["steps"]
        values[f"lc_{kind}_seconds"] = round(model["train_seconds"])
        values[f"lc_{kind}_exact"] = f"{100 * model['exact_match']:.1f}"
        for lo, hi, _count, accuracy in model["by_length"]:
            values[f"lc_{kind}_{lo}_{hi}"] = round(100 * accuracy)
    return {name: str(value) for name, value in values.items()}


def validation_values(history: list[dict[str, Any]], cooldown_start: int) -> dict[str, str]:
    """Week 6's numbers about the validation curve of a history (without the prefix).

    ``final_valid_loss``, ``final_valid_accuracy`` (%), ``min_valid_loss`` and
    ``min_valid_step`` (the first step where it is lowest); ``valid_below_train``
    of ``logged_steps`` records score lower on the validation split than on
    their training batches; ``valid_rise_warm`` and ``valid_rise_cool``: the
    largest rise of the validation loss between two records before and
    after ``cooldown_start``, and ``valid_rise_warm_step``, where the first is.

    Raises:
        ValueError: the history holds no validation loss.
    """
    from txcourse.training import validation_curve

    curve = validation_curve(history)
    losses = {r["step"]: r["loss"] for r in curve}
    best = min(curve, key=lambda r: r["loss"])
    rises = [(b["step"], b["loss"] - a["loss"]) for a, b in zip(curve, curve[1:])]  # (step, rise into it)
    warm = max([(0, 0.0)] + [r for r in rises if r[0] <= cooldown_start], key=lambda r: r[1])
    return {
        "final_valid_loss": _fmt(curve[-1]["loss"], 4),
        "final_valid_accuracy": _fmt(100 * curve[-1]["accuracy"], 2),
        "min_valid_loss": _fmt(best["loss"], 4),
        "min_valid_step": str(best["step"]),
        "valid_below_train": str(sum(r["valid_loss"] < r["loss"] for r in history if r["step"] in losses)),
        "valid_rise_warm": _fmt(warm[1]),
        "valid_rise_warm_step": str(warm[0]),
        "valid_rise_cool": _fmt(max([0.0] + [d for step, d in rises if step > cooldown_start])),
    }


def book_values(root: Optional[str | os.PathLike] = None) -> dict[str, str]:
    """The named values the prose may state about the shipped Transformer, as strings (name -> text).

    Args:
        root: the folder holding ``book/data`` (default: the package's checkout).

    Raises:
        FileNotFoundError: an artefact is missing (train it: see book/instructor.md).
    """
    root = Path(root) if root is not None else Path(txcourse.__file__).resolve().parents[1]
    meta = read_checkpoint_meta(root / TRANSFORMER_CHECKPOINT)
    history = read_history(root / TRANSFORMER_HISTORY)
    cfg, train, sched = meta["model"]["config"], meta["train_config"], schedule(meta)
    vocab, eps = int(cfg["tgt_vocab_size"]), float(train["label_smoothing"])
    true, other = smoothed_target(vocab, eps)
    losses = [r["loss"] for r in history if r.get("loss") is not None]
    peak = max(range(1, sched["total_steps"] + 1), key=lambda s: schedule_lr(meta, s))
    values = {
        "d_model": cfg["d_model"],
        "num_heads": cfg["num_heads"],
        "d_ff": cfg["d_ff"],
        "encoder_layers": cfg["num_encoder_layers"],
        "decoder_layers": cfg["num_decoder_layers"],
        "src_vocab": cfg["src_vocab_size"],
        "tgt_vocab": vocab,
        "tgt_vocab_minus_1": vocab - 1,
        "steps": meta["step"],
        "batch_size": train["batch_size"],
        "seed": train["seed"],
        "warmup": sched["warmup_steps"],
        "lr_factor": f"{sched['factor']:g}",
        "cooldown": sched["cooldown_steps"],
        "cooldown_start": sched["total_steps"] - sched["cooldown_steps"],
        "peak_lr": f"{schedule_lr(meta, peak):.3g}",
        "peak_step": peak,
        "final_lr": f"{schedule_lr(meta, sched['total_steps']):.2g}",
        "smoothing": f"{eps:g}",
        "smoothed_true": _fmt(true, 4),
        "smoothed_other": _fmt(other, 4),
        "loss_floor": _fmt(smoothed_target_entropy(vocab, eps)),
        "loss_floor_wrong": _fmt(eps * math.log(vocab), 2),  # the old "0.1 log V" claim, for the text that refutes it
        "final_loss": _fmt(losses[-1]),
        "min_loss": _fmt(min(losses)),
        "log_every": train["log_every"],
        "logged_steps": len(history),
    }
    values.update(validation_values(history, values["cooldown_start"]))
    values.update(length_curve_values(root / LENGTH_CURVES))
    return {PREFIX + k: str(v) for k, v in values.items()}


def teacher_forced(
    fw: Any, model: Any, pairs, src_tok: Any, tgt_tok: Any, smoothing: float, batch_size: int = 256
) -> dict[str, float]:
    """Label-smoothed loss and token accuracy of ``model`` on ``pairs``, teacher-forced, dropout off.

    The loss the trainer logs, but of fixed weights on any split: the
    validation loss of a checkpoint, or its training loss without dropout.

    Args:
        fw: :func:`txcourse.backends.backend` of the model's framework.
        model: a Transformer of that framework.
        pairs: (source, target) strings.
        src_tok, tgt_tok: the checkpoint's tokenizers.
        smoothing: the label smoothing eps of the loss.
        batch_size: sentences per forward pass.

    Returns:
        ``{"loss": ..., "accuracy": ..., "tokens": ...}``, means over the non-padding target tokens.
    """
    from txcourse.data import encode_pairs

    if not pairs:
        raise ValueError("pairs must hold at least one (source, target) pair, got none")
    return fw.evaluate(model, encode_pairs(list(pairs), src_tok, tgt_tok), smoothing, batch_size)
