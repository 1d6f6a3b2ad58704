"""English number words -> the number: the source side of the ``numbers`` task as people write it.

The task trains on one way of writing each number, num2words' British one
("one hundred and five", "twelve thousand, three hundred and forty-five").
People also write "one hundred five" (American, no "and"), "a hundred",
"a thousand and one", "forty two" (no hyphen), "twelve hundred" (1200) and
"nineteen hundred and ninety-nine" (1999). :func:`parse_number` reads all of
these and refuses, with the reason, anything that is not one well-formed
English number: "one two three", "ten hundred", "one thousand thousand",
"hundred thousand" (no count), "nineteen ninety-nine" (a year), "and".
``txcourse translate`` uses it on a ``numbers`` checkpoint to hand the model
the canonical phrasing (:func:`canonical`) of what the user typed, and to
skip, with the reason, a line that is no number of the task's range.

Grammar (after lower-casing, dropping commas and turning hyphens into spaces)::

    number    := "zero" | thousands | hundreds-of
    thousands := [below1000 "thousand" ["and"]] [below1000]     (not both empty)
    below1000 := [count "hundred" ["and"]] [below100]           (not both empty)
    count     := "a" | one .. nine
    below100  := one .. nineteen | tens [one .. nine]           (tens: twenty .. ninety)
    hundreds-of := 11..99 "hundred" ["and"] [below100]          (not 20, 30, ...: "two thousand")

"and" may stand only after "hundred" or "thousand" (once in each group of three digits), never last.

Example:
    >>> parse_number("One hundred five"), parse_number("a thousand and one"), parse_number("twelve hundred")
    (105, 1001, 1200)
    >>> canonical("forty two thousand six hundred")
    'forty-two thousand, six hundred'
    >>> parse_number("nineteen ninety-nine")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    txcourse.data.english_numbers.NotANumber: 'nineteen ninety-nine' reads as two numbers (nineteen, ninety nine), ...
"""

from __future__ import annotations

from typing import Optional

from txcourse.errors import TxcourseError, quote, quote_each, shorten

__all__ = ["NotANumber", "parse_number", "canonical", "VARIANTS", "variants"]

UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
TEENS = {
    w: 10 + i
    for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())
}
TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
SCALES = {"million", "billion", "trillion", "millions", "billions", "thousands", "hundreds"}
WORDS = set(UNITS) | set(TEENS) | set(TENS) | {"hundred", "thousand", "and", "a"}


class NotANumber(TxcourseError):
    """The text is not one well-formed English number (in the range asked for); the message says why.

    A :class:`~txcourse.errors.TxcourseError` (a user's mistake, so a ``ValueError`` too).
    """


def _words(text: str) -> list[str]:
    return text.lower().replace(",", " ").replace("-", " ").split()


def _below100(words: list[str], i: int) -> tuple[Optional[int], int]:
    """A number 1-99 starting at words[i]: (value, next index), or (None, i)."""
    if i < len(words) and words[i] in TENS:
        value, i = TENS[words[i]], i + 1
        if i < len(words) and words[i] in UNITS and words[i] != "zero":
            value, i = value + UNITS[words[i]], i + 1
        return value, i
    if i < len(words) and words[i] in TEENS:
        return TEENS[words[i]], i + 1
    if i < len(words) and words[i] in UNITS and words[i] != "zero":
        return UNITS[words[i]], i + 1
    return None, i


def _below1000(words: list[str], i: int) -> tuple[Optional[int], int]:
    """A number 1-999 starting at words[i] ("a hundred and five", "seven"): (value, next index), or (None, i)."""
    start = i
    if (
        i + 1 < len(words)
        and words[i + 1] == "hundred"
        and (words[i] == "a" or (words[i] in UNITS and words[i] != "zero"))
    ):
        value, i = 100 * (1 if words[i] == "a" else UNITS[words[i]]), i + 2
        if i < len(words) and words[i] == "and":
            rest, j = _below100(words, i + 1)
            if rest is None:
                return value, i  # the caller reports the dangling "and"
            return value + rest, j
        rest, j = _below100(words, i)
        return value + (rest or 0), j
    value, i = _below100(words, start)
    return value, i


def parse_number(text: str, low: int = 0, high: int = 999_999) -> int:
    """The number ``text`` writes in English words, if it is one well-formed number in ``[low, high]``.

    Raises :class:`NotANumber` (a ValueError) saying why otherwise.
    """
    words = _words(text)
    shown = quote(" ".join(text.split()))  # at most SHOWN characters of it
    if not words:
        raise NotANumber(f"{quote(text)} holds no words")
    unknown = [w for w in words if w not in WORDS]
    if unknown:
        scale = [w for w in unknown if w in SCALES]
        if scale:
            raise NotANumber(f"{shown} uses {quote(scale[0])}: numbers from {low} to {high} only")
        raise NotANumber(f"{shown} has words that are not number words: {quote_each(dict.fromkeys(unknown))}")
    if words == ["zero"]:
        value = 0
    else:
        value = _parse_positive(words, shown)
    if not low <= value <= high:
        raise NotANumber(f"{shown} is {value}, outside the range {low} to {high}")
    return value


def _parse_positive(words: list[str], shown: str) -> int:
    if "zero" in words:
        raise NotANumber(f"{shown}: 'zero' stands only alone")
    if words[0] == "and" or words[-1] == "and":
        raise NotANumber(
            f"{shown}: 'and' joins two parts of a number, it cannot stand " + ("first" if words[0] == "and" else "last")
        )
    # "twelve hundred (and) five": 11-99 hundreds, the whole number
    head, i = _below100(words, 0)
    if head is not None and head > 9 and i < len(words) and words[i] == "hundred":
        if head % 10 == 0:
            raise NotANumber(
                f"{shown}: {words[0]} hundred is not said; write "
                f"{'one thousand' if head == 10 else 'the thousands'} (e.g. 'two thousand')"
            )
        value, i = 100 * head, i + 1
        if i < len(words) and words[i] == "and":
            i += 1
        rest, i = _below100(words, i)
        value += rest or 0
        return _done(words, i, value, shown)
    first, i = (1, 1) if words[:2] == ["a", "thousand"] else _below1000(words, 0)
    if i < len(words) and words[i] == "thousand":
        if first is None:
            raise NotANumber(f"{shown}: 'thousand' needs a count before it, e.g. 'a thousand' or 'one thousand'")
        i += 1
        if i < len(words) and words[i] == "and":
            i += 1
            rest, j = _below100(words, i)
            if rest is None:  # "two thousand and three hundred": 'and' before a hundreds part is not said
                raise NotANumber(f"{shown}: after 'thousand and' comes a number below 100")
            return _done(words, j, 1000 * first + rest, shown)
        rest, i = _below1000(words, i)
        return _done(words, i, 1000 * first + (rest or 0), shown)
    if first is None:
        what = words[0]
        if what in ("hundred", "thousand"):
            raise NotANumber(f"{shown}: {what!r} needs a count before it, e.g. 'a {what}' or 'one {what}'")
        raise NotANumber(f"{shown} does not start like a number")
    return _done(words, i, first, shown)


def _done(words: list[str], i: int, value: int, shown: str) -> int:
    """``value`` if the words are used up; else say what follows and why it cannot."""
    if i == len(words):
        return value
    rest = words[i:]
    if rest[0] in ("thousand", "hundred"):
        raise NotANumber(
            f"{shown}: {rest[0]!r} cannot follow here (a number says each scale once, largest "
            f"first, e.g. 'one hundred thousand', not 'one thousand thousand' or 'ten hundred')"
        )
    if rest[0] == "and":
        raise NotANumber(f"{shown}: 'and' may only follow 'hundred' or 'thousand'")
    second, _ = _below100(rest, 0)
    if second is None:
        raise NotANumber(f"{shown}: {rest[0]!r} cannot follow {quote(' '.join(words[:i]))}")
    parts = f"({shorten(' '.join(words[:i]))}, {shorten(' '.join(rest))})"
    if 10 <= value <= 99 and second >= 10:
        raise NotANumber(
            f"{shown} reads as two numbers {parts}, like a year; write it as one number, "
            f"e.g. {canonical_of(value * 100 + second)!r}"
        )
    raise NotANumber(f"{shown} reads as more than one number {parts}; write one number per line")


def canonical_of(n: int) -> str:
    """num2words' English for ``n``, the phrasing the ``numbers`` task trains on."""
    from txcourse.data.numbers import numbers_to_words

    return numbers_to_words(n, "en")


def canonical(text: str, low: int = 0, high: int = 999_999) -> str:
    """The task's own phrasing of the number ``text`` writes (raises :class:`NotANumber`)."""
    return canonical_of(parse_number(text, low, high))


# The ways of writing a number that `txcourse evaluate` scores, each made from the canonical phrasing.
VARIANTS = (
    "canonical",
    "no and",
    "no commas or hyphens",
    "a hundred / a thousand",
    "hundreds (1100-9999)",
    "upper case",
)


def variants(n: int) -> dict[str, str]:
    """``n`` written in each way of :data:`VARIANTS` that applies to it (``canonical`` always does)."""
    text = canonical_of(n)
    out = {"canonical": text}
    if " and " in text:
        out["no and"] = text.replace(" and ", " ")
    if "," in text or "-" in text:
        out["no commas or hyphens"] = text.replace(",", "").replace("-", " ")
    for scale in ("hundred", "thousand"):
        if text.startswith(f"one {scale}"):
            out["a hundred / a thousand"] = "a" + text[3:]
            break
    if 1100 <= n <= 9999 and (n // 100) % 10 != 0:
        hundreds, rest = divmod(n, 100)
        out["hundreds (1100-9999)"] = f"{canonical_of(hundreds)} hundred" + (
            f" and {canonical_of(rest)}" if rest else ""
        )
    out["upper case"] = text.upper()
    return out
