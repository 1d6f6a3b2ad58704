"""`txcourse train --task dates` in both frameworks, and `txcourse evaluate` by phrasing, on tiny models.

No ``--threads`` for training: TensorFlow's thread count can be set only before it first runs, and other
tests of this process have run it (conftest keeps PyTorch at one thread).
"""

import json
from collections import Counter

import pytest
from support.configs import TINY_MODEL_ARGS

from txcourse.cli import main
from txcourse.data import CharTokenizer, get_task
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.registry import FRAMEWORKS
from txcourse.training import read_history
from txcourse.training.checkpoint import read_checkpoint_meta

SIZES = "sizes=(140,14,21)"


def train(framework, model, out, *extra):
    return main(
        [
            "train",
            "--framework",
            framework,
            "--model",
            model,
            "--task",
            "dates",
            "--task-arg",
            SIZES,
            "--steps",
            "3",
            "--batch-size",
            "16",
            "--log-every",
            "3",
            "--no-progress",
            "--out",
            str(out),
            *extra,
        ]
    )


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_train_dates_in_each_framework(framework, tmp_path):
    out = tmp_path / framework
    assert train(framework, "transformer", out, *TINY_MODEL_ARGS) == 0
    meta = read_checkpoint_meta(out / "model.npz")
    assert meta["framework"] == framework and meta["task"] == {"name": "dates", "kwargs": {"sizes": [140, 14, 21]}}
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    assert isinstance(src_tok, CharTokenizer) and isinstance(tgt_tok, CharTokenizer)
    assert [r["step"] for r in read_history(out / "history.jsonl")] == [3]


@pytest.mark.parametrize("model", ["bahdanau", "seq2seq"])
def test_train_dates_with_the_gru_baselines(model, tmp_path):
    tiny_gru = ["--set", "embedding_dim=8", "--set", "units=16"]
    assert train("torch", model, tmp_path / model, *tiny_gru) == 0
    assert read_checkpoint_meta(tmp_path / model / "model.npz")["model"]["kind"] == model


def test_evaluate_dates_by_phrasing(tmp_path, capsys):
    out = tmp_path / "run"
    assert train("torch", "transformer", out, *TINY_MODEL_ARGS) == 0
    scores = tmp_path / "scores.json"
    assert main(["evaluate", "--checkpoint", str(out / "model.npz"), "--threads", "1", "--json", str(scores)]) == 0
    printed = capsys.readouterr().out
    assert "by phrasing of the English source (test split):" in printed and "| en yMd |" in printed
    by_phrasing = json.loads(scores.read_text())["by_phrasing"]
    expected = Counter(get_task("dates", sizes=(140, 14, 21)).metadata["phrasing"]["test"])
    assert {name: value["count"] for name, value in by_phrasing.items()} == dict(expected)
    assert all(0 <= value["exact_match"] <= 1 for value in by_phrasing.values())
