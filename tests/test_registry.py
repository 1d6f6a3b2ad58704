"""txcourse.registry (the frameworks, the model kinds, what a half offers) and txcourse.backends (the one import of
a half by name, above the halves)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from txcourse.backends import backend, library
from txcourse.config import Seq2SeqConfig, TransformerConfig
from txcourse.registry import FRAMEWORKS, MODEL_KINDS, Backend, check_framework, check_model_kind, default_model_config


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_backend_is_the_half_it_names(name):
    fw = backend(name)
    assert fw.name == name and library(name).__name__ == f"txcourse.{name}"
    assert fw.Trainer.__module__ == f"txcourse.{name}.train"
    assert fw.greedy_decode.__module__ == f"txcourse.{name}.decode"
    assert fw.sample_decode.__module__ == f"txcourse.{name}.sample"
    assert fw.set_threads.__module__ == f"txcourse.{name}.devices"
    assert backend(name) is fw  # built once per half


def test_the_backend_is_complete():
    """Every public function a caller of a half's model needs is a field: nobody reaches around the Backend."""
    fields = {f.name for f in dataclasses.fields(Backend)}
    assert {"greedy_decode", "beam_search", "sample_decode", "set_threads", "load_model"} <= fields
    assert "package" not in fields  # the half itself is txcourse.backends.library, for code that shows its layers


def test_unknown_names_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match=r"^framework must be one of \['torch', 'tf'\], got 'jax'$"):
        backend("jax")
    with pytest.raises(ValueError, match=r"^--framework must be one of"):
        check_framework("TF", "--framework")
    with pytest.raises(ValueError, match=r"^model must be one of \['transformer', 'bahdanau', 'seq2seq'\], got 'gpt'$"):
        check_model_kind("gpt", "model")
    assert check_model_kind("seq2seq") == "seq2seq" and set(MODEL_KINDS) == {"transformer", "bahdanau", "seq2seq"}


def test_default_model_config_checks_what_it_returns():
    config = default_model_config("transformer", 30, 20, {"num_heads": 8})
    assert isinstance(config, TransformerConfig)  # the object build_model and the Trainer take: no dict round trip
    assert (config.src_vocab_size, config.tgt_vocab_size, config.num_heads) == (30, 20, 8)
    assert isinstance(default_model_config("seq2seq", 30, 20), Seq2SeqConfig)
    with pytest.raises(ValueError, match=r"Seq2SeqConfig\.units must be an integer >= 1, got 0"):
        default_model_config("bahdanau", 30, 20, {"units": 0})


@pytest.mark.parametrize("name,other", [("torch", "tensorflow"), ("tf", "torch")])
def test_a_backend_imports_only_its_own_framework(name, other):
    code = (
        f"import sys; from txcourse.backends import backend, set_threads; set_threads(1, [{name!r}]); "
        f"backend({name!r}); print({other!r} in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"
