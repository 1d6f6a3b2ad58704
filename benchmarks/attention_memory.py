"""Peak memory of plain attention against tiled attention (online softmax) as the length n grows, PyTorch on the CPU.

Three ways to compute softmax(Q K^T / sqrt(d_k)) V for one head of n queries
and n keys of width d_k = 64, float32, no mask:

* ``plain``: :func:`txcourse.torch.scaled_dot_product_attention`, which forms
  the (n, n) scores and weights (Vaswani et al. 2017, Eq. (1));
* ``tiled``: :func:`txcourse.torch.tiled_attention` with blocks of b keys, whose
  largest intermediate is (n, b) (online softmax: Milakov and Gimelshein 2018;
  Rabe and Staats 2021; Dao et al. 2022);
* ``torch_sdpa``: PyTorch's own ``F.scaled_dot_product_attention``; the script
  also records which kernel it ran (the ``aten::`` ops the profiler saw).

How memory is measured, and why so: ``tracemalloc`` does not see PyTorch's
allocations (they are made in C++), and ``torch.cuda.max_memory_allocated``
exists only on a GPU. So every (method, n) runs in a fresh subprocess that
builds its inputs, runs the method once on a tiny input (kernels and their
code pages loaded), resets the process's peak resident set size (Linux:
writing 5 to ``/proc/self/clear_refs`` resets ``VmHWM``), runs the method
once and reports ``VmHWM - VmRSS before the call``: the bytes the call made
resident at its peak, the output included. The subprocess runs with
``MALLOC_MMAP_THRESHOLD_=65536``: glibc then maps every block of 64 KiB or
more when it is allocated and returns it when it is freed, so the resident
size follows the tensors alive at each moment (with glibc's default, a
threshold that rises as blocks are freed, freed blocks stay in the heap and
the tiled loop's short-lived blocks pile up: about twice the live size at
n = 8192). Pages are 4 KiB and smaller blocks stay in the heap, so small n
read a few hundred KiB of noise; the (n, n) matrices dominate from n = 1024 on. Beside the measurement the table
gives the size of the largest intermediate by construction (plain: one
(n, n) float32 matrix; tiled: one (n, b) block), so the two can be compared.

    python benchmarks/attention_memory.py [--lengths 256 512 1024 2048 4096] [--block-size 128]
        [--out benchmarks/results/attention_memory.json] [--quick]

Writes the rows as JSON (``--out``) and prints a Markdown table with the
ratio plain / tiled. One CPU thread; the numbers do not depend on the
machine's speed, only on its allocator (glibc here).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

D_K = 64
MMAP_THRESHOLD = 65536  # glibc: blocks of 64 KiB or more are mapped on allocation and returned on free
METHODS = ("plain", "tiled", "torch_sdpa")
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "attention_memory.json"


def rss_now() -> int:
    """Resident set size of this process now, in bytes (Linux /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak_rss() -> None:
    """Start a new high-water mark: Linux >= 4.0 resets VmHWM when 5 is written to clear_refs."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak_rss() -> int:
    """Peak resident set size (VmHWM) of this process since the last reset, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")  # pragma: no cover - not Linux


def attention(method: str, block_size: int):
    """The function that computes the output of Eq. (1) by ``method``."""
    import torch.nn.functional as F

    import txcourse.torch as txt

    if method == "plain":
        return lambda q, k, v: txt.scaled_dot_product_attention(q, k, v)[0]
    if method == "tiled":
        return lambda q, k, v: txt.tiled_attention(q, k, v, block_size=block_size)
    return F.scaled_dot_product_attention


def worker(method: str, n: int, block_size: int) -> None:
    """Runs in a subprocess: measure one call, print one JSON line."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    run = attention(method, block_size)
    q, k, v = (torch.randn(1, 1, n, D_K) for _ in range(3))  # (B, H, n, d_k) each
    small = torch.randn(1, 1, 8, D_K)  # (1, 1, 8, d_k)
    run(small, small, small)  # load the kernels before the baseline
    reset_peak_rss()
    before = rss_now()
    out = run(q, k, v)  # (1, 1, n, d_k)
    peak = peak_rss() - before
    print(json.dumps({"method": method, "n": n, "peak_bytes": max(peak, 0), "out_sum": float(out.sum())}))


def measure(method: str, n: int, block_size: int) -> dict:
    command = [sys.executable, __file__, "--worker", method, str(n), "--block-size", str(block_size)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD)}
    result = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return json.loads(result.stdout.strip().splitlines()[-1])


def sdpa_kernels() -> list[str]:
    """The aten ops F.scaled_dot_product_attention ran for a float32 CPU input without a mask."""
    import torch
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile

    q = torch.randn(1, 1, 256, D_K)  # (B, H, T, d_k)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        F.scaled_dot_product_attention(q, q, q)
    return sorted({e.key for e in prof.key_averages() if "attention" in e.key or "softmax" in e.key})


def largest_intermediate(method: str, n: int, block_size: int) -> int | None:
    """Bytes of the largest tensor the method forms, by construction (None: not known for PyTorch's kernel)."""
    if method == "plain":
        return n * n * 4  # the (n, n) scores; the weights are another of the same size
    if method == "tiled":
        return n * min(block_size, n) * 4  # one (n, b) block of scores
    return None


def table(rows: list[dict], lengths: list[int]) -> str:
    by = {(r["method"], r["n"]): r for r in rows}
    lines = [
        "| n | plain: (n, n) matrix | plain: peak | tiled: (n, b) block | tiled: peak | torch_sdpa: peak | plain / tiled |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in lengths:
        p, t, s = by[("plain", n)], by[("tiled", n)], by[("torch_sdpa", n)]
        ratio = p["peak_bytes"] / max(t["peak_bytes"], 1)
        lines.append(
            f"| {n} | {mib(p['largest_intermediate_bytes'])} | {mib(p['peak_bytes'])} | "
            f"{mib(t['largest_intermediate_bytes'])} | {mib(t['peak_bytes'])} | {mib(s['peak_bytes'])} | {ratio:.1f} |"
        )
    return "\n".join(lines)


def mib(x: int) -> str:
    return f"{x / 2**20:.2f} MiB"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096])
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--quick", action="store_true", help="lengths 64 and 256 only: checks the script")
    parser.add_argument("--worker", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]), args.block_size)
        return {}
    import torch

    lengths = [64, 256] if args.quick else args.lengths
    rows = []
    for n in lengths:
        for method in METHODS:
            row = measure(method, n, args.block_size)
            row["largest_intermediate_bytes"] = largest_intermediate(method, n, args.block_size)
            rows.append(row)
    result = {
        "command": "python benchmarks/attention_memory.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "what": "peak resident bytes of one attention call (VmHWM - VmRSS before), one head, d_k=64, float32, "
        f"no mask, batch 1, 1 thread, each (method, n) in a fresh process with MALLOC_MMAP_THRESHOLD_={MMAP_THRESHOLD}",
        "d_k": D_K,
        "block_size": args.block_size,
        "torch": torch.__version__,
        "machine": f"{platform.machine()} {platform.system()} {platform.release()}",
        "torch_sdpa_cpu_kernels": sdpa_kernels(),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(table(rows, lengths))
    print(f"F.scaled_dot_product_attention on this CPU ran: {', '.join(result['torch_sdpa_cpu_kernels'])}")
    print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
