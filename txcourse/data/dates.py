"""The ``dates`` translation task: a date as English writes it -> the same date as Korean (Spanish, French) writes it.

A task that **reorders**. English puts the month or the day first and the
year last; Korean writes the year first and the weekday last::

    en (CLDR "full"):  "Tuesday, March 3, 2026"
    ko (CLDR "full"):  "2026년 3월 3일 화요일"
    es (CLDR "full"):  "martes, 3 de marzo de 2026"
    fr (CLDR "full"):  "mardi 3 mars 2026"

Both sides are the Unicode CLDR's own renderings, made by Babel
(``babel.dates.format_date``), which ships the CLDR data in its wheel: the
task needs no download, and every target is what a real localisation
library writes, never a string typed by hand.

**Phrasings.** The source is written in one of the :data:`PHRASINGS`, each a
CLDR format of an English locale: ``"en full"`` ("Tuesday, March 3, 2026"),
``"en long"`` ("March 3, 2026"), ``"en medium"`` ("Mar 3, 2026"),
``"en yMMMEd"`` ("Tue, Mar 3, 2026", a CLDR skeleton), ``"en yMd"``
("3/3/2026"), ``"en_GB full"`` ("Tuesday, 3 March 2026") and ``"en_GB long"``
("3 March 2026"). CLDR's ``"short"`` English format writes the year in two
digits ("3/3/26"), which cannot tell 1926 from 2026, and the British numeric
date (day first: "04/03/2026" is 4 March) is also the American rendering
(month first) of another day for 1,200 of the 73,049 days of 1900-2099,
those whose month and day are both 10-12 and differ ("12/11/2026": 12
November or 11 December): both are left out, so every source names exactly
one date.

**The target says what the source says.** A source that names the weekday
gets CLDR's ``"full"`` target format, which names it too ("2026년 3월 3일
화요일"); a source without one gets the ``"long"`` format ("2026년 3월 3일").
Asking for the weekday of "3/3/2026" would ask the model to compute a
calendar, not to translate.

**Splits by date.** Every pair has its own date, drawn without replacement
from every day of ``[first_year, last_year]`` (1900-2099 by default), so no
date of the valid or test split is in training, in any phrasing. Within a
split the phrasings are dealt out evenly (each one ``size / len(phrasings)``
times, rounded), shuffled with the dates.

Example:
    >>> s = make_dates_task(sizes=(70, 7, 14), seed=0)
    >>> len(s.train), len(s.valid), len(s.test)
    (70, 7, 14)
    >>> import datetime
    >>> date_source(datetime.date(2026, 3, 3), "en full"), date_target(datetime.date(2026, 3, 3), "ko", True)
    ('Tuesday, March 3, 2026', '2026년 3월 3일 화요일')
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import numpy as np

from txcourse.data._checks import check_int, is_int
from txcourse.data.splits import SPLIT_NAMES, TranslationSplits, check_sizes
from txcourse.errors import TxcourseError

__all__ = ["PHRASINGS", "TARGET_LANGS", "date_source", "date_target", "make_dates_task"]

# name -> (English locale, CLDR format: "full" | "long" | "medium", or a skeleton for babel.dates.format_skeleton,
# whether the phrasing names the weekday)
PHRASINGS: dict[str, tuple[str, str, bool]] = {
    "en full": ("en", "full", True),  # Tuesday, March 3, 2026
    "en long": ("en", "long", False),  # March 3, 2026
    "en medium": ("en", "medium", False),  # Mar 3, 2026
    "en yMMMEd": ("en", "yMMMEd", True),  # Tue, Mar 3, 2026
    "en yMd": ("en", "yMd", False),  # 3/3/2026
    "en_GB full": ("en_GB", "full", True),  # Tuesday, 3 March 2026
    "en_GB long": ("en_GB", "long", False),  # 3 March 2026
}
TARGET_LANGS = {"ko": "Korean", "es": "Spanish", "fr": "French"}  # the source side is always English
_FORMATS = ("full", "long", "medium", "short")
_YEARS = (1, 9999)  # the years Python's datetime.date holds


def _check_date(name: str, value) -> datetime.date:
    if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
        raise TxcourseError(f"{name} must be a datetime.date, got {type(value).__name__} {value!r}", name)
    return value


def _check_phrasing(name: str, value) -> str:
    if value not in PHRASINGS:
        raise TxcourseError(f"{name} must be one of {list(PHRASINGS)}, got {value!r}", name)
    return value


def _check_target_lang(name: str, value) -> str:
    if value not in TARGET_LANGS:
        listed = ", ".join(f"{code!r} ({lang})" for code, lang in TARGET_LANGS.items())
        raise TxcourseError(f"{name} must be one of {listed}; got {value!r}", name)
    return value


def date_source(date: datetime.date, phrasing: str = "en full") -> str:
    """``date`` written in English in one of the :data:`PHRASINGS`, by Babel from the CLDR data.

    Example:
        >>> import datetime
        >>> d = datetime.date(1999, 12, 31)
        >>> date_source(d, "en long"), date_source(d, "en yMd"), date_source(d, "en_GB full")
        ('December 31, 1999', '12/31/1999', 'Friday, 31 December 1999')
    """
    from babel.dates import format_date, format_skeleton

    date = _check_date("date", date)
    locale, pattern, _ = PHRASINGS[_check_phrasing("phrasing", phrasing)]
    if pattern in _FORMATS:
        return format_date(date, format=pattern, locale=locale)
    return format_skeleton(pattern, date, locale=locale)


def date_target(date: datetime.date, lang: str = "ko", weekday: bool = True) -> str:
    """``date`` as CLDR writes it in ``lang``: the ``"full"`` format (with the weekday) or ``"long"`` (without).

    Example:
        >>> import datetime
        >>> d = datetime.date(2026, 3, 3)
        >>> date_target(d, "ko", weekday=False), date_target(d, "fr")
        ('2026년 3월 3일', 'mardi 3 mars 2026')
    """
    from babel.dates import format_date

    date = _check_date("date", date)
    if not isinstance(weekday, bool):
        raise TxcourseError(f"weekday must be True or False, got {weekday!r}", "weekday")
    return format_date(date, format="full" if weekday else "long", locale=_check_target_lang("lang", lang))


def _check_phrasings(phrasings) -> tuple[str, ...]:
    if isinstance(phrasings, str) or not isinstance(phrasings, Sequence) or not phrasings:
        raise TxcourseError(
            f"phrasings must be a non-empty list of names from {list(PHRASINGS)}, got {phrasings!r}", "phrasings"
        )
    for i, name in enumerate(phrasings):
        _check_phrasing(f"phrasings[{i}]", name)
    if len(set(phrasings)) != len(phrasings):
        raise TxcourseError(f"phrasings must be distinct, got {list(phrasings)!r}", "phrasings")
    return tuple(phrasings)


def make_dates_task(
    target_lang: str = "ko",
    first_year: int = 1900,
    last_year: int = 2099,
    sizes: tuple[int, int, int] = (20000, 1000, 2100),
    seed: int = 0,
    phrasings: Sequence[str] = tuple(PHRASINGS),
) -> TranslationSplits:
    """Build train / valid / test pairs (a date in English, the same date in ``target_lang``).

    Every pair has a date of its own, drawn without replacement from the days
    of ``[first_year, last_year]``: the splits share no date. Each split deals
    its ``phrasings`` out evenly over its pairs; the target names the weekday
    exactly when the phrasing does (:func:`date_target`).

    Args:
        target_lang: ``"ko"`` (default), ``"es"`` or ``"fr"``.
        first_year: the first year of the range (from 1 to 9999).
        last_year: the last year (from ``first_year`` to 9999).
        sizes: number of pairs in (train, valid, test); together at most the
            number of days in the range (73,049 for 1900-2099).
        seed: random seed; the same arguments give the same splits.
        phrasings: the names of :data:`PHRASINGS` to write the sources in
            (default: all seven).

    Returns:
        :class:`TranslationSplits`; ``metadata["dates"][split]`` holds the
        ``datetime.date`` behind each pair, ``metadata["phrasing"][split]``
        the name of each pair's phrasing.

    Example:
        >>> s = make_dates_task(sizes=(14, 0, 7), seed=3, phrasings=("en long", "en yMd"))
        >>> sorted(set(s.metadata["phrasing"]["train"]))
        ['en long', 'en yMd']
        >>> set(s.metadata["dates"]["train"]) & set(s.metadata["dates"]["test"])
        set()
    """
    target_lang, first_year, last_year, (n_train, n_valid, n_test), phrasings = _check_dates_args(
        target_lang, first_year, last_year, sizes, seed, phrasings
    )
    dates, phrasing, pairs = _draw_dates(
        seed, first_year, last_year, (n_train, n_valid, n_test), phrasings, target_lang
    )
    return TranslationSplits(
        train=pairs["train"],
        valid=pairs["valid"],
        test=pairs["test"],
        metadata={
            "task": "dates",
            "source_lang": "en",
            "target_lang": target_lang,
            "first_year": first_year,
            "last_year": last_year,
            "sizes": (n_train, n_valid, n_test),
            "seed": int(seed),
            "phrasings": phrasings,
            "dates": dates,
            "phrasing": phrasing,
        },
    )


def _check_dates_args(target_lang, first_year, last_year, sizes, seed, phrasings) -> tuple:
    """:func:`make_dates_task`'s arguments, checked (each error names its argument): the values to use."""
    target_lang = _check_target_lang("target_lang", target_lang)
    first_year = check_int("first_year", first_year, minimum=_YEARS[0])
    last_year = check_int("last_year", last_year, minimum=first_year)
    if last_year > _YEARS[1]:
        raise TxcourseError(
            f"last_year must be at most {_YEARS[1]} (datetime.date's last year), got {last_year}", "last_year"
        )
    n_train, n_valid, n_test = check_sizes(sizes)
    if not is_int(seed):
        raise TxcourseError(f"seed must be an integer, got {seed!r}", "seed")
    phrasings = _check_phrasings(phrasings)
    days = (datetime.date(last_year, 12, 31) - datetime.date(first_year, 1, 1)).days + 1
    if n_train + n_valid + n_test > days:
        raise TxcourseError(
            f"sizes={tuple(sizes)} ask for {n_train + n_valid + n_test} distinct dates, but {first_year}-{last_year} "
            f"has only {days} days; lower sizes or widen [first_year, last_year]",
            "sizes",
        )
    return target_lang, first_year, last_year, (n_train, n_valid, n_test), phrasings


def _draw_dates(seed, first_year: int, last_year: int, sizes: tuple[int, int, int], phrasings, target_lang: str):
    """The dates of each split (distinct days), the phrasing of each (dealt out evenly) and the pairs."""
    first = datetime.date(first_year, 1, 1)
    days = (datetime.date(last_year, 12, 31) - first).days + 1
    n_train, n_valid, n_test = sizes
    rng = np.random.default_rng(seed)
    offsets = rng.choice(days, size=n_train + n_valid + n_test, replace=False)  # distinct days, in random order
    bounds = np.cumsum([0, n_train, n_valid, n_test])
    dates, phrasing, pairs = {}, {}, {}
    for i, split in enumerate(SPLIT_NAMES):
        dates[split] = [first + datetime.timedelta(days=int(k)) for k in offsets[bounds[i] : bounds[i + 1]]]
        size = len(dates[split])
        dealt = np.arange(size) % len(phrasings)  # (size,) every phrasing size / len(phrasings) times, rounded
        phrasing[split] = [phrasings[k] for k in rng.permutation(dealt)]
        pairs[split] = [
            (date_source(d, p), date_target(d, target_lang, weekday=PHRASINGS[p][2]))
            for d, p in zip(dates[split], phrasing[split])
        ]
    return dates, phrasing, pairs
