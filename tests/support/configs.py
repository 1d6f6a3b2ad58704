"""The one tiny-config builder of the tests and benchmarks: a Transformer that trains in seconds on a CPU.

``tiny_config(**overrides)`` is the config object; ``TINY_MODEL_ARGS`` the same sizes as ``txcourse train``
options (``--set d_model=16 ...``), which the CLI suites pass.
"""

from __future__ import annotations

from typing import Any, Optional

from txcourse.config import TransformerConfig

__all__ = ["TINY", "tiny_config", "tiny_model_args", "TINY_MODEL_ARGS"]

# The sizes of the tiny model: one layer each side, two heads of width 8.
TINY: dict[str, Any] = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1)


def tiny_config(vocab_size: Optional[int] = None, **overrides: Any) -> TransformerConfig:
    """The tiny Transformer's config: ``vocab_size`` for both sides (default 23 and 19), any field overridden.

    Example:
        >>> tiny_config(12, dropout=0.0).d_model, tiny_config(12).src_vocab_size
        (16, 12)
    """
    vocab = (
        dict(src_vocab_size=23, tgt_vocab_size=19)
        if vocab_size is None
        else dict.fromkeys(("src_vocab_size", "tgt_vocab_size"), vocab_size)
    )
    return TransformerConfig(**{**TINY, **vocab, "dropout": 0.1, "max_len": 16, **overrides})


def tiny_model_args(**overrides: Any) -> list[str]:
    """The tiny model's sizes as ``txcourse train`` options: ``["--set", "d_model=16", ...]``."""
    return [arg for key, value in {**TINY, **overrides}.items() for arg in ("--set", f"{key}={value}")]


TINY_MODEL_ARGS = tiny_model_args()
