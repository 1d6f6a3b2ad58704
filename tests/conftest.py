"""Shared fixtures: run a test once per framework, with the same NumPy inputs."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from txcourse import TransformerConfig  # noqa: E402
from txcourse.notebook.checks import assert_close  # noqa: F401  (the one check; tests import it from here)
from txcourse.registry import FRAMEWORKS


class Framework:
    """A thin adapter so one test body runs on both halves of the package."""

    def __init__(self, name: str):
        self.name = name
        if name == "torch":
            import torch

            import txcourse.torch as module

            self.lib = torch
        else:
            import tensorflow as tf

            import txcourse.tf as module

            self.lib = tf
        self.module = module

    def tensor(self, array, dtype: str | None = None):
        array = np.asarray(array)
        if self.name == "torch":
            t = self.lib.from_numpy(np.ascontiguousarray(array))
            return t.to(getattr(self.lib, dtype)) if dtype else t
        t = self.lib.constant(array)
        return self.lib.cast(t, getattr(self.lib, dtype)) if dtype else t

    def numpy(self, t) -> np.ndarray:
        if t is None:
            return None
        if self.name == "torch":
            if t.is_floating_point() and t.dtype != self.lib.float64:
                t = t.float()
            return t.detach().cpu().numpy()
        if t.dtype.is_floating and t.dtype.name != "float64":
            t = self.lib.cast(t, self.lib.float32)
        return np.asarray(t.numpy())

    def eval(self, layer):
        """Dropout off: ``.eval()`` in PyTorch; Keras layers are called with training=False by default."""
        if self.name == "torch":
            layer.eval()
        return layer

    def __repr__(self) -> str:
        return self.name


@pytest.fixture(params=FRAMEWORKS)
def fw(request) -> Framework:
    return Framework(request.param)


@pytest.fixture
def torch_fw() -> Framework:
    return Framework("torch")


@pytest.fixture
def tf_fw() -> Framework:
    return Framework("tf")


def small_config(**changes) -> TransformerConfig:
    """A model small enough for CPU tests: two layers of width 32 (support.configs.tiny_config, one size up)."""
    from support.configs import tiny_config

    sizes = dict(d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=64, max_len=40)
    return tiny_config(**{**sizes, **changes})


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models gain nothing from threads, and a busy machine makes OpenMP spin: use one."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# `txcourse train` options for a model that trains in seconds (the CLI suites share them): tests/support/configs.py
from support.configs import TINY_MODEL_ARGS  # noqa: E402, F401

# `make test-python` runs the suite in two passes: the files below one test at a time (`-m serial`), everything
# else on two workers (pytest-xdist, `-m "not serial"`, a file per worker). One at a time: what grades notebooks
# in the sandbox against cell timeouts, sends signals or times a neighbour, trains in two processes, or runs make.
SERIAL = (
    "course/test_grading",
    "course/test_probes.py",
    "course/test_attacks.py",
    "course/test_mutants.py",
    "first_contact/",
    "install/",
    "training/test_distributed.py",
)
TESTS = os.path.dirname(os.path.abspath(__file__))


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: run alone, not beside another worker (tests/conftest.py SERIAL)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if os.path.relpath(str(item.path), TESTS).replace(os.sep, "/").startswith(SERIAL):
            item.add_marker(pytest.mark.serial)
