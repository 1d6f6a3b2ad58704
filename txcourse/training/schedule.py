"""The learning-rate schedule of Vaswani et al. (2017), Eq. (3), with an optional cool-down. Book: week 6."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

__all__ = ["noam_lr", "noam_rate", "schedule_width"]


def noam_lr(
    step: int,
    d_model: int,
    warmup_steps: int = 4000,
    factor: float = 1.0,
    total_steps: Optional[int] = None,
    cooldown_steps: int = 0,
) -> float:
    """lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5), Eq. (3).

    The rate grows linearly for ``warmup_steps`` steps, then decays as
    1/sqrt(step). ``step`` counts from 1 (step 0 is treated as 1).

    With ``cooldown_steps > 0`` (and ``total_steps``) the last
    ``cooldown_steps`` steps also scale the rate linearly down,
    ``(total_steps - step + 1) / cooldown_steps``, to ``1 / cooldown_steps``
    of Eq. (3) at the last step. Not in the paper, which averages its last
    checkpoints instead (Sec. 6.1): both end on weights that the last few
    noisy steps have not moved far, so the final model is as good as the
    run, not a lucky or unlucky last step.

    Example:
        >>> round(noam_lr(4000, 512), 6)
        0.000699
        >>> noam_lr(1000, 128, 400, total_steps=1000, cooldown_steps=100) / noam_lr(1000, 128, 400)
        0.01
    """
    return noam_rate(max(int(step), 1), d_model, warmup_steps, factor, total_steps, cooldown_steps)


def _clip(x: float, low: float, high: float) -> float:
    return min(high, max(low, x))


def noam_rate(
    step: Any,
    d_model: int,
    warmup_steps: int,
    factor: float,
    total_steps: Optional[int],
    cooldown_steps: int,
    minimum: Callable[[Any, Any], Any] = min,
    clip: Callable[[Any, float, float], Any] = _clip,
) -> Any:
    """The arithmetic of :func:`noam_lr` for a step >= 1, in any number type: written once for both halves.

    Python floats with the defaults; a framework's tensors with its own
    ``minimum`` and ``clip`` (TensorFlow's ``NoamSchedule`` passes
    ``tf.minimum`` and ``tf.clip_by_value`` and a float64 step, so its rate is
    this function's to the last digits; PyTorch calls :func:`noam_lr`).
    """
    rate = factor * d_model**-0.5 * minimum(step**-0.5, step * warmup_steps**-1.5)
    if cooldown_steps:
        if total_steps is None:
            raise ValueError("noam_lr: cooldown_steps needs total_steps, the step the cool-down ends at")
        rate *= clip((total_steps - step + 1.0) / cooldown_steps, 0.0, 1.0)
    return rate


def schedule_width(kind: str, config: Any) -> int:
    """The width Eq. (3) scales the rate by: d_model of a Transformer, the GRU units of the week-1 models
    (``config``: its TransformerConfig or Seq2SeqConfig)."""
    return config.d_model if kind == "transformer" else config.units
