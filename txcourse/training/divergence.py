"""Telling a diverging run by its loss, and the message both Trainers raise. Book: week 6."""

from __future__ import annotations

import math
from typing import Optional

from txcourse.training.config import TrainConfig

__all__ = ["diverged", "DivergenceWatch"]


def diverged(what: str, step: int, config: TrainConfig) -> str:
    """The one-line message both Trainers raise (as ``FloatingPointError``) when training diverges."""
    return (
        f"training diverged at step {step}: {what} (lr_factor {config.lr_factor}, warm-up "
        f"{config.warmup_steps} steps); lower --lr-factor (TrainConfig.lr_factor) or lengthen --warmup, "
        f"then resume from the last checkpoint or start again"
    )


class DivergenceWatch:
    """Tells a diverging run by its loss, not only by NaN (both Trainers call it after every step).

    A model that predicts the uniform distribution over V target tokens has
    loss log V, with or without label smoothing. Training has diverged when
    the loss (the whole batch's, the same in every replica) is not finite, is
    more than ``far`` times the larger of its first value and log V, or has
    stayed above both for ``patience`` steps in a row: worse than guessing,
    and not getting better. ``--lr-factor 1e6`` trips the second rule within a
    few steps; a healthy run falls below log V in its first steps.
    """

    def __init__(self, vocab_size: int, far: float = 4.0, patience: int = 200):
        self.log_v, self.far, self.patience = math.log(max(int(vocab_size), 2)), far, patience
        self.start: Optional[float] = None
        self.above = 0  # consecutive steps above max(start, log V)

    def __call__(self, loss: float) -> Optional[str]:
        """None while training is sane; else what went wrong, for :func:`diverged`."""
        if not math.isfinite(loss):
            return f"the loss is {loss}"
        if self.start is None:
            self.start = loss
        ceiling = max(self.start, self.log_v)
        if loss > self.far * ceiling:
            return (
                f"the loss is {loss:.4g}, more than {self.far:g} times the larger of its first value "
                f"({self.start:.4g}) and log V ({self.log_v:.4g}, a uniform guess over the vocabulary)"
            )
        self.above = self.above + 1 if loss > ceiling else 0
        if self.above >= self.patience:
            return (
                f"the loss has stayed above the larger of its first value ({self.start:.4g}) and log V "
                f"({self.log_v:.4g}, a uniform guess) for {self.above} steps (now {loss:.4g})"
            )
        return None
