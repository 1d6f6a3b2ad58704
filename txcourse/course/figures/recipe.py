"""A figure's recipe and the registry of them: :class:`Recipe`, :data:`RECIPES`, the :func:`register`
decorator, and the :class:`Context` and helpers a recipe draws with.

A chapter's module (``week3_attention`` ...) registers its recipes when it is imported;
:mod:`txcourse.course.figures` imports them all, in the book's order, which is the order of
:data:`RECIPES`, of ``txcourse figures --list`` and of a manifest.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import numpy as np

from txcourse.registry import Backend

__all__ = ["Recipe", "RECIPES", "register", "Context", "subplots", "torch_no_grad", "decoded_tokens", "load_checkpoint"]


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


def register(
    name: str,
    chapters: Sequence[str],
    label: str,
    caption: str,
    function: Callable[..., Any],
    params: Optional[Mapping[str, Any]] = None,
    inputs: Sequence[str] = (),
    frameworks: Sequence[str] = ("torch",),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``draw(ctx, **params)`` as the recipe ``name`` (the arguments are :class:`Recipe`'s).

    Raises:
        ValueError: ``name`` is registered already.
        TypeError: ``params`` holds a value that is not JSON.
    """

    def add(draw_fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in RECIPES:
            raise ValueError(f"figure {name!r} is registered twice")
        json.dumps(params or {})  # the parameters go into the manifest: JSON values only
        RECIPES[name] = Recipe(
            name,
            tuple(chapters),
            label,
            caption,
            function,
            draw_fn,
            dict(params or {}),
            tuple(inputs),
            tuple(frameworks),
        )
        return draw_fn

    return add


class Context:
    """What a recipe may use: the root its inputs live under and the framework half (imported on demand)."""

    def __init__(self, root: Path, framework: str):
        self.root, self.framework = root, framework

    def path(self, relative: str) -> Path:
        return self.root / relative

    @functools.cached_property
    def fw(self) -> Backend:
        from txcourse.backends import backend

        return backend(self.framework)

    @property
    def lib(self) -> ModuleType:
        """``txcourse.torch`` or ``txcourse.tf``: the layers a figure draws with."""
        from txcourse.backends import library

        return library(self.framework)

    def tensor(self, array: Any, dtype: Any = None) -> Any:
        return self.fw.to_tensor(np.asarray(array, dtype=dtype))

    def numpy(self, tensor: Any) -> np.ndarray:
        return self.fw.to_numpy(tensor)


def subplots(ncols: int, figsize: Sequence[float]):
    """One row of ``ncols`` panels, laid out by matplotlib's constrained layout."""
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=tuple(figsize), layout="constrained")


def torch_no_grad():
    """``torch.no_grad()``, imported only when a recipe runs."""
    import torch

    return torch.no_grad()


def decoded_tokens(ctx: Context, out: Any, eos_id: int) -> tuple[list[int], int]:
    """The tokens of the first row of a DecodeOutput and its length up to and including <eos>."""
    tokens = ctx.numpy(out.tokens)[0].tolist()
    return tokens, tokens.index(eos_id) + 1 if eos_id in tokens else len(tokens)


def load_checkpoint(ctx: Context, relative: str, kind: str):
    """``(model, meta, src_tok, tgt_tok)`` of the checkpoint ``relative`` to the root; ValueError if not a ``kind``."""
    from txcourse.data.prepare import tokenizers_from_meta

    path = ctx.path(relative)
    model, meta = ctx.fw.load_model(str(path))
    if meta["model"]["kind"] != kind:
        raise ValueError(
            f"{relative} holds a {meta['model']['kind']!r} model; this figure needs a {kind!r} "
            f"checkpoint (txcourse train --model {kind})"
        )
    return model, meta, *tokenizers_from_meta(meta)
