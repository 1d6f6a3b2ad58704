"""Greedy decoding and beam search (Vaswani et al. 2017, Sec. 6.1; Wu et al. 2016). Book: week 6.

Both work with any model that has ``start_decoding(src, use_cache)``, which
returns a decoding state, and ``decode_step(token, state)``, which returns
``(logits, new_state, attention)`` and changes nothing: the
:class:`~txcourse.torch.model.Transformer` (with or without its key/value
cache) and the GRU :class:`~txcourse.torch.seq2seq.Seq2Seq`. The state is a
nest (dicts, tuples) of tensors, threaded from step to step; beam search
reorders it with :func:`reorder_state`. What needs no framework (the step
limit, the checks, the length penalty, the loop of greedy decoding, the
beam-search state) is :mod:`txcourse.decoding`, shared with TensorFlow.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import torch

from txcourse import _validation as V
from txcourse.data.vocab import EOS_ID, PAD_ID, SOS_ID
from txcourse.decoding import BeamState, check_beam, length_penalty, max_steps, never_generated, run_steps

__all__ = ["DecodeOutput", "greedy_decode", "beam_search", "reorder_state", "length_penalty"]


@dataclass
class DecodeOutput:
    """What a decoder produced.

    tokens: (B, T_out) ids, ``<eos>`` included, ``<pad>`` after it.
    scores: (B,) sum of log-probabilities (divided by the length penalty in beam search).
    attention: (B, H, T_out, T_src) encoder-decoder attention of the last layer
        (H = 1 for Bahdanau attention), or None for a model without attention.
    """

    tokens: torch.Tensor
    scores: torch.Tensor
    attention: Optional[torch.Tensor]


def _inference(decoder: Callable) -> Callable:
    """Run ``decoder`` in inference mode (no gradients) with dropout off, then restore the model's mode.

    The output's tensors are handed back as ordinary tensors: an inference-mode
    tensor refuses in-place changes and autograd outside inference mode.
    """

    @functools.wraps(decoder)
    def wrapper(model: Any, *args: Any, **kwargs: Any) -> DecodeOutput:
        was_training = model.training
        model.eval()
        try:
            with torch.inference_mode():  # no_grad without autograd's per-tensor bookkeeping: each op costs less
                out = decoder(model, *args, **kwargs)
        finally:
            model.train(was_training)
        return DecodeOutput(*(None if t is None else t.clone() for t in (out.tokens, out.scores, out.attention)))

    return wrapper


def _log_probs(logits: torch.Tensor, sos_id: int, pad_id: int) -> torch.Tensor:
    """log softmax of the logits (B, V) in float32, with <pad>, <sos> and <unk> given probability 0."""
    return _never(torch.log_softmax(logits.float(), dim=-1), never_generated(sos_id, pad_id))  # (B, V)


def _finish(
    token: torch.Tensor,
    finished: torch.Tensor,
    scores: torch.Tensor,
    log_probs: torch.Tensor,
    eos_id: int,
    pad_id: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The chosen tokens (B,) with <pad> in the rows that had finished, the scores (B,) with their
    log-probabilities added (a finished row adds nothing) and which rows have finished now (B,)."""
    token = torch.where(finished, torch.full_like(token, pad_id), token)  # (B,)
    scores = scores + torch.where(finished, 0.0, log_probs.gather(1, token[:, None])[:, 0])  # (B,)
    return token, scores, finished | (token == eos_id)  # (B,), (B,), (B,)


def _all_finished(finished: torch.Tensor) -> bool:
    """Whether every row has produced <eos> (the decoding loops stop then)."""
    return bool(finished.all())


def _greedy_step(
    model: Any,
    token: torch.Tensor,
    finished: torch.Tensor,
    scores: torch.Tensor,
    state: dict,
    sos_id: int,
    eos_id: int,
    pad_id: int,
) -> tuple:
    """Feed ``token`` (B,), pick the most probable next token of every row; a finished row gets ``<pad>``.

    Returns the next tokens (B,), which rows have finished (B,), the scores
    (B,) with the new tokens' log-probabilities added, the new decoding
    state and the attention (B, H, T_src) or None.
    """
    logits, state, attention = model.decode_step(token, state)  # (B, V), new state, (B, H, T_src)
    log_probs = _log_probs(logits, sos_id, pad_id)  # (B, V)
    token, scores, finished = _finish(log_probs.argmax(dim=-1), finished, scores, log_probs, eos_id, pad_id)  # (B,)
    return token, finished, scores, state, attention


@_inference
def greedy_decode(
    model: Any,
    src: torch.Tensor,
    max_len: Optional[int] = None,
    sos_id: int = SOS_ID,
    eos_id: int = EOS_ID,
    pad_id: int = PAD_ID,
    use_cache: bool = True,
) -> DecodeOutput:
    """Pick the most probable token at every step until every row has produced ``<eos>``.

    ``<pad>``, ``<sos>`` and ``<unk>`` are never generated; after ``<eos>`` a row is
    padded.

    Args:
        model: a Transformer or Seq2Seq (run in inference mode: no dropout).
        src: (B, T_src) source ids.
        max_len: most output tokens (default 2 T_src + 10, within the model's max_len).
        sos_id, eos_id, pad_id: special ids.
        use_cache: keep keys and values (Transformer); False recomputes the prefix.

    Returns:
        A :class:`DecodeOutput`.
    """
    V.check_rank("src", tuple(src.shape), 2, "(B, T_src)")
    steps = max_steps(model, src.shape[1], max_len)
    state = model.start_decoding(src, use_cache)
    step = functools.partial(_greedy_step, model)  # TensorFlow: this step traced into a graph
    token = torch.full((src.shape[0],), sos_id, dtype=torch.long, device=src.device)  # (B,)
    finished = torch.zeros_like(token, dtype=torch.bool)  # (B,)
    scores = torch.zeros(src.shape[0], device=src.device)  # (B,)
    ids = (sos_id, eos_id, pad_id)
    tokens, weights, scores = run_steps(step, steps, token, finished, scores, state, lambda t: ids, _all_finished)
    attention = None if weights[0] is None else torch.stack(weights, dim=2)  # (B, H, T_out, T_src)
    return DecodeOutput(torch.stack(tokens, dim=1), scores, attention)  # (B, T_out)


def _never(log_probs: torch.Tensor, ids: tuple[int, ...]) -> torch.Tensor:
    """Give ``ids`` (<pad>, <sos>, <unk>: :func:`~txcourse.decoding.never_generated`) probability 0."""
    banned = torch.zeros(log_probs.shape[-1], dtype=torch.bool, device=log_probs.device)  # (V,)
    banned[list(ids)] = True
    return log_probs.masked_fill(banned, float("-inf"))  # (B, V)


def reorder_state(state: Any, index: torch.Tensor) -> Any:
    """Select rows ``index`` of every tensor in a decoding state (the beams that survive a step).

    The state is a nest of dicts and tuples (NamedTuples included) of
    tensors; a new one is returned, ``state`` is not changed.
    """
    if isinstance(state, torch.Tensor):  # TensorFlow: tf.nest.map_structure over the same nest
        return state.index_select(0, index)
    if isinstance(state, dict):
        return {key: reorder_state(value, index) for key, value in state.items()}
    if isinstance(state, tuple) and hasattr(state, "_fields"):  # a NamedTuple: KVCache, DecoderLayerCache
        return type(state)(*(reorder_state(value, index) for value in state))
    if isinstance(state, (tuple, list)):
        return type(state)(reorder_state(value, index) for value in state)
    return state


def _beam_step(
    model: Any,
    beams: BeamState,
    state: dict,
    length_penalty_alpha: float,
    sos_id: int,
    eos_id: int,
    pad_id: int,
) -> tuple[BeamState, dict, Optional[torch.Tensor]]:
    """Feed each beam's last token and keep the K best continuations among the K x V of every sentence.

    Returns the surviving beams (a :class:`~txcourse.decoding.BeamState`:
    their next tokens, log-probabilities and ranking scores, best first,
    lengths, which have finished, their tokens so far and the beam each came
    from), the decoding state reordered to them and this step's attention
    (B*K, H, T_src) or None.
    """
    logits, state, attention = model.decode_step(beams.token, state)  # (B*K, V), new state, (B*K, H, T_src)
    log_probs = _log_probs(logits, sos_id, pad_id)  # (B*K, V)
    k, vocab = beams.scores.shape[-1], log_probs.shape[-1]
    pad_only = torch.full_like(log_probs, float("-inf"))  # (B*K, V)
    pad_only[:, pad_id] = 0.0
    log_probs = torch.where(beams.finished[:, None], pad_only, log_probs)  # (B*K, V) finished: only <pad>, free
    total = beams.scores.reshape(-1, 1) + log_probs  # (B*K, V)
    new_lengths = torch.where(beams.finished, beams.lengths, beams.lengths + 1)  # (B*K,)
    ranked = total / length_penalty(new_lengths.float(), length_penalty_alpha)[:, None]  # (B*K, V)
    best, flat = ranked.reshape(-1, k * vocab).topk(k, dim=-1)  # (B, K), (B, K)
    first = torch.arange(flat.shape[0], device=flat.device)[:, None] * k  # (B, 1) each sentence's first row
    origin = (first + flat // vocab).reshape(-1)  # (B*K,)
    token = (flat % vocab).reshape(-1)  # (B*K,)
    state = reorder_state(state, origin)  # the state follows its beams
    attention = None if attention is None else attention.index_select(0, origin)  # (B*K, H, T_src)
    beams = BeamState(
        token=token,
        scores=total.reshape(-1, k * vocab).gather(1, flat),  # (B, K)
        ranked=best,  # (B, K)
        lengths=new_lengths.index_select(0, origin),  # (B*K,)
        finished=beams.finished.index_select(0, origin) | (token == eos_id),  # (B*K,)
        sequences=torch.cat([beams.sequences.index_select(0, origin), token[:, None]], dim=1),  # (B*K, t)
        origin=origin,  # (B*K,)
    )
    return beams, state, attention


def _follow(history: Optional[torch.Tensor], origin: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
    """The attention of the surviving beams so far: their parents' history (B*K, H, t-1, T_src) + this step's."""
    step = attention[:, :, None]  # (B*K, H, 1, T_src)
    return step if history is None else torch.cat([history.index_select(0, origin), step], dim=2)  # (B*K, H, t, T_src)


@_inference
def beam_search(
    model: Any,
    src: torch.Tensor,
    beam_size: int = 4,
    max_len: Optional[int] = None,
    length_penalty_alpha: float = 0.6,
    sos_id: int = SOS_ID,
    eos_id: int = EOS_ID,
    pad_id: int = PAD_ID,
    use_cache: bool = True,
) -> DecodeOutput:
    """Keep the ``beam_size`` best prefixes per sentence; the B x K beams run as one batch.

    Hypotheses are ranked by log P(Y|X) / lp(Y) with the length penalty of
    Wu et al. (2016) (the paper, Sec. 6.1, uses beam 4 and alpha 0.6). A
    finished beam keeps its score and length and is extended with ``<pad>``.

    Args:
        model: a Transformer or Seq2Seq.
        src: (B, T_src) source ids.
        beam_size: K >= 1; K = 1 with alpha = 0 is greedy decoding.
        max_len: most output tokens.
        length_penalty_alpha: alpha >= 0.
        sos_id, eos_id, pad_id: special ids.
        use_cache: keep keys and values (Transformer).

    Returns:
        A :class:`DecodeOutput` holding the best beam of every sentence.
    """
    V.check_rank("src", tuple(src.shape), 2, "(B, T_src)")
    check_beam(beam_size, length_penalty_alpha)
    batch, k = src.shape[0], beam_size
    steps = max_steps(model, src.shape[1], max_len)
    state = model.start_decoding(src.repeat_interleave(k, dim=0), use_cache)  # sentence b: rows b*K..b*K+K-1
    step = functools.partial(_beam_step, model)  # TensorFlow: this step traced into a graph
    token = torch.full((batch * k,), sos_id, dtype=torch.long, device=src.device)  # (B*K,)
    scores = torch.zeros(batch, k, device=src.device)  # (B, K) log-probabilities
    scores[:, 1:] = float("-inf")  # all beams start equal: keep only the first
    beams = BeamState(
        token=token,
        scores=scores,
        ranked=scores,  # (B, K)
        lengths=torch.zeros(batch * k, dtype=torch.long, device=src.device),  # (B*K,)
        finished=torch.zeros(batch * k, dtype=torch.bool, device=src.device),  # (B*K,)
        sequences=token[:, None][:, :0],  # (B*K, 0)
        origin=torch.arange(batch * k, device=src.device),  # (B*K,)
    )
    history: Optional[torch.Tensor] = None  # (B*K, H, t, T_src)
    for _ in range(steps):
        beams, state, attention = step(beams, state, length_penalty_alpha, sos_id, eos_id, pad_id)
        if attention is not None:
            history = _follow(history, beams.origin, attention)  # (B*K, H, t, T_src)
        if _all_finished(beams.finished):
            break
    first = torch.arange(batch, device=src.device) * k  # (B,) the best beam is ranked first
    attention = None if history is None else history.index_select(0, first)  # (B, H, T_out, T_src)
    return DecodeOutput(beams.sequences.index_select(0, first), beams.ranked[:, 0], attention)
