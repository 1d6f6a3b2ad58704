"""Every figure of the book, redrawn from fixed seeds: the recipes behind ``txcourse figures``.

Each :class:`Recipe` names a figure (``week3_scaling``), the chapter(s) that
show it, a caption, the :mod:`txcourse.notebook.plots` function that draws it, its
parameters and the files it reads (relative to the repository root), and
holds the function that returns the :class:`matplotlib.figure.Figure`. The
recipes repeat the code cells of the chapters with the same parameters, so a
figure here is the figure of the book, ready for slides or handouts.

:func:`build_figures` (``make figures``, ``txcourse figures --out DIR``) draws
them into one folder with a ``manifest.json`` and a ``README.md``, each from
the same seeds and matplotlib settings, so that two runs on the same machine
write the same bytes; :func:`draw` returns one figure, e.g. in a notebook.

The modules:

- :mod:`~txcourse.course.figures.recipe`: :class:`Recipe`, the registry
  :data:`RECIPES` and its ``register`` decorator, the context a recipe draws with;
- one module of recipes per chapter, named after its page in ``book/``
  (``week1_seq2seq``, ``week2_positional``, ``week3_attention``, ``week4_encoder``,
  ``week5_decoder``, ``week6_training``, ``week6_decoding``, ``bert_gpt``); importing
  this package registers them all, in the book's order;
- :mod:`~txcourse.course.figures.build`: choosing, drawing and writing them
  (:func:`select`, :func:`draw`, :func:`build_figures`, the manifest, :func:`format_recipe_list`).

Framework-free at import time: a recipe imports its framework half through
:func:`txcourse.backends.backend` only when it runs.

Example:
    >>> sorted(RECIPES)[:2]
    ['bert_gpt_attention', 'week1_accuracy_by_length']
    >>> RECIPES["week2_positional_encoding"].function_path
    'txcourse.notebook.plots.plot_positional_encoding'
"""

from __future__ import annotations

# The chapters' recipes register themselves on import, in this order: the book's, and so RECIPES'
# (tests/course/test_figures.py checks it), not the alphabet's.
# isort: off
from txcourse.course.figures import week1_seq2seq, week2_positional, week3_attention, week4_encoder  # noqa: F401
from txcourse.course.figures import week5_decoder, week6_training, week6_decoding, bert_gpt  # noqa: F401

# isort: on
from txcourse.course.figures.build import (
    FORMATS,
    REPO_ROOT,
    build_figures,
    default_root,
    draw,
    format_recipe_list,
    missing_inputs,
    select,
)
from txcourse.course.figures.recipe import RECIPES, Recipe

# Names the book and the tests use from the chapters' modules, as before the split.
from txcourse.course.figures.week1_seq2seq import BAHDANAU_CHECKPOINT, LENGTH_CURVES  # noqa: F401
from txcourse.course.figures.week6_decoding import trained_attention  # noqa: F401
from txcourse.course.figures.week6_training import LOGGED_LR, VALID_CURVE, shipped_schedule_label  # noqa: F401

__all__ = [
    "Recipe",
    "RECIPES",
    "REPO_ROOT",
    "FORMATS",
    "select",
    "default_root",
    "missing_inputs",
    "draw",
    "build_figures",
    "format_recipe_list",
]
