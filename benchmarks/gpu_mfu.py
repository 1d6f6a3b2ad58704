"""Training throughput and model FLOP utilisation (MFU) of the base Transformer on CUDA GPUs (PyTorch).

The model is ``txcourse.torch.Transformer`` with the TransformerConfig
defaults (the paper's base model: d_model 512, 8 heads, 6+6 layers, d_ff
2048, vocabulary 37000 on each side, tied output layer), batch 64 x 128
source + 128 target tokens by default. One training step = forward, the
masked label-smoothed loss, backward and Adam, in train mode (dropout
0.1), in four variants:

    fp32                              the teaching path in float32 (TF32 matmuls only with --tf32)
    bf16 autocast                     the teaching path under torch.autocast(bfloat16)
    bf16 + fused                      TransformerConfig(fused=True): F.scaled_dot_product_attention
    bf16 + fused + torch.compile      the same model through torch.compile (forward and backward)

FLOP count (model FLOPs of one training step; a multiply-add is 2 FLOPs,
the backward pass of a matmul costs twice its forward: 2 + 4 = 6 per
multiply-add of the forward). B = batch, S = source positions, T = target
positions, d = d_model, F = d_ff, V = target vocabulary, L_e / L_d =
encoder / decoder layers.

1. Dense matmuls, 6 x (weights of the matrix) x (rows it multiplies):
     encoder layer:  W_q, W_k, W_v, W_o (d x d) and W_1, W_2 (d x F) on B*S rows
     decoder layer:  self-attention W_q, W_k, W_v, W_o, cross-attention W_q, W_o,
                     W_1, W_2 on B*T rows; cross-attention W_k, W_v on the B*S
                     rows of the encoder memory
     output layer:   d x V on B*T rows (tied to the target embedding; the
                     embedding lookups themselves are not matmuls: 0 FLOPs)
   dense = 6 B [ S (L_e (4 d^2 + 2 d F) + L_d 2 d^2) + T (L_d (6 d^2 + 2 d F) + d V) ]
   (the familiar 6 x parameters x tokens, with each weight matrix counted
   for the tokens it actually sees; biases, embeddings' lookups not counted)

2. Attention scores and weighted values: per attention sublayer Q K^T and
   A V cost 2 x T_q x T_k x d FLOPs each per sentence (all heads together,
   H x d_k = d), forward + backward 3 x: 12 x d x T_q x T_k x B:
   attention = 12 B d [ L_e S^2 + L_d (T^2 + T S) ]
   (encoder self S x S, decoder self T x T, cross T x S). The look-ahead
   mask hides half of the decoder's T x T scores, but a kernel given an
   explicit mask computes them all: counted in full, as PaLM's MFU does.

Not counted: biases, softmax, LayerNorm, dropout, the loss, Adam
(elementwise, memory-bound work).

MFU = (dense + attention) / step time / peak dense bf16 FLOP/s of the GPU,
from a table by device name (H100 SXM 989e12, H100 PCIe 756e12, H200
989e12, A100 312e12) or --peak-tflops. The fp32 row is divided by the same
bf16 peak: it shows how far float32 is from the tensor-core peak.
tokens/s counts source + target positions (B x (S + T)) per second.

Without a CUDA GPU the script prints that it skips and exits 0;
``--dry-run`` prints the formula and the counts only (runs anywhere).

Several GPUs: start it under ``torchrun --standalone --nproc-per-node N``
(book: appendix "Scaling up"). Each process drives GPU LOCAL_RANK with
``--batch`` sentences (the global batch is N x batch), the model wrapped in
``DistributedDataParallel`` (nccl; gradients all-reduced in backward);
tokens/s and TFLOP/s are the totals over the N GPUs, MFU is against N x the
peak, and process 0 prints. With fewer GPUs than processes it stops with a
message naming both counts.

    [torchrun --standalone --nproc-per-node N] python benchmarks/gpu_mfu.py [--batch 64] [--length 128]
        [--tgt-length T] [--vocab 37000] [--repeats 5] [--steps 10] [--warmup 5] [--peak-tflops X] [--tf32]
        [--variants ...] [--dry-run]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Optional

import numpy as np

from txcourse.config import TransformerConfig
from txcourse.data.vocab import PAD_ID, SOS_ID

PEAK_BF16_FLOPS = (  # dense (no sparsity) bf16 tensor-core peaks, FLOP/s; first match of the device name wins
    ("H200", 989e12),
    ("H100 PCIE", 756e12),
    ("H100", 989e12),  # SXM (the name says "H100 80GB HBM3")
    ("A100", 312e12),
)
VARIANTS = ("fp32", "bf16", "bf16+fused", "bf16+fused+compile")
LABELS = {
    "fp32": "fp32",
    "bf16": "bf16 autocast",
    "bf16+fused": "bf16 + fused",
    "bf16+fused+compile": "bf16 + fused + torch.compile",
}
SMOOTHING = 0.1


def flop_count(cfg: TransformerConfig, batch: int, s: int, t: int) -> dict[str, float]:
    """Model FLOPs of one training step (see the module docstring), by part."""
    d, f, v, le, ld = cfg.d_model, cfg.d_ff, cfg.tgt_vocab_size, cfg.num_encoder_layers, cfg.num_decoder_layers
    dense = {
        "encoder layers": 6.0 * batch * s * le * (4 * d * d + 2 * d * f),
        "decoder layers (target rows)": 6.0 * batch * t * ld * (6 * d * d + 2 * d * f),
        "decoder cross-attention W_k, W_v (memory rows)": 6.0 * batch * s * ld * 2 * d * d,
        "output layer (d x V, tied or not)": 6.0 * batch * t * d * v,
    }
    attention = {
        "encoder self-attention scores/values": 12.0 * batch * d * le * s * s,
        "decoder self-attention scores/values": 12.0 * batch * d * ld * t * t,
        "cross-attention scores/values": 12.0 * batch * d * ld * t * s,
    }
    total_dense, total_attention = sum(dense.values()), sum(attention.values())
    return {
        **dense,
        **attention,
        "dense": total_dense,
        "attention": total_attention,
        "total": total_dense + total_attention,
    }


def matmul_weights(cfg: TransformerConfig) -> int:
    """Weights of every matrix the formula counts: L_e (4 d^2 + 2 d F) + L_d (8 d^2 + 2 d F) + d V."""
    d, f = cfg.d_model, cfg.d_ff
    return (
        cfg.num_encoder_layers * (4 * d * d + 2 * d * f)
        + cfg.num_decoder_layers * (8 * d * d + 2 * d * f)
        + d * cfg.tgt_vocab_size
    )


def model_weights(cfg: TransformerConfig) -> tuple[int, int]:
    """(all parameters, nn.Linear weights + the tied output matrix) of the real model, built on the meta device."""
    import torch

    from txcourse.torch.model import Transformer

    with torch.device("meta"):
        model = Transformer(cfg)
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    if model.output_projection is None:
        linear += model.decoder.embedding.token_embedding.weight.numel()
    return sum(p.numel() for p in model.parameters()), linear


def counted_flops(cfg: TransformerConfig, batch: int = 2, s: int = 8, t: int = 6) -> float:
    """FLOPs of one forward + backward of the real model (teaching path, CPU, float32) as
    ``torch.utils.flop_counter`` counts them (mm, addmm, bmm), to check :func:`flop_count`."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from txcourse.torch.loss import label_smoothed_cross_entropy
    from txcourse.torch.model import Transformer

    torch.manual_seed(0)
    model = Transformer(cfg.replace(fused=False)).train()
    src = torch.randint(4, cfg.src_vocab_size, (batch, s))
    tgt = torch.randint(4, cfg.tgt_vocab_size, (batch, t))
    with FlopCounterMode(display=False) as counter:
        loss, _ = label_smoothed_cross_entropy(model(src, tgt), tgt, SMOOTHING, PAD_ID)
        loss.backward()
    return float(counter.get_total_flops())


def peak_flops(name: str, override_tflops: Optional[float]) -> Optional[float]:
    if override_tflops is not None:
        return override_tflops * 1e12
    upper = name.upper()
    for key, value in PEAK_BF16_FLOPS:
        if key in upper:
            return value
    return None


def print_flops(cfg: TransformerConfig, args: argparse.Namespace) -> dict[str, float]:
    s, t, b = args.length, args.tgt_length, args.batch
    flops = flop_count(cfg, b, s, t)
    params, linear = model_weights(cfg)
    d, f, v, le, ld = cfg.d_model, cfg.d_ff, cfg.tgt_vocab_size, cfg.num_encoder_layers, cfg.num_decoder_layers
    print("```")
    print(
        f"model: d={d}, H={cfg.num_heads}, L_e={le}, L_d={ld}, F={f}, V={v} (src {cfg.src_vocab_size}), "
        f"{'tied' if cfg.tie_embeddings else 'untied'} output; {params:,} parameters, "
        f"{linear:,} of them in the counted weight matrices (formula: {matmul_weights(cfg):,}"
        f"{'' if linear == matmul_weights(cfg) else ' - MISMATCH'})"
    )
    print(f"step: B={b}, S={s} source, T={t} target positions -> {b * (s + t):,} tokens")
    print("FLOPs per training step (forward + backward):")
    print("  dense     = 6 B [S (L_e (4 d^2 + 2 d F) + L_d 2 d^2) + T (L_d (6 d^2 + 2 d F) + d V)]")
    print(
        f"            = 6*{b}*[{s}*({le}*(4*{d}^2 + 2*{d}*{f}) + {ld}*2*{d}^2) + "
        f"{t}*({ld}*(6*{d}^2 + 2*{d}*{f}) + {d}*{v})] = {flops['dense']:.4e}"
    )
    print("  attention = 12 B d [L_e S^2 + L_d (T^2 + T S)]")
    print(f"            = 12*{b}*{d}*[{le}*{s}^2 + {ld}*({t}^2 + {t}*{s})] = {flops['attention']:.4e}")
    print(f"  total     = {flops['total']:.4e} FLOPs ({flops['total'] / 1e12:.3f} TFLOP) per step")
    for key, value in flops.items():
        if key not in ("dense", "attention", "total"):
            print(f"    {key}: {value:.4e} ({100 * value / flops['total']:.1f}%)")
    naive = 6.0 * params * b * (s + t)
    print(
        f"  (for comparison, 6 x all parameters x all tokens = {naive:.4e}: it counts the embedding "
        f"tables as matmuls and every weight for source and target tokens alike)"
    )
    print(
        "peak dense bf16 FLOP/s by device name: "
        + ", ".join(f"{k} {v:.0f}e12" for k, v in ((k, v / 1e12) for k, v in PEAK_BF16_FLOPS))
    )
    print("```")
    return flops


class Variant:
    """One model + Adam on the GPU, trained with or without autocast / torch.compile."""

    def __init__(self, name: str, cfg: TransformerConfig, data: tuple[Any, ...], compile_mode: str):
        import torch

        from txcourse.torch.loss import label_smoothed_cross_entropy
        from txcourse.torch.model import Transformer

        self.name = name
        self.loss_fn = label_smoothed_cross_entropy
        self.model = Transformer(cfg.replace(fused="fused" in name)).cuda().train()
        net = self.model
        if torch.distributed.is_initialized():  # torchrun: all-reduce the gradients across the GPUs
            net = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=[torch.cuda.current_device()])
        self.forward = torch.compile(net, mode=compile_mode) if "compile" in name else net
        self.amp = "bf16" in name
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        self.src, self.tgt_in, self.tgt_out = data

    def step(self) -> None:
        import torch

        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp):
            logits = self.forward(self.src, self.tgt_in)  # (B, T, V)
        loss, _ = self.loss_fn(logits, self.tgt_out, SMOOTHING, PAD_ID)  # float32 inside
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.last_loss = loss.detach()


def run(cfg: TransformerConfig, args: argparse.Namespace, flops: dict[str, float]) -> None:
    import torch

    gpus = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    name = torch.cuda.get_device_name()
    peak = peak_flops(name, args.peak_tflops)
    peak = peak * gpus if peak else None  # the N GPUs' peak
    if args.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    rng = np.random.default_rng(torch.distributed.get_rank() if gpus > 1 else 0)  # each GPU its own sentences
    b, s, t = args.batch, args.length, args.tgt_length
    src = torch.from_numpy(rng.integers(4, cfg.src_vocab_size, size=(b, s))).cuda()  # no padding: every FLOP counts
    words = rng.integers(4, cfg.tgt_vocab_size, size=(b, t))
    tgt_in = torch.from_numpy(np.concatenate([np.full((b, 1), SOS_ID), words[:, :-1]], axis=1)).cuda()
    tgt_out = torch.from_numpy(words).cuda()
    torch.manual_seed(0)
    variants = [Variant(v, cfg, (src, tgt_in, tgt_out), args.compile_mode) for v in args.variants]

    compile_s = {}
    for v in variants:  # warm-up; the first compiled step compiles
        start = time.perf_counter()
        for _ in range(args.warmup):
            v.step()
        torch.cuda.synchronize()
        compile_s[v.name] = time.perf_counter() - start
    peak_mem = {}
    for v in variants:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        v.step()
        torch.cuda.synchronize()
        peak_mem[v.name] = torch.cuda.max_memory_allocated()
    times: dict[str, list[float]] = {v.name: [] for v in variants}
    for r in range(args.repeats):
        order = variants[r % len(variants) :] + variants[: r % len(variants)]  # rotate who goes first
        for v in order:
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(args.steps):
                v.step()
            torch.cuda.synchronize()
            times[v.name].append((time.perf_counter() - start) / args.steps)

    on = f"{gpus} x {name} (DistributedDataParallel, nccl)" if gpus > 1 else name
    print(f"\n### Training step on {on}: PyTorch {torch.__version__}, CUDA {torch.version.cuda}\n")
    print(
        f"base model (d_model {cfg.d_model}, {cfg.num_heads} heads, {cfg.num_encoder_layers}+"
        f"{cfg.num_decoder_layers} layers, d_ff {cfg.d_ff}, vocab {cfg.tgt_vocab_size}), batch {b} x {s} source + "
        f"{t} target tokens{' per GPU' if gpus > 1 else ''}, dropout {cfg.dropout}, Adam; "
        f"{flops['total'] / 1e12:.3f} TFLOP per step; median of "
        f"{args.repeats} repeats of {args.steps} steps after {args.warmup} warm-up steps; MFU against "
        + (f"{peak / 1e12:.0f} TFLOP/s (dense bf16)" if peak else "an unknown peak (give --peak-tflops)")
        + ("; fp32 with TF32 matmuls" if args.tf32 else "")
        + ".\n"
    )
    print(
        "| variant | ms/step | tokens/s | achieved TFLOP/s | MFU | vs fp32 | peak memory (GiB) | loss | warm-up (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    base = statistics.median(times[variants[0].name])
    for v in variants:
        step = statistics.median(times[v.name])
        achieved = gpus * flops["total"] / step  # all GPUs
        mfu = f"{100 * achieved / peak:.1f}%" if peak else "n/a"
        print(
            f"| {LABELS[v.name]} | {1000 * step:.1f} | {gpus * b * (s + t) / step:,.0f} | {achieved / 1e12:.1f} | {mfu} | "
            f"{base / step:.2f}x | {peak_mem[v.name] / 2**30:.2f} | {float(v.last_loss):.3f} | "
            f"{compile_s[v.name]:.1f} |"
        )
    print(
        f"\n'vs fp32': speed-up over the first row ({LABELS[variants[0].name]})."
        + (f" tokens/s and TFLOP/s: all {gpus} GPUs; peak memory: per GPU." if gpus > 1 else "")
    )


def start_gpus() -> int:
    """Under torchrun: check there is a GPU for every local process, take GPU LOCAL_RANK, join the nccl group
    and silence the other processes' output. Returns the number of processes (1 without torchrun)."""
    import torch

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 1
    local, local_world = int(os.environ.get("LOCAL_RANK", "0")), int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    count = torch.cuda.device_count()
    if local_world > count:
        raise SystemExit(
            f"gpu_mfu.py: torchrun started {local_world} processes on this machine but PyTorch sees "
            f"{count} CUDA GPU(s); use --nproc-per-node {count}" + (" (or run without torchrun)" if count <= 1 else "")
        )
    torch.cuda.set_device(local)
    torch.distributed.init_process_group("nccl")
    if torch.distributed.get_rank():
        sys.stdout = open(os.devnull, "w")  # process 0 prints
    return world


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=128, help="source positions (and target, unless --tgt-length)")
    parser.add_argument("--tgt-length", type=int, default=None)
    parser.add_argument("--vocab", type=int, default=37000, help="source and target vocabulary size")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10, help="steps per timed repeat")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps per variant (compiles too)")
    parser.add_argument("--peak-tflops", type=float, default=None, help="peak dense bf16 TFLOP/s of the GPU")
    parser.add_argument("--tf32", action="store_true", help="let the fp32 variant use TF32 matmuls")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--compile-mode", default="default", help="torch.compile mode (default, max-autotune, ...)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: batch 8, 2 repeats of 2 steps")
    parser.add_argument("--dry-run", action="store_true", help="print the FLOP formula and counts only")
    args = parser.parse_args()
    if args.quick:
        args.batch, args.repeats, args.steps, args.warmup = min(args.batch, 8), 2, 2, max(1, min(args.warmup, 2))
    args.tgt_length = args.tgt_length or args.length
    if min(args.batch, args.length, args.tgt_length, args.repeats, args.steps, args.warmup) < 1:
        parser.error("--batch, --length, --tgt-length, --repeats, --steps and --warmup must be >= 1")
    cfg = TransformerConfig(
        src_vocab_size=args.vocab,
        tgt_vocab_size=args.vocab,
        max_len=max(TransformerConfig().max_len, args.length, args.tgt_length),
    )
    print("\n### GPU training throughput and MFU\n")
    if not args.dry_run:
        import torch

        if not torch.cuda.is_available():
            print(
                "no CUDA GPU (torch.cuda.is_available() is False): skipped. "
                "`python benchmarks/gpu_mfu.py --dry-run` prints the FLOP count."
            )
            return
        start_gpus()
    flops = print_flops(cfg, args)
    if args.dry_run:
        b, s, t = 2, 8, 6
        counted, formula = counted_flops(cfg, b, s, t), flop_count(cfg, b, s, t)["total"]
        print(
            f"\ncheck (B={b}, S={s}, T={t}, teaching path on the CPU): formula {formula:.6e}, "
            f"torch.utils.flop_counter {counted:.6e}: {'equal' if counted == formula else 'DIFFERENT'}"
        )
        return
    run(cfg, args, flops)
    if not args.dry_run and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
