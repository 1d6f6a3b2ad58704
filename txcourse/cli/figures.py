"""``txcourse figures``: draw every figure of the book into one folder (txcourse.course.figures, imported here only)."""

from __future__ import annotations

import argparse
import os
import time

from txcourse.cli.checks import check_can_create
from txcourse.cli.frameworks import import_quietly
from txcourse.cli.options import OptionError

__all__ = ["figures_command"]


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
