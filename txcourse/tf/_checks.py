"""Value checks on tensors (token ranges); shapes are checked by :mod:`txcourse._validation`."""

from __future__ import annotations

import tensorflow as tf

from txcourse import _validation as V


def check_tokens(name: str, tokens: tf.Tensor, vocab_size: int) -> None:
    """Token ids must lie in [0, vocab_size); raises ValueError naming ``name``.

    Inside a ``tf.function`` the values are unknown when the graph is traced,
    so the check becomes a graph assertion (``InvalidArgumentError``).
    """
    if tokens.dtype.is_floating:
        raise ValueError(f"{name} must hold integer token ids, got dtype {tokens.dtype.name}")
    if tf.executing_eagerly():
        if tf.size(tokens) > 0:
            V.check_token_range(name, int(tf.reduce_min(tokens)), int(tf.reduce_max(tokens)), vocab_size)
    else:
        tf.debugging.assert_non_negative(tokens, message=f"{name} holds a negative token id")
        tf.debugging.assert_less(tokens, tf.cast(vocab_size, tokens.dtype),
                                 message=f"{name} holds a token id outside the vocabulary [0, {vocab_size})")
