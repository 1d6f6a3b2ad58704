"""Value checks on tensors (token ranges); shapes are checked by :mod:`txcourse._validation`."""

from __future__ import annotations

import torch

from txcourse import _validation as V


def check_tokens(name: str, tokens: torch.Tensor, vocab_size: int) -> None:
    """Token ids must lie in [0, vocab_size); raises ValueError naming ``name``."""
    if tokens.is_floating_point():
        raise ValueError(f"{name} must hold integer token ids, got dtype {str(tokens.dtype).replace('torch.', '')}")
    if torch.compiler.is_compiling():  # values are unknown while torch.compile traces: no graph break
        return
    if tokens.numel():
        V.check_token_range(name, int(tokens.min()), int(tokens.max()), vocab_size)
