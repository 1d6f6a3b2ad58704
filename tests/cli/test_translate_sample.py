"""`txcourse translate --sample` (issue 24): sampling options, their checks, and repeatable draws with --seed."""

import pytest
from support.configs import TINY_MODEL_ARGS

from txcourse.cli import main


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A tiny Transformer trained 6 steps on the copy task (PyTorch): its distributions are wide, its samples vary."""
    out = tmp_path_factory.mktemp("sample")
    argv = ["train", "--framework", "torch", "--task", "copy", "--task-arg", "sizes=(200,20,20)", "--steps", "6"]
    assert main([*argv, "--batch-size", "16", "--no-progress", "--out", str(out), *TINY_MODEL_ARGS]) == 0
    return str(out / "model.npz")


SOURCES = ["a b c d", "e f g", "h a b c d e"]


def _translate(checkpoint, capsys, *options) -> list[str]:
    assert main(["translate", "--checkpoint", checkpoint, "--threads", "1", *options, *SOURCES]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == SOURCES
    return [line.split("\t")[1] if "\t" in line else "" for line in lines]


def test_sampling_repeats_with_its_seed_and_top_k_1_is_greedy(checkpoint, capsys):
    greedy = _translate(checkpoint, capsys)
    hot = ["--sample", "--temperature", "3", "--seed", "5"]
    first, again = _translate(checkpoint, capsys, *hot), _translate(checkpoint, capsys, *hot)
    assert first == again, "the same seed, the same samples"
    others = [_translate(checkpoint, capsys, "--sample", "--temperature", "3", "--seed", str(s)) for s in range(4)]
    assert any(o != first for o in others), "other seeds draw other outputs"
    assert any(o != greedy for o in [first, *others]), "at temperature 3 samples differ from greedy"
    assert _translate(checkpoint, capsys, "--sample", "--top-k", "1", "--seed", "9") == greedy
    assert _translate(checkpoint, capsys, "--sample", "--top-p", "1e-6", "--temperature", "2") == greedy


@pytest.mark.parametrize(
    "options, message",
    [
        (["--top-k", "2"], "--top-k applies only with --sample"),
        (["--seed", "1"], "--seed applies only with --sample"),
        (["--sample", "--beam", "2"], "--sample draws one output per sentence: it does not combine with --beam 2"),
        (["--sample", "--top-p", "0"], "argument --top-p: expected a finite number in (0, 1], got '0'"),
        (["--sample", "--top-p", "1.5"], "argument --top-p: expected a finite number in (0, 1], got '1.5'"),
        (["--sample", "--temperature", "0"], "argument --temperature: expected a finite number > 0, got '0'"),
        (["--sample", "--top-k", "0"], "argument --top-k: expected an integer >= 1, got 0"),
    ],
)
def test_bad_sampling_options_are_one_line_errors(checkpoint, options, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", "--checkpoint", checkpoint, *options, "a b"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("txcourse: error: ") and message in err and err.count("\n") == 1, err
