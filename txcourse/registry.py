"""The registry: which frameworks and model kinds the package has, and the one place a half is imported by name.

Framework-free. ``txcourse.torch`` and ``txcourse.tf`` are optional halves (the
``torch`` and ``tf`` extras), so nothing outside a half imports it at module
level; code that needs "the half the user chose" calls :func:`backend`, which
imports that half only, and only then. Everything else in the package imports
statically.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional

__all__ = [
    "FRAMEWORKS",
    "FRAMEWORK_NAMES",
    "MODEL_KINDS",
    "DEFAULT_MODELS",
    "Backend",
    "backend",
    "check_framework",
    "check_model_kind",
    "set_threads",
    "default_model_config",
]

# The two halves: the subpackage name, and its name in prose.
FRAMEWORKS = ("torch", "tf")
FRAMEWORK_NAMES = {"torch": "PyTorch", "tf": "TensorFlow/Keras"}

# The models `txcourse train --model` builds: the Transformer (weeks 2-6) and the two GRU baselines of
# week 1 (seq2seq: Sutskever et al. 2014 with a fixed context vector; bahdanau: Bahdanau et al. 2015).
MODEL_KINDS = ("transformer", "bahdanau", "seq2seq")

# Model sizes that train on a CPU in minutes; `txcourse train --set` overrides any field.
DEFAULT_MODELS: dict[str, dict[str, Any]] = {
    "transformer": dict(
        d_model=128,
        num_heads=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=512,
        dropout=0.1,
        max_len=128,
        tie_embeddings=True,
    ),
    "bahdanau": dict(embedding_dim=128, units=256),
    "seq2seq": dict(embedding_dim=128, units=256),
}


def check_framework(framework: Any, argument: str = "framework") -> str:
    """``framework`` if it names a half, else a ValueError naming ``argument``."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"{argument} must be one of {list(FRAMEWORKS)}, got {framework!r}")
    return framework


def check_model_kind(kind: Any, argument: str = "kind") -> str:
    """``kind`` if it names a model kind, else a ValueError naming ``argument``."""
    if kind not in MODEL_KINDS:
        raise ValueError(f"{argument} must be one of {list(MODEL_KINDS)}, got {kind!r}")
    return kind


@dataclass(frozen=True)
class Backend:
    """What framework-free code (the command line, benchmarks, figures) uses of one half.

    Each half builds its own in ``txcourse/<framework>/backend.py``; the fields are the same.
    """

    name: str
    package: ModuleType  # txcourse.torch or txcourse.tf
    Trainer: type
    build_model: Callable[..., Any]
    load_model: Callable[..., Any]
    evaluate: Callable[..., dict[str, float]]
    set_seed: Callable[[int], None]
    resolve_device: Callable[[Any], Any]
    greedy_decode: Callable[..., Any]
    beam_search: Callable[..., Any]
    to_tensor: Callable[..., Any]  # (numpy array, device="cpu") -> framework tensor
    to_numpy: Callable[[Any], Any]
    data_parallel: Callable[..., Any]  # (device, replicas) -> Replicas
    end_data_parallel: Callable[[], None]
    weights: ModuleType  # txcourse.<framework>.weights: this half's weight names and layout


def backend(framework: str) -> Backend:
    """The half ``framework`` names, imported now (the package's one import of a half by name).

    Raises ValueError for an unknown framework and ImportError, naming the extra to install,
    when the half's framework is not installed.
    """
    check_framework(framework)
    if framework == "torch":
        from txcourse.torch.backend import BACKEND
    else:
        from txcourse.tf.backend import BACKEND
    return BACKEND


def set_threads(n: int, frameworks: Sequence[str] = FRAMEWORKS) -> None:
    """Limit the given frameworks to ``n`` CPU threads (call before building models).

    A framework that is not installed is skipped; none is imported that
    ``frameworks`` does not name.
    """
    if "torch" in frameworks and importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(n)
    if "tf" in frameworks and importlib.util.find_spec("tensorflow") is not None:
        import tensorflow as tf

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


def default_model_config(
    kind: str, src_vocab_size: int, tgt_vocab_size: int, overrides: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    """The model config dict for ``kind``, with the vocabulary sizes and ``overrides`` applied and checked.

    A bad setting raises :class:`~txcourse._validation.ArgumentError` (a ``ValueError``) whose ``arguments`` name
    the setting(s), so that a caller can say which of its inputs set them.
    """
    from txcourse.config import Seq2SeqConfig, TransformerConfig

    check_model_kind(kind, "model")
    config = {
        **DEFAULT_MODELS[kind],
        "src_vocab_size": src_vocab_size,
        "tgt_vocab_size": tgt_vocab_size,
        "pad_id": 0,
        **(overrides or {}),
    }
    if kind == "transformer":
        return TransformerConfig.from_dict(config).to_dict()  # validates every field
    return Seq2SeqConfig.from_dict(config).to_dict()  # validates every field
