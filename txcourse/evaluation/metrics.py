"""Framework-free evaluation of translations: BLEU, chrF, exact match, accuracy by length.

Imports numpy and sacrebleu only, never PyTorch or TensorFlow, so both halves
of the course score their outputs with the same code. Every function takes
plain strings: detokenised hypotheses (model outputs) and references, one
per sentence, in the same order.

Example:
    >>> hyps = ["twenty one", "one hundred"]
    >>> refs = ["twenty one", "one hundred and two"]
    >>> exact_match(hyps, refs)
    0.5
    >>> [(b.low, b.high, b.count, b.exact_match)
    ...  for b in accuracy_by_length(["21", "102"], hyps, refs)]
    [(1, 1, 2, 0.5)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sacrebleu

from txcourse.data._checks import is_int

__all__ = [
    "LengthBucket",
    "check_length_results",
    "bleu",
    "chrf",
    "exact_match",
    "accuracy_by_length",
    "GroupScore",
    "exact_match_by_group",
    "format_length_table",
    "evaluate_translations",
]

_MAX_DISTINCT_LENGTHS = 12  # up to this many distinct lengths: one bucket per length
_QUANTILE_BUCKETS = 8  # otherwise about this many quantile buckets


@dataclass(frozen=True)
class LengthBucket:
    """Exact match of the sentences whose source length lies in ``[low, high]``.

    Attributes:
        low: smallest source length in the bucket (inclusive).
        high: largest source length in the bucket (inclusive).
        count: number of sentences in the bucket (> 0).
        exact_match: fraction of them translated exactly, in [0, 1].
    """

    low: int
    high: int
    count: int
    exact_match: float

    @property
    def label(self) -> str:
        """``"7"`` for a single length, ``"5-8"`` for a range."""
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"

    @property
    def midpoint(self) -> float:
        """Centre of the bucket, ``(low + high) / 2``, for plotting."""
        return (self.low + self.high) / 2


def _check_strings(name: str, values) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a list of strings (one sentence each), got {type(values).__name__}")
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise ValueError(f"{name}[{i}] must be a string, got {type(v).__name__} {v!r}")
    return list(values)


def _check_pairs(hypotheses, references, sources=None) -> tuple[list[str], list[str]]:
    """Same non-zero number of hypotheses, references (and sources when given)."""
    hyps = _check_strings("hypotheses", hypotheses)
    refs = _check_strings("references", references)
    if len(hyps) != len(refs):
        raise ValueError(
            f"hypotheses and references must have the same length (one reference "
            f"per hypothesis), got {len(hyps)} hypotheses and {len(refs)} "
            f"references"
        )
    if sources is not None and len(sources) != len(hyps):
        raise ValueError(
            f"sources must have one sentence per hypothesis, got {len(sources)} sources and {len(hyps)} hypotheses"
        )
    if not hyps:
        raise ValueError("hypotheses and references are empty: need at least one sentence to score")
    return hyps, refs


def _normalise(text: str) -> str:
    return " ".join(text.split())


def bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> float:
    """Corpus BLEU (0-100) with one reference per sentence, via ``sacrebleu.corpus_bleu``.

    BLEU depends on the tokenisation. ``"13a"`` (sacrebleu's default, the WMT
    standard) splits on punctuation and suits English, French, German... For
    Korean, whose words carry particles and endings, word-level BLEU is harsh;
    character-level ``"char"`` or morpheme-level ``"ko-mecab"`` (needs
    ``pip install "sacrebleu[ko]"``) are often preferable. Report which one
    you used.

    BLEU counts n-grams up to 4 over the whole corpus, so it is 0 when no
    hypothesis has 4 tokens (short targets such as "forty two"): use chrF,
    exact match or ``tokenize="char"`` there.

    Args:
        hypotheses: model outputs, one detokenised string per sentence.
        references: the reference translations, same length and order.
        tokenize: a sacrebleu tokenizer name: ``"13a"``, ``"intl"``, ``"char"``,
            ``"none"``, ``"zh"``, ``"ja-mecab"``, ``"ko-mecab"``, ``"flores200"``...

    Returns:
        The BLEU score as a float in [0, 100].

    Example:
        >>> bleu(["the cat sat on the mat"], ["the cat sat on the mat"])
        100.0
    """
    hyps, refs = _check_pairs(hypotheses, references)
    names = sorted(sacrebleu.BLEU.TOKENIZERS)
    if tokenize not in sacrebleu.BLEU.TOKENIZERS:
        raise ValueError(f"tokenize must be one of {names}, got {tokenize!r}")
    score = sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenize).score
    return min(float(score), 100.0)  # a perfect corpus can round to 100.00000000000004


def chrf(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus chrF (0-100), character n-gram F-score, via ``sacrebleu.corpus_chrf``.

    chrF needs no word tokenisation, so it is a fair companion to BLEU for
    Korean and other morphologically rich languages.

    Args:
        hypotheses: model outputs, one string per sentence.
        references: the reference translations, same length and order.

    Returns:
        The chrF score as a float in [0, 100].

    Example:
        >>> chrf(["하나 둘"], ["하나 둘"])
        100.0
    """
    hyps, refs = _check_pairs(hypotheses, references)
    return min(float(sacrebleu.corpus_chrf(hyps, [refs]).score), 100.0)


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction of hypotheses equal to their reference, ignoring whitespace differences.

    Both sides are stripped and internal runs of whitespace collapse to one
    space before comparing; case and punctuation still count.

    Args:
        hypotheses: model outputs, one string per sentence.
        references: the reference translations, same length and order.

    Returns:
        A float in [0, 1].

    Example:
        >>> exact_match(["  forty  two ", "seven"], ["forty two", "eight"])
        0.5
    """
    hyps, refs = _check_pairs(hypotheses, references)
    hits = sum(_normalise(h) == _normalise(r) for h, r in zip(hyps, refs))
    return hits / len(hyps)


def _word_count(text: str) -> int:
    return len(text.split())


def _default_edges(lengths: np.ndarray) -> list[int] | None:
    """None: one bucket per distinct length; else quantile edges (integers, increasing)."""
    if len(np.unique(lengths)) <= _MAX_DISTINCT_LENGTHS:
        return None
    qs = np.quantile(lengths, np.linspace(0, 1, _QUANTILE_BUCKETS + 1), method="inverted_cdf")
    return [int(e) for e in np.unique(qs)]


def _check_edges(bins) -> list[int]:
    if isinstance(bins, str) or not isinstance(bins, Sequence) or len(bins) < 2:
        raise ValueError(
            f"bins must be a list of at least 2 increasing integer bucket edges such as [1, 5, 10, 20], got {bins!r}"
        )
    if not all(is_int(e) for e in bins) or any(a >= b for a, b in zip(bins, bins[1:])):
        raise ValueError(f"bins must be strictly increasing integers, got {list(bins)!r}")
    return [int(e) for e in bins]


def _source_lengths(srcs: Sequence[str], length_fn: Callable[[str], int] | None) -> np.ndarray:
    """The length of every source: ``length_fn`` of it (default: its word count), checked to be an int >= 0."""
    if length_fn is not None and not callable(length_fn):
        raise ValueError(f"length_fn must be a function str -> int or None, got {length_fn!r}")
    measure = length_fn or _word_count
    lengths = []
    for i, s in enumerate(srcs):
        n = measure(s)
        if not is_int(n) or n < 0:
            raise ValueError(f"length_fn must return a non-negative int, got {n!r} for sources[{i}] = {s!r}")
        lengths.append(int(n))
    return np.asarray(lengths)


def _length_ranges(lengths: np.ndarray, bins: Sequence[int] | None) -> list[tuple[int, int]]:
    """The (low, high) of each bucket, inclusive: one per length, the quantiles' or those of ``bins``."""
    edges = _default_edges(lengths) if bins is None else _check_edges(bins)
    if edges is None:
        ranges = [(int(n), int(n)) for n in np.unique(lengths)]
    else:
        outside = lengths[(lengths < edges[0]) | (lengths > edges[-1])]
        if outside.size:
            raise ValueError(
                f"bins {edges} do not cover every source length: got a source of "
                f"length {int(outside[0])}; expected lengths in "
                f"[{edges[0]}, {edges[-1]}]"
            )
        ranges = [(lo, hi - 1) for lo, hi in zip(edges[:-2], edges[1:-1])]
        ranges.append((edges[-2], edges[-1]))
    return ranges


def accuracy_by_length(
    sources: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[str],
    bins: Sequence[int] | None = None,
    length_fn: Callable[[str], int] | None = None,
) -> list[LengthBucket]:
    """Exact match per bucket of source length: where does the model start to fail?

    Args:
        sources: the source sentences, same length and order as ``hypotheses``.
        hypotheses: model outputs.
        references: the reference translations.
        bins: increasing integer bucket edges, as in ``numpy.histogram``:
            ``[1, 5, 10, 20]`` gives buckets 1-4, 5-9 and 10-20 (the last edge
            is inclusive). Every source length must lie in ``[bins[0], bins[-1]]``.
            Default: one bucket per distinct length when there are at most 12,
            otherwise about 8 buckets at the quantiles of the lengths.
        length_fn: maps a source string to its length (a non-negative int);
            default: the number of whitespace-separated words.

    Returns:
        A list of :class:`LengthBucket`, ordered by length; empty buckets are
        left out.

    Example:
        >>> srcs = ["a", "b", "a b", "a b c"]
        >>> hyps = ["x", "y", "x y", "z"]
        >>> refs = ["x", "q", "x y", "x y z"]
        >>> [(b.label, b.count, b.exact_match) for b in accuracy_by_length(srcs, hyps, refs)]
        [('1', 2, 0.5), ('2', 1, 1.0), ('3', 1, 0.0)]
    """
    srcs = _check_strings("sources", sources)
    hyps, refs = _check_pairs(hypotheses, references, srcs)
    lengths = _source_lengths(srcs, length_fn)
    hits = np.array([_normalise(h) == _normalise(r) for h, r in zip(hyps, refs)])

    ranges = _length_ranges(lengths, bins)
    buckets = []
    for low, high in ranges:
        inside = (lengths >= low) & (lengths <= high)
        count = int(inside.sum())
        if count:
            buckets.append(LengthBucket(low, high, count, float(hits[inside].mean())))
    return buckets


@dataclass(frozen=True)
class GroupScore:
    """Exact match of the sentences of one group (a phrasing of the ``dates`` task, say).

    Attributes:
        count: number of sentences in the group (> 0).
        exact_match: fraction of them translated exactly, in [0, 1].
    """

    count: int
    exact_match: float


def exact_match_by_group(
    groups: Sequence[str], hypotheses: Sequence[str], references: Sequence[str]
) -> dict[str, GroupScore]:
    """Exact match per group: the strata a task labels its pairs with (the ``dates`` task's phrasings).

    Args:
        groups: the group of each sentence, same length and order as ``hypotheses``.
        hypotheses: model outputs.
        references: the reference translations.

    Returns:
        ``{group: GroupScore}`` in the order in which the groups first occur.

    Example:
        >>> scores = exact_match_by_group(["a", "b", "a"], ["x", "y", "z"], ["x", "q", "z"])
        >>> [(g, s.count, s.exact_match) for g, s in scores.items()]
        [('a', 2, 1.0), ('b', 1, 0.0)]
    """
    labels = _check_strings("groups", groups)
    hyps, refs = _check_pairs(hypotheses, references)
    if len(labels) != len(hyps):
        raise ValueError(
            f"groups must have one label per hypothesis, got {len(labels)} groups and {len(hyps)} hypotheses"
        )
    hits: dict[str, list[bool]] = {}
    for label, h, r in zip(labels, hyps, refs):
        hits.setdefault(label, []).append(_normalise(h) == _normalise(r))
    return {label: GroupScore(len(row), sum(row) / len(row)) for label, row in hits.items()}


def check_length_results(results: Any, allow_empty: bool = True) -> None:
    """``results`` must map model names to lists of :class:`LengthBucket` (empty lists only with ``allow_empty``);
    else a ValueError naming the entry that is not."""
    if not isinstance(results, Mapping) or not results:
        raise ValueError(f"results must be a non-empty dict of model name -> list of LengthBucket, got {results!r}")
    for name, buckets in results.items():
        if (
            isinstance(buckets, str)
            or not isinstance(buckets, Sequence)
            or (not buckets and not allow_empty)
            or not all(isinstance(b, LengthBucket) for b in buckets)
        ):
            raise ValueError(
                f"results[{name!r}] must be a {'' if allow_empty else 'non-empty '}list of LengthBucket "
                f"(from txcourse.evaluation.metrics.accuracy_by_length), got {buckets!r}"
            )


def format_length_table(results: Mapping[str, Sequence[LengthBucket]], key: str = "source length") -> str:
    """A Markdown table of exact match by source length, one column per model.

    Args:
        results: model name -> buckets from :func:`accuracy_by_length`. Rows are
            the union of the buckets of all models; a model without a bucket
            shows ``-``.
        key: the heading of the first column, what the buckets are by
            (``"digits"`` for the numbers task's buckets by digit count).

    Returns:
        The table as a string; cells read ``"87.5% (n=8)"``.

    Example:
        >>> b = {"gru": [LengthBucket(1, 1, 4, 0.75)], "transformer": [LengthBucket(1, 1, 4, 1.0)]}
        >>> print(format_length_table(b))
        | source length | gru | transformer |
        |---|---|---|
        | 1 | 75.0% (n=4) | 100.0% (n=4) |
    """
    check_length_results(results)
    rows = sorted({(b.low, b.high) for buckets in results.values() for b in buckets})
    lines = [f"| {key} | " + " | ".join(str(n) for n in results) + " |", "|---" * (len(results) + 1) + "|"]
    for low, high in rows:
        cells = []
        for buckets in results.values():
            match = [b for b in buckets if (b.low, b.high) == (low, high)]
            cells.append(f"{100 * match[0].exact_match:.1f}% (n={match[0].count})" if match else "-")
        label = LengthBucket(low, high, 1, 0.0).label
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def evaluate_translations(
    sources: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[str],
    tokenize: str = "13a",
    length_fn: Callable[[str], int] | None = None,
) -> dict:
    """All the course's translation metrics at once.

    Args:
        sources: the source sentences.
        hypotheses: model outputs, same length and order.
        references: the reference translations.
        tokenize: BLEU tokenizer, see :func:`bleu` (``"char"`` for Korean targets).
        length_fn: a source's length for ``by_length`` (see :func:`accuracy_by_length`; default: its words).

    Returns:
        ``{"bleu": float, "chrf": float, "exact_match": float,
        "by_length": list[LengthBucket]}``; BLEU and chrF in [0, 100], exact
        match in [0, 1].

    Example:
        >>> srcs, refs = ["1 2 3 4", "5 6 7 8"], ["one two three four", "five six seven eight"]
        >>> r = evaluate_translations(srcs, refs, refs)
        >>> r["bleu"], r["chrf"], r["exact_match"], len(r["by_length"])
        (100.0, 100.0, 1.0, 1)
    """
    srcs = _check_strings("sources", sources)
    _check_pairs(hypotheses, references, srcs)
    return {
        "bleu": bleu(hypotheses, references, tokenize=tokenize),
        "chrf": chrf(hypotheses, references),
        "exact_match": exact_match(hypotheses, references),
        "by_length": accuracy_by_length(srcs, hypotheses, references, length_fn=length_fn),
    }
