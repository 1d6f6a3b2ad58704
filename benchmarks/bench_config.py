"""The one model the CPU benchmarks time (beam_search.py, decode_cache.py, train_step.py): d_model 256, four heads,
three layers each side, d_ff 1024.

Imported as a sibling module: the benchmarks run as scripts, with this folder first on ``sys.path``.
"""

from __future__ import annotations

from typing import Any

from txcourse.config import TransformerConfig

__all__ = ["bench_config"]


def bench_config(vocab: int, **overrides: Any) -> TransformerConfig:
    """The benchmarks' Transformer, ``vocab`` tokens on both sides, any field overridden (``max_len`` 256)."""
    sizes = dict(d_model=256, num_heads=4, num_encoder_layers=3, num_decoder_layers=3, d_ff=1024, dropout=0.1)
    return TransformerConfig(src_vocab_size=vocab, tgt_vocab_size=vocab, **{**sizes, "max_len": 256, **overrides})
