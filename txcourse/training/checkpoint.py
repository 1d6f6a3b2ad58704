"""The checkpoint file, shared by both frameworks: one ``.npz`` zip, written atomically.

It holds a JSON header (``meta``: format, framework, model kind and
config, tokenizers, step, ...) and named NumPy arrays (weights, optimizer
state, random-number-generator state). The header can be read with NumPy
alone, so the command line can tell a PyTorch checkpoint from a TensorFlow
one, or a Transformer from a GRU, without importing either framework.

:func:`load_checkpoint` is the one loader: it reads a checkpoint and checks
it once (header, framework, model kind, resumability, finite weights, pad id).
Weight names are each framework's own, so this module knows neither: the half
that loads the weights checks them against the header when it loads them
(``txcourse.<framework>.weights.check_weights``, through :func:`check_architecture`).
Framework-free: it imports no half.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from txcourse.config import Seq2SeqConfig, TransformerConfig
from txcourse.errors import TxcourseError
from txcourse.registry import FRAMEWORKS, MODEL_KINDS
from txcourse.training.files import atomic_write

__all__ = [
    "FORMAT",
    "Checkpoint",
    "load_checkpoint",
    "write_checkpoint",
    "read_checkpoint",
    "read_checkpoint_meta",
    "check_checkpoint",
    "check_resumable",
    "check_architecture",
    "heads_array",
    "strip_training_state",
]

FORMAT = "txcourse-checkpoint-1"
_META = "__meta__"
_HEADS = "arch/num_heads"  # the weights cannot tell the number of heads (w_q is D x D for any H): kept beside them

# The model.config keys a header must hold, by model kind.
CONFIG_KEYS = {
    "transformer": tuple(f.name for f in dataclasses.fields(TransformerConfig)),
    "bahdanau": tuple(f.name for f in dataclasses.fields(Seq2SeqConfig)),
    "seq2seq": tuple(f.name for f in dataclasses.fields(Seq2SeqConfig)),
}
# Config fields added after checkpoints were first shipped: a header without one means the field's default,
# which is what every older model computed (positions "sinusoidal": the paper's encoding; num_kv_heads None:
# one key/value head per query head).
LATER_CONFIG_KEYS = {"transformer": ("positions", "num_kv_heads")}


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint read and checked by :func:`load_checkpoint`: its header and its arrays.

    Attributes:
        path: the file it was read from (as a string, for messages).
        meta: the JSON header (format, framework, model kind and config, step, tokenizers, ...).
        arrays: every array by name: ``model/...`` weights, ``arch/num_heads``, optimizer and RNG state.
    """

    path: str
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]

    @property
    def framework(self) -> str:
        """'torch' or 'tf': the half that wrote it."""
        return self.meta["framework"]

    @property
    def kind(self) -> str:
        """The model kind: 'transformer', 'bahdanau' or 'seq2seq'."""
        return self.meta["model"]["kind"]

    @property
    def config(self) -> dict[str, Any]:
        """The model config the weights were trained with (the arguments of ``build_model``)."""
        return self.meta["model"]["config"]

    @property
    def step(self) -> int:
        """The optimizer steps the weights were trained for."""
        return int(self.meta["step"])


def load_checkpoint(
    path: str | os.PathLike, framework: Optional[str], kind: Optional[str] = None, resumable: bool = False
) -> Checkpoint:
    """Read a checkpoint and check it once: the one entry point of every loader.

    Checks, in this order, each with a one-line TxcourseError naming the file:
    that it is a txcourse checkpoint with a complete header
    (:func:`read_checkpoint`); that it was written by ``framework`` and holds
    a model of ``kind`` (:func:`check_checkpoint`); with ``resumable``, that
    it still holds the optimizer state and data position (:func:`check_resumable`);
    and that its weights are finite and its pad id is its tokenizers'. Whether
    the weights are those the header's model config describes is checked by
    the half that loads them (their names are its own), when it loads them:
    ``load_model`` and ``Trainer.load`` of ``txcourse.<framework>.train``.

    Args:
        path: a ``.npz`` written by ``Trainer.save``.
        framework: 'torch' or 'tf', the half that will load it; None takes
            the header's (for a caller that loads either).
        kind: the model kind the caller needs; None accepts any.
        resumable: True for ``Trainer.load`` (training continues from it).

    Returns:
        A :class:`Checkpoint` (path, meta, arrays; kind, config, step), which
        ``load_model`` and ``Trainer.load`` take as it is, without reading or
        checking it again.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        TxcourseError (a ValueError): any check above fails.

    Example:
        ``ckpt = load_checkpoint("book/data/numbers-transformer-torch.npz", "torch", "transformer")``,
        then ``txcourse.torch.train.load_model(ckpt)`` builds the model without reading the file again.
    """
    meta, arrays = read_checkpoint(path)
    checkpoint = Checkpoint(str(path), meta, arrays)
    check_checkpoint(checkpoint.path, meta, framework or meta.get("framework"), kind)
    if resumable:
        check_resumable(checkpoint.path, meta)
    _check_values(checkpoint.path, meta, arrays)
    return checkpoint


def write_checkpoint(path: str | os.PathLike, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write ``meta`` and ``arrays`` to ``path`` (temporary file, then rename)."""
    if _META in arrays:
        raise TxcourseError(f"array name {_META!r} is reserved for the header; name the array otherwise", "arrays")
    header = np.frombuffer(json.dumps({"format": FORMAT, **meta}, ensure_ascii=False).encode("utf-8"), np.uint8)
    atomic_write(path, lambda f: np.savez(f, **{_META: header}, **arrays))


def read_checkpoint_meta(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON header of a checkpoint. Raises FileNotFoundError or TxcourseError (not a checkpoint)."""
    meta, _ = _open(path, with_arrays=False)
    return meta


def read_checkpoint(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and every array of a checkpoint."""
    return _open(path, with_arrays=True)


def check_checkpoint(
    path: str | os.PathLike, meta: dict[str, Any], framework: str, model_kind: Optional[str] = None
) -> None:
    """Raise a one-line TxcourseError when the header is incomplete or the checkpoint is of another framework or
    model kind."""
    _check_header(path, meta)
    if meta.get("framework") != framework:
        raise TxcourseError(
            f"checkpoint {str(path)!r} was written by the {meta.get('framework')!r} half of "
            f"txcourse, not {framework!r}: use --framework {meta.get('framework')} (or convert "
            f"the weights with txcourse.convert)"
        )
    if model_kind is not None and meta.get("model", {}).get("kind") != model_kind:
        raise TxcourseError(
            f"checkpoint {str(path)!r} holds a {meta.get('model', {}).get('kind')!r} model, not {model_kind!r}"
        )


def _check_header(path: str | os.PathLike, meta: dict[str, Any]) -> None:
    """The keys every loader reads: framework, model kind and config (all fields of that kind), step."""
    model = meta.get("model")
    missing = [key for key in ("framework", "step") if key not in meta]
    if not isinstance(model, dict):
        missing.append("model")
    else:
        missing += [f"model.{key}" for key in ("kind", "config") if key not in model]
    if missing:
        raise TxcourseError(
            f"checkpoint {str(path)!r} has an incomplete header: it lacks {missing}; a txcourse "
            f"checkpoint records framework, step, model.kind and model.config (re-save it with "
            f"Trainer.save, or train again)"
        )
    kind, config = model["kind"], model["config"]
    if kind not in MODEL_KINDS:
        raise TxcourseError(
            f"checkpoint {str(path)!r} names model kind {kind!r} in its header, expected one of {list(MODEL_KINDS)}"
        )
    if meta["framework"] not in FRAMEWORKS:
        raise TxcourseError(
            f"checkpoint {str(path)!r} names framework {meta['framework']!r} in its header, expected 'torch' or 'tf'"
        )
    keys = CONFIG_KEYS[kind]
    later = LATER_CONFIG_KEYS.get(kind, ())
    lacking = [key for key in keys if key not in later and (not isinstance(config, dict) or key not in config)]
    unknown = sorted(set(config) - set(keys)) if isinstance(config, dict) else []
    if lacking or unknown:
        raise TxcourseError(
            f"checkpoint {str(path)!r}: the model.config of its {kind!r} header "
            + (f"lacks {lacking}" if lacking else "")
            + (" and " if lacking and unknown else "")
            + (f"has unknown keys {unknown}" if unknown else "")
            + f"; a {kind} config has exactly {list(keys)} (was the header edited, or the model "
            f"kind changed?)"
        )


def heads_array(num_heads: int) -> dict[str, np.ndarray]:
    """The array a Transformer checkpoint stores its number of heads in, beside the weights (see check_architecture)."""
    return {_HEADS: np.array(num_heads, dtype=np.int64)}


def _check_values(path: str | os.PathLike, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Raise a one-line TxcourseError when a weight is not finite, or the header's pad_id is not its tokenizers'."""
    broken = [
        name
        for name, a in arrays.items()
        if name.startswith("model/") and a.dtype.kind == "f" and not np.isfinite(a).all()
    ]
    if broken:
        raise TxcourseError(
            f"checkpoint {str(path)!r} holds non-finite weights (NaN or inf) in {len(broken)} array(s), "
            f"e.g. {broken[0]!r}: it cannot translate; use an earlier checkpoint or train again"
        )
    _check_pad_ids(path, meta)


def check_architecture(checkpoint: Checkpoint, found: dict[str, Any]) -> None:
    """Raise a one-line TxcourseError when the header's model kind or config contradicts the weights.

    ``found`` is what the names and shapes of the weights tell, read by the
    half that wrote them (``txcourse.<framework>.weights.architecture``: the
    names are its own); each half calls this through its ``check_weights``
    when it loads a checkpoint's weights. Checked where the weights determine
    it: the model kind; the vocabulary sizes, d_model, d_ff, the layer counts,
    norm_first and tie_embeddings of a Transformer; embedding_dim and units of
    a GRU model; and num_heads, which no weight shape tells: checkpoints
    written by a Trainer store it as the array ``arch/num_heads`` (older
    checkpoints without it are not checked). max_len is not stored (the
    positional-encoding table is a constant, not a weight), nor are dropout,
    pad_id, layer_norm_eps and fused: those come from the header alone.
    """
    found = dict(found)
    if found.get("kind") == "transformer" and _HEADS in checkpoint.arrays:
        found["num_heads"] = int(checkpoint.arrays[_HEADS])
    found = {
        key: (int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value)
        for key, value in found.items()
        if value is not None
    }
    if not found:
        return
    kind, config = checkpoint.kind, checkpoint.config
    weights_kind = found.pop("kind")
    if weights_kind != kind:
        raise TxcourseError(
            f"checkpoint {checkpoint.path!r}: its header says model kind {kind!r}, but its weights are "
            f"those of a {weights_kind!r} model (was the header edited?)"
        )
    differ = [
        f"{key}={config.get(key)!r} in the header, {found[key]!r} in the weights"
        for key in CONFIG_KEYS[kind]
        if key in found and config.get(key) != found[key]
    ]
    if differ:
        raise TxcourseError(
            f"checkpoint {checkpoint.path!r}: its header does not describe its weights: "
            + "; ".join(differ)
            + " (model.config must be the one the weights were trained with: "
            "was the header edited, or copied from another run?)"
        )


def _check_pad_ids(path: str | os.PathLike, meta: dict[str, Any]) -> None:
    """The header's pad_id is the id its tokenizers pad with: another id would mask a real word."""
    from txcourse.data.vocab import tokenizer_from_json

    pad_id = meta["model"]["config"].get("pad_id")
    tokenizers = meta.get("tokenizers")
    if pad_id is None or not isinstance(tokenizers, dict):
        return
    for side in ("src", "tgt"):
        if side not in tokenizers:
            continue
        tok = tokenizer_from_json(tokenizers[side], f"checkpoint {str(path)!r}: {side} tokenizer")
        if pad_id != tok.pad_id:
            word = tok.vocab[pad_id] if isinstance(pad_id, int) and 0 <= pad_id < tok.vocab_size else None
            raise TxcourseError(
                f"checkpoint {str(path)!r}: its header says pad_id={pad_id!r}, but its {side} tokenizer "
                f"pads with id {tok.pad_id}"
                + (f"; id {pad_id} is the word {word!r}, which would be masked" if word else "")
                + " (was the header edited?)"
            )


def check_resumable(path: str | os.PathLike, meta: dict[str, Any]) -> None:
    """Raise a one-line TxcourseError when the checkpoint holds weights only (see :func:`strip_training_state`)."""
    if meta.get("weights_only"):
        raise TxcourseError(
            f"checkpoint {str(path)!r} holds only the weights (its optimizer state was stripped): "
            f"it can be loaded for translation or evaluation, not resumed"
        )
    missing = [key for key in ("stream", "train_config") if key not in meta]
    if missing:
        raise TxcourseError(
            f"checkpoint {str(path)!r} cannot be resumed: its header lacks {missing} (the data "
            f"position and training settings a Trainer saves); it can be loaded for translation or "
            f"evaluation, not resumed"
        )


def strip_training_state(src: str | os.PathLike, dst: str | os.PathLike) -> dict[str, int]:
    """Copy checkpoint ``src`` to ``dst`` with the weights, config and tokenizers only.

    Drops what only ``--resume`` needs (optimizer moments, schedule,
    random-number-generator state): a third of the size, for a checkpoint
    that is shipped to be loaded (the book's ``book/data/*.npz``). The result
    loads with ``load_model`` in its framework; resuming it is refused.

    Returns:
        ``{"kept": arrays kept, "dropped": arrays dropped}``.

    Example:
        ``python -m txcourse.training.checkpoint strip runs/transformer/model.npz book/data/model.npz``
    """
    meta, arrays = read_checkpoint(src)
    kept = {name: a for name, a in arrays.items() if name.startswith(("model/", "arch/"))}
    if not any(name.startswith("model/") for name in kept):
        raise TxcourseError(f"checkpoint {str(src)!r} has no model/ arrays: nothing to keep")
    meta = {key: value for key, value in meta.items() if key not in ("format", "stream")}
    write_checkpoint(dst, {**meta, "weights_only": True}, kept)
    return {"kept": len(kept), "dropped": len(arrays) - len(kept)}


def _open(path: str | os.PathLike, with_arrays: bool) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {str(path)!r} does not exist")
    if not path.is_file():  # a folder, a FIFO, /dev/null: say what it is, not that it is missing
        what = "a folder" if path.is_dir() else "not a regular file (a device, a pipe or a socket)"
        raise TxcourseError(f"checkpoint {str(path)!r} is {what}; expected a .npz file written by 'txcourse train'")
    if not zipfile.is_zipfile(path):
        raise TxcourseError(f"{str(path)!r} is not a readable txcourse checkpoint (not an .npz zip file)")
    try:
        with np.load(path, allow_pickle=False) as data:
            if _META not in data.files:
                raise TxcourseError(f"{str(path)!r} is not a txcourse checkpoint (no header)")
            header = _array(path, data, _META)
            if header.dtype != np.uint8:
                raise TxcourseError(
                    f"{str(path)!r} is not a txcourse checkpoint: its header is a {header.dtype} "
                    f"array, expected the uint8 bytes of a JSON object"
                )
            meta = json.loads(header.tobytes().decode("utf-8"))
            arrays = {name: _array(path, data, name) for name in data.files if name != _META} if with_arrays else {}
    except (zipfile.BadZipFile, OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TxcourseError(f"{str(path)!r} is not a readable txcourse checkpoint: {err}") from None
    if not isinstance(meta, dict):
        raise TxcourseError(
            f"{str(path)!r} is not a txcourse checkpoint: its header is a JSON "
            f"{type(meta).__name__}, expected a JSON object with format {FORMAT!r}"
        )
    if meta.get("format") != FORMAT:
        raise TxcourseError(f"{str(path)!r} has format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta, arrays


def _array(path: Path, data: Any, name: str) -> np.ndarray:
    """One array of an open ``.npz``; an object (pickled) array is refused with the file's name, never unpickled."""
    try:
        return data[name]
    except ValueError as err:  # numpy: "Object arrays cannot be loaded when allow_pickle=False"
        raise TxcourseError(
            f"{str(path)!r} is not a txcourse checkpoint: array {name!r} cannot be read ({err}); a "
            f"checkpoint holds numeric arrays only"
        ) from None


def bytes_to_array(blob: bytes) -> np.ndarray:
    """Store opaque bytes (e.g. a framework's serialised optimizer state) as a uint8 array."""
    return np.frombuffer(blob, dtype=np.uint8).copy()


def array_to_bytes(array: np.ndarray) -> io.BytesIO:
    return io.BytesIO(array.tobytes())


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m txcourse.training.checkpoint strip SRC DST``: see :func:`strip_training_state`."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m txcourse.training.checkpoint", description="Tools for txcourse checkpoint files."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    strip = sub.add_parser("strip", help="copy a checkpoint with its weights only (no optimizer state)")
    strip.add_argument("src")
    strip.add_argument("dst")
    args = parser.parse_args(argv)
    try:
        counts = strip_training_state(args.src, args.dst)
    except OSError as err:
        if err.filename is None:  # ours: "checkpoint ... does not exist"
            print(f"txcourse.training.checkpoint: error: {err}", file=sys.stderr)
            return 2
        # the system's: the source was read, what failed is writing DST (a read-only or missing folder, a full disk)
        print(
            f"txcourse.training.checkpoint: error: cannot write DST {args.dst!r} ({err.strerror or err}); expected a file "
            f"name in a writable folder with room for the copy",
            file=sys.stderr,
        )
        return 2
    except TxcourseError as err:  # a bug (any other error) shows its traceback
        print(f"txcourse.training.checkpoint: error: {err}", file=sys.stderr)
        return 2
    size = os.path.getsize(args.dst)
    print(
        f"wrote {args.dst}: {counts['kept']} weight arrays kept, {counts['dropped']} training-state arrays "
        f"dropped, {size / 2**20:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
