"""``txcourse translate``: translate sentences with a checkpoint, one tab-separated line each (TRANSLATE_EPILOG)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, Optional

from txcourse.cli.errors import print_rows
from txcourse.cli.frameworks import start_model
from txcourse.cli.options import OptionError
from txcourse.data.english_numbers import NotANumber, canonical

__all__ = ["translate_command", "TRANSLATE_EPILOG"]

TRANSLATE_EPILOG = """\
input: each sentence is normalised by the checkpoint's source tokenizer as in
training (numbers task: case, runs of spaces, commas and hyphens do not
matter). Line N is the Nth sentence, arguments or standard-input lines alike.
An empty or blank line is skipped with a note on stderr and never translated
("txcourse: skipped line 3: empty"), and so is a line longer than the model's
max_len tokens (--strict refuses it); if nothing remains, exit 2.

numbers task: each line must be one English number of the task's range, in any
usual phrasing ("one hundred five", "a thousand and one", "forty two", "twelve
hundred"); the model is given the phrasing it was trained on. Anything else
("one two three", "nineteen ninety-nine", "one million", "zebra") is skipped
with the reason (--strict refuses it), never translated. Other tasks: words outside
the source vocabulary are named on stderr ("txcourse: warning: line 2: 'zebra'
is not in the source vocabulary ...") and the line is marked; --strict refuses.

output: one line per translated sentence, tab-separated:
  SOURCE<TAB>TRANSLATION                       every word known
  SOURCE<TAB>TRANSLATION<TAB>?unknown: W1 W2   some words unknown (read as <unk>)
SOURCE is the sentence with its whitespace collapsed.

decoding: greedy by default, beam search with --beam N; --sample draws every
token from the model's distribution instead, reshaped by --temperature T,
--top-k K and --top-p P (nucleus), with --seed S (default 0): the same command
prints the same sampled translations.
"""


def translate_command(args: argparse.Namespace) -> int:
    """Translate the sentences of ``args.text`` or standard input; see TRANSLATE_EPILOG for the contract."""
    from txcourse.evaluation.translate import translate

    sampling = _sampling(args)
    lines = args.text if args.text else [line.rstrip("\n") for line in sys.stdin]
    if not lines:
        raise ValueError("nothing to translate: pass sentences or pipe them on standard input")
    texts = [" ".join(line.split()) for line in lines]  # stripped, inner whitespace collapsed: no tab left
    if any(texts):
        fw, model, meta, src_tok, tgt_tok = start_model(args)
        longest = meta["model"]["config"].get("max_len")  # the Transformer's positions; the GRUs have no limit
        task = meta.get("task") or {}
        numbers = _number_range(task) if task.get("name") == "numbers" else None
    kept: list[tuple[int, str]] = []  # (line number from 1, text)
    model_input: dict[int, str] = {}  # numbers task: the canonical phrasing of what the line writes
    skipped: list[str] = []  # why each skipped line was skipped, in line order
    too_long: list[str] = []
    not_numbers: list[str] = []
    for number, text in enumerate(texts, 1):
        if not text:
            skipped.append(f"line {number}: empty")
        elif not (ids := src_tok.encode(text)):  # only punctuation the tokenizer ignores, e.g. ","
            skipped.append(f"line {number}: no words in {text!r}")
        elif longest is not None and len(ids) > longest:
            too_long.append(
                f"line {number}: {len(ids)} tokens, more than the {longest} positions this model reads "
                f"(max_len of the checkpoint); split it into shorter sentences"
            )
            skipped.append(too_long[-1])
        elif numbers is not None:  # read as a number: every English phrasing, nothing that is not one number
            try:
                model_input[number] = canonical(text, *numbers)
                kept.append((number, text))
            except NotANumber as err:
                not_numbers.append(f"line {number}: not an English number from {numbers[0]} to {numbers[1]}: {err}")
                skipped.append(not_numbers[-1])
        else:
            kept.append((number, text))
    refused = too_long + not_numbers
    if refused and args.strict:
        raise OptionError(
            f"--strict: {refused[0]}" + (f" (and {len(refused) - 1} more)" if refused[1:] else ""), "--strict"
        )
    for why in skipped:
        print(f"txcourse: skipped {why}", file=sys.stderr)
    if not kept:
        why = (
            "empty, without words, too long or no number"
            if refused
            else "empty or without words"
            if any(texts)
            else "empty"
        )
        raise ValueError(f"nothing to translate: {_lines(len(lines))} {why}")
    kept = [(number, text, model_input.get(number, text)) for number, text in kept]
    unknown = {number: src_tok.unknown_words(text) for number, _, text in kept}
    flagged = [number for number, _, _ in kept if unknown[number]]
    if args.strict and flagged:
        first, others = flagged[0], flagged[1:]
        also = f" (also line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
        raise OptionError(
            f"--strict: line {first} has words outside the source vocabulary: {_quoted(unknown[first])}{also}",
            "--strict",
        )
    known = src_tok.vocab[src_tok.unk_id + 1 :]  # the special tokens come first
    hint = f"{len(known)} words, e.g. {_quoted(known[:6])}"
    for number in flagged:
        words = unknown[number]
        print(
            f"txcourse: warning: line {number}: {_quoted(words)} {'is' if len(words) == 1 else 'are'} not in the "
            f"source vocabulary ({hint}); translated as <unk>",
            file=sys.stderr,
        )
    targets = translate(
        fw,
        model,
        [text for _, _, text in kept],
        src_tok,
        tgt_tok,
        beam_size=args.beam,
        device=args.device,
        sampling=sampling,
    )
    print_rows(
        [
            f"{source}\t{target}" + (f"\t?unknown: {' '.join(unknown[number])}" if unknown[number] else "")
            for (number, source, _), target in zip(kept, targets)
        ]
    )
    return 0


SAMPLING_OPTIONS = {"temperature": "--temperature", "top_k": "--top-k", "top_p": "--top-p", "seed": "--seed"}


def _sampling(args: argparse.Namespace) -> Optional[dict[str, Any]]:
    """The keyword arguments of ``sample_decode`` the options give, or None without ``--sample``."""
    given = {key: getattr(args, key, None) for key in SAMPLING_OPTIONS}
    given = {key: value for key, value in given.items() if value is not None}
    if not getattr(args, "sample", False):
        if given:
            option = SAMPLING_OPTIONS[next(iter(given))]
            raise OptionError(f"{option} applies only with --sample (greedy and beam search draw nothing)", option)
        return None
    if args.beam != 1:
        raise OptionError(
            f"--sample draws one output per sentence: it does not combine with --beam {args.beam}", "--beam"
        )
    return given


def _number_range(task: dict[str, Any]) -> tuple[int, int]:
    """The numbers a ``numbers`` checkpoint was trained on: its task's low and high (0 to 999999 by default)."""
    kwargs = task.get("kwargs") or {}
    return int(kwargs.get("low", 0)), int(kwargs.get("high", 999_999))


def _lines(n: int) -> str:
    return "the only line is" if n == 1 else f"all {n} lines are"


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(repr(w) for w in words)
