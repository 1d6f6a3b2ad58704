"""The slide sources, ``slides/week*.md`` (slides/README.md): structure, content, and
the code they show.

Needs no browser and no built decks, so it runs in every ``make test-python``;
``tests/book/test_slides_browser.py`` checks the built decks. Each deck parses into
10-20 slides: a title slide, the learning goals, equations, the figures
:mod:`txcourse.course.figures` draws for the week's chapter, the errata it names
(which must exist in :mod:`txcourse.course.errata`) and a pointer to the lab. Every ``python`` code block
of a deck runs, in order, in one namespace, so a slide cannot show an API the
package does not have.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from support.slides_support import load_slides_build

ROOT = Path(__file__).resolve().parents[2]
build = load_slides_build()

SOURCES = build.deck_sources(ROOT / "slides")
WEEKS = [p.stem for p in SOURCES]
WEEKS_EXPECTED = [
    "week1_seq2seq",
    "week2_positional",
    "week3_attention",
    "week4_encoder",
    "week5_decoder",
    "week6_training",
    "week6_decoding",
]  # week 6 in two parts, in teaching order


def test_one_deck_per_week():
    assert WEEKS == WEEKS_EXPECTED, f"slides/ holds {WEEKS}"


def test_deck_order_and_labs():
    """Decks sort by week and part, not by file name; both week-6 parts link the one week-6 lab."""
    assert build.lab_name("week6_decoding") == build.lab_name("week6_training") == "week6_training"
    assert build.lab_name("week1_seq2seq") == "week1_seq2seq"
    titles = [build.parse_deck(p).title for p in SOURCES]
    assert titles[-2].startswith("Week 6, part 1") and titles[-1].startswith("Week 6, part 2"), titles


@pytest.mark.parametrize("week", WEEKS)
def test_deck_structure(week):
    deck = build.parse_deck(ROOT / "slides" / f"{week}.md")
    n = int(week[4])
    assert 10 <= len(deck.slides) <= 20, f"{week}: {len(deck.slides)} slides, expected 10-20"
    title = deck.slides[0]
    assert re.match(rf"Week {n}(, part \d)?: ", deck.title), f"{week}: title slide heading {deck.title!r}"
    assert title.data.get("kind") == "title"
    assert "txcourse: the Transformer, week by week" in title.body, f"{week}: the title slide names no course"
    headings = [re.search(r"^##\s+(.+)$", s.body, re.M) for s in deck.slides[1:]]
    missing = [i + 2 for i, h in enumerate(headings) if not h]
    assert not missing, f"{week}: slides without a `## ` heading: {missing}"
    headings = [h.group(1) for h in headings]
    assert headings[0] == "Learning goals", f"{week}: slide 2 is {headings[0]!r}, not the learning goals"
    assert headings[-1].startswith(f"Lab {n}"), f"{week}: the last slide is {headings[-1]!r}, not the lab"
    lab = build.lab_name(week)
    assert f"labs/release/{lab}/" in deck.slides[-1].body, f"{week}: the lab slide does not link the lab"
    assert build.summary(deck)["equations"] >= 5, f"{week}: fewer than 5 equations"
    assert any("```python" in s.body for s in deck.slides), f"{week}: no code slide"


@pytest.mark.parametrize("week", WEEKS)
def test_deck_shows_the_weeks_figures(week):
    """Every figure that `make figures` draws for the week's chapter, and no other."""
    from txcourse.course.figures import RECIPES

    deck = build.parse_deck(ROOT / "slides" / f"{week}.md")
    shown = {f.removesuffix(".png") for f in deck.figures}
    drawn = {name for name, recipe in RECIPES.items() if week in recipe.chapters}
    assert drawn, f"txcourse.course.figures draws no figure for {week}"
    assert shown == drawn, (
        f"{week}: the deck shows {sorted(shown)}; txcourse.course.figures draws {sorted(drawn)} for the chapter"
    )


def test_errata_slides():
    """Every erratum is on some slide; the :::errata lines expand from txcourse.course.errata."""
    from txcourse.course.errata import ERRATA

    text = "\n".join(p.read_text(encoding="utf-8") for p in SOURCES)
    named = set(re.findall(r"\bE\d+\b", text))
    assert {e.id for e in ERRATA} <= named, f"errata on no slide: {sorted({e.id for e in ERRATA} - named)}"
    slide = build.parse_slide([":::errata E1"])
    assert "get_angles" in slide.body and "test_E1_angle_exponent" in slide.body
    with pytest.raises(ValueError, match="E99"):
        build.parse_slide([":::errata E99"])


def test_notes_have_no_tex():
    """Speaker notes are shown untypeset in reveal's speaker view: no $ in them."""
    for path in SOURCES:
        for number, slide in enumerate(build.parse_deck(path).slides, 1):
            assert "$" not in slide.notes, f"{path.name}, slide {number}: TeX in the speaker notes"


def test_format_errors_are_reported():
    with pytest.raises(ValueError, match="never closed"):
        build.split_slides("# a\n```python\nx = 1\n")
    with pytest.raises(ValueError, match="mermaid"):
        build.parse_slide(["```mermaid", "graph TD", "```"])
    fenced = build.split_slides("# a\n```yaml\n---\n```\n---\n## b")
    assert len(fenced) == 2, "a --- inside a code fence must not break the slide"


def test_count_math():
    assert build.count_math("$a$ and $$b$$ but `$c$` and\n```\n$d$\n```\n") == 2
    assert build.count_math("$$\n\\begin{aligned} x &= 1 \\end{aligned}\n$$") == 1


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```\s*$", path.read_text(encoding="utf-8"), flags=re.M | re.S)


@pytest.mark.parametrize("week", WEEKS)
def test_code_on_the_slides_runs(week, monkeypatch):
    path = ROOT / "slides" / f"{week}.md"
    blocks = python_blocks(path)
    assert blocks, f"{week}: no python code block"
    if any("tensorflow" in b for b in blocks):
        pytest.importorskip("tensorflow")
        monkeypatch.setitem(os.environ, "TF_CPP_MIN_LOG_LEVEL", "3")
    namespace: dict = {"__name__": f"slides_{week}"}
    for number, block in enumerate(blocks, 1):
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(block, f"{path.name} (python block {number})", "exec"), namespace)
            except Exception as error:  # noqa: BLE001 - report which block failed
                pytest.fail(f"{week}: python block {number} fails: {type(error).__name__}: {error}\n{block}")
