"""The registry: which frameworks and model kinds the package has, and what a half offers (:class:`Backend`).

Framework-free, and below the halves: each half imports it (its ``backend.py``
builds a :class:`Backend`), it imports no half. Choosing a half by name, for
"the half the user chose", is done above the halves, in :mod:`txcourse.backends`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

__all__ = [
    "FRAMEWORKS",
    "FRAMEWORK_NAMES",
    "MODEL_KINDS",
    "DEFAULT_MODELS",
    "Backend",
    "check_framework",
    "check_model_kind",
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
    """What the upper layers (the command line, benchmarks, figures) use of one half: everything, so none
    reaches into the half around it.

    Each half builds its own in ``txcourse/<framework>/backend.py``; the fields are the same.
    :func:`txcourse.backends.backend` gives the one a framework's name chooses.
    """

    name: str
    Trainer: type
    build_model: Callable[..., Any]
    load_model: Callable[..., Any]  # (path or Checkpoint, device) -> (model, header); checks the weights it loads
    evaluate: Callable[..., dict[str, float]]
    set_seed: Callable[[int], None]
    set_threads: Callable[[int], None]  # this framework's CPU threads (before it runs anything)
    resolve_device: Callable[[Any], Any]
    greedy_decode: Callable[..., Any]
    beam_search: Callable[..., Any]
    sample_decode: Callable[..., Any]
    to_tensor: Callable[..., Any]  # (numpy array, device="cpu") -> framework tensor
    to_numpy: Callable[[Any], Any]
    data_parallel: Callable[..., Any]  # (device, replicas) -> Replicas
    end_data_parallel: Callable[[], None]


def default_model_config(
    kind: str, src_vocab_size: int, tgt_vocab_size: int, overrides: Optional[dict[str, Any]] = None
) -> Any:
    """The validated config of a ``kind`` model (a :class:`~txcourse.config.TransformerConfig` or
    :class:`~txcourse.config.Seq2SeqConfig`): the defaults, the vocabulary sizes and ``overrides``, checked once.

    The object itself is what ``build_model`` and the ``Trainer`` take; only a
    checkpoint's header holds its ``to_dict()``.

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
    # built once from the settings: from_dict names an unknown one, the constructor checks every field
    return (TransformerConfig if kind == "transformer" else Seq2SeqConfig).from_dict(config)
