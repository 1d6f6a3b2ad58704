"""The training loop, written once for both frameworks. Book: week 6 ("Training in your own code").

:class:`TrainingLoop` is what the two Trainers (``txcourse.torch.train.Trainer``
and ``txcourse.tf.train.Trainer``) share, with no framework in it: the steps
of :meth:`~TrainingLoop.fit` (history records, validation, the divergence
watch, checkpoints every N steps, the time limit and stop requests, the
progress bar), the checkpoint header of :meth:`~TrainingLoop.save` and the
resume of :meth:`~TrainingLoop.load`. Each half subclasses it and provides
only what needs its framework:

* ``train_step(batch)``: one optimizer step (forward, backward, clipping,
  Adam; with N replicas the sums over them), returning loss, accuracy,
  tokens, lr and stop;
* ``_evaluate(data)``: the teacher-forced loss and accuracy of ``data``
  (its module's ``evaluate``, built on :func:`evaluate_batches`);
* ``_weights_finite()``, ``_state_arrays()``, ``_num_heads()``,
  ``_restore(checkpoint)``: weights and optimizer state in and out (``_restore``
  checks the weights against the checkpoint's header: their names are the half's);
* the attributes ``model``, ``replicas`` (a :class:`~txcourse.training.distributed.Replicas`)
  and the class attributes ``framework`` and ``_versions``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import Any, Optional

import numpy as np
from tqdm.auto import tqdm

from txcourse.config import model_config as as_model_config
from txcourse.data.batching import Batch, EncodedPairs, make_batches
from txcourse.registry import MODEL_KINDS
from txcourse.training import BatchStream, DivergenceWatch, History, TrainConfig, check_valid, diverged
from txcourse.training.checkpoint import Checkpoint, heads_array, load_checkpoint, write_checkpoint
from txcourse.training.distributed import Replicas

__all__ = ["TrainingLoop", "evaluate_batches"]


def _zero() -> dict[str, float]:
    """The running sums of one history interval."""
    return {"loss": 0.0, "accuracy": 0.0, "tokens": 0, "n": 0}


class TrainingLoop:
    """The framework-free part of a Trainer (see the module docstring); a half's ``Trainer`` subclasses it.

    A subclass calls ``super().__init__(...)`` first, then sets ``model``,
    ``replicas`` and its optimizer, and overrides the hooks below, never
    :meth:`fit`, :meth:`save` or :meth:`load` (``tests/training/test_loop.py``
    checks that both Trainers run this one loop).
    """

    framework: str = ""  # 'torch' or 'tf': written into checkpoints, shown in the progress bar
    _versions: dict[str, str] = {}  # the framework versions written into checkpoints
    model: Any
    replicas: Replicas

    def __init__(
        self,
        kind: str,
        model_config: Any,
        data: EncodedPairs,
        config: TrainConfig,
        history_path: Optional[str],
        metadata: Optional[dict[str, Any]],
        valid: Optional[EncodedPairs],
    ):
        if kind not in MODEL_KINDS:
            raise ValueError(f"kind must be one of {list(MODEL_KINDS)}, got {kind!r}")
        # the config object (a dict of its fields, from code that wrote one, is read once); its to_dict() is the header's
        self.kind, self.model_config, self.config = kind, as_model_config(kind, model_config), config
        self.metadata = dict(metadata or {})
        self.valid = check_valid(valid)
        self.pad_id = self.model_config.pad_id
        self.stream = BatchStream(data, config.batch_size, config.max_tokens, config.seed)
        self.step = 0
        self.history_path = history_path
        self.history: Optional[History] = None  # opened by fit(), after a possible load()
        self._resume_step: Optional[int] = None
        self.stop_requested = False  # set (by a signal handler) to stop fit() after the current step
        self._deadline: Optional[float] = None  # time.perf_counter() at which fit() stops (max_seconds)

    # -- the hooks each half provides -------------------------------------------------------------------------
    def train_step(self, batch: Batch) -> dict[str, float]:
        raise NotImplementedError(f"{type(self).__name__} must define train_step")

    def _evaluate(self, data: EncodedPairs) -> dict[str, float]:
        raise NotImplementedError(f"{type(self).__name__} must define _evaluate")

    def _weights_finite(self) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must define _weights_finite")

    def _state_arrays(self) -> dict[str, np.ndarray]:
        raise NotImplementedError(f"{type(self).__name__} must define _state_arrays")

    def _num_heads(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define _num_heads")

    def _restore(self, checkpoint: Checkpoint) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _restore")

    # -- shared by both halves ----------------------------------------------------------------------------------
    def _stop_now(self) -> bool:
        """Whether this process was asked to stop: a signal (``stop_requested``) or ``max_seconds`` passed."""
        return self.stop_requested or (self._deadline is not None and time.perf_counter() > self._deadline)

    def fit(self, steps: Optional[int] = None, checkpoint_path: Optional[str] = None) -> list[dict[str, Any]]:
        """Train until ``steps`` optimizer steps in total (default ``config.steps``).

        Writes a history record every ``log_every`` steps and a checkpoint
        every ``checkpoint_every`` steps and at the end (when
        ``checkpoint_path`` is given); stops early after
        ``config.max_seconds`` of training. Returns the history records.
        """
        target = self.config.steps if steps is None else steps
        totals, carried = self._open_history()
        began = time.perf_counter()
        start = began - carried
        self._deadline = None if self.config.max_seconds is None else began + self.config.max_seconds
        bar = tqdm(
            total=target,
            initial=self.step,
            desc=f"train {self.kind} ({self.framework})",
            disable=not (self.config.progress and self.replicas.writer),
            dynamic_ncols=True,
        )
        watch = DivergenceWatch(self.model_config.tgt_vocab_size)
        pending: list[dict[str, Any]] = []  # the steps since the last read: values still on the device
        while self.step < target:
            pending.append(self.train_step(next(self.stream)))
            out = pending[-1]
            bar.update(1)
            # agreed by every replica (all stop after the same step); alone, a request made during the step counts
            out_of_time = out["stop"] or (self.replicas.count == 1 and self.stop_requested)
            log = self.step % self.config.log_every == 0 or self.step == target or out_of_time
            save = bool(
                checkpoint_path and self.config.checkpoint_every and self.step % self.config.checkpoint_every == 0
            )
            if log or save:  # the only reads of the steps' values: the steps themselves read nothing
                loss = self._take(pending, watch, totals)
                elapsed = time.perf_counter() - start
                bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{totals['tokens'] / max(elapsed, 1e-9):.0f}")
            if log:
                self.history.append(self._record(out, totals, elapsed, target, bar))
                totals = _zero()
                start = time.perf_counter()
            if save:
                self._save_finite(checkpoint_path)
            if out_of_time:
                break
        bar.close()
        if checkpoint_path:
            self._save_finite(checkpoint_path)
        return self.history.records

    def _open_history(self) -> tuple[dict[str, float], float]:
        """Open the history (one process writes it); the sums and seconds of the interval a stopped run left.

        A run stopped between two records resumes their sums, so its history reads as if it never stopped.
        """
        if self.history is None:
            path = self.history_path if self.replicas.writer else None  # one process writes the history
            self.history = History(path, resume_step=self._resume_step)
        pending = self.history.take_pending()
        if not pending:
            return _zero(), 0.0
        return pending, pending.pop("seconds", 0.0)

    def _take(self, pending: list[dict[str, Any]], watch: DivergenceWatch, totals: dict[str, float]) -> float:
        """Read the values of the ``pending`` steps (on the device until now), in order: the divergence watch sees
        every step's loss and names the step it went wrong at; ``totals`` gets their sums. Empties ``pending`` and
        returns the last step's loss."""
        first = self.step - len(pending) + 1
        for step, out in enumerate(pending, start=first):
            loss = float(out["loss"])  # the whole batch's loss, the same in every replica
            problem = watch(loss)
            if problem is not None:
                raise FloatingPointError(diverged(problem, step, self.config))
            totals["loss"] += loss
            totals["accuracy"] += float(out["accuracy"])
            totals["tokens"] += int(out["tokens"])
            totals["n"] += 1
        pending.clear()
        return loss

    def _record(
        self, out: dict[str, Any], totals: dict[str, float], elapsed: float, target: int, bar: Any
    ) -> dict[str, Any]:
        """The history record of the interval that ends at this step: its means, and the validation scores."""
        record = {
            "step": self.step,
            "loss": totals["loss"] / totals["n"],
            "accuracy": totals["accuracy"] / totals["n"],
            "lr": out["lr"],
            "tokens_per_s": totals["tokens"] / max(elapsed, 1e-9),
        }
        if self.valid is not None:  # every replica evaluates the same weights: their records agree
            scores = self._evaluate(self.valid)
            if not math.isfinite(scores["loss"]):  # finite weights whose outputs overflow
                raise FloatingPointError(diverged(f"the validation loss is {scores['loss']}", self.step, self.config))
            record.update(valid_loss=scores["loss"], valid_accuracy=scores["accuracy"])
            bar.set_postfix(loss=f"{float(out['loss']):.3f}", valid=f"{scores['loss']:.3f}")
        if self.step % self.config.log_every and self.step != target:  # stopped between two records
            record["partial"] = {**totals, "seconds": elapsed}  # resumed by the next fit (take_pending)
        return record

    def _save_finite(self, path: str) -> None:
        """Save, unless an update made a weight non-finite: then the checkpoint on disk is the last good one.

        With several processes only the writer (process 0, the chief) saves; the weights are the same in every one.
        """
        if not self._weights_finite():
            raise FloatingPointError(diverged("a weight is not finite", self.step, self.config))
        if self.replicas.writer:
            self.save(path)

    def save(self, path: str) -> None:
        """Write a checkpoint (model, optimizer, schedule, data position, RNG) atomically."""
        arrays = self._state_arrays()
        arrays.update(heads_array(self._num_heads()) if self.kind == "transformer" else {})
        meta = {
            "framework": self.framework,
            "model": {"kind": self.kind, "config": self.model_config.to_dict()},
            "step": self.step,
            "stream": self.stream.state(),
            "train_config": self.config.to_dict(),
            **self._versions,
            **self.metadata,
        }
        write_checkpoint(path, meta, arrays)

    def load(self, checkpoint: str | os.PathLike | Checkpoint) -> None:
        """Restore everything :meth:`save` wrote: training continues exactly where it stopped.

        ``checkpoint`` is a file, read and checked here by
        :func:`~txcourse.training.checkpoint.load_checkpoint` (this framework and model kind,
        resumable); or the :class:`~txcourse.training.checkpoint.Checkpoint` a caller read so
        (``txcourse train --resume`` reads it first, to compare its settings), which is taken as
        it is: not read or checked again. The half checks the weights against the header when
        it loads them (``_restore``).
        """
        if not isinstance(checkpoint, Checkpoint):
            checkpoint = load_checkpoint(checkpoint, self.framework, self.kind, resumable=True)
        self._restore(checkpoint)
        self.step = checkpoint.step
        self.stream.load_state(checkpoint.meta["stream"])
        self._resume_step, self.history = self.step, None


def evaluate_batches(
    data: EncodedPairs, batch_size: int, score: Callable[[Batch], tuple[float, float, float]]
) -> dict[str, float]:
    """The token-weighted means over ``data`` of what ``score`` returns for each batch: loss and accuracy.

    The framework-free half of each half's ``evaluate``: batches in order
    (no shuffle, no random number), each weighted by its non-pad target
    tokens, so batches of 3 and one batch of all give the same means.

    Args:
        data: encoded pairs (at least one; else a ValueError naming ``valid``).
        batch_size: sentences per batch.
        score: one batch -> (mean loss, token accuracy, non-pad target tokens).

    Returns:
        ``{"loss": ..., "accuracy": ..., "tokens": ...}``.
    """
    check_valid(data)
    loss_sum = correct = tokens = 0.0
    for batch in make_batches(data, batch_size=batch_size, shuffle=False):
        loss, accuracy, count = score(batch)
        n = float(count)
        loss_sum += float(loss) * n
        correct += float(accuracy) * n
        tokens += n
    return {"loss": loss_sum / max(tokens, 1.0), "accuracy": correct / max(tokens, 1.0), "tokens": tokens}
