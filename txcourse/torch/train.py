"""Training with Adam and the warm-up schedule (Vaswani et al. 2017, Sec. 5). Book: week 6.

:class:`Trainer` runs teacher-forced training for any of the three models
(Transformer, Bahdanau GRU, GRU without attention), with gradient clipping,
mixed precision on a GPU, a tqdm progress bar, a history file, atomic
checkpoints and an exact resume. Given validation pairs, each history
record also holds their teacher-forced loss and accuracy (:func:`evaluate`).

The device and data-parallel training (book: appendix "Scaling up"):
:mod:`txcourse.torch.devices` (:func:`resolve_device`, :func:`data_parallel`,
re-exported here); the loop, checkpoints and resume:
:class:`~txcourse.training.loop.TrainingLoop`, shared with TensorFlow.
"""

from __future__ import annotations

import io
import os
import random
from typing import Any, Optional

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from txcourse.config import Seq2SeqConfig, TransformerConfig, model_config
from txcourse.data.batching import Batch, EncodedPairs
from txcourse.registry import MODEL_KINDS
from txcourse.torch.devices import (
    amp_dtype_for_gpu,
    current_replicas,
    data_parallel,
    ddp_device_ids,
    end_data_parallel,
    replica_seed,
    resolve_device,
)
from txcourse.torch.loss import label_smoothed_cross_entropy, token_accuracy
from txcourse.torch.model import Transformer
from txcourse.torch.seq2seq import Seq2Seq
from txcourse.torch.weights import check_weights, load_model_arrays, model_arrays, num_heads
from txcourse.training import TrainConfig, noam_lr, schedule_width
from txcourse.training.checkpoint import Checkpoint, bytes_to_array, load_checkpoint
from txcourse.training.distributed import check_divisible, shard, target_tokens
from txcourse.training.loop import TrainingLoop, evaluate_batches

__all__ = [
    "Trainer",
    "build_model",
    "evaluate",
    "load_model",
    "resolve_device",
    "set_seed",
    "data_parallel",
    "end_data_parallel",
]

FRAMEWORK = "torch"


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and the framework (all devices).

    PyTorch: ``torch.manual_seed``.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def build_model(kind: str, config: TransformerConfig | Seq2SeqConfig | dict[str, Any]) -> torch.nn.Module:
    """Build 'transformer' (config: a TransformerConfig), 'bahdanau' or 'seq2seq' (config: a Seq2SeqConfig).

    The config object is used as it is; a dict of its fields is read once (:func:`~txcourse.config.model_config`).
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"model kind must be one of {list(MODEL_KINDS)}, got {kind!r}")
    if kind == "transformer":
        return Transformer(model_config(kind, config))
    return Seq2Seq(model_config(kind, config), attention=kind == "bahdanau")


class Trainer(TrainingLoop):
    """Teacher-forced training of ``model`` on ``data`` (see the module docstring).

    The loop itself (:meth:`fit`, :meth:`save`, :meth:`load`) is
    :class:`~txcourse.training.loop.TrainingLoop`, the same for both
    frameworks; this class adds the step and the weights of its framework.

    Args:
        model: built by :func:`build_model` from ``kind`` and ``model_config``.
        kind: 'transformer', 'bahdanau' or 'seq2seq'.
        model_config: the TransformerConfig or Seq2SeqConfig the model was built from (its ``to_dict()`` is
            saved in checkpoints; a dict of its fields is read once).
        data: the encoded training pairs.
        config: a :class:`~txcourse.training.TrainConfig`.
        history_path: a JSON-lines history file (None: keep in memory only).
        metadata: extra JSON-able facts saved in checkpoints (tokenizers, task).
        valid: encoded validation pairs; each history record then adds
            ``valid_loss`` and ``valid_accuracy`` (:func:`evaluate`: teacher-forced,
            dropout off). Evaluating draws no random number, so the weights
            are those of the same run without ``valid``.

    Example:
        >>> trainer = Trainer(model, "transformer", cfg, data, TrainConfig(steps=100))
        >>> records = trainer.fit()
        >>> trainer.save("run/model.npz")
    """

    framework = FRAMEWORK
    _versions = {"torch_version": torch.__version__}

    def __init__(
        self,
        model: torch.nn.Module,
        kind: str,
        model_config: TransformerConfig | Seq2SeqConfig | dict[str, Any],
        data: EncodedPairs,
        config: TrainConfig = TrainConfig(),
        history_path: Optional[str] = None,
        metadata: Optional[dict[str, Any]] = None,
        valid: Optional[EncodedPairs] = None,
    ):
        super().__init__(kind, model_config, data, config, history_path, metadata, valid)
        self.device = resolve_device(config.device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1.0, betas=config.adam_betas, eps=config.adam_eps)
        width = schedule_width(kind, self.model_config)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer,
            lambda s: noam_lr(s + 1, width, config.warmup_steps, config.lr_factor, config.steps, config.cooldown_steps),
        )
        self.amp_dtype = self._amp_dtype()
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.replicas = current_replicas()  # the process group this Trainer runs in (data_parallel)
        check_divisible(config.batch_size, self.replicas.count)
        self.net = self.model  # what the step calls: the model, or DistributedDataParallel around it
        if self.replicas.count > 1:  # broadcasts process 0's weights; averages the gradients in backward()
            self.net = DistributedDataParallel(self.model, device_ids=ddp_device_ids(self.device))
        set_seed(config.seed)
        if self.replicas.first:
            torch.manual_seed(replica_seed(config.seed, self.replicas.first, 0))

    def _amp_dtype(self) -> Optional[torch.dtype]:
        if not self.config.mixed_precision or self.device.type != "cuda":
            return None
        return amp_dtype_for_gpu()

    def train_step(self, batch: Batch) -> dict[str, Any]:
        """One optimizer step on ``batch``; returns loss, accuracy, tokens, learning rate and stop.

        Alone, the step reads nothing on the host: loss, accuracy and tokens are
        0-d tensors on the device, which the loop reads at its log steps.

        With N replicas ``batch`` is the global batch: each replica trains on
        its rows (:func:`~txcourse.training.distributed.shard`) and the loss and
        accuracy returned are those of the whole batch. ``stop`` is True when
        any replica was asked to stop (a signal, ``max_seconds``), so all stop
        after the same step.
        """
        self.model.train()
        n = self.replicas.count
        total = target_tokens(batch)  # non-pad target tokens of the global batch
        part = shard(batch, self.replicas.first, n) if n > 1 else batch
        src = torch.from_numpy(part.src).to(self.device)  # (B/N, T_src)
        tgt_in = torch.from_numpy(part.tgt_in).to(self.device)  # (B/N, T_tgt)
        tgt_out = torch.from_numpy(part.tgt_out).to(self.device)  # (B/N, T_tgt)
        lr = self.scheduler.get_last_lr()[0]
        with torch.autocast(
            self.device.type, dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None
        ):
            logits = self.net(src, tgt_in)  # (B/N, T_tgt, V)
        loss, count = label_smoothed_cross_entropy(logits, tgt_out, self.config.label_smoothing, self.pad_id)
        # Replica r's share of the global batch's loss is S_r / total (S_r: the sum of its token losses);
        # DistributedDataParallel averages the N gradients, so each replica scales its share by N.
        objective = loss * (count.clamp(min=1) * n / max(total, 1)) if n > 1 else loss
        self._optimizer_step(objective)
        self.step += 1
        stop = self._stop_now()
        if n == 1:  # tensors on the device: the loop reads them at its log and checkpoint steps, not here
            return {
                "loss": loss.detach(),
                "accuracy": token_accuracy(logits.detach(), tgt_out, self.pad_id),
                "tokens": count,
                "lr": lr,
                "stop": stop,
            }
        return self._replica_means(loss, logits, tgt_out, count, total, lr, stop)

    def _optimizer_step(self, objective: torch.Tensor) -> None:
        """Back-propagate ``objective`` and update the weights (gradients clipped, scaled for float16), then the
        learning rate."""
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(objective).backward()
        if self.config.clip_norm is not None:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip_norm)
        scale = self.scaler.get_scale()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        if self.scaler.get_scale() >= scale:  # float16 only: a step skipped for inf/NaN gradients keeps the schedule
            self.scheduler.step()

    def _replica_means(
        self,
        loss: torch.Tensor,
        logits: torch.Tensor,
        tgt_out: torch.Tensor,
        count: torch.Tensor,
        total: int,
        lr: float,
        stop: bool,
    ) -> dict[str, float]:
        """What :meth:`train_step` returns with N replicas: loss and accuracy of the whole batch, summed over the
        replicas, and whether any of them was asked to stop."""
        correct = ((logits.detach().argmax(dim=-1) == tgt_out) & (tgt_out != self.pad_id)).sum()  # ()
        sums = torch.stack(
            [
                loss.detach().double() * count,
                correct.double(),
                torch.tensor(float(stop), dtype=torch.float64, device=self.device),
            ]
        )  # (3,): S_r, correct_r, stop_r
        dist.all_reduce(sums)  # summed over the replicas
        loss_sum, correct_sum, stops = sums.tolist()
        return {
            "loss": loss_sum / max(total, 1),
            "accuracy": correct_sum / max(total, 1),
            "tokens": total,
            "lr": lr,
            "stop": stops > 0,
        }

    def _evaluate(self, data: EncodedPairs) -> dict[str, float]:
        return evaluate(self.model, data, self.config.label_smoothing)

    def _weights_finite(self) -> bool:
        return all(torch.isfinite(p).all() for p in self.model.parameters())

    def _state_arrays(self) -> dict[str, np.ndarray]:
        """The weights, then the optimizer, schedule, loss scaler and RNG states (one ``torch.save`` blob)."""
        arrays = model_arrays(self.model)
        blob = io.BytesIO()
        torch.save(
            {
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "scaler": self.scaler.state_dict(),
                "rng_cpu": torch.get_rng_state(),
                "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            },
            blob,
        )
        arrays["torch_state"] = bytes_to_array(blob.getvalue())
        return arrays

    def _num_heads(self) -> int:
        return num_heads(self.model, self.model_config)

    def _restore(self, checkpoint: Checkpoint) -> None:
        """The weights and training state of a checkpoint :func:`~txcourse.training.checkpoint.load_checkpoint` checked;
        the weights are checked against its header here, by this half, which knows their names."""
        check_weights(checkpoint)
        load_model_arrays(self.model, checkpoint.arrays, checkpoint.path)
        state = torch.load(io.BytesIO(checkpoint.arrays["torch_state"].tobytes()), weights_only=True)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng_cuda"])
        if self.replicas.first:  # the checkpoint holds process 0's random state; the others draw their own
            torch.manual_seed(replica_seed(self.config.seed, self.replicas.first, checkpoint.step))


def evaluate(
    model: torch.nn.Module, data: EncodedPairs, smoothing: float = 0.1, batch_size: int = 256
) -> dict[str, float]:
    """Teacher-forced label-smoothed loss and token accuracy of ``model`` on ``data``, dropout off.

    The loss :class:`Trainer` logs (Sec. 5.4), but of fixed weights and
    without dropout: the validation curve. Draws no random number, and the
    model is left in the mode it was in.

    Args:
        model: a model built by :func:`build_model`.
        data: encoded pairs (at least one).
        smoothing: eps of the label-smoothed loss.
        batch_size: sentences per forward pass.

    Returns:
        ``{"loss": ..., "accuracy": ..., "tokens": ...}``: means over the non-pad target tokens, and their count.
    """
    device = next(model.parameters()).device
    training = model.training

    def score(batch: Batch) -> tuple[float, float, float]:
        src = torch.from_numpy(batch.src).to(device)  # (B, T_src)
        tgt_in = torch.from_numpy(batch.tgt_in).to(device)  # (B, T_tgt)
        tgt_out = torch.from_numpy(batch.tgt_out).to(device)  # (B, T_tgt)
        logits = model(src, tgt_in)  # (B, T_tgt, V)
        loss, count = label_smoothed_cross_entropy(logits, tgt_out, smoothing, data.pad_id)  # (), ()
        return float(loss), float(token_accuracy(logits, tgt_out, data.pad_id)), float(count)

    model.eval()
    try:
        with torch.no_grad():
            return evaluate_batches(data, batch_size, score)
    finally:
        model.train(training)


def load_model(path: str | os.PathLike | Checkpoint, device: str = "cpu") -> tuple[torch.nn.Module, dict[str, Any]]:
    """Build the model a checkpoint describes and load its weights. Returns (model in eval mode, header).

    ``path`` is a checkpoint file (read and checked by :func:`~txcourse.training.checkpoint.load_checkpoint`),
    or a :class:`~txcourse.training.checkpoint.Checkpoint` it already returned (not read or checked again).
    Either way this half then checks the weights against the header (:func:`~txcourse.torch.weights.check_weights`)
    before it builds the model.
    """
    checkpoint = path if isinstance(path, Checkpoint) else load_checkpoint(path, FRAMEWORK)
    check_weights(checkpoint)
    model = build_model(checkpoint.kind, model_config(checkpoint.kind, checkpoint.config))  # the header, read once
    load_model_arrays(model, checkpoint.arrays, checkpoint.path)
    return model.to(resolve_device(device)).eval(), checkpoint.meta
