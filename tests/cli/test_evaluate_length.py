"""`txcourse evaluate` reports a source's length in what the model reads (issue 32): the tokens of the
checkpoint's source tokenizer, the heading and --json saying which; it counted whitespace words, which means
nothing for a character model (the dates Transformer read "3/3/2026", 8 tokens, as length 1)."""

import json

import pytest
from support.checkpoints import BOOK_DATA

from txcourse.cli import main
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.training.checkpoint import read_checkpoint_meta


@pytest.mark.parametrize("name, unit", [("dates", "char tokens"), ("numbers", "word tokens")])
def test_lengths_are_counted_in_the_tokens_the_model_reads(name, unit, tmp_path, capsys):
    pytest.importorskip("torch")
    checkpoint = BOOK_DATA / f"{name}-transformer-torch.npz"
    scores = tmp_path / "scores.json"
    argv = ["evaluate", "--checkpoint", str(checkpoint), "--limit", "60", "--json", str(scores)]
    assert main([*argv, "--per-digit", "0", "--per-phrasing", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"| source length ({unit}) | transformer |"
    summary = json.loads(scores.read_text())
    assert summary["length_unit"] == unit
    meta = read_checkpoint_meta(checkpoint)
    src_tok, _ = tokenizers_from_meta(meta)
    from txcourse.data import get_task

    task = meta["task"]
    sources = [source for source, _ in get_task(task["name"], **task["kwargs"])["test"][:60]]
    lengths = sorted(len(src_tok.encode(source)) for source in sources)
    buckets = summary["by_length"]
    assert sum(b["count"] for b in buckets) == 60
    assert (buckets[0]["low"], buckets[-1]["high"]) == (lengths[0], lengths[-1])
    for b in buckets:
        assert b["count"] == sum(b["low"] <= n <= b["high"] for n in lengths), b
