"""Corpus loaders on small local files; download_anki through file:// URLs only (offline)."""

import hashlib
import re
import zipfile

import pytest

from txcourse.data import download_anki, load_anki, load_pairs_csv

ANKI = (
    "Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM)\n"
    "Hi.\tHola.\n"
    "\n"
    "I'm 19.\tTengo diecinueve.\tCC-BY 2.0 (France)\textra\n"
)


def test_load_anki_two_and_three_fields(tmp_path):
    path = tmp_path / "spa.txt"
    path.write_text(ANKI, encoding="utf-8")
    assert load_anki(path) == [("Go.", "Ve."), ("Hi.", "Hola."), ("I'm 19.", "Tengo diecinueve.")]
    assert load_anki(str(path), max_pairs=2) == [("Go.", "Ve."), ("Hi.", "Hola.")]


def test_load_anki_crlf_and_bom(tmp_path):
    path = tmp_path / "spa.txt"
    path.write_bytes("\ufeffGo.\tVe.\r\nHi.\tHola.\r\n".encode("utf-8"))
    assert load_anki(path) == [("Go.", "Ve."), ("Hi.", "Hola.")]


def test_load_anki_missing_file_mentions_download(tmp_path):
    missing = tmp_path / "nowhere" / "spa.txt"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing)) + ".*download_anki"):
        load_anki(missing)


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("only one field", r"line 2: expected at least 2 tab-separated fields .* got 1"),
        ("\tVacío.", r"line 2: field 1 \(English\) is empty"),
        ("Empty.\t  \tCC-BY", r"line 2: field 2 \(Spanish\) is empty"),
    ],
)
def test_load_anki_malformed_line_names_file_and_line(tmp_path, bad_line, message):
    path = tmp_path / "broken.txt"
    path.write_text(f"Go.\tVe.\n{bad_line}\nHi.\tHola.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(path)) + ", " + message):
        load_anki(path)


def test_load_anki_bad_max_pairs(tmp_path):
    path = tmp_path / "spa.txt"
    path.write_text(ANKI, encoding="utf-8")
    with pytest.raises(ValueError, match="max_pairs must be an integer >= 1, got 0"):
        load_anki(path, max_pairs=0)


# ---- download_anki, offline through file:// ---------------------------------


def _zip_with_spa(tmp_path):
    archive = tmp_path / "src" / "spa-eng.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("spa-eng/spa.txt", ANKI)
    return archive, hashlib.sha256(archive.read_bytes()).hexdigest()


def test_download_anki_good_checksum(tmp_path):
    archive, digest = _zip_with_spa(tmp_path)
    cache = tmp_path / "cache"
    path = download_anki(cache_dir=cache, url=archive.as_uri(), sha256=digest)
    assert path == cache / "spa.txt" and (cache / "spa-eng.zip").is_file()
    assert load_anki(path)[0] == ("Go.", "Ve.")
    archive.unlink()  # a second call uses the cache, no download
    assert download_anki(cache_dir=cache, url=archive.as_uri(), sha256=digest) == path


def test_download_anki_bad_checksum_raises_and_keeps_nothing(tmp_path):
    archive, digest = _zip_with_spa(tmp_path)
    cache = tmp_path / "cache"
    wrong = "0" * 64
    with pytest.raises(ValueError, match=f"SHA-256 mismatch .*expected {wrong}, got {digest}"):
        download_anki(cache_dir=cache, url=archive.as_uri(), sha256=wrong)
    assert list(cache.iterdir()) == []
    with pytest.raises(ValueError, match="sha256 must be 64 hexadecimal characters"):
        download_anki(cache_dir=cache, url=archive.as_uri(), sha256="abc")


def test_download_anki_without_checksum_warns_with_digest(tmp_path):
    plain = tmp_path / "spa.txt"
    plain.write_text(ANKI, encoding="utf-8")
    digest = hashlib.sha256(plain.read_bytes()).hexdigest()
    with pytest.warns(UserWarning, match=digest):
        path = download_anki(cache_dir=tmp_path / "cache", url=plain.as_uri(), sha256=None)
    assert len(load_anki(path)) == 3


# ---- CSV pairs ---------------------------------------------------------------


def test_load_pairs_csv_with_index_and_extra_columns(tmp_path):
    path = tmp_path / "grammar.csv"
    path.write_text(
        ',src,tgt,source\n0,나는 학교 간다,나는 학교에 간다,web\n1,"그는, 밥 먹었다","그는, 밥을 먹었다",web\n',
        encoding="utf-8",
    )
    assert load_pairs_csv(path) == [("나는 학교 간다", "나는 학교에 간다"), ("그는, 밥 먹었다", "그는, 밥을 먹었다")]
    assert load_pairs_csv(path, max_pairs=1) == [("나는 학교 간다", "나는 학교에 간다")]
    assert load_pairs_csv(path, src_column="tgt", tgt_column="source")[0] == ("나는 학교에 간다", "web")


def test_load_pairs_csv_wrong_columns_lists_them(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("input,output\na,b\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=re.escape(str(path)) + r".*\['src', 'tgt'\] not found; the header has \['input', 'output'\]"
    ):
        load_pairs_csv(path)
    assert load_pairs_csv(path, src_column="input", tgt_column="output") == [("a", "b")]


@pytest.mark.parametrize(
    "row, message",
    [
        ("3,x", r"line 3: expected 3 fields .* got 2"),
        ("3,x,y,z", r"line 3: expected 3 fields .* got 4"),
        ("3,,y", r"line 3: column 'src' is empty"),
        ('3,x," "', r"line 3: column 'tgt' is empty"),
    ],
)
def test_load_pairs_csv_malformed_row_names_file_and_line(tmp_path, row, message):
    path = tmp_path / "pairs.csv"
    path.write_text(f",src,tgt\n1,a,b\n{row}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(path)) + ", " + message):
        load_pairs_csv(path)


def test_load_pairs_csv_line_numbers_count_multiline_fields(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text('src,tgt\n"two\nlines",b\nc,\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 4: column 'tgt' is empty"):
        load_pairs_csv(path)


def test_load_pairs_csv_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.csv"):
        load_pairs_csv(tmp_path / "absent.csv")
