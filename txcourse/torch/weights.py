"""The weights of a model as named NumPy arrays: what a checkpoint holds, in this half's layout.

Each half names its weights its own way, so each half writes and reads its
own (PyTorch: the ``state_dict`` names, ``model/encoder.layers.0.feed_forward.w_1.weight``).
:mod:`txcourse.training.checkpoint` knows neither layout: this half reads
what a checkpoint's weights tell about the model (:func:`architecture`) and
checks them against the header when it loads them (:func:`check_weights`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from txcourse.torch.attention import MultiHeadAttention
from txcourse.training.checkpoint import Checkpoint, check_architecture

__all__ = ["model_arrays", "load_model_arrays", "architecture", "check_weights", "num_heads"]

PREFIX = "model/"  # the checkpoint arrays that hold the model's weights


def model_arrays(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """The model's weights (and any other state it saves) as ``model/<name>`` arrays, for a checkpoint."""
    return {f"{PREFIX}{name}": t.detach().cpu().numpy() for name, t in model.state_dict().items()}


def load_model_arrays(model: torch.nn.Module, arrays: dict[str, np.ndarray], path: str) -> None:
    """Copy the ``model/`` arrays of a checkpoint into ``model``, after checking that they fit it.

    Raises:
        ValueError: a weight is missing or extra, or of another shape (the message names ``path``).
    """
    state = {name[len(PREFIX) :]: torch.from_numpy(a) for name, a in arrays.items() if name.startswith(PREFIX)}
    expected = model.state_dict()
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        raise ValueError(f"checkpoint {path!r} does not fit the model: missing {missing[:5]}, unexpected {extra[:5]}")
    for name, value in state.items():
        if tuple(value.shape) != tuple(expected[name].shape):
            raise ValueError(
                f"checkpoint {path!r} does not fit the model: {name} has shape {tuple(value.shape)} "
                f"in the checkpoint, {tuple(expected[name].shape)} in the model"
            )
    model.load_state_dict(state)


def architecture(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """What the names and shapes of a checkpoint's model arrays tell about the model ({} when nothing).

    Returns the model ``kind`` and the config fields the weights determine:
    vocabulary sizes, d_model, d_ff, layer counts, norm_first and
    tie_embeddings of a Transformer; embedding_dim and units of a GRU model.
    (PyTorch: hierarchical names, ``encoder.layers.0.feed_forward.w_1.weight``.)
    """
    get = {name[len(PREFIX) :]: a for name, a in arrays.items() if name.startswith(PREFIX)}.get
    names = [name[len(PREFIX) :] for name in arrays if name.startswith(PREFIX)]
    if "encoder.embedding.token_embedding.weight" in names:
        src, tgt = get("encoder.embedding.token_embedding.weight"), get("decoder.embedding.token_embedding.weight")
        found = {
            "kind": "transformer",
            "src_vocab_size": src.shape[0],
            "d_model": src.shape[1],
            "tgt_vocab_size": None if tgt is None else tgt.shape[0],
            "num_encoder_layers": len({n.split(".")[2] for n in names if n.startswith("encoder.layers.")}),
            "num_decoder_layers": len({n.split(".")[2] for n in names if n.startswith("decoder.layers.")}),
            "norm_first": "encoder.final_norm.weight" in names,
            "tie_embeddings": "output_projection.weight" not in names,
        }
        w_1 = [get(n) for n in names if n.endswith("feed_forward.w_1.weight")]  # (d_ff, D) each
        return {**found, **({"d_ff": w_1[0].shape[0]} if w_1 else {})}
    if "encoder.embedding.weight" in names and "encoder.gru.weight_hh_l0" in names:
        src, tgt = get("encoder.embedding.weight"), get("decoder.embedding.weight")
        return {
            "kind": "bahdanau" if any(n.startswith("decoder.attention.") for n in names) else "seq2seq",
            "src_vocab_size": src.shape[0],
            "embedding_dim": src.shape[1],
            "tgt_vocab_size": None if tgt is None else tgt.shape[0],
            "units": get("encoder.gru.weight_hh_l0").shape[1],
        }  # (3 * units, units)
    return {}


def check_weights(checkpoint: Checkpoint) -> None:
    """Raise a one-line ValueError when the checkpoint's header does not describe its weights.

    What the weights' names and shapes tell (:func:`architecture`) against the
    header's model kind and config
    (:func:`~txcourse.training.checkpoint.check_architecture`); ``load_model``
    and ``Trainer.load`` call it before they build or fill the model.
    """
    check_architecture(checkpoint, architecture(checkpoint.arrays))


def num_heads(model: torch.nn.Module, config: Any) -> int:
    """The number of heads of the model's attention layers (all alike in a Transformer; the config's if none)."""
    heads = {m.num_heads for m in model.modules() if isinstance(m, MultiHeadAttention)} or {config.num_heads}
    if len(heads) != 1:
        raise ValueError(f"expected one number of heads in the model, found {sorted(heads)}")
    return heads.pop()
