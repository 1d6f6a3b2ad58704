"""The source caps of a submission (round C, attacker C2): a cell over ``MAX_CELL_SOURCE`` bytes of source, or
cells over ``MAX_NOTEBOOK_SOURCE`` in all, are refused at intake, before the forbidden-name check, nbgrader
or the HTML feedback parse or render them (unconfined, those grew ~2.5 GB per MB of source); a notebook
just under the caps is graded; every notebook of the course is far under them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader")

from tests.course.test_grading import toy_course  # noqa: E402
from txcourse.course import grading  # noqa: E402
from txcourse.course.grading import submissions  # noqa: E402
from txcourse.course.grading.submissions import MAX_CELL_SOURCE, MAX_NOTEBOOK_SOURCE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
COURSE_NOTEBOOKS = sorted([*ROOT.glob("labs/source/*/*.ipynb"), *ROOT.glob("labs/release/*/*.ipynb")])
MARGIN = 10  # the caps are at least this many times what the course's own notebooks hold
MARK = "SOURCE-MARK-5c1e"  # in every padding line: shown nowhere when refused


def _padding(size: int, comment: bool = True) -> str:
    """``size`` bytes of source in lines of 80, as a long answer would be (a code comment or prose)."""
    line = ("# " if comment else "") + MARK + " " + "a" * 60
    lines, left = [], size
    while left > len(line) + 1:
        lines.append(line)
        left -= len(line) + 1
    lines.append("b" * left if not comment else "#" * left)
    text = "\n".join(lines)
    assert len(text.encode()) == size, (len(text.encode()), size)
    return text


def _with(source, *cells):
    nb = nbformat.from_dict(source)
    nb.cells.extend(cells)
    return nb


def _sources(path: Path) -> list[int]:
    return [len(c.source.encode("utf-8")) for c in nbformat.read(path, as_version=4).cells]


def test_course_notebooks_are_far_under_the_caps():
    """Every solution (labs/source) and released (labs/release) notebook of every lab, both frameworks."""
    assert len(COURSE_NOTEBOOKS) == 24, COURSE_NOTEBOOKS  # 6 labs x 2 frameworks x source/release
    for path in COURSE_NOTEBOOKS:
        sizes = _sources(path)
        assert max(sizes) * MARGIN <= MAX_CELL_SOURCE, (path, max(sizes))
        assert sum(sizes) * MARGIN <= MAX_NOTEBOOK_SOURCE, (path, sum(sizes))
        assert submissions.why_too_much_source(nbformat.read(path, as_version=4)) is None, path


def test_why_too_much_source_names_the_cell_its_size_and_the_cap():
    labs_nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# title")])
    assert submissions.why_too_much_source(labs_nb) is None
    big = _with(labs_nb, nbformat.v4.new_code_cell(_padding(MAX_CELL_SOURCE + 1)))
    big.cells[-1].metadata["nbgrader"] = {"grade_id": "mine", "solution": True}
    why = submissions.why_too_much_source(big)
    assert (
        why
        == f"cell 2 (code, grade id 'mine') has {MAX_CELL_SOURCE + 1:,} bytes of source, over the 128 KiB cap per cell"
    )
    md = _with(labs_nb, nbformat.v4.new_markdown_cell(_padding(MAX_CELL_SOURCE + 1, comment=False)))
    assert submissions.why_too_much_source(md).startswith("cell 2 (markdown) has "), submissions.why_too_much_source(md)
    at_cap = _with(labs_nb, nbformat.v4.new_code_cell(_padding(MAX_CELL_SOURCE)))
    assert submissions.why_too_much_source(at_cap) is None
    wide = _with(labs_nb, *[nbformat.v4.new_code_cell(_padding(MAX_CELL_SOURCE)) for _ in range(4)])
    assert submissions.why_too_much_source(wide) == (
        f"the cells have {4 * MAX_CELL_SOURCE + 7:,} bytes of source in all, over the 512 KiB cap per notebook"
    )
    odd = nbformat.from_dict(
        {"cells": [{"cell_type": "\x1b[2J" + MARK, "metadata": 5, "source": "x" * (MAX_CELL_SOURCE + 1)}]}
    )
    assert submissions.why_too_much_source(odd).startswith(
        "cell 1 (unknown kind) has 131,073 bytes"
    )  # nothing of it shown
    accented = _with(labs_nb, nbformat.v4.new_markdown_cell("é" * (MAX_CELL_SOURCE // 2 + 1)))  # 2 bytes each
    assert "has 131,074 bytes" in submissions.why_too_much_source(accented)


@pytest.mark.timeout(600)
def test_over_cap_sources_are_refused_at_intake_and_a_notebook_under_them_is_graded(tmp_path):
    labs, source = toy_course(tmp_path)
    under = MAX_NOTEBOOK_SOURCE - sum(len(c.source.encode()) for c in source.cells) - 1024  # the caps minus a little
    near = [nbformat.v4.new_code_cell(_padding(MAX_CELL_SOURCE - 100)) for _ in range(under // MAX_CELL_SOURCE)]
    near.append(nbformat.v4.new_markdown_cell(_padding(under - sum(len(c.source) for c in near), comment=False)))
    wide = [nbformat.v4.new_code_cell(_padding(MAX_CELL_SOURCE - 10)) for _ in range(4)]
    wide.append(nbformat.v4.new_markdown_cell(_padding(20_000, comment=False)))
    notebooks = {
        "honest": source,
        "near": _with(source, *near),
        "big_code": _with(source, nbformat.v4.new_code_cell(_padding(4 * MAX_CELL_SOURCE))),
        "big_markdown": _with(source, nbformat.v4.new_markdown_cell(_padding(MAX_CELL_SOURCE + 1, comment=False))),
        "wide": _with(source, *wide),
    }
    assert submissions.why_too_much_source(notebooks["near"]) is None
    subs = tmp_path / "submissions"
    for student, nb in notebooks.items():
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "toy_torch.ipynb")
    out = tmp_path / "grades" / "toy.csv"
    rows = grading.grade_submissions(subs, "toy", out, timeout=20, labs_dir=labs, verbose=False, jobs=1, sandbox=False)
    rows = {r["student"]: r for r in rows}
    for student in ("honest", "near"):
        assert (rows[student]["status"], rows[student]["score"], rows[student]["max_score"]) == ("graded", 5.0, 5.0)
    assert rows["big_code"]["status"] == (
        f"refused: cell 6 (code) has {4 * MAX_CELL_SOURCE:,} bytes of source, over the 128 KiB cap per cell"
    )
    assert rows["big_markdown"]["status"].startswith(f"refused: cell 6 (markdown) has {MAX_CELL_SOURCE + 1:,} bytes")
    assert (
        rows["wide"]["status"].startswith("refused: the cells have ")
        and "512 KiB cap per notebook" in rows["wide"]["status"]
    )
    with open(out, newline="", encoding="utf-8") as f:
        written = {r["student"]: r for r in csv.DictReader(f)}
    for student in ("big_code", "big_markdown", "wide"):
        assert rows[student]["score"] == 0 and not rows[student]["feedback"], rows[student]
        assert written[student]["score"] in ("0", "0.0") and MARK not in str(written[student]), written[student]
    assert not (out.parent / "feedback" / "big_code").exists()
