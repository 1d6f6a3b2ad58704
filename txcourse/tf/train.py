"""Training with Adam and the warm-up schedule (Vaswani et al. 2017, Sec. 5). Book: week 6.

:class:`Trainer` runs teacher-forced training for any of the three models
(Transformer, Bahdanau GRU, GRU without attention), with gradient clipping,
mixed precision on a GPU, a tqdm progress bar, a history file, atomic
checkpoints and an exact resume. Given validation pairs, each history
record also holds their teacher-forced loss and accuracy (:func:`evaluate`).

Data-parallel (book: appendix "Scaling up"; :mod:`txcourse.distributed`):
:func:`data_parallel` makes a ``tf.distribute`` strategy (MirroredStrategy
over this machine's devices, MultiWorkerMirroredStrategy across the workers
of ``TF_CONFIG``) and a Trainer built in its scope runs its step on every
replica; N replicas with B/N sentences each then take the steps of one
replica with batch B.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
from typing import Any, Iterator, Optional

import keras
import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from txcourse.checkpoint import (check_checkpoint, check_resumable, check_weights, heads_array, read_checkpoint,
                                 write_checkpoint)
from txcourse.config import TransformerConfig
from txcourse.data.batching import Batch, EncodedPairs, make_batches
from txcourse.distributed import SINGLE, Replicas, check_divisible, target_tokens, tf_config
from txcourse.training import MODEL_KINDS, BatchStream, DivergenceWatch, History, TrainConfig, check_valid, diverged
from txcourse.tf.attention import MultiHeadAttention
from txcourse.tf.loss import label_smoothed_cross_entropy, token_accuracy
from txcourse.tf.model import Transformer
from txcourse.tf.seq2seq import Seq2Seq

__all__ = ["Trainer", "build_model", "evaluate", "load_model", "resolve_device", "set_seed", "data_parallel",
           "end_data_parallel"]

FRAMEWORK = "tf"


def resolve_device(device: str = "auto") -> str:
    """'auto' -> a GPU if one is available, else the CPU.

    TensorFlow: returns a device name, '/GPU:0' or '/CPU:0'; 'cpu', 'cuda', 'cuda:i' ('/GPU:i') and 'mps'
    (tensorflow-metal) are mapped, a TensorFlow name ('/GPU:1') is used as given.
    A GPU that is not there raises ValueError (never a silent fall-back to the CPU).
    """
    gpus = len(tf.config.list_physical_devices("GPU"))
    if device == "auto":
        if gpus:
            return "/GPU:0"
        return "/CPU:0"
    index = _gpu_index(device)
    count = gpus
    if index is not None and index >= count:
        raise ValueError(f"device {device!r} is not available: TensorFlow sees {count} "
                         f"{'Apple (tensorflow-metal)' if device == 'mps' else 'CUDA'} GPU(s) here; use 'cpu', or "
                         f"'auto' (a GPU when there is one)")
    return "/CPU:0" if index is None else f"/GPU:{index}"


def _gpu_index(device: str) -> Optional[int]:
    """0 for 'cuda' and 'mps', i for 'cuda:i' and '/GPU:i', None for 'cpu'; ValueError for any other name."""
    if device == "cpu" or device.upper().startswith("/CPU"):
        return None
    if device in ("cuda", "mps"):  # Apple GPUs show up as a TensorFlow GPU (tensorflow-metal)
        return 0
    if device.startswith(("cuda:", "/GPU:", "/gpu:")) and device.split(":", 1)[1].isdigit():
        return int(device.split(":", 1)[1])
    raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps', got {device!r}")


def uses_xla(fused: bool, device: str) -> bool:
    """Whether the Trainer compiles the training step with XLA (``jit_compile=True``): the fused path on a GPU.

    On a GPU XLA fuses the attention's matmuls, masking and softmax. Not on
    a CPU, where it gains a few per cent at most (``benchmarks/train_step.py``:
    0.95x to 1.00x the plain graph's time) and its compiler needs about 1.3x the memory:
    there the fused configuration trains in the plain ``tf.function``.
    """
    return fused and device.upper().startswith("/GPU")


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and the framework (all devices).

    TensorFlow: ``keras.utils.set_random_seed`` (it also resets Keras' global seed generator).
    """
    keras.utils.set_random_seed(seed)


def data_parallel(device: str = "auto", replicas: int = 1) -> Replicas:
    """Join the data-parallel run this process was started in; a :class:`~txcourse.distributed.Replicas`.

    Call it before building the model; build the model and the Trainer inside
    ``replicas.scope()``. ``replicas`` is the number of model replicas this
    process runs.

    TensorFlow: with ``TF_CONFIG`` set, a ``MultiWorkerMirroredStrategy``
    across its workers (each with its GPUs, or its CPU; the chief, worker 0,
    writes); else ``replicas`` > 1 makes a ``MirroredStrategy`` over the first
    ``replicas`` GPUs, or, with ``device`` 'cpu', over as many logical CPU
    devices (this must run before TensorFlow initialises its devices).
    """
    cluster = tf_config()
    if cluster is not None:
        if replicas != 1:
            raise ValueError(f"--replicas {replicas}: with TF_CONFIG set, MultiWorkerMirroredStrategy runs on every "
                             f"GPU (or the CPU) of each worker; drop --replicas")
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        return _current_replicas(strategy)
    if replicas == 1:
        return SINGLE
    if _gpu_index(device) is None and device != "auto" or not tf.config.list_physical_devices("GPU"):
        if device not in ("cpu", "auto") and not device.upper().startswith("/CPU"):
            raise ValueError(f"--replicas {replicas} --device {device}: TensorFlow sees no GPU here")
        cpu = tf.config.list_physical_devices("CPU")[0]
        try:
            tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
        except RuntimeError:  # already initialised: use the logical devices it has, if enough
            pass
        names = [d.name for d in tf.config.list_logical_devices("CPU")]
    else:
        names = [d.name for d in tf.config.list_logical_devices("GPU")]
    if len(names) < replicas:
        raise ValueError(f"--replicas {replicas}: TensorFlow has {len(names)} device(s) of that kind here "
                         f"({', '.join(names) or 'none'}); use at most {len(names)}")
    return _current_replicas(tf.distribute.MirroredStrategy(names[:replicas]))


def end_data_parallel() -> None:
    """Leave the data-parallel run (PyTorch: destroy the process group), once training is over.

    TensorFlow: nothing to do; the strategy ends with the process.
    """


def _current_replicas(strategy: Optional[tf.distribute.Strategy] = None) -> Replicas:
    """The strategy given, else the one whose scope is open; SINGLE for none (or one replica)."""
    if strategy is None and not tf.distribute.has_strategy():
        return SINGLE
    strategy = strategy or tf.distribute.get_strategy()
    cluster = tf_config() if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) else None
    workers, index = (cluster["workers"], cluster["index"]) if cluster else (1, 0)
    count = strategy.num_replicas_in_sync
    if count == 1 and workers == 1:
        return SINGLE
    local = count // workers
    return Replicas(count=count, first=index * local, local=local, process_index=index, process_count=workers,
                    engine=strategy)


def build_model(kind: str, config: dict[str, Any]) -> keras.Model:
    """Build 'transformer' (config: TransformerConfig fields), 'bahdanau' or 'seq2seq' (config:
    src_vocab_size, tgt_vocab_size, embedding_dim, units, pad_id)."""
    if kind == "transformer":
        return Transformer(TransformerConfig.from_dict(config))
    if kind in ("bahdanau", "seq2seq"):
        return Seq2Seq(attention=kind == "bahdanau", **config)
    raise ValueError(f"model kind must be one of {list(MODEL_KINDS)}, got {kind!r}")


def _schedule_width(kind: str, config: dict[str, Any]) -> int:
    return config["d_model"] if kind == "transformer" else config["units"]


class NoamSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """:func:`~txcourse.training.noam_lr` in TensorFlow ops; optimizer step s (from 0) uses noam_lr(s + 1).

    Computed in float64, so the rate equals the Python function (and PyTorch's LambdaLR) to the last digits.
    """

    def __init__(self, width: int, warmup_steps: int, factor: float, total_steps: Optional[int] = None,
                 cooldown_steps: int = 0):
        self.width, self.warmup_steps, self.factor = width, warmup_steps, factor
        self.total_steps, self.cooldown_steps = total_steps, cooldown_steps

    def __call__(self, step: tf.Tensor) -> tf.Tensor:
        s = tf.cast(step, tf.float64) + 1.0  # noam_lr counts steps from 1
        rate = self.factor * self.width ** -0.5 * tf.minimum(s ** -0.5, s * self.warmup_steps ** -1.5)
        if self.cooldown_steps:  # the last cooldown_steps scale the rate linearly down
            rate *= tf.clip_by_value((self.total_steps - s + 1.0) / self.cooldown_steps, 0.0, 1.0)
        return rate

    def get_config(self) -> dict[str, Any]:
        return {"width": self.width, "warmup_steps": self.warmup_steps, "factor": self.factor,
                "total_steps": self.total_steps, "cooldown_steps": self.cooldown_steps}


class Trainer:
    """Teacher-forced training of ``model`` on ``data`` (see the module docstring).

    Args:
        model: built by :func:`build_model` from ``kind`` and ``model_config``.
        kind: 'transformer', 'bahdanau' or 'seq2seq'.
        model_config: the dict the model was built from (saved in checkpoints).
        data: the encoded training pairs.
        config: a :class:`~txcourse.training.TrainConfig`.
        history_path: a JSON-lines history file (None: keep in memory only).
        metadata: extra JSON-able facts saved in checkpoints (tokenizers, task).
        valid: encoded validation pairs; each history record then adds
            ``valid_loss`` and ``valid_accuracy`` (:func:`evaluate`: teacher-forced,
            dropout off). Evaluating draws no random number, so the weights
            are those of the same run without ``valid``.

    Example:
        >>> trainer = Trainer(model, "transformer", cfg.to_dict(), data, TrainConfig(steps=100))
        >>> records = trainer.fit()
        >>> trainer.save("run/model.npz")
    """

    def __init__(self, model: keras.Model, kind: str, model_config: dict[str, Any], data: EncodedPairs,
                 config: TrainConfig = TrainConfig(), history_path: Optional[str] = None,
                 metadata: Optional[dict[str, Any]] = None, valid: Optional[EncodedPairs] = None):
        if kind not in MODEL_KINDS:
            raise ValueError(f"kind must be one of {list(MODEL_KINDS)}, got {kind!r}")
        self.kind, self.model_config, self.config = kind, dict(model_config), config
        self.metadata = dict(metadata or {})
        self.valid = check_valid(valid)
        self.device = resolve_device(config.device)
        self.model = model  # Keras places variables itself; the step runs under tf.device(self.device)
        self.pad_id = model_config.get("pad_id", 0)
        self.replicas = _current_replicas()  # the strategy whose scope this Trainer is built in (data_parallel)
        check_divisible(config.batch_size, self.replicas.count)
        if self.replicas.count > 1:
            _check_mirrored(model)
        width = _schedule_width(kind, model_config)
        self.schedule = NoamSchedule(width, config.warmup_steps, config.lr_factor, config.steps, config.cooldown_steps)
        with self.replicas.scope():
            self.optimizer = keras.optimizers.Adam(learning_rate=self.schedule, beta_1=config.adam_betas[0],
                                                   beta_2=config.adam_betas[1], epsilon=config.adam_eps)
            self.optimizer.build(self.model.trainable_variables)  # its variables exist before save() or load()
        self.stream = BatchStream(data, config.batch_size, config.max_tokens, config.seed)
        self.step = 0
        self.history_path = history_path
        self.history: Optional[History] = None  # opened by fit(), after a possible load()
        self._resume_step: Optional[int] = None
        self.stop_requested = False  # set (by a signal handler) to stop fit() after the current step
        self.amp_policy = self._amp_policy()
        # No Python control flow depends on tensors, so autograph is off (faster tracing).
        jit = uses_xla(bool(model_config.get("fused", False)), self.device)
        self._deadline: Optional[float] = None  # time.perf_counter() at which fit() stops (max_seconds)
        if self.replicas.count > 1:  # the step of each replica runs inside strategy.run; only its gradients in XLA
            self._gradients = tf.function(self._replica_gradients, autograph=False, jit_compile=jit)
            self._step = tf.function(self._distributed_step, input_signature=[tf.TensorSpec((None, None), tf.int64)]
                                     * 3 + [tf.TensorSpec((), tf.float32)], autograph=False, reduce_retracing=True)
        elif kind == "transformer":  # one graph for every batch shape (B, T): the same numerics after a resume
            self._step = tf.function(self._train_step, input_signature=[tf.TensorSpec((None, None), tf.int64)] * 3,
                                     autograph=False, jit_compile=jit)
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

    def train_step(self, batch: Batch) -> dict[str, float]:
        """One optimizer step on ``batch``; returns loss, accuracy, tokens, learning rate and stop.

        With N replicas ``batch`` is the global batch: each replica trains on
        its rows (:func:`~txcourse.distributed.shard`) and the loss and
        accuracy returned are those of the whole batch. ``stop`` is True when
        any replica was asked to stop (a signal, ``max_seconds``), so all stop
        after the same step.
        """
        src = tf.constant(batch.src, tf.int64)  # (B, T_src)
        tgt_in = tf.constant(batch.tgt_in, tf.int64)  # (B, T_tgt)
        tgt_out = tf.constant(batch.tgt_out, tf.int64)  # (B, T_tgt)
        lr = float(self.schedule(self.optimizer.iterations))
        stop = self.stop_requested or (self._deadline is not None and time.perf_counter() > self._deadline)
        if self.replicas.count > 1:
            total = target_tokens(batch)  # non-pad target tokens of the global batch
            with _autocast(self.model, self.amp_policy):
                loss_sum, correct, stops = self._step(src, tgt_in, tgt_out, tf.constant(float(stop)))
            self.step += 1
            return {"loss": float(loss_sum) / max(total, 1), "accuracy": float(correct) / max(total, 1),
                    "tokens": total, "lr": lr, "stop": float(stops) > 0}
        with tf.device(self.device), _autocast(self.model, self.amp_policy):
            loss, count, accuracy = self._step(src, tgt_in, tgt_out)
        self.step += 1
        return {"loss": float(loss), "accuracy": float(accuracy), "tokens": int(count), "lr": lr, "stop": stop}

    def _train_step(self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor
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

    def _distributed_step(self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, stop: tf.Tensor
                          ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The compiled step with N replicas: each runs :meth:`_replica_step`; returns the sums over replicas
        of the token losses, of the correct tokens and of the stop flags."""
        strategy = self.replicas.engine
        loss_sum, correct, stops = strategy.run(self._replica_step, args=(src, tgt_in, tgt_out, stop))
        return (strategy.reduce(tf.distribute.ReduceOp.SUM, loss_sum, axis=None),
                strategy.reduce(tf.distribute.ReduceOp.SUM, correct, axis=None),
                strategy.experimental_local_results(stops)[0])  # already summed over the replicas

    def _replica_step(self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, stop: tf.Tensor
                      ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """One replica's part: its rows of the global batch, the summed gradients, clipping, Adam."""
        context = tf.distribute.get_replica_context()
        n = context.num_replicas_in_sync
        total = tf.reduce_sum(tf.cast(tf.not_equal(tgt_out, self.pad_id), tf.float32))  # tokens of the global batch
        src, tgt_in, tgt_out = _shard(src, tgt_in, tgt_out, context.replica_id_in_sync_group, n, self.pad_id)
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

    def _replica_gradients(self, src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, total: tf.Tensor
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

    def fit(self, steps: Optional[int] = None, checkpoint_path: Optional[str] = None) -> list[dict[str, Any]]:
        """Train until ``steps`` optimizer steps in total (default ``config.steps``).

        Writes a history record every ``log_every`` steps and a checkpoint
        every ``checkpoint_every`` steps and at the end (when
        ``checkpoint_path`` is given); stops early after
        ``config.max_seconds`` of training. Returns the history records.
        """
        target = self.config.steps if steps is None else steps
        if self.history is None:
            path = self.history_path if self.replicas.writer else None  # one process writes the history
            self.history = History(path, resume_step=self._resume_step)
        # a run stopped between two records resumes their sums, so its history reads as if it never stopped
        pending = self.history.take_pending()
        totals = pending or {"loss": 0.0, "accuracy": 0.0, "tokens": 0, "n": 0}
        began = time.perf_counter()
        start = began - (totals.pop("seconds", 0.0) if pending else 0.0)
        self._deadline = None if self.config.max_seconds is None else began + self.config.max_seconds
        bar = tqdm(total=target, initial=self.step, desc=f"train {self.kind} ({FRAMEWORK})",
                   disable=not (self.config.progress and self.replicas.writer), dynamic_ncols=True)
        watch = DivergenceWatch(self.model_config["tgt_vocab_size"])
        while self.step < target:
            out = self.train_step(next(self.stream))
            problem = watch(out["loss"])  # the same in every replica: the whole batch's loss
            if problem is not None:
                raise FloatingPointError(diverged(problem, self.step, self.config))
            for key in ("loss", "accuracy"):
                totals[key] += out[key]
            totals["tokens"] += out["tokens"]
            totals["n"] += 1
            elapsed = time.perf_counter() - start
            bar.update(1)
            bar.set_postfix(loss=f"{out['loss']:.3f}", tok_s=f"{totals['tokens'] / max(elapsed, 1e-9):.0f}")
            # agreed by every replica (all stop after the same step); alone, a request made during the step counts
            out_of_time = out["stop"] or (self.replicas.count == 1 and self.stop_requested)
            if self.step % self.config.log_every == 0 or self.step == target or out_of_time:
                record = {"step": self.step, "loss": totals["loss"] / totals["n"],
                          "accuracy": totals["accuracy"] / totals["n"], "lr": out["lr"],
                          "tokens_per_s": totals["tokens"] / max(elapsed, 1e-9)}
                if self.valid is not None:  # every replica evaluates the same weights: their records agree
                    scores = evaluate(self.model, self.valid, self.config.label_smoothing)
                    if not math.isfinite(scores["loss"]):  # finite weights whose outputs overflow
                        raise FloatingPointError(diverged(f"the validation loss is {scores['loss']}", self.step,
                                                          self.config))
                    record.update(valid_loss=scores["loss"], valid_accuracy=scores["accuracy"])
                    bar.set_postfix(loss=f"{out['loss']:.3f}", valid=f"{scores['loss']:.3f}")
                if self.step % self.config.log_every and self.step != target:  # stopped between two records
                    record["partial"] = {**totals, "seconds": elapsed}  # resumed by the next fit (take_pending)
                self.history.append(record)
                totals = {"loss": 0.0, "accuracy": 0.0, "tokens": 0, "n": 0}
                start = time.perf_counter()
            if checkpoint_path and self.config.checkpoint_every and self.step % self.config.checkpoint_every == 0:
                self._save_finite(checkpoint_path)
            if out_of_time:
                break
        bar.close()
        if checkpoint_path:
            self._save_finite(checkpoint_path)
        return self.history.records

    def _save_finite(self, path: str) -> None:
        """Save, unless an update made a weight non-finite: then the checkpoint on disk is the last good one.

        With several processes only the writer (the chief) saves; the weights are the same in every one.
        """
        if not all(np.isfinite(v.numpy()).all() for v in self.model.trainable_variables):
            raise FloatingPointError(diverged("a weight is not finite", self.step, self.config))
        if self.replicas.writer:
            self.save(path)

    def save(self, path: str) -> None:
        """Write a checkpoint (model, optimizer, schedule, data position, RNG) atomically."""
        arrays = _variable_arrays("model", self.model.variables)  # weights and the dropout seed states
        arrays.update(_variable_arrays("optimizer", self.optimizer.variables))  # iterations (schedule), Adam moments
        arrays["rng/tf_global_generator"] = tf.random.get_global_generator().state.numpy()
        arrays.update(heads_array(_num_heads(self.model, self.model_config)) if self.kind == "transformer" else {})
        meta = {"framework": FRAMEWORK, "model": {"kind": self.kind, "config": self.model_config},
                "step": self.step, "stream": self.stream.state(), "train_config": self.config.to_dict(),
                "tf_version": tf.__version__, "keras_version": keras.__version__, **self.metadata}
        write_checkpoint(path, meta, arrays)

    def load(self, path: str) -> None:
        """Restore everything :meth:`save` wrote: training continues exactly where it stopped."""
        meta, arrays = read_checkpoint(path)
        check_checkpoint(path, meta, FRAMEWORK, self.kind)
        check_resumable(path, meta)
        check_weights(path, meta, arrays)
        _load_variables("model", self.model.variables, arrays, path)
        _load_variables("optimizer", self.optimizer.variables, arrays, path)
        if "rng/tf_global_generator" in arrays:
            tf.random.get_global_generator().state.assign(arrays["rng/tf_global_generator"])
        self.step = int(meta["step"])
        self.stream.load_state(meta["stream"])
        self._resume_step, self.history = self.step, None


def evaluate(model: keras.Model, data: EncodedPairs, smoothing: float = 0.1,
             batch_size: int = 256) -> dict[str, float]:
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
    check_valid(data)
    pad_id = data.pad_id
    loss_sum = correct = tokens = 0.0
    for batch in make_batches(data, batch_size=batch_size, shuffle=False):
        src = tf.constant(batch.src, tf.int64)  # (B, T_src)
        tgt_in = tf.constant(batch.tgt_in, tf.int64)  # (B, T_tgt)
        tgt_out = tf.constant(batch.tgt_out, tf.int64)  # (B, T_tgt)
        logits = model(src, tgt_in, training=False)  # (B, T_tgt, V)
        loss, count = label_smoothed_cross_entropy(logits, tgt_out, smoothing, pad_id)  # (), ()
        n = float(count)
        loss_sum += float(loss) * n
        correct += float(token_accuracy(logits, tgt_out, pad_id)) * n
        tokens += n
    return {"loss": loss_sum / max(tokens, 1.0), "accuracy": correct / max(tokens, 1.0), "tokens": tokens}


def _num_heads(model: keras.Model, config: dict[str, Any]) -> int:
    """The number of heads of the model's attention layers (all alike in a Transformer; the config's if none)."""
    heads = {m.num_heads for m in model._flatten_layers() if isinstance(m, MultiHeadAttention)} or {config["num_heads"]}
    if len(heads) != 1:
        raise ValueError(f"expected one number of heads in the model, found {sorted(heads)}")
    return heads.pop()


def _shard(src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, index: tf.Tensor, count: int, pad_id: int
           ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """:func:`txcourse.distributed.shard` in TensorFlow ops: replica ``index``'s rows of the global batch.

    Shape:
        (B, T) each; returns (ceil or floor of B / count, T) each, at least one row (a row of padding
        targets, which counts for nothing, when B < count leaves this replica none).
    """
    rows = tf.shape(src)[0]
    base, extra = rows // count, rows % count  # the first `extra` replicas take one row more
    index = tf.cast(index, tf.int32)
    start = index * base + tf.minimum(index, extra)
    size = base + tf.cast(index < extra, tf.int32)
    take = tf.minimum(tf.range(start, start + tf.maximum(size, 1)), rows - 1)  # (B/N,)
    targets = tf.where(size > 0, tf.gather(tgt_out, take), tf.cast(pad_id, tgt_out.dtype))
    return tf.gather(src, take), tf.gather(tgt_in, take), targets


def _check_mirrored(model: keras.Model) -> None:
    """A model for several replicas must be built inside ``replicas.scope()`` (its variables mirrored)."""
    plain = [v.path for v in model.variables if not isinstance(getattr(v, "value", v), tf.distribute.DistributedValues)]
    if plain or not model.variables:
        raise ValueError(f"the model's variables are not mirrored ({plain[:3] or 'none built'}): build the model "
                         f"and the Trainer inside replicas.scope() (replicas = data_parallel(...))")


def _reseed_dropout(model: keras.Model) -> None:
    """Draw new states for the model's dropout seed generators from the freshly seeded Python RNG.

    Keras' Dropout draws its masks from a SeedGenerator whose state (a
    non-trainable variable) was fixed when the model was built; after this,
    the masks depend on ``TrainConfig.seed`` alone, as in PyTorch.
    """
    for variable in model.non_trainable_variables:
        if variable.path.endswith("seed_generator_state"):
            variable.assign(np.array([random.randint(1, 10 ** 9), 0], dtype=variable.dtype))


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


def _variable_arrays(prefix: str, variables: list) -> dict[str, np.ndarray]:
    """Variables by position: Keras paths (``w_q/kernel``) are not unique, so the index leads the name."""
    return {f"{prefix}/{i:04d}:{variable.path}": np.asarray(variable.numpy()) for i, variable in enumerate(variables)}


def _load_variables(prefix: str, variables: list, arrays: dict[str, np.ndarray], path: str) -> None:
    names = sorted(name for name in arrays if name.startswith(f"{prefix}/"))
    if len(names) != len(variables):
        raise ValueError(f"checkpoint {path!r} does not fit the {prefix}: it holds {len(names)} {prefix} "
                         f"variables, the {prefix} has {len(variables)}")
    for name, variable in zip(names, variables):
        if tuple(arrays[name].shape) != tuple(variable.shape):
            raise ValueError(f"checkpoint {path!r} does not fit the {prefix}: {name} has shape "
                             f"{tuple(arrays[name].shape)}, variable {variable.path} has {tuple(variable.shape)}")
    for name, variable in zip(names, variables):
        variable.assign(arrays[name].astype(variable.dtype))


def load_model(path: str, device: str = "cpu") -> tuple[keras.Model, dict[str, Any]]:
    """Build the model a checkpoint describes and load its weights. Returns (model in eval mode, header).

    Keras has no eval mode: its layers run without dropout unless called with training=True.
    """
    meta, arrays = read_checkpoint(path)
    check_checkpoint(path, meta, FRAMEWORK)
    check_weights(path, meta, arrays)
    with tf.device(resolve_device(device)):
        model = build_model(meta["model"]["kind"], meta["model"]["config"])
    _load_variables("model", model.variables, arrays, path)
    return model, meta
