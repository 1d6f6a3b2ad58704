"""`txcourse translate` input handling (issue 12), on tiny numbers checkpoints of both frameworks.

Normalisation (case, spaces, commas, hyphens) lives in the checkpoint's source tokenizer; unknown
words are named on stderr and the output line is marked (``--strict`` refuses); empty lines are
skipped with a note and never translated. The checkpoints train 3 steps: their translations are
wrong, but the same input must give the same ids and the same output.
"""

import json

import pytest
from support.checkpoints import run_translate
from support.configs import TINY_MODEL_ARGS

from txcourse.cli import main
from txcourse.data import get_task
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.registry import FRAMEWORKS
from txcourse.training.checkpoint import read_checkpoint_meta

SIZES = "sizes=(200,8,8)"
TINY = TINY_MODEL_ARGS


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """framework -> a numbers checkpoint of a tiny Transformer trained 3 steps."""
    out = {}
    for framework in FRAMEWORKS:
        folder = tmp_path_factory.mktemp(f"numbers-{framework}")
        assert (
            main(
                [
                    "train",
                    "--framework",
                    framework,
                    "--task",
                    "numbers",
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
                    str(folder),
                    *TINY,
                ]
            )
            == 0
        )
        out[framework] = folder / "model.npz"
    return out


@pytest.fixture(scope="module")
def canonical():
    """A training source with commas and hyphens, as num2words writes it (every word is in the vocabulary)."""
    train = [s for s, _ in get_task("numbers", sizes=(200, 8, 8)).train]
    source = max(train, key=lambda s: (s.count(",") + s.count("-"), s))
    assert "," in source and "-" in source, source
    return source


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
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], canonical, *variants.values())
    assert code == 0 and err == [] and len(out) == 1 + len(variants)
    rows = [line.split("\t") for line in out]
    assert [row[0] for row in rows] == [" ".join(v.split()) for v in [canonical, *variants.values()]]  # collapsed
    translation = rows[0][1]
    assert rows == [[source, translation] for source, _ in rows], dict(zip(["canonical", *variants], rows))


NOT_A_NUMBER = "txcourse: skipped line {}: not an English number from 0 to 999999: "


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_what_is_no_number_of_the_task_is_skipped_with_the_reason(framework, checkpoints, capsys, monkeypatch):
    """Unknown words, numbers out of range and ill-formed phrases of known words are never translated."""
    lines = [
        "one hundred",
        "Zebra",
        "one million",
        "one thousand thousand",
        "nineteen ninety-nine",
        "one two three",
        "hundred thousand",
        "and",
        "ten hundred",
    ]
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], *lines)
    assert code == 0 and [line.split("\t")[0] for line in out] == ["one hundred"] and len(out[0].split("\t")) == 2
    assert err == [
        NOT_A_NUMBER.format(2) + "'Zebra' has words that are not number words: 'zebra'",
        NOT_A_NUMBER.format(3) + "'one million' uses 'million': numbers from 0 to 999999 only",
        NOT_A_NUMBER.format(4) + "'one thousand thousand': 'thousand' cannot follow here (a number says "
        "each scale once, largest first, e.g. 'one hundred thousand', not 'one thousand thousand' or "
        "'ten hundred')",
        NOT_A_NUMBER.format(5) + "'nineteen ninety-nine' reads as two numbers (nineteen, ninety nine), "
        "like a year; write it as one number, e.g. 'one thousand, nine hundred and ninety-nine'",
        NOT_A_NUMBER.format(6) + "'one two three' reads as more than one number (one, two three); write "
        "one number per line",
        NOT_A_NUMBER.format(7) + "'hundred thousand': 'hundred' needs a count before it, e.g. 'a "
        "hundred' or 'one hundred'",
        NOT_A_NUMBER.format(8) + "'and': 'and' joins two parts of a number, it cannot stand first",
        NOT_A_NUMBER.format(9) + "'ten hundred': ten hundred is not said; write one thousand (e.g. 'two thousand')",
    ]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_every_phrasing_of_a_number_gets_the_canonical_translation(framework, checkpoints, capsys, monkeypatch):
    """'one hundred five' used to become 백 (the word 'five' dropped), 'a hundred' 이백, 'nineteen hundred' 백십구:
    now the model reads the phrasing it was trained on, whatever the user wrote."""
    from txcourse.data.english_numbers import variants

    for n in (105, 100, 1001, 1900, 1999, 42, 20001, 305000, 999999):
        phrasings = {**variants(n), "as typed": " ".join(variants(n)["canonical"].replace("-", " ").split())}
        code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], *phrasings.values())
        assert code == 0 and err == [] and len(out) == len(phrasings), (n, err)
        translations = {line.split("\t")[1] for line in out}
        assert len(translations) == 1, (n, out)  # one model input, so one translation for every phrasing


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_strict_refuses_what_is_no_number(framework, checkpoints, capsys, monkeypatch):
    code, out, err = run_translate(
        capsys, monkeypatch, checkpoints[framework], "--strict", "one hundred", "zebra", "one million"
    )
    assert code == 2 and out == []
    assert err == [
        "txcourse: error: --strict: line 2: not an English number from 0 to 999999: 'zebra' has words "
        "that are not number words: 'zebra' (and 1 more)"
    ]
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], "--strict", "ONE HUNDRED, and one")
    assert code == 0 and err == [] and len(out) == 1 and len(out[0].split("\t")) == 2


def _train_tiny(folder, *task_args):
    argv = ["train", *task_args, "--steps", "2", "--batch-size", "8", "--log-every", "2", "--no-progress"]
    assert main([*argv, "--out", str(folder), *TINY]) == 0


def test_unknown_words_of_other_tasks_are_named_and_the_line_marked(tmp_path, capsys, monkeypatch):
    """A task that reads any text (the file task) gives the line as typed: a word missing from the source
    vocabulary is read as <unk>, named on stderr and marked (--strict refuses). Issue 32: the copy and reverse
    tasks declare their alphabet, so a symbol outside it is refused with the reason, never read as <unk>."""
    corpus = tmp_path / "pairs.tsv"
    pairs = get_task("reverse", sizes=(64, 0, 0), vocab="abc").train
    corpus.write_text("".join(f"{src}\t{tgt}\n" for src, tgt in pairs), encoding="utf-8")
    _train_tiny(tmp_path / "file", "--task", "file", "--data", str(corpus), "--task-arg", "tokens='char'")
    capsys.readouterr()
    code, out, err = run_translate(capsys, monkeypatch, tmp_path / "file" / "model.npz", "a b", "a 7 b", "7 xy")
    assert code == 0 and [line.split("\t")[0] for line in out] == ["a b", "a 7 b", "7 xy"]
    assert [line.split("\t")[2:] for line in out] == [[], ["?unknown: 7"], ["?unknown: 7 x y"]]
    assert len(err) == 2 and err[0].startswith("txcourse: warning: line 2: '7' is not in the source vocabulary (")
    assert err[1].startswith("txcourse: warning: line 3: '7', 'x', 'y' are not in the source vocabulary (")
    code, out, err = run_translate(capsys, monkeypatch, tmp_path / "file" / "model.npz", "--strict", "a b", "a 7 b")
    assert (code, out, err) == (
        2,
        [],
        ["txcourse: error: --strict: line 2 has words outside the source vocabulary: '7'"],
    )
    _train_tiny(tmp_path / "reverse", "--task", "reverse", "--task-arg", "sizes=(64,8,8)")
    capsys.readouterr()
    checkpoint = tmp_path / "reverse" / "model.npz"
    code, out, err = run_translate(capsys, monkeypatch, checkpoint, "a b", "a 77 b", "77 xy", " ".join("abcdefghijk"))
    assert code == 0 and [line.split("\t")[0] for line in out] == ["a b", " ".join("abcdefghijk")]
    assert all(len(line.split("\t")) == 2 for line in out)
    assert err == [
        "txcourse: skipped line 2: '77' is not of the reverse task's 26 symbols ('a' to 'z')",
        "txcourse: skipped line 3: '77', 'xy' are not of the reverse task's 26 symbols ('a' to 'z'); symbols are "
        "separated by spaces, e.g. 'x y'",
        "txcourse: warning: line 4: 11 symbols, more than the 10 the reverse task trains on (max_len): the model "
        "never saw so long a sequence",
    ]
    code, out, err = run_translate(capsys, monkeypatch, checkpoint, "--strict", "a b", " ".join("abcdefghijk"))
    assert (code, out, err) == (
        2,
        [],
        [
            "txcourse: error: --strict: line 2: 11 symbols, more than the 10 the reverse task trains on (max_len): "
            "the model never saw so long a sequence"
        ],
    )
    code, out, err = run_translate(capsys, monkeypatch, checkpoint, "a 77 b")
    assert (code, out) == (2, []) and err[-1] == (
        "txcourse: error: nothing to translate: the only line is empty, without words, too long or not the "
        "task's symbols"
    )


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_empty_lines_are_skipped_with_a_note(framework, checkpoints, capsys, monkeypatch):
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], "one", "", "  \t ", "two")
    assert code == 0
    assert [line.split("\t")[0] for line in out] == ["one", "two"]
    assert err == ["txcourse: skipped line 2: empty", "txcourse: skipped line 3: empty"]
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], stdin="one\n\n   \r\n, -\ntwo\n")
    assert code == 0
    assert [line.split("\t")[0] for line in out] == ["one", "two"]
    assert err == [
        "txcourse: skipped line 2: empty",
        "txcourse: skipped line 3: empty",
        "txcourse: skipped line 4: no words in ', -'",
    ]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_line_longer_than_max_len_is_skipped_with_its_number(framework, checkpoints, capsys, monkeypatch):
    """It used to abort the whole batch with a message about `x` and TransformerConfig.max_len, and no line number."""
    max_len = read_checkpoint_meta(checkpoints[framework])["model"]["config"]["max_len"]
    long_line = " ".join(["one hundred"] * max_len)  # 2 * max_len tokens
    why = (
        f"line 2: {2 * max_len} tokens, more than the {max_len} positions this model reads (max_len of the "
        f"checkpoint); split it into shorter sentences"
    )
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], "one", long_line, "", "two")
    assert code == 0 and [line.split("\t")[0] for line in out] == ["one", "two"]
    assert err == [f"txcourse: skipped {why}", "txcourse: skipped line 3: empty"]
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], "--strict", "one", long_line)
    assert (code, out, err) == (2, [], [f"txcourse: error: --strict: {why}"])
    code, out, err = run_translate(capsys, monkeypatch, checkpoints[framework], long_line)
    assert (code, out) == (2, []) and err[
        -1
    ] == "txcourse: error: nothing to translate: the only line is empty, without words, too long or no number"


@pytest.mark.parametrize(
    "args, stdin, expected",
    [
        (
            [""],
            None,
            ["txcourse: skipped line 1: empty", "txcourse: error: nothing to translate: the only line is empty"],
        ),
        (
            [],
            "\n \n",
            [
                "txcourse: skipped line 1: empty",
                "txcourse: skipped line 2: empty",
                "txcourse: error: nothing to translate: all 2 lines are empty",
            ],
        ),
        ([], "", ["txcourse: error: nothing to translate: pass sentences or pipe them on standard input"]),
        (
            ["-", ""],
            None,
            [
                "txcourse: skipped line 1: no words in '-'",
                "txcourse: skipped line 2: empty",
                "txcourse: error: nothing to translate: all 2 lines are empty or without words",
            ],
        ),
    ],
)
def test_nothing_left_is_refused(args, stdin, expected, checkpoints, capsys, monkeypatch):
    code, out, err = run_translate(capsys, monkeypatch, checkpoints["torch"], *args, stdin=stdin)
    assert (code, out, err) == (2, [], expected)


def test_help_documents_the_output_columns(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    text = capsys.readouterr().out
    assert "--strict" in text and "SOURCE<TAB>TRANSLATION<TAB>?unknown: W1 W2" in text


def test_library_translate_refuses_a_source_without_words(checkpoints):
    from txcourse.backends import backend
    from txcourse.evaluation.translate import translate

    fw = backend("torch")
    model, meta = fw.load_model(str(checkpoints["torch"]))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    with pytest.raises(ValueError, match=r"sources\[1\] = ' , ' has no words to translate"):
        translate(fw, model, ["one", " , "], src_tok, tgt_tok)
    assert len(translate(fw, model, ["one", "Two"], src_tok, tgt_tok)) == 2


def test_evaluate_scores_each_phrasing(checkpoints, tmp_path, capsys):
    """`txcourse evaluate` on a numbers checkpoint scores every way of writing a number, as translate reads it."""
    scores = tmp_path / "scores.json"
    assert (
        main(
            [
                "evaluate",
                "--checkpoint",
                str(checkpoints["torch"]),
                "--limit",
                "4",
                "--per-digit",
                "0",
                "--per-phrasing",
                "12",
                "--json",
                str(scores),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "by phrasing, 12 fresh numbers written each way that applies" in out and "| hundreds (1100-9999) |" in out
    by_phrasing = json.loads(scores.read_text())["by_phrasing"]
    assert by_phrasing["refused"] == 0
    assert by_phrasing["canonical"]["count"] == by_phrasing["upper case"]["count"] == 12
    assert set(by_phrasing) - {"refused"} <= {
        "canonical",
        "no and",
        "no commas or hyphens",
        "a hundred / a thousand",
        "hundreds (1100-9999)",
        "upper case",
    }
    assert all(0 <= v["exact_match"] <= 1 for k, v in by_phrasing.items() if k != "refused")
    assert (
        main(
            [
                "evaluate",
                "--checkpoint",
                str(checkpoints["torch"]),
                "--limit",
                "4",
                "--per-digit",
                "0",
                "--per-phrasing",
                "0",
            ]
        )
        == 0
    )
    assert "by phrasing" not in capsys.readouterr().out


def test_the_shipped_model_translates_every_phrasing_alike():
    """Every phrasing reaches the shipped Transformer as the canonical one, so each scores what the canonical does."""
    from pathlib import Path

    from txcourse.backends import backend
    from txcourse.evaluation.translate import evaluate_by_phrasing

    pytest.importorskip("torch")
    path = Path(__file__).resolve().parents[2] / "book" / "data" / "numbers-transformer-torch.npz"
    meta = read_checkpoint_meta(path)
    fw = backend("torch")
    model, _ = fw.load_model(str(path))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    result = evaluate_by_phrasing(fw, model, get_task("numbers", **meta["task"]["kwargs"]), src_tok, tgt_tok, count=30)
    assert result["refused"] == 0
    # the same 30 numbers, typed in capitals: the same model input, so exactly the same score
    assert result["upper case"].count == result["canonical"].count == 30
    assert result["upper case"].exact_match == result["canonical"].exact_match >= 0.9
    assert all(bucket.exact_match >= 0.9 for name, bucket in result.items() if name != "refused"), result
