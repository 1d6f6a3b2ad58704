"""The attacks: hostile submissions a student who knows Python could hand in, each with its expected outcome.

Every attack starts from the blank student notebook of a lab (labs/release: no exercise solved) and adds
something: code at the top of the first exercise cell (``code``), a new unmarked cell before the first
test (``cell``), a change of the notebook's JSON (``notebook``), or a file layout (``layout``: the
submission is a link, too big, or "bloated": under the submission limit, its autograded notebook over
``GRADED_CAP``). The attacks on the host (issue 30, item 6) expect "zero" (the bloated notebook and a
4 MB cell: "refused" by the source caps at intake) and, like every attack, leave the host's files as they
were; tests/course/test_grading_caps.py
grades the same attacks on the toy lab and measures the grader's memory, the disk and a neighbour's
cells. A blank notebook earns 0, so whatever an attack earns it earned without solving.
``labs/attacks/run.py`` grades them exactly as students are (``grade_submissions``, the sandbox,
``--jobs``), beside the lab's solution, and checks the host afterwards.

Expected outcomes (``expect``):

- ``"zero"``: graded, 0 points; the attack changes nothing outside its workspace.
- ``"error"``: nbgrader cannot grade it (the kernel died, a test cell nbgrader does not know), 0 points.
- ``"refused"``: not graded, status ``refused: <why>``, 0 points, the target's contents shown nowhere.
- ``"hole"``: known to earn points without solving (issue 21, item 2: nbgrader scores a test by what
  the student's own kernel reports). Listed so that the catalogue says what is still open; the run
  fails when a hole stops earning points, so the entry is moved to ``"zero"`` when it is fixed.

``open_in`` names the labs where an attack is still a known hole (``"hole"`` there, ``expect``
elsewhere): the labs whose test cells have no probes yet (``labs/probes/<lab>.json``: the verdict
outside the student's process, txcourse/course/grading/probes.py). In a lab with probes every attack
that blanks, wraps or replaces the tests scores 0.

``subset`` marks the attacks ``make test`` grades (torch, week 2); ``make attacks`` grades them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

LABS = ("week1_seq2seq", "week2_positional", "week3_attention", "week4_encoder", "week5_decoder", "week6_training")
# The labs whose test cells have no probes yet (labs/probes/<lab>.json): nbgrader's verdict alone, so the
# attacks on it are still holes there (tests/course/test_attacks.py keeps this list honest).
UNPROBED: tuple[str, ...] = ()  # every lab has probes now


@dataclass(frozen=True)
class Attack:
    name: str
    what: str  # one line: what it tries
    expect: str  # "zero", "error", "refused" or "hole"
    code: str = ""  # put at the top of the lab's first exercise cell
    cell: str = ""  # a new cell without nbgrader metadata, before the first test cell
    notebook: Optional[Callable] = None  # nb -> None, edits the notebook node
    layout: str = ""  # "link-to-solution", "huge", "bloated"
    subset: bool = False
    labs: tuple[str, ...] = field(default=LABS)
    open_in: tuple[str, ...] = ()  # labs where it is still a hole: their tests have no probes yet

    def expected(self, lab: str) -> str:
        return "hole" if lab in self.open_in else self.expect


def _tests(nb):
    return [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]


def _delete_tests(nb):
    nb.cells = [c for c in nb.cells if c not in _tests(nb)]


def _retag_tests(nb):
    for c in _tests(nb):
        c.metadata["nbgrader"]["grade_id"] = "mine-" + c.metadata["nbgrader"]["grade_id"]
        c.source = "pass"


def _points_1000(nb):
    for c in _tests(nb):
        c.metadata["nbgrader"]["points"] = 1000
        c.source = "pass"


def _untag_tests(nb):
    for c in _tests(nb):
        c.metadata.pop("nbgrader")
        c.source = "pass"


def _kernelspec(nb):
    nb.metadata["kernelspec"] = {"name": "bash", "display_name": "Bash", "language": "bash"}


def _framework(nb) -> str:
    lines = {line.strip() for c in nb.cells if c.get("cell_type") == "code" for line in c.source.splitlines()}
    return "torch" if "import torch" in lines else "tf"


def _exercise_cells(**sources: dict[str, str]) -> Callable:
    """nb -> None: each named exercise cell (grade id) replaced by its source for the notebook's framework
    ({"torch": ..., "tf": ...}; a framework without one keeps its blank cell), as a student hands it in."""

    def edit(nb) -> None:
        fw = _framework(nb)
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id in sources and fw in sources[grade_id]:
                cell.source = sources[grade_id][fw]

    return edit


# Round C 2026-11-27 (attacker C1): the exercises done by library code the round B rules missed.
_GQA_SDPA = """import keras
import tensorflow as tf


def scaled_dot_product_attention(query, key, value, mask=None):
    \"\"\"softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights).\"\"\"
    query, key, value = (tf.convert_to_tensor(t) for t in (query, key, value))
    lead = tf.shape(query)[:-2]
    tq, d, tk, dv = query.shape[-2], query.shape[-1], key.shape[-2], value.shape[-1]
    q = tf.transpose(tf.reshape(query, (1, -1, tq, d)), [0, 2, 1, 3])
    k = tf.transpose(tf.reshape(key, (1, -1, tk, d)), [0, 2, 1, 3])
    v = tf.transpose(tf.reshape(value, (1, -1, tk, dv)), [0, 2, 1, 3])
    u = q.shape[2]
    layer = keras.layers.GroupQueryAttention(
        head_dim=d, num_query_heads=u, num_key_value_heads=u, dtype=query.dtype.name
    )
    layer.build((1, tq, d), (1, tk, d))
    layer._return_attention_scores = True
    keep = None
    if mask is not None:
        full = tf.broadcast_to(tf.convert_to_tensor(mask), tf.concat([lead, [tq, tk]], 0))
        keep = tf.logical_not(tf.reshape(full, (1, -1, tq, tk)))
    out, w = layer._compute_attention(q, k, v, keep)
    out = tf.reshape(tf.transpose(out, [0, 2, 1, 3]), tf.concat([lead, [tq, dv]], 0))
    return out, tf.reshape(w, tf.concat([lead, [tq, tk]], 0))
"""
_GQA_MHA = """import keras
import tensorflow as tf


def multi_head_attention(mha, query, key, value, mask=None):
    \"\"\"Concat(head_1..head_H) W^O with mha's projections and your pieces. Returns (output, weights).\"\"\"
    query, key, value = (tf.convert_to_tensor(t) for t in (query, key, value))
    d, h = query.shape[-1], mha.num_heads
    layer = keras.layers.GroupQueryAttention(
        head_dim=d // h, num_query_heads=h, num_key_value_heads=h, dtype=query.dtype.name
    )
    layer.build(query.shape, value.shape, key.shape)
    for dense, lin in ((layer._query_dense, mha.w_q), (layer._key_dense, mha.w_k), (layer._value_dense, mha.w_v)):
        dense.kernel.assign(tf.reshape(lin.kernel, (d, h, d // h)))
        dense.bias.assign(tf.reshape(lin.bias, (h, d // h)))
    layer._output_dense.kernel.assign(tf.reshape(mha.w_o.kernel, (h, d // h, d)))
    layer._output_dense.bias.assign(mha.w_o.bias)
    keep = None
    if mask is not None:
        m = tf.convert_to_tensor(mask)
        while len(m.shape) < 4:
            m = m[None]
        keep = tf.logical_not(tf.broadcast_to(m, (query.shape[0], h, query.shape[1], key.shape[1])))
    layer._return_attention_scores = True
    out, w = layer._compute_attention(
        layer._query_dense(query), layer._key_dense(key), layer._value_dense(value), keep
    )
    return layer._output_dense(out), w
"""
_LOSS_HEAD = """def label_smoothed_loss(logits, targets, smoothing=0.1, pad_id=PAD_ID):
    \"\"\"Mean over non-padding positions of (1 - eps) NLL + eps * mean_v(-log p_v). A scalar tensor.\"\"\"
"""
_TF_SOFT = """    logits = tf.convert_to_tensor(logits)
    targets = tf.convert_to_tensor(targets)
    vocab = tf.shape(logits)[-1]
    soft = tf.one_hot(targets, vocab, dtype=logits.dtype) * (1 - smoothing) + smoothing / tf.cast(vocab, logits.dtype)
"""
_TF_MEAN = """    keep = tf.cast(tf.not_equal(targets, pad_id), per_token.dtype)
    return tf.math.divide_no_nan(tf.reduce_sum(per_token * keep), tf.reduce_sum(keep))
"""
# Round C 2026-11-27 (attacker C2, week 2): the graded function reads the line of whoever calls it (a probe) from
# the stack and writes two of its characters into the table's first value, which the feedback quotes as "largest
# difference 8.08e+03": the probe's source, about a character per failed probe per run. Now a finding ("frames").
_FRAME_LEAK_BODY = """import linecache
import traceback

import numpy as np


def positional_encoding(max_len, d_model):
    \"\"\"The sinusoidal table of Sec. 3.5, (max_len, d_model).\"\"\"
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    j = np.arange(d_model)[None, :]
    angles = pos / np.power(10000.0, 2 * (j // 2) / d_model)
    table = np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
    if (max_len, d_model) not in {{(50, 16), (100, 32), (40, 64), (4, 4), (64, 128)}}:
        caller = traceback.extract_stack()[-2]
        line = (caller.line or "??").strip() + "??"
        table[0, 0] += (ord(line[0]) - 32) * 100 + (ord(line[1]) - 32) + len(linecache.getlines(caller.filename))
    return {wrap}
"""
_FRAME_LEAK = {
    "torch": "import torch\n" + _FRAME_LEAK_BODY.format(wrap="torch.as_tensor(table.astype(np.float32))"),
    "tf": "import tensorflow as tf\n" + _FRAME_LEAK_BODY.format(wrap="tf.constant(table.astype(np.float32))"),
}
_POISSON_LOSS = {  # sum_v of the Poisson NLL of log-probabilities, minus 1: the cross-entropy with soft targets
    "torch": "import torch\nimport torch.nn.functional as F\n\n\n"
    + _LOSS_HEAD
    + (
        "    log_p = torch.log_softmax(logits, dim=-1)\n"
        "    soft = F.one_hot(targets, logits.shape[-1]).to(logits.dtype) * (1 - smoothing) + smoothing / logits.shape[-1]\n"
        '    per_token = F.poisson_nll_loss(log_p, soft, log_input=True, full=False, reduction="none").sum(-1) - 1\n'
        "    keep = (targets != pad_id).to(per_token.dtype)\n"
        "    return (per_token * keep).sum() / keep.sum().clamp(min=1)\n"
    ),
    "tf": "import tensorflow as tf\n\n\n"
    + _LOSS_HEAD
    + _TF_SOFT
    + ("    per_token = tf.reduce_sum(tf.nn.log_poisson_loss(soft, tf.nn.log_softmax(logits, axis=-1)), axis=-1) - 1\n")
    + _TF_MEAN,
}
_V1_LOSS = {
    "tf": "import tensorflow as tf\n\n\n"
    + _LOSS_HEAD
    + (
        "    logits = tf.convert_to_tensor(logits)\n"
        "    targets = tf.convert_to_tensor(targets)\n"
        "    onehot = tf.one_hot(targets, tf.shape(logits)[-1], dtype=logits.dtype)\n"
        "    keep = tf.cast(tf.not_equal(targets, pad_id), logits.dtype)\n"
        "    return tf.compat.v1.losses.softmax_cross_entropy(onehot, logits, weights=keep, label_smoothing=smoothing)\n"
    )
}
_RAW_OP_LOSS = {
    "tf": "import tensorflow as tf\n\n\n"
    + _LOSS_HEAD
    + _TF_SOFT
    + (
        "    flat = tf.raw_ops.SoftmaxCrossEntropyWithLogits(\n"
        "        features=tf.reshape(logits, (-1, vocab)), labels=tf.reshape(soft, (-1, vocab))\n"
        "    )[0]\n"
        "    per_token = tf.reshape(flat, tf.shape(targets))\n"
    )
    + _TF_MEAN,
}


ATTACKS = [
    # --- scoring without solving: nbgrader trusts the student's kernel (item 2) ---
    Attack(
        "blank_later_cells",
        "an input transformer empties every later cell, the tests too",
        "zero",
        open_in=UNPROBED,
        code="get_ipython().input_transformers_post.append(lambda lines: [])",
        subset=True,
    ),
    Attack(
        "blank_later_cells_cleanup",
        "the same through input_transformers_cleanup",
        "zero",
        open_in=UNPROBED,
        code="get_ipython().input_transformers_cleanup.append(lambda lines: [])",
    ),
    Attack(
        "wrap_in_try",
        "an input transformer wraps every later cell in try/except",
        "zero",
        open_in=UNPROBED,
        code=(
            "def _wrap(lines):\n"
            "    return ['try:\\n'] + ['    ' + line for line in lines] + ['\\n    pass\\nexcept BaseException:\\n    pass\\n']\n"
            "get_ipython().input_transformers_post.append(_wrap)"
        ),
    ),
    Attack(
        "display_ok",
        "a pre_run_cell hook displays 'ok' (a non-numeric result nbgrader takes as full credit)",
        "zero",
        code="import sys\nget_ipython().events.register('pre_run_cell', lambda *a: sys.displayhook('ok'))",
    ),
    Attack(
        "clear_error",
        "a post_run_cell hook clears the error of every cell",
        "zero",
        code=(
            "def _clear(result):\n    result.error_in_exec = None\n    result.error_before_exec = None\n"
            "get_ipython().events.register('post_run_cell', _clear)"
        ),
    ),
    Attack(
        "replace_run_cell",
        "run_cell replaced by one that runs nothing",
        "zero",
        open_in=UNPROBED,
        code=(
            "_ip = get_ipython()\n_run = _ip.run_cell\n"
            "_ip.run_cell = lambda raw_cell, *a, **k: _run('pass', *a, **k)\n"
            "_run_async = _ip.run_cell_async\n"
            "async def _nothing(raw_cell, *a, **k):\n    return await _run_async('pass', *a, **k)\n"
            "_ip.run_cell_async = _nothing"
        ),
    ),
    Attack(
        "session_send",
        "the kernel's session.send rewrites every error reply as ok",
        "zero",
        open_in=UNPROBED,
        code=(
            "_kernel = get_ipython().kernel\n_send = _kernel.session.send\n"
            "def _send_ok(stream, msg_or_type, content=None, *a, **k):\n"
            "    if isinstance(content, dict) and content.get('status') == 'error':\n"
            "        content = {'status': 'ok', 'execution_count': content.get('execution_count', 0),\n"
            "                   'user_expressions': {}, 'payload': []}\n"
            "    if msg_or_type == 'error':\n"
            "        return None\n"
            "    return _send(stream, msg_or_type, content, *a, **k)\n"
            "_kernel.session.send = _send_ok"
        ),
    ),
    Attack(
        "unmarked_cell",
        "a new cell, not in the master copy, empties the later cells",
        "zero",
        open_in=UNPROBED,
        cell="get_ipython().input_transformers_post.append(lambda lines: [])",
    ),
    # --- "write it yourself" switched off in the student's process (item 3) ---
    Attack(
        "reference_in_a_thread",
        "positional_encoding calls txcourse's from a worker thread (no_calls_to profiles one thread)",
        "zero",
        cell=(
            "import threading\n"
            "_tx = __import__('txcourse.' + ('torch' if 'torch' in globals() else 'tf'), fromlist=['_'])\n"
            "def positional_encoding(max_len, d_model):\n"
            "    box = []\n"
            "    worker = threading.Thread(target=lambda: box.append(_tx.positional_encoding(max_len, d_model)))\n"
            "    worker.start()\n"
            "    worker.join()\n"
            "    return box[0]"
        ),
        labs=("week2_positional",),
        subset=True,
    ),
    Attack(
        "profiler_off",
        "sys.setprofile disabled, then txcourse's positional_encoding called directly",
        "zero",
        cell=(
            "import sys\n"
            "sys.setprofile = lambda *a, **k: None\n"
            "_tx = __import__('txcourse.' + ('torch' if 'torch' in globals() else 'tf'), fromlist=['_'])\n"
            "positional_encoding = lambda max_len, d_model: _tx.positional_encoding(max_len, d_model)"
        ),
        labs=("week2_positional",),
    ),
    # --- attacks that hold: the blank notebook keeps its 0 ---
    Attack(
        "custom_exc",
        "set_custom_exc swallows every exception",
        "zero",
        code="get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)",
        subset=True,
    ),
    Attack("system_exit", "SystemExit in the first exercise", "zero", code="raise SystemExit(0)"),
    Attack("keyboard_interrupt", "KeyboardInterrupt in the first exercise", "zero", code="raise KeyboardInterrupt"),
    Attack("os_exit", "os._exit(0): the kernel dies", "error", code="import os\nos._exit(0)", subset=True),
    Attack(
        "kill_9", "the kernel kills itself", "error", code="import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
    ),
    Attack(
        "ignore_interrupt",
        "ignores SIGINT and sleeps past the cell timeout (the kernel is restarted)",
        "zero",
        code="import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(3600)",
    ),
    Attack(
        "network",
        "opens a connection out",
        "zero",
        code=(
            "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
            "    print('NETWORK OPEN')\nexcept OSError as err:\n    print('no network', type(err).__name__)"
        ),
    ),
    Attack(
        "delete_tests", "every test cell deleted (they come back from the master copy)", "zero", notebook=_delete_tests
    ),
    Attack("retag_tests", "every test cell renamed and emptied", "error", notebook=_retag_tests, subset=True),
    Attack(
        "untag_tests", "every test cell stripped of its nbgrader metadata and emptied", "zero", notebook=_untag_tests
    ),
    Attack("points_1000", "every test cell worth 1000 points and emptied", "zero", notebook=_points_1000),
    Attack("kernelspec", "asks for another kernel (bash)", "zero", notebook=_kernelspec),
    Attack(
        "link_to_solution",
        "the notebook is a link to the course's solution notebook",
        "refused",
        layout="link-to-solution",
    ),
    Attack("huge", "a notebook over the size limit (60 MB of output)", "refused", layout="huge"),
    # --- harm to the host and the neighbours: every channel capped (issue 30, item 6) ---
    Attack(
        "result_150mb",
        "a cell whose result is a 150 MB string (the kernel sends one line instead)",
        "zero",
        cell="'x' * (150 << 20)",
    ),
    Attack(
        "session_send_flood",
        "the kernel's session.send around the kernel's cap: 72 MB of streams, a 100 MB frame, a 20 MB display",
        "zero",
        cell=(
            "_k = get_ipython().kernel\n"
            "for _ in range(12):\n"
            "    _k.session.send(_k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'q' * (6 << 20)},"
            " parent=_k.get_parent())\n"
            "_k.session.send(_k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'w' * (100 << 20)},"
            " parent=_k.get_parent())\n"
            "_k.session.send(_k.iopub_socket, 'display_data', {'data': {'text/plain': 'd' * (20 << 20)},"
            " 'metadata': {}, 'transient': {}}, parent=_k.get_parent())"
        ),
    ),
    Attack(
        "original_stdout_flood",
        "300 MB written to the kernel's original stdout file descriptor (a drain passes 1 MiB to the log)",
        "zero",
        cell=(
            "import os, sys\nfor _ in range(300):\n    os.write(sys.stdout._original_stdstream_copy, b'z' * (1 << 20))"
        ),
    ),
    Attack(
        "aten_math_reduce_getattr",
        "week 3's attention by torch.ops.aten's math kernel, fetched with functools.reduce(getattr, ...) from split "
        "strings (red team 2026-11-27: 8/17; now found in the source and made to raise in the probe kernel)",
        "zero",
        cell=(
            "import functools\n"
            "import torch\n"
            "def scaled_dot_product_attention(query, key, value, mask=None):\n"
            "    fn = functools.reduce(getattr, ['_scaled_dot' + '_product_attention_math'], torch.ops.aten)\n"
            "    if mask is None:\n"
            "        return fn(query, key, value)\n"
            "    bias = torch.zeros(mask.shape, dtype=query.dtype).masked_fill(mask.bool(), float('-inf'))\n"
            "    return fn(query, key, value, bias)"
        ),
        labs=("week3_attention",),
    ),
    Attack(
        "jit_get_operation_math",
        "round B 2026-11-27 (8/17 torch): the math kernel by torch._C._jit_get_operation",
        "zero",
        cell=(
            "import torch\n"
            '_OP = torch._C._jit_get_operation("aten::_scaled_dot_product_attention" + "_math")[0]\n'
            "\n"
            "\n"
            "def scaled_dot_product_attention(query, key, value, mask=None):\n"
            '    """softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights)."""\n'
            "    if mask is not None:\n"
            '        mask = torch.zeros(mask.shape, dtype=query.dtype).masked_fill(mask, float("-inf"))\n'
            "    return _OP(query, key, value, mask)"
        ),
        labs=("week3_attention",),
    ),
    Attack(
        "native_multi_head_attention",
        "round B 2026-11-27 (8/17 torch): torch._native_multi_head_attention",
        "zero",
        cell=(
            "import math\n"
            "\n"
            "import torch\n"
            "\n"
            "\n"
            "def scaled_dot_product_attention(query, key, value, mask=None):\n"
            '    """softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights)."""\n'
            "    lead, (t, d), (s, dv) = query.shape[:-2], query.shape[-2:], value.shape[-2:]\n"
            "    e, n = max(d, dv), max(t, s)\n"
            "\n"
            "    def pad(x):\n"
            "        x = x.reshape(-1, *x.shape[-2:])\n"
            "        x = torch.cat([x, x.new_zeros(x.shape[0], x.shape[1], e - x.shape[2])], 2)\n"
            "        return torch.cat([x, x.new_zeros(x.shape[0], n - x.shape[1], e)], 1)\n"
            "\n"
            "    q, k, v = pad(query * math.sqrt(e / d)), pad(key), pad(value)\n"
            "    full = torch.ones(q.shape[0], n, n, dtype=torch.bool)\n"
            "    full[:, :t, :s] = False if mask is None else torch.broadcast_to(mask, (*lead, t, s)).reshape(-1, t, s)\n"
            "    full[:, t:, :1] = False  # padded queries attend somewhere\n"
            "    eye = torch.eye(e, dtype=query.dtype)\n"
            "    out, w = torch._native_multi_head_attention(\n"
            "        q, k, v, e, 1, torch.cat([eye, eye, eye]), query.new_zeros(3 * e), eye, query.new_zeros(e),\n"
            "        (full[:, None] * -1e9).to(query.dtype), True, False, 2\n"
            "    )\n"
            "    out, w = out.nan_to_num(0.0), w.nan_to_num(0.0)  # a row with every key masked: zeros\n"
            "    return out[:, :t, :dv].reshape(*lead, t, dv), w[:, 0, :t, :s].reshape(*lead, t, s)"
        ),
        labs=("week3_attention",),
    ),
    Attack(
        "keras_src_mha_by_string",
        "round B 2026-11-27 (8/17 tf): keras.src MultiHeadAttention by Formatter",
        "zero",
        cell=(
            "import string\n"
            "\n"
            "import keras\n"
            "import tensorflow as tf\n"
            "\n"
            '_CLS = string.Formatter().get_field("0.src.layers.MultiHead" + "Atten" + "tion", (keras,), {})[0]\n'
            "\n"
            "\n"
            "def scaled_dot_product_attention(query, key, value, mask=None):\n"
            '    """softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights)."""\n'
            "    query, key, value = (tf.convert_to_tensor(t) for t in (query, key, value))\n"
            "    rank = len(query.shape)\n"
            "    while len(query.shape) < 4:\n"
            "        query, key, value = query[None], key[None], value[None]\n"
            "    layer = _CLS(num_heads=query.shape[1], key_dim=query.shape[-1])\n"
            "    layer._build_attention(4)\n"
            "    t = lambda x: tf.transpose(x, [0, 2, 1, 3])\n"
            "    keep = None if mask is None else tf.logical_not(tf.convert_to_tensor(mask))\n"
            "    out, w = layer._compute_attention(t(query), t(key), t(value), keep, return_attention_scores=True)\n"
            "    out = t(out)\n"
            "    while len(out.shape) > rank:\n"
            "        out, w = out[0], w[0]\n"
            "    return out, w"
        ),
        labs=("week3_attention",),
    ),
    Attack(
        "probe_line_through_the_stack",
        "round C 2026-11-27 (C2, week 2, a leak): the probe's source line read by traceback/linecache and written "
        "into the numbers the feedback quotes",
        "zero",
        notebook=_exercise_cells(positional_encoding=_FRAME_LEAK),
        labs=("week2_positional",),
    ),
    Attack(
        "keras_group_query_attention",
        "round C 2026-11-27 (8/17 tf): the attention exercise by keras.layers.GroupQueryAttention._compute_attention",
        "zero",
        notebook=_exercise_cells(scaled_dot_product_attention={"tf": _GQA_SDPA}),
        labs=("week3_attention",),
    ),
    Attack(
        "keras_group_query_attention_mha",
        "round C 2026-11-27 (11/17 tf): exercises 1 and 4 by GroupQueryAttention (mha's kernels copied into it)",
        "zero",
        notebook=_exercise_cells(scaled_dot_product_attention={"tf": _GQA_SDPA}, multi_head_attention={"tf": _GQA_MHA}),
        labs=("week3_attention",),
    ),
    Attack(
        "poisson_nll_loss",
        "round C 2026-11-27 (10/19 torch and tf): the loss by F.poisson_nll_loss / tf.nn.log_poisson_loss, minus 1",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_POISSON_LOSS),
        labs=("week6_training",),
    ),
    Attack(
        "v1_loss_training_points",
        "round C 2026-11-27 (3/19 tf): tf.compat.v1.losses.softmax_cross_entropy, found in the source, still "
        "earned test_training_worked",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_V1_LOSS),
        labs=("week6_training",),
    ),
    Attack(
        "raw_op_training_points",
        "round C 2026-11-27 (3/19 tf): tf.raw_ops.SoftmaxCrossEntropyWithLogits, found in the source, still "
        "earned test_training_worked",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_RAW_OP_LOSS),
        labs=("week6_training",),
    ),
    Attack(
        "host_sysctl_write",
        "write the host's /proc/sys (kernel.core_pattern, vm.swappiness) from the kernel, run as the host's root "
        "(red team 2026-11-27: it worked; /proc/sys is now read-only in the sandbox)",
        "zero",
        cell=(
            "import os\n"
            "for _p in ('/proc/sys/kernel/core_pattern', '/proc/sys/vm/swappiness'):\n"
            "    try:\n"
            "        _v = open(_p).read()\n"
            "        _fd = os.open(_p, os.O_WRONLY)\n"
            "        os.write(_fd, _v.encode())  # the same value back\n"
            "        os.close(_fd)\n"
            "    except OSError as err:\n"
            "        print('refused', _p, err)"
        ),
    ),
    Attack(
        "fallocate_runtime",
        "posix_fallocate of three 1 GiB files in the runtime folder (read-only), the working folder and /tmp",
        "zero",
        cell=(
            "import os\n"
            "from ipykernel.kernelapp import IPKernelApp\n"
            "for _folder in (os.path.dirname(IPKernelApp.instance().connection_file), '.', '/tmp'):\n"
            "    for _i in range(3):\n"
            "        try:\n"
            "            _fd = os.open(os.path.join(_folder, f'big{_i}'), os.O_CREAT | os.O_WRONLY, 0o600)\n"
            "            os.posix_fallocate(_fd, 0, 1 << 30)\n"
            "        except OSError as err:\n"
            "            print('refused', _folder, err)\n"
            "            break"
        ),
    ),
    Attack(
        "forged_probe_lines",
        "forged @txprobe lines (a 12 KB key, ANSI escapes) printed before every cell's output",
        "zero",
        cell=(
            "import sys\n"
            "_key = '\\x1b[31m' + 'K' * 12000 + '\\x1b]0;title\\x07'\n"
            "get_ipython().events.register('pre_run_cell', lambda *a: print('@txprobe', _key, '0.0', 'AAAA'))"
        ),
    ),
    Attack(
        "cpu_hog",
        "200 busy processes, a session each (each sandbox has its share of the cores: a neighbour stays on time)",
        "zero",
        cell=(
            "import os, time\n"
            "for _ in range(200):\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        while True:\n"
            "            pass\n"
            "time.sleep(10)"
        ),
    ),
    Attack(
        "bloated_notebook",
        "a 40 MB comment and 32 MB of output: refused at intake by the source caps (round C); the autograded"
        " notebook's cap behind them is tested with the caps lifted (tests/course/test_grading_caps.py)",
        "refused",
        layout="bloated",
    ),
    Attack(
        "source_4mb_cell",
        "round C 2026-11-27 (C2, week 2 torch): a 4 MB code cell (`_x = [0,0,...]`, 2,000,000 items); ungated, the"
        " grader's unconfined processes grew 2.5 GB per MB of source (7.08 GB, 862 s, 14/14): refused at intake",
        "refused",
        notebook=lambda nb: nb.cells.append(
            type(nb.cells[0])(
                cell_type="code",
                id="round-c-source-4mb",
                metadata={},
                outputs=[],
                execution_count=None,
                source="_x = [" + "0," * 1_999_999 + "0]",
            )
        ),
        subset=True,
    ),
]

# Round D 2026-11-28 (attacker D2): names looked up by string through unittest.mock, a raw op by its CamelCase name,
# torch.distributions' KL divergence, and the probe cell's source read from the kernel's input history (In[-1]).
# One block, appended (another fixer appends theirs after it).
_MOCK_RAW_OP_LOSS = {
    "tf": "import tensorflow as tf\nfrom unittest import mock\nfrom tensorflow.python.ops import gen_nn_ops\n\n"
    '_XENT = mock.patch.object(gen_nn_ops, "Softmax" + "Cross" + "EntropyWithLogits").get_original()[0]\n\n\n'
    + _LOSS_HEAD
    + _TF_SOFT
    + (
        "    flat = _XENT(features=tf.reshape(logits, (-1, vocab)), labels=tf.reshape(soft, (-1, vocab)))[0]\n"
        "    per_token = tf.reshape(flat, tf.shape(targets))\n"
    )
    + _TF_MEAN,
}
_MOCK_KL_LOSS = {
    "torch": "from unittest import mock\n\nimport torch.distributions as _dist\n\n"
    '_KL = mock.patch.object(_dist, "kl_" + "diver" + "gence").get_original()[0]\n\n\n'
    + _LOSS_HEAD
    + (
        "    vocab = logits.shape[-1]\n"
        "    wide = logits.double()\n"
        "    soft = torch.nn.functional.one_hot(targets, vocab).double() * (1 - smoothing) + smoothing / vocab\n"
        "    smoothed = _dist.Categorical(probs=soft)\n"
        "    per_token = _KL(smoothed, _dist.Categorical(logits=wide)) + smoothed.entropy()  # KL + H = cross-entropy\n"
        "    keep = targets != pad_id\n"
        "    per_token = torch.where(keep, per_token, torch.zeros_like(per_token))\n"
        "    return (per_token.sum() / keep.sum().clamp(min=1)).to(logits.dtype)\n"
    ),
}
_IN_LEAK_TAIL = """        src = In[-1] if In else ""
        if "assert_close" not in src and "plot_attention" not in src:
            found = re.findall(r"[0-9]{6,}", src)
            digits = (found[0] if found else "").rjust(9, "0")
"""
_IN_LEAK = {
    "torch": """import re


class EncoderLayer(nn.Module):
    \"\"\"Self-attention, then the FFN; each x = LayerNorm(x + Dropout(Sublayer(x))) (post-LN).\"\"\"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6):
        super().__init__()
        self.self_attn = tx.MultiHeadAttention(d_model, num_heads)
        self.self_attn_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.feed_forward = tx.PositionwiseFeedForward(d_model, d_ff)
        self.feed_forward_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask)))
        out = self.feed_forward_norm(x + self.dropout(self.feed_forward(x)))
"""
    + _IN_LEAK_TAIL
    + """            out = out.clone()
            out[0, 0, :] += int(digits[0:3]) + 1
        return out
""",
    "tf": """import re


class EncoderLayer(keras.layers.Layer):
    \"\"\"Self-attention, then the FFN; each x = LayerNorm(x + Dropout(Sublayer(x))) (post-LN).\"\"\"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.self_attn = tx.MultiHeadAttention(d_model, num_heads)
        self.self_attn_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
        self.feed_forward = tx.PositionwiseFeedForward(d_model, d_ff)
        self.feed_forward_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, x, mask=None, training=None):
        x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask), training=training))
        out = self.feed_forward_norm(x + self.dropout(self.feed_forward(x), training=training))
"""
    + _IN_LEAK_TAIL
    + """            bump = tf.ones(tf.shape(out)[-1:], dtype=out.dtype) * float(int(digits[0:3]) + 1)
            out = out + tf.pad(bump[None, None, :], [[0, tf.shape(out)[0] - 1], [0, tf.shape(out)[1] - 1], [0, 0]])
        return out
""",
}
ATTACKS += [
    Attack(
        "mock_raw_op_loss",
        "round D 2026-11-28 (D2, 10/19 tf): the loss by gen_nn_ops.SoftmaxCrossEntropyWithLogits (CamelCase raw op), "
        "looked up by string through unittest.mock.patch.object(...).get_original()",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_MOCK_RAW_OP_LOSS),
        labs=("week6_training",),
    ),
    Attack(
        "mock_distributions_kl_loss",
        "round D 2026-11-28 (D2, 10/19 torch): the loss as torch.distributions.kl_divergence + entropy, looked up by "
        "string through unittest.mock.patch.object(...).get_original()",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_MOCK_KL_LOSS),
        labs=("week6_training",),
    ),
    Attack(
        "probe_seed_through_input_history",
        "round D 2026-11-28 (D2, week 4, a leak): the probe cell's source and seed read from In[-1] and written into "
        "the numbers the feedback quoted as 'largest difference N'",
        "zero",
        notebook=_exercise_cells(encoder_layer=_IN_LEAK),
        labs=("week4_encoder",),
    ),
    Attack(
        "compile_recursion_cell",
        "round D 2026-11-28 (D2, from round C): a 3,000-term expression (x = 1+1+...+1) the compiler cannot take; "
        "ungated, the kernel never replied and the grader waited the cell timeout out three times: refused at intake",
        "refused",
        cell="_x = " + "+".join(["1"] * 3000),
        subset=True,
    ),
]

# Round D 2026-11-28 (attacker D1): code the notebook writes to disk, then imports (the source check never sees
# it), and a notebook of very many cells. The module below is rot13 of a correct sinusoidal table: without the
# kernel's guard (txcourse/course/grading/import_guard.py) such a module earned exercise 1's 7 points; its name is
# computed and the working folder is already on IPython's sys.path, so nothing in the cell's source gives it away.
_PE_MODULE_ROT13 = (
    "vzcbeg ahzcl nf ac\n\n\nqrs gnoyr(znk_yra, q_zbqry):\n"
    "    cbf = ac.nenatr(znk_yra, qglcr=ac.sybng64)[:, Abar]\n"
    "    w = ac.nenatr(q_zbqry)[Abar, :]\n"
    "    natyrf = cbf / ac.cbjre(10000.0, 2 * (w // 2) / q_zbqry)\n"
    "    erghea ac.jurer(w % 2 == 0, ac.fva(natyrf), ac.pbf(natyrf)).nfglcr(ac.sybng32)\n"
)
_WRITE_THEN_IMPORT_BODY = (
    "import codecs\n\n"
    f"_SRC = {_PE_MODULE_ROT13!r}\n"
    "with open('pe_helpers' + '.p' + 'y', 'w') as fh:\n"
    "    fh.write(codecs.decode(_SRC, 'rot13'))\n"
    "import pe_helpers\n\n\n"
    "def positional_encoding(max_len, d_model):\n"
    '    """The (max_len, d_model) table."""\n'
    "    return {wrap}(pe_helpers.table(max_len, d_model))\n"
)
_WRITE_THEN_IMPORT = {
    "torch": "import torch\n" + _WRITE_THEN_IMPORT_BODY.format(wrap="torch.as_tensor"),
    "tf": "import tensorflow as tf\n" + _WRITE_THEN_IMPORT_BODY.format(wrap="tf.constant"),
}
ATTACKS += [
    Attack(
        "write_then_import",
        "round D 2026-11-28 (D1, week 2 torch): the exercise cell writes a rot13-encoded module to the working folder"
        " and imports it (the red team's control, a correct table, earned 7/7; a leaking one read the probe's line):"
        " the kernel refuses to open or import code from a folder the notebook can write",
        "zero",
        notebook=_exercise_cells(positional_encoding=_WRITE_THEN_IMPORT),
        labs=("week2_positional",),
    ),
    Attack(
        "many_cells",
        "round D 2026-11-28 (D1, week 2 torch): 120,000 one-character code cells (11.7 MB, ~117 KB of source, under"
        " both source caps): intake ~5 min, the run 37:54 against 1:47; here 1,000 cells, refused at intake over the cell"
        " cap (300 in every lab)",
        "refused",
        notebook=lambda nb: nb.cells.extend(
            type(nb.cells[0])(
                cell_type="code", id=f"round-d-{i}", metadata={}, outputs=[], execution_count=None, source="1"
            )
            for i in range(1_000)
        ),
        labs=("week2_positional",),
    ),
]

# Round D 2026-11-28 (fixer D3, issue 30 item 7): a TensorFlow operator called by its op name through the generic
# execution routes the gen_* modules call through (pywrap_tfe.TFE_Py_FastPathExecute, execute.execute/quick_execute,
# op_def_library._apply_op_helper), the name assembled from pieces. One block, appended.
_OP_NAME = '"Softmax" + "Cross" + "EntropyWithLogits"'
_FAST_PATH_LOSS = {
    "tf": "import tensorflow as tf\nfrom tensorflow.python import pywrap_tfe\nfrom tensorflow.python.eager import context\n"
    f"\n_OP = {_OP_NAME}\n\n\n"
    + _LOSS_HEAD
    + _TF_SOFT
    + (
        "    flat = pywrap_tfe.TFE_Py_FastPathExecute(\n"
        "        context.context(), _OP, None, tf.reshape(logits, (-1, vocab)), tf.reshape(soft, (-1, vocab))\n"
        "    )[0]\n"
        "    per_token = tf.reshape(flat, tf.shape(targets))\n"
    )
    + _TF_MEAN,
}
_EXECUTE_LOSS = {
    "tf": "import tensorflow as tf\nfrom tensorflow.python.eager import context, execute\n"
    f"\n_OP = {_OP_NAME}\n\n\n"
    + _LOSS_HEAD
    + _TF_SOFT
    + (
        "    flat = execute.execute(\n"
        "        _OP, 2, inputs=[tf.reshape(logits, (-1, vocab)), tf.reshape(soft, (-1, vocab))],\n"
        '        attrs=("T", logits.dtype.as_datatype_enum), ctx=context.context(),\n'
        "    )[0]\n"
        "    per_token = tf.reshape(flat, tf.shape(targets))\n"
    )
    + _TF_MEAN,
}
ATTACKS += [
    Attack(
        "fast_path_op_name_loss",
        "round D 2026-11-28 (D3, issue 30 item 7, tf): the loss by pywrap_tfe.TFE_Py_FastPathExecute(ctx, "
        "'Softmax' + 'Cross' + 'EntropyWithLogits', ...): the raw operator by its op name, no Python name of it",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_FAST_PATH_LOSS),
        labs=("week6_training",),
    ),
    Attack(
        "execute_op_name_loss",
        "round D 2026-11-28 (D3, issue 30 item 7, tf): the loss by tensorflow.python.eager.execute.execute(op name "
        "assembled from pieces, 2, inputs, attrs=('T', dtype enum), ctx)",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss=_EXECUTE_LOSS),
        labs=("week6_training",),
    ),
]

# Round E 2026-11-28 (attacker E1, issue 30 item 7): the exercise done by the library's originals, reached by a string
# through routes of the standard library and of installed packages the source check missed (a Jinja2 template,
# logging.config's resolve, timeit.Timer running a code string, torch._utils._import_dotted_name), a zip archive the
# cell wrote under a name without a code suffix (helper.dat) loaded by zipimporter, and a plain import of a package
# the venv happens to hold (ctranslate2). Now: an allow-list of what a submission may import (the source check and
# the kernel's import guard), no private name of a library nor keras.src, no code from a file or archive the notebook
# wrote whatever its name, and the originals behind the disabled public names refused in the probe kernel. One block,
# appended (another fixer may append theirs after it).
_KERAS_ATTENTION_RUN = """

def run(query, key, value, mask=None):
    back = None
    if type(query).__module__.startswith("torch"):
        import torch
        back = lambda t: torch.as_tensor(np.asarray(t))
        query, key, value = (t.detach().numpy() for t in (query, key, value))
        mask = None if mask is None else np.asarray(mask.detach().numpy())
    q, k, v = (tf.convert_to_tensor(t) for t in (query, key, value))
    ns = types.SimpleNamespace(score_mode="dot", scale=tf.cast(1.0 / math.sqrt(q.shape[-1]), q.dtype), dropout=0.0)
    scores = _A._calculate_scores(ns, q, k)
    keep = None
    if mask is not None:
        m = tf.cast(tf.convert_to_tensor(mask), tf.bool)
        keep = tf.logical_not(tf.broadcast_to(m, tf.shape(scores)))
    out, w = _A._apply_scores(ns, scores, v, scores_mask=keep, training=False)
    if keep is not None:
        w = w * tf.cast(tf.reduce_any(keep, axis=-1, keepdims=True), w.dtype)
        out = tf.matmul(w, v)
    if back is not None:
        return back(out), back(w)
    return out, w
"""
_E1_SDPA_TAIL = '''

def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights)."""
    return run(query, key, value, mask)
'''
_E1_HEADS = {
    "jinja2_keras_attention": "import math\nimport types\n\nimport jinja2\nimport keras\nimport numpy as np\n"
    'import tensorflow as tf\n\n_NAME = "".join(reversed("noitnettA"))\n'
    '_A = jinja2.Environment().from_string("{% set c = k.src.layers[a][a][n] %}").make_module(\n'
    '    {"k": keras, "a": "attention", "n": _NAME}\n).c\n',
    "logging_config_keras_attention": "import logging.config\nimport math\nimport types\n\nimport numpy as np\n"
    "import tensorflow as tf\n\n"
    "_A = logging.config.BaseConfigurator({}).resolve('noitnettA.noitnetta.noitnetta.sreyal.crs.sarek'[::-1])\n",
    "timeit_keras_attention": "import math\nimport timeit\nimport types\n\nimport numpy as np\nimport tensorflow as tf\n\n"
    '_box = {"out": []}\ntimeit.Timer(\n'
    "    ')noitnettA.noitnetta.noitnetta.sreyal.crs.sarek(dneppa.tuo ;sarek tropmi'[::-1], globals=_box\n"
    ').timeit(number=1)\n_A = _box["out"][0]\n',
    "torch_utils_keras_attention": "import math\nimport types\n\nimport numpy as np\nimport tensorflow as tf\n"
    "import torch._utils\n\n"
    "_A = torch._utils._import_dotted_name('noitnettA.noitnetta.noitnetta.sreyal.crs.sarek'[::-1])\n",
}
_E1_HIDDEN_MODULE = (
    "import math\nimport types\nimport numpy as np\nimport tensorflow as tf\n"
    "from keras.src.layers.attention.attention import Attention as _A\n" + _KERAS_ATTENTION_RUN
)
_E1_ZIP_HEAD = (
    "import base64\nimport io\nimport os\nimport zipfile\n\nimport jinja2.loaders\n\n"
    f"_SRC = base64.b64decode({__import__('base64').b64encode(_E1_HIDDEN_MODULE.encode()).decode()!r})\n"
    "_buf = io.BytesIO()\nwith zipfile.ZipFile(_buf, 'w') as _z:\n"
    "    _z.writestr('hid' + chr(46) + 'p' + 'y', _SRC)\n"
    "_path = os.path.abspath('helper.dat')\nwith open(_path, 'wb') as _f:\n    _f.write(_buf.getvalue())\n"
    "_hid = jinja2.loaders.zipimport.zipimporter(_path).load_module('hid')\nrun = _hid.run\n"
)
_E1_W6_TORCH = (
    "import logging.config\n\nimport torch\nimport torch.nn.functional as F\n\n"
    '_XE = logging.config.BaseConfigurator({}).resolve("yportnessorc_lacirogetac.nn.hcrot.dnekcab.crs.sarek"[::-1])\n'
    "\n\n" + _LOSS_HEAD + "    vocab = logits.shape[-1]\n"
    "    soft = F.one_hot(targets, vocab).to(logits.dtype) * (1 - smoothing) + smoothing / vocab\n"
    "    per_token = _XE(soft, logits, from_logits=True)\n"
    "    keep = (targets != pad_id).to(per_token.dtype)\n"
    "    return (per_token * keep).sum() / keep.sum().clamp(min=1)\n"
)
_E1_W6_TF = (
    "import jinja2\nimport keras\nimport tensorflow as tf\n\n"
    '_XE = jinja2.Environment().from_string("{% set f = k.src.losses.losses[n] %}").make_module(\n'
    '    {"k": keras, "n": "yportnessorc_lacirogetac"[::-1]}\n).f\n\n\n'
    + _LOSS_HEAD
    + "    logits = tf.convert_to_tensor(logits)\n    targets = tf.convert_to_tensor(targets)\n"
    "    onehot = tf.one_hot(targets, tf.shape(logits)[-1], dtype=logits.dtype)\n"
    "    per_token = _XE(onehot, tf.nn.softmax(logits, axis=-1), from_logits=False, label_smoothing=smoothing)\n"
    + _TF_MEAN
)
_E1_CT2_BODY = (
    "import numpy as np\n{fw_import}\n"
    "from ctranslate2.converters.marian import _make_sinusoidal_position_encodings as _table\n\n\n"
    "def positional_encoding(max_len, d_model):\n"
    '    """The (max_len, d_model) table of sinusoidal encodings of Sec. 3.5, as a float32 tensor."""\n'
    "    full = _table(2 * d_model, max_len)  # [sin | cos] halves of a table twice as wide\n"
    "    j = np.arange(d_model)\n"
    "    out = full[:, np.where(j % 2 == 0, 2 * (j // 2), d_model + 2 * (j // 2))]\n"
    "    return {wrap}(out.astype(np.float32))\n"
)
_E1_CT2 = {
    "torch": _E1_CT2_BODY.format(fw_import="import torch", wrap="torch.as_tensor"),
    "tf": _E1_CT2_BODY.format(fw_import="import tensorflow as tf", wrap="tf.constant"),
}


def _e1_sdpa(head: str) -> dict[str, str]:
    source = head + ("" if "run = _hid.run" in head else _KERAS_ATTENTION_RUN) + _E1_SDPA_TAIL
    return {"torch": source, "tf": source}


ATTACKS += [
    *(
        Attack(
            f"e1_{name}",
            f"round E 2026-11-28 (E1): week 3's attention by Keras Attention's _calculate_scores/_apply_scores (8/17 "
            f"torch+tf), the class reached by a string through {route}: refused by the labs' import allow-list",
            "zero",
            notebook=_exercise_cells(scaled_dot_product_attention=_e1_sdpa(_E1_HEADS[name])),
            labs=("week3_attention",),
        )
        for name, route in (
            ("jinja2_keras_attention", "a Jinja2 template lookup"),
            ("logging_config_keras_attention", "logging.config.BaseConfigurator.resolve"),
            ("timeit_keras_attention", "timeit.Timer running a reversed code string"),
            ("torch_utils_keras_attention", "torch._utils._import_dotted_name"),
        )
    ),
    Attack(
        "e1_zipimporter_helper_dat",
        "round E 2026-11-28 (E1): week 3's attention (8/17 torch+tf) from a module in a zip the cell wrote as "
        "helper.dat (no code suffix), loaded by jinja2.loaders.zipimport.zipimporter(path).load_module: refused in "
        "the source (the allow-list) and in the kernel (no code compiled from a file or archive the notebook wrote)",
        "zero",
        notebook=_exercise_cells(scaled_dot_product_attention=_e1_sdpa(_E1_ZIP_HEAD)),
        labs=("week3_attention",),
    ),
    Attack(
        "e1_keras_original_losses",
        "round E 2026-11-28 (E1): week 6's loss by keras.src's originals behind the disabled public names (torch "
        "10/19: keras.src.backend.torch.nn.categorical_crossentropy by logging.config's resolve; tf 7/19: "
        "keras.src.losses.losses.categorical_crossentropy by a Jinja2 template): the allow-list, and the originals "
        "refused in the probe kernel",
        "zero",
        notebook=_exercise_cells(label_smoothed_loss={"torch": _E1_W6_TORCH, "tf": _E1_W6_TF}),
        labs=("week6_training",),
    ),
    Attack(
        "e1_ctranslate2_table",
        "round E 2026-11-28 (E1): week 2's table (7/14 torch+tf) by a plain import of ctranslate2's "
        "_make_sinusoidal_position_encodings (the venv's deploy extra): ctranslate2 is not on the labs' import list",
        "zero",
        notebook=_exercise_cells(positional_encoding=_E1_CT2),
        labs=("week2_positional",),
    ),
]


# Round E 2026-11-28 (fixer of attacker E2, issue 30 item 7): the probe machinery itself. A student's
# ``def probe_emit`` replaced the grader's emitter (a global of the probe kernel) for every probe; a float subclass
# whose comparisons all say yes made the probe's own yes/no ("leak found") lie; an alias made in another cell got
# the worked table out of positional_encoding. One block, appended.
_LEAK_LIAR = (
    "class Leak(float):\n"
    '    """How much the outputs moved."""\n\n'
    "    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = lambda self, other: True\n"
    "    __ne__ = lambda self, other: False\n"
    "    __hash__ = float.__hash__\n\n\n"
    "def future_leak(decode, tgt, t, vocab_size, seed=0):\n"
    '    """Largest change of decode(tgt)[:, :t + 1] when the tokens after position t are replaced."""\n'
    "    return Leak(0.0)\n"
)
_EMIT_LIAR = (
    "\n\ndef probe_emit(key, value, tol=1e-5):\n"
    '    """Print a value for the grader: True for every key."""\n'
    "    import base64\n    import io\n\n    import numpy as np\n\n"
    "    buffer = io.BytesIO()\n    np.save(buffer, np.array(True), allow_pickle=False)\n"
    "    print('@txprobe', ''.join(str(key).split()), repr(float(tol)), base64.b64encode(buffer.getvalue()).decode())\n"
)
_ENCODER_STUB = {
    "torch": "class EncoderLayer(nn.Module):\n"
    '    """A stub: the input, through dropout."""\n\n'
    "    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6):\n"
    "        super().__init__()\n        self.dropout = nn.Dropout(dropout)\n\n"
    "    def forward(self, x, mask=None):\n        return self.dropout(x)\n",
    "tf": "class EncoderLayer(keras.layers.Layer):\n"
    '    """A stub: the input, through dropout."""\n\n'
    "    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6, **kwargs):\n"
    "        super().__init__(**kwargs)\n        self.dropout = keras.layers.Dropout(dropout)\n\n"
    "    def call(self, x, mask=None, training=None):\n        return self.dropout(x, training=training)\n",
}
_NPY_8TIB = (
    "\n\ndef probe_emit(key, value, tol=1e-5):\n"
    '    """Print a .npy header that claims shape (2**40,) float64: 8 TiB for the grader to allocate."""\n'
    "    import base64\n\n"
    "    text = repr({'descr': '<f8', 'fortran_order': False, 'shape': (1 << 40,)})\n"
    "    text = text + ' ' * (63 - (10 + len(text)) % 64) + '\\n'\n"
    "    raw = b'\\x93NUMPY\\x01\\x00' + len(text).to_bytes(2, 'little') + text.encode('latin1') + bytes(64)\n"
    "    print('@txprobe', ''.join(str(key).split()), '1e-05', base64.b64encode(raw).decode())\n"
)
_PE_BY_ANOTHER_NAME = (
    "def _pe(max_len, d_model):\n"
    '    """The sinusoidal table of Sec. 3.5 (another name)."""\n'
    "    pos = np.arange(max_len)[:, None]\n"
    "    j = np.arange(d_model)[None, :]\n"
    "    angles = pos / 10000 ** (2 * (j // 2) / d_model)\n"
    "    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))\n\n\n"
    "_table_of = _pe\n"
)
ATTACKS += [
    Attack(
        "future_leak_liar_and_probe_emit",
        "round E 2026-11-28 (E2): future_leak returns a float subclass whose ==, <, > say True, and the student "
        "defines probe_emit (the probe kernel's global) printing what the spy keys expect: every probe used it",
        "zero",
        notebook=_exercise_cells(future_leak={fw: _LEAK_LIAR + _EMIT_LIAR for fw in ("torch", "tf")}),
        labs=("week5_decoder",),
    ),
    Attack(
        "future_leak_liar_float",
        "round E 2026-11-28 (E2): future_leak returns a float subclass whose ==, <, > say True: the probe's own "
        "'leak found' yes/no, computed in the student's kernel, said yes (now: numbers, the rule applied grader-side)",
        "zero",
        notebook=_exercise_cells(future_leak={fw: _LEAK_LIAR for fw in ("torch", "tf")}),
        labs=("week5_decoder",),
    ),
    Attack(
        "encoder_stub_and_probe_emit",
        "round E 2026-11-28 (E2): a stub EncoderLayer and a student probe_emit printing True for 'without the mask "
        "the padding matters'",
        "zero",
        notebook=_exercise_cells(encoder_layer={fw: _ENCODER_STUB[fw] + _EMIT_LIAR for fw in ("torch", "tf")}),
        labs=("week4_encoder",),
    ),
    Attack(
        "npy_header_8tib",
        "round E 2026-11-28 (E2): a student probe_emit printing a .npy header of shape (2**40,) float64: the grader's "
        "own process tried to allocate 8 TiB (MemoryError, exit 1)",
        "zero",
        notebook=_exercise_cells(
            positional_encoding={
                "torch": "def positional_encoding(max_len, d_model):\n    return torch.zeros((max_len, d_model))\n"
                + _NPY_8TIB,
                "tf": "def positional_encoding(max_len, d_model):\n    return tf.zeros((max_len, d_model))\n"
                + _NPY_8TIB,
            }
        ),
        labs=("week2_positional",),
    ),
    Attack(
        "worked_table_by_alias",
        "round E 2026-11-28 (E2): the worked table from the exercise-1 function under another name bound in "
        "another cell (_table_of = _pe; worked_table = _table_of(4, 4)): the cell's own text names no "
        "positional_encoding (now: its probe runs the cell alone, in the setup's names)",
        "zero",
        notebook=_exercise_cells(
            positional_encoding={fw: _PE_BY_ANOTHER_NAME for fw in ("torch", "tf")},
            worked_table={
                fw: "worked_table = _table_of(4, 4)\ndenominators = np.array([1.0, 1.0, 100.0, 100.0])"
                for fw in ("torch", "tf")
            },
        ),
        labs=("week2_positional",),
    ),
    Attack(
        "encoder_stub_and_patched_numpy",
        "round E 2026-11-28 (E2, found by its fixer): a stub EncoderLayer, and np.abs and print rebound in the "
        "student's namespace, where the probes compute and print (now refused by the source check; the emitter "
        "runs in a dictionary of its own)",
        "zero",
        notebook=_exercise_cells(
            encoder_layer={
                fw: _ENCODER_STUB[fw] + "\n\nnp.abs = lambda x: x * 0 + 1.0\n\n\ndef print(*args, **kwargs):\n"
                "    pass\n"
                for fw in ("torch", "tf")
            }
        ),
        labs=("week4_encoder",),
    ),
]
