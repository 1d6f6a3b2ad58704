"""Quality by digit count, the way users meet the numbers task (issue 12).

The shipped book checkpoints must translate fresh numbers of every digit
count, "nine" as well as "nine hundred thousand", and `txcourse evaluate`
must report the table by digit count.
"""

import json
from pathlib import Path

import pytest
from conftest import TINY_MODEL_ARGS

from txcourse.cli import main
from txcourse.data import get_task, numbers_to_words, round_numbers

BOOK_DATA = Path(__file__).resolve().parents[2] / "book" / "data"
TARGET = 0.995  # exact match in every digit-count bucket (issue 12)


def test_evaluate_prints_and_writes_the_digit_table(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--framework",
                "torch",
                "--task",
                "numbers",
                "--task-arg",
                "sizes=(2100,6,12)",
                "--steps",
                "2",
                "--batch-size",
                "8",
                "--no-progress",
                "--out",
                str(out),
                *TINY_MODEL_ARGS,
            ]
        )
        == 0
    )
    scores = tmp_path / "scores.json"
    capsys.readouterr()
    assert main(["evaluate", "--checkpoint", str(out / "model.npz"), "--per-digit", "3", "--json", str(scores)]) == 0
    printed = capsys.readouterr().out
    assert "by digit count, 3 fresh numbers each" in printed and "| digits | transformer |" in printed
    rows = json.loads(scores.read_text())["by_digits"]
    assert [(r["digits"], r["count"]) for r in rows] == [(d, 3) for d in range(1, 7)]
    assert rows[0]["seen_in_training"] == 1.0 and rows[-1]["seen_in_training"] == 0.0
    assert all(0.0 <= r["exact_match"] <= 1.0 for r in rows)
    assert "round numbers (" in printed
    assert json.loads(scores.read_text())["round_numbers"]["count"] == len(round_numbers())


@pytest.mark.parametrize("name", ["numbers-transformer-torch", "numbers-bahdanau-torch"])
def test_book_checkpoints_translate_every_digit_count(name):
    """>= 99.5% exact match on 200 fresh numbers of every digit count, and what users type first."""
    from txcourse.backends import backend
    from txcourse.data.prepare import tokenizers_from_meta
    from txcourse.evaluation.translate import evaluate_by_digit_count, translate

    fw = backend("torch")
    model, meta = fw.load_model(str(BOOK_DATA / f"{name}.npz"))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    splits = get_task("numbers", **meta["task"]["kwargs"])
    result = evaluate_by_digit_count(fw, model, splits, src_tok, tgt_tok, per_count=200)
    scores = {b.low: b.exact_match for b in result["by_digits"]}
    assert list(scores) == [1, 2, 3, 4, 5, 6]
    assert min(scores.values()) >= TARGET, f"{name}: exact match by digit count {scores}"
    assert result["round"].count == 369 and result["round"].exact_match >= TARGET, (
        f"{name}: round numbers {result['round']}"
    )
    typed = ["nine", "one hundred", "forty-two", "TWELVE THOUSAND", "  seven hundred thousand  ", "ten thousand"]
    expected = [numbers_to_words(n, "ko") for n in (9, 100, 42, 12000, 700000, 10000)]
    assert translate(fw, model, typed, src_tok, tgt_tok) == expected
