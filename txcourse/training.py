"""Framework-free pieces of training, shared by both halves. Book: week 6.

The learning-rate schedule of Vaswani et al. (2017), Eq. (3); the training
configuration; a deterministic, resumable stream of batches; a history
file. The atomic file writes live in :mod:`txcourse.files` (re-exported
here for the command line, which imports them from this module).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from txcourse.data.batching import Batch, EncodedPairs, make_batches
from txcourse.files import atomic_write, remove_stale_temporaries  # re-exported: txcourse.cli imports them here

__all__ = ["TrainConfig", "noam_lr", "BatchStream", "History", "read_history", "atomic_write",
           "remove_stale_temporaries", "diverged", "DivergenceWatch", "MODEL_KINDS", "RESUME_SETTINGS"]

MODEL_KINDS = ("transformer", "bahdanau", "seq2seq")

# TrainConfig fields a resumed run must share with its checkpoint (the others may change: steps grow on
# resume; logging, progress, checkpoint frequency, time limit and device do not change what is learnt).
RESUME_SETTINGS = ("batch_size", "max_tokens", "warmup_steps", "lr_factor", "label_smoothing", "clip_norm",
                   "adam_betas", "adam_eps", "seed", "mixed_precision")


@dataclass(frozen=True)
class TrainConfig:
    """How to train. Defaults follow Sec. 5.3-5.4 of Vaswani et al. (2017) where they apply.

    Invalid values raise ``ValueError`` at construction.
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
                raise ValueError(f"TrainConfig.{name} must be a positive integer, got {value!r}")
        if not isinstance(self.cooldown_steps, int) or isinstance(self.cooldown_steps, bool) or self.cooldown_steps < 0:
            raise ValueError(f"TrainConfig.cooldown_steps must be an integer >= 0, got {self.cooldown_steps!r}")
        if not isinstance(self.checkpoint_every, int) or self.checkpoint_every < 0:
            raise ValueError(f"TrainConfig.checkpoint_every must be an integer >= 0, got {self.checkpoint_every!r}")
        if (self.batch_size is None) == (self.max_tokens is None):
            raise ValueError(f"TrainConfig needs exactly one of batch_size and max_tokens, got "
                             f"batch_size={self.batch_size!r}, max_tokens={self.max_tokens!r}")
        for name in ("batch_size", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"TrainConfig.{name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.label_smoothing <= 1.0:
            raise ValueError(f"TrainConfig.label_smoothing must be in [0, 1], got {self.label_smoothing!r}")
        if not 0 < self.lr_factor < math.inf:
            raise ValueError(f"TrainConfig.lr_factor must be a positive finite number, got {self.lr_factor!r}")
        if self.clip_norm is not None and not self.clip_norm > 0:
            raise ValueError(f"TrainConfig.clip_norm must be positive or None, got {self.clip_norm!r}")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise ValueError(f"TrainConfig.max_seconds must be positive or None, got {self.max_seconds!r}")
        if self.device not in ("auto", "cpu", "cuda", "mps") and not str(self.device).startswith(("cuda:", "/")):
            raise ValueError(f"TrainConfig.device must be 'auto', 'cpu', 'cuda' or 'mps', got {self.device!r}")

    def replace(self, **changes: Any) -> "TrainConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def noam_lr(step: int, d_model: int, warmup_steps: int = 4000, factor: float = 1.0,
            total_steps: Optional[int] = None, cooldown_steps: int = 0) -> float:
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
    rate = factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)
    if cooldown_steps:
        if total_steps is None:
            raise ValueError("noam_lr: cooldown_steps needs total_steps, the step the cool-down ends at")
        rate *= min(1.0, max(0.0, (total_steps - step + 1) / cooldown_steps))
    return rate


class BatchStream:
    """An endless, deterministic stream of batches: epoch after epoch, reshuffled by (seed, epoch).

    ``state()`` and ``load_state()`` give the exact position, so a resumed
    run sees the same batches as one that never stopped.
    """

    def __init__(self, data: EncodedPairs, batch_size: Optional[int] = None,
                 max_tokens: Optional[int] = None, seed: int = 0):
        self.data, self.batch_size, self.max_tokens, self.seed = data, batch_size, max_tokens, seed
        self.epoch, self.index = 0, 0
        self._batches: Optional[list[Batch]] = None

    def _epoch_batches(self) -> list[Batch]:
        if self._batches is None:
            self._batches = make_batches(self.data, batch_size=self.batch_size, max_tokens=self.max_tokens,
                                         shuffle=True, seed=self.seed, epoch=self.epoch)
        return self._batches

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        batches = self._epoch_batches()
        if self.index >= len(batches):
            self.epoch, self.index, self._batches = self.epoch + 1, 0, None
            batches = self._epoch_batches()
        batch = batches[self.index]
        self.index += 1
        return batch

    def state(self) -> dict[str, int]:
        return {"epoch": self.epoch, "index": self.index}

    def load_state(self, state: dict[str, int]) -> None:
        self.epoch, self.index, self._batches = int(state["epoch"]), int(state["index"]), None


class History:
    """One JSON record per line: step, loss, accuracy, lr, tokens/s, ... (a history file).

    Opening an existing file for a resumed run drops the records after
    ``resume_step``, so the file reads as if the run had never stopped. A
    run stopped between two records (Ctrl-C, SIGTERM, ``max_seconds``) ends
    with a record marked ``partial`` that carries the running sums; resuming
    drops it and hands the sums to the Trainer (:meth:`take_pending`), so the
    next record averages the same steps as in an uninterrupted run.
    """

    def __init__(self, path: Optional[str | os.PathLike], resume_step: Optional[int] = None):
        self.path = None if path is None else Path(path)
        self.records: list[dict[str, Any]] = []
        self._pending: Optional[dict[str, float]] = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if resume_step is not None and self.path.exists():  # a resumed run keeps what came before
                self.records = [r for r in read_history(self.path) if r["step"] <= resume_step]
                if self.records and self.records[-1]["step"] == resume_step and "partial" in self.records[-1]:
                    self._pending = dict(self.records.pop()["partial"])
            atomic_write(self.path, lambda f: f.write("".join(json.dumps(r) + "\n" for r in self.records).encode()))

    def take_pending(self) -> Optional[dict[str, float]]:
        """The running sums of the partial record a resumed run dropped (once), or None."""
        pending, self._pending = self._pending, None
        return pending

    def append(self, record: dict[str, Any]) -> None:
        clean = {k: (float(v) if isinstance(v, float) or hasattr(v, "dtype") else v) for k, v in record.items()}
        for key, value in clean.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise FloatingPointError(f"history: {key} is {value} at step {clean.get('step')}")
        self.records.append(clean)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(clean) + "\n")


def read_history(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a history file written by :class:`History`."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_valid(data: Any) -> Any:
    """``data`` if it is None or non-empty encoded pairs (a Trainer's ``valid``); else a ValueError naming it."""
    if data is not None and (not isinstance(data, EncodedPairs) or len(data) == 0):
        size = len(data) if hasattr(data, "__len__") else "?"
        raise ValueError(f"valid must be None or non-empty EncodedPairs (txcourse.data.encode_pairs), got "
                         f"{type(data).__name__} of length {size}")
    return data


def validation_curve(history: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """The validation records of a training history: step, loss and accuracy from valid_loss/valid_accuracy.

    Raises:
        ValueError: no record holds a validation loss (trained with ``--valid-pairs 0``, or before it existed).
    """
    curve = [{"step": r["step"], "loss": r["valid_loss"], "accuracy": r["valid_accuracy"]}
             for r in history if r.get("valid_loss") is not None]
    if not curve:
        raise ValueError("the training history holds no valid_loss: retrain with `txcourse train` and its default "
                         "--valid-pairs (book/instructor.md lists the command)")
    return curve


def diverged(what: str, step: int, config: TrainConfig) -> str:
    """The one-line message both Trainers raise (as ``FloatingPointError``) when training diverges."""
    return (f"training diverged at step {step}: {what} (lr_factor {config.lr_factor}, warm-up "
            f"{config.warmup_steps} steps); lower --lr-factor (TrainConfig.lr_factor) or lengthen --warmup, "
            f"then resume from the last checkpoint or start again")


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
            return (f"the loss is {loss:.4g}, more than {self.far:g} times the larger of its first value "
                    f"({self.start:.4g}) and log V ({self.log_v:.4g}, a uniform guess over the vocabulary)")
        self.above = self.above + 1 if loss > ceiling else 0
        if self.above >= self.patience:
            return (f"the loss has stayed above the larger of its first value ({self.start:.4g}) and log V "
                    f"({self.log_v:.4g}, a uniform guess) for {self.above} steps (now {loss:.4g})")
        return None
