"""Tests share helpers through public names: no test imports a private name (``_x``) from another test module or
from tests/support, so a helper's user is visible and its rename is an error, not a silent copy."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# Imports of private names still to be made public by their owners: none left (issue 31, item 6).
PENDING: set[str] = set()


def _test_modules() -> set[str]:
    """The names a test file can import another test module or tests/support by (conftest, test_x, support.x)."""
    names = {"conftest", "support"}
    for path in TESTS.rglob("*.py"):
        if path.name.startswith("test_") or path.parent.name == "support":
            names.add(path.stem)
            names.add(f"support.{path.stem}")
    return names


def private_imports(path: Path) -> list[str]:
    """``from M import _x`` where M is a test module, conftest or tests/support: 'M._x' for each."""
    local = _test_modules()
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in local:
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name.startswith("_")]
    return found


def test_no_test_imports_a_private_name_from_another_test_file():
    offenders = {}
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if (names := private_imports(path)) and rel not in PENDING:
            offenders[rel] = names
    assert not offenders, f"import public names (make the helper public in tests/support): {offenders}"


def test_the_check_sees_a_private_import(tmp_path):
    sample = tmp_path / "test_sample_import.py"
    sample.write_text("from support.training import _copy_data, module\nfrom os import _exit\n")
    assert private_imports(sample) == ["support.training._copy_data"]


def test_one_tiny_config_builder():
    """tests/support/configs.py builds the tiny model; the CLI options of the suites are the same sizes."""
    from support.configs import TINY, TINY_MODEL_ARGS, tiny_config

    config = tiny_config(12, dropout=0.0)
    assert (config.d_model, config.src_vocab_size, config.tgt_vocab_size, config.dropout) == (16, 12, 12, 0.0)
    assert all(getattr(config, key) == value for key, value in TINY.items())
    assert TINY_MODEL_ARGS == [arg for key, value in TINY.items() for arg in ("--set", f"{key}={value}")]
