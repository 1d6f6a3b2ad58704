"""Greedy decoding with the key/value cache vs recomputing the whole prefix at every step.

Prints a table of median times (alternating runs, same process) and the
speed-up ratio, and checks that both give the same tokens.

    python benchmarks/decode_cache.py [--framework torch tf] [--lengths 16 64 128] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from txcourse.config import TransformerConfig
from txcourse.experiment import backend

CONFIG = TransformerConfig(src_vocab_size=64, tgt_vocab_size=64, d_model=256, num_heads=4, num_encoder_layers=3,
                           num_decoder_layers=3, d_ff=1024, dropout=0.1, max_len=256)


def time_decoding(framework: str, lengths: list[int], repeats: int, batch: int) -> list[dict]:
    fw = backend(framework)
    fw.set_seed(0)
    model = fw.build_model("transformer", CONFIG.to_dict())
    src = fw.to_tensor(np.random.default_rng(0).integers(4, 64, size=(batch, 32)))
    rows = []
    for length in lengths:
        # eos_id -1 never occurs: every run decodes exactly `length` tokens
        def run(use_cache: bool):
            return fw.greedy_decode(model, src, max_len=length, eos_id=-1, use_cache=use_cache)

        same = bool(np.array_equal(fw.to_numpy(run(True).tokens), fw.to_numpy(run(False).tokens)))
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(repeats):
            for use_cache in (False, True):  # alternate, so both see the same machine state
                start = time.perf_counter()
                run(use_cache)
                times[use_cache].append(time.perf_counter() - start)
        cached, full = statistics.median(times[True]), statistics.median(times[False])
        rows.append({"framework": framework, "tokens": length, "cached_s": cached, "recompute_s": full,
                     "speedup": full / cached, "same_tokens": same})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=["torch", "tf"])
    parser.add_argument("--lengths", nargs="+", type=int, default=[16, 64, 128])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    print(f"greedy decoding, batch {args.batch}, source length 32, d_model {CONFIG.d_model}, "
          f"{CONFIG.num_encoder_layers}+{CONFIG.num_decoder_layers} layers; median of {args.repeats}")
    print("| framework | output tokens | with cache (s) | recompute (s) | speed-up | same tokens |")
    print("|---|---|---|---|---|---|")
    for framework in args.framework:
        for row in time_decoding(framework, args.lengths, args.repeats, args.batch):
            print(f"| {row['framework']} | {row['tokens']} | {row['cached_s']:.3f} | {row['recompute_s']:.3f} | "
                  f"{row['speedup']:.2f}x | {row['same_tokens']} |")


if __name__ == "__main__":
    main()
