"""Where a TensorFlow Trainer runs: its device, and the replicas of a data-parallel run. Book: appendix "Scaling up".

:func:`resolve_device` turns 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps' into
the device the step runs on. Data-parallel (:mod:`txcourse.training.distributed`):
:func:`data_parallel` makes a ``tf.distribute`` strategy (MirroredStrategy
over this machine's devices, MultiWorkerMirroredStrategy across the workers
of ``TF_CONFIG``) and a Trainer built in its scope runs its step on every
replica; N replicas with B/N sentences each then take the steps of one
replica with batch B.
"""

from __future__ import annotations

from typing import Optional

import keras
import tensorflow as tf

from txcourse.errors import TxcourseError
from txcourse.training.distributed import SINGLE, Replicas, tf_config

__all__ = ["resolve_device", "set_threads", "data_parallel", "end_data_parallel"]


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
        raise TxcourseError(
            f"device {device!r} is not available: TensorFlow sees {count} "
            f"{'Apple (tensorflow-metal)' if device == 'mps' else 'CUDA'} GPU(s) here; use 'cpu', or "
            f"'auto' (a GPU when there is one)",
            "device",
        )
    return "/CPU:0" if index is None else f"/GPU:{index}"


def set_threads(n: int) -> None:
    """Limit this framework to ``n`` CPU threads; call it before the framework runs anything.

    TensorFlow: its intra- and inter-op threads, which can only be set before it first runs: a different
    count afterwards raises RuntimeError (the same count is accepted).
    """
    threading = tf.config.threading
    if (threading.get_intra_op_parallelism_threads(), threading.get_inter_op_parallelism_threads()) == (n, n):
        return  # already so: TensorFlow refuses even an unchanged value once it has started
    try:
        threading.set_intra_op_parallelism_threads(n)
        threading.set_inter_op_parallelism_threads(n)
    except RuntimeError:  # "cannot be modified after initialization"
        raise RuntimeError(
            f"TensorFlow has already started in this process with "
            f"{threading.get_intra_op_parallelism_threads() or 'its default number of'} threads; its thread "
            f"count can only be set before it first runs, so {n} cannot be applied now: start a new process "
            f"(a new kernel) and set the threads first, or leave them as they are"
        ) from None


def _gpu_index(device: str) -> Optional[int]:
    """0 for 'cuda' and 'mps', i for 'cuda:i' and '/GPU:i', None for 'cpu'; ValueError for any other name."""
    if device == "cpu" or device.upper().startswith("/CPU"):
        return None
    if device in ("cuda", "mps"):  # Apple GPUs show up as a TensorFlow GPU (tensorflow-metal)
        return 0
    if device.startswith(("cuda:", "/GPU:", "/gpu:")) and device.split(":", 1)[1].isdigit():
        return int(device.split(":", 1)[1])
    raise TxcourseError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps', got {device!r}", "device")


def uses_xla(fused: bool, device: str) -> bool:
    """Whether the Trainer compiles the training step with XLA (``jit_compile=True``): the fused path on a GPU.

    On a GPU XLA fuses the attention's matmuls, masking and softmax. Not on
    a CPU, where it gains a few per cent at most (``benchmarks/train_step.py``:
    0.95x to 1.00x the plain graph's time) and its compiler needs about 1.3x the memory:
    there the fused configuration trains in the plain ``tf.function``.
    """
    return fused and device.upper().startswith("/GPU")


def data_parallel(device: str = "auto", replicas: int = 1) -> Replicas:
    """Join the data-parallel run this process was started in; a :class:`~txcourse.training.distributed.Replicas`.

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
            raise TxcourseError(
                f"--replicas {replicas}: with TF_CONFIG set, MultiWorkerMirroredStrategy runs on every "
                f"GPU (or the CPU) of each worker; drop --replicas",
                "replicas",
            )
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        return current_replicas(strategy)
    if replicas == 1:
        return SINGLE
    if _gpu_index(device) is None and device != "auto" or not tf.config.list_physical_devices("GPU"):
        if device not in ("cpu", "auto") and not device.upper().startswith("/CPU"):
            raise TxcourseError(f"--replicas {replicas} --device {device}: TensorFlow sees no GPU here", "replicas")
        cpu = tf.config.list_physical_devices("CPU")[0]
        try:
            tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * replicas)
        except RuntimeError:  # already initialised: use the logical devices it has, if enough
            pass
        names = [d.name for d in tf.config.list_logical_devices("CPU")]
    else:
        names = [d.name for d in tf.config.list_logical_devices("GPU")]
    if len(names) < replicas:
        raise TxcourseError(
            f"--replicas {replicas}: TensorFlow has {len(names)} device(s) of that kind here "
            f"({', '.join(names) or 'none'}); use at most {len(names)}",
            "replicas",
        )
    return current_replicas(tf.distribute.MirroredStrategy(names[:replicas]))


def end_data_parallel() -> None:
    """Leave the data-parallel run (PyTorch: destroy the process group), once training is over.

    TensorFlow: nothing to do; the strategy ends with the process.
    """


def current_replicas(strategy: Optional[tf.distribute.Strategy] = None) -> Replicas:
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
    return Replicas(
        count=count, first=index * local, local=local, process_index=index, process_count=workers, engine=strategy
    )


def shard_tensors(
    src: tf.Tensor, tgt_in: tf.Tensor, tgt_out: tf.Tensor, index: tf.Tensor, count: int, pad_id: int
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """:func:`txcourse.training.distributed.shard` in TensorFlow ops: replica ``index``'s rows of the global batch.

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


def check_mirrored(model: keras.Model) -> None:
    """A model for several replicas must be built inside ``replicas.scope()`` (its variables mirrored)."""
    plain = [v.path for v in model.variables if not isinstance(getattr(v, "value", v), tf.distribute.DistributedValues)]
    if plain or not model.variables:
        raise TxcourseError(
            f"the model's variables are not mirrored ({plain[:3] or 'none built'}): build the model "
            f"and the Trainer inside replicas.scope() (replicas = data_parallel(...))",
            "model",
        )
