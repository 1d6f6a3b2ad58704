"""``txcourse figures``: draw every figure of the book into one folder (txcourse.course.figures, imported here only)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from txcourse.cli.checks import check_can_create
from txcourse.cli.frameworks import import_quietly
from txcourse.cli.options import OptionError, count, folder
from txcourse.registry import FRAMEWORKS

__all__ = ["add_arguments", "figures_command", "LANGUAGES"]

# the editions' languages, txcourse.notebook.plots.labels.LANGUAGES (not imported here: it loads matplotlib;
# tests/course/test_figures.py checks they are the same)
LANGUAGES = ("en", "ko")


def add_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``txcourse figures`` and its options to the ``txcourse`` parser's subcommands."""
    figures = subparsers.add_parser(
        "figures", help="draw every figure of the book, from fixed seeds, into one folder with a manifest.json"
    )
    figures.add_argument(
        "--out", type=folder, default=Path("_build/figures"), help="folder to write (default _build/figures)"
    )
    figures.add_argument(
        "--only",
        nargs="+",
        action="extend",
        default=[],
        metavar="NAME",
        help="only these figures (names or patterns such as 'week3_*'; see --list)",
    )
    figures.add_argument("--list", action="store_true", help="list the figures and their inputs, draw nothing")
    figures.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    figures.add_argument(
        "--strict",
        action="store_true",
        help="a missing input file is an error (default: skip that figure with a warning)",
    )
    figures.add_argument("--format", choices=("png", "svg", "pdf"), default="png")
    figures.add_argument("--dpi", type=count(10, 2000), default=150, help="resolution of PNG files (10-2000)")
    figures.add_argument(
        "--root",
        type=Path,
        default=None,
        help="folder the inputs (book/data/..., "
        "benchmarks/results/...) are read from (default: the current folder if it holds any, "
        "else the repository the package comes from)",
    )
    figures.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="en",
        help="the language of the figures' words (default en; ko: from locales/ko/LC_MESSAGES/figures.po)",
    )
    figures.add_argument("--no-progress", action="store_true", help="no progress bar")
    return figures


def figures_command(args: argparse.Namespace) -> int:
    import matplotlib

    from txcourse.course.figures import build_figures, format_recipe_list, select

    if args.list:
        print(format_recipe_list(args.root, select(args.only)))
        return 0
    check_can_create(args.out)
    matplotlib.use("Agg")  # headless: no window, whatever MPLBACKEND says
    if args.framework == "tf":  # TensorFlow's start-up logs, and oneDNN's reordered float sums, off
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
        import_quietly("tf")
    start = time.perf_counter()
    try:
        manifest = build_figures(
            args.out,
            args.only or None,
            root=args.root,
            framework=args.framework,
            fmt=args.format,
            dpi=args.dpi,
            strict=args.strict,
            progress=not args.no_progress,
            lang=args.lang,
        )
    except OSError as err:  # a full disk, or the folder made read-only while drawing
        if isinstance(err, FileNotFoundError) and str(args.out) not in str(err.filename or ""):
            raise  # a missing input (book/data/...): its own message
        raise OptionError(
            f"could not write the figures into --out {str(args.out)!r} ({err.strerror or err}): "
            f"free space or choose another --out",
            "--out",
        ) from None
    entries = manifest["figures"].values()
    written = sum(e["status"] == "written" for e in entries)
    skipped = [name for name, e in manifest["figures"].items() if e["status"] == "skipped"]
    print(
        f"wrote {written} figure(s) to {args.out} in {time.perf_counter() - start:.1f} s"
        + (f"; skipped {len(skipped)}: {', '.join(skipped)}" if skipped else "")
        + f"; manifest {args.out / 'manifest.json'}"
    )
    return 0
