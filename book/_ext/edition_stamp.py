"""Skip a translated edition's Sphinx build when nothing it reads changed (issue 33: ``make book``'s warm case).

Sphinx rebuilds a translated edition incrementally (its environment is kept
in ``_build/<lang>/.doctrees``; a changed page or ``.po`` file re-reads that
page only), but even with nothing to do a ``sphinx-build`` of the book costs
seconds of start-up (the extensions, MyST-NB and its imports, the pickled
environment, the static files, the search index): on a loaded machine as long
as the English build itself. ``make book`` therefore asks this script first::

    python book/_ext/edition_stamp.py check STAMP SIGNATURE [PATH ...]   # exit 0: up to date, 1: build it
    python book/_ext/edition_stamp.py start STAMP SIGNATURE              # before the build: STAMP.new
    python book/_ext/edition_stamp.py done STAMP                         # after a good build: STAMP.new -> STAMP

The edition is up to date when ``STAMP`` exists, holds the same
``SIGNATURE`` (the sphinx-build command and the editions linked, so that a
changed setting rebuilds) and no input is newer than it. The inputs are
every file of the repository except build outputs, caches and installed
packages (:data:`SKIP`), which covers the pages, the catalogues, the
configuration, the extensions, the templates, the data and the code the
pages read, plus the extra ``PATH`` arguments (files, or folders walked:
the execution cache's ``executed/`` folder, whose new notebooks are new
files, the generated ``conf.py``, the virtual environment's stamp). The stamp's time is the build's START (``start``
writes ``STAMP.new``, ``done`` renames it), so a file edited during a build
is newer than the stamp and rebuilds the next time. A failed build leaves no
stamp: the next one runs Sphinx.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

# Folder names never read by the book build: outputs, caches, version control, installed packages.
SKIP = frozenset(
    {".git", "_build", "node_modules", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"}
)
# Files a build writes into the repository itself: Sphinx compiles each catalogue beside its .po
WRITTEN_BY_THE_BUILD = (".mo",)


def _files(path: Path) -> Iterator[Path]:
    """``path`` itself, or every file under it outside :data:`SKIP` (a new or changed file is newer; a folder's
    time changes with the files an editor or a test run leaves beside the sources, so it is not compared)."""
    if not path.is_dir():
        if path.exists():
            yield path
        return
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.name in SKIP:
                continue
            if entry.is_dir(follow_symlinks=False):
                yield from _files(Path(entry.path))
            elif not entry.name.endswith(WRITTEN_BY_THE_BUILD):
                yield Path(entry.path)


def newer(stamp: Path, roots: Iterable[Path]) -> Path | None:
    """The first file under ``roots`` modified after ``stamp`` was started; None when there is none."""
    since = stamp.stat().st_mtime
    for root in roots:
        for path in _files(Path(root)):
            if path.stat().st_mtime > since:
                return path
    return None


def outdated(stamp: Path, signature: str, root: Path, extra: Iterable[Path] = ()) -> str | None:
    """Why the edition stamped ``stamp`` must be rebuilt (one line), or None when it is up to date.

    ``root`` is the repository; ``extra`` more files or folders the build reads (a missing one rebuilds).
    """
    stamp = Path(stamp)
    if not stamp.is_file():
        return f"no {stamp} (never built, or the last build failed)"
    if stamp.read_text(encoding="utf-8") != signature:
        return "the build's settings changed"
    missing = [str(p) for p in extra if not Path(p).exists()]
    if missing:
        return f"missing {missing[0]}"
    changed = newer(stamp, [Path(root), *map(Path, extra)])
    return None if changed is None else f"{changed} changed"


def start(stamp: Path, signature: str) -> None:
    """Write ``STAMP.new`` (its time: the build's start) holding ``signature``."""
    stamp = Path(stamp)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)  # a build that fails leaves no stamp
    Path(f"{stamp}.new").write_text(signature, encoding="utf-8")


def done(stamp: Path) -> None:
    """The build succeeded: ``STAMP.new`` becomes ``STAMP`` (keeping the start time)."""
    Path(f"{stamp}.new").replace(stamp)


def main(argv: list[str]) -> int:
    usage = "usage: edition_stamp.py check STAMP SIGNATURE [PATH ...] | start STAMP SIGNATURE | done STAMP"
    if len(argv) < 2 or argv[0] not in ("check", "start", "done") or (argv[0] != "done" and len(argv) < 3):
        print(usage, file=sys.stderr)
        return 2
    command, stamp = argv[0], Path(argv[1])
    if command == "start":
        start(stamp, argv[2])
        return 0
    if command == "done":
        done(stamp)
        return 0
    reason = outdated(stamp, argv[2], Path.cwd(), [Path(p) for p in argv[3:]])
    print(f"up to date: nothing changed since {stamp}" if reason is None else f"rebuilding: {reason}")
    return 0 if reason is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
