"""Translating with a trained model, and scoring translations the ways users meet them. Book: weeks 1 and 6.

:func:`translate` runs greedy decoding or beam search in batches through a
:class:`~txcourse.registry.Backend`; :func:`evaluate` scores a list of pairs
(BLEU, chrF, exact match, accuracy by length); :func:`evaluate_by_digit_count`
and :func:`evaluate_by_phrasing` score fresh ``numbers`` by digit count, round
numbers, and every way people write a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from txcourse import _validation as V
from txcourse.data.batching import pad_sequences
from txcourse.data.splits import TranslationSplits
from txcourse.data.vocab import Tokenizer
from txcourse.evaluation.metrics import LengthBucket, evaluate_translations, exact_match
from txcourse.registry import Backend

__all__ = [
    "BATCH_SIZE",
    "DIGIT_SEED",
    "SAMPLING_BATCH_SIZE",
    "translate",
    "evaluate",
    "evaluate_by_phrasing",
    "evaluate_by_digit_count",
]


DIGIT_SEED = 1  # seed of the fresh numbers drawn by digit count (the task's splits use their own seed)
BATCH_SIZE = 1024  # sources per batch of greedy decoding and beam search: larger batches share each step's fixed cost
SAMPLING_BATCH_SIZE = 128  # sources per batch of sampling, each batch with its own seed


def translate(
    fw: Backend,
    model: Any,
    sources: Sequence[str],
    src_tok: Tokenizer,
    tgt_tok: Tokenizer,
    beam_size: int = 1,
    batch_size: Optional[int] = None,
    device: str = "cpu",
    length_penalty_alpha: float = 0.6,
    max_len: Optional[int] = None,
    sampling: Optional[dict[str, Any]] = None,
) -> list[str]:
    """Translate ``sources`` with greedy decoding (beam_size 1) or beam search, or by sampling.

    ``sampling``: the keyword arguments of ``sample_decode`` (``temperature``,
    ``top_k``, ``top_p``, ``seed``; ``{}`` for plain sampling at temperature
    1); given, each token is drawn instead of searched for (beam_size must
    be 1). A batch of ``batch_size`` sources draws with ``seed``, the next
    batch with ``seed + 1``, and so on.

    Greedy decoding and beam search take the sources by length, shortest
    first, in batches of ``batch_size`` (default :data:`BATCH_SIZE`): a
    batch of similar lengths pads less and its rows finish together; the
    outputs come back in the order of ``sources``. Sampling keeps their
    order, in batches of :data:`SAMPLING_BATCH_SIZE` by default (the batches
    its seeds draw for). The default step limit is the batch's (2 T_src + 10
    for its longest source).

    Each source goes through ``src_tok`` as in training (its normalisation
    included); words outside its vocabulary become ``<unk>`` (find them first
    with ``src_tok.unknown_words``). A source with no token left (empty,
    blank, or only ignored punctuation) is refused with a ValueError: the
    model would otherwise translate nothing into a confident number.
    """
    if sampling is not None and beam_size != 1:
        raise ValueError(f"sampling draws one output per source: it does not combine with beam_size={beam_size}")
    encoded = [src_tok.encode(s) for s in sources]
    for i, ids in enumerate(encoded):
        if not ids:
            raise ValueError(f"sources[{i}] = {sources[i]!r} has no words to translate; drop it from sources")
    if batch_size is None:
        batch_size = BATCH_SIZE if sampling is None else SAMPLING_BATCH_SIZE
    V.check_positive("batch_size", batch_size)
    order = list(range(len(sources)))
    if sampling is None:  # batches of similar lengths: less padding, and rows that finish together
        order.sort(key=lambda i: len(encoded[i]))
    outputs = [""] * len(sources)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        src, _ = pad_sequences([encoded[i] for i in rows], pad_id=src_tok.pad_id)
        drawing = None if sampling is None else {**sampling, "seed": sampling.get("seed", 0) + start // batch_size}
        out = _decode_batch(
            fw, model, fw.to_tensor(src, device), tgt_tok, beam_size, max_len, length_penalty_alpha, drawing
        )
        for i, row in zip(rows, fw.to_numpy(out.tokens)):
            outputs[i] = tgt_tok.decode(row.tolist())  # back in the order of sources
    return outputs


def _decode_batch(
    fw: Backend,
    model: Any,
    src: Any,
    tgt_tok: Tokenizer,
    beam_size: int,
    max_len: Optional[int],
    length_penalty_alpha: float,
    sampling: Optional[dict[str, Any]],
) -> Any:
    """One batch of :func:`translate`: drawn (``sampling``, its batch's seed included), greedy, or by beam search."""
    ids = {"sos_id": tgt_tok.sos_id, "eos_id": tgt_tok.eos_id, "pad_id": tgt_tok.pad_id}
    if sampling is not None:
        return fw.sample_decode(model, src, max_len=max_len, **ids, **sampling)
    if beam_size == 1:
        return fw.greedy_decode(model, src, max_len=max_len, **ids)
    return fw.beam_search(
        model, src, beam_size=beam_size, max_len=max_len, length_penalty_alpha=length_penalty_alpha, **ids
    )


def evaluate(
    fw: Backend,
    model: Any,
    pairs: Sequence[tuple[str, str]],
    src_tok: Tokenizer,
    tgt_tok: Tokenizer,
    beam_size: int = 1,
    device: str = "cpu",
    tokenize: str = "char",
    length_in_tokens: bool = False,
) -> dict[str, Any]:
    """BLEU, chrF, exact match and accuracy by source length on ``pairs``.

    BLEU uses character tokenisation by default: Korean targets are short
    and written without spaces inside a 10^4 group. A source's length is
    its number of whitespace words, or with ``length_in_tokens`` what the
    model reads: its tokens under ``src_tok`` (``txcourse evaluate``).
    """
    sources, references = [s for s, _ in pairs], [t for _, t in pairs]
    hypotheses = translate(fw, model, sources, src_tok, tgt_tok, beam_size=beam_size, device=device)
    length_fn = (lambda source: len(src_tok.encode(source))) if length_in_tokens else None
    result = evaluate_translations(sources, hypotheses, references, tokenize=tokenize, length_fn=length_fn)
    result["hypotheses"] = hypotheses
    return result


def evaluate_by_phrasing(
    fw: Backend,
    model: Any,
    splits: TranslationSplits,
    src_tok: Tokenizer,
    tgt_tok: Tokenizer,
    count: int = 100,
    seed: int = DIGIT_SEED + 1,
    beam_size: int = 1,
    device: str = "cpu",
) -> dict[str, Any]:
    """Exact match on fresh ``numbers`` written each way people write them, through what ``translate`` does.

    ``count`` numbers drawn evenly by digit count; each is written in every
    way of :data:`txcourse.data.english_numbers.VARIANTS` that applies to it
    ("one hundred five", "a thousand and one", "FORTY-TWO", "twelve hundred"),
    read back with :func:`~txcourse.data.english_numbers.canonical` as
    ``txcourse translate`` does, and translated. A phrasing the reader refuses
    counts as wrong (it would be skipped, not translated).

    Returns:
        ``{variant: LengthBucket(low digits, high digits, count, exact match)}`` for every variant that
        applied to at least one of the numbers, plus ``"refused"``: how many phrasings could not be read.
    """
    from txcourse.data import digit_count, draw_by_digit_count, numbers_to_words

    meta = _numbers_meta(splits, "evaluate_by_phrasing")
    digits = range(digit_count(meta["low"]), digit_count(meta["high"]) + 1)
    per_count = max(1, -(-count // len(digits)))
    numbers = [
        n
        for group in draw_by_digit_count(per_count, low=meta["low"], high=meta["high"], seed=seed).values()
        for n in group
    ][:count]
    rows = _read_phrasings(numbers, meta["low"], meta["high"])
    result: dict[str, Any] = {"refused": sum(source is None for row in rows.values() for _, source in row)}
    for name, row in rows.items():
        if not row:
            continue
        readable = [(n, source) for n, source in row if source is not None]
        hypotheses = (
            translate(
                fw, model, [source for _, source in readable], src_tok, tgt_tok, beam_size=beam_size, device=device
            )
            if readable
            else []
        )
        references = [numbers_to_words(n, meta["target_lang"]) for n, _ in readable]
        right = round(exact_match(hypotheses, references) * len(readable)) if readable else 0
        sizes = [digit_count(n) for n, _ in row]
        result[name] = LengthBucket(min(sizes), max(sizes), len(row), right / len(row))
    return result


def evaluate_by_digit_count(
    fw: Backend,
    model: Any,
    splits: TranslationSplits,
    src_tok: Tokenizer,
    tgt_tok: Tokenizer,
    per_count: int = 200,
    seed: int = DIGIT_SEED,
    beam_size: int = 1,
    device: str = "cpu",
) -> dict[str, Any]:
    """Exact match on fresh ``numbers`` drawn by digit count, and on round numbers: what users type.

    ``per_count`` numbers of every digit count of the task's range, drawn
    with :func:`txcourse.data.draw_by_digit_count` and avoiding the training
    numbers where enough others exist (the numbers below 1000 are all in
    training by design, so their buckets repeat them); then every round
    number of the range with one or two significant digits
    (:func:`txcourse.data.round_numbers`: "one hundred thousand",
    "forty-two thousand"), which a uniform draw almost never makes.

    Args:
        splits: the task's splits (``get_task("numbers", ...)``), for its range,
            target language and training numbers.
        per_count: numbers per digit count.

    Returns:
        ``{"by_digits": [LengthBucket(d, d, count, exact match)], "seen": {d: share of
        the bucket's numbers that are in the training split}, "round": LengthBucket of the
        round numbers (low/high: their smallest and largest digit count), "exact_match": mean of
        the digit buckets, "hypotheses": {d or "round": [...]}, "numbers": {d or "round": [...]}}``.

    Example:
        >>> # result = evaluate_by_digit_count(fw, model, splits, src_tok, tgt_tok)
        >>> # [b.exact_match for b in result["by_digits"]], result["round"].exact_match
    """
    from txcourse.data import draw_by_digit_count, round_numbers

    meta = _numbers_meta(splits, "evaluate_by_digit_count")
    train = set(meta["numbers"]["train"])
    drawn: dict[Any, list[int]] = dict(
        draw_by_digit_count(per_count, low=meta["low"], high=meta["high"], seed=seed, exclude=train)
    )
    drawn["round"] = round_numbers(meta["low"], meta["high"])
    scores, hypotheses = {}, {}
    for key, numbers in drawn.items():
        hypotheses[key], scores[key] = _score_numbers(
            fw, model, numbers, meta["target_lang"], src_tok, tgt_tok, beam_size, device
        )
    buckets = [scores[key] for key in drawn if key != "round"]
    seen = {key: sum(n in train for n in numbers) / len(numbers) for key, numbers in drawn.items()}
    return {
        "by_digits": buckets,
        "seen": seen,
        "round": scores["round"],
        "exact_match": float(np.mean([b.exact_match for b in buckets])),
        "hypotheses": hypotheses,
        "numbers": drawn,
    }


def _numbers_meta(splits: TranslationSplits, caller: str) -> dict[str, Any]:
    """The metadata of the numbers task's splits (its range, target language, training numbers); other tasks' are
    refused."""
    meta = splits.metadata
    if meta.get("task") != "numbers":
        raise ValueError(f"{caller} needs the splits of the numbers task, got task {meta.get('task')!r}")
    return meta


def _read_phrasings(numbers: Sequence[int], low: int, high: int) -> dict[str, list[tuple[int, Optional[str]]]]:
    """Each number written every way of VARIANTS that applies to it, read back as ``txcourse translate`` reads it:
    ``{variant: [(number, its canonical phrasing, or None where the reader refused it)]}``."""
    from txcourse.data.english_numbers import VARIANTS, NotANumber, canonical, variants

    rows: dict[str, list[tuple[int, Optional[str]]]] = {name: [] for name in VARIANTS}
    for n in numbers:
        for name, text in variants(n).items():
            try:
                rows[name].append((n, canonical(text, low, high)))
            except NotANumber:
                rows[name].append((n, None))
    return rows


def _score_numbers(
    fw: Backend,
    model: Any,
    numbers: Sequence[int],
    target_lang: str,
    src_tok: Tokenizer,
    tgt_tok: Tokenizer,
    beam_size: int,
    device: str,
) -> tuple[list[str], LengthBucket]:
    """Translate ``numbers`` written in English words: the hypotheses, and their bucket (digit counts, exact match)."""
    from txcourse.data import digit_count, numbers_to_words

    sources = [numbers_to_words(n, "en") for n in numbers]
    references = [numbers_to_words(n, target_lang) for n in numbers]
    hypotheses = translate(fw, model, sources, src_tok, tgt_tok, beam_size=beam_size, device=device)
    digits = [digit_count(n) for n in numbers]
    return hypotheses, LengthBucket(min(digits), max(digits), len(numbers), exact_match(hypotheses, references))
