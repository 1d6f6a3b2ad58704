"""`txcourse translate` input handling (issue 12), on tiny numbers checkpoints of both frameworks.

Normalisation (case, spaces, commas, hyphens) lives in the checkpoint's source tokenizer; unknown
words are named on stderr and the output line is marked (``--strict`` refuses); empty lines are
skipped with a note and never translated. The checkpoints train 3 steps: their translations are
wrong, but the same input must give the same ids and the same output.
"""

import io
import json

import pytest

from txcourse.checkpoint import read_checkpoint_meta
from txcourse.cli import main
from txcourse.data import get_task
from txcourse.experiment import tokenizers_from_meta

SIZES = "sizes=(200,8,8)"
TINY = ["--set", "d_model=16", "--set", "num_heads=2", "--set", "d_ff=32", "--set", "num_encoder_layers=1",
        "--set", "num_decoder_layers=1"]
FRAMEWORKS = ["torch", "tf"]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """framework -> a numbers checkpoint of a tiny Transformer trained 3 steps."""
    out = {}
    for framework in FRAMEWORKS:
        folder = tmp_path_factory.mktemp(f"numbers-{framework}")
        assert main(["train", "--framework", framework, "--task", "numbers", "--task-arg", SIZES, "--steps", "3",
                     "--batch-size", "16", "--log-every", "3", "--no-progress", "--out", str(folder), *TINY]) == 0
        out[framework] = folder / "model.npz"
    return out


@pytest.fixture(scope="module")
def canonical():
    """A training source with commas and hyphens, as num2words writes it (every word is in the vocabulary)."""
    train = [s for s, _ in get_task("numbers", sizes=(200, 8, 8)).train]
    source = max(train, key=lambda s: (s.count(",") + s.count("-"), s))
    assert "," in source and "-" in source, source
    return source


def _translate(capsys, monkeypatch, checkpoint, *args, stdin=None):
    """Run `txcourse translate`; returns (exit code, stdout lines, stderr lines)."""
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    try:
        code = main(["translate", "--checkpoint", str(checkpoint), *args])
    except SystemExit as exit_info:
        code = exit_info.code
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


def _variants(source):
    return {
        "upper case": source.upper(),
        "extra spaces": "  " + source.replace(" ", "   ") + " \t",
        "no commas": source.replace(",", ""),
        "hyphen as space": source.replace("-", " "),
        "all at once": "  " + source.replace(",", "").replace("-", " ").title() + "  ",
    }


def test_checkpoint_tokenizer_carries_the_normalisation(checkpoints):
    for checkpoint in checkpoints.values():
        state = json.loads(read_checkpoint_meta(checkpoint)["tokenizers"]["src"])
        assert state["lowercase"] is True and state["ignore"] == [",", "-"]
        assert "," not in state["tokens"] and "-" not in state["tokens"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_variants_give_the_same_ids_and_translation(framework, checkpoints, canonical, capsys, monkeypatch):
    src_tok, _ = tokenizers_from_meta(read_checkpoint_meta(checkpoints[framework]))
    variants = _variants(canonical)
    for name, variant in variants.items():
        assert src_tok.encode(variant) == src_tok.encode(canonical), name
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], canonical, *variants.values())
    assert code == 0 and err == [] and len(out) == 1 + len(variants)
    rows = [line.split("\t") for line in out]
    assert [row[0] for row in rows] == [" ".join(v.split()) for v in [canonical, *variants.values()]]  # collapsed
    translation = rows[0][1]
    assert rows == [[source, translation] for source, _ in rows], dict(zip(["canonical", *variants], rows))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_unknown_words_are_named_and_the_line_marked(framework, checkpoints, capsys, monkeypatch):
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], "one hundred", "Zebra", "one million",
                                "zebra, one million")
    assert code == 0
    assert [line.split("\t")[0] for line in out] == ["one hundred", "Zebra", "one million", "zebra, one million"]
    assert [len(line.split("\t")) for line in out] == [2, 3, 3, 3]
    assert [line.split("\t")[2:] for line in out[1:]] == [["?unknown: zebra"], ["?unknown: million"],
                                                          ["?unknown: zebra million"]]
    assert len(err) == 3, err
    assert err[0].startswith("txcourse: warning: line 2: 'zebra' is not in the source vocabulary (")
    assert err[1].startswith("txcourse: warning: line 3: 'million' is not in the source vocabulary (")
    assert err[2].startswith("txcourse: warning: line 4: 'zebra', 'million' are not in the source vocabulary (")
    assert "words, e.g. 'and', " in err[0] or "words, e.g. 'hundred', " in err[0], err[0]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_strict_refuses_unknown_words(framework, checkpoints, capsys, monkeypatch):
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], "--strict", "one hundred", "zebra",
                                "one million")
    assert code == 2 and out == []
    assert err == ["txcourse: error: --strict: line 2 has words outside the source vocabulary: 'zebra' "
                   "(also line 3)"]
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], "--strict", "ONE HUNDRED, and one")
    assert code == 0 and err == [] and len(out) == 1 and len(out[0].split("\t")) == 2


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_empty_lines_are_skipped_with_a_note(framework, checkpoints, capsys, monkeypatch):
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], "one", "", "  \t ", "two")
    assert code == 0
    assert [line.split("\t")[0] for line in out] == ["one", "two"]
    assert err == ["txcourse: skipped line 2: empty", "txcourse: skipped line 3: empty"]
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], stdin="one\n\n   \r\n, -\ntwo\n")
    assert code == 0
    assert [line.split("\t")[0] for line in out] == ["one", "two"]
    assert err == ["txcourse: skipped line 2: empty", "txcourse: skipped line 3: empty",
                   "txcourse: skipped line 4: no words in ', -'"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_line_longer_than_max_len_is_skipped_with_its_number(framework, checkpoints, capsys, monkeypatch):
    """It used to abort the whole batch with a message about `x` and TransformerConfig.max_len, and no line number."""
    max_len = read_checkpoint_meta(checkpoints[framework])["model"]["config"]["max_len"]
    long_line = " ".join(["one hundred"] * max_len)  # 2 * max_len tokens
    why = (f"line 2: {2 * max_len} tokens, more than the {max_len} positions this model reads (max_len of the "
           f"checkpoint); split it into shorter sentences")
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], "one", long_line, "", "two")
    assert code == 0 and [line.split("\t")[0] for line in out] == ["one", "two"]
    assert err == [f"txcourse: skipped {why}", "txcourse: skipped line 3: empty"]
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], "--strict", "one", long_line)
    assert (code, out, err) == (2, [], [f"txcourse: error: --strict: {why}"])
    code, out, err = _translate(capsys, monkeypatch, checkpoints[framework], long_line)
    assert (code, out) == (2, []) and err[-1] == "txcourse: error: nothing to translate: the only line is empty, " \
                                                 "without words or too long"


@pytest.mark.parametrize("args, stdin, expected", [
    ([""], None, ["txcourse: skipped line 1: empty", "txcourse: error: nothing to translate: the only line is empty"]),
    ([], "\n \n", ["txcourse: skipped line 1: empty", "txcourse: skipped line 2: empty",
                   "txcourse: error: nothing to translate: all 2 lines are empty"]),
    ([], "", ["txcourse: error: nothing to translate: pass sentences or pipe them on standard input"]),
    (["-", ""], None, ["txcourse: skipped line 1: no words in '-'", "txcourse: skipped line 2: empty",
                       "txcourse: error: nothing to translate: all 2 lines are empty or without words"]),
])
def test_nothing_left_is_refused(args, stdin, expected, checkpoints, capsys, monkeypatch):
    code, out, err = _translate(capsys, monkeypatch, checkpoints["torch"], *args, stdin=stdin)
    assert (code, out, err) == (2, [], expected)


def test_help_documents_the_output_columns(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    text = capsys.readouterr().out
    assert "--strict" in text and "SOURCE<TAB>TRANSLATION<TAB>?unknown: W1 W2" in text


def test_library_translate_refuses_a_source_without_words(checkpoints):
    from txcourse.experiment import backend, translate

    fw = backend("torch")
    model, meta = fw.load_model(str(checkpoints["torch"]))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    with pytest.raises(ValueError, match=r"sources\[1\] = ' , ' has no words to translate"):
        translate(fw, model, ["one", " , "], src_tok, tgt_tok)
    assert len(translate(fw, model, ["one", "Two"], src_tok, tgt_tok)) == 2
