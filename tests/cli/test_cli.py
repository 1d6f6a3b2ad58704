"""The command line: train -> translate -> evaluate, and one-line errors with a non-zero exit."""

import json
import subprocess
import sys

import pytest
from support.configs import TINY_MODEL_ARGS

from txcourse.cli import main
from txcourse.training import read_history

TINY = TINY_MODEL_ARGS


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A checkpoint of a tiny Transformer trained 6 steps on the copy task (PyTorch)."""
    out = tmp_path_factory.mktemp("run")
    code = main(
        [
            "train",
            "--framework",
            "torch",
            "--task",
            "copy",
            "--task-arg",
            "sizes=(200,20,20)",
            "--steps",
            "6",
            "--log-every",
            "2",
            "--batch-size",
            "16",
            "--no-progress",
            "--out",
            str(out),
            *TINY,
        ]
    )
    assert code == 0
    return out


def test_train_writes_checkpoint_and_history(run):
    assert (run / "model.npz").is_file()
    history = read_history(run / "history.jsonl")
    assert [r["step"] for r in history] == [2, 4, 6]
    assert not list(run.glob("*.tmp"))
    # by default every record scores the whole validation split (20 pairs here), teacher-forced
    assert all(0 < r["valid_loss"] < 10 and 0 <= r["valid_accuracy"] <= 1 for r in history)
    assert len({r["valid_loss"] for r in history}) == 3  # the weights change between the records


def test_valid_pairs_zero_logs_no_validation(tmp_path):
    out = tmp_path / "novalid"
    assert (
        main(
            [
                "train",
                "--task",
                "copy",
                "--task-arg",
                "sizes=(200,20,20)",
                "--steps",
                "2",
                "--log-every",
                "1",
                "--batch-size",
                "16",
                "--no-progress",
                "--valid-pairs",
                "0",
                "--out",
                str(out),
                *TINY,
            ]
        )
        == 0
    )
    history = read_history(out / "history.jsonl")
    assert [r["step"] for r in history] == [1, 2] and not any("valid_loss" in r for r in history)


def test_translate_and_evaluate(run, capsys, tmp_path):
    assert main(["translate", "--checkpoint", str(run / "model.npz"), "a b c", "d e"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["a b c", "d e"]
    scores = tmp_path / "scores.json"
    assert (
        main(["evaluate", "--checkpoint", str(run / "model.npz"), "--limit", "8", "--beam", "2", "--json", str(scores)])
        == 0
    )
    out = capsys.readouterr().out
    assert "copy test (8 pairs), beam 2: exact match" in out and "| source length (word tokens) |" in out
    summary = json.loads(scores.read_text())
    assert 0 <= summary["exact_match"] <= 1 and sum(b["count"] for b in summary["by_length"]) == 8
    assert summary["length_unit"] == "word tokens"


def test_resume_continues_the_step_count(run, capsys, tmp_path):
    out = tmp_path / "again"
    args = [
        "train",
        "--task",
        "copy",
        "--task-arg",
        "sizes=(200,20,20)",
        "--batch-size",
        "16",
        "--no-progress",
        "--log-every",
        "2",
        "--out",
        str(out),
        *TINY,
    ]
    assert main([*args, "--steps", "2"]) == 0
    assert main([*args, "--steps", "4", "--resume"]) == 0
    assert "to step 4" in capsys.readouterr().out
    assert [r["step"] for r in read_history(out / "history.jsonl")] == [2, 4]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["train", "--task", "bogus"],
            "unknown task 'bogus'; choose one of ['copy', 'dates', 'file', 'numbers', 'reverse']",
        ),
        (["translate", "--checkpoint", "missing.npz", "x"], "checkpoint 'missing.npz' does not exist"),
        (["train", "--task", "copy", "--set", "num_heads=7", "--steps", "1"], "must be divisible by num_heads (7)"),
        (
            ["train", "--task", "copy", "--model", "bahdanau", "--set", "d_model=8", "--steps", "1"],
            "Seq2SeqConfig has unknown field(s) ['d_model']",
        ),
        (
            ["train", "--task", "copy", "--set", "pad_id=5", "--steps", "1"],
            "--set pad_id=5: the task's tokenizers pad with id 0; drop --set pad_id (it is set from the tokenizers)",
        ),
        (
            ["train", "--task", "copy", "--set", "layer_norm_eps=1e999", "--steps", "1"],
            "--set layer_norm_eps=inf: TransformerConfig.layer_norm_eps must be a positive finite number such as 1e-6, "
            "got inf",
        ),
        (
            ["train", "--task", "copy", "--lr-factor", "nan"],
            "argument --lr-factor: expected a finite number > 0, got 'nan'",
        ),
        (
            ["train", "--task", "copy", "--task-arg", "sizes=(50,5,5)", "--valid-pairs", "6", "--steps", "1"],
            "--valid-pairs is 6, but the copy task's validation split holds 5 pairs; give at most 5 (0: no validation)",
        ),
        (
            ["train", "--task", "copy", "--valid-pairs", "-1"],
            "argument --valid-pairs: expected an integer >= 0, got -1",
        ),
        (["evaluate", "--checkpoint", "x.npz", "--limit", "-1"], "argument --limit: expected an integer >= 1, got -1"),
        (
            ["translate", "--checkpoint", "x.npz", "--device", "gpu", "a"],
            "argument --device: expected auto, cpu, cuda, cuda:i or mps, got 'gpu'",
        ),
        # txcourse grade (txcourse.course.grading.grade_submissions): bad arguments fail before nbgrader runs
        (["grade", "no-such-folder", "--lab", "week3_attention"], "submissions folder "),
        (["grade", ".", "--lab", "week9_bogus"], "unknown lab 'week9_bogus'; labs are ['week1_seq2seq', "),
        (["grade", ".", "--lab", "week3_attention", "--cell-timeout", "0"], "--cell-timeout must be at least 1 second"),
    ],
)
def test_errors_are_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("txcourse: error: ") and message in err and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--framework", "tf"], "was written by the 'torch' half of txcourse, not 'tf'"),
        (["--model", "seq2seq"], "holds a 'transformer' model, not 'seq2seq'"),
    ],
)
def test_checkpoint_of_another_framework_or_model(run, extra, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--checkpoint", str(run / "model.npz"), *extra])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_not_a_checkpoint(tmp_path, capsys):
    bogus = tmp_path / "bogus.npz"
    bogus.write_bytes(b"not a zip file")
    with pytest.raises(SystemExit):
        main(["translate", "--checkpoint", str(bogus), "x"])
    assert "is not a readable txcourse checkpoint" in capsys.readouterr().err


def test_python_dash_m_and_console_script():
    result = subprocess.run(
        [sys.executable, "-m", "txcourse", "train", "--task", "nope"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "txcourse: error: unknown task 'nope'; choose one of ['copy', 'dates', 'file', 'numbers', 'reverse']"
    )


def test_checkpoint_is_readable_by_others(run):
    import stat

    mode = stat.S_IMODE((run / "model.npz").stat().st_mode)
    assert mode & stat.S_IRGRP and mode & stat.S_IROTH, oct(mode)


# ---------------------------------------------------------------------------
# every class of option error names the option and the value it got
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        # argparse types: refused where the option is parsed
        (
            ["train", "--batch-size", "0"],
            "argument --batch-size: expected an integer >= 1, got 0 (see 'txcourse train --help')",
        ),
        (["train", "--warmup", "ten"], "argument --warmup: expected an integer >= 1, got 'ten'"),
        (["train", "--set", "d_model"], "argument --set: expected KEY=VALUE, got 'd_model'"),
        (["train", "--task-arg", "=5"], "argument --task-arg: expected KEY=VALUE, got '=5'"),
        # one --set field the model refuses (TransformerConfig, then a GRU model's settings)
        (
            ["train", "--task", "copy", "--set", "dropout=1.5"],
            "--set dropout=1.5: TransformerConfig.dropout must be a probability in [0, 1), got 1.5",
        ),
        (
            ["train", "--task", "copy", "--set", "d_model='wide'"],
            "--set d_model='wide': TransformerConfig.d_model must be an integer >= 1, got 'wide'",
        ),
        (
            ["train", "--task", "copy", "--model", "bahdanau", "--set", "units=0"],
            "--set units=0: Seq2SeqConfig.units must be an integer >= 1, got 0",
        ),
        # a config invariant across two fields: both are named, as typed
        (
            ["train", "--task", "copy", "--set", "d_model=30", "--set", "num_heads=4"],
            "--set d_model=30 num_heads=4: TransformerConfig.d_model (30) must be divisible by num_heads (4): each head "
            "gets d_model / num_heads dimensions. Choose for example num_heads=3.",
        ),
        (
            ["train", "--task", "copy", "--set", "num_heads=7", "--set", "d_ff=64"],
            "--set num_heads=7: TransformerConfig.d_model (128) must be divisible by num_heads (7)",
        ),
        # a task option the task refuses
        (
            ["train", "--task", "copy", "--task-arg", "sizes=(5,)"],
            "--task-arg sizes=(5,): sizes must be a tuple (train, valid, test) of 3 integers, got (5,)",
        ),
    ],
)
def test_option_errors_name_the_option_and_value(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--steps", "1"] if "--steps" not in argv else argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert err.startswith(f"txcourse: error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "runs").exists()  # refused before the run folder was made


def test_a_train_config_field_is_named_by_its_option():
    """TrainConfig's TxcourseError names the field it refuses (.field), so the option that set it is named."""
    from txcourse.cli import build_parser
    from txcourse.cli.options import OptionError
    from txcourse.cli.settings import train_config

    args = build_parser().parse_args(["train", "--steps", "5", "--checkpoint-every", "2"])
    assert train_config(args).checkpoint_every == 2 and train_config(args).cooldown_steps == 2  # 30% of 5
    args.log_every = 0  # what the argparse type refuses first; TrainConfig refuses it too
    with pytest.raises(
        OptionError,
        match=r"^--log-every 0: TrainConfig.log_every must be a positive integer, got "
        r"0$",
    ) as err:
        train_config(args)
    assert err.value.option == "--log-every"


def test_a_library_message_is_printed_as_written(capsys, tmp_path, monkeypatch):
    """Words that look like config fields are not rewritten into options: only a TxcourseError's fields are mapped."""
    import txcourse.registry
    from txcourse.errors import TxcourseError

    message = "TrainConfig.batch_size and TransformerConfig.d_model: a message that names fields in its text"

    def refuse(*args, **kwargs):
        raise TxcourseError(message + "\nsecond line, not printed")

    monkeypatch.setattr(txcourse.registry, "default_model_config", refuse)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["train", "--task", "copy", "--steps", "1"])
    assert capsys.readouterr().err == f"txcourse: error: {message}\n"


@pytest.mark.parametrize("bug", [ValueError("a bug's ValueError"), KeyError("a_bugs_key")])
def test_a_bug_in_the_library_shows_its_traceback_not_a_user_error(bug, capsys, tmp_path, monkeypatch):
    """A ValueError or KeyError from inside txcourse is a bug: traceback, the bug line, exit status 70, not exit 2."""
    import txcourse.registry
    from txcourse.cli.errors import BUG_STATUS, ISSUES_URL

    def broken(*args, **kwargs):
        raise bug

    monkeypatch.setattr(txcourse.registry, "default_model_config", broken)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--task", "copy", "--steps", "1"]) == BUG_STATUS == 70
    err = capsys.readouterr().err
    assert "txcourse: error:" not in err, err
    assert err.startswith("Traceback (most recent call last):"), err
    assert f"in broken\n    raise bug\n{type(bug).__name__}: " in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("txcourse: internal error: this is a bug in txcourse") and ISSUES_URL in last, last


def test_debug_shows_the_traceback_of_a_user_error_too(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["--debug", "train", "--task", "bogus"], ["train", "--task", "bogus", "--debug"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):") and "OptionError: unknown task 'bogus'" in err, err
        assert err.endswith(
            "txcourse: error: unknown task 'bogus'; choose one of ['copy', 'dates', 'file', 'numbers', 'reverse']\n"
        ), err
    with pytest.raises(SystemExit):
        main(["train", "--task", "bogus"])
    assert "Traceback" not in capsys.readouterr().err


def test_only_txcourse_errors_and_os_errors_are_the_users():
    """The error boundary: no ValueError, KeyError or TypeError is taken for the user's mistake."""
    import pathlib

    import txcourse.cli
    from txcourse.cli.errors import USER_ERRORS
    from txcourse.errors import TxcourseError

    assert USER_ERRORS == (TxcourseError, OSError)
    assert issubclass(TxcourseError, ValueError)  # what such mistakes raised before
    folder = pathlib.Path(txcourse.cli.__file__).parent
    for module in sorted(folder.glob("*.py")):
        text = module.read_text()
        assert "raise ValueError(" not in text, f"{module.name} raises a bare ValueError for a user's mistake"


def test_the_command_line_does_not_edit_messages_with_regular_expressions():
    """Options are named where they are parsed or checked; no module of txcourse/cli parses exception text."""
    import pathlib

    import txcourse.cli

    folder = pathlib.Path(txcourse.cli.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert len(modules) >= 8, modules
    for module in modules:
        text = module.read_text()
        for word in ("import re\n", "from re import", "re.sub(", "re.compile(", "re.match(", "re.search("):
            assert word not in text, f"{module.name} uses {word.strip()!r}"
        assert len(text.splitlines()) <= 300, f"{module.name} has {len(text.splitlines())} lines"


def test_error_line_of_a_multi_line_message_is_its_first_line():
    from txcourse.cli.errors import error_line

    assert error_line(ValueError("the cause\n  details\n")) == "the cause"
    assert error_line(ValueError("\n\n")) == "ValueError"


def test_train_config_names_the_field_it_refuses():
    """TrainConfig raises the one user-error type, naming the field (the CLI maps it to its option)."""
    from txcourse import TxcourseError
    from txcourse.training import TrainConfig

    with pytest.raises(TxcourseError, match=r"^TrainConfig.log_every must be a positive integer, got 0$") as err:
        TrainConfig(log_every=0)
    assert err.value.field == "log_every" and isinstance(err.value, ValueError)
    with pytest.raises(TxcourseError) as err:
        TrainConfig(batch_size=None)
    assert err.value.arguments == ("batch_size", "max_tokens")


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_set_builds_the_model_config_once(framework, tmp_path, monkeypatch):
    """``--set positions=rope`` is read into a TransformerConfig once (from the settings); the object goes on to the
    checks, build_model and the Trainer, and only the checkpoint's header holds its to_dict() (issue 31, item 1)."""
    import inspect

    from txcourse.config import TransformerConfig

    calls = []
    from_dict, to_dict = TransformerConfig.from_dict.__func__, TransformerConfig.to_dict

    def counted_from_dict(cls, values):
        calls.append(("from_dict", inspect.stack()[1].function))
        return from_dict(cls, values)

    def counted_to_dict(self):
        calls.append(("to_dict", inspect.stack()[1].function))
        return to_dict(self)

    monkeypatch.setattr(TransformerConfig, "from_dict", classmethod(counted_from_dict))
    monkeypatch.setattr(TransformerConfig, "to_dict", counted_to_dict)
    argv = ["train", "--framework", framework, "--task", "copy", "--task-arg", "sizes=(64,8,8)", "--steps", "2"]
    argv += ["--log-every", "1", "--checkpoint-every", "1", "--no-progress", "--out", str(tmp_path / "run")]
    assert main([*argv, *TINY, "--set", "positions=rope"]) == 0
    # one read of the settings; then a to_dict() per checkpoint written (steps 1 and 2, and the final save)
    assert calls == [("from_dict", "default_model_config")] + [("to_dict", "save")] * 3, calls
