"""The command line: ``txcourse train | translate | evaluate | figures | grade`` (also ``python -m txcourse``).

Every expected failure (unknown task, missing checkpoint, a checkpoint of
the other framework or model, a bad setting) prints one line
``txcourse: error: ...`` and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import ast
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from txcourse.data.tasks import TASKS
from txcourse.experiment import FRAMEWORKS
from txcourse.grading import DEFAULT_CELL_TIMEOUT, LABS

__all__ = ["main", "build_parser"]

MODELS = ("transformer", "bahdanau", "seq2seq")


def _setting(text: str) -> tuple[str, Any]:
    """'d_model=256' -> ('d_model', 256); values are Python literals, else strings."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="txcourse", description="Train, run and evaluate the course's models; "
                                     "draw the book's figures; grade lab submissions.")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a model on a generated task and write a checkpoint")
    train.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    train.add_argument("--model", choices=MODELS, default="transformer")
    train.add_argument("--task", default="numbers", help=f"one of {sorted(TASKS)}")
    train.add_argument("--task-arg", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                       help="task option, e.g. target_lang='es' or sizes=(5000,500,500)")
    train.add_argument("--set", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                       help="model setting, e.g. d_model=256 num_heads=8 (TransformerConfig fields)")
    train.add_argument("--device", default="auto", help="auto, cpu, cuda or mps")
    train.add_argument("--steps", type=int, default=2000)
    train.add_argument("--max-seconds", type=float, default=None, help="stop training after this long")
    train.add_argument("--batch-size", type=int, default=64)
    train.add_argument("--warmup", type=int, default=400, help="warm-up steps of the schedule, Eq. (3)")
    train.add_argument("--lr-factor", type=float, default=0.5, help="scales Eq. (3) (0.5: peak 2.2e-3 at d_model 128)")
    train.add_argument("--label-smoothing", type=float, default=0.1)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--log-every", type=int, default=50)
    train.add_argument("--checkpoint-every", type=int, default=0)
    train.add_argument("--out", type=Path, default=None, help="run folder (default runs/TASK-MODEL-FRAMEWORK)")
    train.add_argument("--resume", action="store_true", help="continue from OUT/model.npz")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")

    for name, text in (("translate", "translate sentences with a trained checkpoint"),
                       ("evaluate", "score a checkpoint on a split of its task")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--checkpoint", type=Path, required=True)
        p.add_argument("--framework", choices=FRAMEWORKS, default=None, help="must match the checkpoint")
        p.add_argument("--model", choices=MODELS, default=None, help="must match the checkpoint")
        p.add_argument("--device", default="cpu")
        p.add_argument("--beam", type=int, default=1, help="beam size (1: greedy)")
        if name == "translate":
            p.add_argument("text", nargs="*", help="sentences (default: one per line on standard input)")
        else:
            p.add_argument("--split", choices=("train", "valid", "test"), default="test")
            p.add_argument("--limit", type=int, default=None, help="score only the first N pairs")
            p.add_argument("--json", type=Path, default=None, help="also write the scores here")

    figures = sub.add_parser("figures", help="draw every figure of the book, from fixed seeds, into one folder "
                                             "with a manifest.json")
    figures.add_argument("--out", type=Path, default=Path("_build/figures"), help="folder to write "
                         "(default _build/figures)")
    figures.add_argument("--only", nargs="+", action="extend", default=[], metavar="NAME",
                         help="only these figures (names or patterns such as 'week3_*'; see --list)")
    figures.add_argument("--list", action="store_true", help="list the figures and their inputs, draw nothing")
    figures.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    figures.add_argument("--strict", action="store_true", help="a missing input file is an error (default: "
                         "skip that figure with a warning)")
    figures.add_argument("--format", choices=("png", "svg", "pdf"), default="png")
    figures.add_argument("--dpi", type=int, default=150, help="resolution of PNG files")
    figures.add_argument("--root", type=Path, default=None, help="folder the inputs (book/data/..., "
                         "benchmarks/results/...) are read from (default: the current folder if it holds any, "
                         "else the repository the package comes from)")
    figures.add_argument("--no-progress", action="store_true", help="no progress bar")

    grade = sub.add_parser("grade", help="autograde a folder of lab submissions: a CSV of scores and HTML "
                                         "feedback (nbgrader)")
    grade.add_argument("submissions", type=Path, help="folder with one subfolder per student")
    grade.add_argument("--lab", required=True, help=f"one of {list(LABS)}")
    grade.add_argument("--out", type=Path, default=None, help="CSV to write (default _build/grades/LAB.csv)")
    grade.add_argument("--cell-timeout", type=int, default=DEFAULT_CELL_TIMEOUT, metavar="S",
                       help=f"seconds a cell may run before it is interrupted (default {DEFAULT_CELL_TIMEOUT})")
    grade.add_argument("--labs-dir", type=Path, default=Path("labs"), help="the nbgrader course (default labs)")
    grade.add_argument("--no-feedback", action="store_true", help="skip the HTML feedback")
    from txcourse.grading import add_grade_options  # --jobs, --notebook-timeout, --memory, --no-sandbox

    add_grade_options(grade)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return {"train": _train, "translate": _translate, "evaluate": _evaluate, "figures": _figures,
                "grade": _grade}[args.command](args)
    except (ValueError, FileNotFoundError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        parser.exit(2, f"txcourse: error: {message}\n")
    return 0  # pragma: no cover


def _train(args: argparse.Namespace) -> int:
    from txcourse.experiment import backend, default_model_config, prepare_task
    from txcourse.training import TrainConfig

    if args.task not in TASKS:
        raise ValueError(f"unknown task {args.task!r}; choose one of {sorted(TASKS)}")
    out = args.out or Path("runs") / f"{args.task}-{args.model}-{args.framework}"
    checkpoint = out / "model.npz"
    if args.resume and not checkpoint.is_file():
        raise FileNotFoundError(f"--resume: no checkpoint {str(checkpoint)!r} to resume from")
    config = TrainConfig(steps=args.steps, batch_size=args.batch_size, warmup_steps=args.warmup,
                         lr_factor=args.lr_factor, label_smoothing=args.label_smoothing, seed=args.seed,
                         device=args.device, log_every=args.log_every, checkpoint_every=args.checkpoint_every,
                         progress=not args.no_progress, max_seconds=args.max_seconds)
    prepared = prepare_task(args.task, **dict(args.task_arg))
    model_config = default_model_config(args.model, prepared.src_tokenizer.vocab_size,
                                        prepared.tgt_tokenizer.vocab_size, dict(args.set))
    fw = backend(args.framework)
    fw.set_seed(args.seed)
    metadata = {"task": {"name": args.task, "kwargs": prepared.task_kwargs},
                "tokenizers": {"src": prepared.src_tokenizer.to_json(), "tgt": prepared.tgt_tokenizer.to_json()}}
    trainer = fw.Trainer(fw.build_model(args.model, model_config), args.model, model_config, prepared.train,
                         config, history_path=str(out / "history.jsonl"), metadata=metadata)
    if args.resume:
        trainer.load(str(checkpoint))
    start = time.perf_counter()
    records = trainer.fit(checkpoint_path=str(checkpoint))
    last = records[-1] if records else {}
    print(f"trained {args.model} ({args.framework}) on {args.task} to step {trainer.step} in "
          f"{time.perf_counter() - start:.0f} s: loss {last.get('loss', float('nan')):.4f}, "
          f"token accuracy {last.get('accuracy', float('nan')):.4f}; checkpoint {checkpoint}")
    return 0


def _load(args: argparse.Namespace):
    from txcourse.checkpoint import check_checkpoint, read_checkpoint_meta
    from txcourse.experiment import backend, tokenizers_from_meta

    meta = read_checkpoint_meta(args.checkpoint)
    framework = args.framework or meta.get("framework")
    check_checkpoint(args.checkpoint, meta, framework, args.model)
    fw = backend(framework)
    model, meta = fw.load_model(str(args.checkpoint), device=args.device)
    return fw, model, meta, *tokenizers_from_meta(meta)


def _translate(args: argparse.Namespace) -> int:
    from txcourse.experiment import translate

    texts = args.text or [line.strip() for line in sys.stdin if line.strip()]
    if not texts:
        raise ValueError("nothing to translate: pass sentences or pipe them on standard input")
    fw, model, _, src_tok, tgt_tok = _load(args)
    for source, target in zip(texts, translate(fw, model, texts, src_tok, tgt_tok, beam_size=args.beam,
                                               device=args.device)):
        print(f"{source}\t{target}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from txcourse.data import get_task
    from txcourse.experiment import evaluate
    from txcourse.metrics import format_length_table

    fw, model, meta, src_tok, tgt_tok = _load(args)
    task = meta.get("task")
    if not task:
        raise ValueError(f"checkpoint {str(args.checkpoint)!r} does not record its task")
    pairs = get_task(task["name"], **task["kwargs"])[args.split][: args.limit]
    result = evaluate(fw, model, pairs, src_tok, tgt_tok, beam_size=args.beam, device=args.device)
    print(f"{meta['model']['kind']} ({meta['framework']}), {task['name']} {args.split} ({len(pairs)} pairs), "
          f"beam {args.beam}: exact match {100 * result['exact_match']:.2f}%, BLEU {result['bleu']:.2f}, "
          f"chrF {result['chrf']:.2f}")
    print(format_length_table({meta["model"]["kind"]: result["by_length"]}))
    if args.json:
        summary = {k: v for k, v in result.items() if k not in ("by_length", "hypotheses")}
        summary["by_length"] = [dataclasses.asdict(b) for b in result["by_length"]]
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


def _figures(args: argparse.Namespace) -> int:
    import matplotlib

    from txcourse.figures import build_figures, format_recipe_list, select

    if args.list:
        print(format_recipe_list(args.root, select(args.only)))
        return 0
    matplotlib.use("Agg")  # headless: no window, whatever MPLBACKEND says
    if args.framework == "tf":  # TensorFlow's start-up logs, and oneDNN's reordered float sums, off
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    start = time.perf_counter()
    manifest = build_figures(args.out, args.only or None, root=args.root, framework=args.framework,
                             fmt=args.format, dpi=args.dpi, strict=args.strict, progress=not args.no_progress)
    entries = manifest["figures"].values()
    written = sum(e["status"] == "written" for e in entries)
    skipped = [name for name, e in manifest["figures"].items() if e["status"] == "skipped"]
    print(f"wrote {written} figure(s) to {args.out} in {time.perf_counter() - start:.1f} s"
          + (f"; skipped {len(skipped)}: {', '.join(skipped)}" if skipped else "")
          + f"; manifest {args.out / 'manifest.json'}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    """Exit status: 0, 1 when a submission could not be graded, 2 for a bad argument or no sandbox,
    128 + signal when interrupted (txcourse.grading.grade_command)."""
    from txcourse.grading import grade_command

    if args.cell_timeout < 1:
        raise ValueError(f"--cell-timeout must be at least 1 second, got {args.cell_timeout}")
    return grade_command(args, args.cell_timeout, prog="txcourse", raise_errors=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
