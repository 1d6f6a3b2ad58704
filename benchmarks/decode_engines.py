"""txcourse's decoding vs an inference engine: PyTorch, TensorFlow and CTranslate2 (float32, int8) on the same
weights and the same numbers, one after the other in one run (issue 34; book: appendix "Serving").

The weights are those of ``--checkpoint`` (the shipped numbers Transformer): PyTorch reads them, TensorFlow
gets them through ``txcourse.convert.torch_to_tf``, CTranslate2 through ``txcourse export``. The inputs are
``--count`` numbers drawn uniformly from 0-999,999 (seed 0), written in English words; the outputs are
decoded greedily. Each engine runs in a process of its own (TensorFlow fixes its thread pools when it
starts), at each thread count of ``--threads``: first a sweep of batch sizes on the first ``--sweep`` inputs,
then every input at the best batch size, ``--passes`` times (the best pass counts). Throughput is numbers per
second, tokenization and detokenization included, loading excluded. txcourse decodes through
:func:`txcourse.evaluation.translate.translate` (sources sorted by length, then cut into batches); CTranslate2 through
``Translator.translate_batch`` with ``max_batch_size`` (its own batching: sorted by length). "2 workers x 1
thread" is CTranslate2 with two translators' worth of replicas (``inter_threads=2``) running batches in parallel.

Checked on the way, and printed: the share of outputs identical to txcourse PyTorch's and of correct ones
(``numbers_to_words(n, "ko")``); the largest gap between CTranslate2's int8 and float32 teacher-forced
log-probabilities; and beam search (beam 4, 1,000 numbers): txcourse's length penalty (Wu et al. 2016)
against CTranslate2's own (log P / |Y|^alpha) and against the exported model's re-ranking.

    python benchmarks/decode_engines.py [--count 20000] [--threads 1 2] [--passes 2] [--quick]
        [--json benchmarks/results/decode_engines.json]

Timings on a machine shared with other work mean little on their own: compare the rows of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if __name__ == "__main__":  # run as a script from anywhere: import the txcourse of this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from txcourse.data import numbers_to_words

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "book" / "data" / "numbers-transformer-torch.npz"
BATCHES = {"torch": (64, 128, 256, 512), "tf": (64, 128, 256, 512), "ct2": (16, 32, 64, 128)}
ENGINES = {  # name: (kind, CTranslate2 compute type, workers)
    "txcourse torch": ("torch", None, 1),
    "txcourse tf": ("tf", None, 1),
    "CTranslate2 float32": ("ct2", "float32", 1),
    "CTranslate2 int8": ("ct2", "int8", 1),
    "CTranslate2 float32, 2 workers x 1 thread": ("ct2", "float32", 2),
    "CTranslate2 int8, 2 workers x 1 thread": ("ct2", "int8", 2),
}


def numbers(count: int) -> list[int]:
    return [int(n) for n in np.random.default_rng(0).integers(0, 1_000_000, count)]


def _txcourse_decoder(kind: str, checkpoint: Path, threads: int):
    """A function batch_size -> translate(texts) for txcourse's own decoding on ``kind``'s framework."""
    from txcourse.backends import backend, set_threads
    from txcourse.data.prepare import tokenizers_from_meta
    from txcourse.evaluation.translate import translate

    set_threads(threads, [kind])
    torch_fw = backend("torch")
    model, meta = torch_fw.load_model(str(checkpoint))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    fw = torch_fw
    if kind == "tf":  # the same weights in the Keras twin
        import tensorflow as tf

        from txcourse.convert import torch_to_tf

        fw = backend("tf")
        keras_model = fw.build_model("transformer", meta["model"]["config"])
        keras_model(tf.constant([[4, 5, 6]]), tf.constant([[1, 4]]))  # builds the weights
        torch_to_tf(model, keras_model)
        model = keras_model
    return lambda batch, texts: translate(fw, model, texts, src_tok, tgt_tok, batch_size=batch)


def _engine_decoder(folder: Path, compute_type: str, threads: int, workers: int):
    """The same for CTranslate2: its translate_batch over every input, its own batching."""
    from txcourse.deploy.engine import load_exported

    _, model, _, src_tok, tgt_tok = load_exported(folder, threads=threads, compute_type=compute_type, workers=workers)

    def decode(batch: int, texts: list[str]) -> list[str]:
        sources = [[src_tok.vocab[i] for i in src_tok.encode(t)] for t in texts]
        longest = max(len(s) for s in sources)
        results = model.translator.translate_batch(
            sources,
            max_batch_size=batch,
            beam_size=1,
            max_decoding_length=min(model.config.max_len, 2 * longest + 10),
            min_decoding_length=0,
            max_input_length=0,
        )
        return [tgt_tok.decode([model.tgt_ids[w] for w in r.hypotheses[0]]) for r in results]

    return decode


def worker(engine: str, threads: int, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One engine at one thread count: the batch sweep, then every input at the best batch size."""
    kind, compute_type, workers = ENGINES[engine]
    if kind == "ct2":
        decode = _engine_decoder(folder, compute_type, 1 if workers > 1 else threads, workers)
    else:
        decode = _txcourse_decoder(kind, args.checkpoint, threads)
    texts = [numbers_to_words(n, "en") for n in numbers(args.count)]
    decode(BATCHES[kind][0], texts[:64])  # warm-up: first calls, graph tracing
    sweep = {}
    for batch in BATCHES[kind]:
        start = time.perf_counter()
        decode(batch, texts[: args.sweep])
        sweep[batch] = args.sweep / (time.perf_counter() - start)
    best = max(sweep, key=sweep.get)
    rates, outputs = [], None
    for _ in range(args.passes):
        start = time.perf_counter()
        outputs = decode(best, texts)
        rates.append(len(texts) / (time.perf_counter() - start))
    return {"engine": engine, "threads": threads, "batch": best, "sweep": sweep, "rates": rates, "outputs": outputs}


def beam_comparison(folder: Path, checkpoint: Path, count: int = 1000) -> dict[str, Any]:
    """Beam 4, alpha 0.6 on ``count`` numbers: txcourse, CTranslate2's own penalty, the exported re-ranking."""
    from txcourse.backends import backend
    from txcourse.deploy.engine import load_exported
    from txcourse.evaluation.translate import translate

    fw = backend("torch")
    model, _ = fw.load_model(str(checkpoint))
    engine, exported, _, src_tok, tgt_tok = load_exported(folder)
    drawn = numbers(count + 1)[1:]
    texts = [numbers_to_words(n, "en") for n in drawn]
    refs = [numbers_to_words(n, "ko") for n in drawn]
    ours = translate(fw, model, texts, src_tok, tgt_tok, beam_size=4, length_penalty_alpha=0.6)
    reranked = translate(engine, exported, texts, src_tok, tgt_tok, beam_size=4, length_penalty_alpha=0.6)
    own = exported.translator.translate_batch(
        [[src_tok.vocab[i] for i in src_tok.encode(t)] for t in texts], beam_size=4, length_penalty=0.6
    )
    own = [tgt_tok.decode([exported.tgt_ids[w] for w in r.hypotheses[0]]) for r in own]
    share = lambda a, b: sum(x == y for x, y in zip(a, b)) / len(a)  # noqa: E731
    return {
        "count": count,
        "reranked_equal_txcourse": share(reranked, ours),
        "own_penalty_equal_txcourse": share(own, ours),
        "correct": {"txcourse": share(ours, refs), "reranked": share(reranked, refs), "own_penalty": share(own, refs)},
    }


def int8_log_prob_gap(folder: Path, count: int = 1000) -> float:
    """The largest |log p_int8 - log p_float32| of a reference token, teacher-forced, on ``count`` numbers."""
    from txcourse.deploy.engine import load_exported

    drawn = numbers(count)
    scores = {}
    for compute_type in ("float32", "int8"):
        _, model, _, src_tok, tgt_tok = load_exported(folder, compute_type=compute_type)
        src = [[src_tok.vocab[i] for i in src_tok.encode(numbers_to_words(n, "en"))] for n in drawn]
        tgt = [[tgt_tok.vocab[i] for i in tgt_tok.encode(numbers_to_words(n, "ko"))] for n in drawn]
        scores[compute_type] = model.translator.score_batch(src, tgt, max_batch_size=128)
    return float(
        max(np.abs(np.subtract(a.log_probs, b.log_probs)).max() for a, b in zip(scores["float32"], scores["int8"]))
    )


def table(result: dict[str, Any]) -> str:
    """The markdown table: numbers/s, ratio to CTranslate2 float32 at the SAME thread count, identical, correct.

    A row marked * ran slower than the same engine at 1 thread: more threads than free cores (a loaded
    machine). Where the CTranslate2 float32 row itself is marked, its thread count gets no ratios ("n/a"):
    dividing by a collapsed rate would measure the load, not the engines.
    """
    rows = result["rows"]
    alone = {r["engine"]: max(r["rates"]) for r in rows if r["threads"] == 1}
    slowed = {
        (r["engine"], r["threads"]) for r in rows if r["threads"] > 1 and max(r["rates"]) < alone.get(r["engine"], 0)
    }
    reference = {
        r["threads"]: max(r["rates"])
        for r in rows
        if r["engine"] == "CTranslate2 float32" and ("CTranslate2 float32", r["threads"]) not in slowed
    }
    lines = [
        "| engine | threads | best batch | numbers/s | vs CTranslate2 float32, same threads | identical to txcourse torch "
        "| correct |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rate = max(r["rates"])
        mark = " *" if (r["engine"], r["threads"]) in slowed else ""
        ratio = f"{rate / reference[r['threads']]:.2f}x" if r["threads"] in reference else "n/a"
        lines.append(
            f"| {r['engine']} | {r['threads']} | {r['batch']} | {rate:,.0f}{mark} | {ratio} | "
            f"{100 * r['identical']:.2f}% | {100 * r['correct']:.2f}% |"
        )
    return "\n".join(lines) + (
        f"\n\n({result['count']:,} numbers; batch sizes swept on the first {result['sweep_inputs']:,} "
        f"({result.get('batch_sizes', BATCHES)}); best of {result['passes']} pass(es); ratios against CTranslate2 float32 at "
        "the same thread count, n/a where that row is *; * slower than the same engine at 1 thread)"
    )


def plan(threads: list[int], skip_tf: bool) -> list[tuple[str, int]]:
    """(engine, threads) in the order they run: every engine at each thread count; the 2-worker rows at 2."""
    runs = []
    for n in threads:
        for engine, (kind, _, workers) in ENGINES.items():
            if (kind == "tf" and skip_tf) or (workers > 1 and n != workers):
                continue
            runs.append((engine, n))
    return runs


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    """Export once, run every (engine, threads) in its own process in turn, then score them."""
    from txcourse.deploy.ctranslate2 import export_ctranslate2

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = export_ctranslate2(args.checkpoint, Path(tmp) / "ct2")
        rows = []
        for engine, threads in plan(args.threads, args.no_tf):
            print(f"running {engine}, {threads} thread(s) ...", file=sys.stderr, flush=True)
            rows.append(_spawn(engine, threads, folder, args))
        beam = beam_comparison(folder, args.checkpoint, 200 if args.quick else 1000)
        gap = int8_log_prob_gap(folder, 200 if args.quick else 1000)
    refs = [numbers_to_words(n, "ko") for n in numbers(args.count)]
    baseline = next(r["outputs"] for r in rows if r["engine"] == "txcourse torch")
    for r in rows:
        r["identical"] = sum(a == b for a, b in zip(r["outputs"], baseline)) / args.count
        r["correct"] = sum(a == b for a, b in zip(r["outputs"], refs)) / args.count
        del r["outputs"]
    return {
        "count": args.count,
        "passes": args.passes,
        "sweep_inputs": args.sweep,
        "batch_sizes": {kind: list(sizes) for kind, sizes in BATCHES.items()},
        "checkpoint": str(
            args.checkpoint.relative_to(ROOT) if args.checkpoint.is_relative_to(ROOT) else args.checkpoint
        ),
        "machine": {"cpu": platform.processor() or platform.machine(), "cpus": os.cpu_count()},
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "rows": rows,
        "beam_alpha_0.6": beam,
        "int8_max_log_prob_gap": gap,
        "int8_numbers": 200 if args.quick else 1000,
    }


def _spawn(engine: str, threads: int, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Run :func:`worker` in a fresh process (its own thread pools) and read back its JSON."""
    command = [sys.executable, __file__, "--worker", engine, str(threads), str(folder)]
    command += ["--count", str(args.count), "--sweep", str(args.sweep), "--passes", str(args.passes)]
    command += ["--checkpoint", str(args.checkpoint)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--count", type=int, default=20_000, help="numbers to translate (default 20,000)")
    parser.add_argument("--sweep", type=int, default=4000, help="inputs each batch size of the sweep decodes")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--passes", type=int, default=1, help="passes over every input at the best batch size")
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow out")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1,000 numbers, a short sweep")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "decode_engines.json")
    parser.add_argument("--worker", nargs=3, metavar=("ENGINE", "THREADS", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.count, args.sweep, args.passes = 1000, 300, 1
    if args.worker:
        engine, threads, folder = args.worker
        print(json.dumps(worker(engine, int(threads), Path(folder), args), ensure_ascii=False))
        return
    result = run_all(args)
    print(table(result))
    beam = result["beam_alpha_0.6"]
    print(
        f"\nbeam 4, alpha 0.6, {beam['count']:,} numbers: the exported model (CTranslate2's hypotheses re-ranked by "
        f"txcourse's penalty) equals txcourse on {100 * beam['reranked_equal_txcourse']:.1f}%; CTranslate2's own "
        f"penalty (log P / |Y|^alpha) on {100 * beam['own_penalty_equal_txcourse']:.1f}% (correct: txcourse "
        f"{100 * beam['correct']['txcourse']:.1f}%, own penalty {100 * beam['correct']['own_penalty']:.1f}%)"
    )
    print(f"int8 vs float32, teacher-forced log-probabilities: largest gap {result['int8_max_log_prob_gap']:.2e}")
    load = result["load_average"]
    print(f"load average before {load['before'][0]:.1f}, after {load['after'][0]:.1f} ({os.cpu_count()} CPUs)")
    if not args.quick:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
