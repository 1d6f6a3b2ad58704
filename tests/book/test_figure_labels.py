"""The figures' words in each edition's language (issue 33): one source, one catalogue, one image per language.

- book/_ext/figure_catalogue.py extracts the labels marked ``_()``, ``N_()``,
  ``tr()`` from txcourse/notebook/plots, the figure recipes and the book's code
  cells; locales/ko/LC_MESSAGES/figures.po holds exactly them, translated, not
  fuzzy, with the same ``{fields}`` (each check shown failing on a made-up case);
- a figure drawn in Korean keeps no English label the catalogue translates
  (its Text artists), and its Hangul is set in a font that has the glyphs;
- ``show_in_each_edition`` displays one PNG per language, tagged in the
  output's metadata, and book/_ext/editions.py keeps the outputs of the
  edition's language.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from babel.messages.catalog import Catalog  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.ft2font import FT2Font  # noqa: E402

from txcourse.notebook import plots  # noqa: E402
from txcourse.notebook.plots import labels  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import editions  # noqa: E402
import figure_catalogue as fc  # noqa: E402
from support.catalogues import made_up_catalogue  # noqa: E402

FIGURES_PO = ROOT / "locales" / "ko" / "LC_MESSAGES" / "figures.po"


def _read(path: Path) -> Catalog:
    with open(path, "rb") as f:
        return read_po(f, locale="ko")


def _catalogue(*messages, obsolete=()) -> Catalog:
    return made_up_catalogue(*messages, obsolete=obsolete, locale="ko")


def english_left(fig, catalogue: dict[str, str]) -> list[str]:
    """The texts of ``fig`` (titles, axis labels, tick labels, legends, colour bars) that are an English message
    of ``catalogue`` whose translation differs from it."""
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    return sorted(t for t in texts if t in catalogue and catalogue[t] != t)


# ---------------------------------------------------------------------------
# The catalogue's checks, on made-up cases
# ---------------------------------------------------------------------------
def test_extraction_finds_marked_labels_in_code_and_cells_only(tmp_path):
    (tmp_path / "txcourse" / "notebook" / "plots").mkdir(parents=True)
    (tmp_path / "txcourse" / "course" / "figures").mkdir(parents=True)
    (tmp_path / "book").mkdir()
    (tmp_path / "txcourse" / "notebook" / "plots" / "a.py").write_text(
        'def f(title=N_("Default title")):\n    ax.set(xlabel=_("x label"), ylabel="not marked")\n'
    )
    (tmp_path / "txcourse" / "course" / "figures" / "r.py").write_text('PARAMS = {"title": N_("Recipe title")}\n')
    (tmp_path / "book" / "p.md").write_text(
        'Prose with tr("not code").\n\n```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    caption: x\n---\n'
        'import x\nax.set_title(tr("Cell title"))\n```\n\n```{code-cell} ipython3\n:tab: PyTorch\n\n'
        'label = tr("Tab cell {n}").format(n=1)\n```\n'
    )
    found = fc.messages(tmp_path)
    assert list(found) == ["Recipe title", "Default title", "x label", "Cell title", "Tab cell {n}"]  # paths sorted
    assert found["Cell title"] == ["book/p.md:10"]  # the page's line, front matter counted
    assert found["x label"] == ["txcourse/notebook/plots/a.py:2"]


def test_catalogue_problems_name_missing_untranslated_fuzzy_stale_and_obsolete():
    found = {"kept": ["a.py:1"], "new": ["a.py:2"], "empty": ["a.py:3"], "changed": ["a.py:4"]}
    cat = _catalogue(
        ("kept", "유지"), ("empty", ""), ("changed", "바뀜", "fuzzy"), ("gone", "사라짐"), obsolete=["old"]
    )
    assert fc.problems(cat, found) == [
        "figures.po: missing (run make translations): 'new' (a.py:2)",
        "figures.po: untranslated: 'empty' (a.py:3)",
        "figures.po: fuzzy: 'changed' (a.py:4)",
        "figures.po: no longer in the code: 'gone'",
        "figures.po: obsolete (remove it): 'old'",
    ]
    assert fc.problems(_catalogue(("kept", "유지")), {"kept": ["a.py:1"]}) == []


def test_field_problems_name_a_translation_that_loses_or_renames_a_field():
    cat = _catalogue(
        ("head {h}", "헤드 {h}"),
        ("smoothed (eps = {eps:g})", "스무딩 (eps = {eps})"),
        ("{name}: {n} tokens kept", "{name}: 토큰 남음"),
        ("layer {i}", "층 {i"),
    )
    problems = fc.field_problems(cat)
    assert problems == [
        "figures.po: the fields of '스무딩 (eps = {eps})' are not those of 'smoothed (eps = {eps:g})'",
        "figures.po: the fields of '{name}: 토큰 남음' are not those of '{name}: {n} tokens kept'",
        "figures.po: the fields of '층 {i' are not those of 'layer {i}' (expected '}' before end of string)",
    ]


def test_update_marks_changed_messages_fuzzy_and_keeps_translations(tmp_path):
    po = tmp_path / "figures.po"
    cat = fc.update(po, {"attention weight": ["a.py:1"]}, "ko")
    cat["attention weight"].string = "어텐션 가중치"
    with open(po, "wb") as f:
        fc.write_po(f, cat, width=fc.WIDTH)
    cat = fc.update(po, {"attention weight": ["a.py:1"], "attention weights": ["a.py:2"]}, "ko")
    assert cat["attention weight"].string == "어텐션 가중치" and not cat["attention weight"].fuzzy
    assert cat["attention weights"].fuzzy  # Babel's fuzzy match: a translator must check it
    assert fc.problems(cat, fc.messages(tmp_path)) != []  # and the check refuses it (nothing found here either)


def test_english_left_finds_an_untranslated_label():
    with labels.in_language("ko"):
        fig = plots.plot_mask(np.eye(2, dtype=bool))
    catalogue = dict(labels.catalogue("ko"))
    assert english_left(fig, catalogue) == []
    catalogue["a label nobody translated"] = "번역"
    fig.axes[0].set_xlabel("a label nobody translated")
    assert english_left(fig, catalogue) == ["a label nobody translated"]


# ---------------------------------------------------------------------------
# The real catalogue
# ---------------------------------------------------------------------------
def test_figures_catalogue_complete_and_in_step_with_the_code():
    found = fc.messages(ROOT)
    assert len(found) >= 80, f"expected the figures' labels, found {len(found)}: {sorted(found)[:10]}"
    problems = fc.problems(_read(FIGURES_PO), found)
    assert not problems, "run `make translations` and translate:\n" + "\n".join(problems[:40])


def test_figures_catalogue_keeps_every_field():
    problems = fc.field_problems(_read(FIGURES_PO))
    assert not problems, "\n".join(problems)


def test_catalogue_loader_skips_fuzzy_and_untranslated(tmp_path):
    po = tmp_path / "ko" / "LC_MESSAGES" / "figures.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "loss"\nmsgstr "손실"\n\n#, fuzzy\nmsgid "step"\nmsgstr "단계"\n\nmsgid "accuracy"\nmsgstr ""\n',
        encoding="utf-8",
    )
    assert labels.catalogue("ko", tmp_path) == {"loss": "손실"}
    with pytest.raises(FileNotFoundError, match="figures.po"):
        labels.catalogue("ko", tmp_path / "nowhere")
    with pytest.raises(ValueError, match="lang must be one of"):
        labels.catalogue("fr")


# ---------------------------------------------------------------------------
# Figures drawn in Korean
# ---------------------------------------------------------------------------
def _heads():
    return plots.plot_attention_heads(np.full((2, 3, 3), 1 / 3), ["나", "는", "<eos>"], None)


FIGURES = {
    "plot_mask": lambda: plots.plot_mask(np.triu(np.ones((4, 4), dtype=bool), 1)),
    "plot_attention": lambda: plots.plot_attention(np.eye(2), ["a", "b"], ["x", "y"]),
    "plot_attention (positions)": lambda: plots.plot_attention(np.eye(2)),
    "plot_attention_heads": _heads,
    "plot_positional_encoding": lambda: plots.plot_positional_encoding(np.sin(np.arange(24.0)).reshape(6, 4)),
    "plot_alibi_bias": lambda: plots.plot_alibi_bias(-np.ones((2, 3, 3)), np.array([0.5, 0.25]), heads=(0, 1)),
    "plot_training_curves": lambda: plots.plot_training_curves(
        {"run": [{"step": 1, "loss": 2.0, "accuracy": 0.1, "lr": 1e-3}, {"step": 2, "loss": 1.0, "accuracy": 0.5}]}
    ),
    "plot_distributions": lambda: plots.plot_distributions({"one-hot (eps = 0)": [1.0, 0.0]}, ["십", "일"]),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_a_figure_drawn_in_korean_keeps_no_english_label(name):
    catalogue = labels.catalogue("ko")
    drawn = labels.draw_in_each_language(FIGURES[name])
    english, korean = drawn["en"][0], drawn["ko"][0]
    assert english_left(english, catalogue), f"{name}: the English figure shows no label of the catalogue"
    assert english_left(korean, catalogue) == [], name
    assert drawn["en"][1] != drawn["ko"][1], f"{name}: the two PNGs are the same"


def _has_glyph(family: list[str], char: str) -> bool:
    path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    if FT2Font(path).get_char_index(ord(char)):
        return True
    return len(family) > 1 and _has_glyph(family[1:], char)


def hangul_without_glyphs(fig) -> list[str]:
    """The texts of ``fig`` with a Hangul syllable that no font of their family has (drawn as boxes)."""
    out = []
    for text in fig.findobj(matplotlib.text.Text):
        family = list(text.get_fontfamily())
        if any("\uac00" <= c <= "\ud7a3" and not _has_glyph(family, c) for c in text.get_text()):
            out.append(f"{text.get_text()!r} in {family}")
    return out


@pytest.mark.parametrize("name", list(FIGURES))
def test_every_korean_label_has_its_glyphs(name):
    assert plots.cjk_font() is not None, "no Hangul font for matplotlib: install fonts-nanum (make book installs it)"
    korean = labels.draw_in_each_language(FIGURES[name])["ko"][0]
    assert hangul_without_glyphs(korean) == [], name


def test_a_recipe_figure_in_korean_has_hangul_glyphs_and_no_english_label():
    """txcourse.course.figures.draw resets matplotlib's settings: the Korean image still gets a Hangul font."""
    from txcourse.course.figures import draw

    drawn = labels.draw_in_each_language(lambda: draw("week6_warmup_schedule", root=ROOT))
    assert english_left(drawn["ko"][0], labels.catalogue("ko")) == []
    assert english_left(drawn["en"][0], labels.catalogue("ko"))
    assert hangul_without_glyphs(drawn["ko"][0]) == []
    no_font = drawn["ko"][0]
    for text in no_font.findobj(matplotlib.text.Text):
        text.set_fontfamily(["DejaVu Sans"])
    assert hangul_without_glyphs(no_font), "the glyph check finds nothing on a figure set in DejaVu Sans"


def test_korean_labels_are_set_in_a_font_with_hangul():
    font = plots.cjk_font()
    assert font is not None, "no Hangul font for matplotlib: install fonts-nanum (make book installs it)"
    with labels.in_language("ko"):
        fig = plots.plot_attention(np.eye(2))
    hangul = [t for t in fig.findobj(matplotlib.text.Text) if any("\uac00" <= c <= "\ud7a3" for c in t.get_text())]
    assert len(hangul) >= 3, [t.get_text() for t in hangul]  # title, two axis labels, the colour bar's label
    for text in hangul:
        family = list(text.get_fontfamily())
        assert font in family, (text.get_text(), family)
        assert all(_has_glyph(family, c) for c in text.get_text() if "\uac00" <= c <= "\ud7a3"), text.get_text()
    with labels.in_language("en"):  # English figures keep matplotlib's fonts
        fig = plots.plot_attention(np.eye(2))
    assert font not in fig.axes[0].title.get_fontfamily()


def test_in_language_restores_the_language_and_refuses_an_unknown_one():
    with labels.in_language("ko"):
        assert labels.current_language() == "ko" and labels.tr("loss") == "손실"
    assert labels.current_language() == "en" and labels.tr("loss") == "loss"
    assert labels.tr("no such message") == "no such message" and labels._(None) is None
    with pytest.raises(ValueError, match="lang must be one of"), labels.in_language("de"):
        pass
    with pytest.raises(ValueError, match="message must be a string"):
        labels._(3)


def test_show_in_each_edition_displays_one_tagged_png_per_language(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, metadata: shown.append((obj, metadata)))
    assert plots.show_in_each_edition(lambda: plots.plot_mask(np.eye(3, dtype=bool))) is None
    assert [m for _, m in shown] == [{"txcourse": {"lang": "en"}}, {"txcourse": {"lang": "ko"}}]
    assert all(obj.format == "png" and obj.data.startswith(b"\x89PNG") for obj, _ in shown)
    assert shown[0][0].data != shown[1][0].data
    with pytest.raises(ValueError, match="draw must return a matplotlib Figure"):
        plots.show_in_each_edition(lambda: None)


# ---------------------------------------------------------------------------
# The book keeps the outputs of the edition's language
# ---------------------------------------------------------------------------
def _out(lang=None, kind="display_data"):
    return {"output_type": kind, "metadata": {} if lang is None else {"txcourse": {"lang": lang}}, "data": {}}


def test_outputs_for_keeps_untagged_outputs_and_those_of_the_language():
    text, en, ko = _out(kind="stream"), _out("en"), _out("ko")
    assert editions.outputs_for([text, en, ko], "en") == [text, en]
    assert editions.outputs_for([text, en, ko], "ko") == [text, ko]
    assert editions.outputs_for([text], "ko") == [text]
    with pytest.raises(editions.ExtensionError, match=r"in \['en', 'ko'\], not in 'fr'"):
        editions.outputs_for([en, ko], "fr")
    with pytest.raises(editions.ExtensionError, match='"txcourse" must be'):
        editions.outputs_for([{"metadata": {"txcourse": "ko"}}], "ko")


def test_language_filter_hands_the_renderer_only_the_outputs_of_the_build_language():
    seen = []
    render = editions.language_filter(lambda self, token, outputs: seen.append((token, outputs)))
    for language, kept in (("ko", [_out("ko"), _out()]), (None, [_out("en"), _out()])):
        builder_self = SimpleNamespace(sphinx_env=SimpleNamespace(config=SimpleNamespace(language=language)))
        render(builder_self, "token", [_out("en"), _out("ko"), _out()])
        assert seen.pop() == ("token", kept), language


def test_myst_nb_renderer_is_wrapped_once():
    from myst_nb.sphinx_ import SphinxNbRenderer

    editions._keep_outputs_of_the_language()
    editions._keep_outputs_of_the_language()
    wrapper = SphinxNbRenderer._render_nb_cell_code_outputs
    assert wrapper.txcourse_editions and not getattr(wrapper.__wrapped__, "txcourse_editions", False)


def test_labels_module_examples():
    import doctest

    result = doctest.testmod(labels)
    assert result.attempted >= 2 and result.failed == 0, result
