"""Drawing the recipes: :func:`draw` one figure, :func:`build_figures` a folder of them with its manifest.

:func:`build_figures` (``make figures``, ``txcourse figures --out DIR``) draws
them into one folder with a ``manifest.json`` (figure -> file, chapters,
caption, function, recipe, parameters, inputs and output with their sha256,
status) and a ``README.md``. Every recipe starts from the same state: the
seeds set (``set_seed(0)`` of the framework half; the recipes that use
another seed, as the book does, set it themselves), matplotlib's default
settings, no open figures. Two runs on the same machine therefore write the
same bytes, whichever figures ran before.

With ``lang="ko"`` (``txcourse figures --lang ko``) the figures are drawn
in that language: their words come from ``locales/<lang>/LC_MESSAGES/figures.po``
through the labels the book's figures use (txcourse/notebook/plots/labels.py),
set in a font with Hangul; ``make figures`` writes each language of the
course's editions into its own folder (English in ``_build/figures``, Korean in
``_build/figures/ko``), and the Korean slide decks show the Korean ones. The
manifest records the language and, per figure, the words it shows
(``labels``), so that a test can check that none is left in English.

A recipe whose input file is missing (a checkpoint not trained yet) is
skipped with a warning and listed as skipped in the manifest; with
``strict=True`` the run stops before drawing anything.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.metadata
import json
import os
import random
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

import numpy as np

import txcourse
from txcourse.course.figures.recipe import RECIPES, Context, Recipe
from txcourse.errors import TxcourseError
from txcourse.notebook import plots
from txcourse.notebook.plots import labels as figure_labels
from txcourse.registry import FRAMEWORKS

__all__ = [
    "REPO_ROOT",
    "FORMATS",
    "select",
    "default_root",
    "missing_inputs",
    "draw",
    "build_figures",
    "format_recipe_list",
]

REPO_ROOT = Path(txcourse.__file__).resolve().parents[1]  # the checkout the package was installed from
FORMATS = ("png", "svg", "pdf")
DEFAULT_SEED = 0  # set before every recipe
MATH_ONLY = re.compile(r"\$[^$]*\$")  # a text that is one mathtext expression (a log axis's ticks)


def select(names: Optional[Sequence[str]] = None) -> list[Recipe]:
    """The recipes named (exact names or shell patterns such as ``week3_*``), in registry order; all when None."""
    if not names:
        return list(RECIPES.values())
    chosen: set[str] = set()
    for pattern in names:
        matched = fnmatch.filter(RECIPES, pattern)
        if not matched:
            raise TxcourseError(f"unknown figure {pattern!r}; figures are {list(RECIPES)}", "names")
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


def _reset_state(recipe: Recipe, ctx: Context) -> None:
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
        raise TxcourseError(f"unknown figure {name!r}; figures are {list(RECIPES)}", "name")
    root = Path(root) if root is not None else default_root()
    _check_framework(recipe, framework)
    missing = missing_inputs(recipe, root)
    if missing:
        raise FileNotFoundError(f"figure {name} needs {missing[0]}, which does not exist under {root}")
    ctx = Context(root, framework)
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
    if framework not in FRAMEWORKS:
        raise TxcourseError(f"framework must be one of {list(FRAMEWORKS)}, got {framework!r}", "framework")
    if recipe.frameworks and framework not in recipe.frameworks:
        raise TxcourseError(
            f"figure {recipe.name} is drawn with {' or '.join(recipe.frameworks)} only, "
            f"as in the book; use framework='torch'",
            "framework",
        )


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


def build_figures(
    out_dir: str | os.PathLike,
    names: Optional[Sequence[str]] = None,
    root: Optional[str | os.PathLike] = None,
    framework: str = "torch",
    fmt: str = "png",
    dpi: int = 150,
    strict: bool = False,
    progress: bool = False,
    lang: str = "en",
) -> dict[str, Any]:
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
        lang: the language of the figures' words, one of the editions'
            (:data:`txcourse.notebook.plots.labels.LANGUAGES`).

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).

    Raises:
        TxcourseError: an unknown figure, framework, format or language, a bad dpi, or (after the manifest
            is written) a recipe that could not read its input.
        FileNotFoundError: with ``strict``, the missing inputs.
    """
    from tqdm import tqdm

    recipes = select(names)
    root = _check_build_args(framework, fmt, dpi, root, lang)
    missing = _missing_inputs(recipes, root, strict)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = Context(root, framework)
    entries: dict[str, dict[str, Any]] = {}
    failed: list[str] = []
    bar = tqdm(recipes, desc="figures", unit="fig", disable=not progress, file=sys.stderr)
    for recipe in bar:
        bar.set_postfix_str(recipe.name)
        entries[recipe.name] = entry = _entry(recipe, fmt, root, missing[recipe.name])
        if not _draw(recipe, ctx, entry, out, framework, missing[recipe.name], dpi, lang):
            failed.append(recipe.name)
    bar.close()
    manifest = _write_manifest(out, entries, framework, fmt, dpi, lang)
    if failed:
        raise TxcourseError(
            f"{len(failed)} figure(s) could not be drawn from their inputs: {', '.join(failed)} "
            f"(reasons in {out / 'manifest.json'})"
        )
    return manifest


def _check_build_args(framework: str, fmt: str, dpi: int, root: Optional[str | os.PathLike], lang: str = "en") -> Path:
    """:func:`build_figures`'s settings, checked (each error names its argument); the root folder to read."""
    if framework not in FRAMEWORKS:
        raise TxcourseError(f"framework must be one of {list(FRAMEWORKS)}, got {framework!r}", "framework")
    if fmt not in FORMATS:
        raise TxcourseError(f"format must be one of {list(FORMATS)}, got {fmt!r}", "fmt")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 10 <= dpi <= 2000:
        raise TxcourseError(f"dpi must be an integer from 10 to 2000, got {dpi!r}", "dpi")
    if lang not in figure_labels.LANGUAGES:
        raise TxcourseError(f"lang must be one of {list(figure_labels.LANGUAGES)}, got {lang!r}", "lang")
    root = Path(root) if root is not None else default_root()
    if not root.is_dir():
        raise FileNotFoundError(f"root folder {str(root)!r} does not exist")
    return root


def _missing_inputs(recipes: Sequence[Recipe], root: Path, strict: bool) -> dict[str, list[str]]:
    """Each recipe's inputs missing under ``root``; with ``strict``, any missing one stops the build here."""
    missing = {r.name: missing_inputs(r, root) for r in recipes}
    if strict and any(missing.values()):
        listed = ", ".join(f"{i} (for {n})" for n, files in missing.items() for i in files)
        raise FileNotFoundError(
            f"missing input(s) under {root}: {listed}; make them as book/instructor.md "
            f"says, or drop --strict to skip those figures"
        )
    return missing


def _entry(recipe: Recipe, fmt: str, root: Path, missing: Sequence[str]) -> dict[str, Any]:
    """The manifest's entry of ``recipe``, before it is drawn (status "written" until it is not)."""
    return {
        "file": f"{recipe.name}.{fmt}",
        "chapters": list(recipe.chapters),
        "book_label": recipe.label,
        "caption": recipe.caption,
        "function": recipe.function_path,
        "recipe": recipe.recipe_path,
        "parameters": recipe.params,
        "inputs": [{"path": i, "sha256": None if i in missing else _sha256(root / i)} for i in recipe.inputs],
        "sha256": None,
        "labels": [],
        "status": "written",
        "reason": None,
    }


def _draw(
    recipe: Recipe,
    ctx: Context,
    entry: dict[str, Any],
    out: Path,
    framework: str,
    missing: Sequence[str],
    dpi: int,
    lang: str = "en",
) -> bool:
    """Draw one figure into ``out``, its words in ``lang``, and fill its entry; False when its input could not
    be read (a warning says why). A figure of the other framework, or without its input, is skipped (True)."""
    import matplotlib
    import matplotlib.pyplot as plt

    reason = None
    if recipe.frameworks and framework not in recipe.frameworks:
        reason = f"drawn with {' or '.join(recipe.frameworks)} only, as in the book"
    elif missing:
        reason = "missing input " + ", ".join(missing)
    if reason:
        entry.update(status="skipped", reason=reason)
        (out / entry["file"]).unlink(missing_ok=True)  # no stale file from an earlier run
        _warn(f"{recipe.name} skipped: {reason}")
        return True
    with figure_labels.in_language(lang), matplotlib.rc_context():
        _reset_state(recipe, ctx)
        try:
            figure = recipe.draw(ctx, **recipe.params)
        except (ValueError, KeyError, OSError) as err:
            if not recipe.inputs:  # no input to blame: a bug, show the traceback
                raise
            message = str(err).splitlines()[0] if str(err) else type(err).__name__
            entry.update(status="failed", reason=f"{type(err).__name__}: {message}")
            (out / entry["file"]).unlink(missing_ok=True)
            _warn(f"{recipe.name} failed: {message}")
            return False
        if lang != "en":
            figure_labels.hangul_fonts(figure)  # _reset_state set matplotlib's default fonts again
        path = plots.save_figure(figure, out / entry["file"], dpi=dpi)
        entry["labels"] = figure_words(figure)
    entry["sha256"] = _sha256(path)
    plt.close("all")
    return True


def figure_words(figure) -> list[str]:
    """The texts a drawn figure shows that hold a letter (titles, axis and tick labels, legends, colour bars),
    sorted: its words, as the manifest records them (numbers alone and math such as ``$10^{-3}$`` left out)."""
    import matplotlib.text

    texts = {t.get_text() for t in figure.findobj(matplotlib.text.Text) if t.get_visible()}
    return sorted(t for t in texts if any(c.isalpha() for c in t) and not MATH_ONLY.fullmatch(t))


def _write_manifest(
    out: Path, entries: dict[str, dict[str, Any]], framework: str, fmt: str, dpi: int, lang: str = "en"
) -> dict:
    """Write ``manifest.json`` and ``README.md`` into ``out``; the manifest."""
    import matplotlib

    manifest = {
        "txcourse": txcourse.__version__,
        "matplotlib": matplotlib.__version__,
        "numpy": np.__version__,
        "framework": framework,
        "framework_version": _framework_version(framework),
        "cjk_font": plots.cjk_font(),
        "format": fmt,
        "dpi": dpi,
        "language": lang,
        "reproducible": "byte for byte: the same versions and fonts write files with the same sha256",
        "figures": entries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "README.md").write_text(_readme(manifest), encoding="utf-8")
    return manifest


def _readme(manifest: Mapping[str, Any]) -> str:
    lines = [
        "# Figures of the txcourse book",
        "",
        f"Drawn by `txcourse figures` (txcourse {manifest['txcourse']}, matplotlib {manifest['matplotlib']}, "
        f"{manifest['framework']} {manifest['framework_version']}). `manifest.json` lists the function, "
        "recipe, parameters and input files of each figure.",
        "",
        "| figure | chapters | caption |",
        "|---|---|---|",
    ]
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
