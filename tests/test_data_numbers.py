"""The numbers task (num2words), the toy copy/reverse tasks and the task registry."""

import numpy as np
import pytest

from txcourse.data import (TranslationSplits, get_task, make_copy_task, make_numbers_task,
                           make_reverse_task, numbers_to_words)

SMALL = dict(sizes=(600, 50, 200), seed=0)


def test_numbers_to_words_reference_outputs():
    assert numbers_to_words(12345) == "twelve thousand, three hundred and forty-five"
    assert numbers_to_words(12345, "ko") == "만 이천삼백사십오"
    # num2words' Korean conventions (reported as is, not post-edited)
    assert numbers_to_words(10000, "ko") == "만"
    assert numbers_to_words(1000, "ko") == "천"
    assert numbers_to_words(999999, "ko") == "구십구만 구천구백구십구"
    assert numbers_to_words(12345, "es") == "doce mil trescientos cuarenta y cinco"
    assert numbers_to_words(12345, "fr") == "douze mille trois cent quarante-cinq"
    assert numbers_to_words(0) == "zero"


def test_numbers_to_words_errors():
    with pytest.raises(ValueError, match=r"lang must be one of 'en'.*'ko'.*'es'.*'fr'.*got 'de'"):
        numbers_to_words(5, "de")
    with pytest.raises(ValueError, match="n must be an integer >= 0, got -1"):
        numbers_to_words(-1)
    with pytest.raises(ValueError, match="n must be an integer"):
        numbers_to_words(1.5)


def test_splits_sizes_pairs_and_metadata():
    s = make_numbers_task(**SMALL)
    assert isinstance(s, TranslationSplits)
    assert (len(s.train), len(s.valid), len(s.test)) == (600, 50, 200)
    for split in ("train", "valid", "test"):
        for n, (src, tgt) in zip(s.metadata["numbers"][split], s[split]):
            assert src == numbers_to_words(n, "en") and tgt == numbers_to_words(n, "ko")
    assert s.metadata["target_lang"] == "ko"


def test_splits_are_disjoint_by_number():
    s = make_numbers_task(**SMALL)
    nums = s.metadata["numbers"]
    train, valid, test = set(nums["train"]), set(nums["valid"]), set(nums["test"])
    assert len(train) == 600 and len(valid) == 50 and len(test) == 200  # no repeats inside
    assert not train & valid and not train & test and not valid & test
    srcs = {split: {p[0] for p in s[split]} for split in ("train", "valid", "test")}
    assert not srcs["train"] & srcs["test"] and not srcs["train"] & srcs["valid"]


def test_deterministic_for_a_seed_and_different_across_seeds():
    a = make_numbers_task(**SMALL)
    b = make_numbers_task(**SMALL)
    c = make_numbers_task(sizes=SMALL["sizes"], seed=1)
    assert a.as_dict() == b.as_dict()
    assert a.train != c.train and a.test != c.test


def test_test_split_holds_longer_numbers():
    """Long numbers are rare in training (10%) and half of the test split."""
    s = make_numbers_task(**SMALL, long_test_fraction=0.5, long_train_fraction=0.1)
    nums, long = s.metadata["numbers"], s.metadata["test_is_long"]
    assert sum(long) == 100
    assert sum(n >= 100_000 for n in nums["train"]) == round(0.1 * len(nums["train"]))
    assert all((n >= 100_000) == is_long for n, is_long in zip(nums["test"], long))
    train_len = np.array([len(src.split()) for src, _ in s.train])
    test_len = np.array([len(src.split()) for src, _ in s.test])
    # the longest quarter of the test sources is longer than 90% of the training sources
    assert np.percentile(train_len, 90) < np.percentile(test_len, 75)
    train_chars = np.array([len(src) for src, _ in s.train])
    test_chars = np.array([len(src) for src, _ in s.test])
    assert np.median(train_chars) < np.percentile(test_chars, 75)


def test_unseen_lengths_when_training_has_no_long_numbers():
    s = make_numbers_task(**SMALL, long_test_fraction=0.5, long_train_fraction=0.0)
    nums, long = s.metadata["numbers"], s.metadata["test_is_long"]
    assert max(nums["train"] + nums["valid"]) < 100_000 <= min(
        n for n, is_long in zip(nums["test"], long) if is_long)
    train_len = np.array([len(src.split()) for src, _ in s.train])
    test_len = np.array([len(src.split()) for src, _ in s.test])
    assert np.percentile(test_len, 75) > train_len.max()


def test_range_and_no_long_numbers():
    s = make_numbers_task(low=100, high=999, sizes=(50, 10, 10), long_test_fraction=0.0,
                          long_train_fraction=0.0, long_min_digits=4, target_lang="es")
    every = sum(s.metadata["numbers"].values(), [])
    assert min(every) >= 100 and max(every) <= 999 and not any(s.metadata["test_is_long"])
    assert s.train[0][1] == numbers_to_words(s.metadata["numbers"]["train"][0], "es")


@pytest.mark.parametrize("kwargs, message", [
    (dict(target_lang="de"), r"target_lang must be one of 'ko' \(Korean\), 'es' .*'fr'.*'de'"),
    (dict(target_lang="en"), "target_lang must be one of"),
    (dict(low=10, high=10), "low must be smaller than high, got low=10, high=10"),
    (dict(low=-5), "low must be an integer >= 0, got -5"),
    (dict(sizes=(10, 10)), r"sizes must be a tuple \(train, valid, test\)"),
    (dict(sizes=(10, -1, 5)), "valid=-1"),
    (dict(high=99, sizes=(5, 1, 10)), r"need 11 distinct numbers with fewer than 2 digits .* "
                                      r"only 10 exist"),
    (dict(high=20, sizes=(1, 1, 24), long_test_fraction=1.0),
     r"need 24 distinct long numbers \(>= 2 digits\) .* only 11 exist"),
    (dict(long_test_fraction=1.5), r"long_test_fraction must be a number in \[0, 1\], got 1.5"),
])
def test_numbers_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_numbers_task(**kwargs)


# ---- toy tasks -------------------------------------------------------------

@pytest.mark.parametrize("make, reverse", [(make_copy_task, False), (make_reverse_task, True)])
def test_copy_and_reverse_targets(make, reverse):
    s = make(min_len=2, max_len=6, sizes=(300, 30, 60), seed=3)
    for src, tgt in s.train + s.valid + s.test:
        symbols = src.split()
        assert 2 <= len(symbols) <= 6 and all(len(x) == 1 and x.islower() for x in symbols)
        assert tgt.split() == (symbols[::-1] if reverse else symbols)


def test_toy_disjoint_deterministic_and_long_test():
    s = make_copy_task(min_len=1, max_len=5, sizes=(500, 50, 100), seed=0,
                       long_test_fraction=0.5, long_max_len=8)
    srcs = [set(p[0] for p in s[split]) for split in ("train", "valid", "test")]
    assert [len(x) for x in srcs] == [500, 50, 100]
    assert not srcs[0] & srcs[1] and not srcs[0] & srcs[2] and not srcs[1] & srcs[2]
    lengths = [len(p[0].split()) for p in s.test]
    assert sum(n > 5 for n in lengths) == 50 and max(lengths) <= 8
    assert max(len(p[0].split()) for p in s.train) <= 5
    assert make_copy_task(min_len=1, max_len=5, sizes=(500, 50, 100), seed=0,
                          long_test_fraction=0.5, long_max_len=8).as_dict() == s.as_dict()
    assert make_copy_task(min_len=1, max_len=5, sizes=(500, 50, 100), seed=1).train != s.train


def test_toy_small_space_is_used_exactly_and_errors():
    s = make_copy_task(vocab="ab", min_len=1, max_len=3, sizes=(10, 2, 2), seed=0)
    assert len({p[0] for p in s.train + s.valid + s.test}) == 14  # all 2 + 4 + 8 sequences
    with pytest.raises(ValueError, match=r"need 15 distinct sequences .* only 14 exist"):
        make_copy_task(vocab="ab", min_len=1, max_len=3, sizes=(10, 3, 2))
    with pytest.raises(ValueError, match=r"vocab\[1\] must be a non-empty string without "
                                         r"whitespace, got 'b c'"):
        make_copy_task(vocab=["a", "b c"])
    with pytest.raises(ValueError, match="min_len must be <= max_len, got min_len=5, max_len=2"):
        make_reverse_task(min_len=5, max_len=2)


# ---- registry --------------------------------------------------------------

def test_get_task_registry():
    assert get_task("numbers", sizes=(20, 2, 4), seed=5).as_dict() == \
        make_numbers_task(sizes=(20, 2, 4), seed=5).as_dict()
    rev = get_task("reverse", sizes=(5, 1, 1), max_len=4)
    assert rev.metadata["task"] == "reverse"
    with pytest.raises(ValueError, match=r"unknown task 'french'; valid names are "
                                         r"\['copy', 'numbers', 'reverse'\]"):
        get_task("french")
    with pytest.raises(ValueError, match="invalid arguments.*'vocab_size'"):
        get_task("copy", vocab_size=5)
