"""Position-wise feed-forward network (Vaswani et al. 2017, Sec. 3.3). Book: week 4."""

from __future__ import annotations

import keras
import tensorflow as tf

from txcourse import _validation as V
from txcourse.config import check_int
from txcourse.tf._checks import check_float
from txcourse.tf.init import linear

__all__ = ["PositionwiseFeedForward"]


class PositionwiseFeedForward(keras.layers.Layer):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, Eq. (2) of Vaswani et al. (2017).

    The same two linear maps are applied at every position separately.

    Args:
        d_model: input and output width D.
        d_ff: inner width F (2048 in the base model).

    Shape:
        x (B, T, D). Returns (B, T, D).
    """

    def __init__(self, d_model: int, d_ff: int, **kwargs):
        super().__init__(autocast=False, **kwargs)  # other dtypes raise, as in PyTorch (check_float in debug mode)
        check_int("d_model", d_model, 1)  # the rule TransformerConfig applies to its d_model and d_ff
        check_int("d_ff", d_ff, 1)
        self.d_model = d_model
        self.w_1 = linear(d_model, d_ff, name="w_1")  # W_1, b_1
        self.w_2 = linear(d_ff, d_model, name="w_2")  # W_2, b_2
        self.built = True

    def call(self, x: tf.Tensor) -> tf.Tensor:
        if V.debugging():
            check_float("x", x, self)
            V.check_width("x", tuple(x.shape), self.d_model)
        hidden = tf.nn.relu(self.w_1(x))  # (B, T, F)
        return self.w_2(hidden)  # (B, T, D)
