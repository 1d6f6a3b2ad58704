"""Masked, label-smoothed cross-entropy (Vaswani et al. 2017, Sec. 5.4; Szegedy et al. 2016). Book: week 6."""

from __future__ import annotations

import torch

from txcourse import _validation as V
from txcourse.data.vocab import PAD_ID

__all__ = ["label_smoothed_cross_entropy", "token_accuracy"]


def label_smoothed_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, smoothing: float = 0.1, pad_id: int = PAD_ID
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean over non-padding tokens of (1 - eps) * NLL + eps * (mean over classes of -log p).

    The target distribution puts 1 - eps + eps/V on the true token and eps/V
    on every other one (the convention of ``torch.nn.CrossEntropyLoss``'s
    ``label_smoothing`` and Keras' ``CategoricalCrossentropy``). Padded
    positions count for nothing; a batch of padding only gives a loss of 0,
    not NaN. Computed in float32 even under mixed precision.

    Args:
        logits: unnormalised scores.
        targets: token ids; ``pad_id`` marks padding.
        smoothing: eps in [0, 1].
        pad_id: the id of <pad>.

    Shape:
        logits (B, T, V), targets (B, T). Returns the loss () and the number
        of non-padding tokens ().
    """
    V.check_rank("logits", tuple(logits.shape), 3, "(B, T, V)")
    V.check_rank("targets", tuple(targets.shape), 2, "(B, T)")
    if tuple(logits.shape[:2]) != tuple(targets.shape):
        raise ValueError(f"logits {tuple(logits.shape)} and targets {tuple(targets.shape)} must agree on (B, T)")
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing!r}")
    log_probs = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
    nll = -log_probs.gather(-1, targets[..., None])[..., 0]  # (B, T)
    uniform = -log_probs.mean(dim=-1)  # (B, T)
    per_token = (1.0 - smoothing) * nll + smoothing * uniform  # (B, T)
    keep = targets != pad_id  # (B, T)
    count = keep.sum()  # ()
    loss = torch.where(keep, per_token, 0.0).sum() / count.clamp(min=1)  # ()
    return loss, count


def token_accuracy(logits: torch.Tensor, targets: torch.Tensor, pad_id: int = PAD_ID) -> torch.Tensor:
    """Fraction of non-padding positions whose arg-max is the target (0 for a padding-only batch)."""
    keep = targets != pad_id  # (B, T)
    correct = (logits.argmax(dim=-1) == targets) & keep  # (B, T)
    return correct.sum() / keep.sum().clamp(min=1)
