"""The probe run's txcourse by allow-list (txcourse/course/grading/allowlist.py).

Per lab and framework, the public callables of the copy are exactly what the lab's allow-list names (and the
few that importing the package runs): read from the copy's source, and enumerated at run time by importing
the copy (so that an alias, a ``functools.partial`` or a ``__wrapped__`` cannot keep something alive). The
twins of an exercise's answer (``sample_decode`` with a patched ``filter_logits``, ``tiled_attention``, the
layers' own attention, the NumPy helpers of ``txcourse/notebook``) raise "write it yourself".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import txcourse
from txcourse.course.grading.allowlist import (
    REDACTED,
    allowlisted_package,
    expand,
    load_allow,
    public_units,
    setup_allow,
    units,
)
from txcourse.course.labs import LABS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(txcourse.__file__).resolve().parent

# Public units that importing the package runs (kept whatever the allow-list says): Python calls
# __init_subclass__ when a subclass is made, and a TrainConfig() is built on import.
ON_IMPORT = {
    "txcourse.data.vocab:Tokenizer.__init_subclass__",
    "txcourse.training.config:TrainConfig.__post_init__",
    "txcourse.errors:TxcourseError.field",
    "txcourse.notebook.plots.labels:N_",  # marks the plots' default labels for translation when they are defined
}


def _allow(lab, fw):
    return load_allow(ROOT / "labs", lab)[fw]


@pytest.fixture(scope="module")
def every():
    return units(PACKAGE)


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """(lab, fw) -> the allow-listed copy, made once for the tests of this module."""
    made = {}

    def get(lab, fw):
        if (lab, fw) not in made:
            made[lab, fw] = allowlisted_package(PACKAGE, _allow(lab, fw), tmp_path_factory.mktemp(f"{lab}-{fw}"))
        return made[lab, fw]

    return get


def _public(names, every):
    return {n for n in names if every[n].public}


@pytest.mark.parametrize("fw", ["torch", "tf"])
@pytest.mark.parametrize("lab", LABS)
def test_the_public_functions_of_the_copy_are_the_allow_list(lab, fw, copies, every):
    """Read from the copy's source: every public function and method that does not raise is allowed."""
    copy = copies(lab, fw)
    assert public_units(copy) == _public(expand(_allow(lab, fw), every), every) | ON_IMPORT
    assert not (copy / "course").exists() and not (copy / "cli").exists()
    assert not list(copy.rglob("__pycache__"))


def test_every_lab_has_an_allow_list_that_starts_with_the_setup():
    for lab in LABS:
        allow = load_allow(ROOT / "labs", lab)
        assert set(allow) == {"torch", "tf"}
        for fw, names in allow.items():
            assert names[: len(setup_allow(fw))] == setup_allow(fw), (lab, fw)
            assert all(f"txcourse.{'tf' if fw == 'torch' else 'torch'}." not in n for n in names), (lab, fw)


# What each lab must not reach: its answers and their twins.
DENIED = {
    "week1_seq2seq": ["{fw}.seq2seq:BahdanauAttention.{call}", "{fw}.attention:scaled_dot_product_attention"],
    "week2_positional": [
        "{fw}.positional:positional_encoding",
        "{fw}.rotary:apply_rotary",
        "{fw}.positional:PositionalEncoding.__init__",
        "notebook.plots.common:as_2d",
        "notebook.plots.positional:plot_positional_encoding",
    ],
    "week3_attention": [
        "{fw}.attention:scaled_dot_product_attention",
        "{fw}.attention:fused_attention",
        "{fw}.tiled:tiled_attention",
        "{fw}.attention:MultiHeadAttention.split_heads",
        "{fw}.attention:MultiHeadAttention.{call}",
        "{fw}.masks:padding_mask",
        "{fw}.encoder:EncoderLayer.{call}",
        "notebook.plots.attention:plot_mask",
    ],
    "week4_encoder": [
        "{fw}.encoder:EncoderLayer.{call}",
        "{fw}.encoder:Encoder.{call}",
        "{fw}.decoder:DecoderLayer.{call}",
        "{fw}.model:Transformer.encode",
        "{fw}.tiled:tiled_attention",
        "{fw}.attention:fused_attention",
    ],
    "week5_decoder": [
        "{fw}.decoder:DecoderLayer.__init__",
        "{fw}.decoder:DecoderLayer.{call}",
        "{fw}.encoder:EncoderLayer.{call}",
        "{fw}.model:Transformer.decode",
        "{fw}.tiled:tiled_attention",
    ],
    "week6_training": [
        "{fw}.loss:label_smoothed_cross_entropy",
        "{fw}.decode:greedy_decode",
        "{fw}.decode:beam_search",
        "{fw}.decode:_greedy_step",
        "{fw}.sample:sample_decode",
        "{fw}.sample:filter_logits",
        "{fw}.train:Trainer.__init__",
        "evaluation.translate:evaluate",
        "decoding:BeamState.__init__",
    ],
}


@pytest.mark.parametrize("fw", ["torch", "tf"])
@pytest.mark.parametrize("lab", LABS)
def test_the_answers_and_their_twins_raise(lab, fw, copies, every):
    copy = copies(lab, fw)
    live = public_units(copy)
    call = "forward" if fw == "torch" else "call"
    for name in DENIED[lab]:
        name = "txcourse." + name.format(fw=fw, call=call)
        if name in every:  # (a dataclass's generated __init__ is no unit)
            assert name not in live, (lab, name)
            unit = units(copy)[name]
            assert REDACTED in unit.path.read_text(encoding="utf-8"), name


def test_a_stale_or_malformed_entry_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="names no function"):
        allowlisted_package(PACKAGE, ["txcourse.torch.attention:no_such_function"], tmp_path / "a")
    with pytest.raises(ValueError, match="look like"):
        allowlisted_package(PACKAGE, ["scaled_dot_product_attention"], tmp_path / "b")


# Run in a subprocess per framework: import each lab's copy and enumerate what can be called.
ENUMERATE = r'''
import importlib, json, pathlib, sys, types
REDACTED, fw, copies = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {}


def stub(fn):
    """True when calling fn (or what it wraps, all the way down) ends in the "write it yourself" raise."""
    while fn is not None:
        code = getattr(fn, "__code__", None)
        if code is not None and any(REDACTED in str(c) for c in code.co_consts):
            return True
        fn = getattr(fn, "__wrapped__", None)
    return False


def functions(obj):
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        return [f for f in (obj.fget, obj.fset) if f is not None]
    return [obj] if isinstance(obj, types.FunctionType) else []


for lab, root in copies.items():
    for name in [m for m in sys.modules if m == "txcourse" or m.startswith("txcourse.")]:
        del sys.modules[name]
    sys.path.insert(0, root)
    import txcourse
    assert txcourse.__file__.startswith(root), txcourse.__file__
    other = "tf" if fw == "torch" else "torch"
    live, odd = set(), []
    names = []
    for path in sorted(pathlib.Path(root, "txcourse").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    for name in names:
        if name.startswith(f"txcourse.{other}"):
            continue  # the other half (its framework may not be installed)
        module = importlib.import_module(name)  # every module imports: the copy's imports work
        if any(p.startswith("_") for p in name.split(".")):
            continue  # a private module: its helpers are kept only as a kept function needs them
        info = types.SimpleNamespace(name=name)
        for attr, value in vars(module).items():
            if attr.startswith("_") or getattr(value, "__module__", "") != info.name:
                continue
            if isinstance(value, type):
                for key, member in vars(value).items():
                    for f in functions(member):
                        dunder = key in ("__init__", "__call__", "__post_init__", "__init_subclass__")
                        if not stub(f) and (not key.startswith("_") or dunder):
                            live.add(f"{f.__module__}:{f.__qualname__}")
            elif callable(value):
                inner = value
                while not isinstance(inner, types.FunctionType) and hasattr(inner, "__wrapped__"):
                    inner = inner.__wrapped__  # functools.lru_cache, wraps: what it calls
                if not isinstance(inner, types.FunctionType):
                    odd.append(f"{info.name}:{attr} ({type(value).__name__})")
                elif not stub(value) and not stub(inner):
                    live.add(f"{inner.__module__}:{inner.__qualname__}")
    out[lab] = {"live": sorted(live), "odd": odd}
    sys.path.remove(root)
print(json.dumps(out))
'''


@pytest.mark.parametrize("fw", ["torch", "tf"])
def test_what_the_copy_can_call_at_run_time_is_the_allow_list(fw, copies, every):
    """Imported, each lab's copy offers (module attributes, class members, through __wrapped__) exactly the
    public units of the allow-list that its framework's half and the framework-free modules hold."""
    pytest.importorskip(fw if fw == "torch" else "tensorflow")
    roots = {lab: str(copies(lab, fw).parent) for lab in LABS}
    done = subprocess.run(
        [sys.executable, "-c", ENUMERATE, REDACTED, fw, json.dumps(roots)],
        capture_output=True,
        text=True,
        timeout=600,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    other = "tf" if fw == "torch" else "torch"
    for lab in LABS:
        expected = {
            n
            for n in _public(expand(_allow(lab, fw), every), every) | ON_IMPORT
            if not n.startswith(f"txcourse.{other}.") and not _other_dunder(n)
        }
        generated = {n for n in found[lab]["live"] if n not in every}  # made by @dataclass: no source to redact
        assert all(n.endswith(".__init__") for n in generated), (lab, sorted(generated))
        live = set(found[lab]["live"]) - generated
        assert found[lab]["odd"] == [], (lab, found[lab]["odd"])
        assert live - expected == set(), (lab, sorted(live - expected))
        assert expected - live == set(), (lab, sorted(expected - live))


def _other_dunder(name):
    """A dunder method the run-time enumeration does not list (it lists the ones that make or call)."""
    last = name.rsplit(".", 1)[-1]
    return last.startswith("__") and last not in ("__init__", "__call__", "__post_init__", "__init_subclass__")


ATTACK = r"""
import sys
sys.path.insert(0, sys.argv[1])
import txcourse.torch.sample as sample
import txcourse.torch.tiled as tiled
import txcourse.torch as tx
assert sample.__file__.startswith(sys.argv[1])
sample.filter_logits = lambda logits, **kw: logits  # the red team's patch: sampling becomes arg-max


class Model:  # what the decoders' wrapper touches before the decoder runs
    training = False

    def eval(self):
        return self

    def train(self, mode=True):
        return self


for name, call in (
    ("sample_decode.__wrapped__", lambda: sample.sample_decode.__wrapped__(Model(), None)),
    ("sample_decode", lambda: sample.sample_decode(Model(), None)),
    ("tiled_attention", lambda: tiled.tiled_attention(None, None, None)),
    ("greedy_decode.__wrapped__", lambda: tx.greedy_decode.__wrapped__(Model(), None)),
    ("beam_search", lambda: tx.beam_search(Model(), None)),
):
    try:
        call()
    except RuntimeError as error:
        assert "write it yourself" in str(error), (name, error)
        print("refused", name)
    else:
        print("RAN", name)
"""


def test_the_week_6_attack_through_wrapped_raises(copies):
    """The red team's greedy decoder (sample_decode reached through __wrapped__, filter_logits patched to
    arg-max) and tiled_attention raise in week 6's probe run."""
    pytest.importorskip("torch")
    root = str(copies("week6_training", "torch").parent)
    done = subprocess.run([sys.executable, "-c", ATTACK, root], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("refused") == 5 and "RAN" not in done.stdout, done.stdout
