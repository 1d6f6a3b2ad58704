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

Length generalisation is built in: the test split holds a fraction of
"long" numbers (by default, numbers with as many digits as ``high``: 100000
to 999999) that never occur in train or valid, so a model can be scored
separately on inputs longer than anything it was trained on.

Example:
    >>> splits = make_numbers_task(sizes=(100, 10, 20), seed=0)
    >>> len(splits.train), len(splits.valid), len(splits.test)
    (100, 10, 20)
    >>> numbers_to_words(12345, "ko")
    '만 이천삼백사십오'
"""

from __future__ import annotations

import numpy as np

from txcourse.data._checks import check_fraction, check_int, is_int
from txcourse.data.splits import TranslationSplits, check_sizes

__all__ = ["SUPPORTED_LANGS", "TARGET_LANGS", "numbers_to_words", "make_numbers_task"]

SUPPORTED_LANGS = {"en": "English", "ko": "Korean", "es": "Spanish", "fr": "French"}
TARGET_LANGS = ("ko", "es", "fr")  # the source side is always English


def _check_lang(name: str, lang, allowed) -> None:
    if lang not in allowed:
        listed = ", ".join(f"{code!r} ({SUPPORTED_LANGS[code]})" for code in allowed)
        raise ValueError(f"{name} must be one of {listed}; got {lang!r}")


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


def _digits(n: int) -> int:
    return len(str(n))


def make_numbers_task(target_lang: str = "ko", low: int = 0, high: int = 999_999,
                      sizes: tuple[int, int, int] = (20000, 1000, 2000), seed: int = 0,
                      long_test_fraction: float = 0.5, long_train_fraction: float = 0.1,
                      long_min_digits: int | None = None) -> TranslationSplits:
    """Build train / valid / test pairs (English words, target-language words).

    Numbers are drawn without replacement from ``[low, high]`` (both
    included), so the three splits are disjoint by number. Numbers with at
    least ``long_min_digits`` digits are "long": they make up
    ``long_test_fraction`` of the test split but only ``long_train_fraction``
    of train and valid, so the test split holds many numbers longer than
    most training numbers, and accuracy by length can be measured (set
    ``long_train_fraction=0`` to test extrapolation to unseen lengths).

    Args:
        target_lang: ``"ko"`` (default), ``"es"`` or ``"fr"``.
        low: smallest number (>= 0).
        high: largest number (> low).
        sizes: number of pairs in (train, valid, test).
        seed: random seed; the same arguments give the same splits.
        long_test_fraction: share of the test split drawn from the long numbers.
        long_train_fraction: share of train and valid drawn from the long numbers.
        long_min_digits: digit count from which a number is long; default:
            the digit count of ``high`` (6 for the default range, i.e. 100000
            to 999999 are long). Use ``digits(high) + 1`` to have no long numbers.

    Returns:
        :class:`TranslationSplits`; ``metadata["numbers"][split]`` lists the
        numbers behind each split's pairs, ``metadata["test_is_long"]`` marks
        the long test examples.

    Example:
        >>> s = make_numbers_task(sizes=(5, 1, 2), seed=1)
        >>> s.metadata["test_is_long"].count(True)
        1
    """
    _check_lang("target_lang", target_lang, TARGET_LANGS)
    low = check_int("low", low, minimum=0)
    high = check_int("high", high)
    if low >= high:
        raise ValueError(f"low must be smaller than high, got low={low}, high={high}")
    n_train, n_valid, n_test = check_sizes(sizes)
    if not is_int(seed):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    long_test_fraction = check_fraction("long_test_fraction", long_test_fraction)
    long_train_fraction = check_fraction("long_train_fraction", long_train_fraction)
    if long_min_digits is None:
        long_min_digits = _digits(high)
    long_min_digits = check_int("long_min_digits", long_min_digits, minimum=1)

    # Long numbers: [long_start, high]; short ones: [low, short_high].
    long_start = max(low, 10 ** (long_min_digits - 1) if long_min_digits > 1 else 0)
    short_high = min(high, long_start - 1)
    n_short_pool = max(0, short_high - low + 1)
    n_long_pool = max(0, high - long_start + 1)

    n_long_train = int(round(n_train * long_train_fraction))
    n_long_valid = int(round(n_valid * long_train_fraction))
    n_long_test = int(round(n_test * long_test_fraction))
    n_long = n_long_train + n_long_valid + n_long_test
    n_short = n_train + n_valid + n_test - n_long
    if n_short > n_short_pool:
        raise ValueError(
            f"sizes={tuple(sizes)} with long_test_fraction={long_test_fraction} and long_train_fraction="
            f"{long_train_fraction} need {n_short} distinct numbers with fewer than {long_min_digits} "
            f"digits in [{low}, {high}], but only {n_short_pool} exist "
            f"([{low}, {short_high}]); lower sizes, widen [low, high] or raise long_min_digits")
    if n_long > n_long_pool:
        raise ValueError(
            f"sizes={tuple(sizes)} with long_test_fraction={long_test_fraction} and long_train_fraction="
            f"{long_train_fraction} need {n_long} distinct long numbers (>= {long_min_digits} digits) in "
            f"[{low}, {high}], but only {n_long_pool} exist; lower sizes or the fractions, or lower "
            f"long_min_digits")

    rng = np.random.default_rng(seed)
    short = (low + rng.choice(n_short_pool, size=n_short, replace=False)).tolist() \
        if n_short else []
    long = (long_start + rng.choice(n_long_pool, size=n_long, replace=False)).tolist() \
        if n_long else []
    s_train, s_valid = n_train - n_long_train, n_valid - n_long_valid
    train_nums = short[:s_train] + long[:n_long_train]
    valid_nums = short[s_train:s_train + s_valid] + long[n_long_train:n_long_train + n_long_valid]
    test_nums = short[s_train + s_valid:] + long[n_long_train + n_long_valid:]
    train_nums, valid_nums, test_nums = ([nums[i] for i in rng.permutation(len(nums))]
                                         for nums in (train_nums, valid_nums, test_nums))
    test_is_long = [n >= long_start for n in test_nums]

    def pairs(nums: list[int]) -> list[tuple[str, str]]:
        return [(numbers_to_words(n, "en"), numbers_to_words(n, target_lang)) for n in nums]

    return TranslationSplits(
        train=pairs(train_nums), valid=pairs(valid_nums), test=pairs(test_nums),
        metadata={
            "task": "numbers", "source_lang": "en", "target_lang": target_lang,
            "low": low, "high": high, "sizes": (n_train, n_valid, n_test), "seed": int(seed),
            "long_test_fraction": long_test_fraction, "long_train_fraction": long_train_fraction,
            "long_min_digits": long_min_digits,
            "long_start": long_start,
            "numbers": {"train": train_nums, "valid": valid_nums, "test": test_nums},
            "test_is_long": test_is_long,
        })
