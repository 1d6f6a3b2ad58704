"""The six lab names have one source, txcourse.course.labs.LABS; every other list of them reads it or equals it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from txcourse.course.labs import LABS, TRAINING_LABS

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"lab_names_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_labs_are_the_six_weeks_in_order():
    assert len(LABS) == 6 and [lab[:5] for lab in LABS] == [f"week{n}" for n in range(1, 7)], LABS
    assert set(TRAINING_LABS) <= set(LABS)


def test_the_course_folder_holds_one_source_folder_and_one_probe_file_per_lab():
    assert sorted(p.name for p in (ROOT / "labs" / "source").iterdir() if p.is_dir()) == list(LABS)
    assert sorted(p.stem for p in (ROOT / "labs" / "probes").glob("*.json")) == list(LABS)


def test_the_python_lists_read_the_constant():
    from txcourse.course.grading import course

    assert course.LABS is LABS and course.TRAINING_LABS is TRAINING_LABS
    assert _module(ROOT / "labs" / "make_sources.py").LABS is LABS


def test_the_catalogues_literal_lists_equal_the_constant():
    """labs/attacks and labs/mutants keep their own literal (they run as scripts beside the labs): held equal here."""
    attacks = (ROOT / "labs" / "attacks" / "attack_catalogue.py").read_text()
    literal = re.search(r"^LABS = \(([^)]*)\)", attacks, re.M)
    assert literal and tuple(re.findall(r'"(\w+)"', literal.group(1))) == LABS
    mutants = (ROOT / "labs" / "mutants" / "catalogue.py").read_text()
    literal = re.search(r"W1, W2, W3, W4, W5, W6 = \(([^)]*)\)", mutants)
    assert literal and tuple(re.findall(r'"(\w+)"', literal.group(1))) == LABS


def test_no_makefile_fragment_lists_the_labs_by_hand():
    """A recipe that needs the names reads them (python -c '... print(*LABS)'), never a copy."""
    for path in [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]:
        text = path.read_text()
        written = [lab for lab in LABS if lab in text]
        assert len(written) < 2, f"{path.name} lists the labs {written}: read txcourse.course.labs.LABS instead"


def test_the_labs_readme_table_lists_the_labs_in_order():
    rows = re.findall(r"^\| `(week\d_\w+)`", (ROOT / "labs" / "README.md").read_text(), re.M)
    assert tuple(rows) == LABS, rows
