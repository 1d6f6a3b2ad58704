"""What greedy decoding, sampling and beam search share that needs no framework. Book: week 6.

Each half's ``decode.py`` and ``sample.py`` keep only their tensor
operations (a step: the model's ``decode_step``, the choice of the next
tokens, the finished rows' padding); what is left is written once here: how
many steps a decoder may take (:func:`max_steps`), the argument checks, the
length penalty of beam search (:func:`length_penalty`, plain arithmetic on
any number or float tensor), the loop of greedy decoding and sampling
(:func:`run_steps`), the special ids no decoder generates
(:func:`never_generated`) and the state a beam-search step returns
(:class:`BeamState`). Framework-free: it imports no half.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Optional

from txcourse import _validation as V
from txcourse.data.vocab import UNK_ID

__all__ = ["BeamState", "check_beam", "length_penalty", "max_steps", "never_generated", "run_steps"]


def max_steps(model: Any, src_length: int, max_len: Optional[int]) -> int:
    """The most output tokens a decoder produces for sources of ``src_length`` tokens.

    ``max_len`` if given (at most the model's ``config.max_len`` positions),
    else 2 T_src + 10 within the model's max_len; a ValueError names ``max_len``
    when it is not positive or longer than the model can place.
    """
    limit = getattr(getattr(model, "config", None), "max_len", None)
    if max_len is None:
        max_len = 2 * src_length + 10 if limit is None else min(limit, 2 * src_length + 10)
    V.check_positive("max_len", max_len)
    if limit is not None and max_len > limit:
        raise ValueError(f"max_len={max_len} is longer than the model's max_len={limit} positions")
    return max_len


def never_generated(sos_id: int, pad_id: int) -> tuple[int, ...]:
    """The ids every decoder gives probability 0: ``<pad>``, ``<sos>`` and ``<unk>``.

    ``<eos>`` is the only special token a translation may hold, as its end;
    ``<unk>`` stands for "a word the tokenizer did not know", never a word
    to print, so greedy decoding, beam search and sampling (at any
    temperature) all choose among the other tokens.
    """
    return tuple(dict.fromkeys((pad_id, sos_id, UNK_ID)))


def check_beam(beam_size: Any, length_penalty_alpha: Any) -> None:
    """Refuse a beam size below 1 or a negative (or nan) length-penalty alpha, naming the argument."""
    V.check_positive("beam_size", beam_size)
    if not length_penalty_alpha >= 0:
        raise ValueError(f"length_penalty_alpha must be >= 0, got {length_penalty_alpha!r}")


def length_penalty(length: Any, alpha: float) -> Any:
    """((5 + |Y|) / 6)^alpha, Wu et al. (2016), Eq. (14); alpha = 0 ranks by the raw log-probability.

    ``length``: a number, or a float tensor of lengths of either framework
    (the arithmetic is the same); returns the same kind.
    """
    return ((5.0 + length) / 6.0) ** alpha


def run_steps(
    step: Callable[..., tuple],
    steps: int,
    token: Any,
    finished: Any,
    scores: Any,
    state: Any,
    arguments: Callable[[int], tuple],
    all_finished: Callable[[Any], bool],
) -> tuple[list, list, Any]:
    """The loop of greedy decoding and sampling: ``step`` until every row has finished, at most ``steps`` times.

    Calls ``step(token, finished, scores, state, *arguments(t))`` at step t,
    which returns the next ``(token, finished, scores, state, attention)``;
    stops after the step where ``all_finished(finished)``.

    Returns:
        The tokens of every step ((B,) each), their attention ((B, H, T_src)
        each, or None each for a model without attention) and the final scores (B,).
    """
    tokens, weights = [], []
    for t in range(steps):
        token, finished, scores, state, attention = step(token, finished, scores, state, *arguments(t))
        tokens.append(token)  # (B,)
        weights.append(attention)  # (B, H, T_src)
        if all_finished(finished):
            break
    return tokens, weights, scores


class BeamState(NamedTuple):
    """The beams of every sentence after a step of beam search: what a half's beam step takes and returns.

    B sentences of K beams each, beam k of sentence b in row b*K + k, best first.

    Attributes:
        token: (B*K,) each beam's last token.
        scores: (B, K) each beam's log-probability, log P(Y|X).
        ranked: (B, K) what the beams are ranked by: scores / length penalty.
        lengths: (B*K,) tokens up to and including ``<eos>`` (the length penalty's |Y|).
        finished: (B*K,) which beams have produced ``<eos>``.
        sequences: (B*K, t) each beam's tokens so far.
        origin: (B*K,) the row each beam came from at this step (how the decoding state was reordered).
    """

    token: Any
    scores: Any
    ranked: Any
    lengths: Any
    finished: Any
    sequences: Any
    origin: Any
