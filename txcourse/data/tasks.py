"""A registry of the generated tasks: ``get_task("numbers" | "dates" | "copy" | "reverse", **kwargs)``.

Example:
    >>> splits = get_task("copy", sizes=(8, 2, 2), max_len=5)
    >>> splits.metadata["task"]
    'copy'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from txcourse.data.dates import make_dates_task
from txcourse.data.file_task import make_file_task
from txcourse.data.numbers import make_numbers_task
from txcourse.data.splits import TranslationSplits
from txcourse.data.toy import make_copy_task, make_reverse_task

__all__ = ["TASKS", "get_task"]

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
        raise ValueError(f"unknown task {name!r}; valid names are {sorted(TASKS)}")
    make = TASKS[name]
    signature = inspect.signature(make)
    try:
        signature.bind(**kwargs)
    except TypeError as err:  # e.g. an unexpected keyword argument
        raise ValueError(
            f"get_task({name!r}) got invalid arguments {sorted(kwargs)}: {err}; "
            f"{make.__name__} accepts {list(signature.parameters)}"
        ) from None
    return make(**kwargs)
