"""The package's import graph, read from the code: which txcourse module imports which, and in which layer each is.

Public, for tests and for the figures of a closing note::

    python tests/support/import_graph.py [ROOT]   # ROOT: a checkout (default: this one); prints the summary

An edge ``a -> b`` is an import of txcourse module ``b`` anywhere in ``a``'s
source: at module level or inside a function or class (an import deferred
until a call is still a dependency), relative imports resolved against
``a``'s package, and ``importlib.import_module("txcourse....")`` with a
literal name. ``from x import y`` counts ``x`` and, when ``x.y`` is a module,
``x.y`` (Python runs ``x``'s ``__init__`` first).

The layers, bottom up (:func:`layer`):

* ``framework-free``: the config, registry, decoding helpers, caches, argument
  checks and the error type of the user's mistakes (``errors``), ``data/``,
  ``training/``, ``evaluation/``, and the package itself;
* ``half``: ``txcourse.torch`` and ``txcourse.tf``;
* ``upper``: everything else (``backends``, ``distributed_check``, ``convert``,
  ``cli/``, ``course/``, ``notebook/``), which may import any layer.

An import climbs (:func:`climbing_edges`) when it goes from a lower layer to
a higher one: framework-free -> half, framework-free -> upper, half -> upper.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FRAMEWORK_FREE",
    "HALVES",
    "LAYERS",
    "ImportGraph",
    "build_graph",
    "climbing_edges",
    "cycles",
    "layer",
    "summary",
]

ROOT = Path(__file__).resolve().parents[2]

# Modules (and the packages whose every module) that need no framework; "txcourse" is the package's __init__.
FRAMEWORK_FREE = (
    "txcourse",
    "txcourse._validation",
    "txcourse.cache",
    "txcourse.config",
    "txcourse.decoding",
    "txcourse.errors",
    "txcourse.registry",
    "txcourse.data",
    "txcourse.training",
    "txcourse.evaluation",
)
HALVES = ("txcourse.torch", "txcourse.tf")
LAYERS = ("framework-free", "half", "upper")  # bottom up


@dataclass(frozen=True)
class ImportGraph:
    """``modules``: every txcourse module by dotted name -> its file; ``edges``: module -> the modules it imports."""

    modules: dict[str, Path]
    edges: dict[str, set[str]]

    def pairs(self) -> list[tuple[str, str]]:
        """Every edge as (importer, imported), sorted."""
        return sorted((a, b) for a, targets in self.edges.items() for b in targets)


def _in(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def layer(module: str) -> str:
    """'framework-free', 'half' or 'upper' (see the module docstring)."""
    if _in(module, HALVES):
        return "half"
    if module == "txcourse" or _in(module, FRAMEWORK_FREE[1:]):
        return "framework-free"
    return "upper"


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((root / "txcourse").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` is, or the nearest package or module above it that exists (``from m import f``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names one import statement (or importlib.import_module call) brings in."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".") if is_package else module.split(".")[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([base] if base else []))
        return [base] + [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, (ast.Attribute, ast.Name))
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def build_graph(root: Path | str = ROOT) -> ImportGraph:
    """The import graph of the ``txcourse`` package of the checkout at ``root``."""
    root = Path(root)
    modules = _modules(root)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _imported(node, name, path.name == "__init__.py"):
                if target == "txcourse" or target.startswith("txcourse."):
                    resolved = _resolve(target, modules)
                    if resolved is not None and resolved != name:
                        edges[name].add(resolved)
    return ImportGraph(modules, edges)


def cycles(graph: ImportGraph) -> list[list[str]]:
    """The import cycles: every strongly connected component of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):  # Tarjan's algorithm, iterative (no recursion limit)
        if start in index:
            continue
        work = [(start, iter(sorted(graph.edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def climbing_edges(graph: ImportGraph) -> list[tuple[str, str]]:
    """The imports that go from a lower layer to a higher one (framework-free -> half or upper, half -> upper)."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [(a, b) for a, b in graph.pairs() if rank[layer(a)] < rank[layer(b)]]


def summary(graph: ImportGraph) -> str:
    """Modules and imports by layer, the cycles and the climbing imports, as lines of text."""
    counts = {name: sum(layer(m) == name for m in graph.modules) for name in LAYERS}
    found, climbing = cycles(graph), climbing_edges(graph)
    lines = [
        f"modules {len(graph.modules)} ({', '.join(f'{n} {c}' for n, c in counts.items())}), "
        f"imports {len(graph.pairs())}, cycles {len(found)}, climbing imports {len(climbing)}"
    ]
    lines += [f"  cycle of {len(c)}: {' '.join(c)}" for c in found]
    lines += [f"  climbs: {a} ({layer(a)}) -> {b} ({layer(b)})" for a, b in climbing]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(build_graph(sys.argv[1] if len(sys.argv) > 1 else ROOT)))
