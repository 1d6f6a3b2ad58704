"""The ``numbers`` translation task: a number in English words -> the same number in another language.

Generated with ``num2words``, so it needs no download and has unlimited,
exactly-correct data::

    12345  en: "twelve thousand, three hundred and forty-five"
           ko: "만 이천삼백사십오"
           es: "doce mil trescientos cuarenta y cinco"
           fr: "douze mille trois cent quarante-cinq"

The outputs are num2words' own, only whitespace is normalised. Note its
Korean conventions: 10000 is "만" (not "일만"), 1000 is "천", 100 is "백",
and a space separates the 만 group from the rest ("사십사만 천일" = 441001).

**How numbers are drawn.** Every example first draws a digit count from the
digit counts of ``[low, high]`` (1 to 6 by default), then a number with that
many digits. Drawing numbers uniformly instead would make 90% of them
six-digit numbers and leave "nine" or "forty-two" almost unseen, and those
are what a user types first. Training gives each digit count ``d`` a share
of the examples proportional to ``d`` (one-digit numbers 1/21 of the examples,
six-digit ones 6/21): every length is there, and the longer numbers, which
have more to get right, get more of the examples; valid and test draw the
digit counts evenly. The small numbers (at most
``closed_digits`` digits: 0 to 999 by default) are so few that the training
split holds every one of them once it is large enough for their share (the
default 20000 examples are; a split of 3000 is not); the valid and test splits
are drawn from the larger numbers only, disjoint from training and from each
other, so no valid or test number ever occurs in training. Within a digit
count, training draws a fifth of its larger numbers as round numbers and
half by **zero pattern** (which digits are zero: 80011 is ``x00xx``), every
pattern equally often, the rest uniformly: drawn uniformly, a skipping shape
such as ``xx00xx`` ("one hundred and ten thousand and twenty-three") is one
six-digit number in 137, and a model trained on such draws got that pattern
right 23% of the time (every number 0-999,999 scored by
``benchmarks/numbers_exhaustive.py``).
:func:`draw_by_digit_count` draws fresh numbers of each digit count for
scoring a model the way users meet it (``txcourse evaluate`` prints that
table).

**Length generalisation** is an explicit experiment: ``max_train_digits=k``
keeps numbers of more than ``k`` digits out of train and valid (none at all:
no fraction of them leaks in), so the test split (which draws from every digit
count) asks for digit counts the model never saw; ``metadata["test_is_long"]``
marks them. Longer in digits is not always longer in words: "forty thousand"
has five digits and two words, so many of the marked sources are no longer
than a training source.

Example:
    >>> splits = make_numbers_task(sizes=(100, 10, 20), seed=0)
    >>> len(splits.train), len(splits.valid), len(splits.test)
    (100, 10, 20)
    >>> numbers_to_words(12345, "ko")
    '만 이천삼백사십오'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

import numpy as np

from txcourse.data._checks import check_fraction, check_int, is_int
from txcourse.data.splits import TranslationSplits, check_sizes
from txcourse.errors import TxcourseError

__all__ = [
    "SUPPORTED_LANGS",
    "TARGET_LANGS",
    "numbers_to_words",
    "digit_count",
    "make_numbers_task",
    "draw_by_digit_count",
    "round_numbers",
]

SUPPORTED_LANGS = {"en": "English", "ko": "Korean", "es": "Spanish", "fr": "French"}
TARGET_LANGS = ("ko", "es", "fr")  # the source side is always English


def _check_lang(name: str, lang, allowed) -> None:
    if lang not in allowed:
        listed = ", ".join(f"{code!r} ({SUPPORTED_LANGS[code]})" for code in allowed)
        raise TxcourseError(f"{name} must be one of {listed}; got {lang!r}", name)


def numbers_to_words(n: int, lang: str = "en") -> str:
    """Spell out a non-negative integer in words.

    Args:
        n: the number (>= 0).
        lang: ``"en"``, ``"ko"``, ``"es"`` or ``"fr"``.

    Returns:
        ``num2words(n, lang=lang)`` with runs of whitespace collapsed to one space.

    Example:
        >>> numbers_to_words(12345)
        'twelve thousand, three hundred and forty-five'
        >>> numbers_to_words(10000, "ko")
        '만'
    """
    from num2words import num2words

    _check_lang("lang", lang, tuple(SUPPORTED_LANGS))
    n = check_int("n", n, minimum=0)
    return " ".join(num2words(n, lang=lang).split())


def digit_count(n: int) -> int:
    """Number of decimal digits of ``n >= 0`` (0 has one).

    Example:
        >>> digit_count(0), digit_count(9), digit_count(10), digit_count(999_999)
        (1, 1, 2, 6)
    """
    return len(str(check_int("n", n, minimum=0)))


def _pool(d: int, low: int, high: int) -> tuple[int, int]:
    """The numbers of [low, high] with ``d`` digits, as (first, last), both included."""
    return max(low, 0 if d == 1 else 10 ** (d - 1)), min(high, 10**d - 1)


def zero_pattern(n: int) -> str:
    """The digits of ``n`` with every non-zero digit written ``x``: 80011 -> 'x00xx', 0 -> '0' (64 patterns
    for 0-999,999). The classes of :func:`make_numbers_task`'s ``pattern_fraction`` and of
    ``benchmarks/numbers_exhaustive.py``.

    Example:
        >>> zero_pattern(80011), zero_pattern(440040), zero_pattern(0)
        ('x00xx', 'xx00x0', '0')
    """
    return "".join("0" if c == "0" else "x" for c in str(check_int("n", n, minimum=0)))


def _pattern_numbers(rng: np.random.Generator, d: int, first: int, last: int, count: int) -> list[int]:
    """``count`` ``d``-digit numbers in [first, last] drawn by zero pattern: the pattern of zero and non-zero
    digits uniform among the ``2**(d-1)`` (the first digit is never zero), each non-zero digit uniform in 1..9
    (with repeats)."""
    if count == 0:
        return []
    out: list[int] = []
    tries = 0
    while len(out) < count:
        tries += 1
        if tries > 1000 * count:
            raise TxcourseError(f"[{first}, {last}] holds too few {d}-digit numbers to draw {count} by zero pattern")
        nonzero = np.concatenate([[True], rng.integers(0, 2, d - 1).astype(bool)])  # (d,)
        digits = np.where(nonzero, rng.integers(1, 10, d), 0)  # (d,)
        n = int("".join(map(str, digits.tolist())))
        if first <= n <= last:
            out.append(n)
    return out


def _split_counts(total: int, keys: list[int], weights: Optional[list[float]] = None) -> dict[int, int]:
    """``total`` split over ``keys`` in proportion to ``weights`` (default: evenly), rounded so that the
    counts add up to ``total``; leftovers go to the last (longest) keys."""
    weights = [1.0] * len(keys) if weights is None else weights
    shares = [total * w / sum(weights) for w in weights]
    counts = [int(share) for share in shares]
    for i in sorted(range(len(keys)), key=lambda i: (counts[i] - shares[i], -i))[: total - sum(counts)]:
        counts[i] += 1
    return dict(zip(keys, counts))


def _round_numbers(rng: np.random.Generator, d: int, first: int, last: int, count: int) -> list[int]:
    """``count`` round ``d``-digit numbers in [first, last]: ``m * 10**z``, ``z`` uniform in 1..d-1 (with
    repeats: there are only nine numbers with five trailing zeros)."""
    if d < 2 or count == 0:
        return []
    out: list[int] = []
    while len(out) < count:
        z = int(rng.integers(1, d))
        m = int(rng.integers(10 ** (d - z - 1), 10 ** (d - z)))  # a (d - z)-digit significand
        if first <= m * 10**z <= last:
            out.append(m * 10**z)
    return out


def round_numbers(low: int = 0, high: int = 999_999, significant: int = 2) -> list[int]:
    """Every round number of ``[low, high]`` with at most ``significant`` significant digits and at
    least one trailing zero, in increasing order: 10, 20, ..., 990, 1000, 1100, ..., 990000.

    "One hundred thousand" and "forty-two thousand" are what people type, and a
    uniform draw of six-digit numbers almost never makes one, so the course
    scores them as a stratum of their own (:func:`txcourse.evaluation.translate.evaluate_by_digit_count`).

    Example:
        >>> len(round_numbers()), round_numbers(high=100)
        (369, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
    """
    low = check_int("low", low, minimum=0)
    high = check_int("high", high)
    significant = check_int("significant", significant, minimum=1)
    return sorted(
        {
            m * 10**z
            for m in range(1, 10**significant)
            if m % 10
            for z in range(1, len(str(high)))
            if low <= m * 10**z <= high
        }
    )


def make_numbers_task(
    target_lang: str = "ko",
    low: int = 0,
    high: int = 999_999,
    sizes: tuple[int, int, int] = (20000, 1000, 2000),
    seed: int = 0,
    closed_digits: int = 3,
    max_train_digits: Optional[int] = None,
    round_fraction: float = 0.2,
    pattern_fraction: float = 0.5,
) -> TranslationSplits:
    """Build train / valid / test pairs (English words, target-language words).

    Training draws from every digit count ``d`` of ``[low, high]`` (up to
    ``max_train_digits``), ``d`` in proportion to ``d``; valid and test hold
    (nearly) the same number of examples of every digit count they draw
    from. Numbers with at most ``closed_digits``
    digits are all in training (each at least once when the split is large
    enough, repeated to fill their share) and in no other split. Valid and
    test are drawn from the larger numbers, without replacement and disjoint
    from training and from each other.

    Args:
        target_lang: ``"ko"`` (default), ``"es"`` or ``"fr"``.
        low: smallest number (>= 0).
        high: largest number (> low).
        sizes: number of pairs in (train, valid, test).
        seed: random seed; the same arguments give the same splits.
        closed_digits: numbers with at most this many digits (0 to 999 for 3)
            belong to training only; 0 makes every digit count disjoint
            across splits (then the small digit counts must hold enough
            numbers for all three splits).
        max_train_digits: the length-generalisation experiment: train and
            valid hold no number with more digits than this, the test split
            draws from every digit count (default None: train on every length).
        round_fraction: share of the training examples of each digit count
            above ``closed_digits`` that are round numbers, ``m * 10**z``
            ("one hundred thousand", "forty-two thousand"; :func:`_round_numbers`).
        pattern_fraction: share of them drawn by zero pattern (80011 has the
            pattern ``x00xx``; every pattern equally often, :func:`_pattern_numbers`,
            the module's docstring says why). ``round_fraction + pattern_fraction`` <= 1.

    Returns:
        :class:`TranslationSplits`; ``metadata["numbers"][split]`` lists the
        numbers behind each split's pairs; ``metadata["test_is_long"]`` marks
        the test numbers longer than any training number (all False unless
        ``max_train_digits`` is set).

    Example:
        >>> s = make_numbers_task(sizes=(60, 6, 12), seed=1)
        >>> sorted({digit_count(n) for n in s.metadata["numbers"]["train"]})
        [1, 2, 3, 4, 5, 6]
        >>> sorted({digit_count(n) for n in s.metadata["numbers"]["test"]})
        [4, 5, 6]
    """
    spec = _numbers_spec(
        target_lang, low, high, sizes, seed, closed_digits, max_train_digits, round_fraction, pattern_fraction
    )
    return _numbers_splits(spec, _draw_numbers(spec))


def _numbers_splits(spec: _NumbersSpec, numbers: dict[str, list[int]]) -> TranslationSplits:
    """The pairs of the drawn numbers, with the metadata: the arguments, the numbers, the test's long ones."""
    longest_train = max(spec.train_digits)
    return TranslationSplits(
        train=_number_pairs(numbers["train"], spec.target_lang),
        valid=_number_pairs(numbers["valid"], spec.target_lang),
        test=_number_pairs(numbers["test"], spec.target_lang),
        metadata={
            "task": "numbers",
            "source_lang": "en",
            **{key: getattr(spec, key) for key in _SPEC_METADATA},
            "numbers": numbers,
            "test_is_long": [digit_count(n) > longest_train for n in numbers["test"]],
        },
    )


_SPEC_METADATA = (
    "target_lang",
    "low",
    "high",
    "sizes",
    "seed",
    "closed_digits",
    "max_train_digits",
    "round_fraction",
    "pattern_fraction",
)  # in the metadata's order


@dataclass(frozen=True)
class _NumbersSpec:
    """The checked arguments of :func:`make_numbers_task` and the digit counts each split draws from."""

    target_lang: str
    low: int
    high: int
    sizes: tuple[int, int, int]
    seed: int
    closed_digits: int
    max_train_digits: Optional[int]
    round_fraction: float
    pattern_fraction: float
    digits: list[int]  # the digit counts of [low, high]
    train_digits: list[int]  # those training draws from (at most max_train_digits)
    held_digits: dict[str, list[int]]  # those valid and test draw from (above closed_digits)


def _numbers_spec(
    target_lang, low, high, sizes, seed, closed_digits, max_train_digits, round_fraction, pattern_fraction
) -> _NumbersSpec:
    """Check :func:`make_numbers_task`'s arguments (each error names its argument) and plan the digit counts."""
    _check_lang("target_lang", target_lang, TARGET_LANGS)
    low = check_int("low", low, minimum=0)
    high = check_int("high", high)
    if low >= high:
        raise TxcourseError(f"low must be smaller than high, got low={low}, high={high}", "low")
    sizes = check_sizes(sizes)
    if not is_int(seed):
        raise TxcourseError(f"seed must be an integer, got {seed!r}", "seed")
    closed_digits = check_int("closed_digits", closed_digits, minimum=0)
    round_fraction = check_fraction("round_fraction", round_fraction)
    pattern_fraction = check_fraction("pattern_fraction", pattern_fraction)
    if round_fraction + pattern_fraction > 1:
        raise TxcourseError(
            f"round_fraction + pattern_fraction must be at most 1, got {round_fraction} + "
            f"{pattern_fraction} = {round_fraction + pattern_fraction}",
            "round_fraction",
            "pattern_fraction",
        )
    digits = list(range(digit_count(low), digit_count(high) + 1))
    if max_train_digits is not None:
        max_train_digits = check_int("max_train_digits", max_train_digits, minimum=digits[0])
        if max_train_digits >= digits[-1]:
            raise TxcourseError(
                f"max_train_digits must be smaller than the digit count of high={high} "
                f"({digits[-1]}) to leave longer numbers for the test split, got {max_train_digits}",
                "max_train_digits",
            )
    train_digits = [d for d in digits if max_train_digits is None or d <= max_train_digits]
    open_digits = [d for d in digits if d > closed_digits]
    held_digits = {"valid": [d for d in open_digits if d in train_digits], "test": open_digits}
    for split, size in (("valid", sizes[1]), ("test", sizes[2])):
        if size and not held_digits[split]:
            raise TxcourseError(
                f"sizes={tuple(sizes)}: the {split} split is drawn from numbers with more than "
                f"closed_digits={closed_digits} digits"
                + (
                    f" and at most max_train_digits={max_train_digits}"
                    if split == "valid" and max_train_digits is not None
                    else ""
                )
                + f", but [{low}, {high}] has none; lower closed_digits or raise high",
                "sizes",
            )
    return _NumbersSpec(
        target_lang, low, high, sizes, int(seed), closed_digits, max_train_digits, round_fraction, pattern_fraction,
        digits, train_digits, held_digits,
    )  # fmt: skip


def _draw_numbers(spec: _NumbersSpec) -> dict[str, list[int]]:
    """The numbers of each split, drawn digit count by digit count, then shuffled (one generator, from the seed)."""
    rng = np.random.default_rng(spec.seed)
    n_train, n_valid, n_test = spec.sizes
    counts = {
        "train": _split_counts(n_train, spec.train_digits, [float(d) for d in spec.train_digits]),
        "valid": _split_counts(n_valid, spec.held_digits["valid"]) if n_valid else {},
        "test": _split_counts(n_test, spec.held_digits["test"]) if n_test else {},
    }
    chosen: dict[str, list[int]] = {"train": [], "valid": [], "test": []}
    for d in spec.digits:
        first, last = _pool(d, spec.low, spec.high)
        pool_size = last - first + 1
        if d <= spec.closed_digits:  # every number of the pool in training, repeated to fill its share
            want = counts["train"].get(d, 0)
            if want >= pool_size:
                picks = np.concatenate([np.arange(pool_size), rng.integers(0, pool_size, want - pool_size)])
            else:
                picks = rng.choice(pool_size, size=want, replace=False)
            chosen["train"] += (first + picks).tolist()
        else:
            wants = [counts[split].get(d, 0) for split in ("train", "valid", "test")]
            for split, drawn in _draw_open(rng, spec, d, wants).items():
                chosen[split] += drawn
    return {split: [nums[i] for i in rng.permutation(len(nums))] for split, nums in chosen.items()}


def _draw_open(rng: np.random.Generator, spec: _NumbersSpec, d: int, wants: list[int]) -> dict[str, list[int]]:
    """The ``d``-digit numbers of each split, for ``d`` above closed_digits: training's round and pattern numbers,
    then distinct numbers drawn uniformly for the rest of training, valid and test (disjoint)."""
    first, last = _pool(d, spec.low, spec.high)
    pool_size = last - first + 1
    drawn_train = _round_numbers(rng, d, first, last, int(round(spec.round_fraction * wants[0])))
    drawn_train += _pattern_numbers(rng, d, first, last, int(round(spec.pattern_fraction * wants[0])))
    wants[0] -= len(drawn_train)
    taken = set(drawn_train)
    if sum(wants) + len(taken) > pool_size:
        raise TxcourseError(
            f"sizes={tuple(spec.sizes)} need {sum(wants) + len(taken)} distinct {d}-digit numbers "
            f"({wants[0] + len(drawn_train)} train, {wants[1]} valid, {wants[2]} test), but [{spec.low}, {spec.high}] "
            f"holds only {pool_size} ([{first}, {last}]); lower sizes, widen [low, high] or raise closed_digits",
            "sizes",
        )
    picks = [
        n
        for n in (first + rng.choice(pool_size, size=sum(wants) + len(taken), replace=False)).tolist()
        if n not in taken
    ][: sum(wants)]
    return {
        "train": drawn_train + picks[: wants[0]],
        "valid": picks[wants[0] : wants[0] + wants[1]],
        "test": picks[wants[0] + wants[1] :],
    }


def _number_pairs(nums: list[int], target_lang: str) -> list[tuple[str, str]]:
    return [(numbers_to_words(n, "en"), numbers_to_words(n, target_lang)) for n in nums]


def draw_by_digit_count(
    per_count: int, low: int = 0, high: int = 999_999, seed: int = 1, exclude: Iterable[int] = ()
) -> dict[int, list[int]]:
    """Fresh numbers for scoring, ``per_count`` of every digit count of ``[low, high]``.

    Scores by digit count are what tell whether "nine" works as well as
    "nine hundred thousand". Numbers in ``exclude`` (pass the training
    numbers) are avoided while enough others exist; a digit count with fewer
    than ``per_count`` numbers left (0-9, 10-99, ... when all of them are in
    training) is drawn with replacement from all of its numbers.

    Args:
        per_count: numbers per digit count (>= 1).
        low, high: the range, as in :func:`make_numbers_task`.
        seed: random seed (use one the task's splits did not use).
        exclude: numbers to avoid, e.g. ``splits.metadata["numbers"]["train"]``.

    Returns:
        ``{digit count: [numbers]}``, in increasing digit count.

    Example:
        >>> drawn = draw_by_digit_count(3, high=99_999, seed=0)
        >>> [(d, len(nums)) for d, nums in drawn.items()]
        [(1, 3), (2, 3), (3, 3), (4, 3), (5, 3)]
    """
    per_count = check_int("per_count", per_count, minimum=1)
    low = check_int("low", low, minimum=0)
    high = check_int("high", high)
    if low >= high:
        raise TxcourseError(f"low must be smaller than high, got low={low}, high={high}", "low")
    if not is_int(seed):
        raise TxcourseError(f"seed must be an integer, got {seed!r}", "seed")
    excluded = set(exclude)
    rng = np.random.default_rng(seed)
    drawn = {}
    for d in range(digit_count(low), digit_count(high) + 1):
        first, last = _pool(d, low, high)
        pool_size = last - first + 1
        fresh = np.setdiff1d(np.arange(first, last + 1), np.fromiter(excluded, dtype=np.int64))
        if len(fresh) >= per_count:
            picked = rng.choice(fresh, size=per_count, replace=False).tolist()
        else:
            picked = (first + rng.integers(0, pool_size, per_count)).tolist()
        drawn[d] = picked
    return drawn
