"""Training tokens/s of the numbers model with 1 process vs N processes (torchrun, gloo on the CPU).

Runs ``txcourse train --framework torch --task numbers`` (the task's default
model) once as one process and once under ``torchrun --nproc-per-node N``
with the same global batch, and prints the target tokens per second of the
second history window (the first holds the start-up and first steps) side by
side, with their ratio. On a CPU the N processes share the cores: expect
little or no speed-up (the point of the CPU runs is the equivalence,
tests/training/test_distributed.py); on a machine with N GPUs add ``--device cuda``.

    python benchmarks/distributed_throughput.py [--procs 2] [--steps 60] [--batch-size 64] [--threads 1]
        [--device cpu] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(procs: int, steps: int, batch_size: int, threads: int, device: str) -> float:
    """Target tokens/s of the last history window of one run with ``procs`` processes."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable]
        if procs > 1:
            cmd += [
                "-m",
                "torch.distributed.run",
                "--nproc-per-node",
                str(procs),
                "--master-addr",
                "127.0.0.1",
                "--master-port",
                str(_port()),
            ]
        cmd += [
            "-m",
            "txcourse",
            "train",
            "--framework",
            "torch",
            "--task",
            "numbers",
            "--steps",
            str(steps),
            "--batch-size",
            str(batch_size),
            "--log-every",
            str(steps // 2),
            "--no-progress",
            "--out",
            out,
            "--threads",
            str(threads),
            "--device",
            device,
        ]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
        if result.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{result.stderr[-3000:]}")
        records = [json.loads(line) for line in (Path(out) / "history.jsonl").read_text().splitlines()]
        return float(records[-1]["tokens_per_s"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--procs", type=int, default=2, help="processes of the data-parallel run (default 2)")
    parser.add_argument("--steps", type=int, default=60, help="optimizer steps per run (two history windows)")
    parser.add_argument("--batch-size", type=int, default=64, help="the global batch, the same in both runs")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per process")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda with --procs GPUs")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args()
    if args.procs < 2:
        parser.error(f"--procs must be at least 2 (it is compared with 1 process), got {args.procs}")
    if args.steps < 4 or args.steps % 2:
        parser.error(f"--steps must be an even number >= 4 (two history windows), got {args.steps}")
    if args.batch_size % args.procs:
        parser.error(f"--batch-size {args.batch_size} must be a multiple of --procs {args.procs}")
    one = measure(1, args.steps, args.batch_size, args.threads, args.device)
    many = measure(args.procs, args.steps, args.batch_size, args.threads, args.device)
    cores = os.cpu_count()
    print(
        f"numbers model, torch, global batch {args.batch_size}, {args.steps} steps, {args.threads} thread(s) "
        f"per process, device {args.device}, {cores} CPU core(s), load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'processes':>10} {'target tokens/s':>16}")
    print(f"{1:>10} {one:>16.0f}")
    print(f"{args.procs:>10} {many:>16.0f}")
    print(f"ratio {args.procs} / 1: {many / one:.2f}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "procs": args.procs,
                    "tokens_per_s": {"1": one, str(args.procs): many},
                    "ratio": many / one,
                    "batch_size": args.batch_size,
                    "steps": args.steps,
                    "threads": args.threads,
                    "device": args.device,
                    "cpu_count": cores,
                },
                indent=1,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
