"""English dates as people type them (txcourse.data.english_dates) and what the dates task gives its model."""

import datetime

import pytest

from txcourse import TxcourseError
from txcourse.data.dates import PHRASINGS, date_source
from txcourse.data.english_dates import NotADate, ParsedDate, parse_date, trained_phrasing
from txcourse.data.tasks import DatesTask, ModelInput, RefusedInput, task_of

MARCH_3 = datetime.date(2026, 3, 3)  # a Tuesday
TASK = DatesTask("dates")
OUTSIDE = "year 1850 is outside the years this model was trained on (1900-2099): its translation may be wrong"


# the cases of issue 32's table: (typed, the model's input, its warnings) or (typed, the reason refused)
TRANSLATED = [
    ("March 3, 1850", "March 3, 1850", (OUTSIDE,)),
    ("Sunday, March 3, 1850", "Sunday, March 3, 1850", (OUTSIDE,)),
    ("tuesday, march 3, 2026", "Tuesday, March 3, 2026", ()),
    ("March 3rd, 2026", "March 3, 2026", ()),
    ("Wednesday, January 1, 2025", "Wednesday, January 1, 2025", ()),
]
REFUSED = [
    ("Monday, March 3, 2026", "'Monday, March 3, 2026': March 3, 2026 is a Tuesday, not a Monday"),
    ("February 30, 2026", "'February 30, 2026': no 30 February in 2026 (February 2026 has 28 days)"),
    ("February 29, 2025", "'February 29, 2025': no 29 February in 2025 (2025 is not a leap year)"),
    ("April 31, 2026", "'April 31, 2026': no 31 April in 2026 (April 2026 has 30 days)"),
    ("13/13/2026", "'13/13/2026': month 13 does not exist"),
    ("March 3", "'March 3': no year; a date is translated with its year, e.g. 'March 3, 2026'"),
]


@pytest.mark.parametrize("typed, model_input, warnings", TRANSLATED)
def test_the_issue_table_dates_that_are_translated(typed, model_input, warnings):
    assert TASK.model_input(typed) == ModelInput(model_input, warnings)


@pytest.mark.parametrize("typed, reason", REFUSED)
def test_the_issue_table_dates_that_are_refused_with_the_reason(typed, reason):
    with pytest.raises(RefusedInput) as err:
        TASK.model_input(typed)
    assert str(err.value) == reason and isinstance(err.value, TxcourseError)
    with pytest.raises(NotADate, match="^" + reason.replace("(", r"\(").replace(")", r"\)") + "$"):
        parse_date(typed)


@pytest.mark.parametrize(
    "typed",
    [
        "Tuesday, March 3, 2026",
        "TUESDAY, MARCH 3, 2026",
        "tuesday march 3 2026",
        "  Tuesday ,   March  3 ,  2026  ",
        "Tuesday, March 3rd, 2026",
        "Tuesday, March 03, 2026",
        "tUeSdAy, mArCh 3RD, 2026",
    ],
)
def test_case_spaces_commas_and_ordinals_do_not_matter(typed):
    assert parse_date(typed) == ParsedDate(MARCH_3, True, "month first", "wide")
    assert TASK.model_input(typed).text == "Tuesday, March 3, 2026"


@pytest.mark.parametrize(
    "typed, phrasing, parsed",
    [
        ("March 3, 2026", "en long", ParsedDate(MARCH_3, False, "month first", "wide")),
        ("Mar 3, 2026", "en medium", ParsedDate(MARCH_3, False, "month first", "abbreviated")),
        ("mar. 3 2026", "en medium", ParsedDate(MARCH_3, False, "month first", "abbreviated")),
        ("Tue, Mar 3, 2026", "en yMMMEd", ParsedDate(MARCH_3, True, "month first", "abbreviated")),
        ("3/3/2026", "en yMd", ParsedDate(MARCH_3, False, "numeric", "numeric")),
        ("03/03/2026", "en yMd", ParsedDate(MARCH_3, False, "numeric", "numeric")),
        ("2026-03-03", "en yMd", ParsedDate(MARCH_3, False, "numeric", "numeric")),
        ("Tuesday, 3 March 2026", "en_GB full", ParsedDate(MARCH_3, True, "day first", "wide")),
        ("3rd March 2026", "en_GB long", ParsedDate(MARCH_3, False, "day first", "wide")),
        ("tue 3 mar 2026", "en_GB full", ParsedDate(MARCH_3, True, "day first", "abbreviated")),
        ("Tuesday 2026-03-03", "en full", ParsedDate(MARCH_3, True, "numeric", "numeric")),
    ],
)
def test_each_form_goes_to_the_closest_trained_phrasing(typed, phrasing, parsed):
    assert parse_date(typed) == parsed
    assert trained_phrasing(parsed) == phrasing
    assert TASK.model_input(typed) == ModelInput(date_source(MARCH_3, phrasing))


def test_en_gb_abbreviations_are_read():
    """CLDR's en_GB abbreviates September "Sept" (en: "Sep")."""
    for typed in ("3 Sept 2026", "3 Sep 2026", "Sept. 3, 2026", "Thu, 3 Sept 2026"):
        assert parse_date(typed).date == datetime.date(2026, 9, 3), typed


def test_only_trained_phrasings_are_given_to_the_model():
    """A checkpoint trained on some phrasings gets the closest of those (its kwargs record them)."""
    task = task_of({"name": "dates", "kwargs": {"phrasings": ["en long", "en yMd"], "first_year": 2000}})
    assert isinstance(task, DatesTask) and task.years == (2000, 2099)
    assert task.model_input("Tuesday, March 3, 2026").text == "March 3, 2026"
    assert task.model_input("2026-03-03").text == "3/3/2026"
    assert task.model_input("3 Mar 2026").text == "March 3, 2026"
    assert task.model_input("March 3, 1999").warnings == (
        "year 1999 is outside the years this model was trained on (2000-2099): its translation may be wrong",
    )
    assert task.model_input("March 3, 2100").warnings[0].startswith("year 2100 is outside the years")
    assert task.model_input("March 3, 2000").warnings == task.model_input("December 31, 2099").warnings == ()


@pytest.mark.parametrize(
    "typed, reason",
    [
        ("zebra", "'zebra' is not an English date: it names no month (write one date, e.g. 'Tuesday, March 3, "),
        ("", "'' holds no date"),
        ("Tuesday", "'Tuesday' is not an English date: it names no month"),
        ("March 2026", "'March 2026': no day; write the day of the month, e.g. 'March 3, 2026'"),
        ("3rd March", "'3rd March': no year; a date is translated with its year, e.g. 'March 3, 2026'"),
        ("March 3th, 2026", "'March 3th, 2026': '3th' is not an English ordinal; write '3rd'"),
        ("March 22th, 2026", "'March 22th, 2026': '22th' is not an English ordinal; write '22nd'"),
        ("March 3, 26", "'March 3, 26': the year '26' is not written in four digits; write it in full"),
        ("3/3/26", "'3/3/26': the year '26' is not written in four digits; write it in full"),
        (
            "13/3/2026",
            "'13/3/2026': month 13 does not exist (a numeric date is month first, M/d/yyyy, as the task writes it: "
            "3/13/2026 is March 13)",
        ),
        ("2026-13-01", "'2026-13-01': month 13 does not exist"),
        ("March 0, 2026", "'March 0, 2026': day 0 does not exist"),
        ("March 32, 2026", "'March 32, 2026': no 32 March in 2026 (March 2026 has 31 days)"),
        ("March 3, 0000", "'March 3, 0000': year 0 does not exist (the calendar starts at year 1)"),
        ("March April 3, 2026", "'March April 3, 2026' is not an English date: it names 2 months"),
        ("March 3, 2026, 2027", "'March 3, 2026, 2027' is not an English date: expected a month, a day and a year"),
        ("March x, 2026", "'March x, 2026': 'x' is not a day of the month"),
        ("March 3, 20x6", "'March 3, 20x6': '20x6' is not a year (four digits, last)"),
        ("March 3, 2026 Tuesday", "'March 3, 2026 Tuesday' is not an English date: expected a month, a day"),
        ("Mardi 3 mars 2026", "'Mardi 3 mars 2026' is not an English date: it names no month"),
        ("Tue, 2 Mar 2026", "'Tue, 2 Mar 2026': March 2, 2026 is a Monday, not a Tuesday"),
    ],
)
def test_what_names_no_date_is_refused_with_the_reason(typed, reason):
    with pytest.raises(NotADate) as err:
        parse_date(typed)
    assert str(err.value).startswith(reason), str(err.value)


def test_a_long_line_is_quoted_short():
    with pytest.raises(NotADate) as err:
        parse_date("x" * 10_000)
    assert len(str(err.value)) < 250 and "x" * 41 not in str(err.value)


def test_february_29_exists_in_leap_years_only():
    assert parse_date("February 29, 2024").date == datetime.date(2024, 2, 29)
    assert parse_date("29 February 2000").date == datetime.date(2000, 2, 29)
    with pytest.raises(NotADate, match=r"no 29 February in 1900 \(1900 is not a leap year\)"):
        parse_date("February 29, 1900")


@pytest.mark.parametrize("year", [1900, 2024, 2026, 2099])
def test_every_day_in_every_phrasing_parses_back_to_itself(year):
    """Property: each day of a year, rendered by CLDR in each phrasing the task trains on, reads back as that day,
    with the weekday exactly when the phrasing names it, and reaches the model unchanged (as its own phrasing renders
    it; "May 1, 1900" is both "en long" and "en medium")."""
    day = datetime.date(year, 1, 1)
    while day.year == year:
        for phrasing, (_, _, weekday) in PHRASINGS.items():
            text = date_source(day, phrasing)
            parsed = parse_date(text)
            assert (parsed.date, parsed.weekday) == (day, weekday), (phrasing, text)
            assert date_source(day, trained_phrasing(parsed)) == text, (phrasing, text)  # "May": wide = abbreviated
            assert parse_date(text.upper()) == parse_date(text.lower()) == parsed, text
        day += datetime.timedelta(days=1)


@pytest.mark.parametrize("year", [1900, 2024])
def test_every_day_as_iso_and_with_ordinals_parses_back(year):
    day = datetime.date(year, 1, 1)
    while day.year == year:
        suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(day.day, "th")
        assert parse_date(day.isoformat()).date == day
        assert parse_date(f"{day:%B} {day.day}{suffix}, {year}").date == day
        assert parse_date(f"{day:%A}, {day.day}{suffix} {day:%b} {year}").date == day
        day += datetime.timedelta(days=1)
