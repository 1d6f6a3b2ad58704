"""The dates task (Babel / CLDR): targets checked against Babel itself, splits by date, phrasings, errors."""

import datetime
from collections import Counter

import pytest
from babel.dates import format_date, format_skeleton, get_day_names, get_month_names

from txcourse.data import CharTokenizer, get_task
from txcourse.data.dates import PHRASINGS, TARGET_LANGS, date_source, date_target, make_dates_task
from txcourse.data.prepare import prepare_task

SMALL = dict(sizes=(700, 70, 140), seed=0)
ENGLISH_DAYS = set(get_day_names("wide", locale="en").values()) | set(
    get_day_names("abbreviated", locale="en").values()
)


def babel_source(date, locale, pattern):
    """What Babel writes for ``date`` in ``locale`` with a CLDR format name or a skeleton."""
    if pattern in ("full", "long", "medium", "short"):
        return format_date(date, format=pattern, locale=locale)
    return format_skeleton(pattern, date, locale=locale)


def names_weekday(source):
    """Whether an English source names a weekday (any of CLDR's wide or abbreviated English day names)."""
    return any(word.strip(",") in ENGLISH_DAYS for word in source.split())


@pytest.mark.parametrize("lang", sorted(TARGET_LANGS))
def test_every_pair_is_what_babel_writes_for_its_date(lang):
    s = make_dates_task(target_lang=lang, **SMALL)
    assert s.metadata["target_lang"] == lang and s.metadata["task"] == "dates"
    for split in ("train", "valid", "test"):
        dates, phrasings = s.metadata["dates"][split], s.metadata["phrasing"][split]
        assert len(dates) == len(phrasings) == len(s[split])
        for date, phrasing, (src, tgt) in zip(dates, phrasings, s[split]):
            locale, pattern, _ = PHRASINGS[phrasing]
            assert src == babel_source(date, locale, pattern)
            # the target names the weekday exactly when the English source does
            assert tgt == format_date(date, format="full" if names_weekday(src) else "long", locale=lang)


def test_korean_puts_the_year_first_and_the_weekday_last():
    s = make_dates_task(**SMALL)
    korean_days = get_day_names("wide", locale="ko")
    for date, (src, tgt) in zip(s.metadata["dates"]["test"], s.test):
        assert tgt.startswith(f"{date.year}년 ")  # the year first, whatever the English order
        assert str(date.year) in src and not src.startswith(str(date.year))  # in English never first
        assert tgt.endswith(korean_days[date.weekday()]) == names_weekday(src)


def test_date_source_and_target_are_babels():
    d = datetime.date(2026, 3, 3)
    for name, (locale, pattern, _) in PHRASINGS.items():
        assert date_source(d, name) == babel_source(d, locale, pattern)
    for lang in TARGET_LANGS:
        assert date_target(d, lang) == format_date(d, format="full", locale=lang)
        assert date_target(d, lang, weekday=False) == format_date(d, format="long", locale=lang)


def test_every_source_names_one_date():
    """No phrasing writes the year in two digits, and no two phrasings read the same text as different dates."""
    first, last = datetime.date(1900, 1, 1), datetime.date(2099, 12, 31)
    seen: dict[str, datetime.date] = {}
    for k in range(0, (last - first).days + 1, 37):  # every 37th day of the range
        d = first + datetime.timedelta(days=k)
        for name in PHRASINGS:
            text = date_source(d, name)
            assert str(d.year) in text
            assert seen.setdefault(text, d) == d, f"{text!r} is written for {seen[text]} and {d}"


def test_splits_share_no_date_and_stay_in_range():
    s = make_dates_task(first_year=1990, last_year=1999, sizes=(2000, 300, 300), seed=4)
    dates = s.metadata["dates"]
    train, valid, test = set(dates["train"]), set(dates["valid"]), set(dates["test"])
    assert (len(train), len(valid), len(test)) == (2000, 300, 300)  # no date twice within a split
    assert not (train & valid) and not (train & test) and not (valid & test)
    assert all(datetime.date(1990, 1, 1) <= d <= datetime.date(1999, 12, 31) for d in train | valid | test)
    # every day of a range can be drawn: a leap year's 366
    everything = make_dates_task(first_year=2000, last_year=2000, sizes=(300, 33, 33), seed=0)
    assert len({d for split in everything.metadata["dates"].values() for d in split}) == 366


def test_deterministic_for_a_seed_and_different_across_seeds():
    a, b, c = make_dates_task(**SMALL), make_dates_task(**SMALL), make_dates_task(sizes=SMALL["sizes"], seed=1)
    assert a.as_dict() == b.as_dict() and a.metadata == b.metadata
    assert a.train != c.train and a.test != c.test


def test_every_phrasing_weekday_and_month_appears_evenly():
    s = make_dates_task(**SMALL)
    for split, size in zip(("train", "valid", "test"), SMALL["sizes"]):
        counts = Counter(s.metadata["phrasing"][split])
        assert set(counts) == set(PHRASINGS)
        assert max(counts.values()) - min(counts.values()) <= 1 and sum(counts.values()) == size
    targets = " ".join(t for _, t in s.train)
    assert all(day in targets for day in get_day_names("wide", locale="ko").values())
    sources = " ".join(src for src, _ in s.train)
    assert all(day in sources for day in get_day_names("wide", locale="en").values())
    assert all(month in sources for month in get_month_names("wide", locale="en").values())
    weekdays = Counter(d.weekday() for d in s.metadata["dates"]["train"])
    assert sorted(weekdays) == list(range(7))


def test_phrasings_argument_chooses_the_phrasings():
    s = make_dates_task(sizes=(20, 4, 6), seed=2, phrasings=["en yMd", "en_GB long"])
    assert all(set(s.metadata["phrasing"][split]) == {"en yMd", "en_GB long"} for split in ("train", "valid", "test"))
    assert all("/" in src or not src[0].isalpha() for src, _ in s.train)


def test_registry_and_character_tokenizers():
    s = get_task("dates", sizes=(14, 7, 7), seed=0)
    assert s.as_dict() == make_dates_task(sizes=(14, 7, 7), seed=0).as_dict()
    prepared = prepare_task("dates", sizes=(70, 7, 7))
    assert isinstance(prepared.src_tokenizer, CharTokenizer) and isinstance(prepared.tgt_tokenizer, CharTokenizer)
    src, tgt = prepared.splits.train[0]
    assert prepared.src_tokenizer.decode(prepared.src_tokenizer.encode(src)) == src
    assert prepared.tgt_tokenizer.decode(prepared.tgt_tokenizer.encode(tgt)) == tgt


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(target_lang="de"),
            r"target_lang must be one of 'ko' \(Korean\), 'es' \(Spanish\), 'fr' \(French\); got 'de'",
        ),
        (dict(first_year=0), "first_year must be an integer >= 1, got 0"),
        (dict(first_year=1950.0), "first_year must be an integer >= 1, got 1950.0"),
        (dict(first_year=2000, last_year=1999), "last_year must be an integer >= 2000, got 1999"),
        (dict(last_year=10000), r"last_year must be at most 9999 \(datetime.date's last year\), got 10000"),
        (dict(sizes=(1, 2)), r"sizes must be a tuple \(train, valid, test\) of 3 integers, got \(1, 2\)"),
        (dict(sizes=(10, -1, 1)), "sizes must hold non-negative integers, got valid=-1"),
        (
            dict(first_year=2001, last_year=2001, sizes=(300, 40, 30)),
            r"sizes=\(300, 40, 30\) ask for 370 distinct dates, but 2001-2001 has only 365 days",
        ),
        (dict(seed=1.5), "seed must be an integer, got 1.5"),
        (dict(phrasings="en full"), "phrasings must be a non-empty list of names from"),
        (dict(phrasings=()), "phrasings must be a non-empty list of names from"),
        (dict(phrasings=("en full", "en short")), r"phrasings\[1\] must be one of \['en full'.*got 'en short'"),
        (dict(phrasings=("en long", "en long")), r"phrasings must be distinct, got \['en long', 'en long'\]"),
    ],
)
def test_argument_errors_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_dates_task(**{"sizes": (7, 7, 7), **kwargs})


def test_date_function_errors():
    d = datetime.date(2026, 3, 3)
    with pytest.raises(ValueError, match="date must be a datetime.date, got str '2026-03-03'"):
        date_source("2026-03-03")
    with pytest.raises(ValueError, match="date must be a datetime.date, got datetime"):
        date_target(datetime.datetime(2026, 3, 3, 12, 0))
    with pytest.raises(ValueError, match=r"phrasing must be one of \[.*got 'en short'"):
        date_source(d, "en short")
    with pytest.raises(ValueError, match="lang must be one of 'ko' .*got 'ja'"):
        date_target(d, "ja")
    with pytest.raises(ValueError, match="weekday must be True or False, got 'yes'"):
        date_target(d, "ko", weekday="yes")
