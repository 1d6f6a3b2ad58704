"""``txcourse evaluate``: score a checkpoint on a split of its task (exact match, BLEU, chrF, by length; by
digit count and phrasing for ``numbers``, by phrasing for ``dates``)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from txcourse.cli.checks import check_json_target
from txcourse.cli.frameworks import start_model

__all__ = ["evaluate_command"]


def evaluate_command(args: argparse.Namespace) -> int:
    from txcourse.data import get_task
    from txcourse.evaluation.metrics import format_length_table
    from txcourse.evaluation.translate import evaluate

    if args.json is not None:
        check_json_target(args.json)
    fw, model, meta, src_tok, tgt_tok = start_model(args)
    task = meta.get("task")
    if not task:
        raise ValueError(f"checkpoint {str(args.checkpoint)!r} does not record its task")
    splits = get_task(task["name"], **task["kwargs"])
    pairs = splits[args.split][: args.limit]
    result = evaluate(fw, model, pairs, src_tok, tgt_tok, beam_size=args.beam, device=args.device)
    print(
        f"{meta['model']['kind']} ({meta['framework']}), {task['name']} {args.split} ({len(pairs)} pairs), "
        f"beam {args.beam}: exact match {100 * result['exact_match']:.2f}%, BLEU {result['bleu']:.2f}, "
        f"chrF {result['chrf']:.2f}"
    )
    print(format_length_table({meta["model"]["kind"]: result["by_length"]}))
    by_digits = None
    if task["name"] == "numbers" and args.per_digit:
        from txcourse.evaluation.translate import evaluate_by_digit_count

        by_digits = evaluate_by_digit_count(
            fw, model, splits, src_tok, tgt_tok, per_count=args.per_digit, beam_size=args.beam, device=args.device
        )
        print(
            f"\nby digit count, {args.per_digit} fresh numbers each (what users type: 'nine' as well as "
            f"'nine hundred thousand'): mean exact match {100 * by_digits['exact_match']:.2f}%"
        )
        round_ = by_digits["round"]
        print(format_length_table({meta["model"]["kind"]: by_digits["by_digits"]}, key="digits"))
        print(
            f"round numbers ('forty thousand', 'one hundred thousand': every one of the range with one or two "
            f"significant digits, {round_.count}): exact match {100 * round_.exact_match:.2f}%"
        )
        print(
            "in the training split: "
            + ", ".join(
                f"{100 * share:.0f}% of the {d}-digit" for d, share in by_digits["seen"].items() if d != "round"
            )
            + f" numbers (every number below 1000 is trained on by design), {100 * by_digits['seen']['round']:.0f}% "
            f"of the round ones (one or two significant digits: 'forty thousand', 'one hundred thousand')"
        )
    by_phrasing = None
    if task["name"] == "numbers" and args.per_phrasing:
        from txcourse.evaluation.translate import evaluate_by_phrasing

        by_phrasing = evaluate_by_phrasing(
            fw, model, splits, src_tok, tgt_tok, count=args.per_phrasing, beam_size=args.beam, device=args.device
        )
        print(
            f"\nby phrasing, {args.per_phrasing} fresh numbers written each way that applies, read as translate "
            f"reads them ({by_phrasing['refused']} phrasings refused):"
        )
        print("| phrasing | numbers | exact match |\n| --- | ---: | ---: |")
        for name, bucket in by_phrasing.items():
            if name != "refused":
                print(f"| {name} | {bucket.count} | {100 * bucket.exact_match:.2f}% |")
    if task["name"] == "dates":  # the split's own pairs, by the phrasing each source is written in
        by_phrasing = _dates_by_phrasing(splits, args.split, pairs, result["hypotheses"])
    if args.json:
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
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


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
