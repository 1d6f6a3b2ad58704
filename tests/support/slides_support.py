"""slides/build.py as a module, for tests/book/test_slides.py and tests/book/test_slides_browser.py.

slides/ is not a package, so the file is loaded by path, once per test session.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
_NAME = "slides_build"


def load_slides_build() -> ModuleType:
    """The module slides/build.py (loaded on the first call, the same object afterwards)."""
    if _NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_NAME, ROOT / "slides" / "build.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[_NAME]
