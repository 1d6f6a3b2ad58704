"""Beam search with the key/value cache vs recomputing the whole prefix at every step.

``beam_search`` runs the B x K beams of a batch as one batch of B*K rows.
For every beam size the cached and the recomputing search run in turn
(same process, alternating), with an end-of-sentence id that never occurs,
so every run decodes exactly ``--tokens`` tokens. The table gives the
median time per source sentence and the speed-up of the cache, and checks
that both searches return the same tokens (an untrained model: ties are
rare but the two paths round differently, so a mismatch is possible and
is reported, not raised). PyTorch runs eagerly; TensorFlow runs
each decoding step as a ``tf.function`` graph, both
paths alike (``--tf-eager`` adds rows for eager, step-by-step decoding).

    python benchmarks/beam_search.py [--framework torch tf] [--beams 1 4 8] [--tokens 32] [--repeats 5]
        [--batch 8] [--vocab 8000] [--threads N] [--quick] [--tf-eager]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
from bench_config import bench_config
from decode_cache import execution  # the benchmark next to this one: TensorFlow compiled or eager

from txcourse.backends import backend, set_threads
from txcourse.config import TransformerConfig
from txcourse.registry import FRAMEWORKS

SOURCE_LENGTH = 32


def make_config(vocab: int) -> TransformerConfig:
    return bench_config(vocab)


def time_beam_search(framework: str, beams: list[int], tokens: int, repeats: int, batch: int, vocab: int) -> list[dict]:
    fw = backend(framework)
    fw.set_seed(0)
    model = fw.build_model("transformer", make_config(vocab).to_dict())
    src = fw.to_tensor(np.random.default_rng(0).integers(4, vocab, size=(batch, SOURCE_LENGTH)))
    rows = []
    for k in beams:
        # eos_id -1 never occurs: every run decodes exactly `tokens` tokens
        def run(use_cache: bool, k: int = k):
            return fw.beam_search(model, src, beam_size=k, max_len=tokens, eos_id=-1, use_cache=use_cache)

        cached_out, full_out = run(True), run(False)  # also the warm-up
        same = bool(np.array_equal(fw.to_numpy(cached_out.tokens), fw.to_numpy(full_out.tokens)))
        length = fw.to_numpy(cached_out.tokens).shape[1]
        times: dict[bool, list[float]] = {True: [], False: []}
        for r in range(repeats):
            for use_cache in (False, True) if r % 2 == 0 else (True, False):  # alternate, and who goes first
                start = time.perf_counter()
                run(use_cache)
                times[use_cache].append(time.perf_counter() - start)
        cached, full = statistics.median(times[True]), statistics.median(times[False])
        rows.append(
            {
                "framework": framework,
                "beam": k,
                "tokens": length,
                "cached_ms": 1000 * cached / batch,
                "recompute_ms": 1000 * full / batch,
                "speedup": full / cached,
                "same_tokens": same,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=list(FRAMEWORKS), choices=FRAMEWORKS)
    parser.add_argument("--beams", nargs="+", type=int, default=[1, 4, 8])
    parser.add_argument("--tokens", type=int, default=None, help="output tokens per sentence (default 32; --quick 8)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs of each search (default 5; --quick 1)")
    parser.add_argument("--batch", type=int, default=None, help="source sentences (default 8; --quick 2)")
    parser.add_argument("--vocab", type=int, default=8000, help="source and target vocabulary size")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads per framework (default: all)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: short outputs, one repeat")
    parser.add_argument(
        "--tf-eager",
        action="store_true",
        help="also time TensorFlow decoding eagerly, step by step (tf.config.run_functions_eagerly)",
    )
    args = parser.parse_args()
    if args.threads:
        set_threads(args.threads)
    for key, full, quick in (("tokens", 32, 8), ("repeats", 5, 1), ("batch", 8, 2)):
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    if min(args.beams) < 1 or args.tokens < 1 or args.repeats < 1 or args.batch < 1:
        parser.error("--beams, --tokens, --repeats and --batch must be >= 1")
    cfg = make_config(args.vocab)
    print(
        f"\n### Beam search, {args.batch} sentences x {SOURCE_LENGTH} source tokens -> {args.tokens} output tokens "
        f"(beams batched: B x K rows), length penalty 0.6\n"
    )
    print(
        f"d_model {cfg.d_model}, {cfg.num_heads} heads, {cfg.num_encoder_layers}+{cfg.num_decoder_layers} layers, "
        f"d_ff {cfg.d_ff}, vocab {args.vocab}, float32, CPU ({args.threads or 'all'} threads); "
        f"median of {args.repeats} alternating runs; "
        f"speed-up = recompute / cached; mode: how both paths run (PyTorch eager; TensorFlow "
        f"each decoding step as a tf.function graph, or eager).\n"
    )
    print("| framework | mode | beam | with cache (ms/sentence) | recompute (ms/sentence) | speed-up | same tokens |")
    print("|---|---|---|---|---|---|---|")
    for framework in args.framework:
        for eager in (False, True) if framework == "tf" and args.tf_eager else (False,):
            with execution(framework, eager) as mode:
                for row in time_beam_search(framework, args.beams, args.tokens, args.repeats, args.batch, args.vocab):
                    print(
                        f"| {row['framework']} | {mode} | {row['beam']} | {row['cached_ms']:.1f} | "
                        f"{row['recompute_ms']:.1f} | {row['speedup']:.2f}x | {row['same_tokens']} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
