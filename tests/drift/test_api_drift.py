"""Drift test: txcourse.torch and txcourse.tf must keep mirroring each other.

Same modules, same public names, same constructor and call signatures, same
public methods and the same docstrings (up to framework-specific wording).
The only differences allowed by design:

* Keras constructors take a trailing ``**kwargs`` (``name=...``), passed to
  ``keras.layers.Layer``;
* Keras ``call`` (and methods such as ``encode``/``decode`` that forward it)
  take ``training=None``;
* the weight factories of ``init`` (not re-exported) take a trailing
  ``name=None`` on the Keras side, the ``name=`` the converter matches on;
* type annotations and framework dtypes (``torch.float32`` vs ``tf.float32``,
  compared by their name);
* docstrings may differ in framework-specific remarks (see ``_normalise_doc``);
  the ``init`` factories' docstrings are not compared, they describe
  framework layouts.

Every check is parametrised, so a failure names the class or function.
Finally, importing one half must not import the other framework.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import dataclasses
import doctest
import importlib
import inspect
import pathlib
import pkgutil
import re
import subprocess
import sys

import keras
import pytest
import tensorflow as tf
import torch

import txcourse
import txcourse.tf as ktx
import txcourse.torch as ttx
from txcourse.registry import FRAMEWORKS, Backend

TORCH_DIR = pathlib.Path(ttx.__file__).parent
TF_DIR = pathlib.Path(ktx.__file__).parent


def _module_stems(directory: pathlib.Path) -> set[str]:
    return {p.stem for p in directory.glob("*.py")}


# Modules present in both halves (a missing one fails test_module_files_identical).
MODULES = sorted(_module_stems(TORCH_DIR) & _module_stems(TF_DIR) - {"__init__"})
PUBLIC_MODULES = [m for m in MODULES if not m.startswith("_")]


def _module(framework: str, stem: str):
    return importlib.import_module(f"txcourse.{framework}.{stem}")


def _public_pairs():
    """(qualified id, torch object, tf object) for every name exported by both halves.

    The package ``__all__`` plus each public module's ``__all__`` (e.g. the
    ``init`` factories, which the package does not re-export).
    """
    pairs = {}
    for name in sorted(set(ttx.__all__) & set(ktx.__all__)):
        if hasattr(ttx, name) and hasattr(ktx, name):
            t, k = getattr(ttx, name), getattr(ktx, name)
            pairs[name] = (name, t, k)
    for stem in PUBLIC_MODULES:
        t_mod, k_mod = _module("torch", stem), _module("tf", stem)
        for name in sorted(set(getattr(t_mod, "__all__", ())) & set(getattr(k_mod, "__all__", ()))):
            t, k = getattr(t_mod, name, None), getattr(k_mod, name, None)
            if t is None or k is None:
                continue  # reported by test_module_all_names_exist
            if any(p[1] is t for p in pairs.values()):
                continue  # already listed under its package name
            pairs[f"{stem}.{name}"] = (f"{stem}.{name}", t, k)
    return [pairs[key] for key in sorted(pairs)]


PAIRS = _public_pairs()
CLASS_PAIRS = [p for p in PAIRS if inspect.isclass(p[1]) and inspect.isclass(p[2])]
# Layers: nn.Module on one side, keras.layers.Layer on the other (forward vs call).
LAYER_PAIRS = [p for p in CLASS_PAIRS if issubclass(p[1], torch.nn.Module)]
FUNCTION_PAIRS = [p for p in PAIRS if inspect.isfunction(p[1]) and inspect.isfunction(p[2])]


def _ids(pairs):
    return [p[0] for p in pairs]


def _own_public_methods(cls) -> dict[str, object]:
    """Public methods defined by txcourse itself (not inherited from nn.Module / keras.Layer)."""
    methods: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if not base.__module__.startswith("txcourse."):
            continue
        for name, value in vars(base).items():
            if name.startswith("_"):
                continue
            if inspect.isfunction(value) or isinstance(value, (staticmethod, classmethod, property)):
                methods[name] = value
    return methods


def _method_pairs():
    out = []
    for qual, t_cls, k_cls in CLASS_PAIRS:
        t_methods, k_methods = _own_public_methods(t_cls), _own_public_methods(k_cls)
        for name in sorted((set(t_methods) - {"forward"}) & (set(k_methods) - {"call"})):
            out.append((f"{qual}.{name}", t_methods[name], k_methods[name]))
    return out


METHOD_PAIRS = _method_pairs()


# ---------------------------------------------------------------------------
# signature normalisation
# ---------------------------------------------------------------------------


def _default(value):
    """Defaults compared by value; framework dtypes by their name ('float32')."""
    if value is inspect.Parameter.empty:
        return "<required>"
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, tf.DType):
        return value.name
    return value


def _params(
    func,
    *,
    drop_self: bool,
    drop_training: bool = False,
    drop_trailing_var_kw: bool = False,
    drop_trailing_name: bool = False,
):
    """[(name, kind, default)] with annotations ignored."""
    params = list(inspect.signature(func).parameters.values())
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    if drop_trailing_var_kw and params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
        params = params[:-1]
    if drop_trailing_name and params and params[-1].name == "name" and params[-1].default is None:
        params = params[:-1]
    if drop_training:
        params = [p for p in params if p.name != "training"]
    return [(p.name, p.kind.name, _default(p.default)) for p in params]


def _training_is_optional(func) -> None:
    param = inspect.signature(func).parameters.get("training")
    if param is not None:
        assert param.default is None and param.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        ), f"{func.__qualname__}: training must be an optional keyword, got {param}"


def _signature_diff(t_params, k_params) -> str:
    return f"\n  torch: {t_params}\n  tf:    {k_params}"


# ---------------------------------------------------------------------------
# (1) public names
# ---------------------------------------------------------------------------


def test_package_all_equal():
    assert set(ttx.__all__) == set(ktx.__all__), (
        f"only in txcourse.torch: {sorted(set(ttx.__all__) - set(ktx.__all__))}; "
        f"only in txcourse.tf: {sorted(set(ktx.__all__) - set(ttx.__all__))}"
    )
    assert sorted(ttx.__all__) == sorted(ktx.__all__)
    assert len(ttx.__all__) == len(set(ttx.__all__)), "duplicate names in txcourse.torch.__all__"
    assert len(ktx.__all__) == len(set(ktx.__all__)), "duplicate names in txcourse.tf.__all__"


@pytest.mark.parametrize("name", sorted(set(ttx.__all__) | set(ktx.__all__)))
def test_public_name_exists_in_both(name):
    assert hasattr(ttx, name), f"txcourse.torch has no {name!r}"
    assert hasattr(ktx, name), f"txcourse.tf has no {name!r}"
    t, k = getattr(ttx, name), getattr(ktx, name)
    assert inspect.isclass(t) == inspect.isclass(k), f"{name}: a class in one half only"
    assert callable(t) and callable(k)
    if t is k:
        assert not t.__module__.startswith(("txcourse.torch", "txcourse.tf")), (
            f"{name}: one half re-exports the other's object"
        )
        return  # a framework-free object shared by both halves
    assert t.__module__.startswith("txcourse.torch."), f"txcourse.torch.{name} comes from {t.__module__}"
    assert k.__module__.startswith("txcourse.tf."), f"txcourse.tf.{name} comes from {k.__module__}"
    assert t.__module__.split(".")[-1] == k.__module__.split(".")[-1], (
        f"{name} lives in {t.__module__} and in {k.__module__}"
    )


# ---------------------------------------------------------------------------
# (2) module files and their __all__
# ---------------------------------------------------------------------------


def test_module_files_identical():
    t_files, k_files = _module_stems(TORCH_DIR), _module_stems(TF_DIR)
    assert t_files == k_files, (
        f"only in txcourse/torch: {sorted(t_files - k_files)}; only in txcourse/tf: {sorted(k_files - t_files)}"
    )


@pytest.mark.parametrize("stem", MODULES)
def test_module_all_equal(stem):
    t_all = getattr(_module("torch", stem), "__all__", None)
    k_all = getattr(_module("tf", stem), "__all__", None)
    assert (t_all is None) == (k_all is None), f"{stem}: __all__ defined in one half only"
    if t_all is not None:
        assert list(t_all) == list(k_all), f"{stem}.__all__ differs:\n  torch: {t_all}\n  tf:    {k_all}"


@pytest.mark.parametrize("stem", PUBLIC_MODULES)
def test_module_all_names_exist(stem):
    for framework in FRAMEWORKS:
        mod = _module(framework, stem)
        missing = [n for n in getattr(mod, "__all__", ()) if not hasattr(mod, n)]
        assert not missing, f"txcourse.{framework}.{stem}.__all__ names missing objects: {missing}"


# ---------------------------------------------------------------------------
# (3) classes: constructors, forward/call, other public methods
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("qual,t_cls,k_cls", CLASS_PAIRS, ids=_ids(CLASS_PAIRS))
def test_class_init_signature(qual, t_cls, k_cls):
    t_params = _params(t_cls.__init__, drop_self=True)
    k_is_layer = issubclass(k_cls, keras.layers.Layer)  # only layers take **kwargs (name=...)
    k_params = _params(k_cls.__init__, drop_self=True, drop_trailing_var_kw=k_is_layer)
    assert t_params == k_params, f"{qual}.__init__ differs:" + _signature_diff(t_params, k_params)


@pytest.mark.parametrize("qual,t_cls,k_cls", CLASS_PAIRS, ids=_ids(CLASS_PAIRS))
def test_class_kind_matches(qual, t_cls, k_cls):
    """A torch nn.Module mirrors a Keras Layer; any other class mirrors a non-layer."""
    t_layer = issubclass(t_cls, torch.nn.Module)
    k_layer = issubclass(k_cls, keras.layers.Layer)
    assert t_layer == k_layer, f"{qual}: torch nn.Module={t_layer} but Keras Layer={k_layer}"


@pytest.mark.parametrize("qual,t_cls,k_cls", LAYER_PAIRS, ids=_ids(LAYER_PAIRS))
def test_class_forward_matches_call(qual, t_cls, k_cls):
    t_methods, k_methods = _own_public_methods(t_cls), _own_public_methods(k_cls)
    assert "forward" in t_methods, f"txcourse.torch {qual} defines no forward"
    assert "call" in k_methods, f"txcourse.tf {qual} defines no call"
    _training_is_optional(k_cls.call)
    t_params = _params(t_cls.forward, drop_self=True)
    k_params = _params(k_cls.call, drop_self=True, drop_training=True)
    assert t_params == k_params, f"{qual}: forward != call:" + _signature_diff(t_params, k_params)


@pytest.mark.parametrize("qual,t_cls,k_cls", CLASS_PAIRS, ids=_ids(CLASS_PAIRS))
def test_class_public_methods_same(qual, t_cls, k_cls):
    t_names = set(_own_public_methods(t_cls)) - {"forward"}
    k_names = set(_own_public_methods(k_cls)) - {"call"}
    assert t_names == k_names, (
        f"{qual}: methods only in torch: {sorted(t_names - k_names)}; only in tf: {sorted(k_names - t_names)}"
    )


@pytest.mark.parametrize("qual,t_meth,k_meth", METHOD_PAIRS, ids=_ids(METHOD_PAIRS))
def test_method_signature(qual, t_meth, k_meth):
    assert type(t_meth) is type(k_meth), f"{qual}: {type(t_meth).__name__} vs {type(k_meth).__name__}"
    if isinstance(t_meth, property):
        return
    t_func = getattr(t_meth, "__func__", t_meth)
    k_func = getattr(k_meth, "__func__", k_meth)
    _training_is_optional(k_func)
    drop_self = not isinstance(t_meth, staticmethod)
    t_params = _params(t_func, drop_self=drop_self)
    k_params = _params(k_func, drop_self=drop_self, drop_training=True)
    assert t_params == k_params, f"{qual} differs:" + _signature_diff(t_params, k_params)


# ---------------------------------------------------------------------------
# (4) functions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("qual,t_func,k_func", FUNCTION_PAIRS, ids=_ids(FUNCTION_PAIRS))
def test_function_signature(qual, t_func, k_func):
    is_factory = t_func.__module__.endswith(".init")  # Keras factories take name=None, see module doc
    t_params = _params(t_func, drop_self=False)
    k_params = _params(k_func, drop_self=False, drop_trailing_name=is_factory)
    assert t_params == k_params, f"{qual} differs:" + _signature_diff(t_params, k_params)


BACKEND_PAIRS = [p for p in PAIRS if isinstance(p[1], Backend) and isinstance(p[2], Backend)]


def test_the_backends_mirror_each_other():
    """Each half's Backend (txcourse/<fw>/backend.py) names its own half, and its functions take the same arguments."""
    assert [p[0] for p in BACKEND_PAIRS] == ["backend.BACKEND"]
    _, t_backend, k_backend = BACKEND_PAIRS[0]
    assert (t_backend.name, k_backend.name) == ("torch", "tf")
    for field in dataclasses.fields(Backend):
        t_value, k_value = getattr(t_backend, field.name), getattr(k_backend, field.name)
        if field.name in ("name", "Trainer"):
            continue
        assert _params(t_value, drop_self=False) == _params(k_value, drop_self=False, drop_training=True), (
            f"Backend.{field.name} differs:"
            + _signature_diff(_params(t_value, drop_self=False), _params(k_value, drop_self=False, drop_training=True))
        )
    for field in dataclasses.fields(Backend):  # each field is its own half's
        t_value, k_value = getattr(t_backend, field.name), getattr(k_backend, field.name)
        if callable(t_value) and field.name != "Trainer":
            assert t_value.__module__.startswith("txcourse.torch.") and k_value.__module__.startswith("txcourse.tf.")


def test_every_public_object_is_checked():
    """A public name that is neither a class nor a function would escape the checks above."""
    unchecked = [p[0] for p in PAIRS if p not in CLASS_PAIRS and p not in FUNCTION_PAIRS and p not in BACKEND_PAIRS]
    assert not unchecked, f"public objects of mismatched or unknown kind: {unchecked}"
    assert len(LAYER_PAIRS) >= 13 and len(FUNCTION_PAIRS) >= 4  # guard against an empty parametrisation


# ---------------------------------------------------------------------------
# (5) docstrings
# ---------------------------------------------------------------------------

# Words that mark a remark as framework-specific: the frameworks' names and
# namespaces (``F.`` is torch.nn.functional), PyTorch's (non-persistent)
# buffers, Keras' Dense, and XLA.
FRAMEWORK_WORDS = re.compile(
    r"tf\.|tensorflow|torch|keras|pytorch|\bF\.|\bnn\.|\bbuffers?\b|\bDense\b|\bXLA\b", re.IGNORECASE
)


def _strip_examples(doc: str) -> str:
    """Drop doctest examples (``>>>`` / ``...`` lines and their expected output)."""
    parts = doctest.DocTestParser().parse(doc)
    return "".join(p for p in parts if isinstance(p, str))


def _drop_framework_parentheticals(text: str) -> str:
    """Remove balanced ``( ... )`` remarks that mention a framework."""
    out, stack = list(text), []
    spans = []
    for i, ch in enumerate(text):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            start = stack.pop()
            if not stack and FRAMEWORK_WORDS.search(text[start : i + 1]):
                spans.append((start, i + 1))
    for start, end in reversed(spans):
        lead = start
        while lead > 0 and out[lead - 1] == " ":
            lead -= 1
        del out[lead:end]
    return "".join(out)


def _normalise_doc(doc: str | None) -> list[str]:
    """The docstring as a list of framework-neutral blocks.

    Examples are removed, ``txcourse.torch``/``txcourse.tf`` become
    ``txcourse.<fw>``, framework-specific parenthetical remarks are cut, and
    any block (paragraph, or one ``Args:``/``Shape:`` entry) that still names
    a framework is dropped. Whitespace is collapsed, so reflowing is no drift.
    """
    doc = inspect.cleandoc(doc or "")
    doc = _strip_examples(doc)
    doc = re.sub(r"txcourse\.(torch|tf)\b", "txcourse.<fw>", doc)
    blocks, current = [], []

    def flush():
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for line in doc.splitlines():
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        indent = len(line) - len(line.lstrip())
        is_header = indent == 0 and stripped.endswith(":")  # "Args:", "Shape:", "Example:"
        is_entry = indent == 4 and re.match(r"[\w*][\w*, ]*:(\s|$)", stripped) is not None  # "name: ..."
        if is_header or is_entry:
            flush()
        current.append(stripped)
        if is_header:
            flush()
    flush()
    out = []
    for text in blocks:
        text = _drop_framework_parentheticals(text)
        if FRAMEWORK_WORDS.search(text):
            continue
        out.append(re.sub(r"\s+", " ", text).strip())
    return [b for b in out if b]


def _summary(doc: str | None) -> str:
    lines = inspect.cleandoc(doc or "").splitlines()
    return re.sub(r"txcourse\.(torch|tf)\b", "txcourse.<fw>", lines[0].strip()) if lines else ""


# The init factories build framework layers and document framework layouts
# ("Weight shape (out, in)" vs "Kernel shape (in, out)"), so their docstrings
# differ by design; their signatures are still checked above.
DOC_PAIRS = [p for p in PAIRS + METHOD_PAIRS if not p[0].startswith("init.")]

# Known docstring drift, kept visible: the exact blocks found on one side
# only. Any other difference fails; so does fixing it (then delete the entry).
KNOWN_DOC_DRIFT: dict = {}  # name -> (blocks only in torch, blocks only in tf) accepted for now


def _doc(obj):
    if isinstance(obj, property):
        return obj.__doc__
    return getattr(obj, "__doc__", None)


@pytest.mark.parametrize("qual,t_obj,k_obj", DOC_PAIRS, ids=_ids(DOC_PAIRS))
def test_docstring_summary_identical(qual, t_obj, k_obj):
    t_doc, k_doc = _doc(t_obj), _doc(k_obj)
    assert bool(t_doc) == bool(k_doc), f"{qual}: docstring in one half only"
    assert _summary(t_doc) == _summary(k_doc), (
        f"{qual}: summary lines differ:\n  torch: {_summary(t_doc)!r}\n  tf:    {_summary(k_doc)!r}"
    )


@pytest.mark.parametrize("qual,t_obj,k_obj", DOC_PAIRS, ids=_ids(DOC_PAIRS))
def test_docstring_identical_up_to_framework_words(qual, t_obj, k_obj):
    t_blocks, k_blocks = _normalise_doc(_doc(t_obj)), _normalise_doc(_doc(k_obj))
    only_t = [b for b in t_blocks if b not in k_blocks]
    only_k = [b for b in k_blocks if b not in t_blocks]
    if qual in KNOWN_DOC_DRIFT:
        known_t, known_k = KNOWN_DOC_DRIFT[qual]
        assert (only_t, only_k) != ([], []) or t_blocks != k_blocks, (
            f"{qual}: the known docstring drift is fixed; delete its KNOWN_DOC_DRIFT entry"
        )
        if (only_t, only_k) == (known_t, known_k):
            pytest.xfail(f"known docstring drift: only in torch {known_t}, only in tf {known_k}")
    if t_blocks != k_blocks:
        raise AssertionError(
            f"{qual}: docstrings differ beyond framework wording\n"
            f"  only in torch: {only_t}\n  only in tf:    {only_k}"
            + ("" if only_t or only_k else "\n  (same blocks, different order)")
        )


def test_docstring_normaliser_keeps_real_differences():
    """The normaliser must not be so lenient that everything compares equal."""
    a = """Summary.

    The table is a constant, not a weight.

    Args:
        length: the target length T (an int, or a ``tf.function`` tensor).
        pad_id: the padding id.
    """
    assert _normalise_doc(a) == [
        "Summary.",
        "The table is a constant, not a weight.",
        "Args:",
        "length: the target length T.",
        "pad_id: the padding id.",
    ]
    assert _normalise_doc(a) != _normalise_doc(a.replace("pad_id: the padding id.", "pad_id: unused."))
    assert _normalise_doc(a) != _normalise_doc(a.replace("        pad_id: the padding id.\n", ""))
    assert _normalise_doc(a) == _normalise_doc(a.replace("Args:", "Args:\n        extra: see torch.nn.X."))


# ---------------------------------------------------------------------------
# (6) import isolation
# ---------------------------------------------------------------------------

ISOLATION = {
    "torch-half-imports-no-tf": "import sys; import txcourse.torch; "
    "bad = [m for m in ('tensorflow', 'keras') if m in sys.modules]; "
    "assert not bad, bad",
    "tf-half-imports-no-torch": "import sys; import txcourse.tf; assert 'torch' not in sys.modules, 'torch'",
    "core-imports-no-framework": "import sys; import txcourse, txcourse.config, txcourse.convert; "
    "bad = [m for m in ('torch', 'tensorflow', 'keras') if m in sys.modules]; "
    "assert not bad, bad",
}


def _run_isolated(code: str) -> None:
    root = pathlib.Path(txcourse.__file__).resolve().parent.parent  # the txcourse under test
    env = dict(
        os.environ,
        TF_CPP_MIN_LOG_LEVEL="3",
        PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{code}\nexit {result.returncode}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("code", ISOLATION.values(), ids=list(ISOLATION))
def test_import_isolation(code):
    _run_isolated(code)


def _framework_free_modules() -> list[str]:
    """Every txcourse module outside the two halves (the package says they need no framework)."""
    names = []
    for info in pkgutil.walk_packages(txcourse.__path__, prefix="txcourse."):
        if info.name.startswith(("txcourse.torch", "txcourse.tf")) or info.name.endswith(".__main__"):
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("module", _framework_free_modules())
def test_shared_module_imports_no_framework(module):
    _run_isolated(
        f"import sys, importlib; importlib.import_module({module!r}); "
        f"bad = [m for m in ('torch', 'tensorflow', 'keras') if m in sys.modules]; "
        f"assert not bad, f'{module} imports {{bad}}'"
    )
