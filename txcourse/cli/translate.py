"""``txcourse translate``: translate sentences with a checkpoint, one tab-separated line each (TRANSLATE_EPILOG)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from txcourse.cli.errors import print_rows
from txcourse.cli.frameworks import add_checkpoint_options, start_model
from txcourse.cli.options import OptionError, count
from txcourse.cli.options import number as finite_number
from txcourse.data.tasks import RefusedInput, Task, task_of
from txcourse.errors import TxcourseError, quote, quote_each

__all__ = ["add_arguments", "translate_command", "TRANSLATE_EPILOG"]

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
with the reason (--strict refuses it), never translated.

dates task: each line must be one English date, in any case, with or without
the weekday ("tuesday, march 3rd, 2026", "3 Mar 2026", "2026-03-03", "3/3/2026":
month first); the model is given the trained phrasing closest to it. A date that
does not exist, a wrong weekday, a missing year or a line that is no date is
skipped with the reason; a year outside the checkpoint's training years is
translated with a warning naming them ("txcourse: warning: line 1: year 1850 is
outside ..."); --strict refuses both. copy and reverse tasks: a symbol outside
the alphabet is skipped with the reason, a length never trained on is warned
about. Other tasks (file): words outside the source vocabulary are named on
stderr ("txcourse: warning: line 2: 'zebra' is not in the source vocabulary
...") and the line is marked; --strict refuses.

output: one line per translated sentence, tab-separated:
  SOURCE<TAB>TRANSLATION                       every word known
  SOURCE<TAB>TRANSLATION<TAB>?unknown: W1 W2   some words unknown (read as <unk>)
SOURCE is the sentence with its whitespace collapsed.

decoding: greedy by default, beam search with --beam N; --sample draws every
token from the model's distribution instead, reshaped by --temperature T,
--top-k K and --top-p P (nucleus), with --seed S (default 0): the same command
prints the same sampled translations.
"""


def add_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``txcourse translate`` and its options to the ``txcourse`` parser's subcommands."""
    p = subparsers.add_parser(
        "translate",
        help="translate sentences with a trained checkpoint",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=TRANSLATE_EPILOG,
    )
    add_checkpoint_options(p)
    p.add_argument("text", nargs="*", help="sentences (default: one per line on standard input)")
    p.add_argument(
        "--strict",
        action="store_true",
        help="refuse (exit 2, translate nothing) if any sentence is skipped (too long, refused by the task) or "
        "warned about (the task's warnings, words outside the source vocabulary), instead of going on",
    )
    p.add_argument(
        "--sample",
        action="store_true",
        help="draw every token from the model's distribution (see --temperature, --top-k, --top-p, --seed) "
        "instead of greedy decoding or beam search",
    )
    p.add_argument(
        "--temperature", type=finite_number(0.0), default=None, help="--sample: divide the logits by T > 0 (1)"
    )
    p.add_argument("--top-k", type=count(1), default=None, help="--sample: keep the k most probable tokens")
    p.add_argument(
        "--top-p",
        type=finite_number(0.0, 1.0, low_open=True),
        default=None,
        help="--sample: keep the most probable tokens that together reach p, in (0, 1] (nucleus)",
    )
    p.add_argument("--seed", type=count(0), default=None, help="--sample: the seed of the draws (0)")
    return p


def translate_command(args: argparse.Namespace) -> int:
    """Translate the sentences of ``args.text`` or standard input; see TRANSLATE_EPILOG for the contract."""
    from txcourse.evaluation.translate import translate

    sampling = _sampling(args)
    lines = args.text if args.text else [line.rstrip("\n") for line in sys.stdin]
    if not lines:
        raise TxcourseError("nothing to translate: pass sentences or pipe them on standard input")
    texts = [" ".join(line.split()) for line in lines]  # stripped, inner whitespace collapsed: no tab left
    if not any(texts):
        _report_skipped(_Lines(kept=[], skipped=[f"line {n}: empty" for n in range(1, len(texts) + 1)]), args)
        raise TxcourseError(f"nothing to translate: {_lines(len(lines))} empty")
    fw, model, meta, src_tok, tgt_tok = start_model(args)
    task = task_of(meta.get("task"))
    sorted_lines = _sort_lines(texts, src_tok, task, meta["model"]["config"].get("max_len"))
    _report_skipped(sorted_lines, args)
    if not sorted_lines.kept:
        why = ["empty", "without words"]
        if sorted_lines.refused:
            why += ["too long"] + ([task.refusal] if task.refusal else [])
        raise TxcourseError(f"nothing to translate: {_lines(len(lines))} {_either(why)}")
    kept = sorted_lines.kept
    unknown = _check_unknown_words(kept, src_tok, args.strict)
    targets = translate(
        fw,
        model,
        [model_input for _, _, model_input in kept],
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


@dataclass
class _Lines:
    """The typed lines, sorted: those to translate and why each other one is skipped (in line order)."""

    kept: list[tuple[int, str, str]]  # (line number from 1, the line, the model's input the task made of it)
    skipped: list[str]  # why each skipped line was skipped
    too_long: list[str] = field(default_factory=list)  # those with more tokens than the model's positions
    by_task: list[str] = field(default_factory=list)  # those the task refused (RefusedInput)
    flagged: list[str] = field(default_factory=list)  # the task's warnings on kept lines (ModelInput.warnings)

    @property
    def refused(self) -> list[str]:
        """What --strict refuses: too long lines first, then the task's refusals, then its warnings."""
        return self.too_long + self.by_task + self.flagged


def _sort_lines(texts: Sequence[str], src_tok: Any, task: Task, longest: Optional[int]) -> _Lines:
    """Skip the empty lines, those without words and those longer than ``longest`` tokens (the Transformer's
    max_len; the GRUs have no limit); the task turns each other line into the model's input, or refuses it."""
    lines = _Lines(kept=[], skipped=[])
    for number, text in enumerate(texts, 1):
        if not text:
            lines.skipped.append(f"line {number}: empty")
        elif not (ids := src_tok.encode(text)):  # only punctuation the tokenizer ignores, e.g. ","
            lines.skipped.append(f"line {number}: no words in {quote(text)}")
        elif longest is not None and len(ids) > longest:
            lines.too_long.append(
                f"line {number}: {len(ids)} tokens, more than the {longest} positions this model reads "
                f"(max_len of the checkpoint); split it into shorter sentences"
            )
            lines.skipped.append(lines.too_long[-1])
        else:
            try:
                reading = task.model_input(text)
            except RefusedInput as err:
                lines.by_task.append(f"line {number}: {err}")
                lines.skipped.append(lines.by_task[-1])
            else:
                lines.kept.append((number, text, reading.text))
                lines.flagged += [f"line {number}: {warning}" for warning in reading.warnings]
    return lines


def _report_skipped(lines: _Lines, args: argparse.Namespace) -> None:
    """--strict refuses a line too long, refused or flagged by the task; every skipped line is named on stderr,
    then every warning of the task."""
    refused = lines.refused
    if refused and args.strict:
        raise OptionError(
            f"--strict: {refused[0]}" + (f" (and {len(refused) - 1} more)" if refused[1:] else ""), "--strict"
        )
    for why in lines.skipped:
        print(f"txcourse: skipped {why}", file=sys.stderr)
    for why in lines.flagged:
        print(f"txcourse: warning: {why}", file=sys.stderr)


def _check_unknown_words(kept: Sequence[tuple[int, str, str]], src_tok: Any, strict: bool) -> dict[int, list[str]]:
    """The words of each line outside the source vocabulary, named on stderr (--strict refuses them)."""
    unknown = {number: src_tok.unknown_words(model_input) for number, _, model_input in kept}
    flagged = [number for number, _, _ in kept if unknown[number]]
    if strict and flagged:
        first, others = flagged[0], flagged[1:]
        also = f" (also line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
        raise OptionError(
            f"--strict: line {first} has words outside the source vocabulary: {quote_each(unknown[first])}{also}",
            "--strict",
        )
    known = src_tok.vocab[src_tok.unk_id + 1 :]  # the special tokens come first
    hint = f"{len(known)} words, e.g. {quote_each(known[:6], most=6)}"
    for number in flagged:
        words = unknown[number]
        print(
            f"txcourse: warning: line {number}: {quote_each(words)} {'is' if len(words) == 1 else 'are'} not in the "
            f"source vocabulary ({hint}); translated as <unk>",
            file=sys.stderr,
        )
    return unknown


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


def _lines(n: int) -> str:
    return "the only line is" if n == 1 else f"all {n} lines are"


def _either(words: Sequence[str]) -> str:
    """'a, b or c'."""
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
