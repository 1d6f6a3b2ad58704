"""Code that must stay duplicated is marked, and the marks are checked (HF transformers' ``# Copied from``).

The two halves mirror each other line for line, so a reader can diff them; most of that mirror is
framework code and differs by design (tests/drift/test_api_drift.py checks the signatures). Where a
function or class is framework-free but must stay inside each half (each half is importable alone),
the copy carries a marker on the line above its ``def``/``class``:

    # Copied from txcourse.torch.decode.length_penalty
    # Copied from txcourse.torch.decode.BeamState with torch->tf, Tensor->tf.Tensor

and this suite holds it equal to the original, after the ``old->new`` replacements the marker names
(comma-separated). The sources are read with ``ast``, so neither framework is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARK = re.compile(r"^[ \t]*# Copied from (?P<target>[\w.]+)(?: with (?P<subs>.+))?$")
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _start(node: ast.AST) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def _source(text: str, node: ast.AST) -> list[str]:
    """The definition's lines, dedented."""
    lines = text.splitlines()[_start(node) - 1 : node.end_lineno]
    pad = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return [line[pad:] for line in lines]


def _named(path: Path, name: str) -> ast.AST:
    """The definition ``name`` (``f`` or ``Class.method``) in ``path``."""
    scope: list[ast.stmt] = ast.parse(path.read_text()).body
    node = None
    for part in name.split("."):
        node = next((n for n in scope if isinstance(n, DEFS) and n.name == part), None)
        if node is None:
            raise LookupError(f"{path} defines no {name!r}")
        scope = node.body
    return node


def _after(text: str, line_no: int) -> ast.AST | None:
    """The definition that starts on the line after ``line_no`` (the marker's)."""
    return next((n for n in ast.walk(ast.parse(text)) if isinstance(n, DEFS) and _start(n) == line_no + 1), None)


def _resolve(target: str) -> tuple[Path, str]:
    """``txcourse.torch.decode.f`` -> (txcourse/torch/decode.py, "f"); also ``module.Class.method``."""
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = ROOT.joinpath(*parts[:cut]).with_suffix(".py")
        if path.exists():
            return path, ".".join(parts[cut:])
    raise LookupError(f"no module of the repository holds {target!r}")


def check_copy(path: Path, text: str, line_no: int, target: str, subs: str | None) -> list[str]:
    """Where the copy after the marker on ``line_no`` differs from its original ([]: nowhere)."""
    node = _after(text, line_no)
    if node is None:
        return [f"{path}:{line_no}: the marker is not directly above a def or class"]
    original_path, name = _resolve(target)
    original = _source(original_path.read_text(), _named(original_path, name))
    for pair in filter(str.strip, (subs or "").split(",")):
        old, new = (s.strip() for s in pair.split("->"))
        original = [line.replace(old, new) for line in original]
    copy = _source(text, node)
    for i, (c, o) in enumerate(zip(copy + ["<end>"], original + ["<end>"])):
        if c != o:
            return [
                f"{path}:{line_no}: line {i + 1} differs from {target}"
                + (f" with {subs}" if subs else "")
                + f": {c!r}, the original has {o!r}"
            ]
    return []


def markers() -> list[tuple[Path, int, str, str | None]]:
    found = []
    for path in sorted((ROOT / "txcourse").rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            m = MARK.match(line)
            if m:
                found.append((path, i, m.group("target"), m.group("subs")))
    return found


MARKERS = markers()


def test_there_are_marked_copies():
    assert MARKERS, "no '# Copied from' marker in txcourse/: this suite would check nothing"


@pytest.mark.parametrize(
    "path,line_no,target,subs", MARKERS, ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _, _ in MARKERS]
)
def test_copy_equals_its_original(path, line_no, target, subs):
    assert check_copy(path.relative_to(ROOT), path.read_text(), line_no, target, subs) == []


@pytest.mark.parametrize("index", range(len(MARKERS)))
def test_a_copy_that_drifts_is_caught(index):
    """One added statement at the end of each copy's body: the check names the copy and the line."""
    path, line_no, target, subs = MARKERS[index]
    text = path.read_text()
    node = _after(text, line_no)
    body_indent = " " * node.body[-1].col_offset
    lines = text.splitlines()
    lines.insert(node.end_lineno, f"{body_indent}_drifted = None")
    found = check_copy(Path("drifted.py"), "\n".join(lines) + "\n", line_no, target, subs)
    assert len(found) == 1 and f"differs from {target}" in found[0], found
