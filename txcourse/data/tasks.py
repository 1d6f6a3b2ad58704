"""A registry of the generated tasks: ``get_task("numbers" | "dates" | "copy" | "reverse", **kwargs)``, and what
each task makes of a line a user types (:func:`task_of`, :meth:`Task.model_input`).

Example:
    >>> splits = get_task("copy", sizes=(8, 2, 2), max_len=5)
    >>> splits.metadata["task"]
    'copy'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from txcourse.data.dates import make_dates_task
from txcourse.data.english_numbers import NotANumber, canonical
from txcourse.data.file_task import make_file_task
from txcourse.data.numbers import make_numbers_task
from txcourse.data.splits import TranslationSplits
from txcourse.data.toy import make_copy_task, make_reverse_task
from txcourse.errors import TxcourseError

__all__ = ["TASKS", "get_task", "Task", "NumbersTask", "RefusedInput", "task_of"]

TASKS: dict[str, Callable[..., TranslationSplits]] = {
    "numbers": make_numbers_task,
    "copy": make_copy_task,
    "reverse": make_reverse_task,
    "dates": make_dates_task,
    "file": make_file_task,  # a user's tab-separated file: `txcourse train --task file --data PATH`
}


def get_task(name: str, **kwargs) -> TranslationSplits:
    """Generate the splits of a task by name.

    Args:
        name: ``"numbers"``, ``"dates"``, ``"file"``, ``"copy"`` or ``"reverse"``.
        **kwargs: passed to the task's generator (``make_numbers_task``,
            ``make_dates_task``, ``make_copy_task`` or ``make_reverse_task``).

    Returns:
        :class:`~txcourse.data.splits.TranslationSplits`.

    Example:
        >>> get_task("numbers", sizes=(4, 1, 2)).metadata["target_lang"]
        'ko'
    """
    if name not in TASKS:
        raise TxcourseError(f"unknown task {name!r}; valid names are {sorted(TASKS)}", "name")
    make = TASKS[name]
    signature = inspect.signature(make)
    try:
        signature.bind(**kwargs)
    except TypeError as err:  # e.g. an unexpected keyword argument
        raise TxcourseError(
            f"get_task({name!r}) got invalid arguments {sorted(kwargs)}: {err}; "
            f"{make.__name__} accepts {list(signature.parameters)}"
        ) from None
    return make(**kwargs)


class RefusedInput(TxcourseError):
    """A line the task cannot give its model (the message says why): ``txcourse translate`` skips it."""


@dataclass(frozen=True)
class Task:
    """A task as a checkpoint records it (``meta["task"]``): its name and the arguments it was generated with.

    :meth:`model_input` turns a line a user typed into the model's source text; a task whose sources have a
    grammar of their own (:class:`NumbersTask`) reads the line by it and refuses what it cannot read.
    """

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    refusal: Optional[str] = None  # what a refused line is, in a few words ("no number"); None: refuses nothing

    def model_input(self, text: str) -> str:
        """The source text the model is given for ``text`` (whitespace already collapsed): ``text`` itself.

        Raises:
            RefusedInput: never here; a task that reads its sources by a grammar raises it with the reason.
        """
        return text


@dataclass(frozen=True)
class NumbersTask(Task):
    """The ``numbers`` task: a line is one English number of the task's range, in any usual phrasing.

    Example:
        >>> NumbersTask("numbers").model_input("a thousand and one")
        'one thousand and one'
    """

    refusal: Optional[str] = "no number"

    @property
    def range(self) -> tuple[int, int]:
        """The numbers the task was trained on: its low and high (0 to 999999 by default)."""
        return int(self.kwargs.get("low", 0)), int(self.kwargs.get("high", 999_999))

    def model_input(self, text: str) -> str:
        """The phrasing the model was trained on (:func:`~txcourse.data.english_numbers.canonical`) of the number
        ``text`` writes ("one hundred five", "twelve hundred" ...); anything else is refused with the reason."""
        low, high = self.range
        try:
            return canonical(text, low, high)
        except NotANumber as err:
            raise RefusedInput(f"not an English number from {low} to {high}: {err}") from None


TASK_INPUTS: dict[str, type[Task]] = {"numbers": NumbersTask}  # the tasks that read a typed line their own way


def task_of(recorded: Optional[Mapping[str, Any]]) -> Task:
    """The :class:`Task` a checkpoint's ``meta["task"]`` records (``{"name": ..., "kwargs": ...}``; None: none)."""
    recorded = recorded or {}
    name = recorded.get("name") or ""
    return TASK_INPUTS.get(name, Task)(name, dict(recorded.get("kwargs") or {}))
