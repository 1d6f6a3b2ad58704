"""Greedy decoding and beam search (Vaswani et al. 2017, Sec. 6.1; Wu et al. 2016). Book: week 6.

Both work with any model that has ``start_decoding(src, use_cache)``, which
returns a decoding state, and ``decode_step(token, state)``, which returns
``(logits, new_state, attention)`` and changes nothing: the
:class:`~txcourse.tf.model.Transformer` (with or without its key/value
cache) and the GRU :class:`~txcourse.tf.seq2seq.Seq2Seq`. The state is a
nest (dicts, tuples) of tensors, threaded from step to step; beam search
reorders it with :func:`reorder_state`. Each step runs as a ``tf.function``
of tensors in and tensors out, traced once per model (see :func:`_compiled`).
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

__all__ = ["DecodeOutput", "greedy_decode", "beam_search", "reorder_state"]


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


# Copied from txcourse.torch.decode._max_steps with torch.Tensor->tf.Tensor
def _max_steps(model: Any, src: tf.Tensor, max_len: Optional[int]) -> int:
    limit = getattr(getattr(model, "config", None), "max_len", None)
    if max_len is None:
        max_len = 2 * src.shape[1] + 10 if limit is None else min(limit, 2 * src.shape[1] + 10)
    V.check_positive("max_len", max_len)
    if limit is not None and max_len > limit:
        raise ValueError(f"max_len={max_len} is longer than the model's max_len={limit} positions")
    return max_len


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
    log_probs = _never(tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1), (pad_id, sos_id))  # (B, V)
    token = tf.argmax(log_probs, axis=-1)  # (B,)
    token = tf.where(finished, tf.fill(tf.shape(token), tf.constant(pad_id, tf.int64)), token)  # (B,)
    scores = scores + tf.where(finished, 0.0, tf.gather(log_probs, token, axis=1, batch_dims=1))  # (B,)
    finished = finished | (token == eos_id)  # (B,)
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

    ``<pad>`` and ``<sos>`` are never generated; after ``<eos>`` a row is
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
    steps = _max_steps(model, src, max_len)
    state = _compiled(model, _start_decoding)(src, use_cache)  # PyTorch: model.start_decoding(src, use_cache)
    step = _compiled(model, _greedy_step)  # this step traced into a graph, once per model
    token = tf.fill((src.shape[0],), tf.constant(sos_id, tf.int64))  # (B,)
    finished = tf.zeros_like(token, dtype=tf.bool)  # (B,)
    scores = tf.zeros(src.shape[0])  # (B,)
    tokens, weights = [], []
    for _ in range(steps):
        token, finished, scores, state, attention = step(token, finished, scores, state, sos_id, eos_id, pad_id)
        tokens.append(token)  # (B,)
        weights.append(attention)  # (B, H, T_src)
        if bool(tf.reduce_all(finished)):
            break
    attention = None if weights[0] is None else tf.stack(weights, axis=2)  # (B, H, T_out, T_src)
    return DecodeOutput(tf.stack(tokens, axis=1), scores, attention)  # (B, T_out)


def _never(log_probs: tf.Tensor, ids: tuple[int, ...]) -> tf.Tensor:
    """Give <pad> and <sos> probability 0: a decoder never generates them."""
    banned = tf.zeros(log_probs.shape[-1], dtype=tf.bool)  # (V,)
    banned = tf.tensor_scatter_nd_update(banned, [[i] for i in ids], [True] * len(ids))
    return tf.where(banned, tf.constant(float("-inf"), log_probs.dtype), log_probs)  # (B, V)


def reorder_state(state: Any, index: tf.Tensor) -> Any:
    """Select rows ``index`` of every tensor in a decoding state (the beams that survive a step).

    The state is a nest of dicts and tuples (NamedTuples included) of
    tensors; a new one is returned, ``state`` is not changed.
    """
    return tf.nest.map_structure(lambda x: tf.gather(x, index, axis=0) if tf.is_tensor(x) else x, state)


def length_penalty(length: tf.Tensor, alpha: float) -> tf.Tensor:
    """((5 + |Y|) / 6)^alpha, Wu et al. (2016), Eq. (14); alpha = 0 ranks by the raw log-probability."""
    return ((5.0 + tf.cast(length, tf.float32)) / 6.0) ** alpha


def _beam_step(
    model: Any,
    token: tf.Tensor,
    state: dict,
    beam_scores: tf.Tensor,
    lengths: tf.Tensor,
    finished: tf.Tensor,
    sequences: tf.Tensor,
    length_penalty_alpha: float,
    sos_id: int,
    eos_id: int,
    pad_id: int,
) -> tuple:
    """Feed ``token`` (B*K,) and keep the K best continuations among the K x V of every sentence.

    Returns, for the surviving beams: their next tokens (B*K,), their
    log-probabilities (B, K) and ranking scores (B, K) (log-probability /
    length penalty, best first), lengths (B*K,), which have finished
    (B*K,), their tokens so far (B*K, t), the beam each came from (B*K,),
    the decoding state reordered to them and this step's attention
    (B*K, H, T_src) or None.
    """
    logits, state, attention = model.decode_step(token, state)  # (B*K, V), new state, (B*K, H, T_src)
    log_probs = _never(tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1), (pad_id, sos_id))  # (B*K, V)
    k, vocab = beam_scores.shape[-1], log_probs.shape[-1]
    pad_only = tf.where(tf.range(vocab) == pad_id, 0.0, float("-inf"))  # (V,)
    log_probs = tf.where(finished[:, None], pad_only, log_probs)  # (B*K, V) finished: only <pad>, free
    total = tf.reshape(beam_scores, (-1, 1)) + log_probs  # (B*K, V)
    new_lengths = tf.where(finished, lengths, lengths + 1)  # (B*K,)
    ranked = total / length_penalty(new_lengths, length_penalty_alpha)[:, None]  # (B*K, V)
    best, flat = tf.math.top_k(tf.reshape(ranked, (-1, k * vocab)), k)  # (B, K), (B, K)
    flat = tf.cast(flat, tf.int64)  # (B, K)
    first = tf.range(tf.shape(flat, out_type=tf.int64)[0])[:, None] * k  # (B, 1) each sentence's first row
    origin = tf.reshape(first + flat // vocab, (-1,))  # (B*K,)
    token = tf.reshape(flat % vocab, (-1,))  # (B*K,)
    beam_scores = tf.gather(tf.reshape(total, (-1, k * vocab)), flat, axis=1, batch_dims=1)  # (B, K)
    lengths = tf.gather(new_lengths, origin)  # (B*K,)
    state = reorder_state(state, origin)  # the state follows its beams
    sequences = tf.concat([tf.gather(sequences, origin), token[:, None]], axis=1)  # (B*K, t)
    attention = None if attention is None else tf.gather(attention, origin)  # (B*K, H, T_src)
    finished = tf.gather(finished, origin) | (token == eos_id)  # (B*K,)
    return token, beam_scores, best, lengths, finished, sequences, origin, state, attention


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
    V.check_positive("beam_size", beam_size)
    if not length_penalty_alpha >= 0:
        raise ValueError(f"length_penalty_alpha must be >= 0, got {length_penalty_alpha!r}")
    src = tf.convert_to_tensor(src)  # no eval() in Keras: layers called without training=True use no dropout
    batch, k = src.shape[0], beam_size
    steps = _max_steps(model, src, max_len)
    state = _compiled(model, _start_decoding)(tf.repeat(src, k, axis=0), use_cache)  # sentence b: rows b*K..b*K+K-1
    step = _compiled(model, _beam_step)  # this step traced into a graph, once per model
    token = tf.fill((batch * k,), tf.constant(sos_id, tf.int64))  # (B*K,)
    beam_scores = tf.zeros((batch, k))  # (B, K) log-probabilities
    beam_scores = tf.where(tf.range(k) > 0, float("-inf"), beam_scores)  # all beams start equal: keep only the first
    lengths = tf.zeros(batch * k, dtype=tf.int64)  # (B*K,)
    finished = tf.zeros(batch * k, dtype=tf.bool)  # (B*K,)
    sequences = token[:, None][:, :0]  # (B*K, 0)
    history: Optional[tf.Tensor] = None  # (B*K, H, t, T_src)
    for _ in range(steps):
        token, beam_scores, best, lengths, finished, sequences, origin, state, attention = step(
            token, state, beam_scores, lengths, finished, sequences, length_penalty_alpha, sos_id, eos_id, pad_id
        )
        if attention is not None:
            history = _follow(history, origin, attention)  # (B*K, H, t, T_src)
        if bool(tf.reduce_all(finished)):
            break
    first = tf.range(batch) * k  # (B,) the best beam is ranked first
    attention = None if history is None else tf.gather(history, first)  # (B, H, T_out, T_src)
    return DecodeOutput(tf.gather(sequences, first), best[:, 0], attention)
