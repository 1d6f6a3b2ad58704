"""Week 1's measurement: exact match by source length for the Transformer, the Bahdanau GRU
and the GRU without attention, trained with the same budget on the same split.

The default task copies sequences of 2 to 20 letters: the GRU without
attention must squeeze the whole sequence into one context vector, which is
what fails as sequences get longer (Cho et al. 2014; Bahdanau et al. 2015,
Fig. 2), while a model with attention can read each letter again when it
writes it. `--task reverse` is the same with the letters reversed (harder for
the Transformer, which must then locate the end of the source). The `numbers`
task spans too short a range of lengths (at most 11 source tokens, 9 words
with the hyphenated ones split); `--task numbers` measures it.

Every model trains for a fixed number of optimizer steps (`--steps`), so the
result does not depend on how fast or how busy the machine is; `--minutes`
adds a time cap for quick looks (then it does). Writes
benchmarks/results/length_curves.json (read by the book's week 1) and
benchmarks/results/accuracy_by_length.png, and prints the table.

    python benchmarks/length_curves.py [--framework torch] [--steps 1500] [--task copy]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from txcourse.backends import backend, set_threads
from txcourse.data.prepare import prepare_task
from txcourse.evaluation.metrics import LengthBucket, format_length_table
from txcourse.evaluation.translate import evaluate
from txcourse.notebook.plots import plot_accuracy_by_length, save_figure
from txcourse.registry import MODEL_KINDS, default_model_config
from txcourse.training import TrainConfig

RESULTS = Path(__file__).parent / "results"
MODELS = MODEL_KINDS
_SYMBOLS = dict(min_len=2, max_len=20, sizes=(20000, 500, 2000), long_test_fraction=0.0)
TASK_SETTINGS = {"copy": _SYMBOLS, "reverse": _SYMBOLS}
LR_FACTOR = {"transformer": 0.5, "bahdanau": 1.0, "seq2seq": 1.0}  # peak 2.2e-3 / 3.1e-3 / 3.1e-3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", default="torch")
    parser.add_argument("--task", default="copy", choices=("copy", "reverse", "numbers"))
    parser.add_argument("--steps", type=int, default=1500, help="optimizer steps per model (batch 64)")
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="also stop each model after this many minutes (default: no time cap)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads per framework (default: all)")
    args = parser.parse_args()
    if args.threads:
        set_threads(args.threads, [args.framework])
    task_kwargs = TASK_SETTINGS.get(args.task, {})
    prepared = prepare_task(args.task, **task_kwargs)
    fw = backend(args.framework)
    results: dict[str, list[LengthBucket]] = {}
    summary = {}
    for kind in MODELS:
        fw.set_seed(args.seed)
        config = default_model_config(kind, prepared.src_tokenizer.vocab_size, prepared.tgt_tokenizer.vocab_size)
        train = TrainConfig(
            steps=args.steps,
            batch_size=64,
            warmup_steps=400,
            lr_factor=LR_FACTOR[kind],
            seed=args.seed,
            log_every=100,
            max_seconds=None if args.minutes is None else 60 * args.minutes,
        )
        trainer = fw.Trainer(fw.build_model(kind, config), kind, config, prepared.train, train)
        start = time.perf_counter()
        trainer.fit()
        seconds = time.perf_counter() - start
        result = evaluate(fw, trainer.model, prepared.splits.test, prepared.src_tokenizer, prepared.tgt_tokenizer)
        results[kind] = result["by_length"]
        summary[kind] = {
            "steps": trainer.step,
            "train_seconds": seconds,
            "exact_match": result["exact_match"],
            "by_length": [[b.low, b.high, b.count, b.exact_match] for b in result["by_length"]],
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "length_curves.json").write_text(
        json.dumps(
            {
                "framework": args.framework,
                "steps": args.steps,
                "minutes": args.minutes,
                "task": args.task,
                "task_kwargs": task_kwargs,
                "models": summary,
            },
            indent=1,
        )
    )
    figure = plot_accuracy_by_length(results, title=f"{args.task} test split: exact match by source length")
    save_figure(figure, RESULTS / "accuracy_by_length.png")
    budget = f"{args.steps} steps" + ("" if args.minutes is None else f" or {args.minutes:g} min")
    print(f"{args.task}: exact match by source length (tokens), at most {budget} of training each ({args.framework})")
    print(format_length_table(results))
    for kind, s in summary.items():
        print(
            f"{kind}: {s['steps']} steps in {s['train_seconds']:.0f} s, overall exact match "
            f"{100 * s['exact_match']:.2f}%"
        )


if __name__ == "__main__":
    main()
