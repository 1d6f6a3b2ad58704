"""The framework a command runs on: TensorFlow imported without its start-up log, a checkpoint's model loaded
(and the options that choose it, which ``translate`` and ``evaluate`` share)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

from txcourse.cli.checks import check_beam, check_device
from txcourse.cli.options import MODELS, count, device_name
from txcourse.errors import TxcourseError
from txcourse.registry import FRAMEWORKS

__all__ = ["add_checkpoint_options", "import_quietly", "load", "reading_checkpoint"]


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


@contextlib.contextmanager
def reading_checkpoint():
    """A checkpoint refused by txcourse.training.checkpoint is the user's mistake, named ``--checkpoint``.

    Only around that module's readers (``read_checkpoint_meta``, ``load_checkpoint``), which still refuse a bad
    file with a bare ``ValueError``; once they raise :class:`~txcourse.errors.TxcourseError` this passes it on.
    """
    try:
        yield
    except TxcourseError:
        raise
    except ValueError as err:
        raise TxcourseError(str(err), "--checkpoint") from err


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
    from txcourse.data.prepare import tokenizers_from_meta
    from txcourse.registry import backend, set_threads
    from txcourse.training.checkpoint import load_checkpoint, read_checkpoint_meta

    # the half to import: --framework, else the header's (read alone, without the weights)
    with reading_checkpoint():
        framework = args.framework or read_checkpoint_meta(args.checkpoint).get("framework")
    if framework in FRAMEWORKS:
        import_quietly(framework)
        if args.threads:
            set_threads(args.threads, [framework])  # before the framework runs anything
    with reading_checkpoint():
        checkpoint = load_checkpoint(args.checkpoint, framework, args.model)  # read and checked once
    src_tok, tgt_tok = tokenizers_from_meta(checkpoint.meta)
    check_beam(args.beam, tgt_tok)
    fw = backend(framework)
    check_device(fw, args.device)
    model, meta = fw.load_model(checkpoint, device=args.device)
    return fw, model, meta, src_tok, tgt_tok
