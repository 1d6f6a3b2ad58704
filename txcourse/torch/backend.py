"""This half as framework-free code sees it: the :class:`~txcourse.registry.Backend` of PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import txcourse.torch as package
from txcourse.registry import Backend
from txcourse.torch import weights
from txcourse.torch.decode import beam_search, greedy_decode
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
    package=package,
    Trainer=Trainer,
    build_model=build_model,
    load_model=load_model,
    evaluate=evaluate,
    set_seed=set_seed,
    resolve_device=resolve_device,
    greedy_decode=greedy_decode,
    beam_search=beam_search,
    to_tensor=to_tensor,
    to_numpy=to_numpy,
    data_parallel=data_parallel,
    end_data_parallel=end_data_parallel,
    weights=weights,
)
