"""book/references.bib parses, and every key the book cites is in it (a broken entry fails here, not in the build).

The keys are collected from ``{cite}``, ``{cite:p}``, ``{cite:t}`` ... roles in the chapters, exercises,
instructor solutions and slides; a merge that drops an entry's closing brace once made the file unparsable.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pybtex = pytest.importorskip("pybtex.database")

ROOT = Path(__file__).resolve().parents[2]
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")


def _cited() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for folder in ("book", "instructor", "slides"):
        for page in sorted((ROOT / folder).rglob("*.md")):
            for match in CITE.finditer(page.read_text(encoding="utf-8")):
                for key in match.group(1).split(","):
                    found.setdefault(key.strip(), []).append(str(page.relative_to(ROOT)))
    return found


def test_bibliography_parses_with_unique_keys():
    text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    entries = pybtex.parse_string(text, "bibtex").entries  # raises on a missing brace
    assert len(entries) == len(re.findall(r"^@\w+\{", text, flags=re.M)), "an entry swallowed the next one"
    # the book's style (bibtex_default_style: plain) needs an author or editor, a title and a year in every entry
    lacking = {
        key: [f for f in ("title", "year") if f not in entry.fields]
        + ([] if entry.persons.get("author") or entry.persons.get("editor") else ["author"])
        for key, entry in entries.items()
    }
    assert not {k: v for k, v in lacking.items() if v}, (
        f"entries missing fields: { {k: v for k, v in lacking.items() if v} }"
    )


def test_every_cited_key_is_in_the_bibliography():
    keys = set(pybtex.parse_file(str(ROOT / "book" / "references.bib")).entries)
    cited = _cited()
    assert cited, "no citation found: the pattern is out of date"
    missing = {key: pages[:3] for key, pages in cited.items() if key not in keys}
    assert not missing, f"cited but not in book/references.bib: {missing}"
