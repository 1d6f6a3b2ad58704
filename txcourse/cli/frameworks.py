"""The framework a command runs on: a checkpoint read once, its framework started (TensorFlow imported without its
start-up log, the threads set), its model built; and the options that choose it, which ``translate`` and ``evaluate``
share."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Optional

from txcourse.cli.checks import check_beam, check_device
from txcourse.cli.options import MODELS, count, device_name
from txcourse.registry import FRAMEWORKS, Backend

__all__ = ["add_checkpoint_options", "import_quietly", "start_framework", "start_model"]


def add_checkpoint_options(parser: argparse.ArgumentParser) -> None:
    """The options of a command that runs a checkpoint (translate, evaluate): which one, where, how to decode."""
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--framework", choices=FRAMEWORKS, default=None, help="must match the checkpoint")
    parser.add_argument("--model", choices=MODELS, default=None, help="must match the checkpoint")
    parser.add_argument("--device", type=device_name, default="cpu", help="auto, cpu, cuda, cuda:i or mps")
    parser.add_argument(
        "--beam", type=count(1), default=1, help="beam size (1: greedy; at most the target vocabulary size)"
    )
    parser.add_argument(
        "--threads",
        type=count(1),
        default=None,
        help="CPU threads for the framework (default: its own choice; 1 is fastest on a busy machine)",
    )


def import_quietly(framework: str) -> None:
    """Import TensorFlow with its start-up log (absl's "All log messages before absl::InitializeLog()", oneDNN's
    notice, the CPU feature guard) kept off the terminal: those lines are written by C++ at import time, before
    ``TF_CPP_MIN_LOG_LEVEL`` is read, so the import runs with file descriptor 2 pointed at a temporary file. If the
    import fails, what it wrote is shown after all.

    Its run-time C++ log stays off too: TensorFlow reads ``TF_CPP_MIN_LOG_LEVEL`` once, at its first log line,
    so it is set to 3 here, before TensorFlow loads (its own choice kept when the user set it). Level 3 drops
    INFO, WARNING and ERROR lines, such as ``E0000 ... oneDNN supports DT_INT32 only on platforms with AVX-512``,
    written when a model with grouped-query attention (``num_kv_heads``) first runs on a CPU without AVX-512 and
    harmless (TensorFlow falls back to its Eigen kernels); a failure still reaches the user as a Python exception,
    and a fatal C++ error is still printed."""
    if framework != "tf" or "tensorflow" in sys.modules:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # its C++ log lines at run time stay off as well
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


def start_framework(framework: str, threads: Optional[int]) -> Backend:
    """The half ``framework`` names, its framework imported quietly and limited to ``threads`` CPU threads
    (None: its default) before it runs anything."""
    from txcourse.backends import backend, set_threads

    import_quietly(framework)
    if threads:
        set_threads(threads, [framework])  # process-wide: the one place a command sets it (train, translate, evaluate)
    return backend(framework)


def start_model(args: argparse.Namespace):
    """The model of ``--checkpoint`` on its framework, started for this process, in three phases: read the
    checkpoint once (header and weights, checked against ``--framework`` and ``--model``, no framework imported),
    start its framework (:func:`start_framework`: ``--threads``), build the model (the half checks the weights
    against the header as it loads them). ``--beam`` and ``--device`` are checked on the way.

    A folder ``txcourse export`` wrote is loaded by its engine instead
    (:func:`txcourse.deploy.engine.load_exported`): the same five things, decoded by CTranslate2.

    Returns ``(fw, model, meta, src_tok, tgt_tok)``.
    """
    from txcourse.data.prepare import tokenizers_from_meta
    from txcourse.training.checkpoint import load_checkpoint

    if args.checkpoint.is_dir():
        from txcourse.deploy.engine import load_exported

        loaded = load_exported(args.checkpoint, args.framework, args.model, args.device, args.threads)
        check_beam(args.beam, loaded[-1])
        return loaded
    checkpoint = load_checkpoint(args.checkpoint, args.framework, args.model)  # framework None: the header's
    src_tok, tgt_tok = tokenizers_from_meta(checkpoint.meta)
    check_beam(args.beam, tgt_tok)
    fw = start_framework(checkpoint.framework, args.threads)
    check_device(fw, args.device)
    model, meta = fw.load_model(checkpoint, device=args.device)
    return fw, model, meta, src_tok, tgt_tok
