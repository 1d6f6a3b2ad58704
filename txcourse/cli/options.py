"""The options' types: each parses one option's text and raises an error naming what it got and expected.

argparse prefixes the message with the option (``argument --batch-size: expected an integer >= 1, got 0``), so
every bad value is refused where it is parsed, before any command runs. :class:`OptionError` is the same kind of
error for what only a command can check (a value against a checkpoint, a folder on disk, a config field).
"""

from __future__ import annotations

import argparse
import ast
import math
from pathlib import Path
from typing import Any, Optional

from txcourse.errors import TxcourseError
from txcourse.registry import MODEL_KINDS

__all__ = [
    "OneLineParser",
    "OptionError",
    "MODELS",
    "COOLDOWN_FRACTION",
    "TRAIN_OPTIONS",
    "setting",
    "count",
    "number",
    "folder",
    "device_name",
]

MODELS = MODEL_KINDS  # --model
COOLDOWN_FRACTION = 0.3  # default --cooldown, as a share of --steps

# TrainConfig fields -> the option of `txcourse train` that sets them
TRAIN_OPTIONS = {
    "steps": "--steps",
    "batch_size": "--batch-size",
    "warmup_steps": "--warmup",
    "cooldown_steps": "--cooldown",
    "lr_factor": "--lr-factor",
    "label_smoothing": "--label-smoothing",
    "seed": "--seed",
    "device": "--device",
    "log_every": "--log-every",
    "checkpoint_every": "--checkpoint-every",
    "max_seconds": "--max-seconds",
}


class OneLineParser(argparse.ArgumentParser):
    """argparse's own errors (an unknown option, a bad value) as one line, like every other error."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"txcourse: error: {message} (see '{self.prog} --help')\n")


class OptionError(TxcourseError):
    """A bad command-line option, found by a command: ``option`` names it (``--out``, ``--set d_model``).

    A :class:`~txcourse.errors.TxcourseError` whose field is the option. The message starts with the option and
    says what it got and what was expected; the command line prints it as ``txcourse: error: MESSAGE`` and exits
    with status 2.
    """

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message, option)

    @property
    def option(self) -> str:
        """The option, as typed: ``--out``, ``--set d_model``."""
        return self.arguments[0]


def setting(text: str) -> tuple[str, Any]:
    """An argparse type: 'd_model=256' -> ('d_model', 256); values are Python literals, else strings."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


def count(minimum: int, maximum: Optional[int] = None):
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


def number(low: float, high: float = math.inf, closed: bool = False, high_open: bool = False, low_open: bool = False):
    """An argparse type: a finite float in (low, high), [low, high] when ``closed``, [low, high) when
    ``high_open``, (low, high] when ``low_open``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        inside = (
            low <= value < high
            if high_open
            else low < value <= high
            if low_open
            else low <= value <= high
            if closed
            else low < value < high
        )
        if not (inside and math.isfinite(value)):
            span = (
                f"in [{low:g}, {high:g})"
                if high_open
                else f"in ({low:g}, {high:g}]"
                if low_open
                else f"in [{low:g}, {high:g}]"
                if closed
                else f"> {low:g}"
                if high == math.inf
                else f"in ({low:g}, {high:g})"
            )
            raise argparse.ArgumentTypeError(f"expected a finite number {span}, got {text!r}")
        return value

    return parse


def folder(text: str) -> Path:
    """An argparse type: a non-empty path (an empty one would silently mean the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a folder name, got {text!r} (use '.' for the current folder)")
    return Path(text)


def device_name(text: str) -> str:
    """An argparse type: auto, cpu, cuda, cuda:i or mps (whether that device exists is checked later)."""
    if text in ("auto", "cpu", "cuda", "mps") or (text.startswith("cuda:") and text[5:].isdigit()):
        return text
    raise argparse.ArgumentTypeError(f"expected auto, cpu, cuda, cuda:i or mps, got {text!r}")
