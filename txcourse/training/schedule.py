"""The learning-rate schedule of Vaswani et al. (2017), Eq. (3), with an optional cool-down. Book: week 6."""

from __future__ import annotations

from typing import Optional

__all__ = ["noam_lr"]


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
    step = max(int(step), 1)
    rate = factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)
    if cooldown_steps:
        if total_steps is None:
            raise ValueError("noam_lr: cooldown_steps needs total_steps, the step the cool-down ends at")
        rate *= min(1.0, max(0.0, (total_steps - step + 1) / cooldown_steps))
    return rate
