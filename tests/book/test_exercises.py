"""The end-of-chapter exercises and their instructor-only solutions.

- every chapter of the Weeks part of ``_toc.yml`` includes its exercises file
  ``book/exercises/<chapter>.md`` (one ``{include}``, before the "## Lab"
  section when there is one), and so does every other chapter that has one;
- each exercise ("### Exercise 3.2: ...") has exactly one solution
  ("## Exercise 3.2: ..." in ``instructor/exercise_solutions/<chapter>.md``)
  and each solution one exercise;
- every python block of the solutions runs and its assertions hold (one
  fresh interpreter per solutions file, each block in a fresh namespace);
- no solution text reaches the built book (``_build/html``): checked when a
  built book exists, and by ``make book-check`` after every ``make book``.

Run as a script, ``python tests/book/test_exercises.py --check-site _build/html``
performs only the last check and exits non-zero on a leak (``make book-check``).
"""

from __future__ import annotations

import html as htmllib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "book" / "exercises"
SOLUTIONS = ROOT / "instructor" / "exercise_solutions"
SITE = ROOT / "_build" / "html"

EXERCISE_HEADING = re.compile(r"^### Exercise ([0-9A-Z]+\.[0-9]+): \S", re.M)
SOLUTION_HEADING = re.compile(r"^## Exercise ([0-9A-Z]+\.[0-9]+): \S", re.M)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)
INCLUDE = re.compile(r"^```\{include\}\s+exercises/(\S+)\.md\s*\n```\s*$", re.M)


# ---------------------------------------------------------------------------
# Parsing (no pytest needed: ``make book-check`` runs this file as a script)
# ---------------------------------------------------------------------------
def toc_parts(toc_text: str) -> dict[str, list[str]]:
    """Chapters of each part of _toc.yml, by caption: {"Weeks": ["week1_seq2seq", ...], ...}.

    A regular expression rather than a YAML parser, as in tests/book/test_book_browser.py.
    """
    parts: dict[str, list[str]] = {}
    caption = None
    for line in toc_text.splitlines():
        found = re.match(r"^\s*-?\s*caption:\s*(.+?)\s*$", line)
        if found:
            caption = found.group(1)
            parts[caption] = []
            continue
        found = re.match(r"^\s*-?\s*file:\s*book/(\S+?)(\.md)?\s*$", line)
        if found and caption is not None:
            parts[caption].append(found.group(1))
    return parts


def numbers(text: str, heading: re.Pattern) -> list[str]:
    return heading.findall(text)


def python_blocks(text: str) -> list[str]:
    return PYTHON_BLOCK.findall(text)


def _words(text: str) -> list[str]:
    """Lower-case words (letters, digits, Hangul), punctuation and markup dropped: how pages are compared."""
    return re.findall(r"\w+", text.lower())


def solution_ngrams(text: str, n: int = 10) -> set[tuple[str, ...]]:
    """Every run of `n` consecutive words of the prose of a solutions file.

    Code blocks, headings (the exercise titles are in the book on purpose),
    inline code and math are left out: the book renders those differently.
    A run found in a page of the built book means solution text was published.
    """
    prose = PYTHON_BLOCK.sub("\n\n", text)
    prose = re.sub(r"```.*?```", "\n\n", prose, flags=re.S)
    grams: set[tuple[str, ...]] = set()
    for paragraph in re.split(r"\n\s*\n", prose):
        if paragraph.lstrip().startswith("#"):
            continue
        for piece in re.split(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", paragraph, flags=re.S):
            words = _words(piece)
            grams.update(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return grams


def page_words(path: Path) -> list[str]:
    """The words of the visible text of a built page: scripts, styles and tags dropped, entities decoded."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S | re.I)
    return _words(htmllib.unescape(re.sub(r"<[^>]+>", " ", raw)))


def site_leaks(site: Path, solutions: Path = SOLUTIONS, n: int = 10) -> list[str]:
    """Every (page, words) where a solutions file's prose, or the file itself, shows up in the built site."""
    grams: dict[tuple[str, ...], str] = {}
    for path in sorted(solutions.glob("*.md")):
        for gram in solution_ngrams(path.read_text(encoding="utf-8"), n):
            grams.setdefault(gram, path.name)
    leaks = [
        f"{p.relative_to(site)}: the site holds a copy of a solutions file"
        for p in site.rglob("*")
        if {"exercise_solutions", "instructor"} & set(p.relative_to(site).parts)
    ]
    for page in sorted(site.rglob("*.html")):
        words = page_words(page)
        found = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)} & grams.keys()
        leaks += [f"{page.relative_to(site)}: '{' '.join(g)}' (from {grams[g]})" for g in sorted(found)]
    return leaks


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------
if __name__ != "__main__":
    import pytest

    TOC = toc_parts((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    EXERCISE_FILES = sorted(p.stem for p in EXERCISES.glob("*.md"))
    SOLUTION_FILES = sorted(p.stem for p in SOLUTIONS.glob("*.md"))

    def test_toc_has_weeks():
        assert len(TOC.get("Weeks", [])) >= 6, f"_toc.yml has no Weeks part with the six weeks: {TOC}"

    @pytest.mark.parametrize("chapter", TOC.get("Weeks", []))
    def test_every_week_has_exercises(chapter):
        assert (EXERCISES / f"{chapter}.md").is_file(), (
            f"book/{chapter}.md is a week of _toc.yml but book/exercises/{chapter}.md does not exist"
        )

    @pytest.mark.parametrize("chapter", sorted(set(TOC.get("Weeks", [])) | set(EXERCISE_FILES)))
    def test_chapter_includes_its_exercises(chapter):
        page = ROOT / "book" / f"{chapter}.md"
        assert page.is_file(), f"book/exercises/{chapter}.md has no chapter: book/{chapter}.md does not exist"
        text = page.read_text(encoding="utf-8")
        included = INCLUDE.findall(text)
        assert included == [chapter], (
            f"book/{chapter}.md must include its exercises exactly once, as\n"
            f"```{{include}} exercises/{chapter}.md\n```\n(found includes of {included})"
        )
        at = INCLUDE.search(text).start()
        lab = re.search(r"^## Lab\b", text, re.M)
        if lab:
            assert at < lab.start(), f"book/{chapter}.md: the exercises must come before its '## Lab' section"
        after = text[INCLUDE.search(text).end() : lab.start() if lab else len(text)]
        assert not re.search(r"^#{1,2} ", after, re.M), (
            f"book/{chapter}.md: the exercises must be the last section before the lab (or the end)"
        )

    def test_exercise_files_are_excluded_from_the_build():
        config = (ROOT / "_config.yml").read_text(encoding="utf-8")
        block = config.split("exclude_patterns:", 1)[1].split("\n\n", 1)[0]
        for pattern in ("book/exercises", "instructor"):
            assert re.search(rf"^\s*-\s*{pattern}\s*(#.*)?$", block, re.M), (
                f"_config.yml: exclude_patterns lacks {pattern}"
            )

    @pytest.mark.parametrize("chapter", EXERCISE_FILES)
    def test_exercises_numbered_with_one_solution_each(chapter):
        exercises = numbers((EXERCISES / f"{chapter}.md").read_text(encoding="utf-8"), EXERCISE_HEADING)
        assert 4 <= len(exercises) <= 6, f"book/exercises/{chapter}.md has {len(exercises)} exercises, not 4-6"
        assert len(set(exercises)) == len(exercises), f"book/exercises/{chapter}.md repeats a number: {exercises}"
        prefixes = {n.split(".")[0] for n in exercises}
        assert len(prefixes) == 1, f"book/exercises/{chapter}.md mixes chapter numbers: {exercises}"
        path = SOLUTIONS / f"{chapter}.md"
        assert path.is_file(), f"no solutions for book/exercises/{chapter}.md: {path.relative_to(ROOT)} is missing"
        solutions = numbers(path.read_text(encoding="utf-8"), SOLUTION_HEADING)
        assert sorted(solutions) == sorted(set(solutions)), f"{path.name} has a solution twice: {solutions}"
        assert solutions == exercises, (
            f"exercises {exercises} and solutions {solutions} of {chapter} must match one to one, in order"
        )

    def test_no_solution_without_exercises():
        orphans = sorted(set(SOLUTION_FILES) - set(EXERCISE_FILES))
        assert not orphans, f"solutions without an exercises file: {orphans}"

    def test_numbers_unique_across_chapters():
        seen: dict[str, str] = {}
        for chapter in EXERCISE_FILES:
            for n in numbers((EXERCISES / f"{chapter}.md").read_text(encoding="utf-8"), EXERCISE_HEADING):
                assert n not in seen, f"Exercise {n} is in both {seen[n]} and {chapter}"
                seen[n] = chapter

    # One interpreter runs the blocks of every solutions file (PyTorch and TensorFlow are imported once,
    # not once per file), each block in a fresh namespace; it reports every block, failed or not.
    RUNNER = r"""
import json, os, sys, traceback
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
for chapter, blocks in json.load(sys.stdin).items():
    for i, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"<{chapter}, python block {i}>", "exec"), {"__name__": "__solution__"})
            error = None
        except BaseException:
            error = traceback.format_exc()
        print("@@result " + json.dumps({"chapter": chapter, "block": i, "error": error}), flush=True)
"""

    def run_solution_blocks(files: dict[str, list[str]]) -> tuple[dict[str, list], str]:
        """Run {chapter: [python block, ...]} in one fresh interpreter; returns the results by chapter."""
        import json

        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            OMP_NUM_THREADS="1",
            CUDA_VISIBLE_DEVICES="",
            MPLBACKEND="Agg",
        )
        done = subprocess.run(
            [sys.executable, "-c", RUNNER],
            input=json.dumps(files),
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=600,
        )
        results: dict[str, list] = {}
        for line in done.stdout.splitlines():
            if line.startswith("@@result "):
                row = json.loads(line.removeprefix("@@result "))
                results.setdefault(row["chapter"], []).append(row)
        return results, done.stderr[-3000:]

    @pytest.fixture(scope="module")
    def solution_runs():
        files = {c: python_blocks((SOLUTIONS / f"{c}.md").read_text(encoding="utf-8")) for c in SOLUTION_FILES}
        return files, run_solution_blocks(files)

    @pytest.mark.parametrize("chapter", SOLUTION_FILES)
    def test_solution_code_runs(chapter, solution_runs):
        files, (results, stderr) = solution_runs
        blocks = files[chapter]
        assert blocks, f"instructor/exercise_solutions/{chapter}.md has no python block"
        assert any("assert" in b for b in blocks), f"{chapter}: the solutions' code must check its claims with assert"
        rows = results.get(chapter, [])
        assert len(rows) == len(blocks), (
            f"{chapter}: {len(rows)} of {len(blocks)} python blocks reported (the runner died?)\n{stderr}"
        )
        failed = [f"block {r['block']}:\n{r['error']}" for r in rows if r["error"]]
        assert not failed, f"{chapter} solutions:\n" + "\n".join(failed)

    def test_runner_reports_failures():
        """The runner must be able to fail: a false assertion and an exception are reported, per block."""
        results, _ = run_solution_blocks(
            {"demo": ["x = 1\nassert x == 1", "assert 1 == 2, 'wrong'", "import no_such_module_txcourse"]}
        )
        errors = [r["error"] for r in results["demo"]]
        assert errors[0] is None
        assert "AssertionError: wrong" in errors[1] and "ModuleNotFoundError" in errors[2]

    def test_leak_check_catches_a_quoted_solution(tmp_path):
        """The leak check must be able to fail: a page quoting a solution paragraph, marked up, is caught."""
        text = (SOLUTIONS / "week3_attention.md").read_text(encoding="utf-8")
        paragraph = next(
            p for p in re.split(r"\n\s*\n", PYTHON_BLOCK.sub("", text)) if p.startswith("1. ") and len(_words(p)) > 30
        )
        page = "<p>" + re.sub(r"`([^`]*)`", r"<code>\1</code>", paragraph).replace("\n", "\n  ") + "</p>"
        (tmp_path / "book").mkdir()
        (tmp_path / "book" / "page.html").write_text(page, encoding="utf-8")
        assert site_leaks(tmp_path)
        (tmp_path / "book" / "page.html").write_text("<p>" + " ".join(_words(paragraph)[:9]) + "</p>")
        assert not site_leaks(tmp_path)  # nine words in a row are not a leak

    def test_every_solutions_file_has_prose_to_check():
        for chapter in SOLUTION_FILES:
            found = solution_ngrams((SOLUTIONS / f"{chapter}.md").read_text(encoding="utf-8"))
            assert len(found) >= 40, f"{chapter}: too little prose for the leak check ({len(found)} runs)"

    def test_built_book_has_no_solutions():
        if not (SITE / "index.html").is_file():
            if os.environ.get("TXCOURSE_BROWSER_TESTS") == "1":
                pytest.fail(f"no built book in {SITE}: run `make book` first")
            pytest.skip(
                f"no built book in {SITE} (run `make book`; `make book-check` runs this check after every build)"
            )
        leaks = site_leaks(SITE)
        assert not leaks, "solution text in the built book:\n" + "\n".join(leaks[:20])


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Fail if solution text reached the built book.")
    parser.add_argument("--check-site", type=Path, required=True, help="the built HTML book, e.g. _build/html")
    args = parser.parse_args()
    if not args.check_site.is_dir():
        sys.exit(f"--check-site: {args.check_site} is not a directory (build the book first)")
    found = site_leaks(args.check_site)
    if found:
        sys.exit(
            "ERROR: solution text from instructor/exercise_solutions is in the built book:\n" + "\n".join(found[:20])
        )
    print(f"==> no solution text in {args.check_site}")
