"""Code that a notebook wrote to disk is never imported (red team round D, 2026-11-28).

The source check (:mod:`~txcourse.course.grading.forbidden`) reads the cells; a cell that writes an encoded module
into the working folder (``open("helpers.py", "w").write(codecs.decode(SRC, "rot13"))``) and imports it runs code
the check never saw. Two layers close that:

- **at run time**, :data:`GUARD` runs in every confined kernel (probe and nbgrader runs, the boot of
  :mod:`~txcourse.course.grading.sandbox`) before ipykernel starts: an audit hook (it cannot be removed) refuses to
  open a code file (:data:`CODE_SUFFIXES`: ``.py``, ``.pyc``, ``.so``, ``.pth``, ``.zip`` ...) for reading or
  writing outside the folders Python was started with (``sys.path`` at boot, ``sys.prefix``) or inside a folder the
  kernel can write (the working folder, ``/tmp``, ``/dev/shm``, ``HOME``), and a finder first in ``sys.meta_path``
  refuses a module spec whose origin (or a package's search path) lies there, whatever its suffix (an extension
  module, a zip archive without ``.zip``, a namespace package, ``/proc/self/fd/N``); and code compiled or run from a
  file there, or from an archive there (round E 2026-11-28: ``zipimporter("helper.dat").load_module(name)``, which
  no finder sees, reads ``helper.dat/name.py``), whatever its name (audit events ``compile`` and ``exec``). The one exception:
  TensorFlow's AutoGraph, which writes its converted functions to ``/tmp`` and loads them, when TensorFlow
  itself (not the notebook) calls its loader.
- **in the source**, :func:`import_findings`: ``sys.path`` / ``sys.meta_path`` / ``sys.path_hooks`` /
  ``sys.path_importer_cache``, the modules that run a file (:data:`RUNS_FILES`: ``runpy``, ``zipimport``,
  ``site``, ...) and a string naming a code file (``"helpers.py"``) are findings, like the other hiding constructs.

Standard library only.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Optional

__all__ = [
    "CODE_SUFFIXES",
    "RUNS_FILES",
    "IMPORT_STATE",
    "GUARD",
    "REFUSED",
    "ALLOWED_IMPORTS",
    "REFUSED_MODULES",
    "KERNEL_IMPORTS",
    "EXTRA_IMPORTS_ENV",
    "guard_source",
    "NOT_LISTED",
    "import_findings",
    "allowlist_findings",
    "private_reason",
]

CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pyd", ".so", ".pth", ".zip", ".egg", ".whl")
# modules whose job is to run (or compile) code from a file or a string
RUNS_FILES = ("runpy", "zipimport", "zipapp", "site", "imp", "py_compile", "compileall", "codeop", "code")
# what decides where ``import`` looks
IMPORT_STATE = ("path", "meta_path", "path_hooks", "path_importer_cache")
REFUSED = "code that the notebook wrote to disk is not imported: write it in the cell"
# round E 2026-11-28 (E1): what a submission may import, an ALLOW-list of top-level modules (what the labs' exercises
# need), in place of a deny-list of the standard library's string-to-code routes (jinja2 templates, logging.config's
# resolve, timeit.Timer, cProfile.run, pdb, trace, pydoc.locate, pkgutil.resolve_name, zipimport, runpy, code,
# codeop, importlib, operator.attrgetter ...: none is on it) and of packages the venv happens to hold (ctranslate2)
ALLOWED_IMPORTS = frozenset(
    (
        "__future__",
        "numpy",
        "math",
        "cmath",
        "torch",
        "tensorflow",
        "keras",
        "txcourse",
        "matplotlib",
        "typing",
        "dataclasses",
        "functools",
        "itertools",
        "collections",
        "random",
        "statistics",
        "string",
        "re",
        "abc",
        "enum",
        "copy",
        "numbers",
        "time",
        "warnings",
        "sys",  # print(..., file=sys.stderr); its routes to names (sys.modules, _getframe, path) are findings
        "os",  # os.write(2, ...), paths; what starts a process (os.system, popen, exec*, spawn*, fork) is a finding
        "heapq",
        "bisect",
        "fractions",
        "decimal",
    )
)
# what the kernel's cells may import at run time: the list above and what the course's own cells run in the same
# namespace need (the setup cell: os, subprocess, importlib.util; the probes' emitter: base64, io)
KERNEL_IMPORTS = ALLOWED_IMPORTS | {"os", "subprocess", "importlib", "base64", "io"}
NOT_LISTED = "not on the labs' list of modules a submission may import"
# parts of allowed packages that are not: the grader, the command line, Keras' internals (keras.src: the originals
# behind the public names the labs disable); and every private (_-prefixed) module or name of a library
REFUSED_MODULES = ("txcourse.course", "txcourse.cli", "txcourse.__main__", "keras.src", "tf_keras.src")

# Run in the kernel before ipykernel starts (sandbox._KERNEL_BOOT). Names start with _tx_ and are deleted after.
GUARD = """\
def _tx_guard(suffixes=SUFFIXES, refused=REFUSED, modules=MODULES, refused_modules=REFUSED_PARTS,
              not_listed=NOT_LISTED):
    import os, sys, tempfile
    real = os.path.realpath
    trusted = sorted({real(p) for p in [*sys.path, sys.prefix, sys.base_prefix, sys.exec_prefix]
                      if p not in ("", ".") and os.path.isdir(p) and real(p) != real(os.getcwd())})
    writable = sorted({real(p) for p in (os.getcwd(), "/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"),
                                         tempfile.gettempdir())})
    autograph = os.sep + os.path.join("tensorflow", "python", "autograph", "pyct", "loader.py")
    tf_dir = os.sep + "tensorflow" + os.sep

    def under(path, roots):
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)

    # a folder Python started with that holds no writable folder (the venv's site-packages, the standard library,
    # txcourse; read-only in the sandbox) is trusted even where it lies under one (a course kept in /tmp or HOME)
    deep = [t for t in trusted if not any(under(w, [t]) for w in writable)]

    def written(path):  # in a folder the kernel can write, and not in one Python started with
        return not under(path, deep) and under(path, writable) and os.access(os.path.dirname(path), os.W_OK)

    def allowed(path):
        path = real(os.fsdecode(path))
        if path.startswith(("/proc/", "/memfd:")) or "(deleted)" in path or not under(path, trusted):
            return False
        return not written(path)

    def by_autograph():  # TensorFlow's own call of its AutoGraph loader: the caller of load_source is TensorFlow
        frame, inside = sys._getframe(2), False
        while frame is not None:
            name = frame.f_code.co_filename
            if name.endswith(autograph):
                inside = True
            elif inside:
                return tf_dir in name and under(real(name), trusted) and not written(real(name))
            frame = frame.f_back
        return False

    def from_written(filename):  # code from a file the kernel could write, or from an archive that is one
        if not isinstance(filename, (str, bytes)) or not filename or os.fsdecode(filename).startswith("<"):
            return False
        probe = real(os.fsdecode(filename))
        while probe and probe != os.sep:
            if os.path.isfile(probe):
                return not allowed(probe)
            probe = os.path.dirname(probe)
        return False

    def hook(event, args):
        if event in ("exec", "compile") and args:  # zipimporter(path).load_module, whatever the archive's name
            filename = getattr(args[0], "co_filename", None) if event == "exec" else args[1]
            if from_written(filename) and not by_autograph():
                raise PermissionError(f"{refused} ({os.fsdecode(filename)})")
        elif event == "open" and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            if path.lower().endswith(suffixes) and not allowed(path) and not by_autograph():
                raise PermissionError(f"{refused} ({path})")
        elif event == "ctypes.dlopen" and args[0] and not allowed(args[0]):
            raise PermissionError(f"{refused} ({args[0]})")

    class Guard:
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is cls or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            places = [spec.origin] if spec.has_location and spec.origin else []
            places += list(spec.submodule_search_locations or [])
            for place in places:
                if not allowed(place):
                    raise ImportError(f"{refused}: {name} ({place})", name=name)
            return spec

    sys.addaudithook(hook)
    sys.meta_path.insert(0, Guard)
    import builtins

    boot, real_import = sys._getframe(1).f_globals, builtins.__import__
    importlib_dir = os.sep + "importlib" + os.sep

    def by_cell(frame):  # the notebook's code: a cell (or a function it defined) in the kernel's namespace
        name = frame.f_code.co_filename
        return (frame.f_globals.get("__name__") == "__main__" and frame.f_globals is not boot
                and not name.startswith("<frozen") and not under(real(name), deep))

    def refuse(name, fromlist=()):  # a module off the labs' list, a private part, keras.src, the grader
        parts = [*name.split("."), *(f for f in (fromlist or ()) if isinstance(f, str) and f != "*")]
        private = [p for p in parts[1:] if p.startswith("_") and not (p.startswith("__") and p.endswith("__"))]
        dotted = ".".join(parts[:2])
        if parts[0] not in modules or private or dotted in refused_modules:
            raise ImportError(f"{not_listed}: {name} (write it yourself)", name=name)

    import_name = __import__("dis").opmap["IMPORT_NAME"]

    def by_statement(frame):  # the frame runs an import statement (not a C function's own lazy import)
        code, at = frame.f_code.co_code, frame.f_lasti
        return 0 <= at < len(code) and code[at] == import_name

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        frame = sys._getframe(1)
        if by_cell(frame) and by_statement(frame):
            refuse(name if level == 0 else "." + name, fromlist)
        return real_import(name, globals, locals, fromlist, level)

    def cell_importing():  # importlib.import_module(name) called by a cell (not through the import statement)
        frame, through_importlib = sys._getframe(2), False
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")  # and other finders
                                     or importlib_dir in frame.f_code.co_filename or frame.f_code.co_name == "find_spec"):
            through_importlib = through_importlib or importlib_dir in frame.f_code.co_filename
            frame = frame.f_back
        return frame is not None and through_importlib and by_cell(frame)

    find_spec = Guard.find_spec.__func__

    def checked_find_spec(cls, name, path=None, target=None):
        if cell_importing():
            refuse(name)
        return find_spec(cls, name, path, target)

    Guard.find_spec = classmethod(checked_find_spec)
    builtins.__import__ = guarded_import


_tx_guard()
del _tx_guard
""".replace("SUFFIXES", repr(CODE_SUFFIXES)).replace("REFUSED_PARTS", repr(REFUSED_MODULES))
_GUARD_TEMPLATE = GUARD.replace("REFUSED", repr(REFUSED)).replace("NOT_LISTED", repr(NOT_LISTED))
GUARD = _GUARD_TEMPLATE.replace("MODULES", repr(sorted(KERNEL_IMPORTS)))
# The instructor may widen the kernel's list (not the source check's) in the grader's own environment: top-level
# module names, comma-separated. The course's tests do, to show that the sandbox holds for code the list refuses.
EXTRA_IMPORTS_ENV = "TXCOURSE_GRADING_EXTRA_IMPORTS"


def guard_source(environ: Optional[Mapping[str, str]] = None) -> str:
    """:data:`GUARD` with the kernel's list widened by ``environ[EXTRA_IMPORTS_ENV]`` (``os.environ`` by default).

    Raises:
        ValueError: a name of the variable is not a top-level module name (``socket``, ``signal``).
    """
    import os

    value = (os.environ if environ is None else environ).get(EXTRA_IMPORTS_ENV, "")
    extra = {name.strip() for name in value.split(",") if name.strip()}
    bad = sorted(name for name in extra if not name.isidentifier())
    if bad:
        raise ValueError(f"{EXTRA_IMPORTS_ENV}: {bad} are not top-level module names (expected e.g. 'socket,signal')")
    return _GUARD_TEMPLATE.replace("MODULES", repr(sorted(KERNEL_IMPORTS | extra)))


def import_findings(tree: ast.AST, aliases: Mapping[str, str]) -> list[tuple[ast.AST, str]]:
    """``(node, reason)`` for what in ``tree`` changes where ``import`` looks (``sys.path.insert``, ``from sys
    import meta_path``: :data:`IMPORT_STATE`), imports a module that runs files (:data:`RUNS_FILES`) or names
    a code file in a string (``"helpers.py"``, :data:`CODE_SUFFIXES`). ``aliases``: the notebook's imports."""
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        reason = _import_reason(node, aliases)
        if reason:
            found.append((node, reason))
    return found


def _import_reason(node: ast.AST, aliases: Mapping[str, str]) -> Optional[str]:
    """Why one node of :func:`import_findings` is a finding, or None."""
    if isinstance(node, ast.Attribute) and node.attr in IMPORT_STATE:
        base = node.value
        module = aliases.get(base.id, base.id) if isinstance(base, ast.Name) else None
        if module == "sys":
            return f"sys.{node.attr} (changes where import looks)"
    elif isinstance(node, ast.Name) and aliases.get(node.id, "") in {f"sys.{name}" for name in IMPORT_STATE}:
        return f"{aliases[node.id]} (changes where import looks)"
    elif isinstance(node, ast.ImportFrom) and node.module == "sys":
        state = [a.name for a in node.names if a.name in IMPORT_STATE]
        if state:
            return f"imports sys.{state[0]} (changes where import looks)"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        runs = [n for n in names if n.split(".")[0] in RUNS_FILES]
        if runs:
            return f"imports {runs[0]} (runs code from a file)"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        word = node.value.strip().lower()
        if word.endswith(CODE_SUFFIXES) and "\n" not in word and len(word) < 256:
            return f"the string {node.value.strip()!r} names a code file (code written to disk is not imported)"
    return None


def private_reason(path: str) -> str:
    """Why the dotted ``path`` of a library (``torch._utils._import_dotted_name``, ``keras.src.losses``) is out
    of a submission's reach: a private (``_``-prefixed, not dunder) part after its root, or a part of
    :data:`REFUSED_MODULES`; '' for a public path."""
    parts = path.split(".")
    private = [p for p in parts[1:] if p.startswith("_") and not (p.startswith("__") and p.endswith("__"))]
    if private:
        return f"{path} (a private name of a library, {private[0]}: not for submissions)"
    refused = [m for m in REFUSED_MODULES if path == m or path.startswith(m + ".")]
    return f"{path} ({refused[0]} is not for submissions)" if refused else ""


def _allow_reason(module: str) -> str:
    top = module.split(".")[0]
    if top not in ALLOWED_IMPORTS:
        listed = ", ".join(sorted(ALLOWED_IMPORTS - {"__future__"}))
        return f"imports {module}: not on the labs' list of modules a submission may import ({listed})"
    return f"imports {private_reason(module)}" if private_reason(module) else ""


def allowlist_findings(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """``(node, reason)`` for each import in ``tree`` (a submitted cell) of a module outside
    :data:`ALLOWED_IMPORTS`, of a private or refused part of an allowed one (:func:`private_reason`:
    ``import torch._utils``, ``from keras import src``, ``from torch import _utils``), or relative."""
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append((node, "a relative import (not on the labs' list of modules)"))
                continue
            module = node.module or ""
            modules = [module, *(f"{module}.{a.name}" for a in node.names if a.name != "*")]
        else:
            continue
        reasons = [r for r in map(_allow_reason, modules) if r]
        if reasons:
            found.append((node, reasons[0]))
    return found
