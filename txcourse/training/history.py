"""The history file of a run (one JSON record per line) and the validation curve in it. Book: week 6."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from txcourse.data.batching import EncodedPairs
from txcourse.training.files import atomic_write

__all__ = ["History", "read_history", "check_valid", "validation_curve"]


class History:
    """One JSON record per line: step, loss, accuracy, lr, tokens/s, ... (a history file).

    Opening an existing file for a resumed run drops the records after
    ``resume_step``, so the file reads as if the run had never stopped. A
    run stopped between two records (Ctrl-C, SIGTERM, ``max_seconds``) ends
    with a record marked ``partial`` that carries the running sums; resuming
    drops it and hands the sums to the Trainer (:meth:`take_pending`), so the
    next record averages the same steps as in an uninterrupted run.
    """

    def __init__(self, path: Optional[str | os.PathLike], resume_step: Optional[int] = None):
        self.path = None if path is None else Path(path)
        self.records: list[dict[str, Any]] = []
        self._pending: Optional[dict[str, float]] = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if resume_step is not None and self.path.exists():  # a resumed run keeps what came before
                self.records = [r for r in read_history(self.path) if r["step"] <= resume_step]
                if self.records and self.records[-1]["step"] == resume_step and "partial" in self.records[-1]:
                    self._pending = dict(self.records.pop()["partial"])
            atomic_write(self.path, lambda f: f.write("".join(json.dumps(r) + "\n" for r in self.records).encode()))

    def take_pending(self) -> Optional[dict[str, float]]:
        """The running sums of the partial record a resumed run dropped (once), or None."""
        pending, self._pending = self._pending, None
        return pending

    def append(self, record: dict[str, Any]) -> None:
        clean = {k: (float(v) if isinstance(v, float) or hasattr(v, "dtype") else v) for k, v in record.items()}
        for key, value in clean.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise FloatingPointError(f"history: {key} is {value} at step {clean.get('step')}")
        self.records.append(clean)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(clean) + "\n")


def read_history(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a history file written by :class:`History`."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_valid(data: Any) -> Any:
    """``data`` if it is None or non-empty encoded pairs (a Trainer's ``valid``); else a ValueError naming it."""
    if data is not None and (not isinstance(data, EncodedPairs) or len(data) == 0):
        size = len(data) if hasattr(data, "__len__") else "?"
        raise ValueError(
            f"valid must be None or non-empty EncodedPairs (txcourse.data.encode_pairs), got "
            f"{type(data).__name__} of length {size}"
        )
    return data


def validation_curve(history: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """The validation records of a training history: step, loss and accuracy from valid_loss/valid_accuracy.

    Raises:
        ValueError: no record holds a validation loss (trained with ``--valid-pairs 0``, or before it existed).
    """
    curve = [
        {"step": r["step"], "loss": r["valid_loss"], "accuracy": r["valid_accuracy"]}
        for r in history
        if r.get("valid_loss") is not None
    ]
    if not curve:
        raise ValueError(
            "the training history holds no valid_loss: retrain with `txcourse train` and its default "
            "--valid-pairs (book/instructor.md lists the command)"
        )
    return curve
