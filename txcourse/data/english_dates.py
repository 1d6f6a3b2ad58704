"""English dates -> the date: the source side of the ``dates`` task as people type it.

The task trains on seven CLDR renderings of a date (:data:`txcourse.data.dates.PHRASINGS`, made by Babel):
"Tuesday, March 3, 2026", "March 3, 2026", "Mar 3, 2026", "Tue, Mar 3, 2026", "3/3/2026",
"Tuesday, 3 March 2026", "3 March 2026". Its model reads characters, so "tuesday, march 3, 2026" (lower case),
"March 3rd, 2026" (an ordinal day) or "2026-03-03" (ISO) are strings it never saw, and it guesses; a date that
does not exist ("February 30, 2026") or a weekday that is not the date's ("Monday, March 3, 2026") it
translates as if they were right. :func:`parse_date` reads a typed date with the same CLDR data the task is
built from and refuses, with the reason, what names no date; :func:`trained_phrasing` picks the phrasing
the model was trained on that is closest to what was typed, and ``txcourse translate`` gives the model that
rendering (:class:`txcourse.data.tasks.DatesTask`), as it gives the numbers model the canonical number.

What is read (case never matters; commas are optional, runs of spaces count as one):

* the month by its CLDR name, wide or abbreviated, of the ``en`` and ``en_GB`` locales (Babel's
  ``get_month_names``: "March", "Mar", "Sept"), an abbreviation with or without a full stop ("Mar.");
* the day as a number, 1 or 2 digits, or an English ordinal with its own suffix ("1st", "2nd", "3rd",
  "22nd", "11th"; "3th" is refused);
* month first ("March 3, 2026", CLDR ``en``) or day first ("3 March 2026", CLDR ``en_GB``): a month name
  says which is which;
* the year in four digits, last; a date without a year ("March 3") is refused, never completed;
* optionally a weekday first, wide or abbreviated (Babel's ``get_day_names``: "Tuesday", "Tue"), which
  must be the date's own weekday;
* the numeric date the task trains on, CLDR ``en`` ``yMd``: month first, ``M/d/yyyy`` ("3/3/2026",
  "03/03/2026"), and ISO 8601 ``yyyy-MM-dd`` ("2026-03-03").

**Why not d/M/yyyy.** "04/03/2026" is 3 April in the United States and 4 March in Britain. The task
trains on the American order only, because the two readings name different days for 1,200 of the 73,049
days of 1900-2099 (:mod:`txcourse.data.dates`); this module reads what the task trains on, so a numeric
date is month first, and "13/3/2026" is refused ("month 13 does not exist") rather than read as 13 March:
a reader who silently swapped day and month for 13-31 but not for 1-12 would make "12/11/2026" and
"13/11/2026" mean dates of two different conventions. A two-digit year ("3/3/26") is refused too: CLDR's
``short`` format writes one, and it cannot tell 1926 from 2026.

Example:
    >>> parse_date("tuesday, march 3rd, 2026")
    ParsedDate(date=datetime.date(2026, 3, 3), weekday=True, order='month first', month='wide')
    >>> trained_phrasing(parse_date("march 3rd 2026"))
    'en long'
    >>> parse_date("Monday, March 3, 2026")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    txcourse.data.english_dates.NotADate: 'Monday, March 3, 2026': March 3, 2026 is a Tuesday, not a Monday
"""

from __future__ import annotations

import calendar
import datetime
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from txcourse.errors import TxcourseError, quote

__all__ = ["NotADate", "ParsedDate", "parse_date", "trained_phrasing", "EXAMPLES", "LOCALES"]

LOCALES = ("en", "en_GB")  # the English locales of the task's phrasings (txcourse.data.dates.PHRASINGS)
EXAMPLES = "'Tuesday, March 3, 2026', 'March 3, 2026', '3 March 2026', '3/3/2026' or '2026-03-03'"
_ORDINALS = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}  # the others end in "th"
_DAY = re.compile(r"(\d{1,2})(st|nd|rd|th)?")
_NUMERIC = re.compile(r"(\d{1,2})/(\d{1,2})/(\d+)")  # M/d/y, CLDR en yMd
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")  # ISO 8601 yyyy-MM-dd


class NotADate(TxcourseError):
    """The text names no date (one that exists, with its year, and its own weekday if one is given); the
    message quotes the text and says why. A :class:`~txcourse.errors.TxcourseError`."""


@dataclass(frozen=True)
class ParsedDate:
    """A date as typed: the date, whether a weekday was named, the order and how the month was written.

    ``order`` is ``"month first"``, ``"day first"`` or ``"numeric"`` (M/d/yyyy and ISO); ``month`` is
    ``"wide"`` ("March"), ``"abbreviated"`` ("Mar") or ``"numeric"``.
    """

    date: datetime.date
    weekday: bool
    order: str
    month: str


@functools.lru_cache(maxsize=1)
def _names() -> tuple[dict[str, tuple[int, str]], dict[str, tuple[int, str]]]:
    """CLDR's English month names (lower case -> (month 1-12, "wide" | "abbreviated" | "both", as "May"
    is) and weekday names (lower case -> (weekday, Monday 0, width)) of :data:`LOCALES`, from Babel."""
    from babel.dates import get_day_names, get_month_names

    months: dict[str, tuple[int, str]] = {}
    weekdays: dict[str, tuple[int, str]] = {}
    for locale in LOCALES:
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, locale).items():
                    known = months.setdefault(name.lower(), (number, width))
                    if known[1] != width:
                        months[name.lower()] = (number, "both")
                for number, name in get_day_names(width, context, locale).items():
                    weekdays.setdefault(name.lower(), (number, width))
    return months, weekdays


def _month_name(number: int) -> str:
    return calendar.month_name[number]


def parse_date(text: str) -> ParsedDate:
    """The date ``text`` writes in English (see the module's docstring for what is read).

    Raises:
        NotADate: no date, a date that does not exist, a missing year or a weekday that is not the date's;
            the message quotes ``text`` (its first :data:`~txcourse.errors.SHOWN` characters) and says why.
    """
    shown = quote(" ".join(text.split()))
    words = text.lower().replace(",", " ").split()
    if not words:
        raise NotADate(f"{shown} holds no date")
    months, weekdays = _names()
    weekday, weekday_form = weekdays.get(words[0].rstrip("."), (None, None))
    rest = words[1:] if weekday is not None else words
    if len(rest) == 1 and (_NUMERIC.fullmatch(rest[0]) or _ISO.fullmatch(rest[0])):
        year, month, day, order, month_form = _numeric(rest[0], shown)
    else:
        year, month, day, order, month_form = _in_words(rest, months, weekdays, shown)
    date = _existing(year, month, day, shown)
    if weekday is not None and weekday != date.weekday():
        written = f"{_month_name(month)} {day}, {year}"
        raise NotADate(
            f"{shown}: {written} is a {calendar.day_name[date.weekday()]}, not a {calendar.day_name[weekday]}"
        )
    if month_form == "both":  # "May" is wide and abbreviated: "Tue, May 5, 2026" is en yMMMEd, else wide
        month_form = "abbreviated" if weekday_form == "abbreviated" else "wide"
    return ParsedDate(date, weekday is not None, order, month_form)


def _numeric(word: str, shown: str) -> tuple[int, int, int, str, str]:
    """(year, month, day, order, month form) of "M/d/yyyy" or "yyyy-MM-dd"."""
    if match := _ISO.fullmatch(word):
        year, month, day = (int(g) for g in match.groups())
        return year, month, day, "numeric", "numeric"
    month, day, year_digits = _NUMERIC.fullmatch(word).groups()
    if len(year_digits) != 4:
        raise NotADate(f"{shown}: the year {quote(year_digits)} is not written in four digits; write it in full")
    month_number, day_number = int(month), int(day)
    if month_number > 12:
        hint = ""
        if day_number <= 12:
            hint = (
                f" (a numeric date is month first, M/d/yyyy, as the task writes it: "
                f"{day_number}/{month_number}/{year_digits} is {_month_name(day_number)} {month_number})"
            )
        raise NotADate(f"{shown}: month {month_number} does not exist{hint}")
    return int(year_digits), month_number, day_number, "numeric", "numeric"


def _in_words(
    words: Sequence[str], months: dict[str, tuple[int, str]], weekdays: dict[str, tuple[int, str]], shown: str
) -> tuple[int, int, int, str, str]:
    """(year, month, day, order, month form) of [month, day, year] or [day, month, year]."""
    found = [i for i, w in enumerate(words) if w.rstrip(".") in months or w in months]
    if len(found) != 1:
        late = [w for w in words[1:] if w.rstrip(".") in weekdays]
        if late and not found:
            raise NotADate(f"{shown}: the weekday {quote(late[0])} stands first, if at all (e.g. {EXAMPLES})")
        many = f"names {len(found)} months" if found else "names no month"
        raise NotADate(f"{shown} is not an English date: it {many} (write one date, e.g. {EXAMPLES})")
    at = found[0]
    key = words[at] if words[at] in months else words[at].rstrip(".")
    month, month_form = months[key]
    others = list(words[:at]) + list(words[at + 1 :])
    if at == 0 and len(others) == 2:
        order, day_word, year_word = "month first", others[0], others[1]
    elif at == 1 and len(others) == 2:
        order, day_word, year_word = "day first", others[0], others[1]
    elif len(others) == 1 and _DAY.fullmatch(others[0]) and len(others[0]) <= 4 and at in (0, 1):
        raise NotADate(
            f"{shown}: no year; a date is translated with its year, e.g. "
            f"'{_month_name(month)} {_DAY.fullmatch(others[0]).group(1)}, 2026'"
        )
    elif len(others) == 1 and others[0].isdigit() and len(others[0]) == 4:
        raise NotADate(f"{shown}: no day; write the day of the month, e.g. '{_month_name(month)} 3, {others[0]}'")
    else:
        raise NotADate(f"{shown} is not an English date: expected a month, a day and a year (e.g. {EXAMPLES})")
    return _year(year_word, shown), month, _day(day_word, shown), order, month_form


def _day(word: str, shown: str) -> int:
    match = _DAY.fullmatch(word)
    if not match:
        raise NotADate(f"{shown}: {quote(word)} is not a day of the month (a number, or an ordinal such as '3rd')")
    day, suffix = int(match.group(1)), match.group(2)
    if suffix and day and suffix != _ORDINALS.get(day, "th"):
        raise NotADate(f"{shown}: {quote(word)} is not an English ordinal; write '{day}{_ORDINALS.get(day, 'th')}'")
    return day


def _year(word: str, shown: str) -> int:
    if not word.isdigit():
        raise NotADate(f"{shown}: {quote(word)} is not a year (four digits, last)")
    if len(word) != 4:
        raise NotADate(f"{shown}: the year {quote(word)} is not written in four digits; write it in full")
    return int(word)


def _existing(year: int, month: int, day: int, shown: str) -> datetime.date:
    """The date, if it exists; else say why not ("no 30 February in 2026")."""
    if not 1 <= month <= 12:
        raise NotADate(f"{shown}: month {month} does not exist")
    if year < 1:
        raise NotADate(f"{shown}: year {year} does not exist (the calendar starts at year 1)")
    if day < 1:
        raise NotADate(f"{shown}: day {day} does not exist")
    last = calendar.monthrange(year, month)[1]
    if day > last:
        why = f"{_month_name(month)} {year} has {last} days"
        if month == 2 and day == 29:
            why = f"{year} is not a leap year"
        raise NotADate(f"{shown}: no {day} {_month_name(month)} in {year} ({why})")
    return datetime.date(year, month, day)


@functools.cache
def _features(phrasing: str) -> ParsedDate:
    """What :func:`parse_date` reads of a phrasing's rendering (weekday, order, month form)."""
    from txcourse.data.dates import date_source

    return parse_date(date_source(datetime.date(2026, 3, 3), phrasing))


def trained_phrasing(parsed: ParsedDate, phrasings: Optional[Sequence[str]] = None) -> str:
    """The phrasing of ``phrasings`` (default: every one of :data:`~txcourse.data.dates.PHRASINGS`) closest to
    what was typed: the same weekday choice first (the target names the weekday exactly when the source
    does), then the same order, then the same month form; ties go to the earlier phrasing.

    A rendering of a phrasing is its own closest phrasing: "Tue, Mar 3, 2026" -> "en yMMMEd"; "tuesday march
    3rd 2026" -> "en full"; "2026-03-03" -> "en yMd".
    """
    from txcourse.data.dates import PHRASINGS

    names = list(phrasings) if phrasings else list(PHRASINGS)

    def distance(name: str) -> tuple[int, int]:
        f = _features(name)
        return (
            4 * (f.weekday != parsed.weekday) + 2 * (f.order != parsed.order) + (f.month != parsed.month),
            names.index(name),
        )

    return min(names, key=distance)
