"""Value checks on tensors (token ranges); shapes are checked by :mod:`txcourse._validation`."""

from __future__ import annotations

import itertools

import torch

from txcourse import _validation as V


def check_float(name: str, x: torch.Tensor, layer: torch.nn.Module) -> None:
    """``x`` must have the dtype of the layer's weights (its buffers' if it has none; float32 by default).

    Under ``torch.autocast`` any float dtype is accepted: autocast casts it. Raises ValueError naming ``name``.
    """
    first = next(itertools.chain(layer.parameters(), layer.buffers()), None)
    expected = torch.get_default_dtype() if first is None else first.dtype
    V.check_dtype(name, _dtype(x.dtype), _dtype(expected), torch.is_autocast_enabled(x.device.type))


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def check_tokens(name: str, tokens: torch.Tensor, vocab_size: int) -> None:
    """Token ids must lie in [0, vocab_size); raises ValueError naming ``name``."""
    if not isinstance(tokens, torch.Tensor):  # e.g. a NumPy array: say so, not "has no attribute ..."
        raise TypeError(
            f"{name} must be a torch.Tensor of integer token ids, got {type(tokens).__module__}."
            f"{type(tokens).__name__}; convert it with torch.as_tensor"
        )
    if tokens.is_floating_point():
        raise ValueError(f"{name} must hold integer token ids, got dtype {str(tokens.dtype).replace('torch.', '')}")
    if torch.compiler.is_compiling():  # values are unknown while torch.compile traces: no graph break
        return
    if tokens.numel():
        V.check_token_range(name, int(tokens.min()), int(tokens.max()), vocab_size)
