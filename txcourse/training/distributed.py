"""Data-parallel training, the part both frameworks share. Book: appendix "Scaling up".

N model replicas (processes under ``torchrun``, devices or workers of a
``tf.distribute`` strategy) take one optimizer step together:

1. every process draws the *same global batch* of B sentences that a single
   process would draw (the same :class:`~txcourse.training.BatchStream`,
   seed and position), so the data order does not depend on N;
2. replica r keeps its rows, :func:`shard` (B/N contiguous rows each when the
   batch is full; unlike ``DistributedSampler``, which interleaves indices
   over the epoch);
3. the masked loss is normalised by the *global* number of non-pad target
   tokens, ``n = sum_r n_r`` (:func:`target_tokens` of the global batch):
   replica r's loss is ``L_r = S_r / n`` with ``S_r`` the sum of its
   per-token losses, and the sum of the replicas' gradients is the gradient
   of ``sum_r S_r / n``, the loss of the whole batch. The mean of the
   per-replica means, ``(1/N) sum_r S_r / n_r``, is a different loss whenever
   the ``n_r`` differ (sentences have different lengths);
4. the gradients are summed across replicas (PyTorch's
   ``DistributedDataParallel`` averages, so its replicas multiply ``L_r`` by N),
   then clipped by their global norm, then Adam steps: every replica applies
   the same update to the same weights.

The step is therefore the single-process step up to floating-point rounding
(summation order). Checkpoints are the ordinary single-process files,
written by the first process only, so a run stopped with N replicas resumes
with any other number.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from txcourse.data.batching import Batch
from txcourse.errors import TxcourseError

__all__ = ["Replicas", "SINGLE", "torchrun_env", "tf_config", "check_divisible", "shard", "target_tokens"]


@dataclass(frozen=True)
class Replicas:
    """How a Trainer's step is shared.

    Attributes:
        count: N, the model replicas that take part in one step (1: plain training).
        first: the global index of this process's first replica.
        local: the replicas this process runs (1 under torchrun, the devices of a strategy in TensorFlow).
        process_index: this process among ``process_count``; process 0 writes checkpoints and history
            and shows progress, the others only compute.
        process_count: the processes taking part.
        engine: the framework's object: the ``torch.distributed`` backend name ('gloo', 'nccl') or the
            ``tf.distribute.Strategy``; None for plain training.
    """

    count: int = 1
    first: int = 0
    local: int = 1
    process_index: int = 0
    process_count: int = 1
    engine: Any = None

    @property
    def writer(self) -> bool:
        """Whether this process writes checkpoints, history and progress (process 0, TensorFlow's chief)."""
        return self.process_index == 0

    def scope(self) -> Any:
        """The context to build the model and Trainer in: ``strategy.scope()`` in TensorFlow, else nothing."""
        return self.engine.scope() if hasattr(self.engine, "scope") else contextlib.nullcontext()

    def describe(self) -> str:
        if self.count == 1:
            return "1 replica"
        name = self.engine if isinstance(self.engine, str) else type(self.engine).__name__
        return f"{self.count} replicas in {self.process_count} process(es) ({name})"


SINGLE = Replicas()


def torchrun_env(environ: Optional[dict[str, str]] = None) -> Optional[dict[str, int]]:
    """RANK, WORLD_SIZE and LOCAL_RANK as ``torchrun`` sets them, or None outside torchrun.

    Example:
        >>> torchrun_env({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1"})
        {'rank': 1, 'world_size': 2, 'local_rank': 1}
        >>> torchrun_env({}) is None
        True
    """
    env = os.environ if environ is None else environ
    if "WORLD_SIZE" not in env:
        return None
    values = {}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        raw = env.get(name, "0")
        if not raw.isdigit():
            raise TxcourseError(
                f"environment variable {name} must be an integer >= 0 (torchrun sets it), got {raw!r}", name
            )
        values[name.lower()] = int(raw)
    if values["world_size"] < 1 or values["rank"] >= values["world_size"]:
        raise TxcourseError(
            f"environment variables RANK={values['rank']}, WORLD_SIZE={values['world_size']}: "
            f"expected 0 <= RANK < WORLD_SIZE (torchrun sets them)",
            "RANK",
            "WORLD_SIZE",
        )
    return values


def tf_config(environ: Optional[dict[str, str]] = None) -> Optional[dict[str, Any]]:
    """The cluster of ``TF_CONFIG`` (MultiWorkerMirroredStrategy), checked; None when it is not set.

    Returns ``{"workers": number of workers (chief included), "index": this worker's index
    (the chief is 0, worker i is i + 1 when there is a chief), "chief": bool}``.

    Example:
        >>> tf_config({"TF_CONFIG": '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}}'})
        {'workers': 2, 'index': 1, 'chief': False}
    """
    env = os.environ if environ is None else environ
    raw = env.get("TF_CONFIG", "").strip()
    if not raw:
        return None
    try:
        spec = json.loads(raw)
        cluster, task = spec["cluster"], spec["task"]
        kind, index = task["type"], int(task["index"])
        chiefs, workers = list(cluster.get("chief", [])), list(cluster.get("worker", []))
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise TxcourseError(
            f'environment variable TF_CONFIG must be JSON like {{"cluster": {{"worker": '
            f'["host1:port", "host2:port"]}}, "task": {{"type": "worker", "index": 0}}}}, '
            f"got {raw!r} ({type(err).__name__}: {err})",
            "TF_CONFIG",
        ) from None
    if kind not in ("chief", "worker") or not 0 <= index < len(chiefs if kind == "chief" else workers):
        raise TxcourseError(
            f"TF_CONFIG: task {task!r} is not in the cluster {cluster!r} (expected type 'chief' or "
            f"'worker' and an index into that list)",
            "TF_CONFIG",
        )
    position = index if kind == "chief" else len(chiefs) + index
    return {"workers": len(chiefs) + len(workers), "index": position, "chief": position == 0}


def check_divisible(batch_size: Optional[int], count: int) -> None:
    """Refuse a global batch size that N replicas cannot share evenly.

    Example:
        >>> check_divisible(64, 2)
        >>> check_divisible(63, 2)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: --batch-size 63 is the global batch, shared by 2 replicas: it must be a multiple of 2 ...
    """
    if count > 1 and batch_size is not None and batch_size % count:
        low, high = batch_size // count * count, (batch_size // count + 1) * count
        options = f"{low} or {high}" if low else f"{high}"
        raise TxcourseError(
            f"--batch-size {batch_size} is the global batch, shared by {count} replicas: it must be a "
            f"multiple of {count} (each replica takes batch-size / {count} sentences); use --batch-size "
            f"{options}",
            "batch_size",
        )


def shard(batch: Batch, index: int, count: int) -> Batch:
    """Replica ``index``'s rows of the global ``batch``: the ``index``-th of ``count`` contiguous blocks.

    A full batch of B rows gives every replica B / count rows; a shorter one
    (the last of a length bucket) gives the first replicas one row more.
    A replica left without a row gets a copy of row 0 whose targets are all
    padding: it counts for nothing (no token, zero loss and gradient), and the
    step's collective operations still see every replica. The columns (the
    padded lengths) stay those of the global batch.

    Shape:
        batch (B, T); returns (ceil or floor of B / count, T), at least one row.
    """
    if not 0 <= index < count:
        raise ValueError(f"shard: index must be in [0, {count}), got {index}")
    base, extra = divmod(len(batch), count)  # the first `extra` replicas take one row more
    start = index * base + min(index, extra)
    rows = slice(start, start + base + (index < extra))
    if rows.stop > rows.start:
        return Batch(
            batch.src[rows],
            batch.tgt_in[rows],
            batch.tgt_out[rows],
            batch.src_lengths[rows],
            batch.tgt_lengths[rows],
            batch.indices[rows],
            batch.pad_id,
        )
    return Batch(
        batch.src[:1],
        batch.tgt_in[:1],
        np.full_like(batch.tgt_out[:1], batch.pad_id),
        batch.src_lengths[:1],
        np.zeros_like(batch.tgt_lengths[:1]),
        batch.indices[:0],
        batch.pad_id,
    )


def target_tokens(batch: Batch) -> int:
    """n, the non-pad target tokens of the global batch: the normaliser of every replica's loss."""
    return int((batch.tgt_out != batch.pad_id).sum())
