"""The translated slide decks (issue 33): catalogues complete, in step with the decks, markup and terms kept.

The decks' messages (slides/i18n.py: headings, list items, paragraphs, table cells, image lines, speaker
notes, the errata's text) live in ``locales/<lang>/LC_MESSAGES/slides/<deck>.po``. The checks are the
book's (book/_ext/i18n_checks.py: status, drift, markup, terms), each shown here to fail on a small
made-up case, then run on the real catalogues. No browser and no build: part of ``make test-python``;
tests/book/test_slides_browser.py opens the built Korean decks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from support.slides_support import load_slides_build

ROOT = Path(__file__).resolve().parents[2]
build = load_slides_build()
i18n = build.i18n_module()
checks = i18n._checks()

LANGS = sorted(p.parent.parent.name for p in (ROOT / "locales").glob("*/LC_MESSAGES/slides"))
SOURCES = build.deck_sources(ROOT / "slides")
DECKS = {p.stem: build.parse_deck(p) for p in SOURCES}
CASES = [(lang, deck) for lang in LANGS for deck in DECKS]


def catalogue(lang: str, deck: str):
    return i18n.read(i18n.catalogue_path(lang, deck))


def terms(lang: str):
    return checks.read_terms((ROOT / "locales" / lang / "terms.tsv").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# Extraction and translation, on made-up decks
# ---------------------------------------------------------------------------
SLIDE = """## Scaled attention

A paragraph about the **encoder**, with `code` and $x^2$.

- one item with $\\sqrt{d_k}$
- $QK^\\top$

```python
attention = 1  # code is never a message
```

$$
\\mathrm{softmax}(x)
$$

| part | count |
|---|---|
| attention | 1,050,624 |

![A picture of heads](figures/week3_attention_heads.png)
<!-- .slide: data-density="compact" -->"""


def test_units_are_headings_items_paragraphs_cells_and_images_not_code_or_math():
    assert [u.text for u in i18n.units(SLIDE)] == [
        "Scaled attention",
        "A paragraph about the **encoder**, with `code` and $x^2$.",
        "one item with $\\sqrt{d_k}$",
        "part",
        "count",
        "attention",
        "![A picture of heads](figures/week3_attention_heads.png)",
    ]


def test_apply_translates_the_units_and_keeps_the_rest():
    assert i18n.apply(SLIDE, lambda text: text) == SLIDE
    korean = {"Scaled attention": "스케일드 어텐션", "attention": "어텐션", "part": "부분", "count": "개수"}
    out = i18n.apply(SLIDE, lambda text: korean.get(text, text))
    assert out.startswith("## 스케일드 어텐션\n")
    assert "| 어텐션 | 1,050,624 |" in out and "| 부분 | 개수 |" in out
    assert "attention = 1  # code is never a message" in out, "code was translated"
    assert "\\mathrm{softmax}(x)" in out and "- $QK^\\top$" in out


def _deck(tmp_path: Path, body: str):
    path = tmp_path / "week9_test.md"
    path.write_text(f"# Week 9: Testing\n\n### A subtitle\n\n---\n\n{body}\n", encoding="utf-8")
    return build.parse_deck(path)


def test_update_marks_new_changed_and_removed_messages(tmp_path):
    locales = tmp_path / "locales"
    deck = _deck(tmp_path, "## Goals\n\n- compute attention by hand\n- a goal that goes away\n\nNote:\nSay hello.")
    i18n.update([deck], "ko", locales)
    path = i18n.catalogue_path("ko", deck.name, locales)
    cat = i18n.read(path)
    assert [m.id for m in cat if m.id] == [
        "Week 9: Testing", "A subtitle", "Goals", "compute attention by hand", "a goal that goes away", "Say hello.",
    ]  # fmt: skip
    assert cat.get("Say hello.").auto_comments == ["speaker notes"]
    for m in cat:
        if m.id:
            m.string = "번역 " + m.id
    i18n.write(cat, path)
    assert i18n.update([deck], "ko", locales) == [], "an unchanged deck rewrote its catalogue"
    edited = _deck(tmp_path, "## Goals\n\n- compute attention by hand, twice\n- a brand new goal\n\nNote:\nSay hello.")
    i18n.update([edited], "ko", locales)
    cat = i18n.read(path)
    problems = checks.status_problems(edited.name, cat)
    assert "week9_test: untranslated: 'a brand new goal'" in problems
    assert any(p.startswith("week9_test: fuzzy") and "twice" in p for p in problems), problems
    assert any(p.startswith("week9_test: obsolete") and "goes away" in p for p in problems), problems


def test_drift_names_the_deck_and_the_sentence(tmp_path):
    """The in-step check as test_catalogues_in_step_with_the_decks runs it: an edited deck against its old catalogue."""
    old = _deck(tmp_path, "## Goals\n\n- compute attention by hand")
    new = _deck(tmp_path, "## Goals\n\n- compute attention by hand, twice")
    english = {new.name: {m.id for m in i18n.template(new) if m.id}}
    catalogues = {old.name: {m.id for m in i18n.template(old) if m.id}}
    assert checks.drift_problems(english, catalogues) == [
        "week9_test: not in the catalogue (run `make translations`): 'compute attention by hand, twice'",
        "week9_test: in the catalogue, not in the English page: 'compute attention by hand'",
    ]
    assert checks.drift_problems(catalogues, catalogues) == []


def test_translated_deck_uses_the_catalogue_and_falls_back_to_english(tmp_path):
    deck = _deck(tmp_path, "## Goals\n\n- compute $c_t$ by hand\n- read a plot")
    cat = Catalog(locale="ko")
    cat.add("Week 9: Testing", "9주차: 테스트")
    cat.add("compute $c_t$ by hand", "$c_t$를 손으로 계산함")
    cat.add("read a plot", "그림을 읽음", flags=["fuzzy"])
    missing: list[str] = []
    out = i18n.translated(deck, cat, build.strip_markdown, missing)
    assert out.title == "9주차: 테스트"
    assert "- $c_t$를 손으로 계산함" in out.slides[1].body
    assert "- read a plot" in out.slides[1].body, "a fuzzy translation was used"
    assert sorted(missing) == ["A subtitle", "Goals", "read a plot"]


def test_note_must_stand_alone(tmp_path):
    with pytest.raises(ValueError, match="`Note:` must be alone on its line"):
        _deck(tmp_path, "## Goals\n\n- a goal\n\nNote: this would show on the slide")


# ---------------------------------------------------------------------------
# The checks, on made-up messages
# ---------------------------------------------------------------------------
def test_markup_check_keeps_code_math_links_and_code_elements():
    msgid = "notes: <code>loss = mean(x)  # per step</code>, see `fit` and $c_t$ ([lab](labs/release/x))"
    good = "노트: <code>loss = mean(x)  # per step</code>, `fit`와 $c_t$ 참고 ([실습](labs/release/x))"
    assert i18n.markup_problems("week1", msgid, good) == []
    assert i18n.markup_problems("week1", msgid, "") == []
    bad = "노트: <code>손실 = mean(x)</code>, `fit`와 $c$ 참고 ([실습](labs/release/y))"
    problems = i18n.markup_problems("week1", msgid, bad)
    assert any("$c_t$" in p for p in problems) and any("](labs/release/x)" in p for p in problems), problems
    assert any("changed '<code>loss = mean(x)  # per step</code>'" in p for p in problems), problems


def test_term_check_reads_prose_not_code():
    rows = checks.read_terms("english\tkorean\nattention\t어텐션\nencoder\t인코더\n")
    assert i18n.term_problems("week3", "the attention of the encoder", "인코더의 주의", rows) == [
        "week3: 'attention' is '어텐션' (locales/ko/terms.tsv), missing from the translation of "
        "'the attention of the encoder'"
    ]
    assert i18n.term_problems("week3", "course: <code>attention of the encoder</code>",
                              "강의: <code>attention of the encoder</code>", rows) == []  # fmt: skip
    assert i18n.term_problems("week3", "`attention`", "`attention`", rows) == []


# ---------------------------------------------------------------------------
# The real catalogues
# ---------------------------------------------------------------------------
def test_every_deck_has_a_catalogue_in_every_language():
    assert "ko" in LANGS, f"no slide catalogues under {ROOT / 'locales'}"
    missing = [
        str(i18n.catalogue_path(lang, deck)) for lang, deck in CASES if not i18n.catalogue_path(lang, deck).is_file()
    ]
    assert not missing, "decks without a catalogue (run `make translations`):\n" + "\n".join(missing)
    for lang in LANGS:
        extra = sorted({p.stem for p in i18n.catalogue_path(lang, "x").parent.glob("*.po")} - set(DECKS))
        assert not extra, f"{lang}: catalogues of no deck: {extra}"


@pytest.mark.parametrize(("lang", "deck"), CASES)
def test_catalogue_translated_not_fuzzy_not_obsolete(lang, deck):
    problems = checks.status_problems(f"{lang}/{deck}", catalogue(lang, deck))
    assert not problems, f"{len(problems)} message(s) to translate:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("lang", LANGS)
def test_catalogues_in_step_with_the_decks(lang):
    """Re-extract the messages of slides/week*.md now and compare: an English edit without
    `make translations` fails here, naming the deck and the sentence."""
    english = {name: {m.id for m in i18n.template(deck) if m.id} for name, deck in DECKS.items()}
    catalogues = {name: {m.id for m in catalogue(lang, name) if m.id} for name in DECKS}
    problems = checks.drift_problems(english, catalogues)
    assert not problems, "the slide catalogues are out of date; run `make translations`:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize(("lang", "deck"), CASES)
def test_translations_keep_the_markup_and_use_the_terms(lang, deck):
    rows = terms(lang)
    cat = catalogue(lang, deck)
    problems = [p for m in cat if m.id for p in i18n.markup_problems(deck, m.id, m.string)]
    problems += [p for m in cat if m.id for p in i18n.term_problems(deck, m.id, m.string, rows)]
    assert not problems, "\n".join(problems[:40])


def _code_blocks(deck) -> list[str]:
    text = "\n".join(s.body + "\n" + s.notes for s in deck.slides)
    return re.findall(r"^(```|~~~).*?^\1\s*$", text, flags=re.M | re.S)


@pytest.mark.parametrize(("lang", "deck"), CASES)
def test_translated_deck_keeps_slides_code_math_and_figures(lang, deck):
    english = DECKS[deck]
    translated = build.translated_deck(english, lang)
    assert build.summary(translated) | {"title": None} == build.summary(english) | {"title": None}
    assert _code_blocks(translated) == _code_blocks(english), f"{lang}/{deck}: a code block changed"
    assert [s.data for s in translated.slides] == [s.data for s in english.slides]
    assert translated.title != english.title, f"{lang}/{deck}: the title was not translated"


# ---------------------------------------------------------------------------
# The translated decks show the figures drawn in their language (`make figures`: _build/figures/<lang>/)
# ---------------------------------------------------------------------------
def test_translated_deck_loads_its_figures_from_its_own_folder(tmp_path):
    english, korean = tmp_path / "en", tmp_path / "ko"
    build.build_notebooks(english, [SOURCES[0]], None, ["ko"])
    build.build_notebooks(korean, [SOURCES[0]], "ko", ["en"])
    figures = DECKS[SOURCES[0].stem].figures
    assert figures, f"{SOURCES[0].stem} shows no figure"
    for folder in (english, korean):
        text = (folder / f"{SOURCES[0].stem}.ipynb").read_text(encoding="utf-8")
        for name in figures:
            assert f"(figures/{name})" in text, (folder.name, name)
        assert "../figures/" not in text, f"the {folder.name} deck loads the English figures"


def test_copy_figures_takes_each_languages_own_images(tmp_path):
    decks = [DECKS[SOURCES[0].stem]]
    names = decks[0].figures
    drawn = tmp_path / "figures"
    for lang in ("", "ko"):
        (drawn / lang).mkdir(parents=True, exist_ok=True)
        for name in names:
            (drawn / lang / name).write_bytes(f"{lang or 'en'} {name}".encode())
    out = tmp_path / "slides"
    build.copy_figures(out, drawn, decks, ["ko"])
    for name in names:
        assert (out / "figures" / name).read_bytes() == f"en {name}".encode()
        assert (out / "ko" / "figures" / name).read_bytes() == f"ko {name}".encode()
    (drawn / "ko" / names[0]).unlink()
    expected = f"figures missing from {drawn / 'ko'}: {[names[0]]} (run `make figures` (txcourse figures --lang ko"
    with pytest.raises(FileNotFoundError, match=re.escape(expected)):
        build.copy_figures(tmp_path / "again", drawn, decks, ["ko"])
