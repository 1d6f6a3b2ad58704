"""benchmarks/decode_engines.py's table: ratios against CTranslate2 float32 at the same thread count, none
against a collapsed reference, and the run's counts printed with it (the Serving appendix quotes them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("decode_engines", ROOT / "benchmarks" / "decode_engines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(f32_at_2: float) -> dict:
    rows = [
        ("txcourse torch", 1, 100.0),
        ("CTranslate2 float32", 1, 200.0),
        ("txcourse torch", 2, 150.0),
        ("CTranslate2 float32", 2, f32_at_2),
        ("CTranslate2 int8", 2, 600.0),
    ]
    rows = [
        {"engine": e, "threads": n, "batch": 64, "rates": [v], "identical": 1.0, "correct": 1.0} for e, n, v in rows
    ]
    return {"rows": rows, "count": 4321, "sweep_inputs": 123, "passes": 2}


def test_ratios_use_the_same_thread_count():
    lines = _module().table(_result(300.0)).splitlines()
    assert "| txcourse torch | 1 | 64 | 100 | 0.50x |" in lines[2]
    assert "| txcourse torch | 2 | 64 | 150 | 0.50x |" in lines[4]  # 150 / 300, not 150 / 200
    assert "| CTranslate2 int8 | 2 | 64 | 600 | 2.00x |" in lines[6]


def test_no_ratio_against_a_collapsed_reference():
    text = _module().table(_result(40.0))  # float32 at 2 threads below its 1-thread 200/s
    assert "| CTranslate2 float32 | 2 | 64 | 40 * | n/a |" in text
    assert "| CTranslate2 int8 | 2 | 64 | 600 | n/a |" in text
    assert "| txcourse torch | 1 | 64 | 100 | 0.50x |" in text


def test_the_counts_are_printed():
    text = _module().table(_result(300.0))
    assert "4,321 numbers" in text and "first 123" in text and "best of 2" in text
