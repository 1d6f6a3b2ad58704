"""The labs' Korean edition (issue 33, item 4): catalogues complete and current, markup and terms kept, and the
Korean notebooks the English ones but for their Markdown text.

The catalogues are ``locales/ko/LC_MESSAGES/labs/<lab>.po`` (and ``_cells.po``, the
text every lab shares), extracted from labs/specs by labs/i18n.py; the Korean
notebooks are ``labs/ko/source`` and ``labs/ko/release`` (labs/make_sources.py,
then ``grading release --labs-dir labs/ko``). Each check is shown to fail on a
small made-up case first. The last test grades the same code in both editions
(minutes: ``make test-labs`` runs it, TXCOURSE_LAB_TESTS=1).
"""

from __future__ import annotations

import os
import shutil
import sys
import types
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from txcourse.course.labs import LABS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "labs"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import i18n as labs_i18n  # noqa: E402 - labs/i18n.py
import i18n_checks as checks  # noqa: E402 - book/_ext/i18n_checks.py
from specs import _cells as spec_cells  # noqa: E402 - its `tests` is not imported by name: pytest would collect it
from specs._cells import md  # noqa: E402

LANG = "ko"
CATALOGUES = labs_i18n.catalogue_dir(LANG)
TERMS = checks.read_terms((ROOT / "locales" / LANG / "terms.tsv").read_text(encoding="utf-8"))
NAMES = [labs_i18n.SHARED, *LABS]
FRAMEWORKS = ("torch", "tf")


def _catalogues() -> dict:
    return checks.read_catalogues(CATALOGUES)


# ---------------------------------------------------------------------------
# The checks, on made-up cases
# ---------------------------------------------------------------------------
@pytest.fixture
def fake_lab(monkeypatch):
    """A lab ``fake_lab`` whose spec holds one Markdown cell (set ``.CELLS`` to change it)."""
    module = types.ModuleType("specs.fake_lab")
    module.CELLS = [
        md(
            """
            # Fake lab ([[FW]])

            Write `f(x)`: the attention weights of `x`.

            $$y = f(x)$$

            ```python
            f(1)
            ```
            """
        ),
        spec_cells.tests("test_f", 1, "assert True"),
    ]
    monkeypatch.setitem(sys.modules, "specs.fake_lab", module)
    return module


def test_extraction_cuts_paragraphs_and_leaves_code_and_display_math(fake_lab):
    found = labs_i18n.messages(["fake_lab"])
    assert [m for m, _ in found["fake_lab"]] == ["# Fake lab ([[FW]])", "Write `f(x)`: the attention weights of `x`."]
    assert {w for _, w in found["fake_lab"]} == {"fake_lab cell-00"}
    assert labs_i18n.SHARED in found  # the shared text's catalogue is always there


def test_extraction_sends_the_shared_text_to_its_own_catalogue(fake_lab):
    from specs._cells import SETUP_NOTE

    fake_lab.CELLS = [md(("# Title", SETUP_NOTE))]
    found = labs_i18n.messages(["fake_lab"])
    assert [m for m, _ in found["fake_lab"]] == ["# Title"]
    assert [m for m, _ in found[labs_i18n.SHARED]] == [labs_i18n.parts(SETUP_NOTE)[0]]


def test_update_marks_new_changed_and_removed_messages(fake_lab, tmp_path, monkeypatch):
    """``make translations`` (labs/i18n.py update): new untranslated, changed fuzzy, removed obsolete."""
    monkeypatch.setattr(labs_i18n, "shared_texts", lambda: set())
    labs_i18n.update(LANG, ["fake_lab"], tmp_path)
    path = labs_i18n.catalogue_dir(LANG, tmp_path) / "fake_lab.po"
    cat = labs_i18n.read(path)
    assert checks.status_problems("fake_lab", cat) == [
        "fake_lab: untranslated: '# Fake lab ([[FW]])'",
        "fake_lab: untranslated: 'Write `f(x)`: the attention weights of `x`.'",
    ]
    for message in cat:
        if message.id:
            message.string = "번역 " + message.id
    labs_i18n.write(cat, path)
    fake_lab.CELLS = [md("# Fake lab ([[FW]])\n\nWrite `f(x)`: the attention weights of `x`, twice.\n\nNew text.")]
    labs_i18n.update(LANG, ["fake_lab"], tmp_path)
    problems = checks.status_problems("fake_lab", labs_i18n.read(path))
    assert problems == [
        "fake_lab: fuzzy (the English changed; check the translation): "
        "'Write `f(x)`: the attention weights of `x`, twice.'",
        "fake_lab: untranslated: 'New text.'",
    ], problems
    fake_lab.CELLS = [md("# Fake lab ([[FW]])")]
    labs_i18n.update(LANG, ["fake_lab"], tmp_path)
    assert [p.split(":")[1].strip() for p in checks.status_problems("fake_lab", labs_i18n.read(path))] == [
        "obsolete (no longer in the English page; `make translations` lists it)"
    ] * 2


def test_message_check_names_lost_markup_placeholders_and_terms():
    msgid = "Write `f(x)` in [[FW]]: the attention weights of $x$."
    good = "[[FW]]로 `f(x)`를 작성하라: $x$의 어텐션 가중치다."
    assert labs_i18n.message_problems("fake", msgid, good, TERMS, checks) == []
    assert labs_i18n.message_problems("fake", msgid, "", TERMS, checks) == []  # the status check's business
    for broken, expect in (
        ("[[FW]]로 f(x)를 작성하라: $x$의 어텐션 가중치다.", "lost '`f(x)`'"),
        ("[[FW]]로 `f(x)`를 작성하라: x의 어텐션 가중치다.", "lost '$x$'"),
        ("PyTorch로 `f(x)`를 작성하라: $x$의 어텐션 가중치다.", "placeholders []"),
        ("[[FW]]로 `f(x)`를 작성하라: $x$의 주의 가중치다.", "'attention weights' is '어텐션 가중치'"),
    ):
        problems = labs_i18n.message_problems("fake", msgid, broken, TERMS, checks)
        assert len(problems) == 1 and expect in problems[0], (broken, problems)
    # inline math broken over two lines of a cell stays math: no term is read inside it
    split = "The layer is $\\mathrm{LayerNorm}(x +\n\\mathrm{Dropout}(y))$."
    assert labs_i18n.message_problems("fake", split, "층은 $\\mathrm{LayerNorm}(x +\n\\mathrm{Dropout}(y))$이다.",
                                      TERMS, checks) == []  # fmt: skip


def test_translator_reports_what_it_cannot_translate(tmp_path):
    translator = labs_i18n.Translator(LANG, tmp_path)  # no catalogues there
    text = "# Title\n\n$$x$$"
    assert translator(text, lab="fake", where="fake cell-00") == text
    assert translator.missing == ["fake cell-00: no ko translation of '# Title'"]
    translator.tables["other_lab"] = {"# Title": "# 다른 실습의 제목"}  # another lab's catalogue: not used
    assert translator(text, lab="fake", where="fake cell-00") == text
    translator.tables[labs_i18n.SHARED] = {"# Title": "# 공통 제목"}
    assert translator(text, lab="fake", where="fake cell-00") == "# 공통 제목\n\n$$x$$"
    translator.tables["fake"] = {"# Title": "# 제목"}  # the lab's own first
    assert translator(text, lab="fake", where="fake cell-00") == "# 제목\n\n$$x$$"


def test_make_sources_check_fails_on_a_message_without_translation(monkeypatch, capsys):
    """`make_sources.py --check` (make test-labs) fails and names the message the catalogue lacks."""
    import make_sources

    assert make_sources.main(["--check", "--lab", "week4_encoder"]) == 0
    lost = "## Stacking layers: a small encoder"

    class Lacking(labs_i18n.Translator):
        def __init__(self, lang, root=labs_i18n.ROOT):
            super().__init__(lang, root)
            del self.tables["week4_encoder"][lost]

    monkeypatch.setattr(make_sources, "Translator", Lacking)
    capsys.readouterr()
    assert make_sources.main(["--check", "--lab", "week4_encoder"]) == 1
    err = capsys.readouterr().err
    assert f"week4_encoder cell-10: no ko translation of {lost!r}" in err, err
    assert "ko/source/week4_encoder/week4_encoder_torch.ipynb" in err, err


def _pair():
    english = new_notebook(
        cells=[new_markdown_cell("# Title\n\n$$x$$", id="cell-00"), new_code_cell("x = 1", id="answer")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    english.cells[1].metadata["nbgrader"] = {"grade_id": "answer", "points": 1}
    return english, nbformat.from_dict(english)


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (lambda nb: None, "left English"),
        (lambda nb: setattr(nb.cells[1], "source", "x = 2"), "code cell's source differs"),
        (lambda nb: nb.cells[1].metadata["nbgrader"].update(points=2), "metadata"),
        (lambda nb: nb.metadata.update(language="ko"), "notebook metadata"),
        (lambda nb: setattr(nb.cells[0], "source", "# 제목\n\n$$y$$"), "display math changed"),
        (lambda nb: setattr(nb.cells[0], "source", "# 제목 $$x$$"), "1 Markdown blocks"),
        (lambda nb: setattr(nb.cells[1], "id", "cell-01"), "id"),
        (lambda nb: nb.cells.pop(), "1 cells"),
    ],
)
def test_edition_check_finds_each_difference(edit, expect):
    english, korean = _pair()
    korean.cells[0].source = "# 제목\n\n$$x$$"
    assert labs_i18n.edition_problems("fake", english, korean) == []
    korean.cells[0].source = english.cells[0].source  # untranslated
    if expect != "left English":
        korean.cells[0].source = "# 제목\n\n$$x$$"
    edit(korean)
    problems = labs_i18n.edition_problems("fake", english, korean)
    assert len(problems) == 1 and expect in problems[0], problems


# ---------------------------------------------------------------------------
# The real catalogues and notebooks
# ---------------------------------------------------------------------------
def test_every_lab_has_a_catalogue():
    assert sorted(_catalogues()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_catalogue_is_complete(name):
    """0 untranslated, 0 fuzzy, 0 obsolete (``make translations`` after an English edit, then translate)."""
    problems = checks.status_problems(name, _catalogues()[name])
    assert not problems, "\n".join(problems)


def test_catalogues_hold_the_specs_messages():
    """Re-extracted from labs/specs, the messages are the catalogues' (an edit without `make translations`
    fails here)."""
    english = {name: {m for m, _ in found} for name, found in labs_i18n.messages(LABS).items()}
    catalogues = {name: {m.id for m in cat if m.id} for name, cat in _catalogues().items()}
    problems = checks.drift_problems(english, catalogues)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_translations_keep_markup_placeholders_and_terms(name):
    problems = [
        p for m in _catalogues()[name] if m.id for p in labs_i18n.message_problems(name, m.id, m.string, TERMS, checks)
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kind", ["source", "release"])
@pytest.mark.parametrize("lab", LABS)
def test_korean_notebooks_are_the_english_ones_but_for_their_markdown(lab, kind):
    """Same cells, ids, nbgrader metadata, code, kernel spec; the Markdown translated (labs/ko/)."""
    problems = []
    for fw in FRAMEWORKS:
        name = f"{lab}_{fw}.ipynb"
        english = nbformat.read(ROOT / "labs" / kind / lab / name, as_version=4)
        korean = nbformat.read(ROOT / "labs" / LANG / kind / lab / name, as_version=4)
        problems += labs_i18n.edition_problems(f"{kind}/{lab}/{name}", english, korean)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab", LABS)
def test_korean_release_is_its_source_made_into_the_student_version(lab):
    """nbgrader changes no Markdown cell: the Korean student version's Markdown is the Korean source's, and its
    other cells are the English student version's (the test above), so it is as current as the English one
    (``make test-labs`` regenerates that and compares)."""
    for fw in FRAMEWORKS:
        name = f"{lab}_{fw}.ipynb"
        source = nbformat.read(ROOT / "labs" / LANG / "source" / lab / name, as_version=4)
        release = nbformat.read(ROOT / "labs" / LANG / "release" / lab / name, as_version=4)
        text = {c.get("id"): c.source for c in source.cells if c.cell_type == "markdown"}
        stale = [c.get("id") for c in release.cells if c.cell_type == "markdown" and c.source != text.get(c.get("id"))]
        assert not stale, f"labs/ko/release/{lab}/{name}: Markdown cells {stale} differ from labs/ko/source (make labs)"


def test_korean_notebooks_are_far_below_the_graders_source_caps():
    """Hangul takes 3 bytes in UTF-8: the Korean notebooks still hold a tenth of the caps or less (the margin
    tests/course/test_grading_source_caps.py keeps for the English ones), and a submission is not refused."""
    from txcourse.course.grading import submissions

    paths = sorted((ROOT / "labs" / LANG).glob("*/*/*.ipynb"))
    assert len(paths) == 4 * len(LABS), paths  # source and release, two frameworks
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        sizes = [len(cell.source.encode("utf-8")) for cell in notebook.cells]
        assert max(sizes) * 10 <= submissions.MAX_CELL_SOURCE, (path, max(sizes))
        assert sum(sizes) * 10 <= submissions.MAX_NOTEBOOK_SOURCE, (path, sum(sizes))
        assert submissions.why_too_much_source(notebook) is None, path


def test_korean_course_folder_grades_with_the_english_probes_and_configuration():
    """labs/ko is a course folder of its own (the grading commands take it as --labs-dir): its probes and
    nbgrader configuration are the English course's, byte for byte."""
    ko = ROOT / "labs" / LANG
    assert sorted(p.name for p in (ko / "source").iterdir()) == sorted(LABS)
    assert sorted(p.name for p in (ko / "release").iterdir()) == sorted(LABS)
    for rel in [*(f"probes/{lab}.json" for lab in LABS), "nbgrader_config.py", "nbval_sanitize.cfg"]:
        assert (ko / rel).read_bytes() == (ROOT / "labs" / rel).read_bytes(), rel


# ---------------------------------------------------------------------------
# Graded alike (minutes: make test-labs)
# ---------------------------------------------------------------------------
def _korean(notebook, lab: str, name: str):
    """``notebook`` (an English submission) with the Korean edition's Markdown, by cell id."""
    korean = nbformat.read(ROOT / "labs" / LANG / "release" / lab / f"{name}.ipynb", as_version=4)
    text = {c.get("id"): c.source for c in korean.cells if c.cell_type == "markdown"}
    out = nbformat.from_dict(notebook)
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = text[cell.get("id")]
    return out


# One framework a lab (make test-labs' time): the odd weeks in PyTorch, the even ones in TensorFlow; week 3
# (PyTorch) is graded by the test after this one, with a partial answer too. `make test-labs-ko` runs
# `grading check` on every Korean notebook in both frameworks.
GRADED = [(lab, FRAMEWORKS[i % 2]) for i, lab in enumerate(LABS) if lab != "week3_attention"]


@pytest.mark.skipif(os.environ.get("TXCOURSE_LAB_TESTS") != "1", reason="slow: run by `make test-labs`")
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("lab", "fw"), GRADED)
def test_korean_solution_gets_full_marks_and_blank_zero(lab, fw, tmp_path):
    """The Korean instructor version (labs/ko/source) and student version (labs/ko/release), graded as students
    are (``grading grade --labs-dir labs/ko``): full marks and 0."""
    from txcourse.course import grading

    name = f"{lab}_{fw}"
    for student, kind in (("solution", "source"), ("blank", "release")):
        (tmp_path / "subs" / student).mkdir(parents=True)
        shutil.copy2(ROOT / "labs" / LANG / kind / lab / f"{name}.ipynb", tmp_path / "subs" / student)
    found = grading.grade_submissions(tmp_path / "subs", lab, tmp_path / "g.csv", labs_dir=ROOT / "labs" / LANG)
    rows = {r["student"]: r for r in found if r["framework"] == fw}
    solution, blank = rows["solution"], rows["blank"]
    assert solution["max_score"] > 0 and solution["score"] == solution["max_score"], solution
    assert blank["score"] == 0 and blank["max_score"] == solution["max_score"], blank


@pytest.mark.skipif(os.environ.get("TXCOURSE_LAB_TESTS") != "1", reason="slow: run by `make test-labs`")
@pytest.mark.timeout(1800)
def test_the_same_code_gets_the_same_grades_in_both_editions(tmp_path):
    """Week 3 (PyTorch): the solution, a partial answer (the heads left blank) and the blank student version,
    each in English and in Korean: a Korean submission's row (score, failed tests, status) is the English
    one's, graded by the Korean course (labs/ko) and by the English one."""
    from txcourse.course import grading

    lab, name = "week3_attention", "week3_attention_torch"
    source = nbformat.read(ROOT / "labs" / "source" / lab / f"{name}.ipynb", as_version=4)
    blank = nbformat.read(ROOT / "labs" / "release" / lab / f"{name}.ipynb", as_version=4)
    partial = nbformat.from_dict(source)
    heads = [c.get("id") for c in source.cells].index("heads")
    partial.cells[heads].source = blank.cells[heads].source
    english, korean = tmp_path / "en", tmp_path / "ko"
    for student, nb in (("solution", source), ("partial", partial), ("blank", blank)):
        for folder, prefix, notebook in ((english, "", nb), (english, "ko-", _korean(nb, lab, name))):
            (folder / f"{prefix}{student}").mkdir(parents=True)
            nbformat.write(notebook, folder / f"{prefix}{student}" / f"{name}.ipynb")
        (korean / student).mkdir(parents=True)
        nbformat.write(_korean(nb, lab, name), korean / student / f"{name}.ipynb")
    keys = ("score", "max_score", "status", "failed_tests", "forbidden")

    def rows(folder, labs_dir):
        found = grading.grade_submissions(folder, lab, folder.with_suffix(".csv"), timeout=60, labs_dir=labs_dir)
        return {r["student"]: tuple(r[k] for k in keys) for r in found if r["framework"] == "torch"}

    by_english = rows(english, ROOT / "labs")
    by_korean = rows(korean, ROOT / "labs" / LANG)
    assert by_english["solution"][:2] == (17.0, 17.0) and by_english["blank"][0] == 0.0, by_english
    assert 0 < by_english["partial"][0] < 17.0 and "test_heads" in by_english["partial"][3], by_english
    for student in ("solution", "partial", "blank"):
        assert by_english[f"ko-{student}"] == by_english[student], (student, by_english)
        assert by_korean[student] == by_english[student], (student, by_korean, by_english)
