"""The framework a command runs on: TensorFlow imported without its start-up log, a checkpoint's model loaded."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from txcourse.cli.checks import check_beam, check_device

__all__ = ["import_quietly", "load"]


def import_quietly(framework: str) -> None:
    """Import TensorFlow with its start-up log (absl's "All log messages before absl::InitializeLog()", oneDNN's
    notice, the CPU feature guard) kept off the terminal: those lines are written by C++ at import time, before
    ``TF_CPP_MIN_LOG_LEVEL`` is read, so the import runs with file descriptor 2 pointed at a temporary file. If the
    import fails, what it wrote is shown after all."""
    if framework != "tf" or "tensorflow" in sys.modules:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # later C++ notices (below warnings) stay off too
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        except BaseException:
            os.dup2(saved, 2)
            log.seek(0)
            sys.stderr.write(log.read().decode("utf-8", "replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def load(args: argparse.Namespace):
    """The model of ``--checkpoint``, checked against ``--framework``, ``--model``, ``--beam`` and ``--device``.

    Returns ``(fw, model, meta, src_tok, tgt_tok)``.
    """
    from txcourse.backends import backend, set_threads
    from txcourse.data.prepare import tokenizers_from_meta
    from txcourse.registry import FRAMEWORKS
    from txcourse.training.checkpoint import load_checkpoint, read_checkpoint_meta

    # the half to import: --framework, else the header's (read alone, without the weights)
    framework = args.framework or read_checkpoint_meta(args.checkpoint).get("framework")
    if framework in FRAMEWORKS:
        import_quietly(framework)
        if args.threads:
            set_threads(args.threads, [framework])  # before the framework runs anything
    checkpoint = load_checkpoint(args.checkpoint, framework, args.model)  # read and checked once
    src_tok, tgt_tok = tokenizers_from_meta(checkpoint.meta)
    check_beam(args.beam, tgt_tok)
    fw = backend(framework)
    check_device(fw, args.device)
    model, meta = fw.load_model(checkpoint, device=args.device)
    return fw, model, meta, src_tok, tgt_tok
