"""Layer factories with the same initialisation in both frameworks.

PyTorch's ``nn.Linear`` defaults to Kaiming-uniform and Keras' ``Dense`` to
Glorot-uniform; the course uses Glorot (Xavier) uniform weights and zero
biases everywhere, and N(0, d^-1/2) token embeddings, so that a model trains
alike in both halves. (Values still differ: parity tests copy weights.)
Every factory builds its layer at once, so its weights exist before the
first call and the converter can fill them.
"""

from __future__ import annotations

import keras

__all__ = ["linear", "embedding", "layer_norm", "gru", "gru_cell"]


def linear(in_features: int, out_features: int, bias: bool = True, name: str | None = None) -> keras.layers.Dense:
    """y = x W + b with Glorot-uniform W, zero b. Kernel shape (in, out)."""
    layer = keras.layers.Dense(
        out_features, use_bias=bias, kernel_initializer="glorot_uniform", bias_initializer="zeros", name=name
    )
    layer.build((None, in_features))
    return layer


def embedding(num_embeddings: int, embedding_dim: int, name: str | None = None) -> keras.layers.Embedding:
    """A lookup table initialised N(0, embedding_dim^-1/2) (Sec. 3.4 scales it by sqrt(d))."""
    layer = keras.layers.Embedding(
        num_embeddings,
        embedding_dim,
        name=name,
        embeddings_initializer=keras.initializers.RandomNormal(stddev=embedding_dim**-0.5),
    )
    layer.build((None,))
    return layer


def layer_norm(d_model: int, eps: float, name: str | None = None) -> keras.layers.LayerNormalization:
    """LayerNorm over the last dimension, gain 1 and bias 0 (Ba et al. 2016)."""
    layer = keras.layers.LayerNormalization(epsilon=eps, name=name)
    layer.build((None, d_model))
    return layer


def gru(input_size: int, hidden_size: int, name: str | None = None) -> keras.layers.GRU:
    """A one-layer GRU returning every step, Keras' default initialisation.

    Glorot-uniform input weights, orthogonal recurrent weights, zero biases.
    Gates are stored (z, r, h) in Keras and (r, z, n) in PyTorch; the
    converter reorders them.
    """
    layer = keras.layers.GRU(hidden_size, return_sequences=True, name=name)
    layer.build((None, None, input_size))
    return layer


def gru_cell(input_size: int, hidden_size: int, name: str | None = None) -> keras.layers.GRUCell:
    """One GRU step, initialised as in :func:`gru`."""
    cell = keras.layers.GRUCell(hidden_size, name=name)
    cell.build((None, input_size))
    return cell
