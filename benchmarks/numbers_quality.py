"""Issue 12's quality target: `txcourse train --task numbers` with its defaults, on 2 CPU threads,
must reach >= 99.5% exact match in every digit-count bucket (1 to 6 digits, fresh numbers; and, our
addition, on the round numbers) within 3 minutes of training, in both frameworks.

For each framework this runs the command line exactly as a user would
(``txcourse train --task numbers --framework FW`` with no other option, in this
process, limited to ``--threads`` CPU threads), then scores the checkpoint on
``--per-digit`` fresh numbers of every digit count (numbers not in the
training split where enough exist: every number below 1000 is trained on by
design), on every round number with one or two significant digits, and on the
test split. Prints a table, checks the targets and writes
benchmarks/results/numbers_quality.json. The checkpoints stay in
runs/bench-numbers-<framework>/ (``txcourse evaluate`` and ``translate`` read them).

    python benchmarks/numbers_quality.py [--framework torch tf] [--threads 2] [--per-digit 200]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import time
from pathlib import Path

from txcourse.backends import backend, set_threads
from txcourse.cli import main as txcourse
from txcourse.data import get_task
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.evaluation.translate import evaluate, evaluate_by_digit_count
from txcourse.registry import FRAMEWORKS

RESULTS = Path(__file__).parent / "results"
TARGET_EXACT_MATCH = 0.995  # in every digit-count bucket
TARGET_SECONDS = 180.0  # of training


def run(framework: str, per_digit: int, out: Path) -> dict:
    argv = ["train", "--task", "numbers", "--framework", framework, "--out", str(out), "--overwrite", "--no-progress"]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as said:
        txcourse(argv)
    wall = time.perf_counter() - start
    fw = backend(framework)
    model, meta = fw.load_model(str(out / "model.npz"))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    splits = get_task("numbers", **meta["task"]["kwargs"])
    digits = evaluate_by_digit_count(fw, model, splits, src_tok, tgt_tok, per_count=per_digit)
    test = evaluate(fw, model, splits.test, src_tok, tgt_tok)
    return {
        "framework": framework,
        "command": "txcourse " + " ".join(argv),
        "steps": meta["step"],
        "train_seconds": float(re.search(r" in (\d+) s", said.getvalue()).group(1)),
        "wall_seconds": wall,
        "train_config": meta["train_config"],
        "printed": said.getvalue().strip(),
        "by_digits": [
            {"digits": b.low, "count": b.count, "exact_match": b.exact_match, "seen_in_training": digits["seen"][b.low]}
            for b in digits["by_digits"]
        ],
        "round_numbers": {"count": digits["round"].count, "exact_match": digits["round"].exact_match},
        "test_exact_match": test["exact_match"],
        "test_chrf": test["chrf"],
        "test_pairs": len(splits.test),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=list(FRAMEWORKS), choices=FRAMEWORKS)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads per framework (default 2)")
    parser.add_argument("--per-digit", type=int, default=200, help="fresh numbers per digit count (default 200)")
    args = parser.parse_args()
    set_threads(args.threads, args.framework)
    rows = [run(fw, args.per_digit, Path("runs") / f"bench-numbers-{fw}") for fw in args.framework]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "numbers_quality.json").write_text(json.dumps(rows, indent=1))
    digits = [b["digits"] for b in rows[0]["by_digits"]]
    print(
        f"`txcourse train --task numbers` with its defaults, {args.threads} CPU threads; exact match on "
        f"{args.per_digit} fresh numbers per digit count (greedy decoding)"
    )
    print(
        "| framework | steps | training (s) | "
        + " | ".join(f"{d} digit{'s' * (d > 1)}" for d in digits)
        + " | round numbers | test split | target |"
    )
    print("|---" * (len(digits) + 6) + "|")
    for r in rows:
        worst = min([b["exact_match"] for b in r["by_digits"]] + [r["round_numbers"]["exact_match"]])
        met = worst >= TARGET_EXACT_MATCH and r["train_seconds"] <= TARGET_SECONDS
        print(
            f"| {r['framework']} | {r['steps']} | {r['train_seconds']:.0f} | "
            + " | ".join(f"{100 * b['exact_match']:.1f}%" for b in r["by_digits"])
            + f" | {100 * r['round_numbers']['exact_match']:.1f}% ({r['round_numbers']['count']}) | "
            f"{100 * r['test_exact_match']:.2f}% | >= {100 * TARGET_EXACT_MATCH:.1f}% in every bucket within "
            f"{TARGET_SECONDS:.0f} s: {'met' if met else 'NOT met'} |"
        )
    print(
        "in the training split: "
        + ", ".join(f"{100 * b['seen_in_training']:.0f}% of the {b['digits']}-digit" for b in rows[0]["by_digits"])
        + " numbers"
    )


if __name__ == "__main__":
    main()
