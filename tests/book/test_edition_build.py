"""A translated edition's second build (issue 33: ``make book``'s warm case) rebuilds what changed, and only then.

- book/_ext/edition_stamp.py, which lets ``make book-editions`` skip the Korean
  sphinx-build when no input changed: a page, a catalogue, a file under an
  extra path (the execution cache's notebooks), a changed setting, or a file
  edited while the last build ran each make it outdated; build outputs and
  the compiled ``.mo`` files do not.
- Sphinx itself, on a small project in two languages built twice into the same
  folders as ``make book-editions`` does: a ``.po`` edit and an English edit each
  reach the Korean page on the second build, which re-reads that page only (the
  English text shows where the catalogue no longer matches, as after ``make
  translations`` marks it fuzzy).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import edition_stamp  # noqa: E402

SIGNATURE = "sphinx-build -b html -D language=ko; editions: en ko"


def _write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def _tree(tmp_path: Path, old: float) -> Path:
    """A repository whose every file is older than ``old`` + 1."""
    root = tmp_path / "repo"
    for name in ("book/intro.md", "locales/ko/LC_MESSAGES/book/intro.po", "_config.yml", "txcourse/a.py"):
        _write(root / name, name, old)
    return root


def _stamped(root: Path, at: float) -> Path:
    stamp = root / "_build" / "ko" / ".edition-stamp"
    edition_stamp.start(stamp, SIGNATURE)
    os.utime(f"{stamp}.new", (at, at))
    edition_stamp.done(stamp)
    return stamp


def test_up_to_date_only_with_a_stamp_of_the_same_settings(tmp_path):
    now = time.time()
    root = _tree(tmp_path, now - 100)
    stamp = root / "_build" / "ko" / ".edition-stamp"
    assert edition_stamp.outdated(stamp, SIGNATURE, root) == f"no {stamp} (never built, or the last build failed)"
    edition_stamp.start(stamp, SIGNATURE)
    assert edition_stamp.outdated(stamp, SIGNATURE, root).startswith("no "), "a build not finished counts"
    edition_stamp.done(stamp)
    assert edition_stamp.outdated(stamp, SIGNATURE, root) is None
    assert edition_stamp.outdated(stamp, SIGNATURE.replace("en ko", "en"), root) == "the build's settings changed"


def test_a_page_a_catalogue_or_a_new_cached_notebook_makes_it_outdated(tmp_path):
    now = time.time()
    root = _tree(tmp_path, now - 100)
    cache = _write(root / "_build" / ".jupyter_cache" / "executed" / "aa" / "base.ipynb", "{}", now - 100).parents[1]
    stamp = _stamped(root, now - 50)
    assert edition_stamp.outdated(stamp, SIGNATURE, root, [cache]) is None
    for changed in ("book/intro.md", "locales/ko/LC_MESSAGES/book/intro.po", "_config.yml", "txcourse/a.py"):
        os.utime(root / changed, (now, now))
        assert edition_stamp.outdated(stamp, SIGNATURE, root, [cache]) == f"{root / changed} changed"
        os.utime(root / changed, (now - 100, now - 100))
    new = _write(cache / "bb" / "base.ipynb", "{}", now)
    assert edition_stamp.outdated(stamp, SIGNATURE, root, [cache]) == f"{new} changed"
    assert edition_stamp.outdated(stamp, SIGNATURE, root, [root / "no-such-conf.py"]) == (
        f"missing {root / 'no-such-conf.py'}"
    )


def test_build_outputs_and_compiled_catalogues_do_not_count(tmp_path):
    now = time.time()
    root = _tree(tmp_path, now - 100)
    stamp = _stamped(root, now - 50)
    for written in ("_build/html/book/intro.html", "locales/ko/LC_MESSAGES/book/intro.mo", "txcourse/__pycache__/a.pyc",
                    ".git/index", "node_modules/x/y.js"):  # fmt: skip
        _write(root / written, "output", now)
    assert edition_stamp.outdated(stamp, SIGNATURE, root) is None


def test_a_file_edited_during_the_build_rebuilds_next_time(tmp_path):
    """The stamp keeps the time the build started: an edit made while Sphinx ran is newer than it."""
    now = time.time()
    root = _tree(tmp_path, now - 100)
    stamp = root / "_build" / "ko" / ".edition-stamp"
    edition_stamp.start(stamp, SIGNATURE)
    os.utime(f"{stamp}.new", (now - 50, now - 50))
    _write(root / "book" / "intro.md", "edited while building", now - 20)
    edition_stamp.done(stamp)
    assert edition_stamp.outdated(stamp, SIGNATURE, root) == f"{root / 'book' / 'intro.md'} changed"


def test_command_line_exit_codes(tmp_path, capsys, monkeypatch):
    now = time.time()
    root = _tree(tmp_path, now - 100)
    monkeypatch.chdir(root)
    stamp = "_build/ko/.edition-stamp"
    assert edition_stamp.main(["check", stamp, SIGNATURE]) == 1
    assert edition_stamp.main(["start", stamp, SIGNATURE]) == 0
    assert edition_stamp.main(["done", stamp]) == 0
    assert edition_stamp.main(["check", stamp, SIGNATURE]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"up to date: nothing changed since {stamp}"
    assert edition_stamp.main(["check"]) == 2 and "usage:" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Sphinx's incremental build of a translated edition, on a small project
# ---------------------------------------------------------------------------
PO_HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


def _project(src: Path) -> None:
    _write(src / "conf.py", "project = 'p'\nlocale_dirs = ['locales']\ngettext_compact = False\n")
    _write(src / "index.rst", "Index\n=====\n\n.. toctree::\n\n   page\n\nThe index stays.\n")
    _write(src / "page.rst", "Page\n====\n\nThe attention weights.\n")
    _po(src, "The attention weights.", "어텐션 가중치.")


def _po(src: Path, msgid: str, msgstr: str) -> None:
    path = _write(
        src / "locales" / "ko" / "LC_MESSAGES" / "page.po", f'{PO_HEADER}msgid "{msgid}"\nmsgstr "{msgstr}"\n'
    )
    later = time.time() + 5  # newer than the .mo Sphinx compiled from it, whatever the file system's clock step
    os.utime(path, (later, later))


def _build(src: Path, out: Path) -> str:
    """Build the Korean edition into ``out`` (its environment kept in ``out/doctrees``, as make book-editions
    does); return Sphinx's "updating environment" line (what it re-read)."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-D", "language=ko", "-d", str(out / "doctrees"),
           "-W", "--keep-going", str(src), str(out / "html")]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return next(line for line in run.stdout.splitlines() if "updating environment" in line)


def _page(out: Path, name: str = "page") -> str:
    return (out / "html" / f"{name}.html").read_text(encoding="utf-8")


def test_second_build_shows_a_po_edit_and_an_english_edit_on_that_page_only(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _project(src)
    _build(src, out)
    assert "어텐션 가중치." in _page(out) and "The attention weights." not in _page(out)

    _po(src, "The attention weights.", "어텐션의 가중치.")  # a .po edit
    assert "0 added, 1 changed, 0 removed" in _build(src, out)  # that page re-read, not the index
    assert "어텐션의 가중치." in _page(out)

    page = src / "page.rst"  # an English edit: the catalogue's message no longer matches, the English shows
    page.write_text(page.read_text(encoding="utf-8").replace("weights.", "weights, edited."), encoding="utf-8")
    later = time.time() + 10
    os.utime(page, (later, later))
    assert "0 added, 1 changed, 0 removed" in _build(src, out)
    assert "The attention weights, edited." in _page(out) and "어텐션" not in _page(out)
    assert "The index stays." in _page(out, "index")
