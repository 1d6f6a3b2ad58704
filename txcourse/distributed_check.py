"""Check that data-parallel training computes the single-replica step. Book: appendix "Scaling up".

Trains a tiny Transformer (dropout 0) for a few steps on :func:`mixed_lengths`,
a synthetic set whose every batch has a short half and a long half, so the
replicas hold very different numbers of target tokens (n_0 != n_1): the
mean of per-replica mean losses then differs from the loss of the global
batch, and only the normalisation by the global token count reproduces the
single-replica step (:mod:`txcourse.training.distributed`).

Every logged step also scores a validation set (the Trainer's ``valid``),
which must agree as well.

An upper layer, like :mod:`txcourse.backends`: it runs the half a name
chooses, so it lives above the halves, outside the framework-free
:mod:`txcourse.training`.

Run (each writes ``OUT/<scenario>.npz``: the step and validation losses and the weights)::

    torchrun --nproc-per-node 2 -m txcourse.distributed_check --framework torch --out OUT  # 'full-2', 'cut-2'
    python -m txcourse.distributed_check --framework torch --out OUT                       # 'full-1', 'resumed-1'
    python -m txcourse.distributed_check --framework tf --replicas 2 --out OUT             # all four, TensorFlow

(``--no-resume`` skips 'cut-2' and 'resumed-1'.)
'cut-2' is a checkpoint of 2 replicas after half the steps; 'resumed-1'
continues it with one replica (when it exists) to the end. ``compare`` gives
the largest loss and weight differences of two scenarios; tests/training/test_distributed.py
requires them below 1e-5.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from txcourse.backends import backend, set_threads
from txcourse.data.batching import EncodedPairs
from txcourse.registry import FRAMEWORKS, default_model_config
from txcourse.training import TrainConfig
from txcourse.training.checkpoint import read_checkpoint

STEPS = 4
BATCH = 8
TINY = {"d_model": 16, "num_heads": 2, "d_ff": 32, "num_encoder_layers": 1, "num_decoder_layers": 1, "dropout": 0.0}
VOCAB = 12


def mixed_lengths(seed: int = 0) -> EncodedPairs:
    """16 pairs of target lengths 1, 9, 10 and 18 (4 each): sorted into batches of 8 by length, each batch is
    4 short rows then 4 long ones, so with 2 replicas one holds (1+1)*4 = 8 target tokens (with <eos>) and the
    other 10*4 = 40 (first batch), or 11*4 = 44 and 19*4 = 76 (second)."""
    rng = np.random.default_rng(seed)
    src, tgt = [], []
    for length in (1, 9, 10, 18):
        for _ in range(4):
            src.append(rng.integers(3, VOCAB, size=length, dtype=np.int64))
            tgt.append(rng.integers(3, VOCAB, size=length, dtype=np.int64))
    return EncodedPairs(src, tgt, np.arange(len(src)))


def _config(steps: int) -> TrainConfig:
    return TrainConfig(
        steps=steps, batch_size=BATCH, warmup_steps=2, lr_factor=0.02, log_every=1, progress=False, device="cpu", seed=0
    )


def _run(fw: Any, replicas: Any, steps: int, out: Path, name: str, resume: Path | None = None) -> None:
    """Train to ``steps`` (from the checkpoint ``resume`` if given) and, in the writing process, save the
    checkpoint ``out/name.npz`` with the step losses in its metadata."""
    model_config = default_model_config("transformer", VOCAB, VOCAB, TINY)
    fw.set_seed(0)
    with replicas.scope():
        trainer = fw.Trainer(
            fw.build_model("transformer", model_config),
            "transformer",
            model_config,
            mixed_lengths(),
            _config(steps),
            valid=mixed_lengths(seed=1),
        )
    if resume is not None:
        trainer.load(str(resume))
    records = trainer.fit()
    trainer.metadata["losses"] = [r["loss"] for r in records]
    trainer.metadata["valid_losses"] = [r["valid_loss"] for r in records]  # every replica scores the same weights
    trainer.metadata["first_step"] = records[0]["step"]
    if replicas.writer:
        trainer.save(str(out / f"{name}.npz"))


def run(framework: str, out: Path, replicas: int = 1, steps: int = STEPS, resume: bool = True) -> None:
    """The scenarios this process takes part in (see the module docstring); ``resume`` False: no 'cut-N'."""
    out.mkdir(parents=True, exist_ok=True)
    set_threads(1, [framework])
    fw = backend(framework)
    group = fw.data_parallel("cpu", replicas)  # TensorFlow: the logical CPUs before it initialises
    try:
        if framework == "tf" or group.count == 1:
            from txcourse.training.distributed import SINGLE

            _run(fw, SINGLE, steps, out, "full-1")
        if group.count > 1:
            _run(fw, group, steps, out, f"full-{group.count}")
            if resume:
                _run(fw, group, steps // 2, out, f"cut-{group.count}")
        cut = sorted(out.glob("cut-*.npz"))
        if (framework == "tf" or group.count == 1) and cut:
            from txcourse.training.distributed import SINGLE

            _run(fw, SINGLE, steps, out, "resumed-1", resume=cut[0])
    finally:
        fw.end_data_parallel()


def compare(a: Path, b: Path) -> dict[str, Any]:
    """The largest differences of two scenarios: ``loss`` and ``valid_loss`` (over the steps both logged) and
    ``weight`` with its name. The key projections' biases are left out: their gradient is 0 in exact arithmetic (softmax is
    shift-invariant, Eq. (1)), so Adam turns rounding noise into steps of about lr; they change no output."""
    (ma, wa), (mb, wb) = read_checkpoint(str(a)), read_checkpoint(str(b))
    first = max(ma["first_step"], mb["first_step"])
    la, lb = (np.array(m["losses"][first - m["first_step"] :]) for m in (ma, mb))
    va, vb = (np.array(m["valid_losses"][first - m["first_step"] :]) for m in (ma, mb))
    if la.shape != lb.shape or not len(la):
        raise ValueError(f"compare: {a} and {b} logged different steps ({len(la)} and {len(lb)} from step {first})")
    keep = [
        k
        for k in wa
        if k.startswith("model/") and wa[k].dtype.kind == "f" and not (k.endswith("w_k.bias") or k.endswith("w_k/bias"))
    ]
    if sorted(keep) != sorted(k for k in wb if k in keep) or not keep:
        raise ValueError(f"compare: {a} and {b} hold different weights")
    worst = max((float(np.abs(wa[k] - wb[k]).max()), k) for k in keep)
    return {
        "loss": float(np.abs(la - lb).max()),
        "valid_loss": float(np.abs(va - vb).max()),
        "weight": worst[0],
        "weight_name": worst[1],
        "steps": len(la),
        "losses": la.tolist(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m txcourse.distributed_check", description=__doc__.split("\n")[0])
    parser.add_argument("--framework", choices=FRAMEWORKS, required=True)
    parser.add_argument("--out", type=Path, required=True, help="folder for the scenario files")
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="TensorFlow: logical CPU replicas (torch: use torchrun --nproc-per-node)",
    )
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--no-resume", action="store_true", help="skip the 'cut-N' and 'resumed-1' scenarios")
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error(f"--steps must be at least 2 (the cut run takes half), got {args.steps}")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    run(args.framework, args.out, args.replicas, args.steps, resume=not args.no_resume)
    if args.framework == "tf" or "WORLD_SIZE" not in os.environ:
        for other in sorted(args.out.glob("*.npz")):
            if (
                other.stem not in ("full-1",)
                and not other.stem.startswith("cut")
                and (args.out / "full-1.npz").exists()
            ):
                print(other.stem, compare(args.out / "full-1.npz", other), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
