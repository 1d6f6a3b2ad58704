"""Training with Adam and the warm-up schedule (Vaswani et al. 2017, Sec. 5). Book: week 6.

:class:`Trainer` runs teacher-forced training for any of the three models
(Transformer, Bahdanau GRU, GRU without attention), with gradient clipping,
mixed precision on a GPU, a tqdm progress bar, a history file, atomic
checkpoints and an exact resume. Given validation pairs, each history
record also holds their teacher-forced loss and accuracy (:func:`evaluate`).

The device and data-parallel training (book: appendix "Scaling up"):
:mod:`txcourse.tf.devices` (:func:`resolve_device`, :func:`data_parallel`,
re-exported here); the loop, checkpoints and resume:
:class:`~txcourse.training.loop.TrainingLoop`, shared with PyTorch.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator
from typing import Any, Optional

import keras
import numpy as np
import tensorflow as tf

from txcourse.config import Seq2SeqConfig, TransformerConfig, model_config
from txcourse.data.batching import Batch, EncodedPairs
from txcourse.registry import MODEL_KINDS
from txcourse.tf.devices import (
    check_mirrored,
    current_replicas,
    data_parallel,
    end_data_parallel,
    resolve_device,
    shard_tensors,
    uses_xla,
)
from txcourse.tf.loss import label_smoothed_cross_entropy, token_accuracy
from txcourse.tf.model import Transformer
from txcourse.tf.seq2seq import Seq2Seq
from txcourse.tf.weights import (
    check_weights,
    load_model_arrays,
    load_variables,
    model_arrays,
    num_heads,
    variable_arrays,
)
from txcourse.training import TrainConfig, noam_lr, noam_rate, schedule_width
from txcourse.training.checkpoint import Checkpoint, load_checkpoint
from txcourse.training.distributed import check_divisible, target_tokens
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

FRAMEWORK = "tf"


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and the framework (all devices).

    TensorFlow: ``keras.utils.set_random_seed`` (it also resets Keras' global seed generator).
    """
    keras.utils.set_random_seed(seed)


def build_model(kind: str, config: TransformerConfig | Seq2SeqConfig | dict[str, Any]) -> keras.Model:
    """Build 'transformer' (config: a TransformerConfig), 'bahdanau' or 'seq2seq' (config: a Seq2SeqConfig).

    The config object is used as it is; a dict of its fields is read once (:func:`~txcourse.config.model_config`).
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"model kind must be one of {list(MODEL_KINDS)}, got {kind!r}")
    if kind == "transformer":
        return Transformer(model_config(kind, config))
    return Seq2Seq(model_config(kind, config), attention=kind == "bahdanau")


class NoamSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """:func:`~txcourse.training.noam_lr` as a Keras schedule; optimizer step s (from 0) uses noam_lr(s + 1).

    The arithmetic is noam_lr's own (:func:`~txcourse.training.noam_rate`), run
    on a float64 step with TensorFlow's minimum and clip, so the rate equals the
    Python function (and PyTorch's LambdaLR) to the last digits.
    """

    def __init__(
        self, width: int, warmup_steps: int, factor: float, total_steps: Optional[int] = None, cooldown_steps: int = 0
    ):
        self.width, self.warmup_steps, self.factor = width, warmup_steps, factor
        self.total_steps, self.cooldown_steps = total_steps, cooldown_steps

    def __call__(self, step: tf.Tensor) -> tf.Tensor:
        s = tf.cast(step, tf.float64) + 1.0  # noam_lr counts steps from 1
        return noam_rate(
            s,
            self.width,
            self.warmup_steps,
            self.factor,
            self.total_steps,
            self.cooldown_steps,
            minimum=tf.minimum,
            clip=tf.clip_by_value,
        )

    def get_config(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "warmup_steps": self.warmup_steps,
            "factor": self.factor,
            "total_steps": self.total_steps,
            "cooldown_steps": self.cooldown_steps,
        }


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
    _versions = {"tf_version": tf.__version__, "keras_version": keras.__version__}

    def __init__(
        self,
        model: keras.Model,
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
        self.model = model  # Keras places variables itself; the step runs under tf.device(self.device)
        self.replicas = current_replicas()  # the strategy whose scope this Trainer is built in (data_parallel)
        check_divisible(config.batch_size, self.replicas.count)
        if self.replicas.count > 1:
            check_mirrored(model)
        width = schedule_width(kind, self.model_config)
        self._schedule_args = (width, config.warmup_steps, config.lr_factor, config.steps, config.cooldown_steps)
        self.schedule = NoamSchedule(*self._schedule_args)
        with self.replicas.scope():
            self.optimizer = keras.optimizers.Adam(
                learning_rate=self.schedule,
                beta_1=config.adam_betas[0],
                beta_2=config.adam_betas[1],
                epsilon=config.adam_eps,
            )
            self.optimizer.build(self.model.trainable_variables)  # its variables exist before save() or load()
        self.amp_policy = self._amp_policy()
        # No Python control flow depends on tensors, so autograph is off (faster tracing).
        jit = uses_xla(getattr(self.model_config, "fused", False), self.device)
        if self.replicas.count > 1:  # the step of each replica runs inside strategy.run; only its gradients in XLA
            self._gradients = tf.function(self._replica_gradients, autograph=False, jit_compile=jit)
            self._step = tf.function(
                self._distributed_step,
                input_signature=[tf.TensorSpec((None, None), tf.int64)] * 3 + [tf.TensorSpec((), tf.float32)],
                autograph=False,
                reduce_retracing=True,
            )
        elif kind == "transformer":  # one graph for every batch shape (B, T): the same numerics after a resume
            self._step = tf.function(
                self._train_step,
                input_signature=[tf.TensorSpec((None, None), tf.int64)] * 3,
                autograph=False,
                jit_compile=jit,
            )
        else:  # the GRU decoder loops over a known length: one graph per batch shape
            self._step = tf.function(self._train_step, autograph=False)
        set_seed(config.seed)
        _reseed_dropout(self.model)

    def _amp_policy(self) -> Optional[str]:
        if not self.config.mixed_precision or not self.device.upper().startswith("/GPU"):
            return None
        details = tf.config.experimental.get_device_details(tf.config.list_physical_devices("GPU")[0])
        # bfloat16 needs no loss scaling; float16 (older GPUs) would, so those train in float32
        return "mixed_bfloat16" if details.get("compute_capability", (0, 0)) >= (8, 0) else None

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
        src = tf.constant(batch.src, tf.int64)  # (B, T_src)
        tgt_in = tf.constant(batch.tgt_in, tf.int64)  # (B, T_tgt)
        tgt_out = tf.constant(batch.tgt_out, tf.int64)  # (B, T_tgt)
        lr = noam_lr(self.step + 1, *self._schedule_args)  # the schedule's rate, from the host's step count
        stop = self._stop_now()
        if self.replicas.count > 1:
            total = target_tokens(batch)  # non-pad target tokens of the global batch
            with _autocast(self.model, self.amp_policy):
                loss_sum, correct, stops = self._step(src, tgt_in, tgt_out, tf.constant(float(stop)))
            self.step += 1
            return {
                "loss": float(loss_sum) / max(total, 1),
                "accuracy": float(correct) / max(total, 1),
                "tokens": total,
                "lr": lr,
                "stop": float(stops) > 0,
            }
        with tf.device(self.device), _autocast(self.model, self.amp_policy):
            loss, count, accuracy = self._step(src, tgt_in, tgt_out)
        self.step += 1
        # tensors on the device: the loop reads them at its log and checkpoint steps, not here
        return {"loss": loss, "accuracy": accuracy, "tokens": count, "lr": lr, "stop": stop}

    def _evaluate(self, data: EncodedPairs) -> dict[str, float]:
        return evaluate(self.model, data, self.config.label_smoothing)

    def _weights_finite(self) -> bool:
        return all(np.isfinite(v.numpy()).all() for v in self.model.trainable_variables)

    def _state_arrays(self) -> dict[str, np.ndarray]:
        """The weights, then the optimizer (its iterations: the schedule; Adam's moments) and the RNG state."""
        arrays = model_arrays(self.model)  # weights and the dropout seed states
        arrays.update(variable_arrays("optimizer", self.optimizer.variables))
        arrays["rng/tf_global_generator"] = tf.random.get_global_generator().state.numpy()
        return arrays

    def _num_heads(self) -> int:
        return num_heads(self.model, self.model_config)

    def _restore(self, checkpoint: Checkpoint) -> None:
        """The weights and training state of a checkpoint :func:`~txcourse.training.checkpoint.load_checkpoint` checked;
        the weights are checked against its header here, by this half, which knows their names."""
        check_weights(checkpoint)
        load_model_arrays(self.model, checkpoint.arrays, checkpoint.path)
        load_variables("optimizer", self.optimizer.variables, checkpoint.arrays, checkpoint.path)
        if "rng/tf_global_generator" in checkpoint.arrays:
            tf.random.get_global_generator().state.assign(checkpoint.arrays["rng/tf_global_generator"])

    def _train_step(
        self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The compiled part of :meth:`train_step`: forward, loss, gradients, clipping, Adam."""
        with tf.GradientTape() as tape:
            logits = self.model(src, tgt_in, training=True)  # (B, T_tgt, V)
            loss, count = label_smoothed_cross_entropy(logits, tgt_out, self.config.label_smoothing, self.pad_id)
        # Dense: the embeddings' IndexedSlices hold one row per token occurrence, and the global norm of those
        # rows is not the norm of the gradient (PyTorch's clip_grad_norm_ takes the dense gradient's).
        gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss, self.model.trainable_variables)]
        if self.config.clip_norm is not None:
            gradients, _ = tf.clip_by_global_norm(gradients, self.config.clip_norm)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        return loss, count, token_accuracy(logits, tgt_out, self.pad_id)

    def _distributed_step(
        self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, stop: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The compiled step with N replicas: each runs :meth:`_replica_step`; returns the sums over replicas
        of the token losses, of the correct tokens and of the stop flags."""
        strategy = self.replicas.engine
        loss_sum, correct, stops = strategy.run(self._replica_step, args=(src, tgt_in, tgt_out, stop))
        return (
            strategy.reduce(tf.distribute.ReduceOp.SUM, loss_sum, axis=None),
            strategy.reduce(tf.distribute.ReduceOp.SUM, correct, axis=None),
            strategy.experimental_local_results(stops)[0],
        )  # already summed over the replicas

    def _replica_step(
        self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, stop: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """One replica's part: its rows of the global batch, the summed gradients, clipping, Adam."""
        context = tf.distribute.get_replica_context()
        n = context.num_replicas_in_sync
        total = tf.reduce_sum(tf.cast(tf.not_equal(tgt_out, self.pad_id), tf.float32))  # tokens of the global batch
        src, tgt_in, tgt_out = shard_tensors(src, tgt_in, tgt_out, context.replica_id_in_sync_group, n, self.pad_id)
        loss_sum, correct, gradients = self._gradients(src, tgt_in, tgt_out, total)
        # Replica r's gradient is that of S_r / total; their sum is the gradient of the global batch's loss.
        gradients = context.all_reduce(tf.distribute.ReduceOp.SUM, gradients)
        if self.config.clip_norm is not None:  # the global norm of the summed gradient, as with one replica
            gradients, _ = tf.clip_by_global_norm(gradients, self.config.clip_norm)
        # Keras 3 sums the replicas' gradients again inside apply_gradients: hand it each replica's 1/N share.
        gradients = [g / n for g in gradients]
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        flags = context.all_reduce(tf.distribute.ReduceOp.SUM, tf.identity(stop))  # > 0: some replica stops
        return loss_sum, correct, flags

    def _replica_gradients(
        self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, total: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor, list]:
        """Forward and backward on one replica's rows: the sum of its token losses, its correct tokens and the
        gradient of (its token losses) / ``total``."""
        with tf.GradientTape() as tape:
            logits = self.model(src, tgt_in, training=True)  # (B/N, T_tgt, V)
            loss, count = label_smoothed_cross_entropy(logits, tgt_out, self.config.label_smoothing, self.pad_id)
            loss_sum = loss * tf.cast(tf.maximum(count, 1), tf.float32)  # S_r
            share = loss_sum / tf.maximum(total, 1.0)  # S_r / n
        gradients = [tf.convert_to_tensor(g) for g in tape.gradient(share, self.model.trainable_variables)]  # dense
        keep = tf.not_equal(tgt_out, self.pad_id)  # (B/N, T_tgt)
        hits = tf.equal(tf.argmax(logits, axis=-1, output_type=tgt_out.dtype), tgt_out) & keep  # (B/N, T_tgt)
        return loss_sum, tf.reduce_sum(tf.cast(hits, tf.float32)), gradients


def evaluate(model: keras.Model, data: EncodedPairs, smoothing: float = 0.1, batch_size: int = 256) -> dict[str, float]:
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

    def score(batch: Batch) -> tuple[float, float, float]:
        src = tf.constant(batch.src, tf.int64)  # (B, T_src)
        tgt_in = tf.constant(batch.tgt_in, tf.int64)  # (B, T_tgt)
        tgt_out = tf.constant(batch.tgt_out, tf.int64)  # (B, T_tgt)
        logits = model(src, tgt_in, training=False)  # (B, T_tgt, V)
        loss, count = label_smoothed_cross_entropy(logits, tgt_out, smoothing, data.pad_id)  # (), ()
        return float(loss), float(token_accuracy(logits, tgt_out, data.pad_id)), float(count)

    return evaluate_batches(data, batch_size, score)


def _reseed_dropout(model: keras.Model) -> None:
    """Draw new states for the model's dropout seed generators from the freshly seeded Python RNG.

    Keras' Dropout draws its masks from a SeedGenerator whose state (a
    non-trainable variable) was fixed when the model was built; after this,
    the masks depend on ``TrainConfig.seed`` alone, as in PyTorch.
    """
    for variable in model.non_trainable_variables:
        if variable.path.endswith("seed_generator_state"):
            variable.assign(np.array([random.randint(1, 10**9), 0], dtype=variable.dtype))


@contextlib.contextmanager
def _autocast(model: keras.Model, policy: Optional[str]) -> Iterator[None]:
    """Run every layer of ``model`` under a mixed-precision ``policy`` (float32 weights), then restore."""
    if policy is None:
        yield
        return
    layers = list(model._flatten_layers(include_self=True, recursive=True))
    saved = [layer.dtype_policy for layer in layers]
    for layer in layers:
        layer.dtype_policy = policy
    try:
        yield
    finally:
        for layer, old in zip(layers, saved):
            layer.dtype_policy = old


def load_model(path: str | os.PathLike | Checkpoint, device: str = "cpu") -> tuple[keras.Model, dict[str, Any]]:
    """Build the model a checkpoint describes and load its weights. Returns (model in eval mode, header).

    ``path`` is a checkpoint file (read and checked by :func:`~txcourse.training.checkpoint.load_checkpoint`),
    or a :class:`~txcourse.training.checkpoint.Checkpoint` it already returned (not read or checked again).
    Either way this half then checks the weights against the header (:func:`~txcourse.tf.weights.check_weights`)
    before it builds the model.

    Keras has no eval mode: its layers run without dropout unless called with training=True.
    """
    checkpoint = path if isinstance(path, Checkpoint) else load_checkpoint(path, FRAMEWORK)
    check_weights(checkpoint)
    with tf.device(resolve_device(device)):
        model = build_model(checkpoint.kind, model_config(checkpoint.kind, checkpoint.config))  # the header, read once
    load_model_arrays(model, checkpoint.arrays, checkpoint.path)
    return model, checkpoint.meta
