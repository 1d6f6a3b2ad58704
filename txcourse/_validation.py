"""Input checks shared by both frameworks, so both raise the same messages.

Every function takes plain Python shapes and numbers (``tuple(x.shape)``),
never a tensor, and raises ``ValueError`` naming the argument, what it got
and what was expected. :class:`ArgumentError` is that ``ValueError`` with the
argument's name also kept as data (``.arguments``), for a caller that must say
which of its own inputs set it (the command line maps a config field to its
option) without reading the message.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Optional

from txcourse.errors import TxcourseError

Shape = Sequence[Optional[int]]


# A ``ValueError`` about named arguments: the one error type of the user's mistakes, defined in txcourse.errors.
ArgumentError = TxcourseError


_DEBUG: contextvars.ContextVar[Optional[bool]] = contextvars.ContextVar("txcourse_debug_checks", default=None)

# Set by a framework half (txcourse.torch: ``torch.compiler.is_compiling``): while a compiler traces a forward,
# the per-call checks are off, so that reading the context variable or the environment breaks no graph.
_tracing: Callable[[], bool] = lambda: False  # noqa: E731


def set_tracing_probe(probe: Callable[[], bool]) -> None:
    """Tell :func:`debugging` how to know that a compiler is tracing (it then returns False)."""
    global _tracing
    _tracing = probe


def debugging() -> bool:
    """Whether the per-call checks of the internal layers run: inside :func:`debug_checks`, or with the
    environment variable ``TXCOURSE_DEBUG=1`` set.

    Off by default: a layer's ``forward``/``call`` then checks only what costs no device-to-host copy and
    little time (ranks, the dtype of token ids); the input dtypes, widths, mask shapes, caches and token ranges
    are checked in debug mode, and token ranges where the data enters (decoding's source, the tokenizers).
    """
    if _tracing():  # torch.compile: the checks would break the graph; debug mode runs eagerly
        return False
    value = _DEBUG.get()
    return value if value is not None else os.environ.get("TXCOURSE_DEBUG", "0") not in ("", "0")


@contextlib.contextmanager
def debug_checks(enabled: bool = True) -> Iterator[None]:
    """Run every per-call check of the layers inside the ``with`` block (``enabled=False``: none of them).

    Example:
        >>> import txcourse
        >>> with txcourse.debug_checks():
        ...     pass  # model(src, tgt) here checks dtypes, widths, masks and token ranges in every layer
    """
    token = _DEBUG.set(enabled)
    try:
        yield
    finally:
        _DEBUG.reset(token)


def _fmt(shape: Shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"


def check_rank(name: str, shape: Shape, rank: int | tuple[int, ...], layout: str) -> None:
    """``shape`` must have ``rank`` dimensions (one of them when a tuple)."""
    ranks = (rank,) if isinstance(rank, int) else rank
    if len(shape) not in ranks:
        raise ValueError(
            f"{name} must have shape {layout}, got shape {_fmt(shape)} "
            f"({len(shape)} dimensions instead of {' or '.join(map(str, ranks))})"
        )


def check_attention_inputs(q: Shape, k: Shape, v: Shape) -> None:
    """query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v)."""
    for name, shape in (("query", q), ("key", k), ("value", v)):
        if len(shape) < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., length, width), got shape {_fmt(shape)}")
    if q[-1] is not None and k[-1] is not None and q[-1] != k[-1]:
        raise ValueError(
            f"query and key must have the same width d_k to be compared by a dot "
            f"product: query has shape {_fmt(q)}, key has shape {_fmt(k)} "
            f"({q[-1]} != {k[-1]})"
        )
    if k[-2] is not None and v[-2] is not None and k[-2] != v[-2]:
        raise ValueError(
            f"key and value must have the same length T_k (one value per key): "
            f"key has shape {_fmt(k)}, value has shape {_fmt(v)} "
            f"({k[-2]} != {v[-2]})"
        )
    if len(q) != len(k) or len(k) != len(v):
        raise ValueError(
            f"query, key and value must have the same number of dimensions, got {_fmt(q)}, {_fmt(k)} and {_fmt(v)}"
        )
    for a, b, c in zip(q[:-2], k[:-2], v[:-2]):
        if None not in (a, b, c) and not a == b == c:
            raise ValueError(
                f"query, key and value must have the same leading (batch, head) "
                f"dimensions, got {_fmt(q)}, {_fmt(k)} and {_fmt(v)}; they are not "
                f"broadcast"
            )


def check_mask(mask: Shape, scores: Shape, name: str = "mask") -> None:
    """The mask (or an additive ``bias``) must broadcast to the scores (..., T_q, T_k) without changing their shape."""
    if len(mask) > len(scores):
        raise ValueError(
            f"{name} of shape {_fmt(mask)} has more dimensions than the attention "
            f"scores {_fmt(scores)} (..., T_q, T_k) it must broadcast to"
        )
    for m, s in zip(reversed(tuple(mask)), reversed(tuple(scores))):
        if m is None or s is None:
            continue
        if m != 1 and m != s:
            raise ValueError(
                f"{name} of shape {_fmt(mask)} does not broadcast to the attention scores of "
                f"shape {_fmt(scores)} (..., T_q, T_k): each {name} dimension must be 1 or equal "
                f"the score dimension. "
                + (
                    "A padding mask is (B, 1, 1, T_k); a look-ahead mask is (T_q, T_k)"
                    if name == "mask"
                    else "An ALiBi bias is (H, T_q, T_k)"
                )
            )


def check_width(name: str, shape: Shape, width: int, what: str = "d_model") -> None:
    """The last dimension of ``shape`` must be ``width``."""
    if shape and shape[-1] is not None and shape[-1] != width:
        raise ValueError(f"{name} must have last dimension {what}={width}, got shape {_fmt(shape)}")


def check_length(name: str, length: Optional[int], max_len: int) -> None:
    """A sequence may not be longer than the positional-encoding table."""
    if length is not None and length > max_len:
        raise ValueError(
            f"{name} has length {length}, longer than max_len={max_len} positions "
            f"the positional encoding covers; raise TransformerConfig.max_len or "
            f"shorten the input"
        )


def check_token_range(name: str, low: int, high: int, vocab_size: int) -> None:
    """Token ids must lie in [0, vocab_size)."""
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        raise ValueError(f"{name} holds token id {bad}, outside the vocabulary [0, {vocab_size})")


def check_positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_dtype(name: str, got: str, expected: str, autocast: bool) -> None:
    """A float input must have the layer's compute dtype; under mixed precision any float dtype (the framework casts).

    ``autocast``: PyTorch's ``torch.is_autocast_enabled()``, or a Keras mixed-precision policy on the layer.
    """
    floating = got.startswith(("float", "bfloat"))
    if got != expected and not (autocast and floating):
        raise ValueError(
            f"{name} must have the layer's dtype {expected}, got {got}: cast it first "
            f"(PyTorch: {name}.to(torch.{expected}); TensorFlow: tf.cast({name}, tf.{expected})); "
            f"other float dtypes are accepted only under mixed precision (autocast)"
        )


def check_non_negative(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def check_probability(name: str, value) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1), got {value!r}")


def check_cache(cache, kind: type, key_missing: bool, value_missing: bool) -> None:
    """An attention layer's ``cache`` must be a ``kind`` (or None); ``key`` and ``value`` may be None only
    together, with a cache."""
    if cache is not None and not isinstance(cache, kind):
        raise ValueError(
            f"cache must be a {kind.__name__} (or None), got {type(cache).__name__}; "
            f"pass the cache a layer returned, e.g. {kind.__name__}(key, value)"
        )
    if (key_missing or value_missing) and not (key_missing and value_missing and cache is not None):
        raise ValueError(
            f"key and value may be None only together and with a cache to attend to (the encoder "
            f"memory projected once), got key={'None' if key_missing else 'a tensor'}, "
            f"value={'None' if value_missing else 'a tensor'}, cache={type(cache).__name__}"
        )


def check_sampling(temperature, top_k, top_p, empty_rows: int = 0) -> None:
    """Sampling's settings: ``temperature`` a finite number > 0, ``top_k`` None or an integer >= 1,
    ``top_p`` None or a number in (0, 1]; ``empty_rows``, the number of rows of the logits in which every
    logit is -inf (no token to draw), must be 0. Each refusal says why the value is refused."""
    real = lambda x: isinstance(x, numbers.Real) and not isinstance(x, bool)  # noqa: E731
    expected = "temperature must be a finite number > 0, got"
    if not real(temperature):
        raise ArgumentError(f"{expected} {temperature!r} (not a number)", "temperature")
    if not math.isfinite(temperature):
        raise ArgumentError(f"{expected} {temperature!r} (not finite)", "temperature")
    if temperature == 0:
        raise ArgumentError(
            f"{expected} {temperature!r}; temperature 0 is not a distribution: its limit is greedy decoding, "
            "use greedy_decode",
            "temperature",
        )
    if temperature < 0:
        raise ArgumentError(f"{expected} {temperature!r} (negative)", "temperature")
    expected = "top_k must be None (no limit) or an integer >= 1, got"
    if top_k is not None and (not isinstance(top_k, numbers.Integral) or isinstance(top_k, bool)):
        raise ArgumentError(f"{expected} {top_k!r} (not an integer)", "top_k")
    if top_k is not None and top_k < 1:
        raise ArgumentError(f"{expected} {top_k!r}", "top_k")
    expected = "top_p must be None (no limit) or a number in (0, 1], got"
    if top_p is not None and not real(top_p):
        raise ArgumentError(f"{expected} {top_p!r} (not a number)", "top_p")
    if top_p is not None and not 0.0 < top_p <= 1.0:
        raise ArgumentError(f"{expected} {top_p!r}", "top_p")
    if empty_rows:
        raise ArgumentError(
            f"logits must give some token a logit > -inf in every row, got {empty_rows} "
            f"row{'s' if empty_rows > 1 else ''} of -inf only (no token to draw)",
            "logits",
        )
