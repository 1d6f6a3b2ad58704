"""txcourse.training.checkpoint: one loader (load_checkpoint) that reads and checks a checkpoint once, for both halves.

Each refusal is a one-line ValueError that names the file and what is
wrong; what it returns is what the model then holds. The module itself
knows no framework: it imports neither, and holds neither half's weight names
(each half reads its own and checks them against the header when it loads
them, ``txcourse.<fw>.weights.check_weights``).
"""

from __future__ import annotations

import ast
import importlib
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import txcourse
from txcourse.config import TransformerConfig
from txcourse.data import WordTokenizer, encode_pairs, get_task
from txcourse.registry import FRAMEWORKS
from txcourse.training import TrainConfig
from txcourse.training.checkpoint import (
    Checkpoint,
    load_checkpoint,
    read_checkpoint,
    strip_training_state,
    write_checkpoint,
)

ROOT = pathlib.Path(txcourse.__file__).resolve().parent


def _other(framework: str) -> str:
    return "tf" if framework == "torch" else "torch"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A 2-step Transformer checkpoint of each framework, and its weights-only copy."""
    folder = tmp_path_factory.mktemp("checkpoints")
    splits = get_task("copy", vocab="abcdef", min_len=2, max_len=5, sizes=(32, 4, 4))
    tok = WordTokenizer.fit([s for s, _ in splits.train])
    data = encode_pairs(splits.train, tok, tok)
    cfg = TransformerConfig(
        src_vocab_size=len(tok.vocab),
        tgt_vocab_size=len(tok.vocab),
        d_model=16,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        max_len=16,
    ).to_dict()
    config = TrainConfig(steps=2, batch_size=8, warmup_steps=4, progress=False, device="cpu")
    paths = {}
    for framework in FRAMEWORKS:
        train = importlib.import_module(f"txcourse.{framework}.train")
        train.set_seed(0)
        trainer = train.Trainer(train.build_model("transformer", cfg), "transformer", cfg, data, config)
        trainer.fit(checkpoint_path=str(folder / f"{framework}.npz"))
        paths[framework] = folder / f"{framework}.npz"
        strip_training_state(paths[framework], folder / f"{framework}-weights.npz")
    return paths


def _one_line(err: pytest.ExceptionInfo, path: os.PathLike) -> str:
    message = str(err.value)
    assert "\n" not in message, message
    assert str(path) in message, f"the message does not name the file: {message}"
    return message


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_returns_the_checked_checkpoint(saved, framework):
    ckpt = load_checkpoint(saved[framework], framework, "transformer", resumable=True)
    assert isinstance(ckpt, Checkpoint) and ckpt.path == str(saved[framework])
    assert (ckpt.framework, ckpt.kind, ckpt.step) == (framework, "transformer", 2)
    assert ckpt.config == ckpt.meta["model"]["config"] and ckpt.config["d_model"] == 16
    meta, arrays = read_checkpoint(saved[framework])
    assert ckpt.meta == meta and sorted(ckpt.arrays) == sorted(arrays)
    assert load_checkpoint(saved[framework], None).framework == framework  # None: the header's framework


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_model_holds_the_weights_it_returns(saved, framework):
    train = importlib.import_module(f"txcourse.{framework}.train")
    weights = importlib.import_module(f"txcourse.{framework}.weights")
    ckpt = load_checkpoint(saved[framework], framework)
    expected = {name: a for name, a in ckpt.arrays.items() if name.startswith("model/")}
    for source in (ckpt, str(saved[framework])):  # a Checkpoint already read, or the file
        model, meta = train.load_model(source)
        held = weights.model_arrays(model)  # Keras: by position (its variable paths differ between models)
        assert len(held) == len(expected) and meta == ckpt.meta
        differ = [a for a, b in zip(sorted(expected), sorted(held)) if not np.array_equal(expected[a], held[b])]
        assert not differ, f"{framework}: the loaded model differs from the checkpoint in {differ[:3]}"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_refuses_another_framework(saved, framework):
    other = _other(framework)
    with pytest.raises(
        ValueError,
        match=f"was written by the '{framework}' half of txcourse, not '{other}': use --framework {framework}",
    ) as err:
        load_checkpoint(saved[framework], other)
    _one_line(err, saved[framework])


def test_load_checkpoint_takes_a_path_only(saved):
    """One reading, one check: a Checkpoint already read goes to load_model or Trainer.load, not back in here."""
    ckpt = load_checkpoint(saved["torch"], "torch")
    with pytest.raises(TypeError):
        load_checkpoint(ckpt, "torch")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_refuses_another_model_kind(saved, framework):
    with pytest.raises(ValueError, match="holds a 'transformer' model, not 'bahdanau'") as err:
        load_checkpoint(saved[framework], framework, "bahdanau")
    _one_line(err, saved[framework])


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_refuses_to_resume_a_weights_only_checkpoint(saved, framework):
    stripped = saved[framework].with_name(f"{framework}-weights.npz")
    assert load_checkpoint(stripped, framework).step == 2  # loads for translation
    with pytest.raises(ValueError, match="holds only the weights .*not resumed") as err:
        load_checkpoint(stripped, framework, resumable=True)
    _one_line(err, stripped)
    meta, arrays = read_checkpoint(saved[framework])
    old = saved[framework].with_name(f"{framework}-no-stream.npz")
    write_checkpoint(old, {k: v for k, v in meta.items() if k not in ("format", "stream")}, arrays)
    with pytest.raises(ValueError, match=r"cannot be resumed: its header lacks \['stream'\]") as err:
        load_checkpoint(old, framework, resumable=True)
    _one_line(err, old)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    "key,value",
    [("tgt_vocab_size", 99), ("num_heads", 4), ("d_ff", 64), ("num_encoder_layers", 2), ("tie_embeddings", False)],
)
def test_refuses_weights_that_do_not_match_the_config(saved, framework, key, value, tmp_path):
    """The half checks the weights against the header when it loads them: load_model and Trainer.load."""
    meta, arrays = read_checkpoint(saved[framework])
    meta = {k: v for k, v in meta.items() if k != "format"}
    meta["model"] = {"kind": "transformer", "config": {**meta["model"]["config"], key: value}}
    edited = tmp_path / "edited.npz"
    write_checkpoint(edited, meta, arrays)
    train = importlib.import_module(f"txcourse.{framework}.train")
    match = f"its header does not describe its weights: {key}={value!r} in the header"
    for source in (str(edited), load_checkpoint(edited, framework)):  # the header alone is fine
        with pytest.raises(ValueError, match=match) as err:
            train.load_model(source)
        _one_line(err, edited)
    original, _ = read_checkpoint(saved[framework])
    config = original["model"]["config"]
    trainer = train.Trainer(
        train.build_model("transformer", config),
        "transformer",
        config,
        [([3, 4], [5, 6])] * 4,
        TrainConfig(steps=4, batch_size=2, progress=False, device="cpu"),
    )
    with pytest.raises(ValueError, match=match) as err:
        trainer.load(str(edited))
    _one_line(err, edited)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_refuses_non_finite_weights(saved, framework, tmp_path):
    meta, arrays = read_checkpoint(saved[framework])
    name = next(n for n in sorted(arrays) if n.startswith("model/") and arrays[n].dtype.kind == "f")
    arrays[name] = np.full_like(arrays[name], np.nan)
    broken = tmp_path / "nan.npz"
    write_checkpoint(broken, {k: v for k, v in meta.items() if k != "format"}, arrays)
    with pytest.raises(
        ValueError, match=re.escape(f"holds non-finite weights (NaN or inf) in 1 array(s), e.g. {name!r}")
    ) as err:
        load_checkpoint(broken, framework)
    _one_line(err, broken)


@pytest.mark.parametrize(
    "content,message",
    [(b"not a zip", "not a readable txcourse checkpoint"), (None, "not a txcourse checkpoint (no header)")],
)
def test_refuses_a_file_that_is_not_a_checkpoint(content, message, tmp_path):
    path = tmp_path / "other.npz"
    if content is None:
        np.savez(path, weights=np.zeros(3))  # an .npz, but not one of ours
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        load_checkpoint(path, "torch")
    _one_line(err, path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.npz", "torch")


def test_checkpoint_module_holds_no_weight_name_of_either_half():
    """The weight names each half's ``architecture`` reads (``encoder.gru.weight_hh_l0``, ``w_1/kernel``) live
    in that half only."""
    source = (ROOT / "training" / "checkpoint.py").read_text(encoding="utf-8")
    for framework in FRAMEWORKS:
        tree = ast.parse((ROOT / framework / "weights.py").read_text(encoding="utf-8"))
        names = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"[\w]+([./][\w]+)+", node.value)
        }
        assert len(names) >= 5, f"{framework}: expected the weight names of txcourse/{framework}/weights.py"
        found = sorted(name for name in names if name in source)
        assert not found, f"txcourse/training/checkpoint.py names {framework} weights: {found}"


BLOCK = "import sys; sys.modules.update(torch=None, tensorflow=None, keras=None); "


def _run_blocked(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python in which importing torch, tensorflow or keras raises ImportError."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT.parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code], cwd=ROOT.parent, env=env, capture_output=True, text=True, timeout=300
    )


def test_checkpoint_and_training_modules_import_no_framework():
    code = (
        "import txcourse.training.checkpoint, txcourse.training, txcourse.training.loop, txcourse.training.files; "
        "bad = [m for m in ('torch', 'tensorflow', 'keras') if sys.modules.get(m) is not None]; "
        "assert not bad, bad"
    )
    result = _run_blocked(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert _run_blocked("import torch").returncode != 0  # the block works


def test_a_checkpoint_of_another_framework_is_refused_before_any_framework_is_imported(saved):
    """load_checkpoint imports no framework: the header is checked first, and the weights against it by the half
    that loads them (load_model, Trainer.load), not here."""
    code = (
        f"from txcourse.training.checkpoint import load_checkpoint\n"
        f"try:\n    load_checkpoint({str(saved['torch'])!r}, 'tf')\n"
        f"except ValueError as err:\n    print(err)\n"
        f"print(load_checkpoint({str(saved['torch'])!r}, 'torch', 'transformer', resumable=True).step)\n"
    )
    result = _run_blocked(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "written by the 'torch' half" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "2"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_header_without_positions_loads_as_sinusoidal(saved, framework, tmp_path):
    """Checkpoints written before TransformerConfig.positions existed lack the key: they load with the default."""
    meta, arrays = read_checkpoint(saved[framework])
    assert meta["model"]["config"]["positions"] == "sinusoidal", "new checkpoints record the field"
    meta = {k: v for k, v in meta.items() if k != "format"}
    meta["model"] = {
        "kind": "transformer",
        "config": {k: v for k, v in meta["model"]["config"].items() if k != "positions"},
    }
    old = tmp_path / "old.npz"
    write_checkpoint(old, meta, arrays)
    model, header = importlib.import_module(f"txcourse.{framework}.train").load_model(str(old))
    assert "positions" not in header["model"]["config"]
    assert model.config.positions == "sinusoidal"
    meta["model"]["config"]["positions"] = "rotary"
    write_checkpoint(old, meta, arrays)
    with pytest.raises(ValueError, match=r"positions must be one of"):
        importlib.import_module(f"txcourse.{framework}.train").load_model(str(old))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_learned_positions_checkpoint_saves_and_loads(framework, tmp_path):
    """The learned table is a weight: it is saved, checked against the header and loaded back."""
    train = importlib.import_module(f"txcourse.{framework}.train")
    cfg = TransformerConfig(
        src_vocab_size=9,
        tgt_vocab_size=9,
        d_model=8,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=16,
        max_len=12,
        positions="learned",
    ).to_dict()
    train.set_seed(0)
    model = train.build_model("transformer", cfg)
    trainer = train.Trainer(
        model,
        "transformer",
        cfg,
        [([3, 4], [5, 6])] * 4,
        TrainConfig(steps=1, batch_size=2, progress=False, device="cpu"),
    )
    trainer.save(str(tmp_path / "learned.npz"))
    loaded, header = train.load_model(str(tmp_path / "learned.npz"))
    assert header["model"]["config"]["positions"] == "learned"
    table = loaded.decoder.embedding.positional_encoding.table
    original = model.decoder.embedding.positional_encoding.table
    if framework == "torch":
        np.testing.assert_array_equal(table.weight.detach().numpy(), original.weight.detach().numpy())
    else:
        np.testing.assert_array_equal(table.embeddings.numpy(), original.embeddings.numpy())
    meta, arrays = read_checkpoint(tmp_path / "learned.npz")
    meta = {k: v for k, v in meta.items() if k != "format"}
    meta["model"]["config"]["positions"] = "rope"  # the header no longer describes the weights
    write_checkpoint(tmp_path / "edited.npz", meta, arrays)
    with pytest.raises(ValueError, match=r"does not fit"):
        train.load_model(str(tmp_path / "edited.npz"))


def test_translate_reads_the_checkpoint_once_and_sets_threads_outside_its_loader(monkeypatch, capsys):
    """`txcourse translate`: one read of the file (header and weights together), then the framework starts."""
    from txcourse.cli import main
    from txcourse.training import checkpoint as module

    reads = []
    real_open = module._open
    monkeypatch.setattr(module, "_open", lambda path, with_arrays: reads.append(path) or real_open(path, with_arrays))
    shipped = ROOT.parent / "book" / "data" / "numbers-transformer-torch.npz"
    assert main(["translate", "--checkpoint", str(shipped), "--threads", "1", "forty two"]) == 0
    assert len(reads) == 1, reads
    assert capsys.readouterr().out.strip()
