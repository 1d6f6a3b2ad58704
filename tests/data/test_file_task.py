"""The ``file`` task: a user's tab-separated file read, split deterministically and tokenised."""

import re

import pytest

from txcourse._validation import ArgumentError
from txcourse.data import BPETokenizer, CharTokenizer, get_task, load_tsv
from txcourse.data.file_task import file_sha256, file_tokenizers, make_file_task, split_pairs
from txcourse.data.prepare import prepare_task, tokenizers_from_meta
from txcourse.data.vocab import tokenizer_from_json

PAIRS = [(f"{i} red apples", f"{i} manzanas rojas") for i in range(50)]


def write(path, pairs=PAIRS, extra=""):
    path.write_text("".join(f"{s}\t{t}{extra}\n" for s, t in pairs), encoding="utf-8")
    return path


def test_splits_cover_the_file_once_and_are_deterministic(tmp_path):
    path = write(tmp_path / "pairs.tsv")
    first = make_file_task(path, seed=3)
    assert (len(first.train), len(first.valid), len(first.test)) == (40, 5, 5)
    assert sorted(first.train + first.valid + first.test) == sorted(PAIRS)  # every pair in exactly one split
    again = make_file_task(str(path), seed=3)
    assert first.as_dict() == again.as_dict()
    other = make_file_task(path, seed=4)
    assert other.test != first.test  # the seed shuffles
    assert first.train != PAIRS[:40]  # shuffled, not the file's first lines


def test_split_pairs_sizes_round_and_keep_one_per_split():
    pairs = [(str(i), str(i)) for i in range(7)]
    assert [len(s) for s in split_pairs(pairs, (0.8, 0.1, 0.1), 0)] == [5, 1, 1]  # 0.7 rounds to 1
    assert [len(s) for s in split_pairs(pairs, (1.0, 0.0, 0.0), 0)] == [7, 0, 0]
    assert [len(s) for s in split_pairs(pairs, (0.5, 0.25, 0.25), 0)] == [3, 2, 2]
    assert [len(s) for s in split_pairs(pairs[:3], (0.8, 0.1, 0.1), 0)] == [1, 1, 1]  # the fewest the default takes


def test_the_checkpoint_arguments_rebuild_the_task(tmp_path):
    path = write(tmp_path / "pairs.tsv")
    prepared = prepare_task("file", path=path, tokens="char", seed=1)
    kwargs = prepared.task_kwargs
    assert kwargs["path"] == str(path.resolve()) and kwargs["sha256"] == file_sha256(path)
    assert get_task("file", **kwargs).as_dict() == prepared.splits.as_dict()
    write(path, PAIRS[:-1])  # the file changes after training
    with pytest.raises(ValueError, match=r"has changed since the checkpoint was trained on it: its SHA-256 is"):
        get_task("file", **kwargs)


def test_anki_file_with_attribution_and_export_header(tmp_path):
    path = tmp_path / "spa.txt"
    path.write_text(
        "\ufeff#separator:tab\r\n#html:false\r\nGo.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org\r\n"
        "\r\nHi.\tHola.\tCC-BY\r\nRun!\t¡Corre!\r\n",
        encoding="utf-8",
    )
    assert load_tsv(path) == [("Go.", "Ve."), ("Hi.", "Hola."), ("Run!", "¡Corre!")]
    splits = make_file_task(path, tokens="char")
    assert sorted(splits.train + splits.valid + splits.test) == sorted(load_tsv(path))


def test_bpe_shared_vocabulary_is_one_tokenizer_on_both_sides(tmp_path):
    splits = make_file_task(write(tmp_path / "pairs.tsv"), vocab_size=60)
    src, tgt = file_tokenizers(splits)
    assert src is tgt and isinstance(src, BPETokenizer)
    assert 30 < src.vocab_size <= 60
    assert {"▁manzanas", "▁apples"} & set(src.vocab)  # words of both languages merged into one vocabulary
    for text in ("3 red apples", "12 manzanas rojas"):
        assert src.decode(src.encode(text)) == text


def test_separate_vocabularies_and_characters(tmp_path):
    path = write(tmp_path / "pairs.tsv")
    src, tgt = file_tokenizers(make_file_task(path, shared_vocab=False, vocab_size=60))
    assert src is not tgt and "z" in tgt.vocab and "z" not in src.vocab  # "manzanas" only on the target side
    src, tgt = file_tokenizers(make_file_task(path, tokens="char", shared_vocab=False))
    assert isinstance(src, CharTokenizer) and set(tgt.vocab) - set(src.vocab) >= {"m", "z"}


def test_tokenizers_survive_the_checkpoint_metadata(tmp_path):
    prepared = prepare_task("file", path=write(tmp_path / "pairs.tsv"), vocab_size=60)
    meta = {"tokenizers": {"src": prepared.src_tokenizer.to_json(), "tgt": prepared.tgt_tokenizer.to_json()}}
    src, tgt = tokenizers_from_meta(meta)
    text = "7 red apples"
    assert src.encode(text) == prepared.src_tokenizer.encode(text) and tgt.vocab == prepared.tgt_tokenizer.vocab
    assert tokenizer_from_json(prepared.src_tokenizer.to_json()).tokenize(text) == src.tokenize(text)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "absent.tsv")) + ".* does not exist"):
        make_file_task(tmp_path / "absent.tsv")


def test_a_folder_is_a_folder_not_a_missing_file(tmp_path):
    with pytest.raises(IsADirectoryError, match=re.escape(f"{str(tmp_path)!r} is a folder, not a file")):
        make_file_task(tmp_path)
    with pytest.raises(IsADirectoryError, match=re.escape(f"{str(tmp_path)!r} is a folder, not a file")):
        load_tsv(tmp_path)


@pytest.mark.parametrize("text", ["", "\n\n  \n", "#separator:tab\n"])
def test_empty_file(tmp_path, text):
    path = tmp_path / "empty.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="holds no pairs: it is empty"):
        make_file_task(path)


def test_line_without_a_tab_names_its_number(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("one\tuno\ntwo\tdos\n\nthree tres\nfour\tcuatro\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 4: expected at least 2 tab-separated fields .* got 1: 'three tres'"):
        make_file_task(path)


@pytest.mark.parametrize(
    "n, fractions, message",
    [
        (2, (0.8, 0.1, 0.1), r"2 pairs in the file, too few .* leaves 0 for train; give at least 3 pairs"),
        (1, (0.9, 0.1, 0.0), r"1 pair in the file, too few .* valid takes 1 and test 0, which leaves 0"),
        (10, (0.02, 0.5, 0.48), r"10 pairs in the file, too few .* valid takes 5 and test 5, which leaves 0"),
    ],
)
def test_too_few_pairs_for_the_splits(tmp_path, n, fractions, message):
    with pytest.raises(ValueError, match=message):
        make_file_task(write(tmp_path / "few.tsv", PAIRS[:n]), fractions=fractions)


@pytest.mark.parametrize(
    "kwargs, name, message",
    [
        (dict(fractions=(0.8, 0.1)), "fractions", "fractions must be 3 numbers"),
        (dict(fractions=(0.8, 0.1, 0.2)), "fractions", r"must sum to 1 .* \(sum 1.1\)"),
        (dict(fractions=(0.8, -0.1, 0.3)), "fractions", "valid=-0.1"),
        (dict(tokens="word"), "tokens", r"tokens must be one of \['bpe', 'char'\], got 'word'"),
        (dict(vocab_size=4), "vocab_size", "vocab_size must be an integer >= 5, got 4"),
        (dict(shared_vocab="yes"), "shared_vocab", "shared_vocab must be True or False"),
        (dict(seed=-1), "seed", "seed must be an integer >= 0"),
        (dict(max_pairs=0), "max_pairs", "max_pairs must be an integer >= 1, got 0"),
    ],
)
def test_bad_arguments_are_named(tmp_path, kwargs, name, message):
    with pytest.raises(ArgumentError, match=message) as caught:
        make_file_task(write(tmp_path / "pairs.tsv"), **kwargs)
    assert caught.value.argument == name


def test_max_pairs_reads_the_first_lines(tmp_path):
    splits = make_file_task(write(tmp_path / "pairs.tsv"), max_pairs=10, tokens="char")
    assert sorted(splits.train + splits.valid + splits.test) == sorted(PAIRS[:10])
