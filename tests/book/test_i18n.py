"""The Korean edition's catalogues are complete, current, keep the markup and use the glossary's terms (issue 33).

Each check is a pure function of book/_ext/i18n_checks.py, shown here to fail
on small made-up catalogues, then run on the real ones
(locales/ko/LC_MESSAGES/book/<page>.po):

- every message translated, none fuzzy, none obsolete;
- the catalogues hold exactly the messages of the English pages, re-extracted
  by Sphinx's gettext builder (an English edit without `make translations`
  fails here);
- every translation keeps the code spans, math, roles, substitutions and link
  targets of its English;
- wherever the English uses a term of locales/ko/terms.tsv in prose, the
  translation uses its Korean term, and every row of terms.tsv is in a table
  of book/glossary.md (the glossary is the source of truth).

Also the helpers of the build: the edition's generated configuration
(book/_ext/edition_conf.py) and the language switch and Korean search
(book/_ext/editions.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from support.catalogues import made_up_catalogue

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import edition_conf  # noqa: E402
import editions  # noqa: E402
import i18n_checks as checks  # noqa: E402

LANG = "ko"
CATALOGUES = ROOT / "locales" / LANG / "LC_MESSAGES" / "book"
TERMS = ROOT / "locales" / LANG / "terms.tsv"
PAGES = sorted(p.stem for p in CATALOGUES.glob("*.po"))


def _catalogue(*messages, obsolete=()) -> Catalog:
    return made_up_catalogue(*messages, obsolete=obsolete, locale=LANG)


# ---------------------------------------------------------------------------
# The checks, on made-up catalogues
# ---------------------------------------------------------------------------
def test_status_names_untranslated_fuzzy_and_obsolete_messages():
    cat = _catalogue(
        ("Attention is a weighted average.", "어텐션은 가중 평균입니다."),
        ("The encoder reads the source.", ""),
        ("The decoder writes the target.", "디코더는 출력을 씁니다.", "fuzzy"),
        obsolete=["An old sentence."],
    )
    problems = checks.status_problems("week3", cat)
    assert problems == [
        "week3: untranslated: 'The encoder reads the source.'",
        "week3: fuzzy (the English changed; check the translation): 'The decoder writes the target.'",
        "week3: obsolete (no longer in the English page; `make translations` lists it): 'An old sentence.'",
    ]
    assert checks.status_problems("week3", _catalogue(("Attention.", "어텐션."))) == []


def test_drift_names_new_removed_messages_and_pages():
    english = {"week3": {"New sentence.", "Kept."}, "week4": {"A page without a catalogue."}}
    catalogues = {"week3": {"Kept.", "Removed sentence."}, "old_page": {"Gone."}}
    assert checks.drift_problems(english, catalogues) == [
        "old_page: the catalogue's page is no longer in the English book (run `make translations`)",
        "week3: not in the catalogue (run `make translations`): 'New sentence.'",
        "week3: in the catalogue, not in the English page: 'Removed sentence.'",
        "week4: the English page has no catalogue (run `make translations`)",
    ]
    assert checks.drift_problems({"week3": {"Kept."}}, {"week3": {"Kept.", ""}}) == []


@pytest.mark.parametrize(
    ("msgstr", "lost"),
    [
        ("`softmax` 함수는 $QK^\\top$ 로 {cite:t}`vaswani2017` {{ tx_d_model }} [링크](week4_encoder.md)", None),
        ("softmax 함수는 $QK^\\top$ 로 {cite:t}`vaswani2017` {{ tx_d_model }} [링크](week4_encoder.md)", "`softmax`"),
        ("`softmax` 함수는 $QK^T$ 로 {cite:t}`vaswani2017` {{ tx_d_model }} [링크](week4_encoder.md)", "$QK^"),
        ("`softmax` 함수는 $QK^\\top$ 로 {cite:p}`vaswani2017` {{ tx_d_model }} [링크](week4_encoder.md)", "{cite:t}"),
        ("`softmax` 함수는 $QK^\\top$ 로 {cite:t}`vaswani2017` {{ tx_d_ff }} [링크](week4_encoder.md)", "{{ tx_d"),
        ("`softmax` 함수는 $QK^\\top$ 로 {cite:t}`vaswani2017` {{ tx_d_model }} [링크](week5_decoder.md)", "]("),
    ],
)
def test_markup_must_survive_translation(msgstr, lost):
    msgid = "The `softmax` of $QK^\\top$ in {cite:t}`vaswani2017` is {{ tx_d_model }} wide ([see](week4_encoder.md))."
    problems = checks.markup_problems("week3", msgid, msgstr)
    if lost is None:
        assert problems == []
    else:
        assert len(problems) == 1 and lost in problems[0], problems
    assert checks.markup_problems("week3", msgid, "") == [], "untranslated is the status check's business"


TERMS_TSV = "# comment\nenglish\tkorean\nencoder\t인코더\nquery|queries\t쿼리\nself-attention\t셀프 어텐션\n"


def test_a_role_may_translate_its_text_not_its_target():
    msgid = "See {doc}`week 2 <week2_positional>` and {doc}`glossary`."
    assert checks.markup_problems("intro", msgid, "{doc}`2주차 <week2_positional>`와 {doc}`glossary`를 보라.") == []
    assert checks.markup_problems("intro", msgid, "{doc}`용어집 <glossary>`과 {doc}`2주차 <week2_positional>`.") == []
    wrong = checks.markup_problems("intro", msgid, "{doc}`2주차 <week3_attention>`와 {doc}`glossary`를 보라.")
    assert len(wrong) == 1 and "week2_positional" in wrong[0], wrong


def test_longer_terms_first_names_kept_and_messages_kept_as_they_are():
    terms = checks.read_terms(TERMS_TSV + "attention\t어텐션\ngradient descent\t경사 하강법\ngradient\t기울기\n"
                               "Annotated Transformer\t=\nTransformer\t트랜스포머\n")  # fmt: skip
    # "gradient descent" consumes "gradient": 기울기 is not required beside 경사 하강법
    assert checks.term_problems("w6", "Plain gradient descent.", "단순한 경사 하강법.", terms) == []
    assert checks.term_problems("w6", "Plain gradient descent.", "단순한 기울기 하강법.", terms)
    # a name kept in Latin letters needs no Korean term, and consumes its words
    assert checks.term_problems("w6", "As in the Annotated Transformer.", "Annotated Transformer처럼.", terms) == []
    assert checks.term_problems("w6", "The Transformer.", "Transformer.", terms)
    # "self-attention" is one term; a message kept as it is (the glossary's English column) needs none
    assert checks.term_problems("w3", "self-attention", "셀프 어텐션", terms) == []
    assert checks.term_problems("glossary", "self-attention", "self-attention", terms) == []


def test_read_terms_parses_and_refuses_bad_rows():
    assert checks.read_terms(TERMS_TSV) == [(("encoder",), "인코더"), (("query", "queries"), "쿼리"),
                                            (("self-attention",), "셀프 어텐션")]  # fmt: skip
    with pytest.raises(ValueError, match="line 2: expected 'english<TAB>korean'"):
        checks.read_terms("english\tkorean\nencoder 인코더\n")


def test_terms_checked_in_prose_only():
    terms = checks.read_terms(TERMS_TSV)
    # the English term in prose: the Korean term is required
    assert checks.term_problems("week4", "The Encoder has six layers.", "엔코더는 여섯 층입니다.", terms) == [
        "week4: 'encoder' is '인코더' (locales/ko/terms.tsv), missing from the translation of "
        "'The Encoder has six layers.'"
    ]
    assert checks.term_problems("week4", "The encoder has six layers.", "인코더는 여섯 층입니다.", terms) == []
    # alternatives, plural forms listed in terms.tsv, and the term inside a longer word or in code/math/roles
    assert checks.term_problems("week3", "All queries at once.", "모든 질의를 한 번에.", terms)
    assert checks.term_problems("week3", "The `encoder` module.", "`encoder` 모듈.", terms) == []
    assert checks.term_problems("week3", "See {ref}`encoder`.", "{ref}`encoder` 참조.", terms) == []
    assert checks.term_problems("week3", "An encoders list; $encoder$.", "목록; $encoder$.", terms) == []
    assert checks.term_problems("week3", "The encoder.", "", terms) == []


def test_glossary_must_hold_every_term():
    terms = checks.read_terms(TERMS_TSV)
    glossary = (
        "| 한국어 (Korean) | English | meaning |\n|---|---|---|\n"
        "| 인코더 | encoder | reads |\n| 쿼리 | query | asks |\n| 셀프 어텐션 | self-attention (intra) | x |\n"
    )
    assert checks.glossary_problems(terms, glossary) == []
    without_query = glossary.replace("| 쿼리 | query | asks |\n", "")
    assert checks.glossary_problems(terms, without_query) == [
        "terms.tsv: 'query|queries' = '쿼리' is in no table row of book/glossary.md"
    ]
    # a pair written in prose, not in a table, does not count
    assert checks.glossary_problems(terms, without_query + "\nqueries (쿼리)\n")


# ---------------------------------------------------------------------------
# The real catalogues
# ---------------------------------------------------------------------------
def test_every_page_has_a_catalogue():
    assert len(PAGES) >= 19, f"expected a catalogue per page in {CATALOGUES}, found {PAGES}"


@pytest.mark.parametrize("page", PAGES)
def test_catalogue_translated_not_fuzzy_not_obsolete(page):
    problems = checks.status_problems(page, checks.read_catalogue(CATALOGUES / f"{page}.po"))
    assert not problems, f"{len(problems)} message(s) to translate:\n" + "\n".join(problems[:40])


@pytest.fixture(scope="module")
def english_messages(tmp_path_factory) -> dict:
    """The messages of the English pages now, extracted by Sphinx's gettext builder (as `make translations`)."""
    tmp = tmp_path_factory.mktemp("gettext")
    edition_conf.main([str(ROOT), str(tmp / "conf")])
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    cmd = [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-c", str(tmp / "conf"), "-d", str(tmp / "doctrees"),
           "-D", "nb_execution_mode=off", str(ROOT), str(tmp / "out")]  # fmt: skip
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"the gettext builder failed:\n{run.stderr[-3000:]}"
    pots = checks.read_catalogues(tmp / "out" / "book", suffix=".pot")
    assert pots, f"the gettext builder wrote no catalogue into {tmp / 'out' / 'book'}"
    messages = {page: {m.id for m in cat if m.id} for page, cat in pots.items()}
    # the labels of the book's own templates (book/_ext/editions_static): the theme catalogue's, not a page's
    templates = tmp / "out" / "sphinx.pot"
    messages[TEMPLATES] = {m.id for m in checks.read_catalogue(templates) if m.id} if templates.exists() else set()
    return messages


TEMPLATES = "(templates)"


def test_catalogues_match_the_english_pages(english_messages):
    pages = {page: ids for page, ids in english_messages.items() if page != TEMPLATES}
    catalogues = {page: {m.id for m in checks.read_catalogue(CATALOGUES / f"{page}.po") if m.id} for page in PAGES}
    problems = checks.drift_problems(pages, catalogues)
    assert not problems, "the catalogues are out of date with the English; run `make translations`:\n" + "\n".join(
        problems[:40]
    )


@pytest.mark.parametrize("page", PAGES)
def test_translations_keep_the_markup(page):
    cat = checks.read_catalogue(CATALOGUES / f"{page}.po")
    problems = [p for m in cat if m.id for p in checks.markup_problems(page, m.id, m.string)]
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("page", PAGES)
def test_translations_use_the_glossary_terms(page):
    terms = checks.read_terms(TERMS.read_text(encoding="utf-8"))
    cat = checks.read_catalogue(CATALOGUES / f"{page}.po")
    problems = [p for m in cat if m.id for p in checks.term_problems(page, m.id, m.string, terms)]
    assert not problems, "\n".join(problems[:40])


# The catalogues beside the pages': the figures' labels and the theme's (book/_ext/figure_catalogue.py, editions.py)
OTHER_CATALOGUES = {name: ROOT / "locales" / LANG / "LC_MESSAGES" / f"{name}.po" for name in ("figures", "sphinx")}
PYDATA_POT = Path(__import__("pydata_sphinx_theme").__file__).parent / "locale" / "sphinx.pot"


@pytest.mark.parametrize("name", list(OTHER_CATALOGUES))
def test_other_catalogue_translated_not_fuzzy_not_obsolete(name):
    problems = checks.status_problems(name, checks.read_catalogue(OTHER_CATALOGUES[name]))
    assert not problems, f"{len(problems)} message(s) to translate:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("name", list(OTHER_CATALOGUES))
def test_other_catalogue_uses_the_glossary_terms_and_keeps_the_markup(name):
    terms = checks.read_terms(TERMS.read_text(encoding="utf-8"))
    cat = checks.read_catalogue(OTHER_CATALOGUES[name])
    problems = [p for m in cat if m.id for p in checks.term_problems(name, m.id, m.string, terms)]
    problems += [p for m in cat if m.id for p in checks.markup_problems(name, m.id, m.string)]
    assert not problems, "\n".join(problems[:40])


def test_theme_catalogue_covers_every_label_of_pydata_sphinx_theme():
    """Each message of the installed theme's ``sphinx`` domain (its sphinx.pot) is in locales/ko/.../sphinx.po:
    a theme upgrade that adds a label fails here."""
    theme = {m.id for m in checks.read_catalogue(PYDATA_POT) if m.id}
    ours = checks.read_catalogue(OTHER_CATALOGUES["sphinx"])
    assert len(theme) >= 30, f"expected pydata-sphinx-theme's labels in {PYDATA_POT}, found {len(theme)}"
    missing = sorted(theme - {m.id for m in ours if m.id})
    assert not missing, f"pydata-sphinx-theme labels missing from {OTHER_CATALOGUES['sphinx']}: {missing}"
    percent = [m.id for m in ours if m.id and "%(" in m.id and checks.re.findall(r"%\(\w+\)s", m.id) !=
               checks.re.findall(r"%\(\w+\)s", m.string)]  # fmt: skip
    assert not percent, f"translations that lose a %(name)s of the theme's label: {percent}"


def test_theme_catalogue_covers_the_labels_of_the_books_templates(english_messages):
    """The labels of the book's own templates (the gettext builder's sphinx.pot, which `make translations` keeps
    out of sphinx-intl's update) are in locales/ko/.../sphinx.po."""
    assert english_messages[TEMPLATES], "the gettext builder wrote no sphinx.pot for the book's templates"
    ours = {m.id for m in checks.read_catalogue(OTHER_CATALOGUES["sphinx"]) if m.id}
    missing = sorted(english_messages[TEMPLATES] - ours)
    assert not missing, f"labels of the book's templates missing from {OTHER_CATALOGUES['sphinx']}: {missing}"


def test_every_term_is_in_the_glossary():
    terms = checks.read_terms(TERMS.read_text(encoding="utf-8"))
    assert len(terms) >= 40, f"expected the glossary's terms in {TERMS}, found {len(terms)}"
    problems = checks.glossary_problems(terms, (ROOT / "book" / "glossary.md").read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------
# The build's helpers
# ---------------------------------------------------------------------------
def test_edition_conf_makes_every_path_absolute(tmp_path):
    config = edition_conf.edition_config(ROOT)
    for key in ("html_static_path", "locale_dirs", "bibtex_bibfiles"):
        paths = [Path(p) for p in config[key]]
        assert paths and all(p.is_absolute() and p.is_relative_to(ROOT) for p in paths), (key, config[key])
    # the sources exist; _vendor is made by `make book` (MathJax), which a fresh clone's test run precedes
    assert [Path(p) for p in config["html_static_path"]] == [ROOT / "_vendor"]
    assert all(Path(p).exists() for key in ("locale_dirs", "bibtex_bibfiles") for p in config[key])
    assert Path(config["external_toc_path"]) == ROOT / "_toc.yml"
    assert Path(config["nb_execution_cache_path"]) == ROOT / "_build" / ".jupyter_cache"
    assert "editions" in config["extensions"]
    with pytest.raises(FileNotFoundError, match="root: expected a folder holding _config.yml"):
        edition_conf.edition_config(tmp_path)


@pytest.mark.parametrize(
    ("pagename", "here", "lang", "url"),
    [
        ("book/week3_attention", "en", "ko", "../ko/book/week3_attention.html"),
        ("book/week3_attention", "ko", "en", "../../book/week3_attention.html"),
        ("search", "en", "ko", "ko/search.html"),
        ("search", "ko", "en", "../search.html"),
    ],
)
def test_language_switch_leads_to_the_twin_page(pagename, here, lang, url):
    links = editions.edition_links(pagename, here, editions.DEFAULT_EDITIONS)
    assert [(link["lang"], link["url"]) for link in links] == [(lang, url)]


def test_language_switch_refuses_an_unknown_language():
    with pytest.raises(Exception, match="language 'fr' is not one of"):
        editions.edition_links("index", "fr", editions.DEFAULT_EDITIONS)


@pytest.mark.parametrize(
    ("word", "stem"),
    [("어텐션은", "어텐션"), ("인코더의", "인코더"), ("인코더에서는", "인코더"), ("토큰을", "토큰"), ("어텐션", "어텐션"),
     ("나이", "나이"), ("encoders", "encoders"), ("디코더가", "디코더")],
)  # fmt: skip
def test_korean_search_strips_particles(word, stem):
    assert editions.strip_particle(word) == stem
    assert editions.SearchKorean(None).stem(word) == stem


def test_book_title_follows_the_root_page_translation(tmp_path):
    folder = tmp_path / "ko" / "LC_MESSAGES" / "book"
    folder.mkdir(parents=True)
    cat = _catalogue(("The book", "책"), ("Draft title", "초안", "fuzzy"))
    from babel.messages.pofile import write_po

    with open(folder / "intro.po", "wb") as f:
        write_po(f, cat)
    assert editions.translated_title("The book", "ko", [tmp_path], "book/intro") == "책"
    assert editions.translated_title("Draft title", "ko", [tmp_path], "book/intro") == "Draft title"
    assert editions.translated_title("Not in it", "ko", [tmp_path], "book/intro") == "Not in it"
    assert editions.translated_title("The book", "ko", [tmp_path / "missing"], "book/intro") == "The book"


def test_switch_links_only_the_editions_built():
    both = editions.built_editions(editions.DEFAULT_EDITIONS, "en", "en ko")
    assert sorted(both) == ["en", "ko"]
    alone = editions.built_editions(editions.DEFAULT_EDITIONS, "en", None)
    assert alone == {"en": editions.DEFAULT_EDITIONS["en"]}
    assert editions.edition_links("book/intro", "en", alone) == [], "no Korean edition, no link to it"
    assert sorted(editions.built_editions(editions.DEFAULT_EDITIONS, "ko", "")) == ["ko"]
    with pytest.raises(Exception, match=r"TXCOURSE_EDITIONS: \['fr'\] not among"):
        editions.built_editions(editions.DEFAULT_EDITIONS, "en", "en fr")
