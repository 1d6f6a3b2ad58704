"""Training with Adam and the warm-up schedule (Vaswani et al. 2017, Sec. 5). Book: week 6.

:class:`Trainer` runs teacher-forced training for any of the three models
(Transformer, Bahdanau GRU, GRU without attention), with gradient clipping,
mixed precision on a GPU, a tqdm progress bar, a history file, atomic
checkpoints and an exact resume. Given validation pairs, each history
record also holds their teacher-forced loss and accuracy (:func:`evaluate`).

Data-parallel (book: appendix "Scaling up"; :mod:`txcourse.distributed`):
started by ``torchrun``, :func:`data_parallel` joins the process group
(``nccl`` on a GPU, ``gloo`` on the CPU) and the Trainer wraps the model in
``DistributedDataParallel``; N processes with B/N sentences each then take
the steps of one process with batch B.
"""

from __future__ import annotations

import io
import math
import random
import time
from datetime import timedelta
from typing import Any, Optional

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from tqdm.auto import tqdm

from txcourse.checkpoint import (bytes_to_array, check_checkpoint, check_resumable, check_weights, heads_array,
                                 read_checkpoint, write_checkpoint)
from txcourse.config import TransformerConfig
from txcourse.data.batching import Batch, EncodedPairs, make_batches
from txcourse.distributed import SINGLE, Replicas, check_divisible, shard, target_tokens, torchrun_env
from txcourse.training import (MODEL_KINDS, BatchStream, DivergenceWatch, History, TrainConfig, check_valid,
                               diverged, noam_lr)
from txcourse.torch.attention import MultiHeadAttention
from txcourse.torch.loss import label_smoothed_cross_entropy, token_accuracy
from txcourse.torch.model import Transformer
from txcourse.torch.seq2seq import Seq2Seq

__all__ = ["Trainer", "build_model", "evaluate", "load_model", "resolve_device", "set_seed", "data_parallel",
           "end_data_parallel"]

FRAMEWORK = "torch"


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' -> a GPU if one is available, else the CPU.

    PyTorch: 'auto' tries cuda, then mps, then cpu; 'cpu', 'cuda', 'cuda:i' and 'mps' are used as given.
    A GPU that is not there raises ValueError (never a silent fall-back to the CPU).
    """
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if mps:
            return torch.device("mps")
        return torch.device("cpu")
    index = _gpu_index(device)
    count = int(mps) if device == "mps" else torch.cuda.device_count()
    if index is not None and index >= count:
        raise ValueError(f"device {device!r} is not available: PyTorch sees {count} "
                         f"{'Apple (mps)' if device == 'mps' else 'CUDA'} GPU(s) here; use 'cpu', or 'auto' "
                         f"(a GPU when there is one)")
    return torch.device(device)


def ddp_device_ids(device: torch.device) -> Optional[list[int]]:
    """The ``device_ids`` for DistributedDataParallel: the GPU this process trains on, None on the CPU.

    'cuda' without an index means the current GPU, which :func:`data_parallel` set to LOCAL_RANK; taking
    index 0 there would make DDP move every rank's inputs to GPU 0.
    """
    if device.type != "cuda":
        return None
    return [device.index if device.index is not None else torch.cuda.current_device()]


def amp_dtype_for_gpu() -> torch.dtype:
    """bfloat16 where the GPU computes in it natively (compute capability >= 8.0), else float16 (with a GradScaler).

    ``torch.cuda.is_bf16_supported()`` alone also says yes for bfloat16 emulated on older GPUs (slow), so the
    check excludes emulation.
    """
    return torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16


def _gpu_index(device: str) -> Optional[int]:
    """0 for 'cuda' and 'mps', i for 'cuda:i', None for 'cpu'; ValueError for any other name."""
    if device == "cpu":
        return None
    if device in ("cuda", "mps"):
        return 0
    if device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps', got {device!r}")


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and the framework (all devices).

    PyTorch: ``torch.manual_seed``.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def data_parallel(device: str = "auto", replicas: int = 1) -> Replicas:
    """Join the data-parallel run this process was started in; a :class:`~txcourse.distributed.Replicas`.

    Call it before building the model; build the model and the Trainer inside
    ``replicas.scope()``. ``replicas`` is the number of model replicas this
    process runs.

    PyTorch: one replica per process, the processes started by ``torchrun
    --nproc-per-node N`` (``--nnodes`` for several machines), which sets RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT. Under torchrun this
    initialises ``torch.distributed`` (backend ``nccl`` when ``device`` is a
    GPU, each process on GPU LOCAL_RANK; ``gloo`` on the CPU); without it,
    plain training. ``replicas`` must be 1: torchrun chooses the count.
    """
    if replicas != 1:
        raise ValueError(f"--replicas {replicas}: PyTorch runs one replica per process; start N processes with "
                         f"'torchrun --nproc-per-node N -m txcourse train ...' instead")
    env = torchrun_env()
    if env is None or env["world_size"] == 1:
        return SINGLE
    if not dist.is_initialized():
        gpu = resolve_device(device).type == "cuda"
        if gpu:
            torch.cuda.set_device(env["local_rank"] % torch.cuda.device_count())
        dist.init_process_group("nccl" if gpu else "gloo", timeout=timedelta(minutes=10))
    return _current_replicas()


def end_data_parallel() -> None:
    """Leave the data-parallel run (PyTorch: destroy the process group), once training is over.

    PyTorch: the processes first meet at a barrier; one that tears down gloo while another is still writing
    the checkpoint can abort at exit ("terminate called without an active exception"). A peer that died is
    not waited for longer than a minute (gloo's monitored barrier raises; the group is destroyed anyway).
    """
    if dist.is_available() and dist.is_initialized():
        try:
            if dist.get_backend() == "gloo":
                dist.monitored_barrier(timeout=timedelta(minutes=1))
            else:
                dist.barrier()
        except RuntimeError:
            pass
        dist.destroy_process_group()


def _current_replicas() -> Replicas:
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return SINGLE
    rank, world = dist.get_rank(), dist.get_world_size()
    return Replicas(count=world, first=rank, local=1, process_index=rank, process_count=world,
                    engine=dist.get_backend())


def _replica_seed(seed: int, replica: int, step: int) -> int:
    """The dropout stream of replica > 0: its own, from (seed, replica, step), so replicas never share masks."""
    return int(np.random.SeedSequence([seed, replica, step]).generate_state(1)[0])


def build_model(kind: str, config: dict[str, Any]) -> torch.nn.Module:
    """Build 'transformer' (config: TransformerConfig fields), 'bahdanau' or 'seq2seq' (config:
    src_vocab_size, tgt_vocab_size, embedding_dim, units, pad_id)."""
    if kind == "transformer":
        return Transformer(TransformerConfig.from_dict(config))
    if kind in ("bahdanau", "seq2seq"):
        return Seq2Seq(attention=kind == "bahdanau", **config)
    raise ValueError(f"model kind must be one of {list(MODEL_KINDS)}, got {kind!r}")


def _schedule_width(kind: str, config: dict[str, Any]) -> int:
    return config["d_model"] if kind == "transformer" else config["units"]


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

    def __init__(self, model: torch.nn.Module, kind: str, model_config: dict[str, Any], data: EncodedPairs,
                 config: TrainConfig = TrainConfig(), history_path: Optional[str] = None,
                 metadata: Optional[dict[str, Any]] = None, valid: Optional[EncodedPairs] = None):
        if kind not in MODEL_KINDS:
            raise ValueError(f"kind must be one of {list(MODEL_KINDS)}, got {kind!r}")
        self.kind, self.model_config, self.config = kind, dict(model_config), config
        self.metadata = dict(metadata or {})
        self.valid = check_valid(valid)
        self.device = resolve_device(config.device)
        self.model = model.to(self.device)
        self.pad_id = model_config.get("pad_id", 0)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1.0, betas=config.adam_betas,
                                          eps=config.adam_eps)
        width = _schedule_width(kind, model_config)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: noam_lr(s + 1, width, config.warmup_steps, config.lr_factor, config.steps,
                                              config.cooldown_steps))
        self.stream = BatchStream(data, config.batch_size, config.max_tokens, config.seed)
        self.step = 0
        self.history_path = history_path
        self.history: Optional[History] = None  # opened by fit(), after a possible load()
        self._resume_step: Optional[int] = None
        self.stop_requested = False  # set (by a signal handler) to stop fit() after the current step
        self.amp_dtype = self._amp_dtype()
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.replicas = _current_replicas()  # the process group this Trainer runs in (data_parallel)
        check_divisible(config.batch_size, self.replicas.count)
        self.net = self.model  # what the step calls: the model, or DistributedDataParallel around it
        if self.replicas.count > 1:  # broadcasts process 0's weights; averages the gradients in backward()
            self.net = DistributedDataParallel(self.model, device_ids=ddp_device_ids(self.device))
        self._deadline: Optional[float] = None  # time.perf_counter() at which fit() stops (max_seconds)
        set_seed(config.seed)
        if self.replicas.first:
            torch.manual_seed(_replica_seed(config.seed, self.replicas.first, 0))

    def _amp_dtype(self) -> Optional[torch.dtype]:
        if not self.config.mixed_precision or self.device.type != "cuda":
            return None
        return amp_dtype_for_gpu()

    def train_step(self, batch: Batch) -> dict[str, float]:
        """One optimizer step on ``batch``; returns loss, accuracy, tokens, learning rate and stop.

        With N replicas ``batch`` is the global batch: each replica trains on
        its rows (:func:`~txcourse.distributed.shard`) and the loss and
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
        with torch.autocast(self.device.type, dtype=self.amp_dtype or torch.float32,
                            enabled=self.amp_dtype is not None):
            logits = self.net(src, tgt_in)  # (B/N, T_tgt, V)
        loss, count = label_smoothed_cross_entropy(logits, tgt_out, self.config.label_smoothing, self.pad_id)
        # Replica r's share of the global batch's loss is S_r / total (S_r: the sum of its token losses);
        # DistributedDataParallel averages the N gradients, so each replica scales its share by N.
        objective = loss * (count.clamp(min=1) * n / max(total, 1)) if n > 1 else loss
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
        self.step += 1
        stop = self.stop_requested or (self._deadline is not None and time.perf_counter() > self._deadline)
        if n == 1:
            return {"loss": loss.item(), "accuracy": token_accuracy(logits.detach(), tgt_out, self.pad_id).item(),
                    "tokens": int(count), "lr": lr, "stop": stop}
        correct = ((logits.detach().argmax(dim=-1) == tgt_out) & (tgt_out != self.pad_id)).sum()  # ()
        sums = torch.stack([loss.detach().double() * count, correct.double(), torch.tensor(float(stop),
                            dtype=torch.float64, device=self.device)])  # (3,): S_r, correct_r, stop_r
        dist.all_reduce(sums)  # summed over the replicas
        loss_sum, correct_sum, stops = sums.tolist()
        return {"loss": loss_sum / max(total, 1), "accuracy": correct_sum / max(total, 1), "tokens": total,
                "lr": lr, "stop": stops > 0}

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

        With several processes only the writer (process 0) saves; the weights are the same in every one.
        """
        if not all(torch.isfinite(p).all() for p in self.model.parameters()):
            raise FloatingPointError(diverged("a weight is not finite", self.step, self.config))
        if self.replicas.writer:
            self.save(path)

    def save(self, path: str) -> None:
        """Write a checkpoint (model, optimizer, schedule, data position, RNG) atomically."""
        arrays = {f"model/{name}": t.detach().cpu().numpy() for name, t in self.model.state_dict().items()}
        blob = io.BytesIO()
        torch.save({"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                    "scaler": self.scaler.state_dict(), "rng_cpu": torch.get_rng_state(),
                    "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}, blob)
        arrays["torch_state"] = bytes_to_array(blob.getvalue())
        arrays.update(heads_array(_num_heads(self.model, self.model_config)) if self.kind == "transformer" else {})
        meta = {"framework": FRAMEWORK, "model": {"kind": self.kind, "config": self.model_config},
                "step": self.step, "stream": self.stream.state(), "train_config": self.config.to_dict(),
                "torch_version": torch.__version__, **self.metadata}
        write_checkpoint(path, meta, arrays)

    def load(self, path: str) -> None:
        """Restore everything :meth:`save` wrote: training continues exactly where it stopped."""
        meta, arrays = read_checkpoint(path)
        check_checkpoint(path, meta, FRAMEWORK, self.kind)
        check_resumable(path, meta)
        check_weights(path, meta, arrays)
        _load_weights(self.model, arrays, path)
        state = torch.load(io.BytesIO(arrays["torch_state"].tobytes()), weights_only=True)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng_cuda"])
        self.step = int(meta["step"])
        self.stream.load_state(meta["stream"])
        self._resume_step, self.history = self.step, None
        if self.replicas.first:  # the checkpoint holds process 0's random state; the others draw their own
            torch.manual_seed(_replica_seed(self.config.seed, self.replicas.first, self.step))


def evaluate(model: torch.nn.Module, data: EncodedPairs, smoothing: float = 0.1,
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
    device = next(model.parameters()).device
    training = model.training
    model.eval()
    loss_sum = correct = tokens = 0.0
    with torch.no_grad():
        for batch in make_batches(data, batch_size=batch_size, shuffle=False):
            src = torch.from_numpy(batch.src).to(device)  # (B, T_src)
            tgt_in = torch.from_numpy(batch.tgt_in).to(device)  # (B, T_tgt)
            tgt_out = torch.from_numpy(batch.tgt_out).to(device)  # (B, T_tgt)
            logits = model(src, tgt_in)  # (B, T_tgt, V)
            loss, count = label_smoothed_cross_entropy(logits, tgt_out, smoothing, pad_id)  # (), ()
            n = float(count)
            loss_sum += float(loss) * n
            correct += float(token_accuracy(logits, tgt_out, pad_id)) * n
            tokens += n
    model.train(training)
    return {"loss": loss_sum / max(tokens, 1.0), "accuracy": correct / max(tokens, 1.0), "tokens": tokens}


def _num_heads(model: torch.nn.Module, config: dict[str, Any]) -> int:
    """The number of heads of the model's attention layers (all alike in a Transformer; the config's if none)."""
    heads = {m.num_heads for m in model.modules() if isinstance(m, MultiHeadAttention)} or {config["num_heads"]}
    if len(heads) != 1:
        raise ValueError(f"expected one number of heads in the model, found {sorted(heads)}")
    return heads.pop()


def _load_weights(model: torch.nn.Module, arrays: dict[str, np.ndarray], path: str) -> None:
    state = {name[len("model/"):]: torch.from_numpy(a) for name, a in arrays.items() if name.startswith("model/")}
    expected = model.state_dict()
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        raise ValueError(f"checkpoint {path!r} does not fit the model: missing {missing[:5]}, unexpected {extra[:5]}")
    for name, value in state.items():
        if tuple(value.shape) != tuple(expected[name].shape):
            raise ValueError(f"checkpoint {path!r} does not fit the model: {name} has shape {tuple(value.shape)} "
                             f"in the checkpoint, {tuple(expected[name].shape)} in the model")
    model.load_state_dict(state)


def load_model(path: str, device: str = "cpu") -> tuple[torch.nn.Module, dict[str, Any]]:
    """Build the model a checkpoint describes and load its weights. Returns (model in eval mode, header)."""
    meta, arrays = read_checkpoint(path)
    check_checkpoint(path, meta, FRAMEWORK)
    check_weights(path, meta, arrays)
    model = build_model(meta["model"]["kind"], meta["model"]["config"])
    _load_weights(model, arrays, path)
    return model.to(resolve_device(device)).eval(), meta
