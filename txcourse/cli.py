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
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import ast
import importlib
import json
import math
import os
import re
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from txcourse import __version__
from txcourse.data.english_numbers import NotANumber, canonical
from txcourse.data.tasks import TASKS
from txcourse.experiment import FRAMEWORKS
from txcourse.grading import DEFAULT_CELL_TIMEOUT, LABS

__all__ = ["main", "build_parser"]

MODELS = ("transformer", "bahdanau", "seq2seq")
COOLDOWN_FRACTION = 0.3  # default --cooldown, as a share of --steps


def _setting(text: str) -> tuple[str, Any]:
    """'d_model=256' -> ('d_model', 256); values are Python literals, else strings."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


TRANSLATE_EPILOG = """\
input: each sentence is normalised by the checkpoint's source tokenizer as in
training (numbers task: case, runs of spaces, commas and hyphens do not
matter). Line N is the Nth sentence, arguments or standard-input lines alike.
An empty or blank line is skipped with a note on stderr and never translated
("txcourse: skipped line 3: empty"), and so is a line longer than the model's
max_len tokens (--strict refuses it); if nothing remains, exit 2.

numbers task: each line must be one English number of the task's range, in any
usual phrasing ("one hundred five", "a thousand and one", "forty two", "twelve
hundred"); the model is given the phrasing it was trained on. Anything else
("one two three", "nineteen ninety-nine", "one million", "zebra") is skipped
with the reason (--strict refuses it), never translated. Other tasks: words outside
the source vocabulary are named on stderr ("txcourse: warning: line 2: 'zebra'
is not in the source vocabulary ...") and the line is marked; --strict refuses.

output: one line per translated sentence, tab-separated:
  SOURCE<TAB>TRANSLATION                       every word known
  SOURCE<TAB>TRANSLATION<TAB>?unknown: W1 W2   some words unknown (read as <unk>)
SOURCE is the sentence with its whitespace collapsed.
"""


def _count(minimum: int, maximum: Optional[int] = None):
    """An argparse type: an integer >= minimum (and <= maximum, when given)."""
    span = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {value}")
        return value
    return parse


def _number(low: float, high: float = math.inf, closed: bool = False, high_open: bool = False):
    """An argparse type: a finite float in (low, high), [low, high] when ``closed``, [low, high) when
    ``high_open``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        inside = (low <= value < high if high_open else low <= value <= high if closed else low < value < high)
        if not (inside and math.isfinite(value)):
            span = (f"in [{low:g}, {high:g})" if high_open else f"in [{low:g}, {high:g}]" if closed
                    else f"> {low:g}" if high == math.inf else f"in ({low:g}, {high:g})")
            raise argparse.ArgumentTypeError(f"expected a finite number {span}, got {text!r}")
        return value
    return parse


def _folder(text: str) -> Path:
    """An argparse type: a non-empty path (an empty one would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a folder name, got {text!r} (use '.' for the current folder)")
    return Path(text)


def _device_name(text: str) -> str:
    """An argparse type: auto, cpu, cuda, cuda:i or mps (whether that device exists is checked later)."""
    if text in ("auto", "cpu", "cuda", "mps") or (text.startswith("cuda:") and text[5:].isdigit()):
        return text
    raise argparse.ArgumentTypeError(f"expected auto, cpu, cuda, cuda:i or mps, got {text!r}")


class _Parser(argparse.ArgumentParser):
    """argparse's own errors (an unknown option, a bad value) as one line, like every other error."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"txcourse: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="txcourse", description="Train, run and evaluate the course's models; "
                                     "draw the book's figures; grade lab submissions.")
    parser.add_argument("--version", action="version", version=f"txcourse {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a model on a generated task and write a checkpoint")
    train.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    train.add_argument("--model", choices=MODELS, default="transformer")
    train.add_argument("--task", default="numbers", help=f"one of {sorted(TASKS)}")
    train.add_argument("--task-arg", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                       help="task option, e.g. target_lang='es' or sizes=(5000,500,500)")
    train.add_argument("--set", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                       help="model setting, e.g. d_model=256 num_heads=8 (TransformerConfig fields)")
    train.add_argument("--device", type=_device_name, default="auto", help="auto, cpu, cuda, cuda:i or mps")
    train.add_argument("--steps", type=_count(1), default=2000)
    train.add_argument("--max-seconds", type=_number(0), default=None, help="stop training after this long")
    train.add_argument("--batch-size", type=_count(1), default=64)
    train.add_argument("--warmup", type=_count(1), default=400, help="warm-up steps of the schedule, Eq. (3)")
    train.add_argument("--cooldown", type=_count(0), default=None, metavar="N",
                       help="the last N steps scale the rate linearly down towards 0, so the final weights are not "
                            "those of one noisy step (default: 30%% of --steps; 0: Eq. (3) alone)")
    train.add_argument("--lr-factor", type=_number(0), default=0.5,
                       help="scales Eq. (3) (0.5: peak 2.2e-3 at d_model 128)")
    train.add_argument("--label-smoothing", type=_number(0, 1, high_open=True), default=0.1,
                       help="epsilon_ls of Sec. 5.4, in [0, 1): 1 would spread every target uniformly over the "
                            "vocabulary and teach nothing (default 0.1)")
    train.add_argument("--seed", type=_count(0), default=0)
    train.add_argument("--log-every", type=_count(1), default=50)
    train.add_argument("--valid-pairs", type=_count(0), default=None, metavar="N",
                       help="score the first N pairs of the task's validation split at every logged step "
                            "(teacher-forced, dropout off: valid_loss and valid_accuracy in the history; "
                            "default: the whole split; 0: none)")
    train.add_argument("--checkpoint-every", type=_count(0), default=0, help="steps between checkpoints "
                       "(0: at the end, and when stopped by Ctrl-C or SIGTERM)")
    train.add_argument("--out", type=_folder, default=None, help="run folder (default runs/TASK-MODEL-FRAMEWORK)")
    train.add_argument("--resume", action="store_true", help="continue from OUT/model.npz")
    train.add_argument("--overwrite", action="store_true", help="replace the checkpoint (and history) in OUT")
    train.add_argument("--override", action="store_true", help="with --resume: continue with settings other than "
                       "the checkpoint's (batch size, seed, learning rate, model, task ...)")
    train.add_argument("--replicas", type=_count(1), default=1, help="TensorFlow: data-parallel over this many "
                       "devices of this machine (MirroredStrategy: GPUs, or logical CPU devices with --device cpu); "
                       "PyTorch: start 'torchrun --nproc-per-node N -m txcourse train ...' instead; --batch-size "
                       "stays the global batch")
    train.add_argument("--threads", type=_count(1), default=None, help="CPU threads for the framework "
                       "(default: its own choice, usually one per core)")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")

    for name, text in (("translate", "translate sentences with a trained checkpoint"),
                       ("evaluate", "score a checkpoint on a split of its task")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--checkpoint", type=Path, required=True)
        p.add_argument("--framework", choices=FRAMEWORKS, default=None, help="must match the checkpoint")
        p.add_argument("--model", choices=MODELS, default=None, help="must match the checkpoint")
        p.add_argument("--device", type=_device_name, default="cpu", help="auto, cpu, cuda, cuda:i or mps")
        p.add_argument("--beam", type=_count(1), default=1, help="beam size (1: greedy; at most the target "
                       "vocabulary size)")
        p.add_argument("--threads", type=_count(1), default=None, help="CPU threads for the framework (default: "
                       "its own choice; 1 is fastest on a busy machine)")
        if name == "translate":
            p.add_argument("text", nargs="*", help="sentences (default: one per line on standard input)")
            p.add_argument("--strict", action="store_true", help="refuse (exit 2, translate nothing) if any "
                           "sentence has words outside the source vocabulary, instead of warning")
            p.formatter_class = argparse.RawDescriptionHelpFormatter
            p.epilog = TRANSLATE_EPILOG
        else:
            p.add_argument("--split", choices=("train", "valid", "test"), default="test")
            p.add_argument("--limit", type=_count(1), default=None, help="score only the first N pairs")
            p.add_argument("--json", type=Path, default=None, help="also write the scores here")
            p.add_argument("--per-digit", type=_count(0), default=200, metavar="N",
                           help="numbers task: also score N fresh numbers of every digit count (default 200; 0: off)")
            p.add_argument("--per-phrasing", type=_count(0), default=60, metavar="N",
                           help="numbers task: also score N fresh numbers written each way people write them ('one "
                                "hundred five', 'a thousand and one', 'twelve hundred' ...), as translate reads them "
                                "(default 60; 0: off)")

    figures = sub.add_parser("figures", help="draw every figure of the book, from fixed seeds, into one folder "
                                             "with a manifest.json")
    figures.add_argument("--out", type=_folder, default=Path("_build/figures"), help="folder to write "
                         "(default _build/figures)")
    figures.add_argument("--only", nargs="+", action="extend", default=[], metavar="NAME",
                         help="only these figures (names or patterns such as 'week3_*'; see --list)")
    figures.add_argument("--list", action="store_true", help="list the figures and their inputs, draw nothing")
    figures.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    figures.add_argument("--strict", action="store_true", help="a missing input file is an error (default: "
                         "skip that figure with a warning)")
    figures.add_argument("--format", choices=("png", "svg", "pdf"), default="png")
    figures.add_argument("--dpi", type=_count(10, 2000), default=150, help="resolution of PNG files (10-2000)")
    figures.add_argument("--root", type=Path, default=None, help="folder the inputs (book/data/..., "
                         "benchmarks/results/...) are read from (default: the current folder if it holds any, "
                         "else the repository the package comes from)")
    figures.add_argument("--no-progress", action="store_true", help="no progress bar")

    grade = sub.add_parser("grade", help="autograde a folder of lab submissions: a CSV of scores and HTML "
                                         "feedback (nbgrader)")
    grade.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    grade.add_argument("--lab", required=True, help=f"one of {list(LABS)}")
    grade.add_argument("--out", type=Path, default=None, help="CSV to write (default _build/grades/LAB.csv)")
    grade.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT, metavar="S",
                       help=f"seconds a cell may run before it is interrupted (default {DEFAULT_CELL_TIMEOUT})")
    grade.add_argument("--labs-dir", type=Path, default=Path("labs"), help="the nbgrader course (default labs)")
    grade.add_argument("--no-feedback", action="store_true", help="skip the HTML feedback")
    from txcourse.grading import add_grade_options  # --jobs, --notebook-timeout, --memory, --no-sandbox

    add_grade_options(grade)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return {"train": _train, "translate": _translate, "evaluate": _evaluate, "figures": _figures,
                "grade": _grade}[args.command](args)
    except KeyboardInterrupt:
        parser.exit(130, "txcourse: error: interrupted\n")
    except BrokenPipeError:  # `txcourse translate ... | head -1`: the reader left; stop quietly, as cat does
        _silence_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for a killed pipe writer
    except _user_errors() as err:
        parser.exit(2, f"txcourse: error: {_one_line(err)}\n")
    return 0  # pragma: no cover


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _print_rows(rows: Sequence[str]) -> None:
    """Print the results; a full disk or a closed pipe on stdout is a one-line error, not a traceback."""
    try:
        for row in rows:
            print(row)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        _silence_stdout()
        raise ValueError(f"cannot write the output to standard output: {err.strerror or err}") from None


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a user's input causes; TensorFlow's only when TensorFlow was imported."""
    errors: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, FloatingPointError, PermissionError,
                                               IsADirectoryError, NotADirectoryError)
    tf = sys.modules.get("tensorflow")
    return errors + ((tf.errors.InvalidArgumentError,) if tf is not None and hasattr(tf, "errors") else ())


_WRAPPER = re.compile(r"^(Exception encountered when calling .*|Graph execution error:|Detected at node .*|"
                      r"File .*|\[\[.*|\S*\(most recent call last\):)$")


def _one_line(err: BaseException) -> str:
    """The line of ``err`` that names the cause.

    Keras wraps an error raised inside a layer: "Exception encountered when
    calling PositionalEncoding.call().", a blank line, then the cause (in
    bold) and the arguments; TensorFlow's graph errors put the cause after
    the graph's traceback. Both keep their cause.
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(getattr(err, "message", None) or err))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0] == "Graph execution error:":  # the cause is the last line before the node list
        lines = [line for line in lines if not _WRAPPER.match(line) and not line.startswith(("  ", "(", "\t"))]
        lines = [re.sub(r"\s*\[\[\{\{node .*$|\s*\[Op:.*$", "", line) for line in lines[-1:]]
    while lines and _WRAPPER.match(lines[0]):
        lines.pop(0)
    return lines[0] if lines else type(err).__name__


# TrainConfig and TransformerConfig fields -> the option that sets them
_OPTIONS = {"steps": "--steps", "batch_size": "--batch-size", "warmup_steps": "--warmup", "lr_factor": "--lr-factor",
            "cooldown_steps": "--cooldown",
            "label_smoothing": "--label-smoothing", "seed": "--seed", "device": "--device", "log_every": "--log-every",
            "checkpoint_every": "--checkpoint-every", "max_seconds": "--max-seconds"}


def _name_options(err: ValueError) -> ValueError:
    """'TrainConfig.lr_factor must ...' -> '--lr-factor must ...'; 'TransformerConfig.x ...' -> '--set x ...'."""
    text = re.sub(r"TrainConfig\.(\w+)", lambda m: _OPTIONS.get(m.group(1), m.group(0)), str(err))
    text = re.sub(r"TransformerConfig\.(\w+)", r"--set \1", text)
    return ValueError(text if text.startswith("--") else f"--set: {text}")


def _import_quietly(framework: str) -> None:
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


def _check_beam(beam: int, tgt_tok: Any) -> None:
    """More hypotheses than target tokens cannot differ; a huge beam would only exhaust memory."""
    if beam > tgt_tok.vocab_size:
        raise ValueError(f"--beam {beam}: expected at most the target vocabulary size of the checkpoint "
                         f"({tgt_tok.vocab_size} tokens); beams of 4-10 are usual")


def _check_device(fw: Any, device: str) -> None:
    try:
        fw.resolve_device(device)
    except ValueError as err:
        raise ValueError(f"--device {device}: {err}") from None


def _check_run_folder(out: Path, checkpoint: Path, args: argparse.Namespace) -> None:
    """Before anything is built: the folder can hold a run, and no checkpoint is replaced unless told."""
    if args.resume and args.overwrite:
        raise ValueError("--resume and --overwrite exclude each other: --resume continues the checkpoint in "
                         "--out, --overwrite replaces it; pass one of them")
    if args.override and not args.resume:
        raise ValueError("--override only applies with --resume (it lets a resumed run change its settings)")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, expected a run folder (a directory to write model.npz "
                         f"and history.jsonl into): choose another --out")
    for path in (checkpoint, out / "history.jsonl"):
        if path.is_dir():
            raise ValueError(f"--out {str(out)!r}: {str(path)!r} is a folder, expected a file (or nothing) there: "
                             f"remove it or choose another --out")
    if args.resume and not checkpoint.is_file():
        raise FileNotFoundError(f"--resume: no checkpoint {str(checkpoint)!r} to resume from; drop --resume to "
                                f"start a new run")
    if checkpoint.is_file() and not (args.resume or args.overwrite):
        raise ValueError(f"--out {str(out)!r} already holds a checkpoint ({str(checkpoint)!r}): pass --resume to "
                         f"continue it, --overwrite to replace it (and its history), or choose another --out")


def _check_writable(out: Path) -> None:
    """Create the run folder and write a file in it, so a read-only folder fails before the first step."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise ValueError(f"--out {str(out)!r} is not a writable folder ({err.strerror or err}): choose another "
                         f"--out") from None


@contextlib.contextmanager
def _run_folder_lock(out: Path):
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
            raise ValueError(f"--out {str(out)!r} is in use by another training ({holder}): wait for it to end, "
                             f"or choose another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                     f"{' '.join(sys.argv[:1] + sys.argv[1:])[:200]}\n")
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock


def _parameter_count(kind: str, config: dict[str, Any]) -> int:
    """The model's number of parameters, from its config (no framework needed)."""
    if kind == "transformer":
        from txcourse.accounting import count_parameters
        from txcourse.config import TransformerConfig

        return count_parameters(TransformerConfig.from_dict(config)).total
    e, u, vs, vt = config["embedding_dim"], config["units"], config["src_vocab_size"], config["tgt_vocab_size"]
    gru = lambda inputs: 3 * (inputs * u + u * u + 2 * u)  # noqa: E731 - three gates, two biases each
    return (vs + vt) * e + gru(e) + gru(e + u) + (u + e) * vt + vt + 2 * u * u  # generous for either GRU model


def _available_memory() -> Optional[int]:
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


def _check_model_fits(kind: str, config: dict[str, Any], settings: Sequence[tuple[str, Any]]) -> None:
    """A model too large for this machine fails here, naming --set, not in an allocation inside the framework.

    Training holds four float32 copies of every parameter (the weights, their gradients and Adam's two
    moments), so it needs at least 16 bytes per parameter before a single activation.
    """
    count = _parameter_count(kind, config)
    needed, available = 16 * count, _available_memory()
    if available is not None and needed > available:
        given = "--set " + " ".join(f"{key}={value}" for key, value in dict(settings).items()) if settings else \
            "the default model"
        raise ValueError(f"{given}: the {kind} model would have {count:,} parameters and training needs at least "
                         f"{needed / 2**30:,.1f} GiB (weights, gradients and Adam's two moments in float32), but "
                         f"{available / 2**30:,.1f} GiB of memory is available: choose a smaller model")


def _check_can_create(out: Path) -> None:
    """``out`` is, or can become, a folder we may write in; checked without creating anything."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, expected a folder to write into: choose another --out")
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise ValueError(f"--out {str(out)!r}: {str(existing)!r} is a file, so no folder can be made there: choose "
                         f"another --out")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(out)!r} is not a writable folder ({str(existing)!r} may not be written): "
                         f"choose another --out")


def _check_free_space(out: Path, parameters: int) -> None:
    """Room for the checkpoint before the first step, not a traceback at the first save after hours of training.

    A checkpoint holds the weights and Adam's two moments (12 bytes per parameter in float32); it is written to
    a temporary file beside the old one and renamed, so twice that must fit, plus a MiB for the header and history.
    """
    import shutil

    needed, free = 2 * 12 * parameters + 2**20, shutil.disk_usage(out).free
    if free < needed:
        raise ValueError(f"--out {str(out)!r}: a checkpoint of this model needs about {needed / 2**20:,.1f} MiB "
                         f"(written beside the previous one), and its disk has {free / 2**20:,.1f} MiB free: free "
                         f"space or choose another --out")


def _check_model_config(config: dict[str, Any], prepared: Any) -> None:
    """--set values that contradict the task's tokenizers or data fail here, not inside the first step."""
    src, tgt = prepared.src_tokenizer, prepared.tgt_tokenizer
    if config["pad_id"] != src.pad_id or config["pad_id"] != tgt.pad_id:
        raise ValueError(f"--set pad_id={config['pad_id']}: the task's tokenizers pad with id {src.pad_id}; "
                         f"drop --set pad_id (it is set from the tokenizers)")
    for side, tok in (("src", src), ("tgt", tgt)):
        if config[f"{side}_vocab_size"] < tok.vocab_size:
            raise ValueError(f"--set {side}_vocab_size={config[f'{side}_vocab_size']}: the task's {side} "
                             f"tokenizer has {tok.vocab_size} tokens; drop --set {side}_vocab_size (it is set from "
                             f"the tokenizer)")
    if "max_len" in config and len(prepared.train):
        longest = max(int(prepared.train.src_lengths.max()), max(len(t) for t in prepared.train.tgt) + 1)
        if config["max_len"] < longest:
            raise ValueError(f"--set max_len={config['max_len']}: the task's training data has sequences of "
                             f"{longest} positions (the target with <sos>); use --set max_len={longest} or more")


def _check_same_settings(meta: dict[str, Any], config: Any, model_config: dict[str, Any], task: dict[str, Any],
                         checkpoint: Path) -> None:
    """A resumed run continues the run it resumes: the settings that change what is learnt must match."""
    from txcourse.training import RESUME_SETTINGS

    plain = lambda value: json.loads(json.dumps(value))  # tuples -> lists, as the header stores them
    differ = []
    stored, now = meta.get("train_config", {}), plain(config.to_dict())
    differ += [(_OPTIONS.get(key, f"TrainConfig.{key}"), stored[key], now[key]) for key in RESUME_SETTINGS
               if key in stored and stored[key] != now[key]]
    stored, now = meta["model"]["config"], plain(model_config)
    differ += [(f"--set {key}", stored.get(key), now.get(key)) for key in sorted(set(stored) | set(now))
               if stored.get(key) != now.get(key)]
    stored, now = meta.get("task") or {}, plain(task)
    if stored.get("name") != now["name"]:
        differ.append(("--task", stored.get("name"), now["name"]))
    elif isinstance(stored.get("kwargs"), dict):
        differ += [(f"--task-arg {key}", stored["kwargs"].get(key), now["kwargs"].get(key))
                   for key in sorted(set(stored["kwargs"]) | set(now["kwargs"]))
                   if stored["kwargs"].get(key) != now["kwargs"].get(key)]
    if differ:
        raise ValueError(f"--resume: {str(checkpoint)!r} was trained with other settings: "
                         + ", ".join(f"{option} {old!r} (checkpoint) vs {new!r} (now)" for option, old, new in differ)
                         + "; repeat the checkpoint's settings, or add --override to continue with the new ones")


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


def _train(args: argparse.Namespace) -> int:
    from txcourse.checkpoint import check_checkpoint, check_resumable, read_checkpoint_meta
    from txcourse.experiment import backend, default_model_config, prepare_task, set_threads
    from txcourse.training import TrainConfig

    if args.task not in TASKS:
        raise ValueError(f"unknown task {args.task!r}; choose one of {sorted(TASKS)}")
    out = args.out or Path("runs") / f"{args.task}-{args.model}-{args.framework}"
    checkpoint = out / "model.npz"
    _check_run_folder(out, checkpoint, args)
    try:
        cooldown = round(COOLDOWN_FRACTION * args.steps) if args.cooldown is None else args.cooldown
        config = TrainConfig(steps=args.steps, batch_size=args.batch_size, warmup_steps=args.warmup,
                             cooldown_steps=cooldown, lr_factor=args.lr_factor, label_smoothing=args.label_smoothing, seed=args.seed,
                             device=args.device, log_every=args.log_every, checkpoint_every=args.checkpoint_every,
                             progress=not args.no_progress, max_seconds=args.max_seconds)
    except ValueError as err:
        raise _name_options(err) from None
    prepared = prepare_task(args.task, **dict(args.task_arg))
    try:
        model_config = default_model_config(args.model, prepared.src_tokenizer.vocab_size,
                                            prepared.tgt_tokenizer.vocab_size, dict(args.set))
    except ValueError as err:
        raise _name_options(err) from None
    _check_model_config(model_config, prepared)
    _check_model_fits(args.model, model_config, args.set)
    task = {"name": args.task, "kwargs": prepared.task_kwargs}
    if args.resume:
        meta = read_checkpoint_meta(checkpoint)
        check_checkpoint(checkpoint, meta, args.framework, args.model)
        check_resumable(checkpoint, meta)
        if args.steps <= meta["step"]:
            raise ValueError(f"--steps {args.steps}: {str(checkpoint)!r} is already at step {meta['step']}, so "
                             f"--resume would train nothing; give --steps above {meta['step']} (the total step "
                             f"count, not the steps to add)")
        if not args.override:
            _check_same_settings(meta, config, model_config, task, checkpoint)
    _import_quietly(args.framework)
    if args.threads:
        set_threads(args.threads, [args.framework])  # before the framework runs anything
    fw = backend(args.framework)
    _check_device(fw, args.device)
    train = importlib.import_module(f"txcourse.{args.framework}.train")
    replicas = train.data_parallel(args.device, args.replicas)  # before TensorFlow initialises its devices
    try:
        return _train_replicas(args, fw, replicas, config, model_config, prepared, task, out, checkpoint)
    finally:
        train.end_data_parallel()


def _valid_pairs(prepared: Any, count: Optional[int]) -> Any:
    """The encoded validation pairs ``--valid-pairs`` asks for (None: none)."""
    from txcourse.data import encode_pairs

    available = len(prepared.splits.valid)
    if count is None:
        count = available
    elif count > available:
        raise ValueError(f"--valid-pairs is {count}, but the {prepared.task} task's validation split holds "
                         f"{available} pairs; give at most {available} (0: no validation)")
    if count == 0:
        return None
    return encode_pairs(prepared.splits.valid[:count], prepared.src_tokenizer, prepared.tgt_tokenizer)


def _train_replicas(args: argparse.Namespace, fw: Any, replicas: Any, config: Any, model_config: dict[str, Any],
                    prepared: Any, task: dict[str, Any], out: Path, checkpoint: Path) -> int:
    """The training part of :func:`_train`, in every process of a data-parallel run (one writes)."""
    from txcourse.distributed import check_divisible

    check_divisible(config.batch_size, replicas.count)
    _check_writable(out)
    if replicas.writer:
        _check_free_space(out, _parameter_count(args.model, model_config))
    with _run_folder_lock(out) if replicas.writer else contextlib.nullcontext():
        return _train_locked(args, fw, replicas, config, model_config, prepared, task, out, checkpoint)


def _train_locked(args: argparse.Namespace, fw: Any, replicas: Any, config: Any, model_config: dict[str, Any],
                  prepared: Any, task: dict[str, Any], out: Path, checkpoint: Path) -> int:
    """The run itself, with the run folder locked by the writing process."""
    from txcourse.training import remove_stale_temporaries

    if replicas.writer:
        for path in (checkpoint, out / "history.jsonl"):
            remove_stale_temporaries(path)
    fw.set_seed(args.seed)
    metadata = {"task": task,
                "tokenizers": {"src": prepared.src_tokenizer.to_json(), "tgt": prepared.tgt_tokenizer.to_json()}}
    valid = _valid_pairs(prepared, args.valid_pairs)
    with replicas.scope():  # TensorFlow: the model's variables are mirrored on every replica
        trainer = fw.Trainer(fw.build_model(args.model, model_config), args.model, model_config, prepared.train,
                             config, history_path=str(out / "history.jsonl"), metadata=metadata, valid=valid)
    if args.resume:
        trainer.load(str(checkpoint))
    if replicas.count > 1 and replicas.writer:
        print(f"txcourse: data-parallel: {replicas.describe()}, global batch {config.batch_size}",
              file=sys.stderr)
    start = time.perf_counter()
    try:
        with _stop_on_signals(trainer) as received:
            records = trainer.fit(checkpoint_path=str(checkpoint))
    except FloatingPointError as err:
        raise ValueError(f"{err}; {_kept(checkpoint, 'the last good checkpoint')}") from None
    except KeyboardInterrupt:  # a second Ctrl-C: stopped inside a step, whose weights may be half updated
        if replicas.writer:
            print(f"txcourse: interrupted a second time, inside step {trainer.step + 1}: no checkpoint of it was "
                  f"saved; {_kept(checkpoint, 'the last checkpoint')}", file=sys.stderr)
        return 130
    except OSError as err:  # a full disk or a folder made read-only while training
        raise ValueError(f"could not write to --out {str(out)!r} at step {trainer.step} ({err.strerror or err}): "
                         f"free space or fix the folder, then resume; "
                         f"{_kept(checkpoint, 'the last checkpoint')}") from None
    if not replicas.writer:
        return 128 + received[0] if received else 0
    if received:
        print(f"txcourse: stopped by {signal.Signals(received[0]).name} at step {trainer.step}: saved checkpoint "
              f"{checkpoint}; add --resume to the same command to continue", file=sys.stderr)
        return 128 + received[0]
    last = records[-1] if records else {}
    print(f"trained {args.model} ({args.framework}) on {args.task} to step {trainer.step} in "
          f"{time.perf_counter() - start:.0f} s: loss {last.get('loss', float('nan')):.4f}, "
          f"token accuracy {last.get('accuracy', float('nan')):.4f}; checkpoint {checkpoint}")
    return 0


def _kept(checkpoint: Path, what: str) -> str:
    """What is on disk after a run that failed: '<what> 'PATH' (step N) is kept' or 'no checkpoint was written'."""
    from txcourse.checkpoint import read_checkpoint_meta

    try:
        return f"{what} {str(checkpoint)!r} (step {read_checkpoint_meta(checkpoint)['step']}) is kept"
    except (FileNotFoundError, ValueError):
        return "no checkpoint was written"


def _load(args: argparse.Namespace):
    from txcourse.checkpoint import check_checkpoint, read_checkpoint_meta
    from txcourse.experiment import backend, set_threads, tokenizers_from_meta

    meta = read_checkpoint_meta(args.checkpoint)
    framework = args.framework or meta.get("framework")
    check_checkpoint(args.checkpoint, meta, framework, args.model)
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    _check_beam(args.beam, tgt_tok)
    _import_quietly(framework)
    if args.threads:
        set_threads(args.threads, [framework])  # before the framework runs anything
    fw = backend(framework)
    _check_device(fw, args.device)
    model, meta = fw.load_model(str(args.checkpoint), device=args.device)
    return fw, model, meta, src_tok, tgt_tok


def _translate(args: argparse.Namespace) -> int:
    """Translate the sentences of ``args.text`` or standard input; see TRANSLATE_EPILOG for the contract."""
    from txcourse.experiment import translate

    lines = args.text if args.text else [line.rstrip("\n") for line in sys.stdin]
    if not lines:
        raise ValueError("nothing to translate: pass sentences or pipe them on standard input")
    texts = [" ".join(line.split()) for line in lines]  # stripped, inner whitespace collapsed: no tab left
    if any(texts):
        fw, model, meta, src_tok, tgt_tok = _load(args)
        longest = meta["model"]["config"].get("max_len")  # the Transformer's positions; the GRUs have no limit
        task = meta.get("task") or {}
        numbers = _number_range(task) if task.get("name") == "numbers" else None
    kept: list[tuple[int, str]] = []  # (line number from 1, text)
    model_input: dict[int, str] = {}  # numbers task: the canonical phrasing of what the line writes
    skipped: list[str] = []  # why each skipped line was skipped, in line order
    too_long: list[str] = []
    not_numbers: list[str] = []
    for number, text in enumerate(texts, 1):
        if not text:
            skipped.append(f"line {number}: empty")
        elif not (ids := src_tok.encode(text)):  # only punctuation the tokenizer ignores, e.g. ","
            skipped.append(f"line {number}: no words in {text!r}")
        elif longest is not None and len(ids) > longest:
            too_long.append(f"line {number}: {len(ids)} tokens, more than the {longest} positions this model reads "
                            f"(max_len of the checkpoint); split it into shorter sentences")
            skipped.append(too_long[-1])
        elif numbers is not None:  # read as a number: every English phrasing, nothing that is not one number
            try:
                model_input[number] = canonical(text, *numbers)
                kept.append((number, text))
            except NotANumber as err:
                not_numbers.append(f"line {number}: not an English number from {numbers[0]} to {numbers[1]}: {err}")
                skipped.append(not_numbers[-1])
        else:
            kept.append((number, text))
    refused = too_long + not_numbers
    if refused and args.strict:
        raise ValueError(f"--strict: {refused[0]}" + (f" (and {len(refused) - 1} more)" if refused[1:] else ""))
    for why in skipped:
        print(f"txcourse: skipped {why}", file=sys.stderr)
    if not kept:
        why = ("empty, without words, too long or no number" if refused else "empty or without words" if any(texts)
               else "empty")
        raise ValueError(f"nothing to translate: {_lines(len(lines))} {why}")
    kept = [(number, text, model_input.get(number, text)) for number, text in kept]
    unknown = {number: src_tok.unknown_words(text) for number, _, text in kept}
    flagged = [number for number, _, _ in kept if unknown[number]]
    if args.strict and flagged:
        first, others = flagged[0], flagged[1:]
        also = f" (also line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
        raise ValueError(f"--strict: line {first} has words outside the source vocabulary: "
                         f"{_quoted(unknown[first])}{also}")
    known = src_tok.vocab[src_tok.unk_id + 1:]  # the special tokens come first
    hint = f"{len(known)} words, e.g. {_quoted(known[:6])}"
    for number in flagged:
        words = unknown[number]
        print(f"txcourse: warning: line {number}: {_quoted(words)} {'is' if len(words) == 1 else 'are'} not in the "
              f"source vocabulary ({hint}); translated as <unk>", file=sys.stderr)
    targets = translate(fw, model, [text for _, _, text in kept], src_tok, tgt_tok, beam_size=args.beam,
                        device=args.device)
    _print_rows([f"{source}\t{target}" + (f"\t?unknown: {' '.join(unknown[number])}" if unknown[number] else "")
                 for (number, source, _), target in zip(kept, targets)])
    return 0


def _number_range(task: dict[str, Any]) -> tuple[int, int]:
    """The numbers a ``numbers`` checkpoint was trained on: its task's low and high (0 to 999999 by default)."""
    kwargs = task.get("kwargs") or {}
    return int(kwargs.get("low", 0)), int(kwargs.get("high", 999_999))


def _lines(n: int) -> str:
    return "the only line is" if n == 1 else f"all {n} lines are"


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(repr(w) for w in words)


def _evaluate(args: argparse.Namespace) -> int:
    from txcourse.data import get_task
    from txcourse.experiment import evaluate
    from txcourse.metrics import format_length_table

    if args.json is not None:
        _check_json_target(args.json)
    fw, model, meta, src_tok, tgt_tok = _load(args)
    task = meta.get("task")
    if not task:
        raise ValueError(f"checkpoint {str(args.checkpoint)!r} does not record its task")
    splits = get_task(task["name"], **task["kwargs"])
    pairs = splits[args.split][: args.limit]
    result = evaluate(fw, model, pairs, src_tok, tgt_tok, beam_size=args.beam, device=args.device)
    print(f"{meta['model']['kind']} ({meta['framework']}), {task['name']} {args.split} ({len(pairs)} pairs), "
          f"beam {args.beam}: exact match {100 * result['exact_match']:.2f}%, BLEU {result['bleu']:.2f}, "
          f"chrF {result['chrf']:.2f}")
    print(format_length_table({meta["model"]["kind"]: result["by_length"]}))
    by_digits = None
    if task["name"] == "numbers" and args.per_digit:
        from txcourse.experiment import evaluate_by_digit_count

        by_digits = evaluate_by_digit_count(fw, model, splits, src_tok, tgt_tok, per_count=args.per_digit,
                                            beam_size=args.beam, device=args.device)
        print(f"\nby digit count, {args.per_digit} fresh numbers each (what users type: 'nine' as well as "
              f"'nine hundred thousand'): mean exact match {100 * by_digits['exact_match']:.2f}%")
        round_ = by_digits["round"]
        print(format_length_table({meta["model"]["kind"]: by_digits["by_digits"]}, key="digits"))
        print(f"round numbers ('forty thousand', 'one hundred thousand': every one of the range with one or two "
              f"significant digits, {round_.count}): exact match {100 * round_.exact_match:.2f}%")
        print("in the training split: " + ", ".join(f"{100 * share:.0f}% of the {d}-digit"
                                                    for d, share in by_digits["seen"].items() if d != "round")
              + f" numbers (every number below 1000 is trained on by design), {100 * by_digits['seen']['round']:.0f}% "
              f"of the round ones (one or two significant digits: 'forty thousand', 'one hundred thousand')")
    by_phrasing = None
    if task["name"] == "numbers" and args.per_phrasing:
        from txcourse.experiment import evaluate_by_phrasing

        by_phrasing = evaluate_by_phrasing(fw, model, splits, src_tok, tgt_tok, count=args.per_phrasing,
                                           beam_size=args.beam, device=args.device)
        print(f"\nby phrasing, {args.per_phrasing} fresh numbers written each way that applies, read as translate "
              f"reads them ({by_phrasing['refused']} phrasings refused):")
        print("| phrasing | numbers | exact match |\n| --- | ---: | ---: |")
        for name, bucket in by_phrasing.items():
            if name != "refused":
                print(f"| {name} | {bucket.count} | {100 * bucket.exact_match:.2f}% |")
    if args.json:
        summary = {k: v for k, v in result.items() if k not in ("by_length", "hypotheses")}
        summary["by_length"] = [dataclasses.asdict(b) for b in result["by_length"]]
        if by_digits is not None:
            summary["by_digits"] = [{"digits": b.low, "count": b.count, "exact_match": b.exact_match,
                                     "seen_in_training": by_digits["seen"][b.low]} for b in by_digits["by_digits"]]
            summary["round_numbers"] = {"count": round_.count, "exact_match": round_.exact_match,
                                        "seen_in_training": by_digits["seen"]["round"]}
        if by_phrasing is not None:
            summary["by_phrasing"] = {name: (value if name == "refused" else
                                             {"count": value.count, "exact_match": value.exact_match})
                                      for name, value in by_phrasing.items()}
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


def _check_json_target(path: Path) -> None:
    """``--json`` names a file that can be written, checked before the evaluation runs, not after it."""
    parent = path.parent
    got = ("a folder" if path.is_dir() else
           f"a path whose folder {str(parent)!r} is a file" if parent.exists() and not parent.is_dir() else
           f"a path whose folder {str(parent)!r} does not exist" if not parent.exists() else None)
    if got is None and not os.access(parent, os.W_OK | os.X_OK):
        got = f"a path whose folder {str(parent)!r} is not writable"
    if got is None and path.exists() and not os.access(path, os.W_OK):
        got = "a file that is not writable"
    if got is not None:
        raise ValueError(f"--json {str(path)!r}: expected the name of a file to write the scores to, in an "
                         f"existing, writable folder; got {got}: use for example --json scores.json")


def _figures(args: argparse.Namespace) -> int:
    import matplotlib

    from txcourse.figures import build_figures, format_recipe_list, select

    if args.list:
        print(format_recipe_list(args.root, select(args.only)))
        return 0
    _check_can_create(args.out)
    matplotlib.use("Agg")  # headless: no window, whatever MPLBACKEND says
    if args.framework == "tf":  # TensorFlow's start-up logs, and oneDNN's reordered float sums, off
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
        _import_quietly("tf")
    start = time.perf_counter()
    try:
        manifest = build_figures(args.out, args.only or None, root=args.root, framework=args.framework,
                                 fmt=args.format, dpi=args.dpi, strict=args.strict, progress=not args.no_progress)
    except OSError as err:  # a full disk, or the folder made read-only while drawing
        if isinstance(err, FileNotFoundError) and not str(args.out) in str(err.filename or ""):
            raise  # a missing input (book/data/...): its own message
        raise ValueError(f"could not write the figures into --out {str(args.out)!r} ({err.strerror or err}): free "
                         f"space or choose another --out") from None
    entries = manifest["figures"].values()
    written = sum(e["status"] == "written" for e in entries)
    skipped = [name for name, e in manifest["figures"].items() if e["status"] == "skipped"]
    print(f"wrote {written} figure(s) to {args.out} in {time.perf_counter() - start:.1f} s"
          + (f"; skipped {len(skipped)}: {', '.join(skipped)}" if skipped else "")
          + f"; manifest {args.out / 'manifest.json'}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    """Exit status: 0, 1 when a submission could not be graded, 2 for a bad argument or no sandbox,
    128 + signal when interrupted (txcourse.grading.grade_command)."""
    from txcourse.grading import grade_command

    if args.cell_timeout < 1:
        raise ValueError(f"--cell-timeout must be at least 1 second, got {args.cell_timeout}")
    return grade_command(args, args.cell_timeout, prog="txcourse", raise_errors=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
