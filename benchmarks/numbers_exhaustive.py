"""Every number, not a sample: translate all of 0 to 999,999 with a ``numbers`` checkpoint and score each one.

The source of ``n`` is ``numbers_to_words(n, "en")``, its reference
``numbers_to_words(n, target_lang)`` (the checkpoint's task kwargs; default
Korean), decoded greedily in batches with the framework the checkpoint was
written by. Exact match (whitespace-insensitive, as
:func:`txcourse.evaluation.metrics.exact_match`) overall, by digit count and by
**zero pattern**: the digit string with every non-zero digit written ``x``
(80011 -> ``x00xx``, 440040 -> ``xx00x0``, 0 -> ``0``; 64 classes in all),
which separates the numbers whose words skip a place ("eighty thousand and
eleven") from those that say every place. Prints markdown tables (overall, by
digit count, the ``--worst`` classes with three failures each) and writes
everything to ``--json``, with the wall time, the decoding throughput and the
load average before and after.

Deterministic: the numbers, their order, the batches and greedy decoding are
fixed; ``hypotheses_sha256`` fingerprints the outputs so two runs can be
compared (a different thread count or CPU may change a float and, rarely, a
token).

    python benchmarks/numbers_exhaustive.py book/data/numbers-transformer-torch.npz --threads 1 --no-progress \\
        --json benchmarks/results/numbers_exhaustive_transformer_torch.json
    python benchmarks/numbers_exhaustive.py CHECKPOINT --stride 97        # every 97th number: a quick run
    python benchmarks/numbers_exhaustive.py --tables-from RESULT.json     # the tables of a saved run again
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

if __name__ == "__main__":  # run as a script from anywhere: import the txcourse of this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from txcourse.data.numbers import digit_count, numbers_to_words, zero_pattern
from txcourse.training.checkpoint import read_checkpoint_meta

DEFAULT_LOW, DEFAULT_HIGH = 0, 999_999  # make_numbers_task's defaults
EXAMPLES = 3  # failures shown per class


def select_numbers(
    low: int = DEFAULT_LOW, high: int = DEFAULT_HIGH, stride: int = 1, limit: Optional[int] = None
) -> list[int]:
    """``low, low + stride, ...`` up to ``high`` (inclusive), the first ``limit`` of them when given."""
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1 or None, got {limit}")
    if not 0 <= low <= high:
        raise ValueError(f"need 0 <= low <= high, got low={low}, high={high}")
    numbers = range(low, high + 1, stride)
    return list(numbers if limit is None else numbers[:limit])


def same(hypothesis: str, reference: str) -> bool:
    """Equal up to whitespace: the per-sentence test of :func:`txcourse.evaluation.metrics.exact_match`."""
    return hypothesis.split() == reference.split()


def load(checkpoint: str | os.PathLike, threads: Optional[int] = None, device: str = "cpu") -> dict[str, Any]:
    """The checkpoint's framework, model, tokenizers and target language (threads set before any model is built)."""
    from txcourse.backends import backend, set_threads
    from txcourse.data.prepare import tokenizers_from_meta

    meta = read_checkpoint_meta(checkpoint)
    task = meta.get("task", {})
    if task.get("name") != "numbers":
        raise ValueError(f"checkpoint {checkpoint} was trained on task {task.get('name')!r}, expected 'numbers'")
    framework = meta["framework"]
    from txcourse.cli.frameworks import import_quietly

    import_quietly(framework)  # TensorFlow's start-up log off the terminal, as in the command line
    if threads is not None:
        set_threads(threads, [framework])
    fw = backend(framework)
    model, meta = fw.load_model(str(checkpoint), device=device)
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    kwargs = task.get("kwargs", {})
    return {
        "fw": fw,
        "model": model,
        "meta": meta,
        "src_tok": src_tok,
        "tgt_tok": tgt_tok,
        "device": device,
        "target_lang": kwargs.get("target_lang", "ko"),
        "low": kwargs.get("low", DEFAULT_LOW),
        "high": kwargs.get("high", DEFAULT_HIGH),
    }


def decode_all(
    loaded: dict[str, Any], sources: Sequence[str], batch_size: int = 512, progress: bool = True
) -> tuple[list[str], list[float]]:
    """Greedy translations of ``sources`` in order, ``batch_size`` at a time; also each batch's seconds."""
    from txcourse.evaluation.translate import translate

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    starts = range(0, len(sources), batch_size)
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(sources), unit="num", file=sys.stderr, smoothing=0.1)
    hypotheses: list[str] = []
    seconds: list[float] = []
    for start in starts:
        batch = sources[start : start + batch_size]
        tic = time.perf_counter()
        hypotheses += translate(
            loaded["fw"],
            loaded["model"],
            batch,
            loaded["src_tok"],
            loaded["tgt_tok"],
            beam_size=1,
            batch_size=len(batch),
            device=loaded["device"],
        )
        seconds.append(time.perf_counter() - tic)
        if progress:
            bar.update(len(batch))
    if progress:
        bar.close()
    return hypotheses, seconds


def throughput(batch_sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """Numbers per second after start-up: the first batch (warm-up, graph tracing) left out when there are others."""
    if len(seconds) > 1:
        batch_sizes, seconds = batch_sizes[1:], seconds[1:]
    return sum(batch_sizes) / sum(seconds)


def _bucket(count: int, correct: int) -> dict[str, Any]:
    return {"count": count, "correct": correct, "wrong": count - correct, "exact_match": correct / count}


def score(
    numbers: Sequence[int],
    sources: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[str],
    examples: int = EXAMPLES,
) -> dict[str, Any]:
    """Exact match overall, by digit count and by zero pattern, with ``examples`` failures per pattern.

    The failures shown are spread over the class's failures (first, middle, last for 3), in number order.

    Returns:
        ``{"overall": bucket, "by_digits": {d: bucket}, "by_pattern": {pattern: bucket + digits + examples},
        "wrong_numbers": [...]}``, a bucket being ``{"count", "correct", "wrong", "exact_match"}``.
    """
    if not len(numbers) == len(sources) == len(hypotheses) == len(references):
        raise ValueError(
            f"numbers, sources, hypotheses and references must have the same length, got "
            f"{len(numbers)}, {len(sources)}, {len(hypotheses)}, {len(references)}"
        )
    if not numbers:
        raise ValueError("numbers is empty")
    by_digits: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    by_pattern: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    failures: dict[str, list[int]] = defaultdict(list)  # indices, in order
    wrong = []
    for i, (n, hyp, ref) in enumerate(zip(numbers, hypotheses, references)):
        ok = same(hyp, ref)
        key = zero_pattern(n)
        for table, k in ((by_digits, digit_count(n)), (by_pattern, key)):
            table[k][0] += 1
            table[k][1] += ok
        if not ok:
            failures[key].append(i)
            wrong.append(n)
    patterns = {}
    for key in sorted(by_pattern, key=lambda k: (len(k), k)):
        fails = failures[key]
        picks = (
            sorted({fails[round(j * (len(fails) - 1) / max(1, examples - 1))] for j in range(examples)})
            if fails
            else []
        )
        patterns[key] = {
            **_bucket(*by_pattern[key]),
            "digits": len(key),
            "examples": [
                {"number": numbers[i], "source": sources[i], "got": hypotheses[i], "expected": references[i]}
                for i in picks[:examples]
            ],
        }
    return {
        "overall": _bucket(len(numbers), len(numbers) - len(wrong)),
        "by_digits": {d: _bucket(*by_digits[d]) for d in sorted(by_digits)},
        "by_pattern": patterns,
        "wrong_numbers": wrong,
    }


def worst_patterns(by_pattern: dict[str, dict[str, Any]], count: int = 15) -> list[str]:
    """The ``count`` patterns with the lowest exact match (ties: more wrong numbers first, then the key)."""
    return sorted(by_pattern, key=lambda k: (by_pattern[k]["exact_match"], -by_pattern[k]["wrong"], len(k), k))[:count]


def loadavg() -> Optional[list[float]]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def run(
    checkpoint: str | os.PathLike,
    threads: Optional[int] = None,
    batch_size: int = 512,
    stride: int = 1,
    limit: Optional[int] = None,
    progress: bool = True,
    worst: int = 15,
) -> dict[str, Any]:
    """Translate and score every ``stride``-th number of the checkpoint's range; everything as one dict."""
    load_before = loadavg()
    start = time.perf_counter()
    loaded = load(checkpoint, threads)
    load_seconds = time.perf_counter() - start
    tic = time.perf_counter()
    numbers = select_numbers(loaded["low"], loaded["high"], stride, limit)
    sources = [numbers_to_words(n, "en") for n in numbers]
    references = [numbers_to_words(n, loaded["target_lang"]) for n in numbers]
    words_seconds = time.perf_counter() - tic
    hypotheses, seconds = decode_all(loaded, sources, batch_size, progress)
    sizes = [len(sources[i : i + batch_size]) for i in range(0, len(sources), batch_size)]
    scores = score(numbers, sources, hypotheses, references)
    wall = time.perf_counter() - start
    meta = loaded["meta"]
    framework = meta["framework"]
    if framework == "torch":
        import torch

        version, used_threads = torch.__version__, torch.get_num_threads()
    else:
        import tensorflow as tf

        version, used_threads = tf.__version__, tf.config.threading.get_intra_op_parallelism_threads()
    return {
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest(),
        "model": meta["model"]["kind"],
        "framework": framework,
        "framework_version": version,
        "step": meta.get("step"),
        "target_lang": loaded["target_lang"],
        "range": [loaded["low"], loaded["high"]],
        "stride": stride,
        "limit": limit,
        "batch_size": batch_size,
        "threads": threads,
        "framework_threads": used_threads,
        "decoding": "greedy",
        "cpu": _cpu(),
        "cpus": os.cpu_count(),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "wall_seconds": wall,
        "load_seconds": load_seconds,
        "words_seconds": words_seconds,
        "decode_seconds": sum(seconds),
        "first_batch_seconds": seconds[0],
        "numbers_per_second": throughput(sizes, seconds),
        "hypotheses_sha256": hashlib.sha256("\n".join(hypotheses).encode("utf-8")).hexdigest(),
        **scores,
        "worst": worst_patterns(scores["by_pattern"], worst),
    }


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def tables(result: dict[str, Any]) -> str:
    """The markdown tables of one run."""
    o = result["overall"]
    every = "every number" if result["stride"] == 1 else f"1 number in {result['stride']} (stride {result['stride']})"
    before, after = result["loadavg_before"], result["loadavg_after"]
    load = f"; load average {before[0]:.2f} before, {after[0]:.2f} after" if before and after else ""
    lines = [
        f"**{result['model']} ({result['framework']})**, `{result['checkpoint']}`: {every} of "
        f"{result['range'][0]:,}-{result['range'][1]:,}"
        + (f" (the first {result['limit']:,})" if result["limit"] else "")
        + f", English -> {result['target_lang']}, greedy, batch {result['batch_size']}, "
        f"{result['framework_threads']} thread(s){load}",
        "",
        "| numbers | exact match | wrong | numbers/s | wall (s) |",
        "|---|---|---|---|---|",
        f"| {o['count']:,} | {_pct(o['exact_match'])} | {o['wrong']:,} | {result['numbers_per_second']:.0f} | "
        f"{result['wall_seconds']:.0f} |",
        "",
        "| digits | numbers | exact match | wrong |",
        "|---|---|---|---|",
    ]
    for d, b in result["by_digits"].items():
        lines.append(f"| {d} | {b['count']:,} | {_pct(b['exact_match'])} | {b['wrong']:,} |")
    failing = sum(b["wrong"] > 0 for b in result["by_pattern"].values())
    lines += [
        "",
        f"The {len(result['worst'])} worst zero patterns (x = a non-zero digit; {failing} of the "
        f"{len(result['by_pattern'])} patterns have a wrong number):",
        "",
        "| pattern | numbers | exact match | wrong | failures: number: got (expected) |",
        "|---|---|---|---|---|",
    ]
    for key in result["worst"]:
        b = result["by_pattern"][key]
        shown = "; ".join(
            f"{e['number']}: {_cell(e['got']) or '(empty)'} ({_cell(e['expected'])})" for e in b["examples"]
        )
        lines.append(f"| `{key}` | {b['count']:,} | {_pct(b['exact_match'])} | {b['wrong']:,} | {shown} |")
    return "\n".join(lines)


def write_json(result: dict[str, Any], path: str | os.PathLike) -> None:
    """Indented JSON, the long list of wrong numbers on one line."""
    marker = "__WRONG_NUMBERS__"
    text = json.dumps({**result, "wrong_numbers": marker}, indent=1, ensure_ascii=False)
    text = text.replace(json.dumps(marker), json.dumps(result["wrong_numbers"]))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text + "\n", encoding="utf-8")


def main(argv: Optional[list[str]] = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "checkpoint",
        nargs="?",
        default="book/data/numbers-transformer-torch.npz",
        help="a numbers checkpoint (default: the shipped Transformer)",
    )
    parser.add_argument("--threads", type=int, default=None, help="CPU threads of the framework (default: its own)")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--stride", type=int, default=1, help="translate every STRIDE-th number (default 1: all)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many numbers")
    parser.add_argument("--worst", type=int, default=15, help="zero-pattern classes listed (default 15)")
    parser.add_argument("--json", type=Path, default=None, help="write everything here")
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar on stderr")
    parser.add_argument("--quick", action="store_true", help="a smoke run: --stride 997 (for make bench BENCH_QUICK=1)")
    parser.add_argument(
        "--tables-from",
        type=Path,
        default=None,
        metavar="JSON",
        help="print the tables of a saved run and stop (translates nothing)",
    )
    args = parser.parse_args(argv)
    if args.tables_from:
        result = json.loads(args.tables_from.read_text(encoding="utf-8"))
        print(tables(result))
        return result
    if args.quick and args.stride == 1:
        args.stride = 997
    result = run(
        args.checkpoint,
        args.threads,
        args.batch_size,
        args.stride,
        args.limit,
        progress=not args.no_progress,
        worst=args.worst,
    )
    result["command"] = "python benchmarks/numbers_exhaustive.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(tables(result))
    if args.json:
        write_json(result, args.json)
        print(f"\n(written to {args.json})")
    return result


if __name__ == "__main__":
    main()
