"""What a lab forbids, checked on the submitted source in the grader's own process, and made to raise in the probe kernel.

An exercise that asks for attention must not be answered with ``F.scaled_dot_product_attention`` or
``keras.layers.MultiHeadAttention``, nor with txcourse's own version (the README's "write it yourself").
A check that runs in the student's kernel (a profiler around the call, ``no_calls_to``) sees one thread and
can be switched off; this module reads the *source* instead (:mod:`ast`, never running it), per exercise:

- **forbidden names** (:data:`FORBIDDEN`): an attribute chain or an imported name that resolves, through the
  notebook's imports and simple aliases (``F = torch.nn.functional``), to a name the lab forbids
  (``torch.nn.functional.scaled_dot_product_attention``, ``keras.layers.MultiHeadAttention``,
  ``txcourse.torch.EncoderLayer`` in week 4 ...), or a string that spells one (``getattr(F, "scaled_...")``);
- **hiding** (:data:`HIDING`): what only a submission that hides a call needs: ``getattr`` with a computed
  name, ``eval``/``exec``/``compile``/``__import__``/``importlib``, ``globals()``/``vars()``/``sys.modules``,
  threads and processes (``threading``, ``concurrent``, ``multiprocessing``, ``asyncio``), the kernel's
  hooks (``get_ipython``), profilers and code objects (``sys.setprofile``, ``__code__``, ``__wrapped__``, ...).

:func:`forbidden_findings` returns, for a submitted notebook, ``{test cell grade id: reason}``: the test cells
of an exercise whose cell has a finding (a finding in a cell the student added counts for every exercise).
The grader sets those cells' scores to 0 and writes the reason to the CSV's note. :func:`forbidden_prelude`
is the first cell of the probe run: the forbidden callables of the frameworks raise there before the
student's code runs. Standard library only.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from txcourse.course.grading.import_guard import allowlist_findings, import_findings, private_reason

__all__ = [
    "FORBIDDEN",
    "HIDING",
    "HIDING_BUILTINS",
    "HISTORY_NAMES",
    "FORBIDDEN_IN_CELL",
    "PATCHED",
    "JUDGED_BY",
    "Finding",
    "source_findings",
    "forbidden_findings",
    "forbidden_prelude",
]

# Forbidden per lab: (glob over the last name, roots under which the name is allowed). A name resolves to a
# dotted path through the notebook's imports ("torch.nn.functional.scaled_dot_product_attention"); its root
# is the first part ("torch"), "?" when it does not resolve (a local object: mha.split_heads).
_ATTENTION = [
    ("*scaled_dot_product*", ()),
    ("*dot_product_attention*", ()),
    ("MultiheadAttention", ()),
    ("multi_head_attention_forward", ()),
    ("fused_attention", ()),
    ("tiled_attention", ()),
    # the kernels underneath (red team 2026-11-27): torch._native_multi_head_attention, _triton_scaled_dot_attention,
    # torch._transformer_encoder_layer_fwd
    ("*multi_head_attention*", ()),
    ("*scaled_dot_attention*", ()),
    ("*transformer_encoder_layer*", ()),
]
_KERAS_ATTENTION = [("MultiHeadAttention", ("txcourse",)), ("Attention", ()), ("AdditiveAttention", ())]
# round C 2026-11-27: keras.layers.GroupQueryAttention (GroupedQueryAttention in keras.src) and the private kernel
# of every Keras attention layer on an object not the student's own (layer._compute_attention; self's is allowed)
_KERAS_ATTENTION += [("*QueryAttention", ()), ("_compute_attention", ())]
_LAYERS = [
    ("Transformer", ()),
    ("TransformerEncoder*", ()),
    ("TransformerDecoder*", ()),
    ("Encoder", ()),
    ("Decoder", ()),
]
FORBIDDEN: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "week1_seq2seq": [*_ATTENTION, *_KERAS_ATTENTION, ("BahdanauAttention", ()), ("Seq2Seq*", ())],
    "week2_positional": [
        ("positional_encoding", ()),
        ("PositionalEncoding", ()),
        ("*PositionEncoding*", ()),
        ("*RotaryEmbedding*", ()),
        ("apply_rotary", ()),
        ("rotary_tables", ()),
        ("rotate_pairs", ()),
    ],
    "week3_attention": [
        *_ATTENTION,
        *_KERAS_ATTENTION,
        ("padding_mask", ()),
        ("look_ahead_mask", ()),
        ("split_heads", ()),
        ("merge_heads", ()),
    ],
    "week4_encoder": [*_ATTENTION, *_KERAS_ATTENTION, *_LAYERS, ("EncoderLayer", ()), ("DecoderLayer", ())],
    "week5_decoder": [*_ATTENTION, *_KERAS_ATTENTION, *_LAYERS, ("EncoderLayer", ()), ("DecoderLayer", ())],
    "week6_training": [
        ("*cross_entropy*", ()),
        ("*CrossEntropy*", ()),
        ("*Crossentropy*", ()),
        ("*crossentropy*", ()),
        ("nll_loss", ()),
        ("NLLLoss*", ()),
        # every library loss that is the cross-entropy up to a constant (red team round C 2026-11-27: Poisson NLL
        # of log-probabilities minus 1; KL divergence; CTC of one frame; focal with gamma 0; sampled softmax over
        # every class; the v1 losses: tf.compat.v1.losses.*, losses_impl), not the words "loss" or "losses"
        ("*poisson*", ()),
        ("*Poisson*", ()),
        ("kl_div*", ()),
        ("KLDiv*", ()),
        ("kld", ()),
        ("KLD", ()),
        ("ctc*", ()),
        ("CTC*", ()),
        ("*focal*", ()),
        ("*Focal*", ()),
        ("*softmax_loss", ()),
        ("AdaptiveLogSoftmax*", ()),
        ("log_loss", ()),
        ("losses_impl", ()),
        ("greedy_decode", ()),
        ("beam_search", ()),
        ("sample_decode", ()),
        ("filter_logits", ()),
        ("_greedy_step", ()),
        ("evaluate*", ()),
        ("translate*", ()),
        ("*top_p*", ()),
        ("*top_k*", ()),
        ("Trainer", ()),
        # round D 2026-11-28: torch.distributions' KL divergence (KL + entropy = the cross-entropy) and its registry
        ("_KL_REGISTRY", ()),
        ("_KL_MEMOIZE", ()),
        ("_kl_*", ()),
        ("register_kl", ()),
        ("_dispatch_kl", ()),
    ],
}

# The tests that judge an exercise other than the one they follow (their probe runs that exercise's function):
# a finding in the exercise's cell costs them too (red team round C 2026-11-27: a forbidden loss still earned
# test_training_worked, which follows top_p_filter but trains with label_smoothed_loss). Weeks 3 to 5 have none:
# their later tests put txcourse's pieces in place of the earlier exercises' (week 3's test_multi_head_attention,
# week 5's test_decoder_does_not_look_ahead).
JUDGED_BY: dict[str, dict[str, list[str]]] = {
    "week6_training": {
        "label_smoothed_loss": ["test_training_worked"],
        "greedy_decode": ["test_your_decoder_translates"],
    },
}

# Names one exercise's cell may not use at all, not even the student's own function of that name: the worked
# table is worked out by hand, not computed with positional_encoding (yours or txcourse's).
FORBIDDEN_IN_CELL: dict[tuple[str, str], list[str]] = {
    ("week2_positional", "worked_table"): ["positional_encoding", "PositionalEncoding"],
}

# What hides a call: built-ins (as plain names) and names or attributes no exercise needs.
HIDING_BUILTINS: dict[str, str] = {
    **dict.fromkeys(("eval", "exec", "compile", "__import__"), "runs computed code"),
    **dict.fromkeys(("globals", "locals", "vars"), "reaches names by string"),
}
HIDING: dict[str, str] = {
    **dict.fromkeys(("importlib", "import_module", "__builtins__", "builtins"), "imports by string"),
    **dict.fromkeys(("attrgetter", "methodcaller", "__getattribute__", "__dict__"), "reaches names by string"),
    **dict.fromkeys(
        ("threading", "Thread", "_thread", "concurrent", "ThreadPoolExecutor", "ProcessPoolExecutor"),
        "runs code in another thread",
    ),
    **dict.fromkeys(("multiprocessing", "asyncio", "run_in_executor", "subprocess", "Popen"), "runs code elsewhere"),
    **dict.fromkeys(("get_ipython", "IPython", "ipykernel", "input_transformers_post"), "the kernel's hooks"),
    **dict.fromkeys(
        ("setprofile", "settrace", "_getframe", "currentframe", "f_globals", "f_locals", "f_back"), "frames"
    ),
    **dict.fromkeys(
        ("gc", "ctypes", "inspect", "marshal", "pickle", "dill", "cloudpickle"), "reaches into the interpreter"
    ),
    **dict.fromkeys(
        (
            "__code__",
            "__globals__",
            "__closure__",
            "__wrapped__",
            "__subclasses__",
            "__func__",
            "__loader__",
            "__spec__",
        ),
        "reaches into code objects",
    ),
}
HIDING_IN: dict[str, tuple[str, str]] = {
    "modules": ("sys", "reaches names by string"),  # sys.modules, not nn's
    "ops": ("torch", "reaches the framework's operators by name"),  # torch.ops.aten._scaled_dot_product_..._math
    "_ops": ("torch", "reaches the framework's operators by name"),
    "_C": ("torch", "reaches the framework's operators by name"),  # torch._C._jit_get_operation("aten::...")
    "library": ("torch", "registers operators"),
    "raw_ops": ("tensorflow", "reaches the framework's operators by name"),  # tf.raw_ops.SoftmaxCrossEntropy...
}
# Lookups by string of the standard library (red team 2026-11-27, round B)
HIDING.update(
    dict.fromkeys(
        ("pydoc", "locate", "pkgutil", "resolve_name", "get_field", "Formatter", "get_type_hints", "ForwardRef"),
        "reaches names by string",
    )
)
# The caller's frames and their source lines (red team 2026-11-27, round C: a graded function read the probe's
# line through traceback.extract_stack() and linecache, and wrote its characters into the numbers the feedback
# quotes)
HIDING.update(
    dict.fromkeys(
        (
            "traceback",
            "linecache",
            "extract_stack",
            "walk_stack",
            "format_stack",
            "print_stack",
            "StackSummary",
            "tb_frame",
            "f_code",
            "gi_frame",
            "cr_frame",
            "ag_frame",
            "__traceback__",
            "exc_info",
            "faulthandler",
        ),
        "frames",
    )
)
# round D 2026-11-28: unittest.mock's patch.object(owner, "Name").get_original() and patch("pkg.mod.name") look
# names up by string; and the kernel's input history (In[-1]: the probe cell's source and its seed) and the
# kernel's parent message, which carry the code of the cell that runs
HIDING.update(
    dict.fromkeys(
        ("unittest", "mock", "get_original", "_get_target", "_importer", "_dot_lookup"), "reaches names by string"
    )
)
HIDING.update(
    dict.fromkeys(
        ("history_manager", "displayhook", "get_parent", "_parents", "parent_header", "_parent_header"),
        "the kernel's input history",
    )
)
# round D 2026-11-28 (issue 30, item 7): the generic routes that run a TensorFlow operator named by a string
# (pywrap_tfe.TFE_Py_FastPathExecute(ctx, "SoftmaxCrossEntropyWithLogits", ...), execute.execute, quick_execute,
# op_def_library._apply_op_helper, a graph's create_op, the C API's TF_NewOperation): what the gen_* modules call
# through, which no exercise calls itself
HIDING.update(
    dict.fromkeys(
        (
            "pywrap_tfe",
            "_pywrap_tfe",
            "TFE_Py_FastPathExecute",
            "TFE_Py_Execute",
            "TFE_Py_ExecuteCancelable",
            "quick_execute",
            "execute_with_callbacks",
            "execute_with_cancellation",
            "op_def_library",
            "_op_def_library",
            "_apply_op_helper",
            "create_op",
            "_create_op_internal",
            "_create_c_op",
            "from_node_def",
            "pywrap_tf_session",
            "_pywrap_tf_session",
            "TF_NewOperation",
        ),
        "reaches the framework's operators by name",
    )
)
# round E 2026-11-28 (E1): os is on the labs' import list (os.write, paths); what of it starts another program (a
# Python that the kernel's guard does not watch) is not
HIDING.update(
    dict.fromkeys(
        (
            "system",
            "popen",
            "fork",
            "forkpty",
            *(f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
            *(f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
            "posix_spawn",
            "posix_spawnp",
        ),
        "runs code elsewhere",
    )
)
HIDING_IN["execute"] = ("tensorflow", "reaches the framework's operators by name")  # tensorflow.python.eager.execute
HISTORY_NAMES = frozenset(("In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii"))  # and _i<N>, as plain names
_HISTORY_NUMBERED = re.compile(r"_i[0-9]+")
_DYNAMIC_ATTRS = ("getattr", "setattr", "delattr", "hasattr")

# The framework callables the probe kernel makes raise before the student's code runs (dotted paths).
_TORCH_ATTENTION = [
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.MultiheadAttention",
    "torch.nn.modules.activation.MultiheadAttention",
    "torch._C._nn.scaled_dot_product_attention",
    # the operators underneath (red team 2026-11-27: torch.ops.aten's math kernel, reached by reduce(getattr, ...))
    *(
        f"torch.ops.aten.{n}"
        for n in (
            "scaled_dot_product_attention",
            "_scaled_dot_product_attention_math",
            "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_flash_attention_for_cpu",
            "_scaled_dot_product_efficient_attention",
            "_scaled_dot_product_cudnn_attention",
        )
    ),
]
_KERAS = ["keras.layers.MultiHeadAttention", "keras.layers.Attention", "keras.layers.AdditiveAttention"]
_KERAS += ["keras.layers.GroupQueryAttention", "keras.layers.GroupedQueryAttention"]  # round C: one class, 2 names
_KERAS += ["keras.ops.dot_product_attention", "keras.ops.nn.dot_product_attention"]
_TORCH_LAYERS = [f"torch.nn.{n}" for n in ("Transformer", "TransformerEncoder", "TransformerEncoderLayer")]
_TORCH_LAYERS += [f"torch.nn.{n}" for n in ("TransformerDecoder", "TransformerDecoderLayer")]
_TORCH_LOSS = ["torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss", "torch.nn.CrossEntropyLoss"]
# round C 2026-11-27: the losses that give the cross-entropy up to a constant (Poisson NLL, KL, CTC, adaptive softmax)
_TORCH_LOSS += [f"torch.nn.functional.{n}" for n in ("poisson_nll_loss", "kl_div", "ctc_loss")]
_TORCH_LOSS += [f"torch.{n}" for n in ("poisson_nll_loss", "kl_div", "ctc_loss", "nll_loss", "cross_entropy_loss")]
_TORCH_LOSS += [f"torch.nn.{n}" for n in ("NLLLoss", "PoissonNLLLoss", "KLDivLoss", "CTCLoss")]
_TORCH_LOSS += ["torch.nn.AdaptiveLogSoftmaxWithLoss"]
_TORCH_LOSS += ["torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence"]  # round D, and _kl_*
_KERAS_LOSS = [f"keras.losses.{n}" for n in ("CategoricalCrossentropy", "SparseCategoricalCrossentropy")]
_KERAS_LOSS += [f"keras.losses.{n}" for n in ("categorical_crossentropy", "sparse_categorical_crossentropy")]
_KERAS_LOSS += [
    "tensorflow.nn.softmax_cross_entropy_with_logits",
    "tensorflow.nn.sparse_softmax_cross_entropy_with_logits",
]
# round C 2026-11-27: the same kernel by tf.raw_ops, nn_ops, gen_nn_ops and the v1 losses, and the losses that give
# the cross-entropy up to a constant (Poisson, KL divergence, CTC, focal)
_SOFTMAX_XENT = ("softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits")
_KERAS_LOSS += [f"tensorflow.python.ops.{m}.{n}" for m in ("nn_ops", "gen_nn_ops") for n in _SOFTMAX_XENT]
_KERAS_LOSS += ["tensorflow.python.ops.nn_ops.softmax_cross_entropy_with_logits_v2"]
_KERAS_LOSS += [
    f"tensorflow.raw_ops.{n}" for n in ("SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits")
]
_KERAS_LOSS += [
    f"{m}.{n}"
    for m in ("tensorflow.compat.v1.losses", "tensorflow.python.ops.losses.losses_impl")
    for n in ("softmax_cross_entropy", "sparse_softmax_cross_entropy", "log_loss", "sigmoid_cross_entropy")
]
_KERAS_LOSS += [f"tensorflow.nn.{n}" for n in ("log_poisson_loss", "ctc_loss", "sampled_softmax_loss")]
_KERAS_LOSS += ["tensorflow.python.ops.nn_impl.log_poisson_loss"]
_KERAS_LOSS += [
    f"keras.{m}.{n}"
    for m in ("losses", "metrics")
    for n in ("poisson", "Poisson", "kl_divergence", "KLDivergence", "categorical_focal_crossentropy")
]
_KERAS_LOSS += [f"keras.losses.{n}" for n in ("CategoricalFocalCrossentropy", "ctc", "CTC")]
PATCHED: dict[str, dict[str, list[str]]] = {
    "week1_seq2seq": {"torch": _TORCH_ATTENTION, "tf": _KERAS},
    "week2_positional": {"torch": [], "tf": []},
    "week3_attention": {"torch": _TORCH_ATTENTION, "tf": _KERAS},
    "week4_encoder": {"torch": _TORCH_ATTENTION + _TORCH_LAYERS, "tf": _KERAS},
    "week5_decoder": {"torch": _TORCH_ATTENTION + _TORCH_LAYERS, "tf": _KERAS},
    "week6_training": {"torch": _TORCH_LOSS, "tf": _KERAS_LOSS},
}


class Finding(str):
    """A reason (a short string for the CSV note) why a cell's code is refused."""


def _aliases(trees: Iterable[ast.AST]) -> dict[str, str]:
    """name -> dotted path, from the imports and the simple aliases (``F = torch.nn.functional``) of cells."""
    aliases: dict[str, str] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for tree in trees:  # aliases of aliases, once
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                path = _dotted(node.value, aliases)
                if path and not path.startswith("?"):
                    aliases[node.targets[0].id] = path
    return aliases


def _dotted(node: ast.AST, aliases: Mapping[str, str]) -> Optional[str]:
    """The dotted path of ``a.b.c`` (its root resolved through ``aliases``; "?" for an unknown root)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        root = aliases.get(node.id, "?" if parts else None)
        if root is None:
            return None  # a bare local name: the student's own
        return ".".join([root, *reversed(parts)])
    return ".".join(["?", *reversed(parts)]) if parts else None


def _root_name(node: ast.AST) -> Optional[str]:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _matches(path: str, rules: Iterable[tuple[str, tuple[str, ...]]]) -> Optional[str]:
    last, root = path.rsplit(".", 1)[-1], path.split(".")[0]
    for pattern, allowed_roots in rules:
        if fnmatch.fnmatchcase(last, pattern) and root not in allowed_roots:
            return pattern
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                ids.add(id(body[0].value))
    return ids


def _hiding_imported(node: ast.AST) -> list[str]:
    """``from torch import ops as O``: a name of :data:`HIDING_IN` imported from its root module, under any alias."""
    if not (isinstance(node, ast.ImportFrom) and node.module):
        return []
    root = node.module.split(".")[0]
    hidden = [alias.name for alias in node.names if alias.name in HIDING_IN and root == HIDING_IN[alias.name][0]]
    return [f"imports {node.module}.{name} ({HIDING_IN[name][1]})" for name in hidden]


def _plain_name_hides(name: str) -> str:
    """Why a plain name (not an attribute) hides a call: a built-in of :data:`HIDING_BUILTINS` or a name of the
    kernel's input history (:data:`HISTORY_NAMES`, ``_i<N>``); '' for any other name."""
    if name in HIDING_BUILTINS:
        return HIDING_BUILTINS[name]
    return "the kernel's input history" if name in HISTORY_NAMES or _HISTORY_NUMBERED.fullmatch(name) else ""


def _private_findings(tree: ast.AST, aliases: Mapping[str, str]) -> list[tuple[ast.AST, str]]:
    """``(node, reason)`` for each name or attribute chain of ``tree`` that resolves, through the notebook's imports
    (``aliases``), to a private part of a library or to ``keras.src`` (``torch._utils._import_dotted_name``)."""
    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            path, root = _dotted(node, aliases), _root_name(node)
            if path and not path.startswith("?") and root in aliases and root not in ("self", "cls"):
                if private_reason(path):
                    found.append((node, f"reaches {private_reason(path)}"))
    return found


def _import_routes(tree: ast.AST, aliases: Mapping[str, str]) -> list[tuple[ast.AST, str]]:
    """What imports or reaches code outside the cell: code on disk and ``sys.path`` (:func:`import_findings`), and
    (round E 2026-11-28) an import off the labs' list (:func:`allowlist_findings`), a private part of a library or
    ``keras.src`` (:func:`_private_findings`)."""
    return [*import_findings(tree, aliases), *allowlist_findings(tree), *_private_findings(tree, aliases)]


# The names of the probe machinery (probes.py): a submission that names them is refused (round E 2026-11-28, E2:
# a student's ``def probe_emit`` replaced the grader's emitter for every probe).
PROBE_NAMES = ("probe_emit", "PROBE_SEED")
PROBE_PREFIX = "__txprobe"


def probe_name_findings(source: str) -> list[Finding]:
    """A finding for every name, attribute, definition, argument or import alias of the probe machinery
    (:data:`PROBE_NAMES`, names starting with :data:`PROBE_PREFIX`) in the cell ``source`` (none for a cell that
    does not parse: :func:`source_findings` refuses it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = list(node.names)
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        for name in names:
            if name in PROBE_NAMES or name.startswith(PROBE_PREFIX):
                line = getattr(node, "lineno", "?")
                found.append(
                    Finding(f"line {line}: {name} (a name of the grader's probes: defined by the grader only)")
                )
    return found


def _top_level(tree: ast.AST) -> Iterable[ast.AST]:
    """The nodes of ``tree`` outside function and class bodies (what binds the notebook's global names)."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _bound(tree: ast.AST) -> set[str]:
    """The global names a cell binds (assignments, definitions, imports, ``global`` statements)."""
    names: set[str] = set()
    for node in _top_level(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    names.update(n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names)
    return names


def setup_names(master: Any) -> frozenset[str]:
    """The names the probes read from the student's namespace and no student cell may rebind: Python's built-ins
    and the global names the course's locked cells other than tests bind in ``master`` (``np``, ``tx``, ``run``...)."""
    import builtins

    names = set(dir(builtins))
    for cell in master.cells:
        if cell.get("cell_type") == "code" and _meta(cell).get("locked") and not _meta(cell).get("grade"):
            try:
                names |= _bound(ast.parse(cell.get("source", "")))
            except SyntaxError:
                pass
    return frozenset(names)


def rebinding_findings(source: str, protected: frozenset[str], aliases: Mapping[str, str]) -> list[Finding]:
    """A finding for each global name of ``protected`` the cell ``source`` rebinds, and each attribute it sets
    or deletes on a module or a setup name (``np.abs = ...``, ``setattr(torch, ...)``): the probes run in the
    student's namespace and compute with these (round E 2026-11-28, E2: the yes/no decided from numbers that a
    patched ``np`` would have chosen)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = [
        Finding(f"rebinds {name} (a name of Python or of the course's setup cells)")
        for name in sorted(_bound(tree) & protected)
    ]
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            target = node.args[0] if node.args else None
        root = _root_name(target) if target is not None else None
        if root is not None and (root in aliases or root in protected) and root not in ("self", "cls"):
            found.append(Finding(f"line {node.lineno}: sets an attribute of {root} (a module or a setup name)"))
    return found


def source_findings(source: str, lab: str, aliases: Mapping[str, str], cell: Optional[str] = None) -> list[Finding]:
    """Why the code ``source`` (one cell, the solution cell ``cell`` or one the student added) is refused in
    ``lab``: forbidden names (:data:`FORBIDDEN`, and :data:`FORBIDDEN_IN_CELL` for ``cell``), strings that
    spell them, and every way of hiding a call (:data:`HIDING`, :data:`HIDING_BUILTINS`). Empty for an honest
    cell. A cell that does not parse (IPython syntax) is refused too: the grader cannot read it."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [Finding(f"code the grader cannot read (line {error.lineno})")]
    rules = FORBIDDEN.get(lab, [])
    aliases = {**aliases, **_aliases([tree])}  # and the cell's own imports
    docstrings = _docstrings(tree)
    found = [Finding(f"line {n.lineno}: {why}") for n, why in _import_routes(tree, aliases)]

    def add(node: ast.AST, reason: str) -> None:
        found.append(Finding(f"line {getattr(node, 'lineno', '?')}: {reason}"))

    banned = FORBIDDEN_IN_CELL.get((lab, cell or ""), [])
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_ATTRS and id(node) not in called:
            add(node, f"{node.id} passed as a value (reduce(getattr, ...) hides what it calls)")
        if isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            path = _dotted(node, aliases)
            name = node.attr if isinstance(node, ast.Attribute) else node.id
            if name in banned:
                add(node, f"uses {name}, which this exercise asks you to do without")
            elif name in HIDING:
                add(node, f"{name} ({HIDING[name]})")
            elif isinstance(node, ast.Name) and _plain_name_hides(name):
                add(node, f"{name} ({_plain_name_hides(name)})")
            elif name in HIDING_IN and path and path.split(".")[0] == HIDING_IN[name][0]:
                add(node, f"{path} ({HIDING_IN[name][1]})")
            elif path and (isinstance(node, ast.Attribute) or node.id in aliases):
                if _root_name(node) in ("self", "cls"):
                    continue  # the student's own object
                if _matches(path, rules):
                    add(node, f"uses {path.lstrip('?.')}, which this lab forbids")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            for reason in _hiding_imported(node):  # from torch import ops as O
                add(node, reason)
            for full in filter(None, names):
                for part in full.split("."):
                    if part in HIDING:
                        add(node, f"imports {full} ({HIDING[part]})")
                if _matches(full, rules):
                    add(node, f"imports {full}, which this lab forbids")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC_ATTRS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                add(node, f"{node.func.id} with a computed name (hides what it calls)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            word = node.value.strip()  # a name spelled as a string (getattr(F, "scaled_..."), a module path)
            dotted = word.replace("::", ".").replace(":", ".")  # "aten::_scaled_...", "torch:name" (resolve_name)
            if dotted.replace(".", "").replace("_", "").isalnum() and (
                any(part in HIDING for part in dotted.split(".")) or _matches(dotted, rules)
            ):
                add(node, f"the string {word!r} names what this lab forbids")
    return found


def _meta(cell: Mapping[str, Any]) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def _exercises(master: Any) -> dict[str, list[str]]:
    """solution grade id -> the test cells after it (up to the next solution cell), in the master's order."""
    out: dict[str, list[str]] = {}
    current = None
    for cell in master.cells:
        meta = _meta(cell)
        if meta.get("solution") and meta.get("grade_id"):
            current = meta["grade_id"]
            out[current] = []
        elif meta.get("grade") and meta.get("grade_id") and current is not None:
            out[current].append(meta["grade_id"])
    return out


def _reason(finding: str) -> str:
    return finding.split(": ", 1)[-1]  # without its line number


def forbidden_findings(notebook: Any, lab: str, framework: str, master: Any = None) -> dict[str, str]:
    """``{test cell grade id: reason}`` for a submitted ``notebook`` of ``lab`` (``framework``: "torch" or "tf",
    kept for the framework-specific rules to come): the test cells of each exercise whose solution cell has
    a finding of :func:`source_findings`, and every test cell when a cell the student added or edited (a code
    cell that is neither a solution cell, a locked cell nor a course cell as the master has it) has one (an
    edited course cell: a finding its master version does not have), and the tests :data:`JUDGED_BY` names for
    the exercise. Locked cells are not read (grading restores them from the master). ``master``: the course's
    notebook (its order of exercises and locked cells); without it, the submission's own metadata is used."""
    del framework  # the rules are per lab; both notebooks of a lab forbid the same names
    master = master if master is not None else notebook
    exercises = _exercises(master)
    locked = {_meta(c).get("grade_id") for c in master.cells if _meta(c).get("locked")}
    locked_sources = [
        c.get("source", "") for c in master.cells if c.get("cell_type") == "code" and _meta(c).get("locked")
    ]
    course = {c.get("id"): c.get("source", "") for c in master.cells if c.get("cell_type") == "code" and not _meta(c)}
    student = []  # (grade id of the exercise or None for an added cell, source, the course's version or "")
    for cell in notebook.cells:
        if cell.get("cell_type") != "code":
            continue
        meta, source = _meta(cell), cell.get("source", "")
        grade_id = meta.get("grade_id")
        if grade_id in exercises:
            student.append((grade_id, source, ""))
        elif grade_id in locked or (meta.get("locked") and grade_id) or source in course.values():
            continue  # restored from the master, or a course cell as the course wrote it
        else:
            student.append((None, source, course.get(cell.get("id"), "")))
    trees = []
    for source in [*locked_sources, *course.values(), *(s for _, s, _ in student)]:
        try:
            trees.append(ast.parse(source))
        except SyntaxError:
            pass
    aliases = _aliases(trees)
    every_test = [t for tests in exercises.values() for t in tests]
    protected = setup_names(master)  # what the probes read from the student's namespace (round E)
    out: dict[str, str] = {}
    for grade_id, source, original in student:
        known = {_reason(f) for f in source_findings(original, lab, aliases)} if original else set()
        found = [f for f in source_findings(source, lab, aliases, grade_id) if _reason(f) not in known]
        found += probe_name_findings(source) + rebinding_findings(source, protected, aliases)  # round E (E2)
        if not found:
            continue
        where = f"exercise cell {grade_id}" if grade_id else "a cell you added"
        reason = f"{where}: {found[0]}" + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
        judged = [t for t in JUDGED_BY.get(lab, {}).get(grade_id or "", []) if t in every_test]
        for test in [*exercises[grade_id], *judged] if grade_id else every_test:
            out.setdefault(test, reason)
    return out


# The attention kernels underneath the framework's functions, refused at the operator level in the probe kernel
# (red team 2026-11-27, round B: reached by torch._C._jit_get_operation, torch.ops.aten.__getattr__, the top-level
# torch._scaled_dot_product_attention_math, torch._native_multi_head_attention): every route ends in the dispatcher.
ATEN_REFUSED = (
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_native_multi_head_attention",
    "_transformer_encoder_layer_fwd",
    "_triton_scaled_dot_attention",
    "_triton_multi_head_attention",
)
# The loss kernels underneath week 6's forbidden losses (round C 2026-11-27), refused the same way: the cross-entropy,
# the NLL and the losses that give them up to a constant, whatever Python name reaches them.
ATEN_LOSS_REFUSED = (
    "cross_entropy_loss",
    "nll_loss",
    "nll_loss_nd",
    "nll_loss2d",
    "nll_loss_forward",
    "nll_loss2d_forward",
    "poisson_nll_loss",
    "kl_div",
    "ctc_loss",
    "_ctc_loss",
)


# round D 2026-11-28: TensorFlow's raw operators of week 6's losses, refused in the probe kernel under every name they
# have (tf.raw_ops.X, gen_nn_ops.X, gen_nn_ops.x_snake, x_snake_eager_fallback, in any tensorflow or keras module):
# the prelude walks the modules for them rather than listing paths (the red team called gen_nn_ops' CamelCase name)
TF_OPS_REFUSED = ("SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "CTCLoss", "CTCLossV2")

# round E 2026-11-28 (E1): the originals behind the disabled public names, by name, in every module of the frameworks
# (keras.src.losses.losses.categorical_crossentropy behind keras.losses', the Keras torch backend's
# keras.src.backend.torch.nn.categorical_crossentropy, keras.src.layers.attention.attention.Attention), walked in
# the probe kernel at its start and in each framework module imported later; a class refuses every method
ORIGINALS_ATTENTION = ("dot_product_attention", "scaled_dot_product_attention", "multi_head_attention_forward")
ORIGINALS_LOSS = (
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "binary_crossentropy",
    "cross_entropy",
    "nll_loss",
)

_PRELUDE = """\
def _tx_forbid(paths, aten, tf_ops, kl, originals):
    import importlib
    import sys
    import warnings

    def refuse(path):
        def forbidden(*args, **kwargs):
            raise RuntimeError(f"{path} is not allowed in this lab: write it yourself")
        return forbidden

    def refuse_method(path):  # a named first argument: Keras reads the signature of call
        def forbidden(self, *args, **kwargs):
            raise RuntimeError(f"{path} is not allowed in this lab: write it yourself")
        return forbidden

    def refuse_class(cls, path):  # round E: every method of the class (_calculate_scores, _apply_scores ...)
        for method, value in list(vars(cls).items()):
            function = getattr(value, "__func__", value)
            if callable(function) and not isinstance(function, type) and method not in ("__new__", "__init_subclass__"):
                wrapped = refuse_method(path) if not isinstance(value, (staticmethod, classmethod)) else refuse(path)
                try:
                    setattr(cls, method, staticmethod(wrapped) if isinstance(value, staticmethod) else wrapped)
                except (TypeError, AttributeError):
                    pass  # a class of C code: its Python name is replaced below

    roots = ("tensorflow", "keras", "tf_keras", "torch")
    names = {path.rpartition(".")[2] for path in paths} | set(originals)

    def walk(module_name, module):  # round E: the originals behind the public names, under any module
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if name not in names or not callable(value) or getattr(value, "__tx_refused__", False):
                continue
            where = module_name + "." + name
            if isinstance(value, type):
                refuse_class(value, where)
            else:
                value = refuse(where)
                value.__tx_refused__ = True
                try:
                    setattr(module, name, value)
                except (TypeError, AttributeError):
                    pass

    class AfterImport:  # a framework module imported later (keras.src.backend.torch.nn) is walked once loaded
        busy = set()  # the names it is finding: another finder that asks every finder (the guard's) gets None

        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name.split(".")[0] not in roots or name in cls.busy:
                return None
            cls.busy.add(name)
            try:
                for finder in list(sys.meta_path):
                    find = getattr(finder, "find_spec", None)
                    if finder is cls or find is None:
                        continue
                    spec = find(name, path, target)
                    if spec is not None:
                        break
                else:
                    return None
            finally:
                cls.busy.discard(name)
            loader = spec.loader
            if loader is None or not hasattr(loader, "exec_module"):
                return spec

            class Walked:
                def __getattr__(self, attribute):
                    return getattr(loader, attribute)

                def create_module(self, spec):
                    return loader.create_module(spec)

                def exec_module(self, module):
                    loader.exec_module(module)
                    walk(name, module)

            spec.loader = Walked()
            return spec

    for path in paths:
        module_name, _, name = path.rpartition(".")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            parent, _, child = module_name.rpartition(".")
            try:
                module = getattr(importlib.import_module(parent), child)
            except (ImportError, AttributeError):
                continue
        if hasattr(module, name):
            if isinstance(getattr(module, name), type):
                refuse_class(getattr(module, name), path)
            setattr(module, name, refuse(path))
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] in roots:
            walk(module_name, module)
    sys.meta_path.insert(0, AfterImport)
    if aten:
        import torch

        library = torch.library.Library("aten", "IMPL")
        for op in aten:
            kernel = refuse("aten::" + op)
            kernel.library = library  # the dispatcher holds the kernel, the kernel the library: never collected
            for key in ("CompositeImplicitAutograd", "CPU", "CUDA", "AutogradCPU", "AutogradCUDA"):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        library.impl(op, kernel, key)
                except (RuntimeError, AttributeError, ValueError):
                    pass  # an operator this PyTorch does not have, or not for this key
    if tf_ops:  # every name of the operators: X, x_snake, x_snake_eager_fallback, in every module that has one
        import os  # not pkgutil: the kernel's import guard keeps cells to the labs' list of modules

        try:
            import tensorflow.python.ops as package
        except ImportError:
            package = None
        found = [f for d in getattr(package, "__path__", []) if os.path.isdir(d) for f in sorted(os.listdir(d))]
        for file_name in found:
            if file_name.startswith("gen_") and file_name.endswith(".py"):
                try:
                    importlib.import_module("tensorflow.python.ops." + file_name[: -len(".py")])
                except Exception:
                    pass
        forms = {op.lower() for op in tf_ops} | {op.lower() + "eagerfallback" for op in tf_ops}
        for module_name, module in list(sys.modules.items()):
            if module_name.split(".")[0] not in ("tensorflow", "keras", "tf_keras"):
                continue
            for name, value in list(getattr(module, "__dict__", {}).items()):
                if name.replace("_", "").lower() in forms and callable(value) and not isinstance(value, type):
                    setattr(module, name, refuse(module_name + "." + name))
    if kl:  # torch.distributions' KL divergence: its functions and the registry that dispatches to them
        try:
            import torch.distributions.kl as kl_module
        except ImportError:
            return
        for name in list(vars(kl_module)):
            if name.startswith("_kl_") or name == "kl_divergence":
                setattr(kl_module, name, refuse("torch.distributions.kl." + name))
        for key in list(kl_module._KL_REGISTRY):
            kl_module._KL_REGISTRY[key] = refuse("torch.distributions.kl_divergence")
        kl_module._KL_MEMOIZE.clear()


_tx_forbid(PATHS, ATEN, TF_OPS, KL, ORIGINALS)
del _tx_forbid
"""


# round D 2026-11-28 (issue 30, item 7): the routes that run an operator named by a string (what the gen_* modules
# call through), each wrapped in the probe kernel with a check of its op-name argument against TF_OPS_REFUSED;
# every other operator passes through unchanged. (module or class, attribute, position of the op name, its keyword)
TF_OP_ROUTES = (
    *(
        ("tensorflow.python.pywrap_tfe", n, 1 if "Fast" in n else 2, "op_name")
        for n in ("TFE_Py_FastPathExecute", "TFE_Py_Execute", "TFE_Py_ExecuteCancelable")
    ),
    *(
        ("tensorflow.python._pywrap_tfe", n, 1 if "Fast" in n else 2, "op_name")
        for n in ("TFE_Py_FastPathExecute", "TFE_Py_Execute", "TFE_Py_ExecuteCancelable")
    ),
    *(
        ("tensorflow.python.eager.execute", n, 0, "op_name")
        for n in ("execute", "quick_execute", "execute_with_callbacks", "execute_with_cancellation")
    ),
    ("tensorflow.python.framework.op_def_library", "_apply_op_helper", 0, "op_type_name"),
    ("tensorflow.python.framework.ops:Graph", "_create_op_internal", 1, "op_type"),
    ("tensorflow.python.framework.ops:Graph", "create_op", 1, "op_type"),
    ("tensorflow.python.framework.func_graph:FuncGraph", "_create_op_internal", 1, "op_type"),
    ("tensorflow.python.framework.ops", "_create_c_op", 1, "node_def"),
    ("tensorflow.python.client.pywrap_tf_session", "TF_NewOperation", 1, "op_type"),
    ("tensorflow.python.client._pywrap_tf_session", "TF_NewOperation", 1, "op_type"),
)

_OP_NAME_PRELUDE = """\
def _tx_guard_op_names(routes, refused):
    import importlib
    import sys

    refused = frozenset([*refused, *(op.encode() for op in refused)])

    def op_name(value):  # the name the C code reads: a str or bytes subclass copied, a NodeDef's op
        if isinstance(value, str):
            return "".join((value,))
        if isinstance(value, (bytes, bytearray)):
            return b"".join((value,))
        inner = getattr(value, "op", None)
        return op_name(inner) if isinstance(inner, (str, bytes)) else None

    def guard(original, where, position, keyword):
        def guarded(*args, **kwargs):
            name = kwargs.get(keyword) if keyword in kwargs else args[position] if len(args) > position else None
            if (name if type(name) is str or type(name) is bytes else op_name(name)) in refused:
                shown = op_name(name)
                raise RuntimeError(f"{where}({shown!r}) is not allowed in this lab: write it yourself")
            return original(*args, **kwargs)
        return guarded

    wrapped = {}
    for owner_path, attribute, position, keyword in routes:
        module_name, _, class_name = owner_path.partition(":")
        try:
            owner = importlib.import_module(module_name)
            owner = getattr(owner, class_name) if class_name else owner
        except (ImportError, AttributeError):
            continue
        original = (vars(owner) if class_name else owner.__dict__).get(attribute)
        if original is None:
            continue
        if id(original) not in wrapped:
            wrapped[id(original)] = (original, guard(original, module_name + "." + attribute, position, keyword))
        setattr(owner, attribute, wrapped[id(original)][1])
    for module_name, module in list(sys.modules.items()):  # every other module that bound one by name
        if module_name.split(".")[0] in ("tensorflow", "keras", "tf_keras"):
            for name, value in list(getattr(module, "__dict__", {}).items()):
                if id(value) in wrapped and wrapped[id(value)][0] is value:
                    setattr(module, name, wrapped[id(value)][1])


_tx_guard_op_names(ROUTES, REFUSED)
del _tx_guard_op_names
"""


def _op_name_prelude(tf_ops: list[str]) -> str:
    """The prelude's part that wraps each route of :data:`TF_OP_ROUTES` in a check of its op name against
    ``tf_ops`` ('' without any): the operator refused however its name is spelled or assembled."""
    if not tf_ops:
        return ""
    call = f"_tx_guard_op_names({list(TF_OP_ROUTES)!r}, {list(tf_ops)!r})"
    return "\n" + _OP_NAME_PRELUDE.replace("_tx_guard_op_names(ROUTES, REFUSED)", call)


def forbidden_prelude(lab: str, framework: str) -> str:
    """The first code of the probe run (before the student's cells): each callable of :data:`PATCHED` for
    ``lab`` and ``framework`` replaced by one that raises "not allowed in this lab" (a class: every method of
    it, ``_calculate_scores`` too, so every alias of the class refuses), and so are the originals behind them
    (the same names and :data:`ORIGINALS_ATTENTION` / :data:`ORIGINALS_LOSS` in any module of the frameworks,
    also one imported later: ``keras.src.losses.losses.categorical_crossentropy``); in PyTorch's
    attention labs the operators of :data:`ATEN_REFUSED` (week 6: :data:`ATEN_LOSS_REFUSED`, and
    ``torch.distributions``' KL divergence with its registry) refuse in the dispatcher, whatever route reaches
    them; in TensorFlow's week 6 every function of any ``tensorflow``/``keras`` module named after an operator of
    :data:`TF_OPS_REFUSED` (CamelCase, snake_case, ``_eager_fallback``), and those operators by their op name
    through every route of :data:`TF_OP_ROUTES` (``TFE_Py_FastPathExecute``, ``execute.execute``,
    ``_apply_op_helper`` ...). A framework or module that is not installed is skipped."""
    targets = PATCHED.get(lab, {}).get(framework, [])
    loss = "torch.nn.CrossEntropyLoss" in targets or "tensorflow.nn.softmax_cross_entropy_with_logits" in targets
    aten = list(ATEN_REFUSED) if framework == "torch" and "torch.nn.MultiheadAttention" in targets else []
    aten += list(ATEN_LOSS_REFUSED) if framework == "torch" and loss else []
    tf_ops = list(TF_OPS_REFUSED) if framework == "tf" and loss else []
    originals = list(ORIGINALS_LOSS if loss else ORIGINALS_ATTENTION if targets else ())
    call = f"_tx_forbid({list(targets)!r}, {aten!r}, {tf_ops!r}, {framework == 'torch' and loss!r}, {originals!r})"
    return _PRELUDE.replace("_tx_forbid(PATHS, ATEN, TF_OPS, KL, ORIGINALS)", call) + _op_name_prelude(tf_ops)
