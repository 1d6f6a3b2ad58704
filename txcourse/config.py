"""The model configuration, shared by both frameworks.

The defaults are the base model of Vaswani et al. (2017), Table 3, row "base".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Optional

from txcourse._validation import ArgumentError

__all__ = ["TransformerConfig", "POSITIONS", "check_positions"]

# Where a Transformer gets its word order from (TransformerConfig.positions). Book: week 2, "Positions as built today".
POSITIONS = (
    "sinusoidal",  # fixed sin/cos table added to the embeddings, Vaswani et al. (2017), Sec. 3.5
    "learned",  # a trained max_len x d_model table added to the embeddings, as BERT and GPT do
    "rope",  # rotary embedding: queries and keys of self-attention rotated by position, Su et al. (2021)
    "alibi",  # a per-head linear bias -m_h |i - j| on the self-attention scores, Press et al. (2022)
)


def check_positions(value: Any, name: str = "positions") -> None:
    """Raise an :class:`~txcourse._validation.ArgumentError` naming ``positions`` unless ``value`` is in POSITIONS."""
    if not isinstance(value, str) or value not in POSITIONS:
        raise ArgumentError(f"{name} must be one of {list(POSITIONS)}, got {value!r}", "positions")


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of the encoder-decoder Transformer.

    Invalid values raise ``ValueError`` at construction, naming the field,
    the value received and what is expected (an
    :class:`~txcourse._validation.ArgumentError` whose ``arguments`` hold the
    field names).

    Example:
        >>> cfg = TransformerConfig(d_model=64, num_heads=4, d_ff=128)
        >>> cfg.d_k
        16
    """

    src_vocab_size: int = 37000  # paper: shared byte-pair vocabulary of about 37000 tokens (EN-DE)
    tgt_vocab_size: int = 37000  # same vocabulary on both sides in the paper
    d_model: int = 512  # model width (Sec. 3.1)
    num_heads: int = 8  # h = 8 parallel heads, d_k = d_v = d_model / h = 64 (Sec. 3.2.2)
    num_encoder_layers: int = 6  # N = 6 (Sec. 3.1)
    num_decoder_layers: int = 6  # N = 6 (Sec. 3.1)
    d_ff: int = 2048  # inner width of the position-wise FFN (Sec. 3.3)
    dropout: float = 0.1  # P_drop = 0.1 on sublayer outputs and embeddings (Sec. 5.4)
    max_len: int = 512  # longest sequence the positional-encoding table covers
    pad_id: int = 0  # token id of <pad>; padded keys are masked out
    norm_first: bool = False  # False: post-LN as in the paper; True: pre-LN (GPT-2; analysed by Xiong et al. 2020)
    tie_embeddings: bool = True  # output projection reuses the target embedding matrix (Sec. 3.4)
    layer_norm_eps: float = 1e-6  # epsilon of LayerNorm, as in the encoder code of notes 000 and 002
    fused: bool = False  # fast path: torch's F.scaled_dot_product_attention / XLA-compiled TF train step
    positions: str = "sinusoidal"  # one of POSITIONS; the paper's sinusoids (Sec. 3.5) by default
    num_kv_heads: Optional[int] = None  # key/value heads: None = num_heads (the paper), 1 = multi-query, else GQA

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads", "d_ff", "max_len"):
            _check_int(name, getattr(self, name), minimum=1)
        for name in ("num_encoder_layers", "num_decoder_layers", "pad_id"):
            _check_int(name, getattr(self, name), minimum=0)
        for name in ("norm_first", "tie_embeddings", "fused"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ArgumentError(f"TransformerConfig.{name} must be True or False, got {value!r}", name)
        if (
            not isinstance(self.dropout, (int, float))
            or isinstance(self.dropout, bool)
            or not 0.0 <= self.dropout < 1.0
        ):
            raise ArgumentError(
                f"TransformerConfig.dropout must be a probability in [0, 1), got {self.dropout!r}", "dropout"
            )
        if (
            not isinstance(self.layer_norm_eps, (int, float))
            or isinstance(self.layer_norm_eps, bool)
            or not 0 < self.layer_norm_eps < math.inf
        ):
            raise ArgumentError(
                f"TransformerConfig.layer_norm_eps must be a positive finite number such as 1e-6, "
                f"got {self.layer_norm_eps!r}",
                "layer_norm_eps",
            )
        if self.d_model % self.num_heads != 0:
            raise ArgumentError(
                f"TransformerConfig.d_model ({self.d_model}) must be divisible by num_heads "
                f"({self.num_heads}): each head gets d_model / num_heads dimensions. "
                f"Choose for example num_heads={_divisor_near(self.d_model, self.num_heads)}.",
                "num_heads",
                "d_model",
            )
        check_positions(self.positions, "TransformerConfig.positions")
        if self.positions == "rope" and self.d_k % 2 != 0:
            raise ArgumentError(
                f"TransformerConfig.positions='rope' rotates pairs of dimensions, so each head's width "
                f"d_model / num_heads must be even, got {self.d_model} / {self.num_heads} = {self.d_k}",
                "positions",
                "num_heads",
            )
        self._check_num_kv_heads()
        smallest = min(self.src_vocab_size, self.tgt_vocab_size)
        if self.pad_id >= smallest:
            raise ArgumentError(
                f"TransformerConfig.pad_id ({self.pad_id}) must be a token id below both "
                f"vocabulary sizes (src {self.src_vocab_size}, tgt {self.tgt_vocab_size})",
                "pad_id",
                "src_vocab_size",
                "tgt_vocab_size",
            )

    def _check_num_kv_heads(self) -> None:
        """None, or a divisor of num_heads: each key/value head serves num_heads / num_kv_heads query heads."""
        if self.num_kv_heads is None:
            return
        _check_int("num_kv_heads", self.num_kv_heads, minimum=1)
        if self.num_heads % self.num_kv_heads != 0:
            raise ArgumentError(
                f"TransformerConfig.num_kv_heads ({self.num_kv_heads}) must divide num_heads ({self.num_heads}): "
                f"each key/value head is shared by num_heads / num_kv_heads query heads. Choose one of "
                f"{[d for d in range(1, self.num_heads + 1) if self.num_heads % d == 0]}, or None for num_heads.",
                "num_kv_heads",
                "num_heads",
            )

    @property
    def d_k(self) -> int:
        """Width of one attention head, d_model / num_heads (d_k = d_v in the paper)."""
        return self.d_model // self.num_heads

    def replace(self, **changes: Any) -> TransformerConfig:
        """A copy with some fields changed; the copy is validated again."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ArgumentError(
                f"TransformerConfig has no field(s) {sorted(unknown)}; "
                f"fields are {[f.name for f in dataclasses.fields(self)]}",
                *sorted(unknown),
            )
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for checkpoints and JSON)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TransformerConfig:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        unknown = set(values) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ArgumentError(
                f"TransformerConfig has unknown field(s) {sorted(unknown)}; fields are "
                f"{[f.name for f in dataclasses.fields(cls)]}",
                *sorted(unknown),
            )
        return cls(**values)


def _check_int(name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ArgumentError(f"TransformerConfig.{name} must be an integer >= {minimum}, got {value!r}", name)


def _divisor_near(n: int, k: int) -> int:
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return min(divisors, key=lambda d: (abs(d - k), d))
