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
  module, a zip archive without ``.zip``, a namespace package, ``/proc/self/fd/N``). The one exception:
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

__all__ = ["CODE_SUFFIXES", "RUNS_FILES", "IMPORT_STATE", "GUARD", "REFUSED", "import_findings"]

CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pyd", ".so", ".pth", ".zip", ".egg", ".whl")
# modules whose job is to run (or compile) code from a file or a string
RUNS_FILES = ("runpy", "zipimport", "zipapp", "site", "imp", "py_compile", "compileall", "codeop", "code")
# what decides where ``import`` looks
IMPORT_STATE = ("path", "meta_path", "path_hooks", "path_importer_cache")
REFUSED = "code that the notebook wrote to disk is not imported: write it in the cell"

# Run in the kernel before ipykernel starts (sandbox._KERNEL_BOOT). Names start with _tx_ and are deleted after.
GUARD = """\
def _tx_guard(suffixes=SUFFIXES, refused=REFUSED):
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

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes)):
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


_tx_guard()
del _tx_guard
""".replace("SUFFIXES", repr(CODE_SUFFIXES)).replace("REFUSED", repr(REFUSED))


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
