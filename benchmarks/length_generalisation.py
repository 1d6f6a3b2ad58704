"""Week 2's measurement: do positions learned on short inputs carry over to longer ones?

A tiny Transformer (PyTorch, one thread) trains for each ``TransformerConfig.positions``
("sinusoidal", "learned", "rope", "alibi") on the same task, with the same seed and
budget: inputs of 2 to 12 letters. The test split adds inputs of 13 to 24 letters, never
seen in training; exact match (greedy decoding) is reported by source-length bucket.
Press et al. (2022) measured this for language models (ALiBi extrapolates, sinusoids do
not); this is the encoder-decoder version on a toy task, so whichever wins here is what
this run measured, not a law.

Every model trains for a fixed number of optimizer steps, so the numbers do not depend on
how busy the machine is. Writes benchmarks/results/length_generalisation.json (read by
the book's week 2) and prints the table.

    python benchmarks/length_generalisation.py [--task copy] [--steps 2000] [--quick]

``--quick`` is a smoke run (a few steps, a few sentences, results in a temporary file
unless --out is given): it checks that the script runs, not what it measures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from txcourse.backends import backend, set_threads
from txcourse.config import POSITIONS
from txcourse.data.prepare import prepare_task
from txcourse.evaluation.translate import translate
from txcourse.registry import default_model_config
from txcourse.training import TrainConfig

RESULTS = Path(__file__).parent / "results" / "length_generalisation.json"
TRAIN_LENGTHS = (2, 12)  # source lengths seen in training
LONG_MAX = 24  # the test split reaches this many letters
BUCKETS = ((2, 12), (13, 16), (17, 20), (21, 24))  # source-length buckets of the report
MODEL = dict(
    d_model=64, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=128, dropout=0.0, max_len=64
)  # tiny; max_len covers the longest test target (24 letters + <sos>/<eos>) in every variant


def bucket_of(length: int) -> str:
    return next(f"{low}-{high}" for low, high in BUCKETS if low <= length <= high)


def run(task: str, steps: int, sizes: tuple[int, int, int], seed: int, progress: bool) -> dict:
    """Train one model per kind of positions and measure exact match by source-length bucket."""
    prepared = prepare_task(
        task,
        min_len=TRAIN_LENGTHS[0],
        max_len=TRAIN_LENGTHS[1],
        long_max_len=LONG_MAX,
        long_test_fraction=0.75,
        sizes=sizes,
        seed=seed,
    )
    fw = backend("torch")
    models = {}
    for positions in tqdm(POSITIONS, desc="positions", disable=not progress, file=sys.stderr):
        fw.set_seed(seed)
        config = default_model_config(
            "transformer",
            prepared.src_tokenizer.vocab_size,
            prepared.tgt_tokenizer.vocab_size,
            {**MODEL, "positions": positions},
        )
        train = TrainConfig(
            steps=steps,
            batch_size=64,
            warmup_steps=min(400, steps),
            lr_factor=1.0,
            seed=seed,
            device="cpu",
            log_every=max(1, steps // 10),
            progress=progress,
        )
        trainer = fw.Trainer(fw.build_model("transformer", config), "transformer", config, prepared.train, train)
        start = time.perf_counter()
        history = trainer.fit()
        seconds = time.perf_counter() - start
        test = prepared.splits.test
        hypotheses = translate(fw, trainer.model, [s for s, _ in test], prepared.src_tokenizer, prepared.tgt_tokenizer)
        counts: dict[str, list[int]] = {f"{low}-{high}": [0, 0] for low, high in BUCKETS}
        for (source, reference), hypothesis in zip(test, hypotheses):
            bucket = counts[bucket_of(len(source.split()))]
            bucket[0] += 1
            bucket[1] += hypothesis == reference
        models[positions] = {
            "steps": trainer.step,
            "train_seconds": round(seconds, 1),
            "final_loss": history[-1]["loss"] if history else None,
            "buckets": {
                name: {"count": n, "exact_match": right / n if n else None} for name, (n, right) in counts.items()
            },
        }
    return models


def format_table(models: dict) -> str:
    """Markdown: one row per source-length bucket, one column per kind of positions (exact match, %)."""
    names = list(models)
    lines = ["| source length | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for low, high in BUCKETS:
        key = f"{low}-{high}"
        seen = " (trained)" if high <= TRAIN_LENGTHS[1] else ""
        cells = []
        for name in names:
            bucket = models[name]["buckets"][key]
            cells.append("-" if bucket["exact_match"] is None else f"{100 * bucket['exact_match']:.1f}")
        lines.append(f"| {key}{seen} (n={models[names[0]]['buckets'][key]['count']}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="copy", choices=("copy", "reverse"))
    parser.add_argument("--steps", type=int, default=2000, help="optimizer steps per model (batch 64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 steps, 40 test sentences")
    parser.add_argument("--out", type=Path, default=None, help=f"results file (default {RESULTS}; --quick: none)")
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bars on stderr")
    args = parser.parse_args(argv)
    set_threads(1, ["torch"])
    steps, sizes = (3, (256, 8, 40)) if args.quick else (args.steps, (20000, 200, 1600))
    start = time.perf_counter()
    models = run(args.task, steps, sizes, args.seed, progress=not args.no_progress)
    result = {
        "command": "python benchmarks/length_generalisation.py"
        + (" --quick" if args.quick else "")
        + ("" if args.task == "copy" else f" --task {args.task}")
        + ("" if args.quick or args.steps == 2000 else f" --steps {args.steps}"),
        "task": args.task,
        "train_lengths": list(TRAIN_LENGTHS),
        "test_max_length": LONG_MAX,
        "sizes": list(sizes),
        "steps": steps,
        "seed": args.seed,
        "model": MODEL,
        "framework": "torch",
        "threads": 1,
        "seconds": round(time.perf_counter() - start, 1),
        "models": models,
    }
    out = args.out if args.out is not None else (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{args.task}: exact match (%) by source length; trained on lengths {TRAIN_LENGTHS[0]}-{TRAIN_LENGTHS[1]}")
    print(format_table(models))
    for name, m in models.items():
        print(f"{name}: {m['steps']} steps in {m['train_seconds']:.0f} s, final loss {m['final_loss']}")


if __name__ == "__main__":
    main()
