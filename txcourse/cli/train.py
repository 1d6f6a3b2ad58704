"""``txcourse train``: check the options and the run folder, build the model, train it, keep the checkpoint.

``train`` keeps work: it refuses to replace a checkpoint unless told (``--resume``, ``--overwrite``), and on SIGINT
(Ctrl-C) or SIGTERM it saves a checkpoint at the current step and exits with status 128 + the signal number.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from txcourse.cli.checks import (
    check_device,
    check_free_space,
    check_model_fits,
    check_run_folder,
    check_writable,
    parameter_count,
    run_folder_lock,
)
from txcourse.cli.frameworks import import_quietly
from txcourse.cli.options import OptionError
from txcourse.cli.settings import check_model_config, check_same_settings, model_config, prepare, train_config
from txcourse.data.tasks import TASKS
from txcourse.registry import Backend

__all__ = ["train_command"]


def train_command(args: argparse.Namespace) -> int:
    from txcourse.backends import backend, set_threads
    from txcourse.training.checkpoint import load_checkpoint

    if args.task not in TASKS:
        raise OptionError(f"unknown task {args.task!r}; choose one of {sorted(TASKS)}", "--task")
    out = args.out or Path("runs") / f"{args.task}-{args.model}-{args.framework}"
    checkpoint = out / "model.npz"
    check_run_folder(out, checkpoint, args)
    config = train_config(args)
    prepared = prepare(args)
    config_dict = model_config(args.model, prepared, args.set)
    check_model_config(config_dict, prepared)
    check_model_fits(args.model, config_dict, args.set)
    task = {"name": args.task, "kwargs": prepared.task_kwargs}
    import_quietly(args.framework)
    resumed = None
    if args.resume:  # read and checked once (header, framework, kind, resumable, weights); the Trainer loads it
        resumed = load_checkpoint(checkpoint, args.framework, args.model, resumable=True)
        meta = resumed.meta
        if args.steps <= meta["step"]:
            raise OptionError(
                f"--steps {args.steps}: {str(checkpoint)!r} is already at step {meta['step']}, so "
                f"--resume would train nothing; give --steps above {meta['step']} (the total step "
                f"count, not the steps to add)",
                "--steps",
            )
        if not args.override:
            check_same_settings(meta, config, config_dict, task, checkpoint)
    if args.threads:
        set_threads(args.threads, [args.framework])  # before the framework runs anything
    fw = backend(args.framework)
    check_device(fw, args.device)
    replicas = fw.data_parallel(args.device, args.replicas)  # before TensorFlow initialises its devices
    try:
        return _train_replicas(_Run(args, fw, replicas, config, config_dict, prepared, task, out, checkpoint, resumed))
    finally:
        fw.end_data_parallel()


def _valid_pairs(prepared: Any, count: Optional[int]) -> Any:
    """The encoded validation pairs ``--valid-pairs`` asks for (None: none)."""
    from txcourse.data import encode_pairs

    available = len(prepared.splits.valid)
    if count is None:
        count = available
    elif count > available:
        raise OptionError(
            f"--valid-pairs is {count}, but the {prepared.task} task's validation split holds "
            f"{available} pairs; give at most {available} (0: no validation)",
            "--valid-pairs",
        )
    if count == 0:
        return None
    return encode_pairs(prepared.splits.valid[:count], prepared.src_tokenizer, prepared.tgt_tokenizer)


@dataclass(frozen=True)
class _Run:
    """What one ``txcourse train`` run is made of, checked by :func:`train_command` before anything trains."""

    args: argparse.Namespace
    fw: Backend
    replicas: Any  # txcourse.training.distributed.Replicas
    config: Any  # TrainConfig
    model_config: dict[str, Any]
    prepared: Any  # txcourse.data.prepare.Prepared
    task: dict[str, Any]
    out: Path
    checkpoint: Path
    resumed: Any = None  # the Checkpoint of --resume, read and checked once


def _train_replicas(run: _Run) -> int:
    """The training part of :func:`train_command`, in every process of a data-parallel run (one writes)."""
    from txcourse.training.distributed import check_divisible

    check_divisible(run.config.batch_size, run.replicas.count)
    check_writable(run.out)
    if run.replicas.writer:
        check_free_space(run.out, parameter_count(run.args.model, run.model_config))
    with run_folder_lock(run.out) if run.replicas.writer else contextlib.nullcontext():
        return _train_locked(run)


def _train_locked(run: _Run) -> int:
    """The run itself, with the run folder locked by the writing process."""
    from txcourse.training.files import remove_stale_temporaries

    args, fw, replicas, config, model_config = run.args, run.fw, run.replicas, run.config, run.model_config
    prepared, task, out, checkpoint, resumed = run.prepared, run.task, run.out, run.checkpoint, run.resumed
    if replicas.writer:
        for path in (checkpoint, out / "history.jsonl"):
            remove_stale_temporaries(path)
    fw.set_seed(args.seed)
    metadata = {
        "task": task,
        "tokenizers": {"src": prepared.src_tokenizer.to_json(), "tgt": prepared.tgt_tokenizer.to_json()},
    }
    valid = _valid_pairs(prepared, args.valid_pairs)
    with replicas.scope():  # TensorFlow: the model's variables are mirrored on every replica
        trainer = fw.Trainer(
            fw.build_model(args.model, model_config),
            args.model,
            model_config,
            prepared.train,
            config,
            history_path=str(out / "history.jsonl"),
            metadata=metadata,
            valid=valid,
        )
    if resumed is not None:
        trainer.load(resumed)
    if replicas.count > 1 and replicas.writer:
        print(f"txcourse: data-parallel: {replicas.describe()}, global batch {config.batch_size}", file=sys.stderr)
    start = time.perf_counter()
    try:
        with _stop_on_signals(trainer) as received:
            records = trainer.fit(checkpoint_path=str(checkpoint))
    except FloatingPointError as err:
        raise ValueError(f"{err}; {_kept(checkpoint, 'the last good checkpoint')}") from None
    except KeyboardInterrupt:  # a second Ctrl-C: stopped inside a step, whose weights may be half updated
        if replicas.writer:
            print(
                f"txcourse: interrupted a second time, inside step {trainer.step + 1}: no checkpoint of it was "
                f"saved; {_kept(checkpoint, 'the last checkpoint')}",
                file=sys.stderr,
            )
        return 130
    except OSError as err:  # a full disk or a folder made read-only while training
        raise OptionError(
            f"could not write to --out {str(out)!r} at step {trainer.step} ({err.strerror or err}): "
            f"free space or fix the folder, then resume; "
            f"{_kept(checkpoint, 'the last checkpoint')}",
            "--out",
        ) from None
    if not replicas.writer:
        return 128 + received[0] if received else 0
    if received:
        print(
            f"txcourse: stopped by {signal.Signals(received[0]).name} at step {trainer.step}: saved checkpoint "
            f"{checkpoint}; add --resume to the same command to continue",
            file=sys.stderr,
        )
        return 128 + received[0]
    last = records[-1] if records else {}
    print(
        f"trained {args.model} ({args.framework}) on {args.task} to step {trainer.step} in "
        f"{time.perf_counter() - start:.0f} s: loss {last.get('loss', float('nan')):.4f}, "
        f"token accuracy {last.get('accuracy', float('nan')):.4f}; checkpoint {checkpoint}"
    )
    return 0


@contextlib.contextmanager
def _stop_on_signals(trainer: Any):
    """SIGINT and SIGTERM ask the trainer to stop after the current step (it then saves); a second one stops now."""
    received: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if received:
            raise KeyboardInterrupt
        received.append(signum)
        trainer.stop_requested = True

    if threading.current_thread() is not threading.main_thread():  # signal handlers: main thread only
        yield received
        return
    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _kept(checkpoint: Path, what: str) -> str:
    """What is on disk after a run that failed: '<what> 'PATH' (step N) is kept' or 'no checkpoint was written'."""
    from txcourse.training.checkpoint import read_checkpoint_meta

    try:
        return f"{what} {str(checkpoint)!r} (step {read_checkpoint_meta(checkpoint)['step']}) is kept"
    except (FileNotFoundError, ValueError):
        return "no checkpoint was written"
