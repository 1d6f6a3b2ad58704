"""TensorFlow's C++ log stays off the terminal at run time too (issue 32), grouped-query attention included.

``txcourse train --framework tf --set num_kv_heads=2`` printed ``E0000 ... util.cc:131] oneDNN supports DT_INT32
only on platforms with AVX-512. Falling back to ...`` on a CPU without AVX-512: a line written by C++ when the
model first runs, after the quiet import. Run in a fresh process (the level is read once, at TensorFlow's first
log line), without ``TF_CPP_MIN_LOG_LEVEL`` in its environment, as a user's shell would start it.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPP_LOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ \S+:\d+\]", re.MULTILINE)  # absl / tsl log line


def test_training_a_gqa_model_on_tensorflow_prints_no_cpp_line(tmp_path):
    pytest.importorskip("tensorflow")
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    argv = ["train", "--framework", "tf", "--set", "num_kv_heads=2", "--task", "copy", "--steps", "5"]
    done = subprocess.run(
        [sys.executable, "-m", "txcourse", *argv, "--no-progress", "--out", str(tmp_path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert not CPP_LOG.search(done.stderr), done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[-1].startswith("trained transformer (tf) on copy to step 5")
