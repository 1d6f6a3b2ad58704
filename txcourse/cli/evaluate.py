"""``txcourse evaluate``: score a checkpoint on a split of its task (exact match, BLEU, chrF, by length; by
digit count and phrasing for ``numbers``, by phrasing for ``dates``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, Optional

from txcourse.cli.checks import check_json_target
from txcourse.cli.frameworks import add_checkpoint_options, start_model
from txcourse.cli.options import count
from txcourse.errors import TxcourseError

__all__ = ["add_arguments", "evaluate_command"]


def add_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``txcourse evaluate`` and its options to the ``txcourse`` parser's subcommands."""
    p = subparsers.add_parser("evaluate", help="score a checkpoint on a split of its task")
    add_checkpoint_options(p)
    p.add_argument("--split", choices=("train", "valid", "test"), default="test")
    p.add_argument("--limit", type=count(1), default=None, help="score only the first N pairs")
    p.add_argument("--json", type=Path, default=None, help="also write the scores here")
    p.add_argument(
        "--per-digit",
        type=count(0),
        default=200,
        metavar="N",
        help="numbers task: also score N fresh numbers of every digit count (default 200; 0: off)",
    )
    p.add_argument(
        "--per-phrasing",
        type=count(0),
        default=60,
        metavar="N",
        help="numbers task: also score N fresh numbers written each way people write them ('one "
        "hundred five', 'a thousand and one', 'twelve hundred' ...), as translate reads them "
        "(default 60; 0: off)",
    )
    return p


def evaluate_command(args: argparse.Namespace) -> int:
    """Score the checkpoint on a split of its task, print the tables and write --json; exit status 0."""
    from txcourse.data import get_task
    from txcourse.evaluation.metrics import format_length_table
    from txcourse.evaluation.translate import evaluate

    if args.json is not None:
        check_json_target(args.json)
    fw, model, meta, src_tok, tgt_tok = start_model(args)
    task = meta.get("task")
    if not task:
        raise TxcourseError(f"checkpoint {str(args.checkpoint)!r} does not record its task", "--checkpoint")
    splits = get_task(task["name"], **task["kwargs"])
    pairs = splits[args.split][: args.limit]
    result = evaluate(
        fw, model, pairs, src_tok, tgt_tok, beam_size=args.beam, device=args.device, length_in_tokens=True
    )
    kind = meta["model"]["kind"]
    print(
        f"{kind} ({meta['framework']}), {task['name']} {args.split} ({len(pairs)} pairs), "
        f"beam {args.beam}: exact match {100 * result['exact_match']:.2f}%, BLEU {result['bleu']:.2f}, "
        f"chrF {result['chrf']:.2f}"
    )
    result["length_unit"] = _length_unit(src_tok)  # --json: what by_length's low and high count
    print(format_length_table({kind: result["by_length"]}, key=_length_heading(src_tok)))
    scoring = (fw, model, splits, src_tok, tgt_tok)
    by_digits = _numbers_by_digits(args, kind, scoring) if task["name"] == "numbers" and args.per_digit else None
    by_phrasing = _numbers_by_phrasing(args, scoring) if task["name"] == "numbers" and args.per_phrasing else None
    if task["name"] == "dates":  # the split's own pairs, by the phrasing each source is written in
        by_phrasing = _dates_by_phrasing(splits, args.split, pairs, result["hypotheses"])
    if args.json:
        args.json.write_text(json.dumps(_summary(result, by_digits, by_phrasing), indent=1))
    return 0


def _length_heading(src_tok: Any) -> str:
    """The length table's heading: lengths in the tokens the model reads, e.g. "source length (char tokens)"."""
    return f"source length ({_length_unit(src_tok)})"


def _length_unit(src_tok: Any) -> str:
    """What a source's length counts: the tokens of the source tokenizer (char, word or bpe)."""
    return f"{src_tok.kind} tokens"


def _numbers_by_digits(args: argparse.Namespace, kind: str, scoring: tuple) -> dict[str, Any]:
    """The numbers task: exact match on fresh numbers of every digit count, and on the round ones, printed."""
    from txcourse.evaluation.metrics import format_length_table
    from txcourse.evaluation.translate import evaluate_by_digit_count

    by_digits = evaluate_by_digit_count(*scoring, per_count=args.per_digit, beam_size=args.beam, device=args.device)
    print(
        f"\nby digit count, {args.per_digit} fresh numbers each (what users type: 'nine' as well as "
        f"'nine hundred thousand'): mean exact match {100 * by_digits['exact_match']:.2f}%"
    )
    round_ = by_digits["round"]
    print(format_length_table({kind: by_digits["by_digits"]}, key="digits"))
    print(
        f"round numbers ('forty thousand', 'one hundred thousand': every one of the range with one or two "
        f"significant digits, {round_.count}): exact match {100 * round_.exact_match:.2f}%"
    )
    print(
        "in the training split: "
        + ", ".join(f"{100 * share:.0f}% of the {d}-digit" for d, share in by_digits["seen"].items() if d != "round")
        + f" numbers (every number below 1000 is trained on by design), {100 * by_digits['seen']['round']:.0f}% "
        f"of the round ones (one or two significant digits: 'forty thousand', 'one hundred thousand')"
    )
    return by_digits


def _numbers_by_phrasing(args: argparse.Namespace, scoring: tuple) -> dict[str, Any]:
    """The numbers task: exact match on fresh numbers written each way people write them, printed as a table."""
    from txcourse.evaluation.translate import evaluate_by_phrasing

    by_phrasing = evaluate_by_phrasing(*scoring, count=args.per_phrasing, beam_size=args.beam, device=args.device)
    print(
        f"\nby phrasing, {args.per_phrasing} fresh numbers written each way that applies, read as translate "
        f"reads them ({by_phrasing['refused']} phrasings refused):"
    )
    print("| phrasing | numbers | exact match |\n| --- | ---: | ---: |")
    for name, bucket in by_phrasing.items():
        if name != "refused":
            print(f"| {name} | {bucket.count} | {100 * bucket.exact_match:.2f}% |")
    return by_phrasing


def _summary(result: dict[str, Any], by_digits: Optional[dict], by_phrasing: Optional[dict]) -> dict[str, Any]:
    """What ``--json`` writes: the scores, by length, and by digit count and phrasing where they were scored."""
    summary = {k: v for k, v in result.items() if k not in ("by_length", "hypotheses")}
    summary["by_length"] = [dataclasses.asdict(b) for b in result["by_length"]]
    if by_digits is not None:
        summary["by_digits"] = [
            {
                "digits": b.low,
                "count": b.count,
                "exact_match": b.exact_match,
                "seen_in_training": by_digits["seen"][b.low],
            }
            for b in by_digits["by_digits"]
        ]
        round_ = by_digits["round"]
        summary["round_numbers"] = {
            "count": round_.count,
            "exact_match": round_.exact_match,
            "seen_in_training": by_digits["seen"]["round"],
        }
    if by_phrasing is not None:
        summary["by_phrasing"] = {
            name: (value if name == "refused" else {"count": value.count, "exact_match": value.exact_match})
            for name, value in by_phrasing.items()
        }
    return summary


def _dates_by_phrasing(splits, split: str, pairs, hypotheses) -> dict:
    """The dates task: exact match of the scored pairs by the phrasing of their source, printed as a table."""
    from txcourse.evaluation.metrics import exact_match_by_group

    phrasings = splits.metadata["phrasing"][split][: len(pairs)]
    scores = exact_match_by_group(phrasings, hypotheses, [t for _, t in pairs])
    print(f"\nby phrasing of the English source ({split} split):")
    print("| phrasing | dates | exact match |\n| --- | ---: | ---: |")
    for name, score in scores.items():
        print(f"| {name} | {score.count} | {100 * score.exact_match:.2f}% |")
    return scores
