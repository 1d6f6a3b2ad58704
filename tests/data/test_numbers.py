"""The numbers task (num2words), the toy copy/reverse tasks and the task registry."""

from collections import Counter

import numpy as np
import pytest

from txcourse.data import (
    TranslationSplits,
    digit_count,
    draw_by_digit_count,
    get_task,
    make_copy_task,
    make_numbers_task,
    make_reverse_task,
    numbers_to_words,
    round_numbers,
    zero_pattern,
)

SMALL = dict(sizes=(630, 60, 210), seed=0)


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
    assert (len(s.train), len(s.valid), len(s.test)) == (630, 60, 210)
    for split in ("train", "valid", "test"):
        for n, (src, tgt) in zip(s.metadata["numbers"][split], s[split]):
            assert src == numbers_to_words(n, "en") and tgt == numbers_to_words(n, "ko")
    assert s.metadata["target_lang"] == "ko"


def test_splits_are_disjoint_by_number():
    s = make_numbers_task(**SMALL, round_fraction=0.0, pattern_fraction=0.0)  # round/pattern draws may repeat
    nums = s.metadata["numbers"]
    train, valid, test = set(nums["train"]), set(nums["valid"]), set(nums["test"])
    large_train = [n for n in nums["train"] if n >= 1000]
    assert len(large_train) == 450 and len(set(large_train)) == 450  # 15/21 of train, no repeats above 999
    assert len(valid) == 60 and len(test) == 210  # no repeats inside
    assert not train & valid and not train & test and not valid & test
    with_round = make_numbers_task(**SMALL).metadata["numbers"]  # round training numbers: never in valid/test
    assert not set(with_round["train"]) & (set(with_round["valid"]) | set(with_round["test"]))
    srcs = {split: {p[0] for p in s[split]} for split in ("train", "valid", "test")}
    assert not srcs["train"] & srcs["test"] and not srcs["train"] & srcs["valid"]


def test_deterministic_for_a_seed_and_different_across_seeds():
    a = make_numbers_task(**SMALL)
    b = make_numbers_task(**SMALL)
    c = make_numbers_task(sizes=SMALL["sizes"], seed=1)
    assert a.as_dict() == b.as_dict()
    assert a.train != c.train and a.test != c.test


def test_every_digit_count_is_trained_on():
    """What users type first ("nine", "forty-two") is in training; longer numbers get more examples (d/21)."""
    s = make_numbers_task(sizes=(630, 60, 120), seed=0)
    nums = s.metadata["numbers"]
    assert Counter(digit_count(n) for n in nums["train"]) == {d: 30 * d for d in range(1, 7)}
    assert Counter(digit_count(n) for n in nums["valid"]) == {4: 20, 5: 20, 6: 20}
    assert Counter(digit_count(n) for n in nums["test"]) == {4: 40, 5: 40, 6: 40}
    assert not any(s.metadata["test_is_long"])


def test_every_number_below_1000_is_in_training():
    s = make_numbers_task(sizes=(7000, 60, 120), seed=0)
    train = s.metadata["numbers"]["train"]
    assert set(range(1000)) <= set(train)  # each at least once, then repeated to fill the share
    assert Counter(digit_count(n) for n in train)[1] == 7000 // 21  # 10 numbers, 333 draws
    assert min(s.metadata["numbers"]["valid"] + s.metadata["numbers"]["test"]) >= 1000
    assert ("nine", "구") in s.train and ("forty-two", "사십이") in s.train


def test_closed_digits_zero_makes_every_length_disjoint():
    s = make_numbers_task(
        low=100, high=99_999, sizes=(300, 30, 60), seed=0, closed_digits=0, round_fraction=0.0, pattern_fraction=0.0
    )
    nums = s.metadata["numbers"]
    assert sorted({digit_count(n) for n in nums["test"]}) == [3, 4, 5]
    train, valid, test = (set(nums[k]) for k in ("train", "valid", "test"))
    assert (len(train), len(valid), len(test)) == (300, 30, 60)  # no repeats anywhere
    assert not train & valid and not train & test and not valid & test
    with pytest.raises(
        ValueError,
        match=r"need 70 distinct 1-digit numbers \(40 train, 10 valid, 20 test\), "
        r"but \[0, 9999\] holds only 10 \(\[0, 9\]\)",
    ):
        make_numbers_task(low=0, high=9999, sizes=(400, 40, 80), closed_digits=0, pattern_fraction=0.0)


def test_length_generalisation_is_an_explicit_option():
    s = make_numbers_task(sizes=(600, 60, 120), seed=0, max_train_digits=4)  # digit counts 1-4 in train
    nums, long = s.metadata["numbers"], s.metadata["test_is_long"]
    assert max(digit_count(n) for n in nums["train"] + nums["valid"]) == 4
    assert Counter(digit_count(n) for n in nums["test"]) == {4: 40, 5: 40, 6: 40}
    assert all((digit_count(n) > 4) == is_long for n, is_long in zip(nums["test"], long)) and sum(long) == 80
    train_len = np.array([len(src.split()) for src, _ in s.train])
    test_len = np.array([len(src.split()) for src, _ in s.test])
    assert np.percentile(test_len, 75) > train_len.max()


def test_range_and_target_language():
    s = make_numbers_task(low=100, high=9999, sizes=(50, 10, 10), closed_digits=3, target_lang="es")
    every = sum(s.metadata["numbers"].values(), [])
    assert min(every) >= 100 and max(every) <= 9999
    assert s.train[0][1] == numbers_to_words(s.metadata["numbers"]["train"][0], "es")


def test_round_numbers_are_in_training_and_listed():
    s = make_numbers_task(sizes=(2100, 60, 120), seed=0, pattern_fraction=0.0)
    train = [n for n in s.metadata["numbers"]["train"] if n >= 1000]
    round_share = sum(n % 10 == 0 for n in train) / len(train)
    assert 0.2 <= round_share < 0.35  # 20% drawn round, plus the uniform draws that end in 0
    assert ("one hundred thousand", "십만") in s.train or ("ten thousand", "만") in s.train
    assert make_numbers_task(sizes=(2100, 60, 120), seed=0, round_fraction=0.0).metadata["round_fraction"] == 0.0
    listed = round_numbers()
    assert len(listed) == 369 and listed[:3] == [10, 20, 30] and listed[-1] == 990_000
    assert all(n % 10 == 0 and len(str(n).rstrip("0")) <= 2 for n in listed)
    assert 100_000 in listed and 420_000 in listed and 421_000 not in listed
    with pytest.raises(ValueError, match=r"round_fraction must be a number in \[0, 1\], got 2"):
        make_numbers_task(round_fraction=2)


def test_digit_count():
    assert [digit_count(n) for n in (0, 9, 10, 99, 100, 999_999, 1_000_000)] == [1, 1, 2, 2, 3, 6, 7]
    with pytest.raises(ValueError, match="n must be an integer >= 0, got -3"):
        digit_count(-3)


def test_draw_by_digit_count_is_fresh_and_deterministic():
    s = make_numbers_task(sizes=(6000, 60, 120), seed=0)
    train = set(s.metadata["numbers"]["train"])
    drawn = draw_by_digit_count(200, seed=1, exclude=train)
    assert list(drawn) == [1, 2, 3, 4, 5, 6]
    for d, nums in drawn.items():
        assert len(nums) == 200 and all(digit_count(n) == d for n in nums)
    for d in (4, 5, 6):  # enough unseen numbers: none from training, no repeats
        assert not set(drawn[d]) & train and len(set(drawn[d])) == 200
    assert set(drawn[1]) <= set(range(10))  # 0-9 all trained on: drawn with replacement
    assert draw_by_digit_count(200, seed=1, exclude=train) == drawn
    assert draw_by_digit_count(200, seed=2, exclude=train)[5] != drawn[5]
    with pytest.raises(ValueError, match="per_count must be an integer >= 1, got 0"):
        draw_by_digit_count(0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(target_lang="de"), r"target_lang must be one of 'ko' \(Korean\), 'es' .*'fr'.*'de'"),
        (dict(target_lang="en"), "target_lang must be one of"),
        (dict(low=10, high=10), "low must be smaller than high, got low=10, high=10"),
        (dict(low=-5), "low must be an integer >= 0, got -5"),
        (dict(sizes=(10, 10)), r"sizes must be a tuple \(train, valid, test\)"),
        (dict(sizes=(10, -1, 5)), "valid=-1"),
        (
            dict(high=999, sizes=(5, 1, 10)),
            r"the valid split is drawn from numbers with more than closed_digits=3 "
            r"digits, but \[0, 999\] has none; lower closed_digits or raise high",
        ),
        (
            dict(high=9999, sizes=(25000, 10, 10), round_fraction=0.0, pattern_fraction=0.0),
            r"need 10020 distinct 4-digit numbers \(10000 train, 10 valid, 10 "
            r"test\), but \[0, 9999\] holds only 9000 \(\[1000, 9999\]\)",
        ),
        (dict(closed_digits=-1), "closed_digits must be an integer >= 0, got -1"),
        (dict(max_train_digits=6), r"max_train_digits must be smaller than the digit count of high=999999 \(6\)"),
        (dict(max_train_digits=0), "max_train_digits must be an integer >= 1, got 0"),
    ],
)
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
    s = make_copy_task(min_len=1, max_len=5, sizes=(500, 50, 100), seed=0, long_test_fraction=0.5, long_max_len=8)
    srcs = [set(p[0] for p in s[split]) for split in ("train", "valid", "test")]
    assert [len(x) for x in srcs] == [500, 50, 100]
    assert not srcs[0] & srcs[1] and not srcs[0] & srcs[2] and not srcs[1] & srcs[2]
    lengths = [len(p[0].split()) for p in s.test]
    assert sum(n > 5 for n in lengths) == 50 and max(lengths) <= 8
    assert max(len(p[0].split()) for p in s.train) <= 5
    assert (
        make_copy_task(
            min_len=1, max_len=5, sizes=(500, 50, 100), seed=0, long_test_fraction=0.5, long_max_len=8
        ).as_dict()
        == s.as_dict()
    )
    assert make_copy_task(min_len=1, max_len=5, sizes=(500, 50, 100), seed=1).train != s.train


def test_toy_small_space_is_used_exactly_and_errors():
    s = make_copy_task(vocab="ab", min_len=1, max_len=3, sizes=(10, 2, 2), seed=0)
    assert len({p[0] for p in s.train + s.valid + s.test}) == 14  # all 2 + 4 + 8 sequences
    with pytest.raises(ValueError, match=r"need 15 distinct sequences .* only 14 exist"):
        make_copy_task(vocab="ab", min_len=1, max_len=3, sizes=(10, 3, 2))
    with pytest.raises(
        ValueError,
        match=r"vocab\[1\] must be a non-empty string without "
        r"whitespace, got 'b c'",
    ):
        make_copy_task(vocab=["a", "b c"])
    with pytest.raises(ValueError, match="min_len must be <= max_len, got min_len=5, max_len=2"):
        make_reverse_task(min_len=5, max_len=2)


# ---- registry --------------------------------------------------------------


def test_get_task_registry():
    assert (
        get_task("numbers", sizes=(20, 2, 4), seed=5).as_dict() == make_numbers_task(sizes=(20, 2, 4), seed=5).as_dict()
    )
    rev = get_task("reverse", sizes=(5, 1, 1), max_len=4)
    assert rev.metadata["task"] == "reverse"
    with pytest.raises(
        ValueError,
        match=r"unknown task 'french'; valid names are \['copy', 'dates', 'file', 'numbers', 'reverse'\]",
    ):
        get_task("french")
    with pytest.raises(ValueError, match="invalid arguments.*'vocab_size'"):
        get_task("copy", vocab_size=5)


def test_zero_patterns_are_drawn_evenly():
    """Half of the larger training numbers are drawn by zero pattern: every pattern of d digits about equally
    often, so the skipping shapes (xx00xx: 'a hundred and ten thousand and twenty-three') are not rare."""
    s = make_numbers_task(sizes=(21000, 60, 120), seed=0, round_fraction=0.0)
    assert s.metadata["pattern_fraction"] == 0.5
    six = [n for n in s.metadata["numbers"]["train"] if digit_count(n) == 6]
    counts = Counter(zero_pattern(n) for n in six)
    assert len(counts) == 32
    # 6000 six-digit numbers: 3000 by pattern (about 94 per pattern) and 3000 uniform (xx00xx: 1 in 137)
    assert 60 <= counts["xx00xx"] <= 140 and 60 <= counts["x00000"] <= 140
    uniform = make_numbers_task(sizes=(21000, 60, 120), seed=0, round_fraction=0.0, pattern_fraction=0.0)
    rare = Counter(zero_pattern(n) for n in uniform.metadata["numbers"]["train"] if digit_count(n) == 6)["xx00xx"]
    assert rare < 70 and counts["xx00xx"] > rare + 30
    nums = s.metadata["numbers"]
    assert not set(nums["train"]) & (set(nums["valid"]) | set(nums["test"]))
    with pytest.raises(ValueError, match=r"round_fraction \+ pattern_fraction must be at most 1, got 0.6 \+ 0.5"):
        make_numbers_task(round_fraction=0.6)
    with pytest.raises(ValueError, match=r"pattern_fraction must be a number in \[0, 1\], got -0.1"):
        make_numbers_task(pattern_fraction=-0.1)
