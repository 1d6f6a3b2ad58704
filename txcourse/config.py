"""The model configuration, shared by both frameworks.

The defaults are the base model of Vaswani et al. (2017), Table 3, row "base".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Optional, Union

from txcourse._validation import ArgumentError

__all__ = [
    "TransformerConfig",
    "Seq2SeqConfig",
    "POSITIONS",
    "check_positions",
    "check_heads",
    "check_int",
    "check_config",
    "model_config",
]

# Where a Transformer gets its word order from (TransformerConfig.positions). Book: week 2, "Positions as built today".
POSITIONS = (
    "sinusoidal",  # fixed sin/cos table added to the embeddings, Vaswani et al. (2017), Sec. 3.5
    "learned",  # a trained max_len x d_model table added to the embeddings, as BERT and GPT do
    "rope",  # rotary embedding: queries and keys of self-attention rotated by position, Su et al. (2021)
    "alibi",  # a per-head linear bias -m_h |i - j| on the self-attention scores, Press et al. (2022)
)


def check_int(name: str, value: Any, minimum: int, owner: str = "", none: bool = False) -> None:
    """``value`` must be an integer >= ``minimum`` (or None where ``none``); the message names ``owner`` + ``name``."""
    if none and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ArgumentError(
            f"{owner}{name} must be an integer >= {minimum}{' or None' if none else ''}, got {value!r}", name
        )


def check_positions(value: Any, owner: str = "", none: bool = False) -> None:
    """``value`` must be in POSITIONS (or None where ``none``: no positions act there, as in cross-attention)."""
    if none and value is None:
        return
    if not isinstance(value, str) or value not in POSITIONS:
        raise ArgumentError(
            f"{owner}positions must be one of {list(POSITIONS)}{' or None' if none else ''}, got {value!r}",
            "positions",
        )


def check_heads(
    d_model: int, num_heads: int, num_kv_heads: Optional[int], positions: Optional[str], owner: str = ""
) -> None:
    """The rules of the attention's shape, written once: TransformerConfig applies them to its fields and
    MultiHeadAttention (week 3, explicit arguments) to its arguments, with the same messages.

    d_model splits into num_heads heads of d_k = d_model / num_heads (Sec. 3.2.2); num_kv_heads, if set,
    divides num_heads (grouped-query attention); "rope" rotates pairs of dimensions, so d_k is even.
    """
    check_int("d_model", d_model, 1, owner)
    check_int("num_heads", num_heads, 1, owner)
    if d_model % num_heads != 0:
        raise ArgumentError(
            f"{owner}d_model ({d_model}) must be divisible by num_heads ({num_heads}): each head gets "
            f"d_model / num_heads dimensions. Choose for example num_heads={_divisor_near(d_model, num_heads)}.",
            "num_heads",
            "d_model",
        )
    check_int("num_kv_heads", num_kv_heads, 1, owner, none=True)
    if num_kv_heads is not None and num_heads % num_kv_heads != 0:
        raise ArgumentError(
            f"{owner}num_kv_heads ({num_kv_heads}) must divide num_heads ({num_heads}): "
            f"each key/value head is shared by num_heads / num_kv_heads query heads. Choose one of "
            f"{[d for d in range(1, num_heads + 1) if num_heads % d == 0]}, or None for num_heads.",
            "num_kv_heads",
            "num_heads",
        )
    check_positions(positions, owner, none=True)
    if positions == "rope" and (d_model // num_heads) % 2 != 0:
        raise ArgumentError(
            f"{owner}positions='rope' rotates pairs of dimensions, so each head's width "
            f"d_model / num_heads must be even, got {d_model} / {num_heads} = {d_model // num_heads}",
            "positions",
            "num_heads",
        )


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
        owner = "TransformerConfig."
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads", "d_ff", "max_len"):
            check_int(name, getattr(self, name), 1, owner)
        for name in ("num_encoder_layers", "num_decoder_layers", "pad_id"):
            check_int(name, getattr(self, name), 0, owner)
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
        check_positions(self.positions, owner)
        check_heads(self.d_model, self.num_heads, self.num_kv_heads, self.positions, owner)
        smallest = min(self.src_vocab_size, self.tgt_vocab_size)
        if self.pad_id >= smallest:
            raise ArgumentError(
                f"TransformerConfig.pad_id ({self.pad_id}) must be a token id below both "
                f"vocabulary sizes (src {self.src_vocab_size}, tgt {self.tgt_vocab_size})",
                "pad_id",
                "src_vocab_size",
                "tgt_vocab_size",
            )

    @property
    def d_k(self) -> int:
        """Width of one attention head, d_model / num_heads (d_k = d_v in the paper)."""
        return self.d_model // self.num_heads

    @property
    def kv_heads(self) -> int:
        """H_kv, the number of key/value heads: ``num_kv_heads``, or ``num_heads`` when None (the paper)."""
        return self.num_heads if self.num_kv_heads is None else self.num_kv_heads

    def replace(self, **changes: Any) -> TransformerConfig:
        """A copy with some fields changed; the copy is validated again."""
        return _replace(self, changes)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for checkpoints and JSON)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TransformerConfig:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        return _from_dict(cls, values)


def _replace(config: Any, changes: dict[str, Any]) -> Any:
    names = [f.name for f in dataclasses.fields(config)]
    unknown = set(changes) - set(names)
    if unknown:
        raise ArgumentError(
            f"{type(config).__name__} has no field(s) {sorted(unknown)}; fields are {names}", *sorted(unknown)
        )
    return dataclasses.replace(config, **changes)


def _from_dict(cls: type, values: dict[str, Any]) -> Any:
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = set(values) - set(names)
    if unknown:
        raise ArgumentError(
            f"{cls.__name__} has unknown field(s) {sorted(unknown)}; fields are {names}", *sorted(unknown)
        )
    return cls(**values)


def _divisor_near(n: int, k: int) -> int:
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return min(divisors, key=lambda d: (abs(d - k), d))


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Sizes of the week-1 GRU encoder-decoder (:class:`Seq2Seq`, with or without Bahdanau attention).

    Invalid values raise an :class:`~txcourse._validation.ArgumentError`
    naming the field, as :class:`TransformerConfig` does. Whether the
    decoder attends (Bahdanau et al. 2015) or reads one fixed context
    vector (Sutskever et al. 2014) is the model's kind, ``Seq2Seq(config,
    attention=...)``, not a size.

    Example:
        >>> Seq2SeqConfig(src_vocab_size=40, tgt_vocab_size=20, embedding_dim=16, units=32).units
        32
    """

    src_vocab_size: int = 8000  # source vocabulary V_src (a task sets it from its tokenizer)
    tgt_vocab_size: int = 8000  # target vocabulary V_tgt
    embedding_dim: int = 128  # width of the token embeddings (Bahdanau et al. 2015 used 620; small enough for a CPU)
    units: int = 256  # hidden units U of the GRUs and of the alignment layer (Bahdanau et al. 2015 used 1000)
    pad_id: int = 0  # token id of <pad>; padded source positions get no attention

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "embedding_dim", "units"):
            check_int(name, getattr(self, name), 1, "Seq2SeqConfig.")
        check_int("pad_id", self.pad_id, 0, "Seq2SeqConfig.")
        if self.pad_id >= min(self.src_vocab_size, self.tgt_vocab_size):
            raise ArgumentError(
                f"Seq2SeqConfig.pad_id ({self.pad_id}) must be a token id below both vocabulary sizes "
                f"(src {self.src_vocab_size}, tgt {self.tgt_vocab_size})",
                "pad_id",
                "src_vocab_size",
                "tgt_vocab_size",
            )

    def replace(self, **changes: Any) -> Seq2SeqConfig:
        """A copy with some fields changed; the copy is validated again."""
        return _replace(self, changes)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for checkpoints and JSON)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Seq2SeqConfig:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        return _from_dict(cls, values)


def model_config(kind: str, config: Union[TransformerConfig, Seq2SeqConfig, dict[str, Any]]) -> Any:
    """The validated config object of a ``kind`` model ('transformer', 'bahdanau' or 'seq2seq').

    ``config`` itself when it is that object already (what the command line and
    :func:`~txcourse.registry.default_model_config` carry: no round trip); a dict,
    such as a checkpoint's ``model.config`` or one written by hand, is read once
    with ``from_dict``, which checks every field.
    """
    cls = TransformerConfig if kind == "transformer" else Seq2SeqConfig
    if isinstance(config, dict):
        return cls.from_dict(config)
    check_config(config, cls)
    return config


def check_config(config: Any, kind: type = TransformerConfig) -> None:
    """``config`` must be a ``kind`` (a layer takes the validated config object, not its fields)."""
    if not isinstance(config, kind):
        raise ArgumentError(
            f"config must be a {kind.__name__}, got {type(config).__name__}; build one with the settings, "
            f"e.g. {kind.__name__}(d_model=64, num_heads=4)"
            if kind is TransformerConfig
            else f"config must be a {kind.__name__}, got {type(config).__name__}",
            "config",
        )
