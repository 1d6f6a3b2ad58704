"""Value checks on tensors (token ranges); shapes are checked by :mod:`txcourse._validation`."""

from __future__ import annotations

import keras
import tensorflow as tf

from txcourse import _validation as V


def check_float(name: str, x: tf.Tensor, layer: keras.layers.Layer) -> None:
    """``x`` must have the layer's compute dtype (float32 by default); the layer is built with ``autocast=False``.

    Under a mixed-precision policy any float dtype is accepted: the sublayers cast it. Raises ValueError naming ``name``.
    Runs in debug mode only (:func:`txcourse.debug_checks`), as in PyTorch.
    """
    if not V.debugging():
        return
    policy = layer.dtype_policy
    V.check_dtype(name, x.dtype.name, policy.compute_dtype, policy.compute_dtype != policy.variable_dtype)


def check_tokens(name: str, tokens: tf.Tensor, vocab_size: int, read_values: bool = False) -> None:
    """Token ids must be an integer tensor (always checked: free) with ids in [0, vocab_size) (a ValueError naming
    ``name``).

    The range needs the values on the host, a device-to-host copy: it is checked where the data enters
    (``read_values=True``: the source of decoding) and in debug mode (:func:`txcourse.debug_checks`), not in every
    call of a layer. Inside a ``tf.function`` the values are unknown when the graph is traced, so the check
    becomes a graph assertion (``InvalidArgumentError``).
    """
    if tokens.dtype.is_floating:
        raise ValueError(f"{name} must hold integer token ids, got dtype {tokens.dtype.name}")
    if not (read_values or V.debugging()):
        return
    if tf.executing_eagerly():
        if tf.size(tokens) > 0:
            V.check_token_range(name, int(tf.reduce_min(tokens)), int(tf.reduce_max(tokens)), vocab_size)
    else:
        tf.debugging.assert_non_negative(tokens, message=f"{name} holds a negative token id")
        tf.debugging.assert_less(
            tokens,
            tf.cast(vocab_size, tokens.dtype),
            message=f"{name} holds a token id outside the vocabulary [0, {vocab_size})",
        )
