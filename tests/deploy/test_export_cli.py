"""``txcourse export`` and the exported folder on the command line: the same input handling and output as the
checkpoint, and a one-line ``txcourse: error:`` naming what cannot be exported or run (issue 34)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.checkpoints import run_translate

from txcourse.cli import main
from txcourse.training.checkpoint import read_checkpoint, write_checkpoint

BOOK_DATA = Path(__file__).resolve().parents[2] / "book" / "data"
NUMBERS = BOOK_DATA / "numbers-transformer-torch.npz"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_info:
        code = exit_info.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "numbers-ct2"
    assert main(["export", "--to", "ctranslate2", "--checkpoint", str(NUMBERS), "--out", str(out)]) == 0
    return out


def test_export_writes_the_model_and_the_txcourse_header(folder):
    assert {"model.bin", "config.json", "txcourse.json"} <= {p.name for p in folder.iterdir()}
    header = json.loads((folder / "txcourse.json").read_text())
    assert header["task"]["name"] == "numbers" and header["exported_from"]["framework"] == "torch"
    assert "train_config" not in header and set(header["tokenizers"]) == {"src", "tgt"}
    config = json.loads((folder / "config.json").read_text())
    assert config["decoder_start_token"] == "<sos>" and config["layer_norm_epsilon"] == 1e-6


def test_translate_prints_what_the_checkpoint_prints(folder, capsys, monkeypatch):
    """Same lines, same skip notes and warnings: one of each kind of input the numbers task meets."""
    lines = "one hundred five\nA THOUSAND AND ONE\n\nzebra\ntwelve hundred\nninety-nine thousand, nine\n"
    want = run_translate(capsys, monkeypatch, NUMBERS, stdin=lines)
    got = run_translate(capsys, monkeypatch, folder, stdin=lines)
    assert want[0] == 0 and len(want[1]) == 4 and want[2]  # four translated, two skipped with a note
    assert got == want
    beam = run_translate(capsys, monkeypatch, folder, "--beam", "4", stdin=lines)
    assert beam == run_translate(capsys, monkeypatch, NUMBERS, "--beam", "4", stdin=lines)


def test_evaluate_prints_the_checkpoints_scores(folder, capsys):
    options = ["--limit", "150", "--per-digit", "2", "--per-phrasing", "2"]
    code, want, _ = _run(capsys, "evaluate", "--checkpoint", str(NUMBERS), *options)
    code_exported, got, _ = _run(capsys, "evaluate", "--checkpoint", str(folder), *options)
    assert code == code_exported == 0
    assert want.splitlines()[0].startswith("transformer (torch), numbers test (150 pairs)")
    assert got == want.replace("transformer (torch)", "transformer (ctranslate2)", 1)


@pytest.mark.parametrize("kind", ["bahdanau", "seq2seq"])
def test_gru_models_are_refused(tmp_path, capsys, kind):
    checkpoint = BOOK_DATA / f"dates-{kind}-torch.npz"
    code, _, err = _run(
        capsys, "export", "--to", "ctranslate2", "--checkpoint", str(checkpoint), "--out", str(tmp_path / "o")
    )
    assert code == 2 and err.startswith("txcourse: error: ") and err.count("\n") == 1
    assert f"a {kind!r} model (a GRU encoder-decoder)" in err and "Transformers only" in err
    assert not (tmp_path / "o").exists()


def test_alibi_is_refused_naming_the_setting(tmp_path, capsys):
    meta, arrays = read_checkpoint(NUMBERS)
    meta["model"]["config"]["positions"] = "alibi"  # no weights either way: a valid ALiBi checkpoint
    write_checkpoint(tmp_path / "alibi.npz", {k: v for k, v in meta.items() if k != "format"}, arrays)
    code, _, err = _run(
        capsys,
        "export",
        "--to",
        "ctranslate2",
        "--checkpoint",
        str(tmp_path / "alibi.npz"),
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2 and err.count("\n") == 1
    assert "positions='alibi' cannot be exported" in err and "in the encoder" in err


def test_the_out_folder_is_kept_unless_told(folder, tmp_path, capsys):
    export = ["export", "--to", "ctranslate2", "--checkpoint", str(NUMBERS), "--out"]
    code, _, err = _run(capsys, *export, str(folder))
    assert code == 2 and "already holds an exported model; pass --overwrite" in err
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    code, _, err = _run(capsys, *export, str(other), "--overwrite")
    assert code == 2 and "holds no exported model" in err and (other / "mine.txt").read_text() == "keep me"
    code, out, _ = _run(capsys, *export, str(folder), "--overwrite")
    assert code == 0 and out.startswith(f"wrote {folder}: CTranslate2 model")


def test_a_folder_is_run_only_as_an_export(folder, tmp_path, capsys, monkeypatch):
    code, _, err = run_translate(capsys, monkeypatch, tmp_path, "forty two")
    assert code == 2 and "is a folder without txcourse.json" in err[-1]
    code, _, err = run_translate(capsys, monkeypatch, folder, "--sample", "forty two")
    assert code == 2 and err[-1].startswith("txcourse: error: --sample: an exported CTranslate2 model")
    code, _, err = run_translate(capsys, monkeypatch, folder, "--framework", "tf", "forty two")
    assert code == 2 and "was exported from a 'torch' checkpoint" in err[-1]
    code, _, err = run_translate(capsys, monkeypatch, folder, "--device", "mps", "forty two")
    assert code == 2 and err[-1].startswith("txcourse: error: --device 'mps'")


def test_ctranslate2_is_not_imported_with_txcourse():
    code = "import sys, txcourse, txcourse.cli, txcourse.deploy; print('ctranslate2' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
