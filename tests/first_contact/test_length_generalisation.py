"""benchmarks/length_generalisation.py (week 2): the --quick smoke run, and the committed results file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from txcourse.config import POSITIONS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "length_generalisation.py"
RESULTS = ROOT / "benchmarks" / "results" / "length_generalisation.json"
BUCKETS = ["2-12", "13-16", "17-20", "21-24"]


def test_quick_run_writes_every_positions_and_bucket(tmp_path):
    out = tmp_path / "quick.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--no-progress", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert list(result["models"]) == list(POSITIONS)
    assert result["command"] == "python benchmarks/length_generalisation.py --quick"
    for name, model in result["models"].items():
        assert model["steps"] == 3, name
        assert list(model["buckets"]) == BUCKETS, name
        assert sum(b["count"] for b in model["buckets"].values()) == 40, name
    assert "| source length | sinusoidal | learned | rope | alibi |" in done.stdout


def test_results_file_is_a_full_run_of_the_script():
    """The book reads this file: every kind of positions, every bucket, exact match in [0, 1], 2000 steps each."""
    result = json.loads(RESULTS.read_text())
    assert result["command"] == "python benchmarks/length_generalisation.py"
    assert list(result["models"]) == list(POSITIONS)
    for name, model in result["models"].items():
        assert model["steps"] == result["steps"] == 2000, name
        assert list(model["buckets"]) == BUCKETS, name
        for bucket in model["buckets"].values():
            assert bucket["count"] > 0 and 0.0 <= bucket["exact_match"] <= 1.0, name
