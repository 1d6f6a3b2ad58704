"""The command line: ``txcourse train | translate | evaluate | figures | grade`` (also ``python -m txcourse``).

Every expected failure (unknown task, missing checkpoint, a checkpoint of
the other framework or model, a bad setting, a GPU that is not there, a
diverging run) prints one line ``txcourse: error: ...`` naming the option,
what it got and what it expected, and exits with status 2, never a
traceback. ``train`` keeps work: it refuses to replace a checkpoint unless
told (``--resume``, ``--overwrite``), and on SIGINT (Ctrl-C) or SIGTERM it
saves a checkpoint at the current step and exits with status 128 + the
signal number (130, 143).

Data-parallel training (book: appendix "Scaling up"): PyTorch under
``torchrun --nproc-per-node N -m txcourse train ...``; TensorFlow with
``--replicas N`` (MirroredStrategy over N GPUs, or N logical CPU devices
with ``--device cpu``) or across workers described by ``TF_CONFIG``
(MultiWorkerMirroredStrategy). ``--batch-size`` is the global batch; only
the first process writes the checkpoint, history and messages.

The modules, by role:

* this one: the parser (:func:`build_parser`) and :func:`main`, which runs a
  command and prints its error;
* ``options``: the options' types, each refusing a bad value where it is
  parsed, and :class:`~txcourse.cli.options.OptionError`;
* ``settings``: the task, TrainConfig and model config built from the
  options, a library error named by the option of its field;
* ``checks``: the run folder, disk, memory, device and beam checks;
* ``frameworks``: TensorFlow imported quietly, a checkpoint's model loaded;
* ``train``, ``translate``, ``evaluate``, ``figures``, ``grade``: one command
  each (figures and grading code is imported inside its command only);
* ``errors``: which errors are the user's, and the one line printed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from txcourse import __version__
from txcourse.cli.errors import error_line, silence_stdout, user_errors
from txcourse.cli.evaluate import evaluate_command
from txcourse.cli.figures import figures_command
from txcourse.cli.grade import grade_command
from txcourse.cli.options import MODELS, OneLineParser, count, device_name, folder, number, setting
from txcourse.cli.train import train_command
from txcourse.cli.translate import TRANSLATE_EPILOG, translate_command
from txcourse.data.tasks import TASKS
from txcourse.registry import FRAMEWORKS

__all__ = ["main", "build_parser"]

COMMANDS = {
    "train": train_command,
    "translate": translate_command,
    "evaluate": evaluate_command,
    "figures": figures_command,
    "grade": grade_command,
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "grade":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest  # `txcourse grade`'s own arguments (txcourse.cli.grade)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        parser.exit(130, "txcourse: error: interrupted\n")
    except BrokenPipeError:  # `txcourse translate ... | head -1`: the reader left; stop quietly, as cat does
        silence_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for a killed pipe writer
    except user_errors() as err:
        parser.exit(2, f"txcourse: error: {error_line(err)}\n")
    return 0  # pragma: no cover


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="txcourse",
        description="Train, run and evaluate the course's models; draw the book's figures; grade lab submissions.",
    )
    parser.add_argument("--version", action="version", version=f"txcourse {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a model on a generated task and write a checkpoint")
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

    for name, text in (
        ("translate", "translate sentences with a trained checkpoint"),
        ("evaluate", "score a checkpoint on a split of its task"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--checkpoint", type=Path, required=True)
        p.add_argument("--framework", choices=FRAMEWORKS, default=None, help="must match the checkpoint")
        p.add_argument("--model", choices=MODELS, default=None, help="must match the checkpoint")
        p.add_argument("--device", type=device_name, default="cpu", help="auto, cpu, cuda, cuda:i or mps")
        p.add_argument(
            "--beam", type=count(1), default=1, help="beam size (1: greedy; at most the target vocabulary size)"
        )
        p.add_argument(
            "--threads",
            type=count(1),
            default=None,
            help="CPU threads for the framework (default: its own choice; 1 is fastest on a busy machine)",
        )
        if name == "translate":
            p.add_argument("text", nargs="*", help="sentences (default: one per line on standard input)")
            p.add_argument(
                "--strict",
                action="store_true",
                help="refuse (exit 2, translate nothing) if any "
                "sentence has words outside the source vocabulary, instead of warning",
            )
            p.add_argument(
                "--sample",
                action="store_true",
                help="draw every token from the model's distribution (see --temperature, --top-k, --top-p, --seed) "
                "instead of greedy decoding or beam search",
            )
            p.add_argument(
                "--temperature", type=number(0.0), default=None, help="--sample: divide the logits by T > 0 (1)"
            )
            p.add_argument("--top-k", type=count(1), default=None, help="--sample: keep the k most probable tokens")
            p.add_argument(
                "--top-p",
                type=number(0.0, 1.0, low_open=True),
                default=None,
                help="--sample: keep the most probable tokens that together reach p, in (0, 1] (nucleus)",
            )
            p.add_argument("--seed", type=count(0), default=None, help="--sample: the seed of the draws (0)")
            p.formatter_class = argparse.RawDescriptionHelpFormatter
            p.epilog = TRANSLATE_EPILOG
        else:
            p.add_argument("--split", choices=("train", "valid", "test"), default="test")
            p.add_argument("--limit", type=count(1), default=None, help="score only the first N pairs")
            p.add_argument("--json", type=Path, default=None, help="also write the scores here")
            p.add_argument(
                "--per-digit",
                type=count(0),
                default=200,
                metavar="N",
                help="numbers task: also score N fresh numbers of every digit count (default 200; 0: off)",
            )
            p.add_argument(
                "--per-phrasing",
                type=count(0),
                default=60,
                metavar="N",
                help="numbers task: also score N fresh numbers written each way people write them ('one "
                "hundred five', 'a thousand and one', 'twelve hundred' ...), as translate reads them "
                "(default 60; 0: off)",
            )

    figures = sub.add_parser(
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
    figures.add_argument("--no-progress", action="store_true", help="no progress bar")

    # The grading tool is instructor code: its options are parsed by txcourse.cli.grade, which imports it only
    # when `txcourse grade` runs (`txcourse grade --help` lists them).
    sub.add_parser(
        "grade",
        add_help=False,
        help="autograde a folder of lab submissions: a CSV of scores and HTML "
        "feedback (nbgrader); `txcourse grade --help` for its options",
    )
    return parser
