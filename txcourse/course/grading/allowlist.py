"""The probe run's ``txcourse``: only what a lab's setup and its allowed helpers need (redaction by allow-list).

A lab's spec names what its probes, its course cells and its allowed building blocks use
(``ALLOW = {"torch": [...], "tf": [...]}`` in ``labs/specs/<lab>.py``, written to ``labs/probes/<lab>.json``
under ``"allow"``). Each entry is ``"txcourse.module:qualname"`` (a function, or a method ``Class.method``)
or ``"txcourse.module:Class.*"`` (the class and every method of it). :func:`allowlisted_package` copies
the package and replaces the body of every other function and method of it by
``raise RuntimeError("... write it yourself")``, so that whatever computes an exercise's answer under
another name (``sample_decode`` with a patched ``filter_logits`` as a greedy decoder, ``tiled_attention``,
the layers' own attention, the NumPy helpers of ``txcourse/notebook``) raises in the probe run unless the
lab allows it. Kept as well, without being listed:

- what runs when the package is imported (a function named in a decorator or in a module-level or
  class-level statement, such as ``register`` or ``_inference``): importing must work;
- the *private* functions and methods (a name with a leading underscore, or any name of a private module such
  as ``txcourse._validation``) that a kept function names in its body (by name: an over-approximation,
  private helpers only). A *public* helper a kept function
  calls must be listed: :func:`public_units` of a copy is what the allow-list says, and no more
  (``tests/course/test_allowlist.py``).

``txcourse/course`` (the grader), ``txcourse/cli`` and ``txcourse/__main__.py`` are left out of the copy. Standard library only.
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ABSENT",
    "REDACTED",
    "Unit",
    "units",
    "expand",
    "kept_units",
    "setup_allow",
    "sublayers_allow",
    "allowlisted_package",
    "public_units",
    "live_units",
    "load_allow",
    "package_for_lab",
]

ABSENT = ("course", "cli")  # subpackages of txcourse the probe run's copy does not have
IMPLICIT = {"__init_subclass__", "__set_name__", "__class_getitem__"}  # Python calls them when a class is made
CONSTRUCT = {"__init__", "__new__", "__post_init__"}  # what making an instance runs (a class called on import)
REDACTED = "is not available while your answers are checked: the exercise asks you to write it yourself"


@dataclass(frozen=True)
class Unit:
    """One function or method of the package: ``module:qualname``, its file and its AST node."""

    module: str
    qualname: str
    path: Path
    node: ast.AST

    @property
    def name(self) -> str:
        return f"{self.module}:{self.qualname}"

    @property
    def public(self) -> bool:
        """No private module; every part of the qualname public, the last one possibly a dunder."""
        modules = self.module.split(".")[1:]
        parts = self.qualname.split(".")
        dunder = parts[-1].startswith("__") and parts[-1].endswith("__")
        return not any(p.startswith("_") for p in modules) and not any(
            p.startswith("_") for p in (parts[:-1] if dunder else parts)
        )


def _module_name(package: Path, path: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files(package: Path) -> list[Path]:
    return sorted(
        p
        for p in package.rglob("*.py")
        if "__pycache__" not in p.parts and p.relative_to(package).parts[0] not in (*ABSENT, "__main__.py")
    )


def _defs(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualname, node) of every function and method at module or class level of ``body``."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield from _defs(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", node


def units(package: Path) -> dict[str, Unit]:
    """Every function and method defined at module or class level in ``package`` (a ``txcourse`` folder),
    by ``module:qualname``; nested functions belong to the function around them."""
    package = Path(package)
    out: dict[str, Unit] = {}
    for path in _files(package):
        module = _module_name(package, path)
        for qualname, node in _defs(ast.parse(path.read_text(encoding="utf-8")).body):
            unit = Unit(module, qualname, path, node)
            out.setdefault(unit.name, unit)  # a redefinition (property setter) keeps the first's name
    return out


def _names(node: ast.AST) -> set[str]:
    """The identifiers a piece of code mentions: names and attribute names."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return found


def _called(node: ast.AST) -> set[str]:
    """The identifiers of what a piece of code calls (``f(...)``, ``obj.f(...)``), decorators included."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            found.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return found


def _main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (runs as a script, not on import)."""
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def _import_time_names(package: Path) -> set[str]:
    """The identifiers of what importing the package calls: decorators, and calls in module and class
    bodies outside function bodies (a function named only as a value, for a registry, does not run)."""
    found: set[str] = set()
    for path in _files(package):
        if path.name == "__main__.py":  # runs as `python -m`, never on import
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(body: list[ast.stmt]) -> None:
            for node in body:
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    for expr in node.decorator_list:
                        found.update(_names(expr) if not isinstance(expr, ast.Call) else _called(expr))
                    heads = [*node.bases, *node.keywords] if isinstance(node, ast.ClassDef) else []
                    heads += [] if isinstance(node, ast.ClassDef) else [*node.args.defaults, *node.args.kw_defaults]
                    for expr in heads:
                        if expr is not None:
                            found.update(_called(expr))
                    if isinstance(node, ast.ClassDef):
                        visit(node.body)
                elif not isinstance(node, (ast.Import, ast.ImportFrom)) and not _main_guard(node):
                    found.update(_called(node))

        visit(tree.body)
    return found


def expand(allow: Iterable[str], every: Mapping[str, Unit]) -> set[str]:
    """The unit names of an allow-list: ``Class.*`` is every method of the class. An entry that names
    nothing of the package is a ValueError (a stale allow-list)."""
    out = set()
    for entry in allow:
        module, _, qualname = entry.partition(":")
        if not module.startswith("txcourse") or not qualname:
            raise ValueError(f"allow-list entries look like 'txcourse.module:function', got {entry!r}")
        if qualname.endswith(".*"):
            prefix = f"{module}:{qualname[:-1]}"
            found = {name for name in every if name.startswith(prefix)}
        else:
            found = {entry} if entry in every else set()
        if not found:
            raise ValueError(f"the allow-list entry {entry!r} names no function or method of txcourse")
        out |= found
    return out


def kept_units(package: Path, allow: Iterable[str]) -> set[str]:
    """The units the copy keeps: the allowed ones, those that importing runs, and the private units (not
    :attr:`Unit.public`) the kept ones name (transitively)."""
    every = units(package)
    by_bare: dict[str, list[str]] = {}
    for name, unit in every.items():
        by_bare.setdefault(unit.qualname.rsplit(".", 1)[-1], []).append(name)
    kept = expand(allow, every)
    called = _import_time_names(package) | IMPLICIT
    kept |= {n for bare in called for n in by_bare.get(bare, ())}
    kept |= {n for n in every if n.split(":")[1].split(".")[0] in called and n.rsplit(".", 1)[-1] in CONSTRUCT}
    todo = list(kept)
    while todo:
        for bare in _names(every[todo.pop()].node):
            for name in by_bare.get(bare, ()):
                if name not in kept and not every[name].public:  # a private helper (or one of a private module)
                    kept.add(name)
                    todo.append(name)
    return kept


def _redact(source: str, module: str, keep: set[str]) -> str:
    tree = ast.parse(source)
    for qualname, node in _defs(tree.body):
        if f"{module}:{qualname}" not in keep:
            message = f"txcourse's {qualname} ({module}) {REDACTED}"
            node.body = [ast.parse(f"raise RuntimeError({message!r})").body[0]]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def setup_allow(fw: str) -> list[str]:
    """What the setup cell of every lab (``labs/specs/_cells.py``: ``SETUP``) and its checks need in the
    probe run: ``set_seed``, the helpers of ``txcourse.notebook.checks`` the cells call, the model config and
    the course's error type. The start of each spec's ``ALLOW[fw]``."""
    checks = ("to_numpy", "normal", "assert_close", "assert_equal", "largest_difference")
    return [
        f"txcourse.{fw}.train:set_seed",
        *(f"txcourse.notebook.checks:{name}" for name in checks),
        "txcourse.config:TransformerConfig.*",
        *(f"txcourse.config:{name}" for name in ("check_int", "check_positions", "check_heads", "check_config")),
        "txcourse.errors:TxcourseError.*",
    ]


def sublayers_allow(fw: str) -> list[str]:
    """The pieces an encoder or decoder layer is built from (week 3's answers, given from week 4 on): multi-head
    attention (its cached decoding step, ``one_query_attention``, included), the two masks and the position-wise
    feed-forward network."""
    return [
        f"txcourse.{fw}.attention:MultiHeadAttention.*",
        f"txcourse.{fw}.attention:scaled_dot_product_attention",
        f"txcourse.{fw}.attention:one_query_attention",
        f"txcourse.{fw}.masks:padding_mask",
        f"txcourse.{fw}.masks:look_ahead_mask",
        f"txcourse.{fw}.feed_forward:PositionwiseFeedForward.*",
    ]


def allowlisted_package(package: Path, names: Iterable[str], dest: Path) -> Path:
    """A copy of the ``txcourse`` folder ``package`` in ``dest/txcourse`` (Python files and package data,
    no ``__pycache__``, no ``course/`` nor ``cli/``) in which every function and method raises "write it
    yourself" except those of the allow-list ``names`` and what :func:`kept_units` adds. Returns the new package folder."""
    package, out = Path(package), Path(dest) / "txcourse"
    if out.exists():
        raise FileExistsError(f"{out} exists already")
    keep = kept_units(package, names)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")

    def skip(folder: str, entries: list[str]) -> set[str]:
        top = {name for name in entries if Path(folder) == package and (name in ABSENT or name == "__main__.py")}
        return set(ignore(folder, entries)) | top

    shutil.copytree(package, out, ignore=skip, symlinks=False)
    for path in _files(out):
        module = _module_name(out, path)
        path.write_text(_redact(path.read_text(encoding="utf-8"), module, keep), encoding="utf-8")
    return out


def _redacted_body(node: ast.AST) -> bool:
    body = getattr(node, "body", [])
    return (
        len(body) == 1
        and isinstance(body[0], ast.Raise)
        and REDACTED in ast.unparse(body[0])
        and isinstance(body[0].exc, ast.Call)
    )


def public_units(copy: Path) -> set[str]:
    """The public functions and methods of a copy made by :func:`allowlisted_package` that do not raise
    "write it yourself" (read from its source)."""
    return {name for name, unit in units(copy).items() if unit.public and not _redacted_body(unit.node)}


def live_units(allow: Iterable[str], package: Path) -> set[str]:
    """The public units of the package that a copy with ``allow`` keeps: what :func:`public_units` of the
    copy must be (the allow-list, and what importing the package runs)."""
    every = units(package)
    return {name for name in kept_units(package, allow) if every[name].public}


def load_allow(labs_dir: Path, lab: str) -> dict[str, list[str]]:
    """framework -> the allow-list of ``lab`` (``labs_dir/probes/<lab>.json``, key ``"allow"``)."""
    data = json.loads((Path(labs_dir) / "probes" / f"{lab}.json").read_text(encoding="utf-8"))
    allow = data.get("allow")
    if not isinstance(allow, dict) or not all(isinstance(v, list) for v in allow.values()):
        raise ValueError(f"labs/probes/{lab}.json has no allow-list ('allow': {{framework: [names]}})")
    return {fw: [str(n) for n in names] for fw, names in allow.items()}


def package_for_lab(package: Path, labs_dir: Path, lab: str, dest: Path) -> Path:
    """The probe run's copy of ``package`` for ``lab``: its allow-lists of both frameworks (one copy serves
    both notebooks; the lists are twins)."""
    allow = load_allow(labs_dir, lab)
    return allowlisted_package(package, sorted({n for names in allow.values() for n in names}), dest)
