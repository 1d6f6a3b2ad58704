"""``txcourse export``: write a Transformer checkpoint as an inference engine's model folder (EXPORT_EPILOG)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from txcourse.cli.frameworks import import_quietly
from txcourse.cli.options import folder

__all__ = ["add_arguments", "export_command", "ENGINES", "EXPORT_EPILOG"]

ENGINES = ("ctranslate2",)  # --to

EXPORT_EPILOG = """\
ctranslate2: the folder holds CTranslate2's model.bin, config.json and vocabularies
(float32 weights; load them as int8 with compute_type="int8"), and txcourse.json,
the checkpoint's model config, task and tokenizers. `txcourse translate
--checkpoint DIR` and `txcourse evaluate --checkpoint DIR` run it as they run the
checkpoint: the same input handling and output, decoded by CTranslate2 (greedy
outputs equal txcourse's). Needs the deploy extra: pip install 'txcourse[deploy]'.

Transformers of either framework export with every position scheme but ALiBi
(sinusoidal, learned, rope), grouped-query attention, pre- or post-LN, tied or
untied output; ALiBi (txcourse adds it in the encoder too, CTranslate2 in the
decoder only) and the GRU models (bahdanau, seq2seq) are refused.
"""


def add_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``txcourse export`` and its options to the ``txcourse`` parser's subcommands."""
    p = subparsers.add_parser(
        "export",
        help="write a Transformer checkpoint as an inference engine's model folder (CTranslate2)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXPORT_EPILOG,
    )
    p.add_argument("--to", choices=ENGINES, required=True, help="the engine")
    p.add_argument("--checkpoint", type=Path, required=True, help="a Transformer checkpoint (.npz), torch or tf")
    p.add_argument("--out", type=folder, required=True, help="a new or empty folder")
    p.add_argument("--overwrite", action="store_true", help="replace a folder txcourse export wrote before")
    return p


def export_command(args: argparse.Namespace) -> int:
    """Export ``--checkpoint`` to ``--out``; print what was written; exit status 0."""
    from txcourse.training.checkpoint import read_checkpoint_meta

    meta = read_checkpoint_meta(args.checkpoint)
    import_quietly(meta.get("framework", ""))  # a TensorFlow checkpoint's weights are read through its half
    from txcourse.deploy.ctranslate2 import export_ctranslate2

    out = export_ctranslate2(args.checkpoint, args.out, overwrite=args.overwrite)
    size = sum(f.stat().st_size for f in out.iterdir()) / 2**20
    print(
        f"wrote {out}: CTranslate2 model ({size:.1f} MiB) and txcourse.json; try: txcourse translate --checkpoint {out}"
    )
    return 0
