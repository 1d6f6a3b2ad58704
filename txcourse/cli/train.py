"""``txcourse train``: check the options and the run folder, build the model, train it, keep the checkpoint.

``train`` keeps work: it refuses to replace a checkpoint unless told (``--resume``, ``--overwrite``), and on SIGINT
(Ctrl-C) or SIGTERM it saves a checkpoint at the current step and exits with status 128 + the signal number.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from txcourse.cli.checks import (
    check_device,
    check_free_space,
    check_model_fits,
    check_run_folder,
    check_writable,
    parameter_count,
    run_folder_lock,
)
from txcourse.cli.frameworks import start_framework
from txcourse.cli.options import MODELS, OptionError, count, device_name, folder, number, setting
from txcourse.cli.settings import (
    check_model_config,
    check_same_settings,
    model_config,
    prepare,
    train_config,
    valid_pairs,
)
from txcourse.cli.stopping import kept_note, stop_on_signals
from txcourse.data.tasks import TASKS
from txcourse.errors import TxcourseError
from txcourse.registry import FRAMEWORKS, Backend

__all__ = ["add_arguments", "train_command"]


def add_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``txcourse train`` and its options to the ``txcourse`` parser's subcommands."""
    train = subparsers.add_parser("train", help="train a model on a generated task and write a checkpoint")
    train.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    train.add_argument("--model", choices=MODELS, default="transformer")
    train.add_argument("--task", default="numbers", help=f"one of {sorted(TASKS)}")
    train.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="PATH",
        help="--task file: the tab-separated file to train on, source<TAB>target[<TAB>anything] lines "
        "(an Anki export too); its options are --task-arg fractions=(0.8,0.1,0.1) seed=0 tokens=bpe|char "
        "vocab_size=8000 shared_vocab=True",
    )
    train.add_argument(
        "--task-arg",
        type=setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="task option, e.g. target_lang='es' or sizes=(5000,500,500)",
    )
    train.add_argument(
        "--set",
        type=setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="model setting, e.g. d_model=256 num_heads=8 (TransformerConfig fields)",
    )
    _add_schedule_arguments(train)
    _add_run_folder_arguments(train)
    return train


def _add_schedule_arguments(train: argparse.ArgumentParser) -> None:
    """How long and how to train: the TrainConfig options (TRAIN_OPTIONS), the device and the seed."""
    train.add_argument("--device", type=device_name, default="auto", help="auto, cpu, cuda, cuda:i or mps")
    train.add_argument("--steps", type=count(1), default=2000)
    train.add_argument("--max-seconds", type=number(0), default=None, help="stop training after this long")
    train.add_argument("--batch-size", type=count(1), default=64)
    train.add_argument("--warmup", type=count(1), default=400, help="warm-up steps of the schedule, Eq. (3)")
    train.add_argument(
        "--cooldown",
        type=count(0),
        default=None,
        metavar="N",
        help="the last N steps scale the rate linearly down towards 0, so the final weights are not "
        "those of one noisy step (default: 30%% of --steps; 0: Eq. (3) alone)",
    )
    train.add_argument(
        "--lr-factor", type=number(0), default=0.5, help="scales Eq. (3) (0.5: peak 2.2e-3 at d_model 128)"
    )
    train.add_argument(
        "--label-smoothing",
        type=number(0, 1, high_open=True),
        default=0.1,
        help="epsilon_ls of Sec. 5.4, in [0, 1): 1 would spread every target uniformly over the "
        "vocabulary and teach nothing (default 0.1)",
    )
    train.add_argument("--seed", type=count(0), default=0)
    train.add_argument("--log-every", type=count(1), default=50)
    train.add_argument(
        "--valid-pairs",
        type=count(0),
        default=None,
        metavar="N",
        help="score the first N pairs of the task's validation split at every logged step "
        "(teacher-forced, dropout off: valid_loss and valid_accuracy in the history; "
        "default: the whole split; 0: none)",
    )
    train.add_argument(
        "--checkpoint-every",
        type=count(0),
        default=0,
        help="steps between checkpoints (0: at the end, and when stopped by Ctrl-C or SIGTERM)",
    )


def _add_run_folder_arguments(train: argparse.ArgumentParser) -> None:
    """Where the run is kept (--out, --resume, --overwrite, --override) and what it runs on (--replicas ...)."""
    train.add_argument("--out", type=folder, default=None, help="run folder (default runs/TASK-MODEL-FRAMEWORK)")
    train.add_argument("--resume", action="store_true", help="continue from OUT/model.npz")
    train.add_argument("--overwrite", action="store_true", help="replace the checkpoint (and history) in OUT")
    train.add_argument(
        "--override",
        action="store_true",
        help="with --resume: continue with settings other than "
        "the checkpoint's (batch size, seed, learning rate, model, task ...)",
    )
    train.add_argument(
        "--replicas",
        type=count(1),
        default=1,
        help="TensorFlow: data-parallel over this many "
        "devices of this machine (MirroredStrategy: GPUs, or logical CPU devices with --device cpu); "
        "PyTorch: start 'torchrun --nproc-per-node N -m txcourse train ...' instead; --batch-size "
        "stays the global batch",
    )
    train.add_argument(
        "--threads",
        type=count(1),
        default=None,
        help="CPU threads for the framework (default: its own choice, usually one per core)",
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")


def train_command(args: argparse.Namespace) -> int:
    from txcourse.training.checkpoint import load_checkpoint

    if args.task not in TASKS:
        raise OptionError(f"unknown task {args.task!r}; choose one of {sorted(TASKS)}", "--task")
    out = args.out or Path("runs") / f"{args.task}-{args.model}-{args.framework}"
    checkpoint = out / "model.npz"
    check_run_folder(out, checkpoint, args)
    config = train_config(args)
    prepared = prepare(args)
    model = model_config(args.model, prepared, args.set)  # built and checked once; an object from here on
    check_model_config(model, prepared)
    check_model_fits(args.model, model, args.set)
    task = {"name": args.task, "kwargs": prepared.task_kwargs}
    resumed = None
    if args.resume:  # read and checked once (header, framework, kind, resumable); the Trainer loads it (weights)
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
            check_same_settings(meta, config, model, task, checkpoint)
    fw = start_framework(args.framework, args.threads)  # quiet import, --threads before the framework runs anything
    check_device(fw, args.device)
    replicas = fw.data_parallel(args.device, args.replicas)  # before TensorFlow initialises its devices
    try:
        return _train_replicas(_Run(args, fw, replicas, config, model, prepared, task, out, checkpoint, resumed))
    finally:
        fw.end_data_parallel()


@dataclass(frozen=True)
class _Run:
    """What one ``txcourse train`` run is made of, checked by :func:`train_command` before anything trains."""

    args: argparse.Namespace
    fw: Backend
    replicas: Any  # txcourse.training.distributed.Replicas
    config: Any  # TrainConfig
    model_config: Any  # the TransformerConfig or Seq2SeqConfig the options built
    prepared: Any  # txcourse.data.prepare.Prepared
    task: dict[str, Any]
    out: Path
    checkpoint: Path
    resumed: Any = None  # the Checkpoint of --resume, read and checked once


def _train_replicas(run: _Run) -> int:
    """The training part of :func:`train_command`, in every process of a data-parallel run (one writes)."""
    from txcourse.training.distributed import check_divisible

    try:
        check_divisible(run.config.batch_size, run.replicas.count)
    except TxcourseError as err:  # its one refusal (TrainConfig.batch_size), named by its option
        raise OptionError(str(err), "--batch-size") from None
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
    valid = valid_pairs(prepared, args.valid_pairs)
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
        with stop_on_signals(trainer) as received:
            records = trainer.fit(checkpoint_path=str(checkpoint))
    except FloatingPointError as err:
        raise TxcourseError(f"{err}; {kept_note(checkpoint, 'the last good checkpoint')}") from None
    except KeyboardInterrupt:  # a second Ctrl-C: stopped inside a step, whose weights may be half updated
        if replicas.writer:
            print(
                f"txcourse: interrupted a second time, inside step {trainer.step + 1}: no checkpoint of it was "
                f"saved; {kept_note(checkpoint, 'the last checkpoint')}",
                file=sys.stderr,
            )
        return 130
    except OSError as err:  # a full disk or a folder made read-only while training
        raise OptionError(
            f"could not write to --out {str(out)!r} at step {trainer.step} ({err.strerror or err}): "
            f"free space or fix the folder, then resume; "
            f"{kept_note(checkpoint, 'the last checkpoint')}",
            "--out",
        ) from None
    return _report(run, trainer, records, received, time.perf_counter() - start)


def _report(run: _Run, trainer: Any, records: list[dict[str, Any]], received: list[int], seconds: float) -> int:
    """The exit status of a run that ended (stopped by a signal or done), and its one line from the writer."""
    args, checkpoint = run.args, run.checkpoint
    if not run.replicas.writer:
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
        f"{seconds:.0f} s: loss {last.get('loss', float('nan')):.4f}, "
        f"token accuracy {last.get('accuracy', float('nan')):.4f}; checkpoint {checkpoint}"
    )
    return 0
