"""Every date, not a sample: translate every day of a ``dates`` checkpoint's years in every phrasing, and score each.

The inputs are every day of the checkpoint's ``[first_year, last_year]``
(1900-2099 by default: 73,049 days) in each of its phrasings
(:data:`txcourse.data.dates.PHRASINGS`, seven by default): 511,343 sources,
each :func:`~txcourse.data.dates.date_source`, each reference
:func:`~txcourse.data.dates.date_target` (the weekday named exactly when the
phrasing names it), as the task builds its pairs. They are decoded greedily in
batches (:func:`txcourse.evaluation.translate.translate`, as ``txcourse
translate`` does) by the PyTorch checkpoint, or with ``--framework tf`` by a
Keras model holding the same weights (:func:`txcourse.convert.torch_to_tf`).

Exact match (whitespace-insensitive, as
:func:`txcourse.evaluation.metrics.exact_match`) overall and by **class**:
the phrasing, the month, the weekday, the year's decade (1900s ... 2090s) and
the phrasing crossed with the month. Prints markdown tables (overall, by
phrasing, month, weekday and decade, the ``--worst`` classes with three
failures each: input, expected, got) and writes everything to ``--out`` as
JSON, with the decoding throughput (dates per second) and the load average
before and after.

Deterministic: the dates, their order, the batches and greedy decoding are
fixed; ``hypotheses_sha256`` fingerprints the outputs.

    python benchmarks/dates_exhaustive.py --checkpoint book/data/dates-transformer-torch.npz --threads 2
    python benchmarks/dates_exhaustive.py --checkpoint CHECKPOINT --framework tf --stride 97   # a quick run
    python benchmarks/dates_exhaustive.py --tables-from RESULT.json     # the tables of a saved run again
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # run as a script from anywhere: import the txcourse of this checkout
    sys.path.insert(0, str(ROOT))

from txcourse.data.dates import PHRASINGS, date_source, date_target  # noqa: E402
from txcourse.training.checkpoint import read_checkpoint_meta  # noqa: E402

EXAMPLES = 3  # failures shown per class
FRAMEWORKS = ("torch", "tf")
DIMENSIONS = ("phrasing", "month", "weekday", "decade", "phrasing x month")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def every_date(first_year: int, last_year: int, stride: int = 1) -> list[datetime.date]:
    """Every ``stride``-th day from 1 January ``first_year`` to 31 December ``last_year`` (both included)."""
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    if not 1 <= first_year <= last_year <= 9999:
        raise ValueError(f"need 1 <= first_year <= last_year <= 9999, got {first_year}, {last_year}")
    first = datetime.date(first_year, 1, 1)
    days = (datetime.date(last_year, 12, 31) - first).days + 1
    return [first + datetime.timedelta(days=k) for k in range(0, days, stride)]


def classes(date: datetime.date, phrasing: str) -> dict[str, str]:
    """The class of ``date`` written in ``phrasing`` along each of the :data:`DIMENSIONS`."""
    month = MONTHS[date.month - 1]
    return {
        "phrasing": phrasing,
        "month": month,
        "weekday": WEEKDAYS[date.weekday()],
        "decade": f"{date.year // 10 * 10}s",
        "phrasing x month": f"{phrasing} / {month}",
    }


def pairs(
    dates: Sequence[datetime.date], phrasings: Sequence[str], target_lang: str = "ko"
) -> tuple[list[tuple[datetime.date, str]], list[str], list[str]]:
    """Every (date, phrasing), date by date, with its source and its reference, as the task writes them."""
    items, sources, references = [], [], []
    for date in dates:
        targets = {weekday: date_target(date, target_lang, weekday) for weekday in (False, True)}
        for phrasing in phrasings:
            items.append((date, phrasing))
            sources.append(date_source(date, phrasing))
            references.append(targets[PHRASINGS[phrasing][2]])
    return items, sources, references


def same(hypothesis: str, reference: str) -> bool:
    """Equal up to whitespace: the per-sentence test of :func:`txcourse.evaluation.metrics.exact_match`."""
    return hypothesis.split() == reference.split()


def _bucket(count: int, correct: int) -> dict[str, Any]:
    return {"count": count, "correct": correct, "wrong": count - correct, "exact_match": correct / count}


def _spread(indices: list[int], examples: int) -> list[int]:
    """``examples`` of ``indices`` spread over them (first, middle, last for 3), in order."""
    if not indices:
        return []
    return sorted({indices[round(j * (len(indices) - 1) / max(1, examples - 1))] for j in range(examples)})


def score(
    items: Sequence[tuple[datetime.date, str]],
    sources: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[str],
    examples: int = EXAMPLES,
) -> dict[str, Any]:
    """Exact match overall and by each of the :data:`DIMENSIONS`, with ``examples`` failures per class.

    Returns:
        ``{"overall": bucket, "by": {dimension: {class: bucket + examples}}, "wrong": [[iso date, phrasing], ...]}``,
        a bucket being ``{"count", "correct", "wrong", "exact_match"}``, an example
        ``{"date", "phrasing", "input", "expected", "got"}``.
    """
    if not len(items) == len(sources) == len(hypotheses) == len(references):
        raise ValueError(
            f"items, sources, hypotheses and references must have the same length, got "
            f"{len(items)}, {len(sources)}, {len(hypotheses)}, {len(references)}"
        )
    if not items:
        raise ValueError("items is empty")
    counts: dict[str, dict[str, list[int]]] = {d: defaultdict(lambda: [0, 0]) for d in DIMENSIONS}
    failures: dict[str, dict[str, list[int]]] = {d: defaultdict(list) for d in DIMENSIONS}
    wrong = []
    for i, ((date, phrasing), hyp, ref) in enumerate(zip(items, hypotheses, references)):
        ok = same(hyp, ref)
        for dimension, key in classes(date, phrasing).items():
            counts[dimension][key][0] += 1
            counts[dimension][key][1] += ok
            if not ok:
                failures[dimension][key].append(i)
        if not ok:
            wrong.append([date.isoformat(), phrasing])
    by = {}
    for dimension in DIMENSIONS:
        by[dimension] = {}
        for key, (count, correct) in counts[dimension].items():
            shown = [
                {
                    "date": items[i][0].isoformat(),
                    "phrasing": items[i][1],
                    "input": sources[i],
                    "expected": references[i],
                    "got": hypotheses[i],
                }
                for i in _spread(failures[dimension][key], examples)
            ]
            by[dimension][key] = {**_bucket(count, correct), "examples": shown}
    return {"overall": _bucket(len(items), len(items) - len(wrong)), "by": by, "wrong": wrong}


def worst_classes(by: dict[str, dict[str, dict[str, Any]]], count: int = 10) -> list[list[str]]:
    """The ``count`` classes with a wrong date and the lowest exact match, as ``[dimension, class]`` (ties: more
    wrong first, then the order of :data:`DIMENSIONS`, then the class)."""
    flat = [(d, k) for d in DIMENSIONS for k in by.get(d, {}) if by[d][k]["wrong"]]
    flat.sort(
        key=lambda dk: (by[dk[0]][dk[1]]["exact_match"], -by[dk[0]][dk[1]]["wrong"], DIMENSIONS.index(dk[0]), dk[1])
    )
    return [list(dk) for dk in flat[:count]]


def evaluate_dates(
    translate_batch: Callable[[list[str]], list[str]],
    dates: Sequence[datetime.date],
    phrasings: Sequence[str],
    target_lang: str = "ko",
    batch_size: int = 2048,
    progress: bool = True,
    worst: int = 10,
    length: Optional[Callable[[str], int]] = len,
) -> dict[str, Any]:
    """Translate every (date, phrasing) with ``translate_batch``, ``batch_size`` sources at a time, and score.

    The sources go to ``translate_batch`` by ``length`` (default: characters, which a character model reads),
    shortest first (stable: ties keep their order), so that a batch holds sources of one length: no padding, and
    no row waits for a longer one; ``length=None`` keeps the order of the dates. The hypotheses are scored (and
    fingerprinted) in the order of the dates either way.

    Also returns the seconds spent writing the pairs, each batch's seconds and the dates per second after the
    first batch (warm-up, graph tracing), and ``hypotheses_sha256``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    tic = time.perf_counter()
    items, sources, references = pairs(dates, phrasings, target_lang)
    pairs_seconds = time.perf_counter() - tic
    order = list(range(len(sources)))
    if length is not None:
        order.sort(key=lambda i: length(sources[i]))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(sources), unit="date", file=sys.stderr, smoothing=0.1)
    hypotheses: list[str] = [""] * len(sources)
    seconds: list[float] = []
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        batch = [sources[i] for i in rows]
        tic = time.perf_counter()
        out = translate_batch(batch)
        seconds.append(time.perf_counter() - tic)
        if len(out) != len(batch):
            raise ValueError(f"translate_batch returned {len(out)} translations for {len(batch)} sources")
        for i, hypothesis in zip(rows, out):
            hypotheses[i] = hypothesis
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    sizes = [len(order[i : i + batch_size]) for i in range(0, len(order), batch_size)]
    timed = (sizes[1:], seconds[1:]) if len(seconds) > 1 else (sizes, seconds)
    scores = score(items, sources, hypotheses, references)
    return {
        "pairs_seconds": pairs_seconds,
        "decode_seconds": sum(seconds),
        "first_batch_seconds": seconds[0],
        "dates_per_second": sum(timed[0]) / max(sum(timed[1]), 1e-9),
        "hypotheses_sha256": hashlib.sha256("\n".join(hypotheses).encode("utf-8")).hexdigest(),
        **scores,
        "worst": worst_classes(scores["by"], worst),
    }


def load(
    checkpoint: str | os.PathLike, framework: str = "torch", threads: Optional[int] = None, device: str = "cpu"
) -> dict[str, Any]:
    """The model of a PyTorch ``dates`` checkpoint in ``framework`` (TensorFlow: its weights converted), its
    tokenizers and task arguments (threads set before any model is built)."""
    from txcourse.backends import backend, set_threads
    from txcourse.cli.frameworks import import_quietly
    from txcourse.data.prepare import tokenizers_from_meta

    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {list(FRAMEWORKS)}, got {framework!r}")
    meta = read_checkpoint_meta(checkpoint)
    if meta.get("task", {}).get("name") != "dates":
        raise ValueError(f"checkpoint {checkpoint} was trained on task {meta.get('task', {}).get('name')!r}, not dates")
    if meta["framework"] != "torch":
        raise ValueError(f"checkpoint {checkpoint} is a {meta['framework']} checkpoint; expected a PyTorch one")
    for name in ("torch", framework):
        import_quietly(name)  # TensorFlow's start-up log off the terminal, as in the command line
    if threads is not None:
        set_threads(threads, ["torch", framework])
    model, meta = backend("torch").load_model(str(checkpoint), device="cpu" if framework == "tf" else device)
    if framework == "tf":
        model = _keras_twin(model, meta)
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    return {
        "fw": backend(framework),
        "model": model,
        "meta": meta,
        "src_tok": src_tok,
        "tgt_tok": tgt_tok,
        "device": device,
    }


def _keras_twin(torch_model: Any, meta: dict[str, Any]) -> Any:
    """A Keras model of ``meta``'s kind and config holding ``torch_model``'s weights."""
    import numpy as np
    import tensorflow as tf

    import txcourse.tf.train as tf_train
    from txcourse.convert import torch_to_tf

    keras_model = tf_train.build_model(meta["model"]["kind"], meta["model"]["config"])
    ids = tf.constant(np.array([[3, 4, 5]]))
    keras_model(ids, ids)  # builds the weights
    torch_to_tf(torch_model, keras_model)
    return keras_model


def run(
    checkpoint: str | os.PathLike,
    framework: str = "torch",
    threads: Optional[int] = None,
    batch_size: int = 2048,
    stride: int = 1,
    progress: bool = True,
    worst: int = 10,
    device: str = "cpu",
    by_length: bool = True,
) -> dict[str, Any]:
    """Translate and score every ``stride``-th day of the checkpoint's years in each of its phrasings (by length,
    or with ``by_length`` False in the order of the dates: :func:`evaluate_dates`)."""
    from txcourse.evaluation.translate import translate

    load_before = _loadavg()
    start = time.perf_counter()
    loaded = load(checkpoint, framework, threads, device)
    load_seconds = time.perf_counter() - start
    kwargs = loaded["meta"]["task"].get("kwargs", {})
    first_year, last_year = int(kwargs.get("first_year", 1900)), int(kwargs.get("last_year", 2099))
    phrasings = list(kwargs.get("phrasings", PHRASINGS))
    target_lang = kwargs.get("target_lang", "ko")

    def translate_batch(batch: list[str]) -> list[str]:
        args = (loaded["fw"], loaded["model"], batch, loaded["src_tok"], loaded["tgt_tok"])
        return translate(*args, beam_size=1, batch_size=len(batch), device=device)

    dates = every_date(first_year, last_year, stride)
    length = (lambda source: len(loaded["src_tok"].encode(source))) if by_length else None
    result = evaluate_dates(translate_batch, dates, phrasings, target_lang, batch_size, progress, worst, length)
    meta = loaded["meta"]
    return {
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest(),
        "model": meta["model"]["kind"],
        "framework": framework,
        "framework_version": _version(framework),
        "step": meta.get("step"),
        "target_lang": target_lang,
        "years": [first_year, last_year],
        "phrasings": phrasings,
        "stride": stride,
        "dates": len(dates),
        "batch_size": batch_size,
        "order": "by length" if by_length else "dates",
        "threads": threads,
        "device": device,
        "decoding": "greedy",
        "cpu": _cpu(),
        "cpus": os.cpu_count(),
        "loadavg_before": load_before,
        "loadavg_after": _loadavg(),
        "wall_seconds": time.perf_counter() - start,
        "load_seconds": load_seconds,
        **result,
    }


def _version(framework: str) -> str:
    if framework == "torch":
        import torch

        return torch.__version__
    import tensorflow as tf

    return tf.__version__


def _loadavg() -> Optional[list[float]]:
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
    import platform

    return platform.machine()


def _pct(x: float) -> str:
    return f"{100 * x:.3f}%"


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or "(empty)"


def _table(title: str, buckets: dict[str, dict[str, Any]], keys: Sequence[str]) -> list[str]:
    lines = ["", f"| {title} | inputs | exact match | wrong |", "|---|---:|---:|---:|"]
    for key in keys:
        b = buckets[key]
        lines.append(f"| {key} | {b['count']:,} | {_pct(b['exact_match'])} | {b['wrong']:,} |")
    return lines


def tables(result: dict[str, Any]) -> str:
    """The markdown tables of one run."""
    o, by = result["overall"], result["by"]
    every = "every day" if result["stride"] == 1 else f"every {result['stride']}th day"
    before, after = result["loadavg_before"], result["loadavg_after"]
    load = f"; load average {before[0]:.2f} before, {after[0]:.2f} after" if before and after else ""
    lines = [
        f"**{result['model']} ({result['framework']})**, `{result['checkpoint']}` (step {result['step']}): {every} "
        f"of {result['years'][0]}-{result['years'][1]} ({result['dates']:,} dates) in {len(result['phrasings'])} "
        f"phrasings, English -> {result['target_lang']}, greedy, batch {result['batch_size']}, "
        f"threads {result['threads'] or 'default'}{load}",
        "",
        "| inputs | exact match | wrong | lowest phrasing | dates/s | wall (s) |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {o['count']:,} | {_pct(o['exact_match'])} | {o['wrong']:,} | "
        f"{_pct(min(b['exact_match'] for b in by['phrasing'].values()))} | {result['dates_per_second']:.0f} | "
        f"{result['wall_seconds']:.0f} |",
    ]
    lines += _table("phrasing", by["phrasing"], result["phrasings"])
    lines += _table("month", by["month"], [m for m in MONTHS if m in by["month"]])
    lines += _table("weekday", by["weekday"], [w for w in WEEKDAYS if w in by["weekday"]])
    lines += _table("decade", by["decade"], sorted(by["decade"]))
    lines += ["", f"The {len(result['worst'])} worst classes (with a wrong date):", ""]
    lines += ["| class | inputs | exact match | wrong | input -> got (expected) |", "|---|---:|---:|---:|---|"]
    for dimension, key in result["worst"]:
        b = by[dimension][key]
        shown = "; ".join(f"{_cell(e['input'])} -> {_cell(e['got'])} ({_cell(e['expected'])})" for e in b["examples"])
        lines.append(f"| {dimension}: {key} | {b['count']:,} | {_pct(b['exact_match'])} | {b['wrong']:,} | {shown} |")
    return "\n".join(lines)


def write_json(result: dict[str, Any], path: str | os.PathLike) -> None:
    """Indented JSON, the list of wrong (date, phrasing) on one line."""
    marker = "__WRONG__"
    text = json.dumps({**result, "wrong": marker}, indent=1, ensure_ascii=False)
    text = text.replace(json.dumps(marker), json.dumps(result["wrong"], ensure_ascii=False))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text + "\n", encoding="utf-8")


def main(argv: Optional[list[str]] = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=ROOT / "book" / "data" / "dates-transformer-torch.npz",
        help="a PyTorch dates checkpoint (default: the shipped Transformer)",
    )
    parser.add_argument("--framework", choices=FRAMEWORKS, default="torch", help="tf: its weights in a Keras model")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads of the framework (default: its own)")
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument(
        "--dates-order",
        action="store_true",
        help="decode in the order of the dates, not by source length (slower: for a side-by-side timing)",
    )
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:i or mps")
    parser.add_argument("--stride", type=int, default=1, help="every STRIDE-th day (default 1: every day)")
    parser.add_argument("--worst", type=int, default=10, help="classes listed (default 10)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the JSON here (default, for a run of every day: "
        "benchmarks/results/dates_exhaustive_<model>_<framework>.json; none for a --stride run)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar on stderr")
    parser.add_argument("--tables-from", type=Path, default=None, metavar="JSON", help="print a saved run's tables")
    args = parser.parse_args(argv)
    if args.tables_from:
        result = json.loads(args.tables_from.read_text(encoding="utf-8"))
        print(tables(result))
        return result
    result = run(
        args.checkpoint,
        args.framework,
        args.threads,
        args.batch_size,
        args.stride,
        not args.no_progress,
        args.worst,
        args.device,
        not args.dates_order,
    )
    result["command"] = "python benchmarks/dates_exhaustive.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(tables(result))
    out = args.out
    if out is None and args.stride == 1:
        out = ROOT / "benchmarks" / "results" / f"dates_exhaustive_{result['model']}_{args.framework}.json"
    if out is not None:
        write_json(result, out)
        print(f"\n(written to {out})")
    return result


if __name__ == "__main__":
    main()
