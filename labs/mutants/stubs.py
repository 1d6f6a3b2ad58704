"""Stub mutants, generated for every exercise: answers that did no work must lose *all* of their exercise's points.

For each exercise of :data:`catalogue.EXERCISES` and each framework, :func:`stub_mutants` makes one
:class:`~catalogue.Mutant` (kind ``"stub"``) per kind of :data:`KINDS` by appending to the solution cell a
wrapper around each of its functions (and the ``forward`` / ``call`` of each of its classes, and each value a
data cell assigns):

- ``zeros``: the solution's result with every array or tensor replaced by zeros (``False``, ``0``) of its
  shape and dtype;
- ``input``: its first tensor argument, returned as it came (a layer that returns ``x``);
- ``random``: values of the right shape and dtype drawn from a fixed seed;
- ``constant``: ones of the right shape (a loss that returns ``torch.tensor(1.0)``: no gradient);
- ``txcourse``: txcourse's own version (the catalogue's ``calls_tx_*`` / ``subclasses_tx_*`` edit, or
  :data:`TXCOURSE` where the catalogue has none);
- ``forbidden``: the right answer, with a call of a framework built-in the lab forbids beside it
  (``F.scaled_dot_product_attention``, ``keras.layers.MultiHeadAttention``, ``F.cross_entropy``);

and the red team's stubs of issue 30 (:data:`EXTRA`: an encoder layer that is only its last LayerNorm).

The wrappers compute the solution first: a stub has the right shapes, and only the values, or where they
came from, give it away. ``labs/mutants/run.py`` grades them as students are graded (``make mutants``);
``labs/mutants/probe_power.py`` runs their probes in one kernel per lab and framework (the measurement of
item 5 of issue 30; a subset in ``make test``).
"""

from __future__ import annotations

import ast

from catalogue import EXERCISES, MUTANTS, Mutant

KINDS = ("zeros", "input", "random", "constant", "txcourse", "forbidden")

# The helper every stub calls (the lab's setup defines `tensor` and `to_numpy` in both frameworks).
HELPER = '''
def _txstub(result, args, kind):
    """The stub's answer of `kind` in the shape of `result` (the solution's)."""
    import numpy as _np

    if kind == "input":
        return next((a for a in args if hasattr(a, "shape")), args[0] if args else result)
    rng = _np.random.default_rng(0)

    def fill(a):
        a = _np.asarray(a)
        if kind == "zeros":
            return _np.zeros_like(a)
        if kind == "constant":
            return _np.ones_like(a)
        if a.dtype == bool:
            return rng.random(a.shape) < 0.5
        if a.dtype.kind in "iu":
            return rng.integers(0, max(2, int(a.max(initial=0)) + 1), a.shape).astype(a.dtype)
        return rng.standard_normal(a.shape).astype(a.dtype)

    def one(r):
        if isinstance(r, tuple) and hasattr(r, "_fields"):
            return type(r)(*[one(x) for x in r])
        if isinstance(r, (tuple, list)):
            return type(r)(one(x) for x in r)
        if isinstance(r, (bool, int, float, _np.generic)):
            return type(r)(fill(r)) if not isinstance(r, _np.generic) else fill(r)[()]
        if isinstance(r, _np.ndarray):
            return fill(r)
        if hasattr(r, "shape"):
            return tensor(fill(to_numpy(r)))
        return r

    return one(result)
'''

# A call of a built-in the lab forbids (labs with none: no `forbidden` stub).
FORBIDDEN_CALL = {
    "torch": {
        "attention": "torch.nn.functional.scaled_dot_product_attention(*(torch.zeros(1, 1, 2),) * 3)",
        "loss": "torch.nn.functional.cross_entropy(torch.zeros(1, 3), torch.zeros(1, dtype=torch.long))",
    },
    "tf": {
        "attention": "keras.layers.MultiHeadAttention(num_heads=1, key_dim=2)",
        "loss": "keras.losses.SparseCategoricalCrossentropy(from_logits=True)",
    },
}
FORBIDDEN_KIND = {
    "week1_seq2seq": "attention",
    "week3_attention": "attention",
    "week4_encoder": "attention",
    "week5_decoder": "attention",
    "week6_training": "loss",
}

# txcourse's version where the catalogue has no calls_tx_* mutant: code appended to the solution cell. None
# for week 5's decoder mask (txcourse builds it inline in Transformer.decode, from tx.look_ahead_mask and
# tx.padding_mask, which the exercise allows) and future_leak (txcourse has none).
TXCOURSE = {
    ("week2_positional", "ex2 worked table"): """
        del worked_table  # the solution's table must not survive a call that raises
        worked_table = to_numpy(tx.positional_encoding(4, 4)).astype(np.float64)
    """,
    ("week3_attention", "ex4 multi-head"): """
        def multi_head_attention(mha, query, key, value, mask=None):
            result = mha(query, key, value, mask, return_weights=True)
            return result.output, result.weights
    """,
}


# The stubs of issue 30's red team, beside the generated ones (appended to the solution cell).
EXTRA = {
    ("week4_encoder", "ex1 EncoderLayer"): {
        "last_layer_norm_only": {
            "torch": "EncoderLayer.forward = lambda self, x, *args, **kwargs: self.feed_forward_norm(x)",
            "tf": "EncoderLayer.call = lambda self, x, *args, **kwargs: self.feed_forward_norm(x)",
        }
    },
}


def _targets(source: str) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """The functions, the (class, method) pairs and the assigned names of a solution cell."""
    tree = ast.parse(source)
    functions, methods, values = [], [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            methods += [(node.name, m) for m in ("forward", "call") if m in names]
        elif isinstance(node, ast.Assign):
            values += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return functions, methods, values


def wrapper(source: str, kind: str, extra: str = "") -> str:
    """The code appended to a solution cell ``source`` that turns it into a stub of ``kind``; ``extra``: a
    statement the wrapped functions run first (the forbidden call)."""
    functions, methods, values = _targets(source)
    do = "_txstub(_txstub_original(*args, **kwargs), args, KIND)".replace("KIND", repr(kind))
    if kind == "forbidden":
        do = "_txstub_original(*args, **kwargs)"
    lines = [HELPER.strip("\n"), "", "import functools as _txstub_functools", ""]
    for name in functions:
        lines += [
            f"def _txstub_wrap_{name}(_txstub_original):",
            "    @_txstub_functools.wraps(_txstub_original)",
            "    def stub(*args, **kwargs):",
            *([f"        {extra}"] if extra else []),
            f"        return {do}",
            "    return stub",
            f"{name} = _txstub_wrap_{name}({name})",
            "",
        ]
    for cls, method in methods:
        lines += [
            f"def _txstub_wrap_{cls}_{method}(_txstub_original):",
            "    @_txstub_functools.wraps(_txstub_original)",
            "    def stub(self, *args, **kwargs):",
            *([f"        {extra}"] if extra else []),
            f"        return {do.replace('_txstub_original(', '_txstub_original(self, ')}",
            "    return stub",
            f"{cls}.{method} = _txstub_wrap_{cls}_{method}({cls}.{method})",
            "",
        ]
    if kind not in ("input", "forbidden") and not (functions or methods):  # a data cell: its values
        lines += [f"{name} = _txstub({name}, (), {kind!r})" for name in values]
    return "\n".join(lines)


def _edits(lab: str, exercise: str, kind: str, sources: dict[str, str]) -> dict | None:
    """The catalogue-style edits (``{fw: [(old, new)]}``) of one stub, or None where the kind does not apply."""
    if kind == "txcourse":
        existing = [
            m
            for m in MUTANTS
            if m.lab == lab and m.exercise == exercise and m.name.startswith(("calls_tx", "subclasses_tx"))
        ]
        if existing:
            return {fw: existing[0].edits_for(fw) for fw in existing[0].frameworks()}
        if (lab, exercise) not in TXCOURSE:
            return None
        import textwrap

        code = textwrap.dedent(TXCOURSE[lab, exercise]).strip("\n")
        return {fw: [("", "\n\n" + code)] for fw in sources}
    if kind == "forbidden" and lab not in FORBIDDEN_KIND:
        return None
    out = {}
    for fw, src in sources.items():
        functions, methods, values = _targets(src)
        if kind in ("input", "forbidden") and not (functions or methods):
            return None  # a data cell: no input to return, nothing to call
        extra = FORBIDDEN_CALL[fw][FORBIDDEN_KIND[lab]] if kind == "forbidden" else ""
        out[fw] = [("", "\n\n" + wrapper(src, kind, extra))]  # "": appended to the cell
    return out


def stub_mutants(solution_sources: dict[tuple[str, str], dict[str, str]]) -> list[Mutant]:
    """Every stub of every exercise: ``solution_sources[(lab, cell)][fw]`` is the solution cell's source."""
    out = []
    for lab, exercises in EXERCISES.items():
        for exercise, (cell, _tests) in exercises.items():
            sources = solution_sources[lab, cell]
            for kind in KINDS:
                edits = _edits(lab, exercise, kind, sources)
                if edits is not None:
                    out.append(Mutant(lab, exercise, f"stub_{kind}", edits, "stub"))
            for name, code in EXTRA.get((lab, exercise), {}).items():
                out.append(
                    Mutant(lab, exercise, f"stub_{name}", {fw: [("", "\n\n" + c)] for fw, c in code.items()}, "stub")
                )
    return out


def solution_sources(labs_dir) -> dict[tuple[str, str], dict[str, str]]:
    """(lab, solution cell id) -> framework -> the source of that cell in ``labs_dir/source``."""
    import nbformat

    out: dict[tuple[str, str], dict[str, str]] = {}
    for lab, exercises in EXERCISES.items():
        for fw in ("torch", "tf"):
            nb = nbformat.read(labs_dir / "source" / lab / f"{lab}_{fw}.ipynb", as_version=4)
            by_id = {c.get("id"): c.source for c in nb.cells}
            for cell, _tests in exercises.values():
                out.setdefault((lab, cell), {})[fw] = by_id[cell]
    return out
