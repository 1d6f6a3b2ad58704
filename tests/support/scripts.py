"""Load a script of the repository (labs/mutants/run.py, labs/attacks/run.py) as a module under a name of its own.

Both folders hold a ``run.py``; ``import run`` gives whichever folder comes first on ``sys.path`` or was imported
first in this process, which depends on the order the tests run in (pytest-xdist spreads files over workers).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str) -> ModuleType:
    """The module of ``path`` as ``sys.modules[name]`` (loaded once per process)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
