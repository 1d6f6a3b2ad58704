"""Translation metrics: BLEU, chrF, exact match and exact match by source length."""

import subprocess
import sys

import pytest
import sacrebleu

from txcourse.evaluation.metrics import (
    LengthBucket,
    accuracy_by_length,
    bleu,
    chrf,
    evaluate_translations,
    exact_match,
    exact_match_by_group,
    format_length_table,
)

REFS = ["the cat is on the mat", "there is a quick brown fox jumping over the dog"]
HYPS = ["the cat sat on the mat", "a quick brown fox jumps over the lazy dog"]


def test_perfect_hypotheses_score_100():
    assert bleu(REFS, REFS) == pytest.approx(100.0)
    assert chrf(REFS, REFS) == pytest.approx(100.0)
    assert exact_match(REFS, REFS) == 1.0
    assert 0.0 <= bleu(REFS, REFS) <= 100.0


def test_partial_scores_agree_with_sacrebleu():
    expected_bleu = sacrebleu.corpus_bleu(HYPS, [REFS]).score
    assert 0.0 < expected_bleu < 100.0
    assert bleu(HYPS, REFS) == pytest.approx(expected_bleu)
    assert chrf(HYPS, REFS) == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    assert exact_match(HYPS, REFS) == 0.0


def test_tokenize_is_passed_through():
    hyps, refs = ["나는 학생이다"], ["나는 학생입니다"]
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize="char").score
    assert bleu(hyps, refs, tokenize="char") == pytest.approx(expected)
    assert bleu(hyps, refs, tokenize="char") > bleu(hyps, refs)  # words: no 4-gram at all
    with pytest.raises(ValueError, match="tokenize must be one of .*'char'.*got 'chars'"):
        bleu(hyps, refs, tokenize="chars")


def test_exact_match_ignores_surrounding_and_repeated_whitespace():
    hyps = ["  forty   two\t", "forty two", "Forty two", "fortytwo"]
    refs = ["forty two", " forty\n two ", "forty two", "forty two"]
    assert exact_match(hyps, refs) == 0.5  # case and missing spaces still count


def test_accuracy_by_length_one_bucket_per_length():
    # source lengths 1 1 1 2 2 3 4 5; hits: T T F | T F | F | T | F
    sources = ["a", "b", "c", "a b", "a c", "a b c", "a b c d", "a b c d e"]
    refs = ["x", "y", "z", "x y", "x z", "x y z", "w x y z", "v w x y z"]
    hyps = ["x", " y ", "q", "x  y", "x q", "x y", "w x y z", "v w x y"]
    buckets = accuracy_by_length(sources, hyps, refs)
    expected = [(1, 1, 3, 2 / 3), (2, 2, 2, 1 / 2), (3, 3, 1, 0.0), (4, 4, 1, 1.0), (5, 5, 1, 0.0)]
    assert [(b.low, b.high, b.count) for b in buckets] == [e[:3] for e in expected]
    assert [b.exact_match for b in buckets] == pytest.approx([e[3] for e in expected])
    assert [b.label for b in buckets] == ["1", "2", "3", "4", "5"]

    # bins [0, 1, 2, 4, 6]: 0 (empty, left out) | 1 | 2-3 | 4-6 (last edge inclusive)
    buckets = accuracy_by_length(sources, hyps, refs, bins=[0, 1, 2, 4, 6])
    assert [(b.low, b.high, b.count) for b in buckets] == [(1, 1, 3), (2, 3, 3), (4, 6, 2)]
    assert [b.exact_match for b in buckets] == pytest.approx([2 / 3, 1 / 3, 1 / 2])
    assert [b.label for b in buckets] == ["1", "2-3", "4-6"]
    assert buckets[1].midpoint == 2.5
    with pytest.raises(ValueError, match="length 5"):
        accuracy_by_length(sources, hyps, refs, bins=[1, 2, 4])
    with pytest.raises(ValueError, match="strictly increasing"):
        accuracy_by_length(sources, hyps, refs, bins=[1, 4, 4, 6])

    by_chars = accuracy_by_length(["ab", "abc"], ["x", "y"], ["x", "z"], length_fn=len)
    assert [(b.low, b.count, b.exact_match) for b in by_chars] == [(2, 1, 1.0), (3, 1, 0.0)]


def test_accuracy_by_length_quantile_buckets_when_many_lengths():
    sources = [" ".join(["w"] * n) for n in range(1, 21)]  # 20 distinct lengths
    refs = ["ok"] * 20
    hyps = ["ok" if n <= 10 else "no" for n in range(1, 21)]
    buckets = accuracy_by_length(sources, hyps, refs)
    assert 5 <= len(buckets) <= 8
    assert sum(b.count for b in buckets) == 20
    assert buckets[0].low == 1 and buckets[-1].high == 20
    for a, b in zip(buckets, buckets[1:]):
        assert b.low == a.high + 1  # contiguous, ordered, not overlapping
    assert buckets[0].exact_match == 1.0 and buckets[-1].exact_match == 0.0


def test_length_table_has_one_column_per_model():
    results = {
        "gru": [LengthBucket(1, 1, 4, 0.75), LengthBucket(2, 3, 2, 0.5)],
        "transformer": [LengthBucket(1, 1, 4, 1.0)],
    }
    lines = format_length_table(results).splitlines()
    assert lines[0] == "| source length | gru | transformer |"
    assert lines[2] == "| 1 | 75.0% (n=4) | 100.0% (n=4) |"
    assert lines[3] == "| 2-3 | 50.0% (n=2) | - |"
    with pytest.raises(ValueError, match="results"):
        format_length_table({})


def test_evaluate_translations():
    sources = ["le chat est sur le tapis", "un renard"]
    result = evaluate_translations(sources, HYPS, REFS)
    assert set(result) == {"bleu", "chrf", "exact_match", "by_length"}
    assert result["bleu"] == pytest.approx(bleu(HYPS, REFS))
    assert result["chrf"] == pytest.approx(chrf(HYPS, REFS))
    assert result["exact_match"] == 0.0
    assert [(b.low, b.count) for b in result["by_length"]] == [(2, 1), (6, 1)]


@pytest.mark.parametrize("fn", [bleu, chrf, exact_match])
def test_mismatched_lengths_name_both(fn):
    with pytest.raises(ValueError, match="3 hypotheses and 2 references"):
        fn(["a", "b", "c"], ["a", "b"])


@pytest.mark.parametrize("fn", [bleu, chrf, exact_match])
def test_empty_input_is_an_error(fn):
    with pytest.raises(ValueError, match="empty"):
        fn([], [])


def test_bad_inputs_to_accuracy_by_length():
    with pytest.raises(ValueError, match="2 sources and 1 hypotheses"):
        accuracy_by_length(["a", "b"], ["x"], ["x"])
    with pytest.raises(ValueError, match="empty"):
        accuracy_by_length([], [], [])
    with pytest.raises(ValueError, match=r"references\[1\] must be a string"):
        exact_match(["a", "b"], ["a", None])
    with pytest.raises(ValueError, match="hypotheses must be a list of strings"):
        exact_match("a", "a")
    with pytest.raises(ValueError, match="non-negative int"):
        accuracy_by_length(["a"], ["x"], ["x"], length_fn=lambda s: 1.5)


def test_exact_match_by_group_scores_each_group_in_order_of_first_occurrence():
    groups = ["en yMd", "en full", "en yMd", "en yMd", "en full"]
    hyps = ["a", "b ", "c", "x", "y"]
    refs = ["a", "b", "c", "d", "e"]
    scores = exact_match_by_group(groups, hyps, refs)
    assert list(scores) == ["en yMd", "en full"]
    assert (scores["en yMd"].count, scores["en yMd"].exact_match) == (3, pytest.approx(2 / 3))
    assert (scores["en full"].count, scores["en full"].exact_match) == (2, 0.5)  # whitespace ignored, as exact_match
    total = sum(s.count * s.exact_match for s in scores.values()) / len(hyps)
    assert total == pytest.approx(exact_match(hyps, refs))
    with pytest.raises(ValueError, match="groups must have one label per hypothesis, got 1 groups and 2 hypotheses"):
        exact_match_by_group(["a"], ["x", "y"], ["x", "y"])
    with pytest.raises(ValueError, match=r"groups\[1\] must be a string, got int 3"):
        exact_match_by_group(["a", 3], ["x", "y"], ["x", "y"])


def test_no_framework_is_imported():
    code = (
        "import sys, txcourse.evaluation.metrics, txcourse.notebook.plots; "
        "bad = {'torch', 'tensorflow', 'keras'} & set(sys.modules); "
        "sys.exit(f'imported {bad}' if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + done.stdout
