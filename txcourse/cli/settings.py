"""The objects `txcourse train` builds from its options: the task, the TrainConfig and the model's config.

This is the one place where an option becomes a library object, so it is where a library error is given the
option's name: a :class:`~txcourse.errors.TxcourseError` names its fields in ``.arguments`` (a TrainConfig field,
mapped to its option by ``TRAIN_OPTIONS``; a model setting, which is the ``--set`` key). Messages are never
edited, only prefixed with the option and value. Any other exception is a bug and passes through.
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import Any, Optional

from txcourse.cli.options import COOLDOWN_FRACTION, TRAIN_OPTIONS, OptionError
from txcourse.errors import TxcourseError

__all__ = ["prepare", "train_config", "valid_pairs", "model_config", "check_model_config", "check_same_settings"]


def prepare(args: argparse.Namespace) -> Any:
    """The task of ``--task`` with ``--task-arg``; a value the task refuses is named with ``--task-arg``.

    ``--task file`` reads the file of ``--data``; what is wrong with the file is named with ``--data``.
    """
    from txcourse.data.prepare import prepare_task

    data = getattr(args, "data", None)
    if (args.task == "file") != (data is not None):
        raise OptionError(
            f"--data {str(data)!r} is only read by --task file, not --task {args.task}; drop --data"
            if data is not None
            else "--task file needs --data PATH, the tab-separated file of source<TAB>target lines to train on",
            "--data",
        )
    if data is not None:
        from txcourse.data.file_task import make_file_task

        accepted = [name for name in inspect.signature(make_file_task).parameters if name != "path"]
        unknown = [key for key, _ in args.task_arg if key not in accepted]
        if unknown:
            raise OptionError(
                f"--task-arg {unknown[0]}: the file task has no such argument; it accepts {accepted} "
                f"(and the file itself as --data PATH)",
                "--task-arg",
            )
        try:
            return prepare_task(args.task, path=data, **dict(args.task_arg))
        except TxcourseError as err:
            if err.field in accepted:  # a task argument (fractions, tokens, vocab_size ...)
                given = " ".join(f"{key}={value!r}" for key, value in args.task_arg)
                raise OptionError(f"--task-arg {given}: {err}", "--task-arg") from None
            raise OptionError(f"--data {str(data)!r}: {err}", "--data") from None  # empty, a line without a tab ...
        except (FileNotFoundError, IsADirectoryError) as err:
            raise OptionError(f"--data {str(data)!r}: {err}", "--data") from None
    try:
        return prepare_task(args.task, **dict(args.task_arg))
    except TxcourseError as err:
        if not args.task_arg:
            raise
        given = " ".join(f"{key}={value!r}" for key, value in args.task_arg)
        raise OptionError(f"--task-arg {given}: {err}", "--task-arg") from None


def train_config(args: argparse.Namespace) -> Any:
    """The TrainConfig of the options; a value it refuses is named by the option that gave it (TRAIN_OPTIONS).

    The argparse types refuse every bad value first; this keeps the name should TrainConfig be stricter:
    TrainConfig's error names its field (``.field``), whose option is ``TRAIN_OPTIONS[field]``.
    """
    from txcourse.training import TrainConfig

    cooldown = round(COOLDOWN_FRACTION * args.steps) if args.cooldown is None else args.cooldown
    values = {
        "steps": args.steps,
        "batch_size": args.batch_size,
        "warmup_steps": args.warmup,
        "cooldown_steps": cooldown,
        "lr_factor": args.lr_factor,
        "label_smoothing": args.label_smoothing,
        "seed": args.seed,
        "device": args.device,
        "log_every": args.log_every,
        "checkpoint_every": args.checkpoint_every,
        "max_seconds": args.max_seconds,
    }
    try:
        return TrainConfig(progress=not args.no_progress, **values)
    except TxcourseError as err:
        if err.field not in values:  # a field no option sets: the message names it
            raise
        option = TRAIN_OPTIONS[err.field]
        raise OptionError(f"{option} {values[err.field]!r}: {err}", option) from None


def valid_pairs(prepared: Any, count: Optional[int]) -> Any:
    """The encoded validation pairs ``--valid-pairs`` asks for (None: none)."""
    from txcourse.data import encode_pairs

    available = len(prepared.splits.valid)
    if count is None:
        count = available
    elif count > available:
        raise OptionError(
            f"--valid-pairs is {count}, but the {prepared.task} task's validation split holds "
            f"{available} pairs; give at most {available} (0: no validation)",
            "--valid-pairs",
        )
    if count == 0:
        return None
    return encode_pairs(prepared.splits.valid[:count], prepared.src_tokenizer, prepared.tgt_tokenizer)


def model_config(kind: str, prepared: Any, settings: list[tuple[str, Any]]) -> Any:
    """The model's config: the defaults of ``kind``, the task's vocabulary sizes and the ``--set`` values.

    Built and checked once, here; the object (a TransformerConfig or Seq2SeqConfig) goes on to the checks,
    ``build_model`` and the Trainer, and only the checkpoint's header holds its ``to_dict()``.

    A setting the model refuses is named as given, with the other settings its error names (``.arguments``):
    ``--set d_model=30 num_heads=4: TransformerConfig.d_model (30) must be divisible by num_heads (4) ...``.
    """
    from txcourse.registry import default_model_config

    given = dict(settings)
    try:
        return default_model_config(kind, prepared.src_tokenizer.vocab_size, prepared.tgt_tokenizer.vocab_size, given)
    except TxcourseError as err:
        if not err.arguments:  # names no setting: printed as written
            raise
        named = [name for name in err.arguments if name in given]  # the first is the one to change
        if not named:  # a value the command line chose itself (the vocabulary sizes): the message names it
            raise OptionError(f"--set: {err}", "--set") from None
        shown = " ".join(f"{name}={value!r}" for name, value in given.items() if name in named)  # as typed
        raise OptionError(f"--set {shown}: {err}", f"--set {named[0]}") from None


def check_model_config(config: Any, prepared: Any) -> None:
    """--set values that contradict the task's tokenizers or data fail here, not inside the first step."""
    src, tgt = prepared.src_tokenizer, prepared.tgt_tokenizer
    if config.pad_id != src.pad_id or config.pad_id != tgt.pad_id:
        raise OptionError(
            f"--set pad_id={config.pad_id}: the task's tokenizers pad with id {src.pad_id}; "
            f"drop --set pad_id (it is set from the tokenizers)",
            "--set pad_id",
        )
    for side, tok in (("src", src), ("tgt", tgt)):
        size = getattr(config, f"{side}_vocab_size")
        if size < tok.vocab_size:
            raise OptionError(
                f"--set {side}_vocab_size={size}: the task's {side} "
                f"tokenizer has {tok.vocab_size} tokens; drop --set {side}_vocab_size (it is set "
                f"from the tokenizer)",
                f"--set {side}_vocab_size",
            )
    max_len = getattr(config, "max_len", None)  # a Transformer's; the GRU models have none
    if max_len is not None and len(prepared.train):
        longest = max(int(prepared.train.src_lengths.max()), max(len(t) for t in prepared.train.tgt) + 1)
        if max_len < longest:
            raise OptionError(
                f"--set max_len={max_len}: the task's training data has sequences of "
                f"{longest} positions (the target with <sos>); use --set max_len={longest} or more",
                "--set max_len",
            )


def check_same_settings(
    meta: dict[str, Any], config: Any, model_config: Any, task: dict[str, Any], checkpoint: Path
) -> None:
    """A resumed run continues the run it resumes: the settings that change what is learnt must match."""
    from txcourse.training import RESUME_SETTINGS

    plain = lambda value: json.loads(json.dumps(value))  # noqa: E731 - tuples -> lists, as the header stores them
    differ = []
    stored, now = meta.get("train_config", {}), plain(config.to_dict())
    differ += [
        (TRAIN_OPTIONS.get(key, f"TrainConfig.{key}"), stored[key], now[key])
        for key in RESUME_SETTINGS
        if key in stored and stored[key] != now[key]
    ]
    stored, now = meta["model"]["config"], plain(model_config.to_dict())  # the header's form, to compare with it
    differ += [
        (f"--set {key}", stored.get(key), now.get(key))
        for key in sorted(set(stored) | set(now))
        if stored.get(key) != now.get(key)
    ]
    stored, now = meta.get("task") or {}, plain(task)
    if stored.get("name") != now["name"]:
        differ.append(("--task", stored.get("name"), now["name"]))
    elif isinstance(stored.get("kwargs"), dict):
        differ += [
            (f"--task-arg {key}", stored["kwargs"].get(key), now["kwargs"].get(key))
            for key in sorted(set(stored["kwargs"]) | set(now["kwargs"]))
            if stored["kwargs"].get(key) != now["kwargs"].get(key)
        ]
    if differ:
        raise OptionError(
            f"--resume: {str(checkpoint)!r} was trained with other settings: "
            + ", ".join(f"{option} {old!r} (checkpoint) vs {new!r} (now)" for option, old, new in differ)
            + "; repeat the checkpoint's settings, or add --override to continue with the new ones",
            "--resume",
        )
