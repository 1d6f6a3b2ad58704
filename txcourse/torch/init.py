"""Layer factories with the same initialisation in both frameworks.

PyTorch's ``nn.Linear`` defaults to Kaiming-uniform and Keras' ``Dense`` to
Glorot-uniform; the course uses Glorot (Xavier) uniform weights and zero
biases everywhere, and N(0, d^-1/2) token embeddings, so that a model trains
alike in both halves. (Values still differ: parity tests copy weights.)
"""

from __future__ import annotations

from torch import nn

__all__ = ["linear", "embedding", "layer_norm", "gru", "gru_cell"]


def linear(in_features: int, out_features: int, bias: bool = True) -> nn.Linear:
    """y = x W + b with Glorot-uniform W, zero b. Weight shape (out, in)."""
    layer = nn.Linear(in_features, out_features, bias=bias)
    nn.init.xavier_uniform_(layer.weight)
    if bias:
        nn.init.zeros_(layer.bias)
    return layer


def embedding(num_embeddings: int, embedding_dim: int) -> nn.Embedding:
    """A lookup table initialised N(0, embedding_dim^-1/2) (Sec. 3.4 scales it by sqrt(d))."""
    layer = nn.Embedding(num_embeddings, embedding_dim)
    nn.init.normal_(layer.weight, mean=0.0, std=embedding_dim**-0.5)
    return layer


def layer_norm(d_model: int, eps: float) -> nn.LayerNorm:
    """LayerNorm over the last dimension, gain 1 and bias 0 (Ba et al. 2016)."""
    return nn.LayerNorm(d_model, eps=eps)


def gru(input_size: int, hidden_size: int) -> nn.GRU:
    """A one-layer, batch-first GRU initialised like Keras' ``GRU``.

    Glorot-uniform input weights, orthogonal recurrent weights, zero biases.
    Gates are stored (r, z, n) in PyTorch and (z, r, h) in Keras; the
    converter reorders them.
    """
    layer = nn.GRU(input_size, hidden_size, batch_first=True)
    _init_gru_weights(layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0, layer.bias_hh_l0)
    return layer


def gru_cell(input_size: int, hidden_size: int) -> nn.GRUCell:
    """One GRU step, initialised like Keras' ``GRUCell`` (see :func:`gru`)."""
    cell = nn.GRUCell(input_size, hidden_size)
    _init_gru_weights(cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    return cell


def _init_gru_weights(weight_ih, weight_hh, bias_ih, bias_hh) -> None:
    nn.init.xavier_uniform_(weight_ih)
    nn.init.orthogonal_(weight_hh)
    nn.init.zeros_(bias_ih)
    nn.init.zeros_(bias_hh)
