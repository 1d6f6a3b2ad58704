"""Greedy decoding with the key/value cache vs recomputing the whole prefix at every step.

Prints a table of median times (alternating runs, same process) and the
speed-up ratio, and checks that both give the same tokens. PyTorch runs
eagerly; TensorFlow runs each decoding step as a ``tf.function`` graph,
the cached and the recomputing path alike (``--tf-eager`` adds rows for
eager decoding; ``--no-onednn`` runs TensorFlow's Eigen kernels instead of
oneDNN, whose fixed cost per call weighs on the cached path's small
matrix products).

    python benchmarks/decode_cache.py [--framework torch tf] [--lengths 16 64 128] [--repeats 5]
        [--threads N] [--tf-eager] [--no-onednn]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Iterator

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
from bench_config import bench_config

from txcourse.backends import backend, set_threads
from txcourse.registry import FRAMEWORKS

CONFIG = bench_config(64)


@contextlib.contextmanager
def execution(framework: str, eager: bool) -> Iterator[str]:
    """Run TensorFlow's decoders compiled (tf.function graphs) or eagerly; yields the mode's name."""
    if framework != "tf":
        yield "eager"
        return
    import tensorflow as tf

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(eager)
    try:
        yield "eager" if eager else "tf.function"
    finally:
        tf.config.run_functions_eagerly(before)


def time_decoding(framework: str, lengths: list[int], repeats: int, batch: int) -> list[dict]:
    fw = backend(framework)
    fw.set_seed(0)
    model = fw.build_model("transformer", CONFIG.to_dict())
    src = fw.to_tensor(np.random.default_rng(0).integers(4, 64, size=(batch, 32)))
    rows = []
    for length in lengths:
        # eos_id -1 never occurs: every run decodes exactly `length` tokens
        def run(use_cache: bool, length: int = length):
            return fw.greedy_decode(model, src, max_len=length, eos_id=-1, use_cache=use_cache)

        same = bool(np.array_equal(fw.to_numpy(run(True).tokens), fw.to_numpy(run(False).tokens)))
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(repeats):
            for use_cache in (False, True):  # alternate, so both see the same machine state
                start = time.perf_counter()
                run(use_cache)
                times[use_cache].append(time.perf_counter() - start)
        cached, full = statistics.median(times[True]), statistics.median(times[False])
        rows.append(
            {
                "framework": framework,
                "tokens": length,
                "cached_s": cached,
                "recompute_s": full,
                "speedup": full / cached,
                "same_tokens": same,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=list(FRAMEWORKS), choices=FRAMEWORKS)
    parser.add_argument("--lengths", nargs="+", type=int, default=[16, 64, 128])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads per framework (default: all)")
    parser.add_argument(
        "--tf-eager",
        action="store_true",
        help="also time TensorFlow decoding eagerly, step by step (tf.config.run_functions_eagerly)",
    )
    parser.add_argument(
        "--no-onednn",
        action="store_true",
        help="TensorFlow with its Eigen kernels instead of oneDNN (TF_ENABLE_ONEDNN_OPTS=0)",
    )
    args = parser.parse_args()
    if args.no_onednn:  # read when TensorFlow is imported, which backend("tf") does later
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    if args.threads:
        set_threads(args.threads, args.framework)
    print(
        f"greedy decoding, batch {args.batch}, source length 32, d_model {CONFIG.d_model}, "
        f"{CONFIG.num_encoder_layers}+{CONFIG.num_decoder_layers} layers, CPU ({args.threads or 'all'} threads); "
        f"median of {args.repeats}; mode: how both paths run (PyTorch eager; TensorFlow each decoding step "
        f"as a tf.function graph, or eager){'; TensorFlow without oneDNN' if args.no_onednn else ''}"
    )
    print("| framework | mode | output tokens | with cache (s) | recompute (s) | speed-up | same tokens |")
    print("|---|---|---|---|---|---|---|")
    for framework in args.framework:
        for eager in (False, True) if framework == "tf" and args.tf_eager else (False,):
            with execution(framework, eager) as mode:
                for row in time_decoding(framework, args.lengths, args.repeats, args.batch):
                    label = mode + (" (no oneDNN)" if framework == "tf" and args.no_onednn else "")
                    print(
                        f"| {row['framework']} | {label} | {row['tokens']} | {row['cached_s']:.3f} | "
                        f"{row['recompute_s']:.3f} | {row['speedup']:.2f}x | {row['same_tokens']} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
