"""Exact match of the shipped ``dates`` checkpoints on the task's test split, overall and by phrasing.

The chapter "Reordering: dates" (book/dates.md) computes the same table on the page; this script writes
it to benchmarks/results/dates_exact_match.json for the slides and the closing note, with each
checkpoint's sha256, so a number quoted from the file can be traced to the weights that gave it.
The checkpoints are made by ``make dates-checkpoints`` (mk/dates.mk).

    python benchmarks/dates_exact_match.py [--threads 1] [--json benchmarks/results/dates_exact_match.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from txcourse.backends import backend, set_threads
from txcourse.data import get_task
from txcourse.data.dates import PHRASINGS
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.evaluation.metrics import exact_match_by_group
from txcourse.evaluation.translate import evaluate

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("seq2seq", "bahdanau", "transformer")


def score(kind: str) -> dict:
    path = ROOT / "book" / "data" / f"dates-{kind}-torch.npz"
    fw = backend("torch")
    model, meta = fw.load_model(str(path))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    splits = get_task(meta["task"]["name"], **meta["task"]["kwargs"])
    result = evaluate(fw, model, splits.test, src_tok, tgt_tok)
    groups = exact_match_by_group(
        splits.metadata["phrasing"]["test"], result["hypotheses"], [t for _, t in splits.test]
    )
    return {
        "checkpoint": str(path.relative_to(ROOT)),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "steps": meta["step"],
        "test_pairs": len(splits.test),
        "exact_match": result["exact_match"],
        "chrf": result["chrf"],
        "by_phrasing": {name: {"count": g.count, "exact_match": g.exact_match} for name, g in groups.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "dates_exact_match.json")
    args = parser.parse_args()
    set_threads(args.threads, ["torch"])
    results = {kind: score(kind) for kind in KINDS}
    print("| phrasing | " + " | ".join(KINDS) + " |\n| --- |" + " ---: |" * len(KINDS))
    print("| all (test split) | " + " | ".join(f"{100 * results[k]['exact_match']:.1f}%" for k in KINDS) + " |")
    for name in PHRASINGS:
        cells = [f"{100 * results[k]['by_phrasing'][name]['exact_match']:.1f}%" for k in KINDS]
        print(f"| {name} | " + " | ".join(cells) + " |")
    args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
