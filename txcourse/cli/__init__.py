"""The command line: ``txcourse train | translate | evaluate | export | figures | grade`` (also ``python -m txcourse``).

Every mistake of the user's (unknown task, missing checkpoint, a checkpoint
of the other framework or model, a bad setting, a GPU that is not there, a
diverging run: a :class:`~txcourse.errors.TxcourseError` or an ``OSError``)
prints one line ``txcourse: error: ...`` naming the option, what it got and
what it expected, and exits with status 2, without a traceback (``--debug``
shows it). Any other exception is a bug in txcourse: its traceback is printed
with a line saying so and where to report it, exit status 70 (EX_SOFTWARE).

``train`` keeps work: it refuses to replace a checkpoint unless told
(``--resume``, ``--overwrite``), and on SIGINT (Ctrl-C) or SIGTERM it saves
a checkpoint at the current step and exits with status 128 + the signal
number (130, 143).

Data-parallel training (book: appendix "Scaling up"): PyTorch under
``torchrun --nproc-per-node N -m txcourse train ...``; TensorFlow with
``--replicas N`` (MirroredStrategy over N GPUs, or N logical CPU devices
with ``--device cpu``) or across workers described by ``TF_CONFIG``
(MultiWorkerMirroredStrategy). ``--batch-size`` is the global batch; only
the first process writes the checkpoint, history and messages.

The modules, by role:

* this one: the parser (:func:`build_parser`, each command module adding its
  own options with its ``add_arguments``) and :func:`main`, which runs a
  command and prints its error;
* ``options``: the options' types, each refusing a bad value where it is
  parsed, :class:`~txcourse.cli.options.OptionError`, and the parser class
  that prints argparse's own errors as one line
  (:class:`~txcourse.cli.options.OneLineParser`);
* ``settings``: the task, TrainConfig and model config built from the
  options, a library error named by the option of its field;
* ``checks``: the run folder, disk, memory, device and beam checks;
* ``frameworks``: a checkpoint's model started in three phases (the
  checkpoint read once, its framework started: TensorFlow imported quietly,
  ``--threads``; the model built), and the options that choose it;
* ``train``, ``translate``, ``evaluate``, ``export``, ``figures``, ``grade``: one
  command each (figures, grading and export code is imported inside its command only);
* ``errors``: which errors are the user's, the one line printed, and the
  report of a bug.
"""

from __future__ import annotations

import argparse
import traceback
from collections.abc import Sequence
from typing import Optional

from txcourse import __version__
from txcourse.cli import evaluate, export, figures, grade, train, translate
from txcourse.cli.errors import USER_ERRORS, error_line, report_bug, silence_stdout
from txcourse.cli.options import OneLineParser

__all__ = ["main", "build_parser"]

COMMANDS = {
    "train": train.train_command,
    "translate": translate.translate_command,
    "evaluate": evaluate.evaluate_command,
    "export": export.export_command,
    "figures": figures.figures_command,
    "grade": grade.grade_command,
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; its exit status (2: the user's mistake, 70: a bug in txcourse, see the module's docstring)."""
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
    except USER_ERRORS as err:
        if args.debug:
            traceback.print_exc()
        parser.exit(2, f"txcourse: error: {error_line(err)}\n")
    except Exception as err:  # anything else is a bug in txcourse: never shown as the user's mistake
        return report_bug(err)
    return 0  # pragma: no cover


DEBUG_HELP = "show the traceback of an error too (a bug in txcourse always shows it)"


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``txcourse``: each command module adds its subcommand and options (``add_arguments``)."""
    parser = OneLineParser(
        prog="txcourse",
        description="Train, run, evaluate and export the course's models; draw the book's figures; grade lab submissions.",
    )
    parser.add_argument("--version", action="version", version=f"txcourse {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (train, translate, evaluate, export, figures, grade):
        command = module.add_arguments(sub)
        # after the command too (`txcourse train --debug`); SUPPRESS keeps a `txcourse --debug train` given before it
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    return parser
