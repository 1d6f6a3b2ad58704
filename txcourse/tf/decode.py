"""Greedy decoding and beam search (Vaswani et al. 2017, Sec. 6.1; Wu et al. 2016). Book: week 6.

Both work with any model that has ``start_decoding(src, use_cache)``, which
returns a decoding state, and ``decode_step(token, state)``, which returns
``(logits, new_state, attention)`` and changes nothing: the
:class:`~txcourse.tf.model.Transformer` (with or without its key/value
cache) and the GRU :class:`~txcourse.tf.seq2seq.Seq2Seq`. The state is a
nest (dicts, tuples) of tensors, threaded from step to step; beam search
reorders it with :func:`reorder_state`. What needs no framework (the step
limit, the checks, the length penalty, the loop of greedy decoding, the
beam-search state) is :mod:`txcourse.decoding`, shared with PyTorch. Each step
runs as a ``tf.function`` of tensors in and tensors out, traced once per model
(see :func:`_compiled`).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

import tensorflow as tf

from txcourse import _validation as V
from txcourse.data.vocab import EOS_ID, PAD_ID, SOS_ID
from txcourse.decoding import BeamState, check_beam, length_penalty, max_steps, never_generated, run_steps

__all__ = ["DecodeOutput", "greedy_decode", "beam_search", "reorder_state", "length_penalty"]


# Copied from txcourse.torch.decode.DecodeOutput with torch.Tensor->tf.Tensor
@dataclass
class DecodeOutput:
    """What a decoder produced.

    tokens: (B, T_out) ids, ``<eos>`` included, ``<pad>`` after it.
    scores: (B,) sum of log-probabilities (divided by the length penalty in beam search).
    attention: (B, H, T_out, T_src) encoder-decoder attention of the last layer
        (H = 1 for Bahdanau attention), or None for a model without attention.
    """

    tokens: tf.Tensor
    scores: tf.Tensor
    attention: Optional[tf.Tensor]


def _open(x: Any) -> Any:
    """What a step is traced for: a tensor's dtype, and its shape with the sizes that vary left open.

    Only the width (last dimension) of a float tensor of rank 2 or more
    stays fixed (model width, d_k, vocabulary, beams); the batch and the
    lengths (source, prefix, cache) are None, so one trace serves every
    step and every batch. Anything else (None, a Python number) is passed
    as is and is part of the trace.
    """
    if not tf.is_tensor(x):
        return x
    shape = [None] * x.shape.rank
    if shape:
        shape[-1] = _width(x)
    return tf.TensorSpec(shape, x.dtype)


def _width(x: tf.Tensor) -> Optional[int]:
    """The one size a trace keeps (:func:`_open`): the last of a float tensor of rank 2 or more, else None."""
    return x.shape[-1] if x.dtype.is_floating and x.shape.rank >= 2 else None


def _signature(flat: list) -> tuple:
    """What :func:`_open` makes of every leaf, as a key cheap enough to compute at every step."""
    return tuple((x.dtype, x.shape.rank, _width(x)) if tf.is_tensor(x) else x for x in flat)


_STEPS: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()


def _compiled(model: Any, step: Callable) -> Callable:
    """``step(model, *args)`` as a ``tf.function``, made once per model and step: how TensorFlow decodes.

    Eager Keras dispatches every layer and op from Python: a step of a
    3-layer decoder spends about 120 ms on it, far more than on its
    arithmetic, which hides what the key/value cache saves. The whole step
    (the model's ``decode_step`` and the choice of the next tokens) is a
    function of tensors in and tensors out (the decoding state goes in and
    the new one comes out), so it is traced once, for open batch and lengths
    (:func:`_open`), and the graph runs at every step; the decoders' loops
    stay in Python. Arguments of another structure (no cache, another beam
    size) trace anew. Under ``tf.config.run_functions_eagerly(True)`` the
    step runs eagerly.
    """
    steps = _STEPS.setdefault(model, {})
    if step.__name__ not in steps:  # the function must not keep the model alive: a weak proxy
        function = tf.function(functools.partial(step, weakref.proxy(model)), autograph=False)
        steps[step.__name__] = functools.partial(_run, function, {})
    return steps[step.__name__]


def _run(function: Any, graphs: dict, *args: Any) -> Any:
    """``function(*args)`` through its graph for the open shapes of ``args`` (:func:`_open`), traced on first use."""
    if tf.config.functions_run_eagerly():
        return function(*args)
    key = _signature(tf.nest.flatten(args))  # the graph is looked up here: cheaper than tf.function's dispatch
    if key not in graphs:  # no autograph: no Python branch of a step depends on a tensor's value
        graphs[key] = function.get_concrete_function(*tf.nest.map_structure(_open, args))
    try:
        return graphs[key](*args)
    except tf.errors.InvalidArgumentError:  # a graph assertion, e.g. a token id outside the vocabulary:
        function.python_function(*args)  # eagerly, to raise its clear ValueError
        raise


def _start_decoding(model: Any, src: tf.Tensor, use_cache: bool) -> dict:
    """The model's decoding state for ``src`` (B, T_src): encoder memory, masks, empty prefix and cache."""
    return model.start_decoding(src, use_cache)


def _log_probs(logits: tf.Tensor, sos_id: int, pad_id: int) -> tf.Tensor:
    """log softmax of the logits (B, V) in float32, with <pad>, <sos> and <unk> given probability 0."""
    return _never(tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1), never_generated(sos_id, pad_id))  # (B, V)


def _finish(
    token: tf.Tensor,
    finished: tf.Tensor,
    scores: tf.Tensor,
    log_probs: tf.Tensor,
    eos_id: int,
    pad_id: int,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """The chosen tokens (B,) with <pad> in the rows that had finished, the scores (B,) with their
    log-probabilities added (a finished row adds nothing) and which rows have finished now (B,)."""
    token = tf.where(finished, tf.fill(tf.shape(token), tf.constant(pad_id, tf.int64)), token)  # (B,)
    scores = scores + tf.where(finished, 0.0, tf.gather(log_probs, token, axis=1, batch_dims=1))  # (B,)
    return token, scores, finished | (token == eos_id)  # (B,), (B,), (B,)


def _all_finished(finished: tf.Tensor) -> bool:
    """Whether every row has produced <eos> (the decoding loops stop then)."""
    return bool(tf.reduce_all(finished))


def _greedy_step(
    model: Any,
    token: tf.Tensor,
    finished: tf.Tensor,
    scores: tf.Tensor,
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
    token, scores, finished = _finish(
        tf.argmax(log_probs, axis=-1), finished, scores, log_probs, eos_id, pad_id
    )  # (B,)
    return token, finished, scores, state, attention


def greedy_decode(
    model: Any,
    src: tf.Tensor,
    max_len: Optional[int] = None,
    sos_id: int = SOS_ID,
    eos_id: int = EOS_ID,
    pad_id: int = PAD_ID,
    use_cache: bool = True,
) -> DecodeOutput:
    """Pick the most probable token at every step until every row has produced ``<eos>``.

    ``<pad>``, ``<sos>`` and ``<unk>`` are never generated; after ``<eos>`` a row is
    padded.

    In TensorFlow each step runs as a graph (``tf.function``, see
    :func:`_compiled`), traced once per model, not once per step, as eager
    Keras spends longer dispatching a step than computing it.
    ``tf.config.run_functions_eagerly(True)`` decodes eagerly instead.

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
    src = tf.convert_to_tensor(src)  # no eval() in Keras: layers called without training=True use no dropout
    steps = max_steps(model, src.shape[1], max_len)
    state = _compiled(model, _start_decoding)(src, use_cache)  # PyTorch: model.start_decoding(src, use_cache)
    step = _compiled(model, _greedy_step)  # this step traced into a graph, once per model
    token = tf.fill((src.shape[0],), tf.constant(sos_id, tf.int64))  # (B,)
    finished = tf.zeros_like(token, dtype=tf.bool)  # (B,)
    scores = tf.zeros(src.shape[0])  # (B,)
    ids = (sos_id, eos_id, pad_id)
    tokens, weights, scores = run_steps(step, steps, token, finished, scores, state, lambda t: ids, _all_finished)
    attention = None if weights[0] is None else tf.stack(weights, axis=2)  # (B, H, T_out, T_src)
    return DecodeOutput(tf.stack(tokens, axis=1), scores, attention)  # (B, T_out)


def _never(log_probs: tf.Tensor, ids: tuple[int, ...]) -> tf.Tensor:
    """Give ``ids`` (<pad>, <sos>, <unk>: :func:`~txcourse.decoding.never_generated`) probability 0."""
    banned = tf.zeros(log_probs.shape[-1], dtype=tf.bool)  # (V,)
    banned = tf.tensor_scatter_nd_update(banned, [[i] for i in ids], [True] * len(ids))
    return tf.where(banned, tf.constant(float("-inf"), log_probs.dtype), log_probs)  # (B, V)


def reorder_state(state: Any, index: tf.Tensor) -> Any:
    """Select rows ``index`` of every tensor in a decoding state (the beams that survive a step).

    The state is a nest of dicts and tuples (NamedTuples included) of
    tensors; a new one is returned, ``state`` is not changed.
    """
    return tf.nest.map_structure(lambda x: tf.gather(x, index, axis=0) if tf.is_tensor(x) else x, state)


def _beam_step(
    model: Any,
    beams: BeamState,
    state: dict,
    length_penalty_alpha: float,
    sos_id: int,
    eos_id: int,
    pad_id: int,
) -> tuple[BeamState, dict, Optional[tf.Tensor]]:
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
    pad_only = tf.where(tf.range(vocab) == pad_id, 0.0, float("-inf"))  # (V,)
    log_probs = tf.where(beams.finished[:, None], pad_only, log_probs)  # (B*K, V) finished: only <pad>, free
    total = tf.reshape(beams.scores, (-1, 1)) + log_probs  # (B*K, V)
    new_lengths = tf.where(beams.finished, beams.lengths, beams.lengths + 1)  # (B*K,)
    ranked = total / length_penalty(tf.cast(new_lengths, tf.float32), length_penalty_alpha)[:, None]  # (B*K, V)
    best, flat = tf.math.top_k(tf.reshape(ranked, (-1, k * vocab)), k)  # (B, K), (B, K)
    flat = tf.cast(flat, tf.int64)  # (B, K)
    first = tf.range(tf.shape(flat, out_type=tf.int64)[0])[:, None] * k  # (B, 1) each sentence's first row
    origin = tf.reshape(first + flat // vocab, (-1,))  # (B*K,)
    token = tf.reshape(flat % vocab, (-1,))  # (B*K,)
    state = reorder_state(state, origin)  # the state follows its beams
    attention = None if attention is None else tf.gather(attention, origin)  # (B*K, H, T_src)
    beams = BeamState(
        token=token,
        scores=tf.gather(tf.reshape(total, (-1, k * vocab)), flat, axis=1, batch_dims=1),  # (B, K)
        ranked=best,  # (B, K)
        lengths=tf.gather(new_lengths, origin),  # (B*K,)
        finished=tf.gather(beams.finished, origin) | (token == eos_id),  # (B*K,)
        sequences=tf.concat([tf.gather(beams.sequences, origin), token[:, None]], axis=1),  # (B*K, t)
        origin=origin,  # (B*K,)
    )
    return beams, state, attention


def _follow(history: Optional[tf.Tensor], origin: tf.Tensor, attention: tf.Tensor) -> tf.Tensor:
    """The attention of the surviving beams so far: their parents' history (B*K, H, t-1, T_src) + this step's."""
    step = attention[:, :, tf.newaxis]  # (B*K, H, 1, T_src)
    return step if history is None else tf.concat([tf.gather(history, origin), step], axis=2)  # (B*K, H, t, T_src)


def beam_search(
    model: Any,
    src: tf.Tensor,
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

    In TensorFlow each step runs as a graph, as in :func:`greedy_decode`.

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
    src = tf.convert_to_tensor(src)  # no eval() in Keras: layers called without training=True use no dropout
    batch, k = src.shape[0], beam_size
    steps = max_steps(model, src.shape[1], max_len)
    state = _compiled(model, _start_decoding)(tf.repeat(src, k, axis=0), use_cache)  # sentence b: rows b*K..b*K+K-1
    step = _compiled(model, _beam_step)  # this step traced into a graph, once per model
    token = tf.fill((batch * k,), tf.constant(sos_id, tf.int64))  # (B*K,)
    scores = tf.zeros((batch, k))  # (B, K) log-probabilities
    scores = tf.where(tf.range(k) > 0, float("-inf"), scores)  # all beams start equal: keep only the first
    beams = BeamState(
        token=token,
        scores=scores,
        ranked=scores,  # (B, K)
        lengths=tf.zeros(batch * k, dtype=tf.int64),  # (B*K,)
        finished=tf.zeros(batch * k, dtype=tf.bool),  # (B*K,)
        sequences=token[:, None][:, :0],  # (B*K, 0)
        origin=tf.range(batch * k, dtype=tf.int64),  # (B*K,)
    )
    history: Optional[tf.Tensor] = None  # (B*K, H, t, T_src)
    for _ in range(steps):
        beams, state, attention = step(beams, state, length_penalty_alpha, sos_id, eos_id, pad_id)
        if attention is not None:
            history = _follow(history, beams.origin, attention)  # (B*K, H, t, T_src)
        if _all_finished(beams.finished):
            break
    first = tf.range(batch) * k  # (B,) the best beam is ranked first
    attention = None if history is None else tf.gather(history, first)  # (B, H, T_out, T_src)
    return DecodeOutput(tf.gather(beams.sequences, first), beams.ranked[:, 0], attention)
