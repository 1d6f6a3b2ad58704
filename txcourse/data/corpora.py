"""Loaders for real parallel corpora: the Anki English-Spanish file, tab-separated and CSV pair files.

Nothing here touches the network except :func:`download_anki`, which runs
only when you call it; loading is always from a local file.

* ``spa.txt`` (Anki / manythings.org, used in the source notes): one pair per
  line, ``English<TAB>Spanish<TAB>attribution``; the attribution is optional.
* any tab-separated pair file, ``source<TAB>target[<TAB>anything]`` (:func:`load_tsv`;
  ``txcourse train --task file --data PATH`` reads it).
* CSV pairs such as the source notes' Korean grammar-correction set: a
  header row naming the columns, extra columns (an index, ...) allowed.

Example:
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "spa.txt"
    >>> _ = p.write_text("Go.\\tVe.\\tCC-BY 2.0 (France)\\n", encoding="utf-8")
    >>> load_anki(p)
    [('Go.', 'Ve.')]
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path

from txcourse.data._checks import check_int
from txcourse.errors import TxcourseError

__all__ = [
    "ANKI_URL",
    "ANKI_SHA256",
    "default_cache_dir",
    "load_anki",
    "load_tsv",
    "download_anki",
    "load_pairs_csv",
]

# The archive the source notes (and the TensorFlow NMT tutorial) use; it holds spa-eng/spa.txt.
ANKI_URL = "http://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip"
# Not pinned: the digest could not be checked when this module was written (no network).
# With sha256=None, download_anki warns and prints the digest it got, to pin it.
ANKI_SHA256: str | None = None


def default_cache_dir() -> Path:
    """``$TXCOURSE_CACHE`` if set, else ``~/.cache/txcourse``."""
    env = os.environ.get("TXCOURSE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "txcourse"


def _check_max_pairs(max_pairs) -> int | None:
    if max_pairs is None:
        return None
    return check_int("max_pairs", max_pairs, minimum=1)


def _check_file(path, hint: str = "") -> Path:
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder, not a file{hint}")
    if not path.is_file():
        raise FileNotFoundError(f"file {str(path)!r} does not exist{hint}")
    return path


def load_anki(path: str | Path, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """Read an Anki tab-separated file (``English<TAB>Spanish[<TAB>attribution...]``).

    Args:
        path: the ``spa.txt`` file (UTF-8).
        max_pairs: stop after this many pairs (default: read all).

    Returns:
        List of ``(english, spanish)`` pairs, surrounding whitespace stripped.
        Empty lines are skipped.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        IsADirectoryError: ``path`` is a folder.
        ValueError: a line has fewer than 2 tab-separated fields or an empty
            English/Spanish field (the message names the file and the 1-based line).

    Example:
        >>> pairs = load_anki(download_anki(), max_pairs=1000)   # doctest: +SKIP
    """
    path = _check_file(
        path, hint="; fetch the English-Spanish file with txcourse.data.download_anki() and pass the path it returns"
    )
    return _read_tab_pairs(path, _check_max_pairs(max_pairs), ("English", "Spanish"))


def load_tsv(path: str | Path, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """Read ``source<TAB>target[<TAB>anything...]`` lines: any tab-separated pair file, an Anki one included.

    The format of :func:`load_anki`, for any pair of languages: fields after the
    second (an attribution, tags) are ignored, empty lines skipped. The header
    lines a text export of Anki starts with (``#separator:tab``, ``#html:false``,
    ``#tags column:3``, ...) are skipped too, before the first pair only.

    Args:
        path: the file (UTF-8, a byte-order mark and CRLF line ends allowed).
        max_pairs: stop after this many pairs (default: read all).

    Returns:
        List of ``(source, target)`` pairs, surrounding whitespace stripped.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        IsADirectoryError: ``path`` is a folder.
        ValueError: a line has no tab or an empty source/target field (the
            message names the file and the 1-based line).

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv"
        >>> _ = p.write_text("#separator:tab\\nseven\\t7\\n\\nforty two\\t42\\tnote\\n", encoding="utf-8")
        >>> load_tsv(p)
        [('seven', '7'), ('forty two', '42')]
    """
    return _read_tab_pairs(_check_file(path), _check_max_pairs(max_pairs), ("source", "target"))


def _is_anki_header(line: str) -> bool:
    """``#key:value``, the header lines of an Anki text export (``#separator:tab``, ``#tags column:3``)."""
    key, sep, _ = line[1:].partition(":")
    return line.startswith("#") and "\t" not in line and bool(sep) and key.replace(" ", "").isalpha()


def _read_tab_pairs(path: Path, max_pairs: int | None, names: tuple[str, str]) -> list[tuple[str, str]]:
    """The pairs of a tab-separated file; ``names`` are the two fields' names in error messages."""
    pairs: list[tuple[str, str]] = []
    lineno = 0
    with open(path, encoding="utf-8-sig", newline=None) as handle:
        try:
            for lineno, line in enumerate(handle, start=1):
                line = line.rstrip("\n")
                if not line.strip() or (not pairs and _is_anki_header(line)):
                    continue
                fields = line.split("\t")
                if len(fields) < 2:
                    raise TxcourseError(
                        f"{path}, line {lineno}: expected at least 2 tab-separated fields "
                        f"({names[0]}<TAB>{names[1]}[<TAB>anything]), got {len(fields)}: {line[:80]!r}"
                    )
                src, tgt = fields[0].strip(), fields[1].strip()
                for name, value in ((f"field 1 ({names[0]})", src), (f"field 2 ({names[1]})", tgt)):
                    if not value:
                        raise TxcourseError(f"{path}, line {lineno}: {name} is empty: {line[:80]!r}")
                pairs.append((src, tgt))
                if max_pairs is not None and len(pairs) >= max_pairs:
                    break
        except UnicodeDecodeError as err:
            raise TxcourseError(f"{path}, line {lineno + 1}: not valid UTF-8 ({err.reason})") from None
    return pairs


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, cache: Path, name: str, archive: Path, sha256: str | None) -> None:
    """Download ``url`` into ``archive`` through a temporary file in ``cache``, checked against ``sha256``."""
    import urllib.request

    fd, tmp_name = tempfile.mkstemp(dir=cache, prefix=name, suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with urllib.request.urlopen(url) as response, open(tmp, "wb") as out:
            shutil.copyfileobj(response, out)
        got = _sha256(tmp)
        if sha256 is None:
            warnings.warn(
                f"download_anki: no sha256 given, {url} not verified; its SHA-256 "
                f"is {got} (pass sha256={got!r} to pin it)",
                stacklevel=3,  # download_anki's caller
            )
        elif got.lower() != sha256.lower():
            raise TxcourseError(
                f"SHA-256 mismatch for {url}: expected {sha256.lower()}, got "
                f"{got}; the download was deleted (pass the right sha256, or "
                f"check the URL)"
            )
        tmp.replace(archive)
    finally:
        tmp.unlink(missing_ok=True)


def _extract_spa(archive: Path, target: Path) -> None:
    """``spa.txt`` of the zip ``archive`` (or the archive itself, a text file) copied to ``target``."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.namelist() if m.rsplit("/", 1)[-1] == "spa.txt"]
            if not members:
                raise TxcourseError(f"archive {str(archive)!r} holds no spa.txt; it contains {zf.namelist()[:10]}")
            with zf.open(members[0]) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(archive, target)


def download_anki(
    cache_dir: str | Path | None = None, url: str = ANKI_URL, sha256: str | None = ANKI_SHA256, force: bool = False
) -> Path:
    """Download the English-Spanish Anki file once, check it, return the path of ``spa.txt``.

    Only this function uses the network, and only when called. The archive
    is saved in ``cache_dir`` under its URL file name, its SHA-256 is checked
    (a mismatch deletes it and raises), then ``spa.txt`` is extracted next
    to it. Later calls reuse the cached file. ``url`` may point to a zip
    holding a ``spa.txt`` or to the text file itself; ``file://`` URLs work.

    Args:
        cache_dir: where to keep the files (default :func:`default_cache_dir`).
        url: where to download from.
        sha256: expected hex digest of the downloaded file. ``None`` skips
            the check with a warning that shows the digest, so you can pin it.
        force: download again even if the file is cached.

    Returns:
        Path of the extracted ``spa.txt`` (pass it to :func:`load_anki`).

    Raises:
        ValueError: the digest does not match, or the archive holds no ``spa.txt``.

    Example:
        >>> path = download_anki()                  # doctest: +SKIP
        >>> pairs = load_anki(path)                 # doctest: +SKIP
    """

    if sha256 is not None and (
        not isinstance(sha256, str) or len(sha256) != 64 or any(c not in "0123456789abcdefABCDEF" for c in sha256)
    ):
        raise TxcourseError(f"sha256 must be 64 hexadecimal characters or None, got {sha256!r}", "sha256")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    name = url.rstrip("/").rsplit("/", 1)[-1] or "spa-eng.zip"
    archive = cache / name
    target = cache / "spa.txt"

    if force or not archive.is_file():
        _download(url, cache, name, archive, sha256)
        if archive != target:
            target.unlink(missing_ok=True)  # re-extract from the new download
    elif sha256 is not None and _sha256(archive).lower() != sha256.lower():
        raise TxcourseError(
            f"cached file {str(archive)!r} does not match sha256={sha256.lower()}; "
            f"call download_anki(force=True) to download it again"
        )

    if not target.is_file():
        _extract_spa(archive, target)
    return target


def _csv_columns(path: Path, header, src_column: str, tgt_column: str) -> list[str]:
    """The CSV file's columns, from its header row, which must hold both ``src_column`` and ``tgt_column``."""
    if header is None:
        raise TxcourseError(
            f"{path}: the file is empty; expected a header row with columns {src_column!r} and {tgt_column!r}"
        )
    columns = [c.strip() for c in header]
    missing = [c for c in (src_column, tgt_column) if c not in columns]
    if missing:
        raise TxcourseError(
            f"{path}: column(s) {missing} not found; the header has "
            f"{columns}, expected src_column={src_column!r} and "
            f"tgt_column={tgt_column!r}"
        )
    return columns


def _read_csv_rows(path: Path, reader, columns: list[str], src_column: str, tgt_column: str, max_pairs, pairs) -> None:
    """Append the (source, target) of each row of ``reader`` to ``pairs`` (at most ``max_pairs`` in all)."""
    i_src, i_tgt = columns.index(src_column), columns.index(tgt_column)
    start = reader.line_num
    for row in reader:
        lineno, start = start + 1, reader.line_num
        if not row:
            continue  # blank line
        if len(row) != len(columns):
            raise TxcourseError(
                f"{path}, line {lineno}: expected {len(columns)} fields ({columns}), got {len(row)}: {row[:6]!r}"
            )
        src, tgt = row[i_src].strip(), row[i_tgt].strip()
        for name, value in ((src_column, src), (tgt_column, tgt)):
            if not value:
                raise TxcourseError(f"{path}, line {lineno}: column {name!r} is empty")
        pairs.append((src, tgt))
        if max_pairs is not None and len(pairs) >= max_pairs:
            break


def load_pairs_csv(
    path: str | Path, src_column: str = "src", tgt_column: str = "tgt", max_pairs: int | None = None
) -> list[tuple[str, str]]:
    """Read (source, target) pairs from a UTF-8 CSV file with a header row.

    Extra columns (such as a pandas index column) are ignored.

    Args:
        path: the CSV file.
        src_column: header of the source column.
        tgt_column: header of the target column.
        max_pairs: stop after this many pairs (default: read all).

    Returns:
        List of ``(src, tgt)`` pairs, surrounding whitespace stripped.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        IsADirectoryError: ``path`` is a folder.
        ValueError: a column is missing (the message lists the columns found),
            or a row has the wrong number of fields or an empty src/tgt (the
            message names the file and the 1-based line).

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "pairs.csv"
        >>> _ = p.write_text(",src,tgt\\n0,나는 학교 간다,나는 학교에 간다\\n", encoding="utf-8")
        >>> load_pairs_csv(p)
        [('나는 학교 간다', '나는 학교에 간다')]
    """
    path = _check_file(path)
    max_pairs = _check_max_pairs(max_pairs)
    pairs: list[tuple[str, str]] = []
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        try:
            columns = _csv_columns(path, next(reader, None), src_column, tgt_column)
            _read_csv_rows(path, reader, columns, src_column, tgt_column, max_pairs, pairs)
        except csv.Error as err:
            raise TxcourseError(f"{path}, line {reader.line_num}: malformed CSV ({err})") from None
        except UnicodeDecodeError as err:
            raise TxcourseError(f"{path}, after line {reader.line_num}: not valid UTF-8 ({err.reason})") from None
    return pairs
