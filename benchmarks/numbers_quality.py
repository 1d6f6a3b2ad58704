"""Issue 3's quality target: exact match on the `numbers` English -> Korean test split after
at most a fixed training time (default 10 minutes) per framework, on this machine.

Writes benchmarks/results/numbers_quality.json and prints a table. The
checkpoints land in runs/bench-numbers-<framework>/ (``txcourse evaluate``
and ``txcourse translate`` read them).

    python benchmarks/numbers_quality.py [--framework torch tf] [--minutes 10]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from txcourse.experiment import backend, default_model_config, evaluate, prepare_task, set_threads
from txcourse.training import TrainConfig


RESULTS = Path(__file__).parent / "results"


def run(framework: str, minutes: float, steps: int, seed: int, lr_factor: float = 0.5, warmup: int = 400) -> dict:
    prepared = prepare_task("numbers")
    config = default_model_config("transformer", prepared.src_tokenizer.vocab_size, prepared.tgt_tokenizer.vocab_size)
    fw = backend(framework)
    fw.set_seed(seed)
    train = TrainConfig(steps=steps, batch_size=64, warmup_steps=warmup, lr_factor=lr_factor, seed=seed, log_every=100,
                        max_seconds=60 * minutes, progress=True)
    out = Path("runs") / f"bench-numbers-{framework}"
    metadata = {"task": {"name": "numbers", "kwargs": {}},
                "tokenizers": {"src": prepared.src_tokenizer.to_json(), "tgt": prepared.tgt_tokenizer.to_json()}}
    trainer = fw.Trainer(fw.build_model("transformer", config), "transformer", config, prepared.train, train,
                         history_path=str(out / "history.jsonl"), metadata=metadata)
    start = time.perf_counter()
    trainer.fit(checkpoint_path=str(out / "model.npz"))
    seconds = time.perf_counter() - start
    model = trainer.model
    result = evaluate(fw, model, prepared.splits.test, prepared.src_tokenizer, prepared.tgt_tokenizer)
    return {"framework": framework, "steps": trainer.step, "train_seconds": seconds,
            "exact_match": result["exact_match"], "bleu_char": result["bleu"], "chrf": result["chrf"],
            "test_pairs": len(prepared.splits.test),
            "by_length": [[b.low, b.high, b.count, b.exact_match] for b in result["by_length"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=["torch", "tf"])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--steps", type=int, default=100_000, help="upper bound; the time budget usually ends first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr-factor", type=float, default=0.5, help="scales Eq. (3); peak 2.2e-3 at d_model 128")
    parser.add_argument("--warmup", type=int, default=400)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads per framework (default: all)")
    args = parser.parse_args()
    if args.threads:
        set_threads(args.threads, args.framework)
    rows = [run(framework, args.minutes, args.steps, args.seed, args.lr_factor, args.warmup)
            for framework in args.framework]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "numbers_quality.json").write_text(json.dumps(rows, indent=1))
    print(f"numbers task, English -> Korean, Transformer (d_model 128, 2+2 layers), greedy decoding, "
          f"training budget {args.minutes:g} min")
    print("| framework | steps | training time (s) | exact match | chrF | BLEU (char) | target |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        target = 0.98 if r["framework"] == "torch" else 0.95
        print(f"| {r['framework']} | {r['steps']} | {r['train_seconds']:.0f} | {100 * r['exact_match']:.2f}% | "
              f"{r['chrf']:.2f} | {r['bleu_char']:.2f} | >= {100 * target:.0f}% "
              f"{'met' if r['exact_match'] >= target else 'NOT met'} |")


if __name__ == "__main__":
    main()
