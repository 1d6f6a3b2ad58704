"""`txcourse train --task file --data PATH`, then translate and evaluate the checkpoint, and the errors."""

import json
import re

import pytest
from support.configs import TINY_MODEL_ARGS

from txcourse.cli import main
from txcourse.data import get_task
from txcourse.training.checkpoint import read_checkpoint_meta

TRAIN = ["train", "--task", "file", "--steps", "4", "--batch-size", "16", "--log-every", "2", "--no-progress"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A small TSV file written from the numbers task: English<TAB>Korean<TAB>a note the task ignores."""
    path = tmp_path_factory.mktemp("corpus") / "numbers.tsv"
    splits = get_task("numbers", sizes=(120, 0, 0))
    path.write_text("".join(f"{en}\t{ko}\tgenerated\n" for en, ko in splits.train), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def run(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    argv = [*TRAIN, "--data", str(corpus), "--task-arg", "vocab_size=120", "--out", str(out), *TINY_MODEL_ARGS]
    assert main(argv) == 0
    return out


def test_checkpoint_records_the_file_and_its_tokenizers(run, corpus):
    meta = read_checkpoint_meta(run / "model.npz")
    task = meta["task"]
    assert task["name"] == "file"
    assert task["kwargs"]["path"] == str(corpus.resolve()) and len(task["kwargs"]["sha256"]) == 64
    assert task["kwargs"]["vocab_size"] == 120 and task["kwargs"]["shared_vocab"] is True
    tokenizers = meta["tokenizers"]
    assert tokenizers["src"] == tokenizers["tgt"] and json.loads(tokenizers["src"])["kind"] == "bpe"


def test_translate_and_evaluate_the_checkpoint(run, capsys, tmp_path):
    checkpoint = str(run / "model.npz")
    assert main(["translate", "--checkpoint", checkpoint, "--threads", "1", "forty two", "nine hundred"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["forty two", "nine hundred"]
    scores = tmp_path / "scores.json"
    assert main(["evaluate", "--checkpoint", checkpoint, "--threads", "1", "--json", str(scores)]) == 0
    out = capsys.readouterr().out
    assert "file test (12 pairs), beam 1: exact match" in out  # 10% of 120 pairs
    assert "by digit count" not in out  # the numbers task's extra tables are not the file task's
    assert sum(b["count"] for b in json.loads(scores.read_text())["by_length"]) == 12


def test_evaluate_refuses_a_changed_file(run, corpus, capsys):
    original = corpus.read_text(encoding="utf-8")
    try:
        corpus.write_text(original + "one million\t백만\n", encoding="utf-8")
        with pytest.raises(SystemExit) as caught:
            main(["evaluate", "--checkpoint", str(run / "model.npz")])
        assert caught.value.code == 2
        assert "has changed since the checkpoint was trained on it" in capsys.readouterr().err
    finally:
        corpus.write_text(original, encoding="utf-8")


def test_characters_and_separate_vocabularies(corpus, tmp_path):
    argv = [*TRAIN, "--data", str(corpus), "--task-arg", "tokens=char", "--task-arg", "shared_vocab=False"]
    assert main([*argv, "--out", str(tmp_path), *TINY_MODEL_ARGS]) == 0
    tokenizers = read_checkpoint_meta(tmp_path / "model.npz")["tokenizers"]
    assert tokenizers["src"] != tokenizers["tgt"] and json.loads(tokenizers["tgt"])["kind"] == "char"


@pytest.mark.parametrize(
    "content, extra, message",
    [
        (None, [], r"--data '\S*absent.tsv': file '\S*absent.tsv' does not exist"),
        ("", [], r"--data '\S*pairs.tsv': file '\S*' holds no pairs: it is empty"),
        ("one\tuno\ntwo dos\n", [], r"--data '\S*pairs.tsv': \S*, line 2: expected at least 2 tab-separated fields"),
        ("one\tuno\ntwo\tdos\n", [], r"--data '\S*pairs.tsv': 2 pairs in the file, too few for the splits"),
        ("one\tuno\n", ["--task-arg", "tokens=word"], r"--task-arg tokens='word': tokens must be one of"),
        ("one\tuno\n", ["--task-arg", "size=3"], r"--task-arg size: the file task has no such argument"),
        ("one\tuno\n", ["--task-arg", "path='x.tsv'"], r"--task-arg path: the file task has no such argument"),
    ],
)
def test_file_errors_are_one_line_naming_the_option(tmp_path, capsys, content, extra, message):
    path = tmp_path / ("absent.tsv" if content is None else "pairs.tsv")
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit) as caught:
        main([*TRAIN, "--data", str(path), *extra, "--out", str(tmp_path / "run"), *TINY_MODEL_ARGS])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("txcourse: error: ") and re.search(message, err), err


def test_a_folder_is_named_a_folder_not_a_missing_file(tmp_path, capsys):
    """--data FOLDER used to say the folder "does not exist"; now: it is a folder, a file is expected (its files named)."""
    (tmp_path / "pairs.tsv").write_text("one\tuno\n", encoding="utf-8")
    with pytest.raises(SystemExit) as caught:
        main([*TRAIN, "--data", str(tmp_path), "--out", str(tmp_path / "run"), *TINY_MODEL_ARGS])
    folder = str(tmp_path.resolve())
    assert caught.value.code == 2
    assert capsys.readouterr().err == (
        f"txcourse: error: --data {str(tmp_path)!r}: {folder!r} is a folder, not a file; the file task reads "
        f"source<TAB>target lines from a file: give the path of one (it holds {folder + '/pairs.tsv'!r})\n"
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--task", "file"], "--task file needs --data PATH"),
        (["--task", "copy", "--data", "pairs.tsv"], "--data 'pairs.tsv' is only read by --task file, not --task copy"),
    ],
)
def test_data_goes_with_the_file_task_only(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["train", *argv, "--steps", "1", "--out", str(tmp_path / "run"), "--no-progress"])
    assert message in capsys.readouterr().err


def test_resume_a_file_run(corpus, tmp_path, capsys):
    argv = [*TRAIN, "--data", str(corpus), "--task-arg", "tokens=char", "--out", str(tmp_path), *TINY_MODEL_ARGS]
    assert main(argv) == 0
    longer = [a if a != "4" else "6" for a in argv]  # --steps 4 -> 6
    assert main([*longer, "--resume"]) == 0
    assert read_checkpoint_meta(tmp_path / "model.npz")["step"] == 6
    capsys.readouterr()
    with pytest.raises(SystemExit):  # another split seed is another task: refused, as for any task argument
        main([*[a if a != "4" else "8" for a in argv], "--task-arg", "seed=1", "--resume"])
    assert "--task-arg seed 0 (checkpoint) vs 1 (now)" in capsys.readouterr().err
