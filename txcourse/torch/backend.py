"""This half as the upper layers (command line, benchmarks, figures) see it: its :class:`~txcourse.registry.Backend`."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from txcourse.registry import Backend
from txcourse.torch.decode import beam_search, greedy_decode
from txcourse.torch.devices import set_threads
from txcourse.torch.sample import sample_decode
from txcourse.torch.train import (
    Trainer,
    build_model,
    data_parallel,
    end_data_parallel,
    evaluate,
    load_model,
    resolve_device,
    set_seed,
)

__all__ = ["BACKEND"]


def to_tensor(array: np.ndarray, device: Any = "cpu") -> torch.Tensor:
    """A numpy array as a tensor on ``device`` (a name or a torch.device)."""
    return torch.from_numpy(array).to(resolve_device(device) if isinstance(device, str) else device)


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A tensor as a numpy array (on the CPU, detached)."""
    return tensor.detach().cpu().numpy()


BACKEND = Backend(
    name="torch",
    Trainer=Trainer,
    build_model=build_model,
    load_model=load_model,
    evaluate=evaluate,
    set_seed=set_seed,
    set_threads=set_threads,
    resolve_device=resolve_device,
    greedy_decode=greedy_decode,
    beam_search=beam_search,
    sample_decode=sample_decode,
    to_tensor=to_tensor,
    to_numpy=to_numpy,
    data_parallel=data_parallel,
    end_data_parallel=end_data_parallel,
)
