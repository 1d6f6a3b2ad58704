"""Batched greedy decoding as ``txcourse translate`` runs it: this tree against a baseline tree, side by side.

Each variant is a fresh process (``PYTHONPATH`` = its tree) that loads a ``numbers`` checkpoint, translates
``--count`` fresh numbers once to warm up, then once timed; the variants alternate, ``--rounds`` times, at each
``--threads``. Printed: the median numbers/s by the clock and by the process's CPU time (steadier on a shared
machine at one thread), the ratio to the first variant, and a hash of the outputs, which must agree. Issue 34, item 4.

    git worktree add /tmp/txcourse-base <commit>   # or: git archive <commit> txcourse | tar -x -C /tmp/txcourse-base
    python benchmarks/decode_speed.py --baseline /tmp/txcourse-base [--count 4000] [--rounds 3] [--threads 1 2]

A variant is ``name:framework:tree:batch`` (tree ``base`` or ``this``; batch: ``translate``'s batch_size, 0 for its
default); the default compares the baseline at its default batch with this tree's, in both frameworks. TensorFlow
runs the checkpoint's weights converted by ``txcourse.convert.torch_to_tf``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = Path(__file__).resolve().parents[1]
CHECKPOINT = HERE / "book" / "data" / "numbers-transformer-torch.npz"
DEFAULT_VARIANTS = ["torch-base:torch:base:0", "torch:torch:this:0", "tf-base:tf:base:0", "tf:tf:this:0"]


def worker(args: argparse.Namespace) -> None:
    """One variant in this process: translate args.count numbers (warm-up, then timed); print rates and a hash."""
    import numpy as np

    from txcourse.backends import backend, set_threads
    from txcourse.data.numbers import numbers_to_words
    from txcourse.data.prepare import tokenizers_from_meta
    from txcourse.evaluation.translate import translate

    set_threads(args.threads_one, [args.framework])
    fw = backend(args.framework)
    model, meta = fw.load_model(args.checkpoint)
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    numbers = np.random.default_rng(0).integers(0, 1_000_000, size=args.count)
    sources = [numbers_to_words(int(n), "en") for n in numbers]
    extra = {"batch_size": args.batch} if args.batch else {}
    translate(fw, model, sources, src_tok, tgt_tok, **extra)  # warm-up: traces, allocations
    wall, cpu = time.perf_counter(), time.process_time()
    outputs = translate(fw, model, sources, src_tok, tgt_tok, **extra)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    digest = hashlib.sha256("\n".join(outputs).encode()).hexdigest()[:12]
    print(json.dumps({"wall": args.count / wall, "cpu": args.count / cpu, "hash": digest}))


def tf_checkpoint(folder: str) -> str:
    """The numbers checkpoint's weights in a TensorFlow checkpoint (this tree's converter)."""
    sys.path[:0] = [str(HERE), str(HERE / "tests")]
    from support.checkpoints import tf_twin

    return str(tf_twin(CHECKPOINT, Path(folder) / "numbers-tf.npz"))


def run(variant: str, threads: int, args: argparse.Namespace, checkpoints: dict) -> dict:
    """One fresh process for ``variant`` at ``threads``."""
    _, framework, tree, batch = variant.split(":")
    root = str(HERE) if tree == "this" else args.baseline
    command = [sys.executable, __file__, "--worker", "--framework", framework, "--threads-one", str(threads)]
    command += ["--batch", batch, "--count", str(args.count), "--checkpoint", checkpoints[framework]]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": root})
    if done.returncode:
        raise SystemExit(f"{variant} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="a txcourse tree to compare with (a worktree or an extracted commit)")
    parser.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS, help="name:framework:base|this:batch")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--count", type=int, default=4000, help="numbers translated per timed pass")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--framework", help=argparse.SUPPRESS)
    parser.add_argument("--threads-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--checkpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if any(v.split(":")[2] == "base" for v in args.variants) and not args.baseline:
        parser.error("--baseline is required by the variants that run the baseline tree")
    with tempfile.TemporaryDirectory() as folder:
        checkpoints = {"torch": str(CHECKPOINT)}
        if any(v.split(":")[1] == "tf" for v in args.variants):
            checkpoints["tf"] = tf_checkpoint(folder)
        for threads in args.threads:
            runs: dict[str, list[dict]] = {v: [] for v in args.variants}
            for _ in range(args.rounds):  # alternate the variants: each round sees the same machine
                for variant in args.variants:
                    runs[variant].append(run(variant, threads, args, checkpoints))
            report(threads, runs, args.variants)


def report(threads: int, runs: dict, variants: list) -> None:
    """Medians and ratios to the first variant of each framework, one line per variant."""
    print(f"{threads} thread(s), load average {os.getloadavg()[0]:.1f}, {len(runs[variants[0]])} rounds")
    first: dict[str, str] = {}
    for variant in variants:
        first.setdefault(variant.split(":")[1], variant)
        wall = statistics.median(r["wall"] for r in runs[variant])
        cpu = statistics.median(r["cpu"] for r in runs[variant])
        base = runs[first[variant.split(":")[1]]]
        ratio_wall = wall / statistics.median(r["wall"] for r in base)
        ratio_cpu = cpu / statistics.median(r["cpu"] for r in base)
        hashes = sorted({r["hash"] for r in runs[variant]})
        print(
            f"  {variant:28s} {wall:7.0f} numbers/s (x{ratio_wall:.2f})   by CPU time {cpu:7.0f}/s (x{ratio_cpu:.2f})"
            f"   outputs {' '.join(hashes)}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
