"""A skip note quotes at most a short prefix of the line (issue 32): a 10,000-character line was quoted twice in
full on stderr (20 KB); every note now quotes at most SHOWN (40) characters of any text the user typed, through
one helper (txcourse.errors.quote), in every task's reasons and in translate's own notes."""

import io

import pytest
from support.checkpoints import BOOK_DATA

from txcourse.cli import main
from txcourse.data.tasks import RefusedInput, task_of
from txcourse.errors import SHOWN, quote, quote_each, shorten

LONG = {
    "one word": "x" * 10_000,
    "a number word, then one long word": "seven " + "x" * 9_994,
    "only commas": "," * 10_000,
    "unknown words": "banana " * 1_428 + "kiwi",
}


def test_the_helper_quotes_a_short_prefix():
    assert shorten("x" * 10_000) == "x" * (SHOWN - 3) + "..." and shorten("March 3") == "March 3"
    assert quote("x" * 10_000) == repr("x" * (SHOWN - 3) + "...") and quote("March 3") == "'March 3'"
    assert quote_each(["a", "b", "c", "d", "e", "f", "g"]) == "'a', 'b', 'c', 'd', 'e' (and 2 more)"


@pytest.mark.parametrize("kind", LONG)
@pytest.mark.parametrize("strict", [False, True], ids=["", "strict"])
def test_a_10000_character_line_gives_a_short_note(kind, strict, capsys, monkeypatch):
    """The shipped numbers Transformer: before, 'x' * 10000 gave a 20,108-character note; now one short line."""
    pytest.importorskip("torch")
    line = LONG[kind]
    assert len(line) >= 10_000
    monkeypatch.setattr("sys.stdin", io.StringIO(line + "\n"))
    argv = ["translate", "--checkpoint", str(BOOK_DATA / "numbers-transformer-torch.npz")]
    with pytest.raises(SystemExit) as caught:
        main([*argv, *(["--strict"] if strict else [])])
    captured = capsys.readouterr()
    assert caught.value.code == 2 and captured.out == ""
    assert len(captured.err) < 400, captured.err
    assert captured.err.startswith("txcourse: ") and "line 1: " in captured.err


@pytest.mark.parametrize("name", ["numbers", "dates", "copy", "reverse"])
@pytest.mark.parametrize("kind", LONG)
def test_every_task_quotes_a_short_prefix(name, kind):
    """Each task's reason for refusing a 10,000-character line is one short sentence."""
    task = task_of({"name": name, "kwargs": {}})
    with pytest.raises(RefusedInput) as err:
        task.model_input(LONG[kind])
    assert len(str(err.value)) < 300, str(err.value)


def test_unknown_words_are_listed_short(tmp_path, capsys, monkeypatch):
    """A file-task checkpoint reads any text: its warning names at most 5 unknown words (it named them all)."""
    from support.configs import TINY_MODEL_ARGS

    pytest.importorskip("torch")
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{a} {b}\t{b} {a}\n" for a in "abc" for b in "abc") * 8, encoding="utf-8")
    train = ["train", "--framework", "torch", "--task", "file", "--data", str(data), "--task-arg", "tokens='char'"]
    assert main([*train, "--steps", "1", "--no-progress", "--out", str(tmp_path / "run"), *TINY_MODEL_ARGS]) == 0
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO("a b 0123456789\n"))
    assert main(["translate", "--checkpoint", str(tmp_path / "run" / "model.npz")]) == 0
    assert capsys.readouterr().err.startswith(
        "txcourse: warning: line 1: '0', '1', '2', '3', '4' (and 5 more) are not in the source vocabulary ("
    )
