"""What each task makes of a line a user types (txcourse.data.tasks.Task.model_input): translate asks the task."""

import pytest

from txcourse import TxcourseError
from txcourse.data.tasks import DatesTask, ModelInput, NumbersTask, RefusedInput, SymbolsTask, Task, task_of


def test_a_task_without_a_grammar_gives_the_line_as_typed():
    for recorded in ({"name": "file", "kwargs": {"path": "pairs.tsv"}}, {"name": ""}, None):
        task = task_of(recorded)
        assert type(task) is Task and task.refusal is None
        assert task.model_input("a b c") == ModelInput("a b c")


def test_every_generated_task_declares_its_input_language():
    assert isinstance(task_of({"name": "dates"}), DatesTask) and task_of({"name": "dates"}).refusal == "no date"
    for name in ("copy", "reverse"):
        assert isinstance(task_of({"name": name, "kwargs": {}}), SymbolsTask)


@pytest.mark.parametrize("name", ["copy", "reverse"])
def test_the_symbol_tasks_refuse_symbols_outside_the_alphabet(name):
    task = task_of({"name": name, "kwargs": {"min_len": 2, "max_len": 4}})
    assert task.model_input("a b z") == ModelInput("a b z")
    cases = {
        "a 77 b": f"'77' is not of the {name} task's 26 symbols ('a' to 'z')",
        "A b": f"'A' is not of the {name} task's 26 symbols ('a' to 'z')",
        "ab c 7 8": f"'ab', '7', '8' are not of the {name} task's 26 symbols ('a' to 'z'); symbols are "
        "separated by spaces, e.g. 'a b'",
    }
    for text, reason in cases.items():
        with pytest.raises(RefusedInput) as err:
            task.model_input(text)
        assert str(err.value) == reason
    custom = SymbolsTask(name, {"vocab": ["x1", "y2", "z3"]})
    assert custom.model_input("x1 z3") == ModelInput("x1 z3")
    with pytest.raises(RefusedInput, match=rf"^'x' is not of the {name} task's 3 symbols \('x1', 'y2', 'z3'\)$"):
        custom.model_input("x1 x")


def test_the_symbol_tasks_flag_lengths_they_never_trained_on():
    task = SymbolsTask("copy", {"vocab": "abc", "min_len": 2, "max_len": 3})
    assert task.model_input("a b").warnings == task.model_input("a b c").warnings == ()
    assert task.model_input("a b c a") == ModelInput(
        "a b c a",
        ("4 symbols, more than the 3 the copy task trains on (max_len): the model never saw so long a sequence",),
    )
    assert task.model_input("a").warnings == (
        "1 symbol, fewer than the 2 the copy task trains on (min_len): the model never saw so short a sequence",
    )
    assert SymbolsTask("copy").model_input(" ".join("abcdefghij")).warnings == ()  # defaults: 1 to 10 symbols


def test_the_numbers_task_reads_every_phrasing_into_the_trained_one():
    task = task_of({"name": "numbers", "kwargs": {"low": 0, "high": 999_999}})
    assert isinstance(task, NumbersTask) and task.refusal == "no number"
    assert task.model_input("one hundred five") == ModelInput("one hundred and five")
    assert task.model_input("twelve hundred") == ModelInput("one thousand, two hundred")


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
