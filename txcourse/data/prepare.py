"""A task made ready to train on: its splits, tokenizers fitted on the training split, the encoded pairs.

Also the tokenizers a checkpoint carries. Used by the command line, the benchmarks and the book.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from txcourse.data.batching import EncodedPairs, encode_pairs
from txcourse.data.char_word import CharTokenizer, WordTokenizer
from txcourse.data.file_task import file_tokenizers
from txcourse.data.splits import TranslationSplits
from txcourse.data.tasks import TASKS, get_task
from txcourse.data.vocab import Tokenizer, tokenizer_from_json
from txcourse.errors import TxcourseError

__all__ = ["Prepared", "NUMBERS_SOURCE_NORMALISATION", "make_tokenizers", "prepare_task", "tokenizers_from_meta"]


@dataclass
class Prepared:
    """A task ready to train on: splits, tokenizers and the encoded training pairs."""

    task: str
    task_kwargs: dict[str, Any]
    splits: TranslationSplits
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    train: EncodedPairs


# Source normalisation of the numbers task: what a user may type differently without changing the number.
# It lives in the source tokenizer, so training and translation apply the same steps and a checkpoint
# carries them in its tokenizer JSON. "Twelve thousand three hundred and forty five" reads as
# "twelve thousand, three hundred and forty-five".
NUMBERS_SOURCE_NORMALISATION: dict[str, Any] = dict(lowercase=True, ignore=(",", "-"))


def make_tokenizers(task: str, splits: TranslationSplits) -> tuple[Tokenizer, Tokenizer]:
    """English words in, characters out for ``numbers`` (Korean has no spaces inside 10^4 groups);
    characters on both sides for ``dates`` (a year, "3/3/2026", is read digit by digit); what the task's
    arguments say for ``file`` (BPE or characters); words on both sides for the toy tasks.

    The ``numbers`` source tokenizer lower-cases and drops commas and hyphens
    (:data:`NUMBERS_SOURCE_NORMALISATION`); the toy tasks' words are their
    content, so their tokenizers change nothing.
    """
    sources, targets = [s for s, _ in splits.train], [t for _, t in splits.train]
    if task == "numbers":
        return WordTokenizer.fit(sources, **NUMBERS_SOURCE_NORMALISATION), CharTokenizer.fit(targets)
    if task == "dates":
        return CharTokenizer.fit(sources), CharTokenizer.fit(targets)
    if task == "file":  # BPE or characters, shared or not, as the task's arguments say
        return file_tokenizers(splits)
    return WordTokenizer.fit(sources), WordTokenizer.fit(targets)


def prepare_task(task: str, **task_kwargs: Any) -> Prepared:
    """Generate the task's splits (deterministic), fit tokenizers on the training split and encode it."""
    if task not in TASKS:
        raise TxcourseError(f"unknown task {task!r}; choose one of {sorted(TASKS)}", "task")
    splits = get_task(task, **task_kwargs)
    src_tok, tgt_tok = make_tokenizers(task, splits)
    # a task that completes its arguments from what it reads (the file task: the absolute path and the
    # file's SHA-256) gives the arguments that rebuild it; a checkpoint stores them
    task_kwargs = splits.metadata.get("task_kwargs", task_kwargs)
    return Prepared(task, dict(task_kwargs), splits, src_tok, tgt_tok, encode_pairs(splits.train, src_tok, tgt_tok))


def tokenizers_from_meta(meta: dict[str, Any]) -> tuple[Tokenizer, Tokenizer]:
    """The tokenizers a checkpoint carries."""
    try:
        toks = meta["tokenizers"]
        return (
            tokenizer_from_json(toks["src"], "checkpoint source tokenizer"),
            tokenizer_from_json(toks["tgt"], "checkpoint target tokenizer"),
        )
    except KeyError:
        raise TxcourseError("checkpoint holds no tokenizers (was it written by `txcourse train`?)") from None
