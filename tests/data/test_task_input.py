"""What each task makes of a line a user types (txcourse.data.tasks.Task.model_input): translate asks the task."""

import pytest

from txcourse import TxcourseError
from txcourse.data.tasks import NumbersTask, RefusedInput, Task, task_of


def test_a_task_without_a_grammar_gives_the_line_as_typed():
    for recorded in ({"name": "copy", "kwargs": {}}, {"name": "dates"}, None):
        task = task_of(recorded)
        assert type(task) is Task and task.refusal is None
        assert task.model_input("a b c") == "a b c"


def test_the_numbers_task_reads_every_phrasing_into_the_trained_one():
    task = task_of({"name": "numbers", "kwargs": {"low": 0, "high": 999_999}})
    assert isinstance(task, NumbersTask) and task.refusal == "no number"
    assert task.model_input("one hundred five") == "one hundred and five"
    assert task.model_input("twelve hundred") == "one thousand, two hundred"


@pytest.mark.parametrize(
    "kwargs, text, reason",
    [
        ({}, "zebra", "not an English number from 0 to 999999: 'zebra' has words that are not number words"),
        ({"low": 0, "high": 99}, "five hundred", "not an English number from 0 to 99: "),
    ],
)
def test_the_numbers_task_refuses_what_is_no_number_of_its_range_with_the_reason(kwargs, text, reason):
    task = NumbersTask("numbers", kwargs)
    with pytest.raises(RefusedInput, match="^" + reason.replace("(", r"\(").replace(")", r"\)")) as err:
        task.model_input(text)
    assert isinstance(err.value, TxcourseError)
