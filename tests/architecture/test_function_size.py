"""Functions of one phase: no function in txcourse/ runs over 60 lines unless a comment says why.

A long function carries the marker ``# long-function: <why>`` on the line above its ``def`` (above its decorators),
or ``long-function: <why>`` in its docstring, and is listed in LONG_FUNCTIONS below, so the exceptions stay few
and visible. Everything else is split into named phases (STYLE.md, "Flow").
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "txcourse"
LIMIT = 60  # lines, from `def` to the last line of the body
MARKER = "long-function:"

# The marked exceptions, each with its reason at the function.
LONG_FUNCTIONS = {
    # teaching code: the tiled (flash) attention loop reads as one algorithm, as in the paper
    "torch/tiled.py::tiled_attention",
    "tf/tiled.py::tiled_attention",
}
MOST = 8  # exceptions allowed in all


def functions(path: Path):
    """(name, lines, marked) of every function and method in ``path``."""
    source = path.read_text()
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            above = lines[first - 2] if first >= 2 else ""
            docstring = ast.get_docstring(node) or ""
            marked = (above.strip().startswith("#") and MARKER in above) or MARKER in docstring
            yield node.name, node.end_lineno - node.lineno + 1, marked


def long_functions(root: Path = PACKAGE) -> tuple[dict[str, int], dict[str, int]]:
    """The functions over LIMIT lines: (unmarked, marked), each name -> its lines."""
    unmarked, marked = {}, {}
    for path in sorted(root.rglob("*.py")):
        for name, size, is_marked in functions(path):
            if size > LIMIT:
                (marked if is_marked else unmarked)[f"{path.relative_to(root).as_posix()}::{name}"] = size
    return unmarked, marked


def test_no_function_over_60_lines_without_a_reason():
    unmarked, _ = long_functions()
    assert not unmarked, (
        f"functions over {LIMIT} lines: split them into named phases, or mark one '# long-function: <why>' "
        f"and list it in LONG_FUNCTIONS: {dict(sorted(unmarked.items(), key=lambda item: -item[1]))}"
    )


def test_the_marked_exceptions_are_few_and_listed():
    _, marked = long_functions()
    assert set(marked) == LONG_FUNCTIONS, f"marked {sorted(marked)}, listed {sorted(LONG_FUNCTIONS)}"
    assert len(LONG_FUNCTIONS) <= MOST


def test_the_check_finds_a_long_function_and_honours_the_marker(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(
        f"def long():\n{body}\n\n# long-function: a reason\n@staticmethod\ndef marked():\n{body}\n\n"
        f"def short():\n    return 1\n"
    )
    assert long_functions(tmp_path) == ({"m.py::long": LIMIT + 1}, {"m.py::marked": LIMIT + 1})
