"""Checks a command makes before it works: the run folder, the disk, the memory, the device, the beam.

Each raises :class:`~txcourse.cli.options.OptionError` naming the option, what it got and what was expected,
before anything is built or trained.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from txcourse.cli.options import OptionError
from txcourse.errors import TxcourseError

__all__ = [
    "check_beam",
    "check_device",
    "check_run_folder",
    "check_writable",
    "run_folder_lock",
    "parameter_count",
    "check_model_fits",
    "check_can_create",
    "check_free_space",
    "check_json_target",
]


def check_beam(beam: int, tgt_tok: Any) -> None:
    """More hypotheses than target tokens cannot differ; a huge beam would only exhaust memory."""
    if beam > tgt_tok.vocab_size:
        raise OptionError(
            f"--beam {beam}: expected at most the target vocabulary size of the checkpoint "
            f"({tgt_tok.vocab_size} tokens); beams of 4-10 are usual",
            "--beam",
        )


def check_device(fw: Any, device: str) -> None:
    """``--device`` names a device the framework sees here."""
    try:
        fw.resolve_device(device)
    except TxcourseError as err:  # the halves' resolve_device: an unknown or absent device
        raise OptionError(f"--device {device}: {err}", "--device") from None


def check_run_folder(out: Path, checkpoint: Path, args: argparse.Namespace) -> None:
    """Before anything is built: the folder can hold a run, and no checkpoint is replaced unless told."""
    if args.resume and args.overwrite:
        raise OptionError(
            "--resume and --overwrite exclude each other: --resume continues the checkpoint in "
            "--out, --overwrite replaces it; pass one of them",
            "--resume",
        )
    if args.override and not args.resume:
        raise OptionError(
            "--override only applies with --resume (it lets a resumed run change its settings)", "--override"
        )
    if out.exists() and not out.is_dir():
        raise OptionError(
            f"--out {str(out)!r} is a file, expected a run folder (a directory to write model.npz "
            f"and history.jsonl into): choose another --out",
            "--out",
        )
    for path in (checkpoint, out / "history.jsonl"):
        if path.is_dir():
            raise OptionError(
                f"--out {str(out)!r}: {str(path)!r} is a folder, expected a file (or nothing) there: "
                f"remove it or choose another --out",
                "--out",
            )
    if args.resume and not checkpoint.is_file():
        raise FileNotFoundError(
            f"--resume: no checkpoint {str(checkpoint)!r} to resume from; drop --resume to start a new run"
        )
    if checkpoint.is_file() and not (args.resume or args.overwrite):
        raise OptionError(
            f"--out {str(out)!r} already holds a checkpoint ({str(checkpoint)!r}): pass --resume to "
            f"continue it, --overwrite to replace it (and its history), or choose another --out",
            "--out",
        )


def check_writable(out: Path) -> None:
    """Create the run folder and write a file in it, so a read-only folder fails before the first step."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise OptionError(
            f"--out {str(out)!r} is not a writable folder ({err.strerror or err}): choose another --out", "--out"
        ) from None


@contextlib.contextmanager
def run_folder_lock(out: Path):
    """One training per run folder at a time: an exclusive lock on ``OUT/.lock``, held while training.

    A second ``txcourse train`` into the same folder is refused with the holder named (its pid and command),
    instead of both writing one checkpoint and interleaving one history. The lock is the kernel's (flock):
    it goes with the process, so a killed run leaves no stale lock behind.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock; runs are not guarded there
        yield
        return
    path = out / ".lock"
    handle = open(path, "a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise OptionError(
                f"--out {str(out)!r} is in use by another training ({holder}): wait for it to end, "
                f"or choose another --out",
                "--out",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(
            f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}: "
            f"{' '.join(sys.argv[:1] + sys.argv[1:])[:200]}\n"
        )
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock


def parameter_count(kind: str, config: Any) -> int:
    """The model's number of parameters, from its config object (no framework needed)."""
    if kind == "transformer":
        from txcourse.evaluation.accounting import count_parameters

        return count_parameters(config).total
    e, u, vs, vt = config.embedding_dim, config.units, config.src_vocab_size, config.tgt_vocab_size
    gru = lambda inputs: 3 * (inputs * u + u * u + 2 * u)  # noqa: E731 - three gates, two biases each
    return (vs + vt) * e + gru(e) + gru(e + u) + (u + e) * vt + vt + 2 * u * u  # generous for either GRU model


def available_memory() -> Optional[int]:
    """Bytes of memory available to a new allocation (Linux: MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_model_fits(kind: str, config: Any, settings: Sequence[tuple[str, Any]]) -> None:
    """A model too large for this machine fails here, naming --set, not in an allocation inside the framework.

    Training holds four float32 copies of every parameter (the weights, their gradients and Adam's two
    moments), so it needs at least 16 bytes per parameter before a single activation.
    """
    count = parameter_count(kind, config)
    needed, available = 16 * count, available_memory()
    if available is not None and needed > available:
        given = (
            "--set " + " ".join(f"{key}={value}" for key, value in dict(settings).items())
            if settings
            else "the default model"
        )
        raise OptionError(
            f"{given}: the {kind} model would have {count:,} parameters and training needs at least "
            f"{needed / 2**30:,.1f} GiB (weights, gradients and Adam's two moments in float32), but "
            f"{available / 2**30:,.1f} GiB of memory is available: choose a smaller model",
            "--set",
        )


def check_can_create(out: Path) -> None:
    """``out`` is, or can become, a folder we may write in; checked without creating anything."""
    if out.exists() and not out.is_dir():
        raise OptionError(
            f"--out {str(out)!r} is a file, expected a folder to write into: choose another --out", "--out"
        )
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise OptionError(
            f"--out {str(out)!r}: {str(existing)!r} is a file, so no folder can be made there: choose another --out",
            "--out",
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OptionError(
            f"--out {str(out)!r} is not a writable folder ({str(existing)!r} may not be written): choose another --out",
            "--out",
        )


def check_free_space(out: Path, parameters: int) -> None:
    """Room for the checkpoint before the first step, not a traceback at the first save after hours of training.

    A checkpoint holds the weights and Adam's two moments (12 bytes per parameter in float32); it is written to
    a temporary file beside the old one and renamed, so twice that must fit, plus a MiB for the header and history.
    """
    import shutil

    needed, free = 2 * 12 * parameters + 2**20, shutil.disk_usage(out).free
    if free < needed:
        raise OptionError(
            f"--out {str(out)!r}: a checkpoint of this model needs about {needed / 2**20:,.1f} MiB "
            f"(written beside the previous one), and its disk has {free / 2**20:,.1f} MiB free: free "
            f"space or choose another --out",
            "--out",
        )


def check_json_target(path: Path) -> None:
    """``--json`` names a file that can be written, checked before the evaluation runs, not after it."""
    parent = path.parent
    got = (
        "a folder"
        if path.is_dir()
        else f"a path whose folder {str(parent)!r} is a file"
        if parent.exists() and not parent.is_dir()
        else f"a path whose folder {str(parent)!r} does not exist"
        if not parent.exists()
        else None
    )
    if got is None and not os.access(parent, os.W_OK | os.X_OK):
        got = f"a path whose folder {str(parent)!r} is not writable"
    if got is None and path.exists() and not os.access(path, os.W_OK):
        got = "a file that is not writable"
    if got is not None:
        raise OptionError(
            f"--json {str(path)!r}: expected the name of a file to write the scores to, in an "
            f"existing, writable folder; got {got}: use for example --json scores.json",
            "--json",
        )
