"""Value checks on tensors (token ranges); shapes are checked by :mod:`txcourse._validation`."""

from __future__ import annotations

import itertools

import torch

from txcourse import _validation as V


def check_float(name: str, x: torch.Tensor, layer: torch.nn.Module) -> None:
    """``x`` must have the dtype of the layer's weights (its buffers' if it has none; float32 by default).

    Under ``torch.autocast`` any float dtype is accepted: autocast casts it. Raises ValueError naming ``name``.
    Runs in debug mode only (:func:`txcourse.debug_checks`): it walks the layer's parameters at every call.
    """
    if not V.debugging():
        return
    first = next(itertools.chain(layer.parameters(), layer.buffers()), None)
    expected = torch.get_default_dtype() if first is None else first.dtype
    V.check_dtype(name, _dtype(x.dtype), _dtype(expected), torch.is_autocast_enabled(x.device.type))


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def check_tokens(name: str, tokens: torch.Tensor, vocab_size: int, read_values: bool = False) -> None:
    """Token ids must be an integer tensor (always checked: free) with ids in [0, vocab_size) (a ValueError naming
    ``name``).

    The range needs the values on the host, a device-to-host copy: it is checked where the data enters
    (``read_values=True``: the source of decoding) and in debug mode (:func:`txcourse.debug_checks`), not in every
    forward of a layer.
    """
    if not isinstance(tokens, torch.Tensor):  # e.g. a NumPy array: say so, not "has no attribute ..."
        raise TypeError(
            f"{name} must be a torch.Tensor of integer token ids, got {type(tokens).__module__}."
            f"{type(tokens).__name__}; convert it with torch.as_tensor"
        )
    if tokens.is_floating_point():
        raise ValueError(f"{name} must hold integer token ids, got dtype {str(tokens.dtype).replace('torch.', '')}")
    if not (read_values or V.debugging()):
        return
    if torch.compiler.is_compiling():  # values are unknown while torch.compile traces: no graph break
        return
    if tokens.numel():
        V.check_token_range(name, int(tokens.min()), int(tokens.max()), vocab_size)
