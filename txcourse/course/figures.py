"""Every figure of the book, redrawn from fixed seeds: the recipes behind ``txcourse figures``.

Each :class:`Recipe` names a figure (``week3_scaling``), the chapter(s) that
show it, a caption, the :mod:`txcourse.notebook.plots` function that draws it, its
parameters and the files it reads (relative to the repository root), and
holds the function that returns the :class:`matplotlib.figure.Figure`. The
recipes repeat the code cells of the chapters with the same parameters, so a
figure here is the figure of the book, ready for slides or handouts.

:func:`build_figures` (``make figures``, ``txcourse figures --out DIR``) draws
them into one folder with a ``manifest.json`` (figure -> file, chapters,
caption, function, recipe, parameters, inputs and output with their sha256,
status) and a ``README.md``. Every recipe starts from the same state: the
seeds set (``set_seed(0)`` of the framework half; the recipes that use
another seed, as the book does, set it themselves), matplotlib's default
settings, no open figures. Two runs on the same machine therefore write the
same bytes, whichever figures ran before.

A recipe whose input file is missing (a checkpoint not trained yet) is
skipped with a warning and listed as skipped in the manifest; with
``strict=True`` the run stops before drawing anything.

Framework-free at import time: a recipe imports its framework half through
:func:`txcourse.registry.backend` only when it runs.

Example:
    >>> sorted(RECIPES)[:2]
    ['bert_gpt_attention', 'week1_accuracy_by_length']
    >>> RECIPES["week2_positional_encoding"].function_path
    'txcourse.notebook.plots.plot_positional_encoding'
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from txcourse.registry import FRAMEWORKS, Backend
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

import txcourse
from txcourse.notebook import plots

__all__ = ["Recipe", "RECIPES", "REPO_ROOT", "FORMATS", "select", "default_root", "missing_inputs", "draw",
           "build_figures", "format_recipe_list"]

REPO_ROOT = Path(txcourse.__file__).resolve().parents[1]  # the checkout the package was installed from
FORMATS = ("png", "svg", "pdf")
DEFAULT_SEED = 0  # set before every recipe


@dataclass(frozen=True)
class Recipe:
    """One figure: what it shows, where it appears, how it is drawn.

    Attributes:
        name: the figure's name and file stem, ``week<N>_<what>``.
        chapters: the chapters (book page names) that show it.
        label: the figure's name in the book (``fig-scaling``), for ``{numref}`` links.
        caption: one or two sentences saying what it shows.
        function: the :mod:`txcourse.notebook.plots` function that draws it.
        draw: ``draw(ctx, **params) -> Figure``; ``ctx`` gives the framework
            half (``ctx.fw``, ``ctx.lib``) and the input paths (``ctx.path``).
        params: the parameters of the figure, passed to ``draw`` and recorded
            in the manifest (JSON values only).
        inputs: files read, relative to the root (the repository).
        frameworks: the framework halves the recipe can draw with; empty when
            it needs none.
    """

    name: str
    chapters: tuple[str, ...]
    label: str
    caption: str
    function: Callable[..., Any]
    draw: Callable[..., Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    frameworks: tuple[str, ...] = ("torch",)

    @property
    def function_path(self) -> str:
        """Dotted path of the plots function, e.g. ``txcourse.notebook.plots.plot_attention``."""
        return f"{self.function.__module__}.{self.function.__qualname__}"

    @property
    def recipe_path(self) -> str:
        """Dotted path of the recipe's draw function."""
        return f"{self.draw.__module__}.{self.draw.__qualname__}"


RECIPES: dict[str, Recipe] = {}


def _recipe(name: str, chapters: Sequence[str], label: str, caption: str, function: Callable[..., Any],
            params: Optional[Mapping[str, Any]] = None, inputs: Sequence[str] = (),
            frameworks: Sequence[str] = ("torch",)) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``draw(ctx, **params)`` as the recipe ``name``."""
    def register(draw_fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in RECIPES:
            raise ValueError(f"figure {name!r} is registered twice")
        json.dumps(params or {})  # the parameters go into the manifest: JSON values only
        RECIPES[name] = Recipe(name, tuple(chapters), label, caption, function, draw_fn, dict(params or {}),
                               tuple(inputs), tuple(frameworks))
        return draw_fn
    return register


class _Context:
    """What a recipe may use: the root its inputs live under and the framework half (imported on demand)."""

    def __init__(self, root: Path, framework: str):
        self.root, self.framework = root, framework

    def path(self, relative: str) -> Path:
        return self.root / relative

    @functools.cached_property
    def fw(self) -> Backend:
        from txcourse.registry import backend

        return backend(self.framework)

    @property
    def lib(self) -> ModuleType:
        """``txcourse.torch`` or ``txcourse.tf``."""
        return self.fw.package

    def tensor(self, array: Any, dtype: Any = None) -> Any:
        return self.fw.to_tensor(np.asarray(array, dtype=dtype))

    def numpy(self, tensor: Any) -> np.ndarray:
        return self.fw.to_numpy(tensor)


def _subplots(ncols: int, figsize: Sequence[float]):
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=tuple(figsize), layout="constrained")


def _torch_no_grad():
    import torch

    return torch.no_grad()


def _decoded_tokens(ctx: _Context, out: Any, eos_id: int) -> tuple[list[int], int]:
    """The tokens of the first row of a DecodeOutput and its length up to and including <eos>."""
    tokens = ctx.numpy(out.tokens)[0].tolist()
    return tokens, tokens.index(eos_id) + 1 if eos_id in tokens else len(tokens)


def _load_checkpoint(ctx: _Context, relative: str, kind: str):
    from txcourse.data.prepare import tokenizers_from_meta

    path = ctx.path(relative)
    model, meta = ctx.fw.load_model(str(path))
    if meta["model"]["kind"] != kind:
        raise ValueError(f"{relative} holds a {meta['model']['kind']!r} model; this figure needs a {kind!r} "
                         f"checkpoint (txcourse train --model {kind})")
    return model, meta, *tokenizers_from_meta(meta)


# ---------------------------------------------------------------------------
# Week 1: sequence to sequence
# ---------------------------------------------------------------------------
LENGTH_CURVES = "benchmarks/results/length_curves.json"
BAHDANAU_CHECKPOINT = "book/data/numbers-bahdanau-torch.npz"


@_recipe("week1_accuracy_by_length", ["week1_seq2seq"], "fig-length-curves",
         "Exact match on the test split against the length of the source, one line per model, after the same "
         "number of training steps (benchmarks/length_curves.py).", plots.plot_accuracy_by_length,
         params={"labels": {"transformer": "Transformer", "bahdanau": "GRU + Bahdanau attention",
                            "seq2seq": "GRU, fixed context"},
                 "title": "{task}: exact match by source length"},
         inputs=[LENGTH_CURVES], frameworks=())
def accuracy_by_length(ctx: _Context, labels: Mapping[str, str], title: str):
    from txcourse.evaluation.metrics import LengthBucket

    try:
        results = json.loads(ctx.path(LENGTH_CURVES).read_text(encoding="utf-8"))
        curves = {labels.get(kind, kind): [LengthBucket(*bucket) for bucket in model["by_length"]]
                  for kind, model in results["models"].items()}
        task = results["task"]
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as err:
        raise ValueError(f"{LENGTH_CURVES} is not in the format benchmarks/length_curves.py writes "
                         f"({{'task': ..., 'models': {{kind: {{'by_length': [[low, high, count, exact_match], "
                         f"...]}}}}}}): {type(err).__name__}: {err}") from None
    return plots.plot_accuracy_by_length(curves, title=title.format(task=task))


@_recipe("week1_bahdanau_alignment", ["week1_seq2seq"], "fig-bahdanau-alignment",
         "Bahdanau attention weights of the trained GRU while it translates one number: rows are the "
         "generated Korean characters, columns the English source tokens.", plots.plot_attention,
         params={"sentence": "seven thousand, eight hundred and one", "title": "Bahdanau attention: {sentence}",
                 "space": "\u2423"},
         inputs=[BAHDANAU_CHECKPOINT])
def bahdanau_alignment(ctx: _Context, sentence: str, title: str, space: str):
    model, _, src_tok, tgt_tok = _load_checkpoint(ctx, BAHDANAU_CHECKPOINT, "bahdanau")
    ids = [src_tok.encode(sentence)]                             # (1, T_src)
    out = ctx.fw.greedy_decode(model, ctx.tensor(ids))          # attention (1, 1, T_out, T_src)
    tokens, length = _decoded_tokens(ctx, out, tgt_tok.eos_id)
    return plots.plot_attention(ctx.numpy(out.attention)[0, 0, :length],
                                [src_tok.id_to_token(i) for i in ids[0]],
                                [tgt_tok.id_to_token(i).replace(" ", space) for i in tokens[:length]],
                                title=title.format(sentence=sentence))


# ---------------------------------------------------------------------------
# Week 2: positional encoding
# ---------------------------------------------------------------------------
@_recipe("week2_positional_encoding", ["week2_positional"], "fig-pe-heatmap",
         "The sinusoidal positional encoding for 50 positions and d_model = 128 (red -1, blue +1).",
         plots.plot_positional_encoding,
         params={"max_len": 50, "d_model": 128, "title": "Sinusoidal positional encoding, 50 positions, d_model = 128"},
         frameworks=FRAMEWORKS)
def positional_encoding(ctx: _Context, max_len: int, d_model: int, title: str):
    table = ctx.numpy(ctx.lib.positional_encoding(max_len, d_model))     # (max_len, d_model)
    return plots.plot_positional_encoding(table, title=title)


# ---------------------------------------------------------------------------
# Week 3: attention
# ---------------------------------------------------------------------------
@_recipe("week3_attention_example", ["week3_attention"], "fig-temp-attention",
         "The weights of the three-query temp_q / temp_k example of notebook 001; each row sums to one.",
         plots.plot_attention,
         params={"temp_q": [[0.0, 0, 10], [0, 10, 0], [10, 10, 0]],
                 "temp_k": [[10.0, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]],
                 "temp_v": [[1.0, 0], [10, 0], [100, 5], [1000, 6]],
                 "key_labels": ["k1", "k2", "k3", "k4"], "query_labels": ["(0,0,10)", "(0,10,0)", "(10,10,0)"],
                 "title": "temp_q against temp_k"},
         frameworks=FRAMEWORKS)
def attention_example(ctx: _Context, temp_q, temp_k, temp_v, key_labels, query_labels, title: str):
    _, attn = ctx.lib.scaled_dot_product_attention(*(ctx.tensor(a, np.float32) for a in (temp_q, temp_k, temp_v)))
    return plots.plot_attention(ctx.numpy(attn), key_labels, query_labels, title=title)   # (T_q, T_k)


@_recipe("week3_scaling", ["week3_attention"], "fig-scaling",
         "The same random queries and keys (d_k = 256) without and with the division by sqrt(d_k): unscaled, "
         "most rows are nearly one-hot (the softmax saturates).", plots.plot_attention,
         params={"seed": 1, "n": 8, "d_k": 256, "figsize": [10, 4.2],
                 "titles": ["softmax(QK^T), unscaled", "softmax(QK^T / sqrt(d_k))"]})
def scaling(ctx: _Context, seed: int, n: int, d_k: int, figsize, titles):
    import torch

    sdpa = ctx.lib.scaled_dot_product_attention
    gen = torch.Generator().manual_seed(seed)
    queries, keys = torch.randn(n, d_k, generator=gen), torch.randn(n, d_k, generator=gen)   # (T, d_k)
    _, w_scaled = sdpa(queries, keys, torch.zeros(n, 1))
    _, w_unscaled = sdpa(queries * d_k ** 0.5, keys, torch.zeros(n, 1))   # undoes the division
    fig, axes = _subplots(2, figsize)
    plots.plot_attention(w_unscaled.numpy(), title=titles[0], ax=axes[0])
    plots.plot_attention(w_scaled.numpy(), title=titles[1], ax=axes[1])
    return fig


@_recipe("week3_padding_mask", ["week3_attention"], "fig-padding-mask",
         "The padding mask of [[5, 7, 9, 0, 0]] broadcast to all five queries; dark = True = may not be attended.",
         plots.plot_mask, params={"tokens": [[5, 7, 9, 0, 0]], "title": "padding mask"},
         frameworks=FRAMEWORKS)
def padding_mask(ctx: _Context, tokens, title: str):
    mask = ctx.numpy(ctx.lib.padding_mask(ctx.tensor(tokens, np.int64)))   # (1, 1, 1, T)
    t = mask.shape[-1]
    return plots.plot_mask(np.broadcast_to(mask[0, 0], (t, t)), title=title)


@_recipe("week3_attention_heads", ["week3_attention"], "fig-heads-untrained",
         "The four heads of an untrained MultiHeadAttention (d_model = 32) on nine random token vectors.",
         plots.plot_attention_heads,
         params={"seed": 3, "d_model": 32, "num_heads": 4, "words": "A dog ate the food because it was hungry",
                 "ncols": 4, "title": "Self-attention of an untrained layer, one map per head"})
def attention_heads(ctx: _Context, seed: int, d_model: int, num_heads: int, words: str, ncols: int, title: str):
    import torch

    words_list = words.split()
    torch.manual_seed(seed)
    mha = ctx.lib.MultiHeadAttention(d_model=d_model, num_heads=num_heads).eval()
    x = torch.randn(1, len(words_list), d_model)                # (B, T, D)
    with torch.no_grad():
        _, _, weights = mha(x, x, x, return_weights=True)       # (B, H, T, T)
    return plots.plot_attention_heads(weights[0].numpy(), words_list, words_list,   # (H, T, T)
                                      ncols=ncols, title=title)


# ---------------------------------------------------------------------------
# Week 4: the encoder
# ---------------------------------------------------------------------------
@_recipe("week4_encoder_representations", ["week4_encoder"], "fig-encoder-activations",
         "Left: the input of a random encoder (sqrt(d) * embedding + positional encoding) for 12 tokens, "
         "d_model = 64. Right: the output of its first post-LN layer; every row has mean 0 and variance 1.",
         plots.plot_positional_encoding,
         params={"seed": 0, "config": {"src_vocab_size": 50, "tgt_vocab_size": 50, "d_model": 64, "num_heads": 4,
                                       "num_encoder_layers": 2, "num_decoder_layers": 2, "d_ff": 256,
                                       "dropout": 0.0},
                 "num_tokens": 12, "figsize": [11, 3.6],
                 "titles": ["input: sqrt(d) * embedding + PE", "after encoder layer 1 (post-LN)"]})
def encoder_representations(ctx: _Context, seed: int, config: Mapping[str, Any], num_tokens: int, figsize, titles):
    import torch

    from txcourse import TransformerConfig

    torch.manual_seed(seed)
    cfg = TransformerConfig(**config)
    encoder = ctx.lib.Encoder(cfg).eval()
    tokens = torch.randint(1, cfg.src_vocab_size, (1, num_tokens))         # (B, T_src)
    with torch.no_grad():
        h0 = encoder.embedding(tokens)                                       # (1, T_src, D)
        h1 = encoder.layers[0](h0, ctx.lib.padding_mask(tokens))            # (1, T_src, D)
    fig, axes = _subplots(2, figsize)
    plots.plot_positional_encoding(h0[0].numpy(), title=titles[0], ax=axes[0])
    plots.plot_positional_encoding(h1[0].numpy(), title=titles[1], ax=axes[1])
    return fig


# ---------------------------------------------------------------------------
# Week 5: the decoder
# ---------------------------------------------------------------------------
@_recipe("week5_look_ahead_mask", ["week5_decoder"], "fig-look-ahead",
         "Left: the look-ahead mask for six positions. Right: combined with the padding mask of a target with "
         "two <pad> tokens at the end. Dark = True = may not be attended.", plots.plot_mask,
         params={"tgt": [[1, 7, 8, 9, 0, 0]], "figsize": [9, 3.6],
                 "titles": ["look-ahead mask", "look-ahead | target padding"]},
         frameworks=FRAMEWORKS)
def look_ahead_mask(ctx: _Context, tgt, figsize, titles):
    t = len(tgt[0])
    look_ahead = ctx.numpy(ctx.lib.look_ahead_mask(t))                           # (T, T)
    combined = look_ahead | ctx.numpy(ctx.lib.padding_mask(ctx.tensor(tgt, np.int64)))   # (1, 1, T, T)
    fig, axes = _subplots(2, figsize)
    plots.plot_mask(look_ahead, title=titles[0], ax=axes[0])
    plots.plot_mask(combined[0, 0], title=titles[1], ax=axes[1])
    return fig


_WEEK5_MODEL = {"seed": 0, "config": {"src_vocab_size": 30, "tgt_vocab_size": 30, "d_model": 32, "num_heads": 4,
                                      "num_encoder_layers": 2, "num_decoder_layers": 2, "d_ff": 64, "dropout": 0.0},
                "src": [[5, 6, 7, 8, 9, 2]], "tgt": [[1, 11, 12, 13, 14, 15, 16, 17]]}


def _week5_logits(ctx: _Context, seed: int, config: Mapping[str, Any], src, tgt):
    """Week 5's untrained model and its ``logits_of(tgt, causal)``."""
    import torch

    from txcourse import TransformerConfig

    txt = ctx.lib
    torch.manual_seed(seed)
    model = txt.Transformer(TransformerConfig(**config)).eval()
    src_t = torch.tensor(src)                                   # (B, T_src)

    def logits_of(tgt_t, causal=True):
        memory, src_mask = model.encode(src_t)
        mask = txt.padding_mask(tgt_t)                          # (B, 1, 1, T)
        if causal:
            mask = mask | txt.look_ahead_mask(tgt_t.shape[1])   # (B, 1, T, T)
        return model.project(model.decoder(tgt_t, memory, mask, src_mask))   # (B, T, V)
    return model, logits_of, torch.tensor(tgt)


@_recipe("week5_no_leak", ["week5_decoder"], "fig-no-leak",
         "How much the logits at output position t (columns) change when the input token at position j (rows) "
         "is edited, scaled to the largest change, with and without the look-ahead mask.", plots.plot_attention,
         params={**_WEEK5_MODEL, "edit_offset": 20, "figsize": [10, 4.2],
                 "titles": ["with the look-ahead mask", "without it: the future leaks"],
                 "xlabel": "output position t", "ylabel": "edited input position j",
                 "colorbar_label": "change of the logits (scaled)"})
def no_leak(ctx: _Context, seed, config, src, tgt, edit_offset: int, figsize, titles, xlabel, ylabel,
            colorbar_label):
    _, logits_of, tgt_t = _week5_logits(ctx, seed, config, src, tgt)
    t = tgt_t.shape[1]

    def dependence(causal):
        """change[j, t] = largest change of the logits at position t when token j is edited."""
        with _torch_no_grad():
            base = logits_of(tgt_t, causal)
            change = np.zeros((t, t))
            for j in range(1, t):                               # position 0 is always <sos>
                edited = tgt_t.clone()
                edited[0, j] = edit_offset + j
                change[j] = (logits_of(edited, causal) - base).abs().amax(-1)[0].numpy()
        return change

    positions = [str(i) for i in range(t)]
    fig, axes = _subplots(2, figsize)
    for ax, change, title in zip(axes, (dependence(True), dependence(False)), titles):
        plots.plot_attention(change[1:] / change.max(), positions, positions[1:], title=title, ax=ax)
        ax.set(xlabel=xlabel, ylabel=ylabel)
    for bar in fig.axes[2:]:
        bar.set_ylabel(colorbar_label)
    return fig


@_recipe("week5_decoder_heads", ["week5_decoder"], "fig-decoder-heads",
         "Masked self-attention weights of the first decoder layer (four heads, untrained model): everything "
         "above the diagonal is zero.", plots.plot_attention_heads,
         params={**_WEEK5_MODEL, "ncols": 4, "title": "Decoder layer 1, masked self-attention"})
def decoder_heads(ctx: _Context, seed, config, src, tgt, ncols: int, title: str):
    model, _, tgt_t = _week5_logits(ctx, seed, config, src, tgt)
    with _torch_no_grad():
        memory, src_mask = model.encode(ctx.tensor(src, np.int64))
        mask = ctx.lib.padding_mask(tgt_t) | ctx.lib.look_ahead_mask(tgt_t.shape[1])   # (B, 1, T, T)
        _, _, weights = model.decoder(tgt_t, memory, mask, src_mask, return_weights=True)   # per layer: (self, cross)
    weights = weights[0][0][0]                                  # layer 0, self-attention, sentence 0: (H, T, T)
    positions = [str(i) for i in range(tgt_t.shape[1])]
    return plots.plot_attention_heads(weights.numpy(), positions, positions, ncols=ncols, title=title)


# ---------------------------------------------------------------------------
# Week 6, part 1: training. Every number these figures show about the shipped
# model is read from its checkpoint header and history (txcourse.course.artefacts).
# ---------------------------------------------------------------------------
from txcourse.course.artefacts import TRANSFORMER_CHECKPOINT, TRANSFORMER_HISTORY  # noqa: E402


def _history(ctx: _Context) -> list[dict[str, Any]]:
    from txcourse.training import read_history

    try:
        return read_history(ctx.path(TRANSFORMER_HISTORY))
    except json.JSONDecodeError as err:
        raise ValueError(f"{TRANSFORMER_HISTORY} is not a history file (one JSON record a line): {err}") from None


def _meta(ctx: _Context) -> dict[str, Any]:
    from txcourse.training.checkpoint import read_checkpoint_meta

    return read_checkpoint_meta(ctx.path(TRANSFORMER_CHECKPOINT))


def shipped_schedule_label(meta: Mapping[str, Any]) -> str:
    """The legend entry of the shipped model's schedule, from its checkpoint header."""
    from txcourse.course.artefacts import schedule

    s = schedule(meta)
    return (f"shipped model: d_model {s['d_model']}, warm-up {s['warmup_steps']}, x{s['factor']:g}, "
            f"cool-down {s['cooldown_steps']} of {s['total_steps']}")


LOGGED_LR = "logged by the trainer (history)"


@_recipe("week6_warmup_schedule", ["week6_training"], "fig-noam",
         "The learning rate of Eq. (3) (txcourse.training.noam_lr) for the paper's base model and for the shipped "
         "week 6 model, its parameters read from the checkpoint (with its cool-down); the dots are the rates "
         "its training history logged.", plots.plot_training_curves,
         params={"steps": {"start": 1, "stop": 20001, "step": 20},
                 "paper": {"label": "paper: d_model 512, warm-up 4000", "d_model": 512, "warmup": 4000,
                           "factor": 1.0},
                 "yscale": "log", "title": "The warm-up schedule, Eq. (3)"},
         inputs=[TRANSFORMER_CHECKPOINT, TRANSFORMER_HISTORY], frameworks=())
def warmup_schedule(ctx: _Context, steps: Mapping[str, int], paper: Mapping[str, Any], yscale: str, title: str):
    from txcourse.course.artefacts import schedule, schedule_lr
    from txcourse.training import noam_lr

    meta, history = _meta(ctx), _history(ctx)
    grid = range(steps["start"], steps["stop"], steps["step"])
    total = schedule(meta)["total_steps"]
    curves = {paper["label"]: [{"step": i, "lr": noam_lr(i, paper["d_model"], paper["warmup"], paper["factor"])}
                               for i in grid],
              shipped_schedule_label(meta): [{"step": i, "lr": schedule_lr(meta, i)} for i in range(1, total + 1)],
              LOGGED_LR: [{"step": r["step"], "lr": r["lr"]} for r in history if r.get("lr") is not None]}
    fig = plots.plot_training_curves(curves, keys=("lr",), title=title)
    ax = fig.axes[0]
    ax.lines[-1].set(linestyle="none", marker="o", markersize=3)   # the logged rates: points on the curve
    ax.set_yscale(yscale)
    ax.legend(fontsize="small")
    return fig


@_recipe("week6_label_smoothing", ["week6_training"], "fig-label-smoothing",
         "The target distribution of one position whose reference token is the vocabulary's first Korean character, 십, "
         "without label smoothing (one-hot) and with the shipped model's eps spread over all V target tokens, "
         "<pad> included, as txcourse's loss does (log scale).", plots.plot_distributions,
         params={"title": "The target of one position, with and without label smoothing"},
         inputs=[TRANSFORMER_CHECKPOINT], frameworks=())
def label_smoothing(ctx: _Context, title: str):
    from txcourse.course.artefacts import smoothed_target
    from txcourse.data.prepare import tokenizers_from_meta

    meta = _meta(ctx)
    eps = float(meta["train_config"]["label_smoothing"])
    _, tgt_tok = tokenizers_from_meta(meta)
    vocab = int(meta["model"]["config"]["tgt_vocab_size"])
    labels = [tgt_tok.id_to_token(i).replace(" ", "\u2423") for i in range(vocab)]
    target = next(i for i in range(vocab) if not labels[i].startswith("<"))   # the first real token
    true, other = smoothed_target(vocab, eps)
    one_hot = np.eye(vocab)[target]
    smoothed = np.where(np.arange(vocab) == target, true, other)
    fig = plots.plot_distributions({"one-hot (eps = 0)": one_hot, f"smoothed (eps = {eps:g})": smoothed}, labels,
                                   title=title, log=True)
    fig.axes[0].set_ylim(other / 3, 1.5)     # the zeros of the one-hot fall off the log axis
    return fig


VALID_CURVE = "validation split (dropout off)"


@_recipe("week6_training_curves", ["week6_training"], "fig-training-curves",
         "Training curves of the week 6 Transformer: label-smoothed loss and token accuracy on the training "
         "batches (with dropout), averaged over each logging interval, and on the validation split at every "
         "logged step (teacher-forced, dropout off, from the history); the squares are the final weights on "
         "training sentences with dropout off; the dashed line is the loss floor, the entropy of the smoothed "
         "target.",
         plots.plot_training_curves,
         params={"keys": ["loss", "accuracy"], "train_sentences": 1000,
                 "title": "Training a small Transformer on numbers (en -> ko)"},
         inputs=[TRANSFORMER_HISTORY, TRANSFORMER_CHECKPOINT])
def training_curves(ctx: _Context, keys: Sequence[str], train_sentences: int, title: str):
    from txcourse.course.artefacts import smoothed_target_entropy, teacher_forced
    from txcourse.data import get_task
    from txcourse.training import validation_curve

    history = _history(ctx)
    model, meta, src_tok, tgt_tok = _load_checkpoint(ctx, TRANSFORMER_CHECKPOINT, "transformer")
    splits = get_task(meta["task"]["name"], **meta["task"]["kwargs"])
    eps = float(meta["train_config"]["label_smoothing"])
    final = teacher_forced(ctx.fw, model, splits.train[:train_sentences], src_tok, tgt_tok, eps)
    runs = {"training batches (dropout on)": history, VALID_CURVE: validation_curve(history),
            "training sentences, final weights (dropout off)": [{"step": int(meta["step"]), **final}]}
    fig = plots.plot_training_curves(runs, keys=tuple(keys), title=title)
    for ax in fig.axes:
        ax.lines[1].set(marker="o", markersize=3)
        ax.lines[2].set(linestyle="none", marker="s", markersize=7, markerfacecolor="none")
        if ax.get_title() == "loss":
            floor = smoothed_target_entropy(int(meta["model"]["config"]["tgt_vocab_size"]), eps)
            ax.axhline(floor, color="0.3", linestyle="--", linewidth=1, label=f"floor H(q) = {floor:.3f}")
        ax.legend(fontsize="x-small")
    return fig


# ---------------------------------------------------------------------------
# Week 6, part 2: decoding and evaluation
# ---------------------------------------------------------------------------
def _test_source(ctx: _Context, meta: Mapping[str, Any], src_tok: Any, split: str, min_src_tokens: int,
                 max_src_tokens: int) -> str:
    from txcourse.data import get_task

    task = meta.get("task")
    if not task:
        raise ValueError(f"{TRANSFORMER_CHECKPOINT} does not record its task (was it written by txcourse train?)")
    pairs = get_task(task["name"], **task["kwargs"])[split]
    source = next((s for s, _ in pairs if min_src_tokens <= len(src_tok.encode(s)) <= max_src_tokens), None)
    if source is None:
        raise ValueError(f"no {split} sentence of {task['name']!r} has {min_src_tokens} to {max_src_tokens} "
                         f"source tokens")
    return source


@_recipe("week6_attention_heads", ["week6_decoding"], "fig-trained-heads",
         "Encoder-decoder attention of the last decoder layer of the trained Transformer, one panel per head: "
         "rows are the generated characters, columns the English source tokens.", plots.plot_attention_heads,
         params={"split": "test", "min_src_tokens": 5, "max_src_tokens": 8, "ncols": 2, "space": "\u2423",
                 "title": "Encoder-decoder attention, last decoder layer"},
         inputs=[TRANSFORMER_CHECKPOINT])
def trained_heads(ctx: _Context, split: str, min_src_tokens: int, max_src_tokens: int, ncols: int, space: str,
                  title: str):
    model, meta, src_tok, tgt_tok = _load_checkpoint(ctx, TRANSFORMER_CHECKPOINT, "transformer")
    source = _test_source(ctx, meta, src_tok, split, min_src_tokens, max_src_tokens)
    ids = [src_tok.encode(source)]                              # (1, T_src)
    out = ctx.fw.greedy_decode(model, ctx.tensor(ids))          # attention (1, H, T_out, T_src)
    tokens, length = _decoded_tokens(ctx, out, tgt_tok.eos_id)
    return plots.plot_attention_heads(ctx.numpy(out.attention)[0, :, :length],
                                      [src_tok.id_to_token(i) for i in ids[0]],
                                      [tgt_tok.id_to_token(i).replace(" ", space) for i in tokens[:length]],
                                      ncols=ncols, title=title)


def trained_attention(ctx: _Context, model: Any, src_ids: Sequence[int], tgt_in: Sequence[int]) -> dict:
    """Every attention map of a teacher-forced pass: ``{(kind, layer): (H, T_q, T_k)}``.

    ``kind`` is "encoder self", "decoder self" or "cross" (encoder-decoder);
    the model must be built with ``fused=False`` (the fused kernel keeps no weights).
    """
    src, tgt = ctx.tensor([list(src_ids)]), ctx.tensor([list(tgt_in)])       # (1, T_src), (1, T_tgt)
    lib, length = ctx.lib, len(tgt_in)
    if ctx.framework == "torch":
        model.eval()
    with _torch_no_grad() if ctx.framework == "torch" else contextlib.nullcontext():
        src_mask = lib.padding_mask(src, model.config.pad_id)                # (1, 1, 1, T_src)
        memory, _, encoder_weights = model.encoder(src, src_mask, return_weights=True)   # (1, T_src, D)
        tgt_mask = ctx.numpy(lib.look_ahead_mask(length)) | ctx.numpy(lib.padding_mask(tgt))   # (1, 1, T, T)
        _, _, decoder_weights = model.decoder(tgt, memory, ctx.tensor(tgt_mask), src_mask, return_weights=True)
    weights = {"encoder self": list(encoder_weights), "decoder self": [w[0] for w in decoder_weights],
               "cross": [w[1] for w in decoder_weights]}
    maps = {}
    for kind, layers in weights.items():
        for i, layer_weights in enumerate(layers):
            if layer_weights is None:
                raise ValueError("the model computes no attention weights (built with fused=True?): "
                                 "load it with fused=False to plot them")
            maps[(kind, i)] = ctx.numpy(layer_weights)[0]                   # (H, T_q, T_k)
    return maps


@_recipe("week6_attention_maps", ["week6_decoding"], "fig-trained-attention-maps",
         "Every attention map of the trained Transformer for one test number, teacher-forced on its greedy "
         "translation: one row per kind and layer (encoder self-attention, decoder self-attention, "
         "encoder-decoder attention), one column per head, each row on its own colour scale.",
         plots.plot_attention_heads,
         params={"split": "test", "min_src_tokens": 3, "max_src_tokens": 4, "space": "\u2423",
                 "title": "All attention maps of the trained model"},
         inputs=[TRANSFORMER_CHECKPOINT])
def attention_maps(ctx: _Context, split: str, min_src_tokens: int, max_src_tokens: int, space: str, title: str):
    import matplotlib.pyplot as plt

    model, meta, src_tok, tgt_tok = _load_checkpoint(ctx, TRANSFORMER_CHECKPOINT, "transformer")
    source = _test_source(ctx, meta, src_tok, split, min_src_tokens, max_src_tokens)
    src_ids = src_tok.encode(source)
    tokens, length = _decoded_tokens(ctx, ctx.fw.greedy_decode(model, ctx.tensor([src_ids])), tgt_tok.eos_id)
    tgt_in = [tgt_tok.sos_id] + tokens[:length - 1]             # the decoder's inputs: <sos> and its own outputs
    maps = trained_attention(ctx, model, src_ids, tgt_in)
    src_labels = [src_tok.id_to_token(i) for i in src_ids]
    in_labels = [tgt_tok.id_to_token(i).replace(" ", space) for i in tgt_in]
    out_labels = [tgt_tok.id_to_token(i).replace(" ", space) for i in tokens[:length]]
    heads = next(iter(maps.values())).shape[0]
    fig, grid = plt.subplots(len(maps), heads, squeeze=False, layout="constrained",
                             figsize=(2.3 * heads + 1.2, 2.3 * len(maps) + 0.6))
    for row, ((kind, layer), weights) in zip(grid, maps.items()):
        keys, queries = {"encoder self": (src_labels, src_labels), "decoder self": (in_labels, in_labels),
                         "cross": (src_labels, out_labels)}[kind]
        plots.plot_attention_heads(weights, keys, queries, ax=row)
        for h, ax in enumerate(row):
            ax.set_title(f"{kind}, layer {layer}, head {h}", fontsize="small")
            ax.set_xlabel("keys" if kind != "cross" else "source (keys)", fontsize="small")
            ax.set_ylabel("queries", fontsize="small")
            ax.tick_params(labelsize="x-small")
    fig.suptitle(f"{title}: {source}")
    return fig


# ---------------------------------------------------------------------------
# After week 6: BERT and GPT
# ---------------------------------------------------------------------------
@_recipe("bert_gpt_attention", ["bert_gpt"], "fig-bert-gpt-attention",
         "Self-attention weights (head 0, first layer) of the same untrained layer with a padding mask "
         "(BERT-style, left) and a look-ahead mask (GPT-style, right).", plots.plot_attention,
         params={"seed": 0, "vocab_size": 100, "d_model": 32, "num_heads": 4, "d_ff": 64, "max_len": 64,
                 "num_layers": 2, "tokens": [[11, 12, 13, 14, 15, 16]], "figsize": [10, 4],
                 "titles": ["BERT (padding mask)", "GPT (look-ahead mask)"]})
def bert_gpt_attention(ctx: _Context, seed: int, vocab_size: int, d_model: int, num_heads: int, d_ff: int,
                       max_len: int, num_layers: int, tokens, figsize, titles):
    import torch

    txt = ctx.lib
    torch.manual_seed(seed)
    embed = txt.TransformerEmbedding(vocab_size=vocab_size, d_model=d_model, max_len=max_len, dropout=0.0).eval()
    layers = [txt.EncoderLayer(d_model=d_model, num_heads=num_heads, d_ff=d_ff, dropout=0.0).eval()
              for _ in range(num_layers)]
    tokens_t = torch.tensor(tokens)                             # (B, T)
    t = tokens_t.shape[1]
    masks = [txt.padding_mask(tokens_t), txt.look_ahead_mask(t) | txt.padding_mask(tokens_t)]
    labels = [f"x{i}" for i in range(1, t + 1)]
    fig, axes = _subplots(2, figsize)
    with torch.no_grad():
        for ax, mask, title in zip(axes, masks, titles):
            x = embed(tokens_t)                                 # (B, T, D)
            weights = []
            for layer in layers:
                x, _, layer_weights = layer(x, mask, return_weights=True)   # (B, T, D), (B, H, T, T)
                weights.append(layer_weights)
            plots.plot_attention(weights[0][0, 0].numpy(), labels, labels, title=title, ax=ax)
    return fig


# ---------------------------------------------------------------------------
# Running the recipes
# ---------------------------------------------------------------------------
def select(names: Optional[Sequence[str]] = None) -> list[Recipe]:
    """The recipes named (exact names or shell patterns such as ``week3_*``), in registry order; all when None."""
    if not names:
        return list(RECIPES.values())
    chosen: set[str] = set()
    for pattern in names:
        matched = fnmatch.filter(RECIPES, pattern)
        if not matched:
            raise ValueError(f"unknown figure {pattern!r}; figures are {list(RECIPES)}")
        chosen.update(matched)
    return [r for r in RECIPES.values() if r.name in chosen]


def _all_inputs() -> list[str]:
    return sorted({i for r in RECIPES.values() for i in r.inputs})


def default_root() -> Path:
    """Where inputs are looked up: the current folder if it holds any, else the package's checkout."""
    for root in (Path.cwd(), REPO_ROOT):
        if any((root / i).is_file() for i in _all_inputs()):
            return root
    return Path.cwd()


def missing_inputs(recipe: Recipe, root: Path) -> list[str]:
    """The inputs of ``recipe`` that do not exist under ``root``."""
    return [i for i in recipe.inputs if not (root / i).is_file()]


def _reset_state(recipe: Recipe, ctx: _Context) -> None:
    """The same starting point for every recipe: seeds, matplotlib's defaults, no open figures."""
    import matplotlib
    import matplotlib.pyplot as plt

    plt.close("all")
    matplotlib.rcdefaults()  # matplotlib's own defaults, whatever a matplotlibrc or an earlier cell set
    random.seed(DEFAULT_SEED)
    np.random.seed(DEFAULT_SEED)
    if recipe.frameworks:
        ctx.fw.set_seed(DEFAULT_SEED)


def draw(name: str, root: Optional[str | os.PathLike] = None, framework: str = "torch"):
    """Draw the figure ``name`` and return it (not saved), e.g. in a notebook: ``draw("week3_scaling")``.

    Raises:
        ValueError: an unknown name or framework, or an input the recipe cannot read.
        FileNotFoundError: an input file that does not exist under ``root``.
    """
    recipe = RECIPES.get(name)
    if recipe is None:
        raise ValueError(f"unknown figure {name!r}; figures are {list(RECIPES)}")
    root = Path(root) if root is not None else default_root()
    _check_framework(recipe, framework)
    missing = missing_inputs(recipe, root)
    if missing:
        raise FileNotFoundError(f"figure {name} needs {missing[0]}, which does not exist under {root}")
    ctx = _Context(root, framework)
    import matplotlib
    import matplotlib.pyplot as plt

    # Load pyplot's backend before saving the settings: in a notebook, loading it is what turns on
    # interactive mode for IPython's inline backend, and restoring the settings saved before it would
    # turn it off again, and with it the display of every later figure of the notebook.
    if hasattr(plt, "_get_backend_mod"):
        plt._get_backend_mod()
    with matplotlib.rc_context():  # the caller's settings come back afterwards
        _reset_state(recipe, ctx)
        return recipe.draw(ctx, **recipe.params)


def _check_framework(recipe: Recipe, framework: str) -> None:
    from txcourse.registry import FRAMEWORKS

    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {list(FRAMEWORKS)}, got {framework!r}")
    if recipe.frameworks and framework not in recipe.frameworks:
        raise ValueError(f"figure {recipe.name} is drawn with {' or '.join(recipe.frameworks)} only, "
                         f"as in the book; use framework='torch'")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _version(dist: str) -> Optional[str]:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _framework_version(framework: str) -> Optional[str]:
    """The installed version of the framework, read without importing it."""
    dists = ("torch",) if framework == "torch" else ("tensorflow", "tensorflow-cpu", "tensorflow-macos")
    return next((v for v in map(_version, dists) if v), None)


def _warn(message: str) -> None:
    from tqdm import tqdm

    tqdm.write(f"warning: {message}", file=sys.stderr)


def build_figures(out_dir: str | os.PathLike, names: Optional[Sequence[str]] = None,
                  root: Optional[str | os.PathLike] = None, framework: str = "torch", fmt: str = "png",
                  dpi: int = 150, strict: bool = False, progress: bool = False) -> dict[str, Any]:
    """Draw the figures ``names`` (default: all) into ``out_dir`` and write ``manifest.json`` and ``README.md``.

    Args:
        out_dir: the folder to write (created).
        names: figure names or patterns (``week3_*``); None for every figure.
        root: the folder the inputs are looked up in (default: :func:`default_root`).
        framework: the framework half that draws the figures; the recipes that only exist in
            PyTorch, as in the book, are skipped under ``"tf"``.
        fmt: ``png``, ``svg`` or ``pdf``.
        dpi: resolution of PNG files (and of the heat maps inside SVG and PDF files).
        strict: stop with FileNotFoundError, before drawing anything, when an input is missing
            (default: skip those figures with a warning).
        progress: show a progress bar on standard error.

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).

    Raises:
        ValueError: an unknown figure, framework or format, a bad dpi, or (after the manifest
            is written) a recipe that could not read its input.
        FileNotFoundError: with ``strict``, the missing inputs.
    """
    import matplotlib
    import matplotlib.pyplot as plt
    from tqdm import tqdm

    from txcourse.registry import FRAMEWORKS

    recipes = select(names)
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {list(FRAMEWORKS)}, got {framework!r}")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 10 <= dpi <= 2000:
        raise ValueError(f"dpi must be an integer from 10 to 2000, got {dpi!r}")
    root = Path(root) if root is not None else default_root()
    if not root.is_dir():
        raise FileNotFoundError(f"root folder {str(root)!r} does not exist")
    missing = {r.name: missing_inputs(r, root) for r in recipes}
    if strict and any(missing.values()):
        listed = ", ".join(f"{i} (for {n})" for n, files in missing.items() for i in files)
        raise FileNotFoundError(f"missing input(s) under {root}: {listed}; make them as book/instructor.md "
                                f"says, or drop --strict to skip those figures")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = _Context(root, framework)
    entries: dict[str, dict[str, Any]] = {}
    failed: list[str] = []
    bar = tqdm(recipes, desc="figures", unit="fig", disable=not progress, file=sys.stderr)
    for recipe in bar:
        bar.set_postfix_str(recipe.name)
        entry: dict[str, Any] = {
            "file": f"{recipe.name}.{fmt}", "chapters": list(recipe.chapters), "book_label": recipe.label,
            "caption": recipe.caption,
            "function": recipe.function_path, "recipe": recipe.recipe_path, "parameters": recipe.params,
            "inputs": [{"path": i, "sha256": None if i in missing[recipe.name] else _sha256(root / i)}
                       for i in recipe.inputs],
            "sha256": None, "status": "written", "reason": None}
        entries[recipe.name] = entry
        reason = None
        if recipe.frameworks and framework not in recipe.frameworks:
            reason = f"drawn with {' or '.join(recipe.frameworks)} only, as in the book"
        elif missing[recipe.name]:
            reason = "missing input " + ", ".join(missing[recipe.name])
        if reason:
            entry.update(status="skipped", reason=reason)
            (out / entry["file"]).unlink(missing_ok=True)  # no stale file from an earlier run
            _warn(f"{recipe.name} skipped: {reason}")
            continue
        with matplotlib.rc_context():
            _reset_state(recipe, ctx)
            try:
                figure = recipe.draw(ctx, **recipe.params)
            except (ValueError, KeyError, OSError) as err:
                if not recipe.inputs:  # no input to blame: a bug, show the traceback
                    raise
                message = str(err).splitlines()[0] if str(err) else type(err).__name__
                entry.update(status="failed", reason=f"{type(err).__name__}: {message}")
                (out / entry["file"]).unlink(missing_ok=True)
                failed.append(recipe.name)
                _warn(f"{recipe.name} failed: {message}")
                continue
            path = plots.save_figure(figure, out / entry["file"], dpi=dpi)
        entry["sha256"] = _sha256(path)
        plt.close("all")
    bar.close()
    manifest = {
        "txcourse": txcourse.__version__, "matplotlib": matplotlib.__version__, "numpy": np.__version__,
        "framework": framework, "framework_version": _framework_version(framework),
        "cjk_font": plots.cjk_font(), "format": fmt, "dpi": dpi,
        "reproducible": "byte for byte: the same versions and fonts write files with the same sha256",
        "figures": entries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "README.md").write_text(_readme(manifest), encoding="utf-8")
    if failed:
        raise ValueError(f"{len(failed)} figure(s) could not be drawn from their inputs: {', '.join(failed)} "
                         f"(reasons in {out / 'manifest.json'})")
    return manifest


def _readme(manifest: Mapping[str, Any]) -> str:
    lines = ["# Figures of the txcourse book", "",
             f"Drawn by `txcourse figures` (txcourse {manifest['txcourse']}, matplotlib {manifest['matplotlib']}, "
             f"{manifest['framework']} {manifest['framework_version']}). `manifest.json` lists the function, "
             "recipe, parameters and input files of each figure.", "",
             "| figure | chapters | caption |", "|---|---|---|"]
    for name, e in manifest["figures"].items():
        shown = f"[{name}]({e['file']})" if e["status"] == "written" else f"{name} ({e['status']}: {e['reason']})"
        lines.append(f"| {shown} | {', '.join(e['chapters'])} | {e['caption']} |")
    return "\n".join(lines) + "\n"


def format_recipe_list(root: Optional[str | os.PathLike] = None, recipes: Optional[Sequence[Recipe]] = None) -> str:
    """A table of the figures (default: all): name, chapters, inputs (and whether they exist under ``root``)."""
    root = Path(root) if root is not None else default_root()
    recipes = list(RECIPES.values()) if recipes is None else list(recipes)
    width = max(len(r.name) for r in recipes)
    rows = []
    for r in recipes:
        inputs = ", ".join(f"{i}{'' if (root / i).is_file() else ' (missing)'}" for i in r.inputs) or "-"
        rows.append(f"{r.name:<{width}}  {','.join(r.chapters):<16}  {inputs}")
    return "\n".join(rows)
