"""The checkpoint file, shared by both frameworks: one ``.npz`` zip, written atomically.

It holds a JSON header (``meta``: format, framework, model kind and
config, tokenizers, step, ...) and named NumPy arrays (weights, optimizer
state, random-number-generator state). The header can be read with NumPy
alone, so the command line can tell a PyTorch checkpoint from a TensorFlow
one, or a Transformer from a GRU, without importing either framework.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any, Optional

import numpy as np

from txcourse.training import atomic_write

__all__ = ["FORMAT", "write_checkpoint", "read_checkpoint", "read_checkpoint_meta", "check_checkpoint",
           "check_resumable", "strip_training_state"]

FORMAT = "txcourse-checkpoint-1"
_META = "__meta__"


def write_checkpoint(path: str | os.PathLike, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write ``meta`` and ``arrays`` to ``path`` (temporary file, then rename)."""
    if _META in arrays:
        raise ValueError(f"array name {_META!r} is reserved")
    header = np.frombuffer(json.dumps({"format": FORMAT, **meta}, ensure_ascii=False).encode("utf-8"), np.uint8)
    atomic_write(path, lambda f: np.savez(f, **{_META: header}, **arrays))


def read_checkpoint_meta(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON header of a checkpoint. Raises FileNotFoundError or ValueError (not a checkpoint)."""
    meta, _ = _open(path, with_arrays=False)
    return meta


def read_checkpoint(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and every array of a checkpoint."""
    return _open(path, with_arrays=True)


def check_checkpoint(path: str | os.PathLike, meta: dict[str, Any], framework: str,
                     model_kind: Optional[str] = None) -> None:
    """Raise a one-line ValueError when the checkpoint is of another framework or model kind."""
    if meta.get("framework") != framework:
        raise ValueError(f"checkpoint {str(path)!r} was written by the {meta.get('framework')!r} half of "
                         f"txcourse, not {framework!r}: use --framework {meta.get('framework')} (or convert "
                         f"the weights with txcourse.convert)")
    if model_kind is not None and meta.get("model", {}).get("kind") != model_kind:
        raise ValueError(f"checkpoint {str(path)!r} holds a {meta.get('model', {}).get('kind')!r} model, not "
                         f"{model_kind!r}")


def check_resumable(path: str | os.PathLike, meta: dict[str, Any]) -> None:
    """Raise a one-line ValueError when the checkpoint holds weights only (see :func:`strip_training_state`)."""
    if meta.get("weights_only"):
        raise ValueError(f"checkpoint {str(path)!r} holds only the weights (its optimizer state was stripped): "
                         f"it can be loaded for translation or evaluation, not resumed")


def strip_training_state(src: str | os.PathLike, dst: str | os.PathLike) -> dict[str, int]:
    """Copy checkpoint ``src`` to ``dst`` with the weights, config and tokenizers only.

    Drops what only ``--resume`` needs (optimizer moments, schedule,
    random-number-generator state): a third of the size, for a checkpoint
    that is shipped to be loaded (the book's ``book/data/*.npz``). The result
    loads with ``load_model`` in its framework; resuming it is refused.

    Returns:
        ``{"kept": arrays kept, "dropped": arrays dropped}``.

    Example:
        ``python -m txcourse.checkpoint strip runs/transformer/model.npz book/data/model.npz``
    """
    meta, arrays = read_checkpoint(src)
    kept = {name: a for name, a in arrays.items() if name.startswith("model/")}
    if not kept:
        raise ValueError(f"checkpoint {str(src)!r} has no model/ arrays: nothing to keep")
    meta = {key: value for key, value in meta.items() if key not in ("format", "stream")}
    write_checkpoint(dst, {**meta, "weights_only": True}, kept)
    return {"kept": len(kept), "dropped": len(arrays) - len(kept)}


def _open(path: str | os.PathLike, with_arrays: bool) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {str(path)!r} does not exist")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{str(path)!r} is not a readable txcourse checkpoint (not an .npz zip file)")
    try:
        with np.load(path, allow_pickle=False) as data:
            if _META not in data.files:
                raise ValueError(f"{str(path)!r} is not a txcourse checkpoint (no header)")
            meta = json.loads(data[_META].tobytes().decode("utf-8"))
            arrays = {name: data[name] for name in data.files if name != _META} if with_arrays else {}
    except (zipfile.BadZipFile, OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{str(path)!r} is not a readable txcourse checkpoint: {err}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{str(path)!r} has format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta, arrays


def bytes_to_array(blob: bytes) -> np.ndarray:
    """Store opaque bytes (e.g. a framework's serialised optimizer state) as a uint8 array."""
    return np.frombuffer(blob, dtype=np.uint8).copy()


def array_to_bytes(array: np.ndarray) -> io.BytesIO:
    return io.BytesIO(array.tobytes())


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m txcourse.checkpoint strip SRC DST``: see :func:`strip_training_state`."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m txcourse.checkpoint",
                                     description="Tools for txcourse checkpoint files.")
    sub = parser.add_subparsers(dest="command", required=True)
    strip = sub.add_parser("strip", help="copy a checkpoint with its weights only (no optimizer state)")
    strip.add_argument("src")
    strip.add_argument("dst")
    args = parser.parse_args(argv)
    try:
        counts = strip_training_state(args.src, args.dst)
    except (FileNotFoundError, ValueError) as err:
        print(f"txcourse.checkpoint: error: {err}", file=sys.stderr)
        return 2
    size = os.path.getsize(args.dst)
    print(f"wrote {args.dst}: {counts['kept']} weight arrays kept, {counts['dropped']} training-state arrays "
          f"dropped, {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
