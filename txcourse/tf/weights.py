"""The weights of a model as named NumPy arrays: what a checkpoint holds, in this half's layout.

Each half names its weights its own way, so each half writes and reads its
own (Keras: the variables by position, ``model/0007:w_q/kernel``, since Keras paths are not unique).
:mod:`txcourse.training.checkpoint` knows neither layout: this half reads
what a checkpoint's weights tell about the model (:func:`architecture`) and
checks them against the header when it loads them (:func:`check_weights`).
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np

from txcourse.tf.attention import MultiHeadAttention
from txcourse.training.checkpoint import Checkpoint, check_architecture

__all__ = ["model_arrays", "load_model_arrays", "architecture", "check_weights", "num_heads"]

PREFIX = "model/"  # the checkpoint arrays that hold the model's weights


def model_arrays(model: keras.Model) -> dict[str, np.ndarray]:
    """The model's weights (and any other state it saves) as ``model/<name>`` arrays, for a checkpoint."""
    return variable_arrays("model", model.variables)  # weights and the dropout seed states


def load_model_arrays(model: keras.Model, arrays: dict[str, np.ndarray], path: str) -> None:
    """Copy the ``model/`` arrays of a checkpoint into ``model``, after checking that they fit it.

    Raises:
        ValueError: a weight is missing or extra, or of another shape (the message names ``path``).
    """
    load_variables("model", model.variables, arrays, path)


def architecture(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """What the names and shapes of a checkpoint's model arrays tell about the model ({} when nothing).

    Returns the model ``kind`` and the config fields the weights determine:
    vocabulary sizes, d_model, d_ff, layer counts, norm_first and
    tie_embeddings of a Transformer; embedding_dim and units of a GRU model.
    (Keras: ``model/0007:w_q/kernel``, in the order of ``model.variables``, encoder first.)
    """
    ordered = sorted(name for name in arrays if name.startswith(PREFIX))
    leaves = [name.split(":", 1)[-1] for name in ordered]
    tokens = [i for i, leaf in enumerate(leaves) if leaf == "token_embedding/embeddings"]
    plain = [i for i, leaf in enumerate(leaves) if leaf == "embedding/embeddings"]
    if len(tokens) == 2:
        src, tgt, cut = arrays[ordered[tokens[0]]], arrays[ordered[tokens[1]]], tokens[1]
        norms = [i for i, leaf in enumerate(leaves) if leaf == "feed_forward_norm/gamma"]
        found = {
            "kind": "transformer",
            "src_vocab_size": src.shape[0],
            "d_model": src.shape[1],
            "tgt_vocab_size": tgt.shape[0],
            "num_encoder_layers": sum(i < cut for i in norms),
            "num_decoder_layers": sum(i > cut for i in norms),
            "norm_first": "final_norm/gamma" in leaves,
            "tie_embeddings": "output_projection/kernel" not in leaves,
        }
        w_1 = [arrays[ordered[i]] for i, leaf in enumerate(leaves) if leaf == "w_1/kernel"]  # (D, d_ff) each
        return {**found, **({"d_ff": w_1[0].shape[1]} if w_1 else {})}
    if len(plain) == 2 and any(leaf.endswith("recurrent_kernel") for leaf in leaves):
        src, tgt = arrays[ordered[plain[0]]], arrays[ordered[plain[1]]]
        units = next(arrays[name] for name, leaf in zip(ordered, leaves) if leaf.endswith("recurrent_kernel"))
        return {
            "kind": "bahdanau" if "w_a/kernel" in leaves else "seq2seq",
            "src_vocab_size": src.shape[0],
            "embedding_dim": src.shape[1],
            "tgt_vocab_size": tgt.shape[0],
            "units": units.shape[0],
        }  # (units, 3 * units)
    return {}


def check_weights(checkpoint: Checkpoint) -> None:
    """Raise a one-line ValueError when the checkpoint's header does not describe its weights.

    What the weights' names and shapes tell (:func:`architecture`) against the
    header's model kind and config
    (:func:`~txcourse.training.checkpoint.check_architecture`); ``load_model``
    and ``Trainer.load`` call it before they build or fill the model.
    """
    check_architecture(checkpoint, architecture(checkpoint.arrays))


def num_heads(model: keras.Model, config: Any) -> int:
    """The number of heads of the model's attention layers (all alike in a Transformer; the config's if none)."""
    heads = {m.num_heads for m in model._flatten_layers() if isinstance(m, MultiHeadAttention)} or {config.num_heads}
    if len(heads) != 1:
        raise ValueError(f"expected one number of heads in the model, found {sorted(heads)}")
    return heads.pop()


def variable_arrays(prefix: str, variables: list) -> dict[str, np.ndarray]:
    """Variables by position: Keras paths (``w_q/kernel``) are not unique, so the index leads the name."""
    return {f"{prefix}/{i:04d}:{variable.path}": np.asarray(variable.numpy()) for i, variable in enumerate(variables)}


def load_variables(prefix: str, variables: list, arrays: dict[str, np.ndarray], path: str) -> None:
    """Assign the ``prefix/`` arrays of a checkpoint to ``variables`` (by position), after checking count and
    shapes (the Trainer also loads its optimizer's variables this way)."""
    names = sorted(name for name in arrays if name.startswith(f"{prefix}/"))
    if len(names) != len(variables):
        raise ValueError(
            f"checkpoint {path!r} does not fit the {prefix}: it holds {len(names)} {prefix} "
            f"variables, the {prefix} has {len(variables)}"
        )
    for name, variable in zip(names, variables):
        if tuple(arrays[name].shape) != tuple(variable.shape):
            raise ValueError(
                f"checkpoint {path!r} does not fit the {prefix}: {name} has shape "
                f"{tuple(arrays[name].shape)}, variable {variable.path} has {tuple(variable.shape)}"
            )
    for name, variable in zip(names, variables):
        variable.assign(arrays[name].astype(variable.dtype))
