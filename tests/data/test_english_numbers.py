"""English number words (txcourse.data.english_numbers): every number, every phrasing, and what is no number."""

import os

import pytest

from txcourse.data.english_numbers import VARIANTS, NotANumber, canonical, parse_number, variants
from txcourse.data.numbers import numbers_to_words

# `make test` reads a subset that still meets every shape of phrasing; `make test-sweeps` (TXCOURSE_SWEEPS=1)
# reads the whole domain (about 90 s on one core).
SWEEP = os.environ.get("TXCOURSE_SWEEPS") == "1"


def _domain():
    """Every number (the sweep), or a subset with every number below 20,000, every 37th above, and around
    every thousand (n000, n001, n099, n100, n999: the edges of "thousand", "hundred" and "and")."""
    if SWEEP:
        return range(1_000_000)
    edges = {k * 1000 + r for k in range(1000) for r in (0, 1, 99, 100, 999)}
    return sorted(set(range(20_000)) | set(range(20_000, 1_000_000, 37)) | edges)


def test_every_number_in_every_phrasing_reads_back_exactly():
    """The whole domain, 0 to 999999, in each of the variants that applies to it (about 4.1 million phrasings)
    under `make test-sweeps`; a subset of about 50,000 numbers (every phrasing of each) otherwise."""
    domain = _domain()
    counts = dict.fromkeys(VARIANTS, 0)
    wrong = []
    for n in domain:
        for name, text in variants(n).items():
            counts[name] += 1
            try:
                got = parse_number(text)
            except NotANumber as err:
                got = str(err)
            if got != n:
                wrong.append((n, name, text, got))
    assert not wrong, wrong[:10]
    assert counts["canonical"] == counts["upper case"] == len(domain)
    share = 0.99 if SWEEP else 0.95  # the subset's round thousands have no hyphen to drop
    assert counts["no and"] > share * len(domain) and counts["no commas or hyphens"] > share * len(domain)
    assert counts["hundreds (1100-9999)"] == 8100  # every number below 20,000 is in both domains
    if SWEEP:
        assert counts["a hundred / a thousand"] == 1100 + 100_000  # 100-199, 1000-1999 ... one hundred thousand ...


def test_canonical_is_the_phrasing_the_task_trains_on():
    for n in (0, 7, 42, 105, 1001, 12345, 999999):
        assert canonical(numbers_to_words(n, "en")) == numbers_to_words(n, "en")


@pytest.mark.parametrize(
    "text, number",
    [
        ("one hundred five", 105),
        ("one hundred and five", 105),
        ("a hundred", 100),
        ("a thousand and one", 1001),
        ("a hundred thousand", 100000),
        ("forty two", 42),
        ("Forty-Two", 42),
        ("  forty   two ", 42),
        ("twelve hundred", 1200),
        ("nineteen hundred and ninety-nine", 1999),
        ("eleven hundred five", 1105),
        ("three hundred and five thousand", 305000),
        ("twenty thousand and one", 20001),
        ("ten thousand one", 10001),
        ("twelve thousand, three hundred and forty-five", 12345),
        ("zero", 0),
        ("nine hundred and ninety-nine thousand, nine hundred and ninety-nine", 999999),
    ],
)
def test_common_phrasings(text, number):
    assert parse_number(text) == number


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "holds no words"),
        ("zebra", "has words that are not number words: 'zebra'"),
        ("one million", "uses 'million': numbers from 0 to 999999 only"),
        ("one thousand thousand", "'thousand' cannot follow here"),
        ("ten hundred", "ten hundred is not said"),
        ("twenty hundred", "twenty hundred is not said"),
        ("hundred thousand", "'hundred' needs a count before it"),
        ("thousand", "'thousand' needs a count before it"),
        (
            "nineteen ninety-nine",
            "reads as two numbers (nineteen, ninety nine), like a year; write it as one number, "
            "e.g. 'one thousand, nine hundred and ninety-nine'",
        ),
        ("one two three", "reads as more than one number (one, two three)"),
        ("and", "'and' joins two parts of a number, it cannot stand first"),
        ("one hundred and", "it cannot stand last"),
        ("one and two", "'and' may only follow 'hundred' or 'thousand'"),
        ("one hundred and and five", "'and' may only follow 'hundred' or 'thousand'"),
        ("two thousand and three hundred", "'hundred' cannot follow here"),
        ("zero one", "'zero' stands only alone"),
        ("one hundred zero", "'zero' stands only alone"),
        (" ".join([numbers_to_words(999999)] * 2), "reads as more than one number"),
    ],
)
def test_what_is_not_one_number_is_refused_with_the_reason(text, reason):
    with pytest.raises(NotANumber) as err:
        parse_number(text)
    assert reason in str(err.value)
    assert isinstance(err.value, ValueError)


def test_the_range_is_the_task_s():
    assert parse_number("one hundred", low=100, high=999) == 100
    with pytest.raises(NotANumber, match=r"'ninety-nine' is 99, outside the range 100 to 999"):
        parse_number("ninety-nine", low=100, high=999)


def test_the_module_examples_run():
    import doctest

    import txcourse.data.english_numbers as module

    assert doctest.testmod(module).failed == 0
