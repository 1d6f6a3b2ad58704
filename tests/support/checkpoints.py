"""Checkpoints in the CLI tests: a TensorFlow twin of a shipped PyTorch checkpoint (the same weights, converted by
txcourse.convert.torch_to_tf), and `txcourse translate` run on one."""

import io
from pathlib import Path

import numpy as np

BOOK_DATA = Path(__file__).resolve().parents[2] / "book" / "data"


def tf_twin(torch_path: Path, out: Path) -> Path:
    """Write ``out``: the Keras model of ``torch_path``'s kind and config holding its weights; returns ``out``."""
    import tensorflow as tf

    import txcourse.tf.train as tf_train
    import txcourse.torch.train as torch_train
    from txcourse.convert import torch_to_tf
    from txcourse.tf.weights import model_arrays
    from txcourse.training.checkpoint import heads_array, load_checkpoint, write_checkpoint

    checkpoint = load_checkpoint(torch_path, "torch")
    torch_model, meta = torch_train.load_model(checkpoint)
    keras_model = tf_train.build_model(checkpoint.kind, checkpoint.config)
    ids = tf.constant(np.array([[3, 4, 5]]))
    keras_model(ids, ids)  # builds the weights
    torch_to_tf(torch_model, keras_model)
    header = {key: value for key, value in meta.items() if key not in ("format", "torch_version")}
    header.update(framework="tf", tf_version=tf.__version__, weights_only=True)
    write_checkpoint(out, header, {**model_arrays(keras_model), **heads_array(checkpoint.config["num_heads"])})
    return out


def run_translate(capsys, monkeypatch, checkpoint, *args, stdin=None):
    """Run `txcourse translate --checkpoint CHECKPOINT ARGS`; returns (exit code, stdout lines, stderr lines)."""
    from txcourse.cli import main

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    try:
        code = main(["translate", "--checkpoint", str(checkpoint), *args])
    except SystemExit as exit_info:
        code = exit_info.code
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()
