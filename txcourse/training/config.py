"""How to train: :class:`TrainConfig`, checked at construction. Book: week 6."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Optional

from txcourse.errors import TxcourseError

__all__ = ["TrainConfig", "RESUME_SETTINGS"]


# TrainConfig fields a resumed run must share with its checkpoint (the others may change: steps grow on
# resume; logging, progress, checkpoint frequency, time limit and device do not change what is learnt).
RESUME_SETTINGS = (
    "batch_size",
    "max_tokens",
    "warmup_steps",
    "lr_factor",
    "label_smoothing",
    "clip_norm",
    "adam_betas",
    "adam_eps",
    "seed",
    "mixed_precision",
)


@dataclass(frozen=True)
class TrainConfig:
    """How to train. Defaults follow Sec. 5.3-5.4 of Vaswani et al. (2017) where they apply.

    Invalid values raise :class:`~txcourse.errors.TxcourseError` (a ``ValueError``) at construction, naming the
    field in ``.field``.
    """

    steps: int = 1000  # optimizer steps
    batch_size: Optional[int] = 64  # sentences per batch (or use max_tokens)
    max_tokens: Optional[int] = None  # cap on B * max(T_src, T_tgt) per batch instead of batch_size
    warmup_steps: int = 4000  # warm-up of the schedule, Eq. (3)
    cooldown_steps: int = 0  # the rate falls linearly to 0 over the last cooldown_steps of steps (0: Eq. (3) as is)
    lr_factor: float = 1.0  # scales Eq. (3); small models train faster with 2-5
    label_smoothing: float = 0.1  # epsilon_ls (Sec. 5.4)
    clip_norm: Optional[float] = 1.0  # gradient clipping by global norm (None: off)
    adam_betas: tuple[float, float] = (0.9, 0.98)  # beta_1, beta_2 (Sec. 5.3)
    adam_eps: float = 1e-9  # epsilon (Sec. 5.3)
    seed: int = 0
    device: str = "auto"  # "auto" picks cuda, then mps, then cpu
    mixed_precision: bool = True  # bf16/fp16 autocast, used only on a GPU
    log_every: int = 10  # steps between history records
    checkpoint_every: int = 0  # steps between checkpoints (0: only at the end)
    progress: bool = True  # tqdm progress bar
    max_seconds: Optional[float] = None  # stop early once this much training time has passed

    def __post_init__(self) -> None:
        for name in ("steps", "warmup_steps", "log_every"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TxcourseError(f"TrainConfig.{name} must be a positive integer, got {value!r}", name)
        if not isinstance(self.cooldown_steps, int) or isinstance(self.cooldown_steps, bool) or self.cooldown_steps < 0:
            raise TxcourseError(
                f"TrainConfig.cooldown_steps must be an integer >= 0, got {self.cooldown_steps!r}", "cooldown_steps"
            )
        if not isinstance(self.checkpoint_every, int) or self.checkpoint_every < 0:
            raise TxcourseError(
                f"TrainConfig.checkpoint_every must be an integer >= 0, got {self.checkpoint_every!r}",
                "checkpoint_every",
            )
        if (self.batch_size is None) == (self.max_tokens is None):
            raise TxcourseError(
                f"TrainConfig needs exactly one of batch_size and max_tokens, got "
                f"batch_size={self.batch_size!r}, max_tokens={self.max_tokens!r}",
                "batch_size",
                "max_tokens",
            )
        for name in ("batch_size", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise TxcourseError(f"TrainConfig.{name} must be a positive integer, got {value!r}", name)
        if not 0.0 <= self.label_smoothing <= 1.0:
            raise TxcourseError(
                f"TrainConfig.label_smoothing must be in [0, 1], got {self.label_smoothing!r}", "label_smoothing"
            )
        if not 0 < self.lr_factor < math.inf:
            raise TxcourseError(
                f"TrainConfig.lr_factor must be a positive finite number, got {self.lr_factor!r}", "lr_factor"
            )
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise TxcourseError(f"TrainConfig.clip_norm must be positive or None, got {self.clip_norm!r}", "clip_norm")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise TxcourseError(
                f"TrainConfig.max_seconds must be positive or None, got {self.max_seconds!r}", "max_seconds"
            )
        if self.device not in ("auto", "cpu", "cuda", "mps") and not str(self.device).startswith(("cuda:", "/")):
            raise TxcourseError(
                f"TrainConfig.device must be 'auto', 'cpu', 'cuda' or 'mps', got {self.device!r}", "device"
            )

    def replace(self, **changes: Any) -> TrainConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
