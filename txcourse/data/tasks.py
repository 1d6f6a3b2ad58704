"""A registry of the generated tasks: ``get_task("numbers" | "dates" | "copy" | "reverse", **kwargs)``, and what
each task makes of a line a user types (:func:`task_of`, :meth:`Task.model_input`).

Example:
    >>> splits = get_task("copy", sizes=(8, 2, 2), max_len=5)
    >>> splits.metadata["task"]
    'copy'
"""

from __future__ import annotations

import inspect
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from txcourse.data.dates import date_source, make_dates_task
from txcourse.data.english_dates import NotADate, parse_date, trained_phrasing
from txcourse.data.english_numbers import NotANumber, canonical
from txcourse.data.file_task import make_file_task
from txcourse.data.numbers import make_numbers_task
from txcourse.data.splits import TranslationSplits
from txcourse.data.toy import LETTERS, make_copy_task, make_reverse_task
from txcourse.errors import TxcourseError, quote, quote_each

__all__ = [
    "TASKS",
    "get_task",
    "Task",
    "ModelInput",
    "NumbersTask",
    "DatesTask",
    "SymbolsTask",
    "RefusedInput",
    "task_of",
]

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
class ModelInput:
    """What a task makes of a typed line: the model's source text, and what it flags in it.

    A warning says why the translation may be wrong though the line is well formed (a date outside the
    years the checkpoint was trained on, a sequence longer than those it saw): ``txcourse translate``
    translates the line and prints the warning on stderr; ``--strict`` refuses it.
    """

    text: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Task:
    """A task as a checkpoint records it (``meta["task"]``): its name and the arguments it was generated with.

    :meth:`model_input` turns a line a user typed into the model's source text, or refuses it
    (:class:`RefusedInput`, with the reason); each task declares the language of its lines: English numbers
    (:class:`NumbersTask`), English dates (:class:`DatesTask`), symbols of an alphabet (:class:`SymbolsTask`),
    or any text (this class: the ``file`` task, and a checkpoint that records no task), whose words outside
    the source vocabulary ``txcourse translate`` names (the tokenizer knows them, not the task).
    """

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    refusal: Optional[str] = None  # what a refused line is, in a few words ("no number"); None: refuses nothing

    def model_input(self, text: str) -> ModelInput:
        """The source text the model is given for ``text`` (whitespace already collapsed): ``text`` itself.

        Raises:
            RefusedInput: never here; a task that reads its sources by a grammar raises it with the reason.
        """
        return ModelInput(text)


@dataclass(frozen=True)
class NumbersTask(Task):
    """The ``numbers`` task: a line is one English number of the task's range, in any usual phrasing.

    Example:
        >>> NumbersTask("numbers").model_input("a thousand and one").text
        'one thousand and one'
    """

    refusal: Optional[str] = "no number"

    @property
    def range(self) -> tuple[int, int]:
        """The numbers the task was trained on: its low and high (0 to 999999 by default)."""
        return int(self.kwargs.get("low", 0)), int(self.kwargs.get("high", 999_999))

    def model_input(self, text: str) -> ModelInput:
        """The phrasing the model was trained on (:func:`~txcourse.data.english_numbers.canonical`) of the number
        ``text`` writes ("one hundred five", "twelve hundred" ...); anything else is refused with the reason
        (a number outside the range too: the range is the task's whole language, so nothing is only flagged)."""
        low, high = self.range
        try:
            return ModelInput(canonical(text, low, high))
        except NotANumber as err:
            raise RefusedInput(f"not an English number from {low} to {high}: {err}") from None


@dataclass(frozen=True)
class DatesTask(Task):
    """The ``dates`` task: a line is one English date (:mod:`txcourse.data.english_dates`), which the model is
    given in the phrasing it was trained on closest to the one typed.

    A date that does not exist, a weekday that is not the date's, a missing year or a line that is no date is
    refused with the reason; a year outside the checkpoint's ``[first_year, last_year]`` is flagged.

    Example:
        >>> task = DatesTask("dates")
        >>> task.model_input("tuesday, march 3rd, 2026").text, task.model_input("2026-03-03").text
        ('Tuesday, March 3, 2026', '3/3/2026')
        >>> task.model_input("March 3, 1850").warnings
        ('year 1850 is outside the years this model was trained on (1900-2099): its translation may be wrong',)
    """

    refusal: Optional[str] = "no date"

    @property
    def years(self) -> tuple[int, int]:
        """The years the task was trained on: its first and last (1900 to 2099 by default)."""
        return int(self.kwargs.get("first_year", 1900)), int(self.kwargs.get("last_year", 2099))

    def model_input(self, text: str) -> ModelInput:
        """The CLDR rendering (:func:`~txcourse.data.dates.date_source`) of the date ``text`` writes, in the
        trained phrasing closest to it (:func:`~txcourse.data.english_dates.trained_phrasing`)."""
        try:
            parsed = parse_date(text)
        except NotADate as err:
            raise RefusedInput(str(err)) from None
        phrasing = trained_phrasing(parsed, self.kwargs.get("phrasings"))
        first, last = self.years
        warnings = ()
        if not first <= parsed.date.year <= last:
            warnings = (
                f"year {parsed.date.year} is outside the years this model was trained on ({first}-{last}): "
                f"its translation may be wrong",
            )
        return ModelInput(date_source(parsed.date, phrasing), warnings)


@dataclass(frozen=True)
class SymbolsTask(Task):
    """The ``copy`` and ``reverse`` tasks: a line is symbols of the task's alphabet separated by spaces.

    A symbol outside the alphabet is refused with the reason; a sequence shorter than ``min_len`` or longer
    than ``max_len`` (the lengths the task trains on) is flagged, not refused: the task's own long test split
    (``long_test_fraction``) holds such sequences, to measure how a model generalises to lengths it never saw.

    Example:
        >>> SymbolsTask("copy", {"vocab": "abc", "max_len": 2}).model_input("a b c").warnings
        ('3 symbols, more than the 2 the copy task trains on (max_len): the model never saw so long a sequence',)
    """

    refusal: Optional[str] = "not the task's symbols"

    @property
    def alphabet(self) -> tuple[str, ...]:
        """The task's symbols (a..z by default; a string means its characters)."""
        return tuple(self.kwargs.get("vocab", LETTERS))

    def model_input(self, text: str) -> ModelInput:
        """``text`` itself, if every symbol is of the alphabet; flagged if its length was never trained on."""
        alphabet, symbols = self.alphabet, text.split()
        outside = list(dict.fromkeys(s for s in symbols if s not in alphabet))
        if outside:
            shown = quote_each(outside)
            hint = ""
            runs = [s for s in outside if len(s) > 1 and set(s) <= set(alphabet)]  # "abc" for "a b c"
            if runs and all(len(a) == 1 for a in alphabet):
                hint = "; symbols are separated by spaces, e.g. " + quote(" ".join(runs[0][:10]))
            raise RefusedInput(
                f"{shown} {'is' if len(outside) == 1 else 'are'} not of the {self.name} task's "
                f"{len(alphabet)} symbols ({_listed(alphabet)}){hint}"
            )
        low, high = int(self.kwargs.get("min_len", 1)), int(self.kwargs.get("max_len", 10))
        warnings = ()
        if len(symbols) > high:
            warnings = (
                f"{len(symbols)} symbols, more than the {high} the {self.name} task trains on (max_len): "
                f"the model never saw so long a sequence",
            )
        elif len(symbols) < low:
            warnings = (
                f"{len(symbols)} symbol{'s' if len(symbols) > 1 else ''}, fewer than the {low} the {self.name} "
                f"task trains on (min_len): the model never saw so short a sequence",
            )
        return ModelInput(text, warnings)


def _listed(symbols: Sequence[str]) -> str:
    """'a' to 'z' for a run of letters, else the first few symbols."""
    if len(symbols) > 3 and "".join(symbols) in string.ascii_lowercase + string.ascii_uppercase + string.digits:
        return f"{symbols[0]!r} to {symbols[-1]!r}"
    return ", ".join(map(repr, symbols[:6])) + (", ..." if len(symbols) > 6 else "")


# the tasks that read a typed line their own way; any other (``file``, none recorded) gives the line as typed
TASK_INPUTS: dict[str, type[Task]] = {
    "numbers": NumbersTask,
    "dates": DatesTask,
    "copy": SymbolsTask,
    "reverse": SymbolsTask,
}


def task_of(recorded: Optional[Mapping[str, Any]]) -> Task:
    """The :class:`Task` a checkpoint's ``meta["task"]`` records (``{"name": ..., "kwargs": ...}``; None: none)."""
    recorded = recorded or {}
    name = recorded.get("name") or ""
    return TASK_INPUTS.get(name, Task)(name, dict(recorded.get("kwargs") or {}))
