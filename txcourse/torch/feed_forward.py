"""Position-wise feed-forward network (Vaswani et al. 2017, Sec. 3.3). Book: week 4."""

from __future__ import annotations

import torch
from torch import nn

from txcourse import _validation as V
from txcourse.config import check_int
from txcourse.torch._checks import check_float
from txcourse.torch.init import linear

__all__ = ["PositionwiseFeedForward"]


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, Eq. (2) of Vaswani et al. (2017).

    The same two linear maps are applied at every position separately.

    Args:
        d_model: input and output width D.
        d_ff: inner width F (2048 in the base model).

    Shape:
        x (B, T, D). Returns (B, T, D).
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        check_int("d_model", d_model, 1)  # the rule TransformerConfig applies to its d_model and d_ff
        check_int("d_ff", d_ff, 1)
        self.d_model = d_model
        self.w_1 = linear(d_model, d_ff)  # W_1, b_1
        self.w_2 = linear(d_ff, d_model)  # W_2, b_2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if V.debugging():
            check_float("x", x, self)
            V.check_width("x", tuple(x.shape), self.d_model)
        hidden = torch.relu(self.w_1(x))  # (B, T, F)
        return self.w_2(hidden)  # (B, T, D)
