"""Tokenizers of txcourse.data (vocab.py, char_word.py, bpe.py): special ids, round trips, unknowns, save/load."""

import json
import re

import numpy as np
import pytest

from txcourse.data import (
    EOS_ID,
    PAD_ID,
    SOS_ID,
    SPECIAL_TOKENS,
    UNK,
    UNK_ID,
    BPETokenizer,
    CharTokenizer,
    WordTokenizer,
    load_tokenizer,
    tokenizer_from_json,
)

TEXTS = [
    "twelve thousand, three hundred and forty-five",
    "one hundred and one",
    "nine hundred and ninety-nine thousand, nine hundred and ninety-nine",
    "만 이천삼백사십오",
    "¿Dónde está la biblioteca?",
] * 5


def _fit(kind):
    if kind == "char":
        return CharTokenizer.fit(TEXTS)
    if kind == "word":
        return WordTokenizer.fit(TEXTS)
    return BPETokenizer.fit(TEXTS, vocab_size=80)


KINDS = ["char", "word", "bpe"]


@pytest.mark.parametrize("kind", KINDS)
def test_special_tokens_have_fixed_ids(kind):
    tok = _fit(kind)
    assert tok.vocab[:4] == list(SPECIAL_TOKENS) == ["<pad>", "<sos>", "<eos>", "<unk>"]
    assert (tok.pad_id, tok.sos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert tok.vocab_size == len(tok.vocab) == len(set(tok.vocab))


@pytest.mark.parametrize("kind", KINDS)
def test_encode_decode_round_trip(kind):
    tok = _fit(kind)
    for text in set(TEXTS):
        ids = tok.encode(text)
        assert all(isinstance(i, int) and 4 <= i < tok.vocab_size for i in ids)
        assert tok.decode(ids) == text


@pytest.mark.parametrize("kind", KINDS)
def test_sos_eos_added_and_decode_stops_at_first_eos(kind):
    tok = _fit(kind)
    ids = tok.encode("one hundred", add_sos=True, add_eos=True)
    assert ids[0] == SOS_ID and ids[-1] == EOS_ID
    assert ids[1:-1] == tok.encode("one hundred")
    garbage = tok.encode("nine")
    padded = ids + garbage + [PAD_ID, PAD_ID]
    assert tok.decode(padded) == "one hundred"
    assert tok.decode(np.array(padded)) == "one hundred"  # numpy ids accepted
    kept = tok.decode(padded, strip_special=False)  # everything rendered, spacing per kind
    assert kept.replace(" ", "") == "<sos>onehundred<eos>nine<pad><pad>"


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_maps_to_unk(kind):
    tok = _fit(kind)
    ids = tok.encode("zebra" if kind != "word" else "one zebra")
    assert UNK_ID in ids
    assert UNK in tok.decode(ids)  # <unk> stays visible


def test_char_vocab_sorted_by_frequency_then_character():
    tok = CharTokenizer.fit(["abca", "cb", "d"])  # a:2 b:2 c:2 d:1
    assert tok.vocab[4:] == ["a", "b", "c", "d"]
    tok = CharTokenizer.fit(["zzzyyx"])
    assert tok.vocab[4:] == ["z", "y", "x"]
    assert CharTokenizer.fit(["aab"], min_freq=2).vocab[4:] == ["a"]


def test_word_tokenizer_splits_punctuation_and_reattaches_it():
    tok = WordTokenizer.fit(TEXTS)
    assert tok.tokenize("twelve thousand, three hundred and forty-five") == [
        "twelve",
        "thousand",
        ",",
        "three",
        "hundred",
        "and",
        "forty",
        "-",
        "five",
    ]
    assert tok.tokenize("¿Dónde está?") == ["¿", "Dónde", "está", "?"]
    assert (
        WordTokenizer.fit(["Go. Don't (run)!"]).decode(
            WordTokenizer.fit(["Go. Don't (run)!"]).encode("Go. Don't (run)!")
        )
        == "Go. Don't (run)!"
    )


def test_word_tokenizer_lowercase_and_min_freq():
    tok = WordTokenizer.fit(["The cat", "the dog"], lowercase=True, min_freq=2)
    assert tok.vocab[4:] == ["the"]
    assert tok.encode("THE cat") == [4, UNK_ID]


def test_bpe_is_deterministic_and_subword():
    a = BPETokenizer.fit(TEXTS, vocab_size=80)
    b = BPETokenizer.fit(TEXTS, vocab_size=80)
    assert a.vocab == b.vocab
    assert a.vocab_size <= 80
    assert len(a.tokenize("thousand")) < len("thousand")  # merges happened


@pytest.mark.parametrize("kind", KINDS)
def test_save_load_round_trip(kind, tmp_path):
    tok = _fit(kind)
    path = tmp_path / f"{kind}.json"
    tok.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["kind"] == kind
    back = load_tokenizer(path)
    assert type(back) is type(tok)
    assert back.vocab == tok.vocab
    for text in set(TEXTS) | {"unseen Zebra!"}:
        assert back.encode(text, add_sos=True, add_eos=True) == tok.encode(text, add_sos=True, add_eos=True)


def test_word_lowercase_survives_save(tmp_path):
    tok = WordTokenizer.fit(["Hello World"], lowercase=True)
    tok.save(tmp_path / "w.json")
    assert load_tokenizer(tmp_path / "w.json").encode("HELLO") == tok.encode("HELLO") != [UNK_ID]


def test_load_tokenizer_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        load_tokenizer(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "sentencepiece"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json.*'sentencepiece'.*\['bpe', 'char', 'word'\]"):
        load_tokenizer(bad)
    bad.write_text("not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid UTF-8 JSON"):
        load_tokenizer(bad)


def test_argument_errors():
    tok = CharTokenizer.fit(["ab"])
    with pytest.raises(ValueError, match=r"ids\[1\] = 99 .*\[0, 6\)"):
        tok.decode([4, 99])
    with pytest.raises(ValueError, match="text must be a str"):
        tok.encode(["a"])
    with pytest.raises(ValueError, match="single string"):
        CharTokenizer.fit("abc")
    with pytest.raises(ValueError, match="min_freq must be an integer >= 1, got 0"):
        WordTokenizer.fit(["a"], min_freq=0)
    with pytest.raises(ValueError, match="vocab_size must be an integer > 4"):
        BPETokenizer.fit(["a"], vocab_size=3)


# ---- normalisation (issue 12): lowercase + ignored punctuation, unknown words ----

NUMBER_WORDS = ["twelve thousand, three hundred and forty-five", "one hundred and one", "forty-two"]


@pytest.mark.parametrize(
    "variant",
    [
        "Twelve thousand three hundred and forty five",
        "  TWELVE   THOUSAND, three hundred and forty-five \t",
        "twelve thousand three hundred and forty-five",
        "twelve thousand, three hundred and forty five",
    ],
)
def test_word_tokenizer_ignore_normalises_like_training(variant):
    tok = WordTokenizer.fit(NUMBER_WORDS, lowercase=True, ignore=(",", "-"))
    assert "," not in tok.vocab and "-" not in tok.vocab
    canonical = tok.encode(NUMBER_WORDS[0])
    assert UNK_ID not in canonical
    assert tok.encode(variant) == canonical
    assert tok.unknown_words(variant) == []


def test_unknown_words_names_each_unknown_once_in_order():
    tok = WordTokenizer.fit(NUMBER_WORDS, lowercase=True, ignore=(",", "-"))
    assert tok.unknown_words("one Zebra, one million zebra.") == ["zebra", "million", "."]
    assert tok.unknown_words("") == []
    assert WordTokenizer.fit(NUMBER_WORDS).unknown_words("Twelve thousand") == ["Twelve"]  # case-sensitive
    assert CharTokenizer.fit(["ab"]).unknown_words("abcz c") == ["c", "z", " "]
    assert BPETokenizer.fit(TEXTS, vocab_size=80).unknown_words("one hundred Zebra!") == ["Zebra!"]
    with pytest.raises(ValueError, match="text must be a str"):
        tok.unknown_words(None)


@pytest.mark.parametrize(
    "ignore, message",
    [
        (",", "got the string ','"),
        ((",", "a b"), "ignore holds 'a b', which is not one token"),
        ((",", "--"), "ignore holds '--', which is not one token"),
        (5, "ignore must be a list of tokens, got int"),
    ],
)
def test_word_tokenizer_ignore_is_checked(ignore, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        WordTokenizer.fit(NUMBER_WORDS, ignore=ignore)


def test_word_normalisation_survives_json(tmp_path):
    tok = WordTokenizer.fit(NUMBER_WORDS, lowercase=True, ignore=(",", "-"))
    state = json.loads(tok.to_json())
    assert state["lowercase"] is True and state["ignore"] == [",", "-"]
    tok.save(tmp_path / "w.json")
    back = load_tokenizer(tmp_path / "w.json")
    assert (back.lowercase, back.ignore, back.vocab) == (True, (",", "-"), tok.vocab)
    assert back.encode("TWELVE thousand three hundred and forty five") == tok.encode(NUMBER_WORDS[0])


def test_word_json_of_the_old_format_still_loads():
    """A tokenizer saved before `ignore` (and before `lowercase`) existed: no normalisation, as then."""
    old = json.dumps(
        {"kind": "word", "format_version": 1, "tokens": ["<pad>", "<sos>", "<eos>", "<unk>", "one", ",", "-", "Two"]}
    )
    tok = tokenizer_from_json(old)
    assert (tok.lowercase, tok.ignore) == (False, ())
    assert tok.tokenize("one, Two-one") == ["one", ",", "Two", "-", "one"]
    assert tok.encode("one, Two-one") == [4, 5, 7, 6, 4]
    assert tok.unknown_words("two one") == ["two"]
