"""Where a PyTorch Trainer runs: its device, and the replicas of a data-parallel run. Book: appendix "Scaling up".

:func:`resolve_device` turns 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps' into
the device the model and batches go to. Data-parallel
(:mod:`txcourse.training.distributed`): started by ``torchrun``, :func:`data_parallel`
joins the process group (``nccl`` on a GPU, ``gloo`` on the CPU) and the
Trainer wraps the model in ``DistributedDataParallel``; N processes with B/N
sentences each then take the steps of one process with batch B.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Optional

import numpy as np
import torch
import torch.distributed as dist

from txcourse.errors import TxcourseError
from txcourse.training.distributed import SINGLE, Replicas, torchrun_env

__all__ = ["resolve_device", "set_threads", "data_parallel", "end_data_parallel"]


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
        raise TxcourseError(
            f"device {device!r} is not available: PyTorch sees {count} "
            f"{'Apple (mps)' if device == 'mps' else 'CUDA'} GPU(s) here; use 'cpu', or 'auto' "
            f"(a GPU when there is one)",
            "device",
        )
    return torch.device(device)


def set_threads(n: int) -> None:
    """Limit this framework to ``n`` CPU threads; call it before the framework runs anything.

    PyTorch: ``torch.set_num_threads`` (its intra-op threads; it may be called at any time).
    """
    torch.set_num_threads(n)


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
    raise TxcourseError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:i' or 'mps', got {device!r}", "device")


def data_parallel(device: str = "auto", replicas: int = 1) -> Replicas:
    """Join the data-parallel run this process was started in; a :class:`~txcourse.training.distributed.Replicas`.

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
        raise TxcourseError(
            f"--replicas {replicas}: PyTorch runs one replica per process; start N processes with "
            f"'torchrun --nproc-per-node N -m txcourse train ...' instead",
            "replicas",
        )
    env = torchrun_env()
    if env is None or env["world_size"] == 1:
        return SINGLE
    if not dist.is_initialized():
        gpu = resolve_device(device).type == "cuda"
        if gpu:
            torch.cuda.set_device(env["local_rank"] % torch.cuda.device_count())
        dist.init_process_group("nccl" if gpu else "gloo", timeout=timedelta(minutes=10))
    return current_replicas()


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


def current_replicas() -> Replicas:
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return SINGLE
    rank, world = dist.get_rank(), dist.get_world_size()
    return Replicas(
        count=world, first=rank, local=1, process_index=rank, process_count=world, engine=dist.get_backend()
    )


def replica_seed(seed: int, replica: int, step: int) -> int:
    """The dropout stream of replica > 0: its own, from (seed, replica, step), so replicas never share masks."""
    return int(np.random.SeedSequence([seed, replica, step]).generate_state(1)[0])
