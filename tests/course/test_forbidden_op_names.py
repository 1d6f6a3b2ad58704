"""Issue 30, item 7 (round D 2026-11-28, fixer D3): a TensorFlow operator called by its op NAME through the generic
execution routes the gen_* modules call through, the name assembled from pieces so that no string spells it:

- the source check refuses the routes' names (``pywrap_tfe``, ``TFE_Py_FastPathExecute``, ``execute.execute``,
  ``quick_execute``, ``op_def_library``, ``_apply_op_helper``, a graph's ``create_op``, ``TF_NewOperation``);
- the probe kernel wraps each route in a check of its op-name argument against the lab's refused operators
  (:data:`TF_OPS_REFUSED`): the refused ones raise, every other operator runs unchanged.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from txcourse.course.grading.forbidden import TF_OPS_REFUSED, forbidden_prelude, source_findings

W3, W6 = "week3_attention", "week6_training"
ALIASES = {"tf": "tensorflow", "keras": "keras"}
LOSS = "label_smoothed_loss"
NAME = "'Softmax' + 'Cross' + 'EntropyWithLogits'"

ROUTES_IN_SOURCE = [
    ("from tensorflow.python import pywrap_tfe", "pywrap_tfe"),
    (f"y = pywrap_tfe.TFE_Py_FastPathExecute(ctx, {NAME}, None, x, t)", "TFE_Py_FastPathExecute"),
    ("from tensorflow.python import _pywrap_tfe as p", "_pywrap_tfe"),
    ("from tensorflow.python.eager import execute", "execute"),
    ("import tensorflow.python.eager.execute as ex\ny = ex.execute(name, 2, inputs=[x], attrs=(), ctx=c)", "execute"),
    (f"y = tf.python.eager.execute.execute({NAME}, 2, [x, t], ('T', 1), c)", "execute"),
    ("from tensorflow.python.eager.execute import quick_execute", "quick_execute"),
    ("y = ex.quick_execute(name, 2, [x, t], ('T', 1), c)", "quick_execute"),
    ("from tensorflow.python.framework import op_def_library", "op_def_library"),
    (f"y = lib._apply_op_helper({NAME}, features=x, labels=t)", "_apply_op_helper"),
    (f"op = tf.compat.v1.get_default_graph().create_op({NAME}, [x, t], [tf.float32] * 2)", "create_op"),
    ("op = g._create_op_internal(name, [x, t])", "_create_op_internal"),
    ("from tensorflow.python.client import pywrap_tf_session as s\nd = s.TF_NewOperation(g, name, 'x')", "pywrap_tf"),
    ("f = getattr(tf.raw_ops, 'Softmax' + name)", "computed name"),
    ("route = 'TFE_Py_FastPathExecute'", "TFE_Py_FastPathExecute"),
]


@pytest.mark.parametrize("source,reason", ROUTES_IN_SOURCE, ids=[s[:48] for s, _ in ROUTES_IN_SOURCE])
def test_the_source_check_refuses_each_op_name_route(source, reason):
    found = source_findings(source, W6, ALIASES, LOSS)
    assert found and any(reason in f for f in found), (source, found)


HONEST_TF = [
    "log_p = tf.nn.log_softmax(logits, axis=-1)\nnll = -tf.gather(log_p, targets, batch_dims=2)",
    "weights = tf.nn.softmax(scores, axis=-1)\nout = tf.matmul(weights, value)",
    "@tf.function\ndef step(x):\n    return tf.reduce_sum(x)\nresult = step(x)",
    "def execute(plan):\n    return plan\nexecute(1)",  # the student's own function of that name
]


@pytest.mark.parametrize("source", HONEST_TF)
def test_honest_tensorflow_code_has_no_op_name_finding(source):
    assert source_findings(source, W6, ALIASES, LOSS) == []
    assert source_findings(source, W3, ALIASES, "scaled_dot_product_attention") == []


SETUP = """\
import tensorflow as tf
from tensorflow.python import pywrap_tfe, _pywrap_tfe
from tensorflow.python.client import pywrap_tf_session
from tensorflow.python.eager import context, execute
from tensorflow.python.framework import op_def_library, ops
x = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
y = tf.constant([[1.0, 0, 0], [0, 1.0, 0]])
NAME = "Softmax" + "Cross" + "EntropyWithLogits"
ctx = context.context()
T = ("T", x.dtype.as_datatype_enum)


class Sneaky(str):  # a name whose hash and equality lie: the C code reads its characters
    __hash__ = object.__hash__
    def __eq__(self, other):
        return False


def in_graph(build):
    @tf.function
    def run():
        return build()
    return run()
"""
# (the call, reaching SoftmaxCrossEntropyWithLogits by a route)
OP_NAME_CALLS = [
    "pywrap_tfe.TFE_Py_FastPathExecute(ctx, NAME, None, x, y)",
    "pywrap_tfe.TFE_Py_FastPathExecute(ctx, Sneaky(NAME), None, x, y)",
    "_pywrap_tfe.TFE_Py_FastPathExecute(ctx, NAME.encode(), None, x, y)",
    "pywrap_tfe.TFE_Py_Execute(ctx._handle, None, NAME, [x, y], T, 2)",
    "execute.execute(NAME, 2, inputs=[x, y], attrs=T, ctx=ctx)",
    "execute.quick_execute(op_name=NAME.encode(), num_outputs=2, inputs=[x, y], attrs=T, ctx=ctx)",
    "execute.execute_with_callbacks(NAME, 2, [x, y], T, ctx)",
    "in_graph(lambda: op_def_library._apply_op_helper(NAME, features=x, labels=y)[3][0])",
    "in_graph(lambda: ops.get_default_graph().create_op(NAME, [x, y], [tf.float32, tf.float32]).outputs[0])",
    "in_graph(lambda: ops.get_default_graph()._create_op_internal(NAME, [x, y], [tf.float32, tf.float32]).outputs[0])",
]
# the same routes with an operator no lab refuses, and the lab's honest code, run after the refusals
HONEST = """\
print(float(tf.reduce_sum(pywrap_tfe.TFE_Py_FastPathExecute(ctx, "Softmax", None, x))))
print(float(tf.reduce_sum(execute.execute(b"Softmax", 1, inputs=[x], attrs=T, ctx=ctx)[0])))
print(float(tf.reduce_sum(in_graph(lambda: op_def_library._apply_op_helper("Softmax", logits=x)[3][0]))))
print(float(-tf.reduce_sum(y * tf.nn.log_softmax(x, axis=-1))))
with tf.GradientTape() as tape:
    tape.watch(x)
    loss = -tf.reduce_sum(y * tf.nn.log_softmax(x, axis=-1))
print(float(tf.reduce_sum(tape.gradient(loss, x))))
"""


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    return done.stdout + done.stderr[-3000:]


def test_the_probe_kernel_refuses_the_loss_op_by_name_on_every_route_and_runs_the_rest():
    pytest.importorskip("tensorflow")
    assert "SoftmaxCrossEntropyWithLogits" in TF_OPS_REFUSED
    code = f"{forbidden_prelude(W6, 'tf')}\n{SETUP}\n"
    for call in OP_NAME_CALLS:
        code += f"try:\n    {call}\n    print('RAN:', {call!r})\nexcept Exception as error:\n"
        code += "    print('refused:', 'not allowed in this lab' in str(error), type(error).__name__)\n"
    code += f"{HONEST}print('HONEST OK')\n"
    out = _run(code)
    assert out.count("refused: True") == len(OP_NAME_CALLS) and "RAN:" not in out and "HONEST OK" in out, out


def test_without_the_prelude_every_route_runs_the_loss_op():
    """The routes are real: without the prelude (and in week 3, which refuses no TensorFlow loss operator) each
    call above computes the loss."""
    pytest.importorskip("tensorflow")
    for prelude in ("", forbidden_prelude(W3, "tf")):
        code = f"{prelude}\n{SETUP}\n"
        for call in OP_NAME_CALLS:
            code += f"{call}\nprint('RAN')\n"
        out = _run(code)
        assert out.count("RAN") == len(OP_NAME_CALLS), out
