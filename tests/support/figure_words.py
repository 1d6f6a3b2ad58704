"""The words of a figure drawn in two languages, checked against the figures' catalogue (issue 33).

``txcourse figures`` records the words each figure shows (``labels`` in its
manifest.json, txcourse.course.figures.build.figure_words); tests/course/test_figures.py
checks them on figures drawn in the test, tests/book/test_slides_browser.py on the
figures ``make figures`` drew for the Korean slide decks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def translatable(words: Iterable[str], catalogue: Mapping[str, str]) -> list[str]:
    """The words that are an English message of ``catalogue`` with a translation other than itself, sorted."""
    return sorted(w for w in set(words) if catalogue.get(w, w) != w)


def left_in_english(english: Iterable[str], translated: Iterable[str], catalogue: Mapping[str, str]) -> list[str]:
    """What is wrong with a figure's words in another language, given its English words: one line per English
    message of ``catalogue`` it still shows, and per translated English word whose translation it lacks."""
    translated = set(translated)
    problems = [f"left in English: {w!r}" for w in translatable(translated, catalogue)]
    problems += [
        f"{w!r} is not drawn as {catalogue[w]!r}"
        for w in translatable(english, catalogue)
        if catalogue[w] not in translated and w not in translated
    ]
    return problems
