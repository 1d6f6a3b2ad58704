"""Move weights between :mod:`txcourse.torch` and :mod:`txcourse.tf`, by name.

The two implementations give every sublayer the same attribute name (and
each Keras sublayer ``name=`` that name), so one walk pairs them: for every
child ``encoder.layers.0.self_attn.w_q`` of the PyTorch module, the Keras
layer has ``encoder.layers[0].self_attn.w_q``. Leaves are converted as
follows:

=====================  ==========================  =====================================
PyTorch                Keras                       conversion
=====================  ==========================  =====================================
``nn.Linear``          ``Dense``                   kernel = weight.T, bias = bias
``nn.LayerNorm``       ``LayerNormalization``      gamma = weight, beta = bias
``nn.Embedding``       ``Embedding``               embeddings = weight
``nn.GRU``             ``GRU``                     gates (r, z, n) -> (z, r, h), transposed
``nn.GRUCell``         ``GRUCell``                 as ``nn.GRU``
=====================  ==========================  =====================================

A missing or extra sublayer, a leaf of the wrong kind, or a shape that does
not match raises ``ValueError`` naming the offending path. So do two models
whose weights fit but whose functions differ: configs (``.config``) that
differ in any field but ``dropout`` (off at inference) and ``fused`` (the
same numbers through another kernel), or sublayers that differ in
``num_heads``, ``num_kv_heads``, ``norm_first``, ``pad_id``, ``positions`` or a
LayerNorm epsilon. A learned position table (``positions="learned"``) is an
``nn.Embedding``/``Embedding`` and converts as one; RoPE and ALiBi have no
weights. Grouped-query attention (``num_kv_heads`` < ``num_heads``) needs
nothing more: its smaller ``w_k`` and ``w_v`` are ``Linear``/``Dense``
leaves like the others, (H_kv d_k, D) in PyTorch and (D, H_kv d_k) in Keras. Both
frameworks are imported only when a function is called.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["torch_to_tf", "tf_to_torch"]

# Config fields that do not change what a converted model computes: dropout is off at inference, and the fused
# path computes the same numbers (Sec. 3.2.1). Every other field does, even where the weights fit.
SAME_FUNCTION_FIELDS = ("dropout", "fused")
# Attributes of a (sub)layer that change its function without changing its weights' shapes.
FUNCTION_ATTRIBUTES = ("num_heads", "num_kv_heads", "norm_first", "pad_id", "positions")


def torch_to_tf(torch_module: Any, tf_layer: Any) -> None:
    """Copy every weight of ``torch_module`` into the mirrored ``tf_layer`` in place.

    Example:
        >>> cfg = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=16,
        ...     num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32)
        >>> torch_to_tf(txcourse.torch.Transformer(cfg), txcourse.tf.Transformer(cfg))
    """
    _convert(torch_module, tf_layer, to_tf=True)


def tf_to_torch(tf_layer: Any, torch_module: Any) -> None:
    """Copy every weight of ``tf_layer`` into the mirrored ``torch_module`` in place."""
    _convert(torch_module, tf_layer, to_tf=False)


def _convert(torch_module: Any, tf_layer: Any, to_tf: bool) -> None:
    import torch

    if not isinstance(torch_module, torch.nn.Module):
        raise ValueError(f"expected a torch.nn.Module, got {type(torch_module).__name__}")
    if not hasattr(tf_layer, "weights"):
        raise ValueError(f"expected a Keras layer, got {type(tf_layer).__name__}")
    root = type(torch_module).__name__
    _check_same_config(root, torch_module, tf_layer)
    assigned: set[int] = set()
    for path, t, k in _pairs(torch_module, tf_layer, root):
        converter = _leaf_converter(t)
        converter(path, t, k, to_tf)
        assigned.update(id(w) for w in k.weights)
    unmatched = [w.path for w in tf_layer.weights if id(w) not in assigned]
    if unmatched:
        raise ValueError(f"{root}: the Keras layer has weights with no PyTorch counterpart: {unmatched}")


def _check_same_config(root: str, t: Any, k: Any) -> None:
    """Refuse models whose configs differ in a field that changes the function (see SAME_FUNCTION_FIELDS)."""
    t_config, k_config = getattr(t, "config", None), getattr(k, "config", None)
    if not (dataclasses.is_dataclass(t_config) and dataclasses.is_dataclass(k_config)):
        return
    differ = [
        f"{f.name} (PyTorch {getattr(t_config, f.name)!r}, Keras {getattr(k_config, f.name, None)!r})"
        for f in dataclasses.fields(t_config)
        if f.name not in SAME_FUNCTION_FIELDS and getattr(t_config, f.name) != getattr(k_config, f.name, None)
    ]
    if differ:
        raise ValueError(
            f"{root}: the two models' configs differ in {', '.join(differ)}: the converted weights "
            f"would compute another function; build both from one config (only "
            f"{' and '.join(SAME_FUNCTION_FIELDS)} may differ)"
        )


def _check_same_attributes(path: str, t: Any, k: Any) -> None:
    """Refuse sublayers that differ in an attribute that changes their function (see FUNCTION_ATTRIBUTES)."""
    differ = [
        f"{name} (PyTorch {getattr(t, name)!r}, Keras {getattr(k, name)!r})"
        for name in FUNCTION_ATTRIBUTES
        if hasattr(t, name) and hasattr(k, name) and getattr(t, name) != getattr(k, name)
    ]
    if differ:
        raise ValueError(
            f"{path}: the two layers differ in {', '.join(differ)}: the converted weights would "
            f"compute another function; build both with the same arguments"
        )


def _pairs(t: Any, k: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Yield (path, torch leaf, keras leaf) for every leaf module holding weights."""
    import torch

    _check_same_attributes(path, t, k)
    if isinstance(t, _LEAF_TYPES()):
        yield path, t, k
        return
    own = [name for name, p in t.named_parameters(recurse=False)]
    if own:
        raise ValueError(
            f"{path}: cannot convert parameters {own} held directly by {type(t).__name__}; keep weights in leaf layers"
        )
    for name, child in t.named_children():
        if not any(True for _ in child.parameters()):
            continue  # dropout, positional-encoding tables: nothing to copy
        child_path = f"{path}.{name}"
        k_child = getattr(k, name, None)
        if k_child is None:
            raise ValueError(
                f"{child_path}: the Keras layer {type(k).__name__} has no sublayer "
                f"{name!r} to match the PyTorch {type(child).__name__}"
            )
        if isinstance(child, torch.nn.ModuleList):
            if not isinstance(k_child, (list, tuple)):
                raise ValueError(f"{child_path}: PyTorch has a list of layers, Keras has {type(k_child).__name__}")
            if len(child) != len(k_child):
                raise ValueError(f"{child_path}: PyTorch has {len(child)} layers, Keras has {len(k_child)}")
            for i, (t_item, k_item) in enumerate(zip(child, k_child)):
                yield from _pairs(t_item, k_item, f"{child_path}.{i}")
        else:
            yield from _pairs(child, k_child, child_path)


def _LEAF_TYPES() -> tuple[type, ...]:
    from torch import nn

    return (nn.Linear, nn.LayerNorm, nn.Embedding, nn.GRU, nn.GRUCell)


def _leaf_converter(t: Any) -> Callable[[str, Any, Any, bool], None]:
    from torch import nn

    for kind, converter in (
        (nn.Linear, _linear),
        (nn.LayerNorm, _layer_norm),
        (nn.Embedding, _embedding),
        (nn.GRU, _gru),
        (nn.GRUCell, _gru_cell),
    ):
        if isinstance(t, kind):
            return converter
    raise ValueError(f"no converter for {type(t).__name__}")  # pragma: no cover


def _expect(path: str, k: Any, kind: str) -> None:
    if type(k).__name__ != kind:
        raise ValueError(f"{path}: expected a Keras {kind} to match the PyTorch layer, got {type(k).__name__}")


def _copy(
    path: str,
    torch_param: Any,
    tf_var: Any,
    to_tf: bool,
    forward: Callable[[np.ndarray], np.ndarray],
    backward: Callable[[np.ndarray], np.ndarray],
) -> None:
    """Copy one tensor; ``forward`` maps the PyTorch layout to the Keras one, ``backward`` back."""
    import torch

    if to_tf:
        value = forward(torch_param.detach().cpu().numpy())
        if tuple(value.shape) != tuple(tf_var.shape):
            raise ValueError(
                f"{path}: shape mismatch: PyTorch gives {tuple(value.shape)} in Keras "
                f"layout, Keras variable {tf_var.path} has {tuple(tf_var.shape)}"
            )
        tf_var.assign(value.astype(tf_var.dtype))
    else:
        value = backward(np.asarray(tf_var.numpy()))
        if tuple(value.shape) != tuple(torch_param.shape):
            raise ValueError(
                f"{path}: shape mismatch: Keras {tf_var.path} gives {tuple(value.shape)} "
                f"in PyTorch layout, PyTorch parameter has {tuple(torch_param.shape)}"
            )
        with torch.no_grad():
            torch_param.copy_(torch.from_numpy(np.ascontiguousarray(value)).to(torch_param.dtype))


def _same(x: np.ndarray) -> np.ndarray:
    return x


def _transpose(x: np.ndarray) -> np.ndarray:
    return x.T


def _linear(path: str, t: Any, k: Any, to_tf: bool) -> None:
    _expect(path, k, "Dense")
    if (t.bias is None) != (k.bias is None):
        raise ValueError(
            f"{path}: bias mismatch: PyTorch bias={t.bias is not None}, Keras use_bias={k.bias is not None}"
        )
    _copy(f"{path}.weight", t.weight, k.kernel, to_tf, _transpose, _transpose)
    if t.bias is not None:
        _copy(f"{path}.bias", t.bias, k.bias, to_tf, _same, _same)


def _layer_norm(path: str, t: Any, k: Any, to_tf: bool) -> None:
    _expect(path, k, "LayerNormalization")
    if not np.isclose(t.eps, k.epsilon, rtol=1e-6, atol=0):
        raise ValueError(f"{path}: epsilon mismatch: PyTorch eps={t.eps}, Keras epsilon={k.epsilon}")
    _copy(f"{path}.weight", t.weight, k.gamma, to_tf, _same, _same)
    _copy(f"{path}.bias", t.bias, k.beta, to_tf, _same, _same)


def _embedding(path: str, t: Any, k: Any, to_tf: bool) -> None:
    _expect(path, k, "Embedding")
    _copy(f"{path}.weight", t.weight, k.embeddings, to_tf, _same, _same)


def _swap_rz(x: np.ndarray) -> np.ndarray:
    """Swap the first two gate blocks along axis 0: (r, z, n) <-> (z, r, n). Its own inverse."""
    r, z, n = np.split(x, 3, axis=0)
    return np.concatenate([z, r, n], axis=0)


def _gru_weights(path: str, cell: Any, weight_ih: Any, weight_hh: Any, bias_ih: Any, bias_hh: Any, to_tf: bool) -> None:
    _expect(path, cell, "GRUCell")
    if not cell.reset_after:
        raise ValueError(f"{path}: the Keras GRU must use reset_after=True (PyTorch's formulation)")
    _copy(f"{path}.weight_ih", weight_ih, cell.kernel, to_tf, lambda w: _swap_rz(w).T, lambda w: _swap_rz(w.T))
    _copy(
        f"{path}.weight_hh", weight_hh, cell.recurrent_kernel, to_tf, lambda w: _swap_rz(w).T, lambda w: _swap_rz(w.T)
    )
    if to_tf:
        both = np.stack([_swap_rz(bias_ih.detach().cpu().numpy()), _swap_rz(bias_hh.detach().cpu().numpy())])
        if tuple(both.shape) != tuple(cell.bias.shape):
            raise ValueError(f"{path}: shape mismatch: GRU biases {both.shape} vs Keras {tuple(cell.bias.shape)}")
        cell.bias.assign(both.astype(cell.bias.dtype))
    else:
        _copy(f"{path}.bias_ih", bias_ih, cell.bias, to_tf, None, lambda b: _swap_rz(b[0]))
        _copy(f"{path}.bias_hh", bias_hh, cell.bias, to_tf, None, lambda b: _swap_rz(b[1]))


def _gru(path: str, t: Any, k: Any, to_tf: bool) -> None:
    _expect(path, k, "GRU")
    if t.num_layers != 1 or t.bidirectional or not t.batch_first:
        raise ValueError(f"{path}: only one-layer, unidirectional, batch-first GRUs convert")
    _gru_weights(path, k.cell, t.weight_ih_l0, t.weight_hh_l0, t.bias_ih_l0, t.bias_hh_l0, to_tf)


def _gru_cell(path: str, t: Any, k: Any, to_tf: bool) -> None:
    _gru_weights(path, k, t.weight_ih, t.weight_hh, t.bias_ih, t.bias_hh, to_tf)
