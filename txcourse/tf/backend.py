"""This half as the upper layers (command line, benchmarks, figures) see it: its :class:`~txcourse.registry.Backend`."""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from txcourse.registry import Backend
from txcourse.tf.decode import beam_search, greedy_decode
from txcourse.tf.devices import set_threads
from txcourse.tf.sample import sample_decode
from txcourse.tf.train import (
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


def to_tensor(array: np.ndarray, device: Any = "cpu") -> tf.Tensor:
    """A numpy array as a tensor (TensorFlow places it; ``device`` is accepted for the same call as PyTorch)."""
    return tf.constant(array)


def to_numpy(tensor: tf.Tensor) -> np.ndarray:
    """A tensor as a numpy array."""
    return np.asarray(tensor)


BACKEND = Backend(
    name="tf",
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
