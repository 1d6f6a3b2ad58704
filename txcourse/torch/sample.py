"""Decoding by sampling: temperature, top-k (Fan et al. 2018) and top-p, nucleus (Holtzman et al. 2020). Book: week 6.

Greedy decoding and beam search look for the most probable output;
sampling draws every token from the model's distribution, reshaped by
:func:`filter_logits`. :func:`sample_decode` runs the model's
``start_decoding`` and ``decode_step`` exactly as
:func:`~txcourse.torch.decode.greedy_decode` does and returns the same
:class:`~txcourse.torch.decode.DecodeOutput`.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import torch

from txcourse import _validation as V
from txcourse.data.vocab import EOS_ID, PAD_ID, SOS_ID
from txcourse.decoding import max_steps, run_steps
from txcourse.torch.decode import DecodeOutput, _all_finished, _finish, _inference, _log_probs

__all__ = ["filter_logits", "sample_decode"]


def filter_logits(
    logits: torch.Tensor, temperature: float = 1.0, top_k: Optional[int] = None, top_p: Optional[float] = None
) -> torch.Tensor:
    """The log-probabilities sampling draws from: logits / temperature, then top-k, then top-p, renormalised.

    Temperature divides the logits, softmax(z / T): T < 1 sharpens the
    distribution, T > 1 flattens it. Top-k keeps the k most probable tokens
    (Fan et al. 2018, Sec. 5.4). Top-p, nucleus sampling (Holtzman et al.
    2020, Sec. 3.1, Eq. 3), keeps the smallest set of most probable tokens
    whose probability (after top-k) reaches p: a token is kept when the
    tokens ranked above it hold less than p, so the most probable token is
    always kept. Tokens are ranked by their logits, equal ones by id (the
    lower id first), so ties are cut the same way every time. A token
    whose logit is -inf is never kept. The row's largest logit is
    subtracted before the division, so the best token keeps logit 0 at
    any T: a tiny T gives the greedy distribution (the best token, or the
    tied best shared equally), never an empty row or nan.

    Args:
        logits: (..., V) logits or log-probabilities.
        temperature: T, a finite number > 0 (T -> 0 is greedy decoding).
        top_k: None (no limit) or k >= 1.
        top_p: None (no limit) or p in (0, 1]; 1 keeps every token.

    Shape:
        logits: (..., V) -> (..., V)

    Returns:
        float32 log-probabilities (..., V) over the kept tokens, which sum
        to 1 in probability; every excluded token gets the most negative
        finite float32 (probability 0 after ``exp``, and no inf or nan
        downstream).

    Raises:
        ArgumentError: a setting out of range, or a row of ``logits``
            that is -inf everywhere (no token to draw).
    """
    logits = logits.float()  # (..., V)
    empty = (logits == float("-inf")).all(dim=-1)  # (...) rows with no token to draw
    V.check_sampling(temperature, top_k, top_p, int(empty.sum()))  # TensorFlow: in a graph, an assertion
    order = torch.sort(logits, dim=-1, descending=True, stable=True).indices  # (..., V) best first, ties: low id
    shifted = logits - logits.max(dim=-1, keepdim=True).values  # (..., V) the best 0, the others < 0
    scaled = torch.where(shifted < 0, shifted / temperature, 0.0)  # (..., V) the best stays 0 for any T (no 0 / 0)
    ranked = scaled.gather(-1, order)  # (..., V) sorted
    keep = ranked > float("-inf")  # (..., V) in sorted order; a tiny T leaves the best only
    if top_k is not None:
        keep = keep & (torch.arange(ranked.shape[-1], device=ranked.device) < top_k)  # (..., V) the k first
    if top_p is not None and top_p < 1.0:
        probs = torch.softmax(ranked.masked_fill(~keep, float("-inf")), dim=-1)  # (..., V) after top-k
        above = torch.cat([torch.zeros_like(probs[..., :1]), probs.cumsum(dim=-1)[..., :-1]], dim=-1)  # (..., V)
        keep = keep & (above < top_p)  # (..., V) the tokens ranked above hold less than p
    keep = keep.gather(-1, order.argsort(dim=-1))  # (..., V) back in vocabulary order
    log_probs = torch.log_softmax(scaled.masked_fill(~keep, float("-inf")), dim=-1)  # (..., V)
    return log_probs.masked_fill(~keep, torch.finfo(torch.float32).min)  # (..., V)


def _sample_step(
    model: Any,
    token: torch.Tensor,
    finished: torch.Tensor,
    scores: torch.Tensor,
    state: dict,
    seed: Any,
    temperature: float,
    top_k: Optional[int],
    top_p: Optional[float],
    sos_id: int,
    eos_id: int,
    pad_id: int,
) -> tuple:
    """Feed ``token`` (B,), draw the next token of every row from :func:`filter_logits`; a finished row gets ``<pad>``.

    ``seed`` is the ``torch.Generator`` the draws come from. Returns the
    next tokens (B,), which rows have finished (B,), the scores (B,) with
    the new tokens' log-probabilities under the model added, the new
    decoding state and the attention (B, H, T_src) or None.
    """
    logits, state, attention = model.decode_step(token, state)  # (B, V), new state, (B, H, T_src)
    log_probs = _log_probs(logits, sos_id, pad_id)  # (B, V)
    filtered = filter_logits(log_probs, temperature, top_k, top_p)  # (B, V)
    token = torch.multinomial(filtered.exp(), 1, generator=seed)[:, 0]  # (B,) one draw per row
    token, scores, finished = _finish(token, finished, scores, log_probs, eos_id, pad_id)  # (B,)
    return token, finished, scores, state, attention


@_inference
def sample_decode(
    model: Any,
    src: torch.Tensor,
    max_len: Optional[int] = None,
    temperature: float = 1.0,
    top_k: Optional[int] = None,
    top_p: Optional[float] = None,
    seed: int = 0,
    sos_id: int = SOS_ID,
    eos_id: int = EOS_ID,
    pad_id: int = PAD_ID,
    use_cache: bool = True,
) -> DecodeOutput:
    """Draw every token from the model's distribution, filtered by :func:`filter_logits`, until ``<eos>``.

    Every row draws on its own: a source repeated N times gives N samples.
    The same ``seed`` gives the same tokens within a framework (the two
    frameworks' random generators differ, the distributions do not).
    ``top_k=1`` or a tiny ``top_p`` is greedy decoding. ``<pad>``,
    ``<sos>`` and ``<unk>`` are never generated; after ``<eos>`` a row is padded.

    Args:
        model: a Transformer or Seq2Seq (run in inference mode: no dropout).
        src: (B, T_src) source ids.
        max_len: most output tokens (default 2 T_src + 10, within the model's max_len).
        temperature: T > 0, finite.
        top_k: None or k >= 1.
        top_p: None or p in (0, 1].
        seed: an integer >= 0 that fixes the draws.
        sos_id, eos_id, pad_id: special ids.
        use_cache: keep keys and values (Transformer); False recomputes the prefix.

    Returns:
        A :class:`DecodeOutput`; its scores are log P(Y|X) under the
        model, unfiltered, as greedy decoding reports them.
    """
    V.check_rank("src", tuple(src.shape), 2, "(B, T_src)")
    V.check_sampling(temperature, top_k, top_p)
    V.check_non_negative("seed", seed)
    steps = max_steps(model, src.shape[1], max_len)
    state = model.start_decoding(src, use_cache)
    step = functools.partial(_sample_step, model)  # TensorFlow: this step traced into a graph
    generator = torch.Generator(device=src.device).manual_seed(seed)  # TensorFlow: stateless draws of (seed, step)
    token = torch.full((src.shape[0],), sos_id, dtype=torch.long, device=src.device)  # (B,)
    finished = torch.zeros_like(token, dtype=torch.bool)  # (B,)
    scores = torch.zeros(src.shape[0], device=src.device)  # (B,)
    settings = (generator, temperature, top_k, top_p, sos_id, eos_id, pad_id)  # the same at every step
    tokens, weights, scores = run_steps(step, steps, token, finished, scores, state, lambda t: settings, _all_finished)
    attention = None if weights[0] is None else torch.stack(weights, dim=2)  # (B, H, T_out, T_src)
    return DecodeOutput(torch.stack(tokens, dim=1), scores, attention)  # (B, T_out)
