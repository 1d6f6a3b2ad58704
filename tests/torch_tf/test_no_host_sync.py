"""No host synchronisation in the hot path (issue 31, item 4).

A device-to-host copy (``int(tokens.max())``, ``loss.item()``, ``bool(mask.any())``) stalls a GPU until every
queued kernel has run. The model's training step and its cached decoding step must not read a tensor's value on
the host: in PyTorch every such read is patched to raise; in TensorFlow the compiled training step is traced once
and holds no assertion or Python read of a tensor. Token ranges are read where the data enters (the decoding's
source) and in debug mode (:func:`txcourse.debug_checks`), which these tests check too.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from conftest import small_config

import txcourse

READS = ("item", "__int__", "__bool__", "__float__", "tolist", "__index__")


@contextlib.contextmanager
def _no_host_reads(torch, allowed=list):
    """Every way of reading a torch.Tensor's value into Python raises inside the block (but of the tensors
    ``allowed()`` returns)."""

    def refuse(name):
        def read(self, *args, **kwargs):
            if any(self is tensor for tensor in allowed()):
                return saved[name](self, *args, **kwargs)
            raise AssertionError(f"host synchronisation: torch.Tensor.{name} called in the hot path")

        return read

    saved = {name: getattr(torch.Tensor, name) for name in READS}
    try:
        for name in READS:
            setattr(torch.Tensor, name, refuse(name))
        yield
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(3, 23, size=(4, 7))
    tgt = rng.integers(3, 19, size=(4, 6))
    src[0, -2:] = 0  # padding
    return src, tgt


@pytest.mark.parametrize("changes", [{}, {"norm_first": True, "positions": "rope", "num_kv_heads": 2}, {"fused": True}])
def test_torch_training_step_reads_nothing_on_the_host(changes):
    torch = pytest.importorskip("torch")
    import txcourse.torch as tx

    torch.manual_seed(0)
    model = tx.Transformer(small_config(**changes)).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    src, tgt = (torch.from_numpy(a) for a in _batch())
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    before = [p.detach().clone() for p in model.parameters()]
    with _no_host_reads(torch):
        logits = model(src, tgt_in)  # (B, T_tgt, V)
        loss, _ = tx.label_smoothed_cross_entropy(logits, tgt_out, 0.1, 0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    # torch's Adam (capturable=False, the only choice on a CPU) keeps its step counter on the host on purpose and
    # reads it there: no device copy, but it would trip the patch. Its CUDA path with capturable=True reads nothing.
    optimizer.step()
    assert any(not torch.equal(a, p) for a, p in zip(before, model.parameters())), "the step changed no weight"
    with pytest.raises(AssertionError, match=r"host synchronisation: torch\.Tensor\.item"), _no_host_reads(torch):
        loss.item()  # the patch itself works


@pytest.mark.parametrize("kind", ["transformer", "bahdanau"])
def test_torch_cached_greedy_step_reads_nothing_on_the_host(kind):
    torch = pytest.importorskip("torch")
    import txcourse.torch as tx
    from txcourse.torch import decode

    torch.manual_seed(0)
    if kind == "transformer":
        model = tx.Transformer(small_config()).eval()
    else:
        model = tx.Seq2Seq(txcourse.Seq2SeqConfig(23, 19, embedding_dim=8, units=16)).eval()
    src = torch.from_numpy(_batch()[0])
    with torch.no_grad():
        state = model.start_decoding(src, use_cache=True)  # the source's token range is read here, once
        token = torch.full((src.shape[0],), 1, dtype=torch.long)
        finished = torch.zeros_like(token, dtype=torch.bool)
        scores = torch.zeros(src.shape[0])
        with _no_host_reads(torch):
            for _ in range(3):  # the steps of greedy_decode, without its early stop (which reads `finished`)
                token, finished, scores, state, _ = decode._greedy_step(model, token, finished, scores, state, 1, 2, 0)
    assert tuple(token.shape) == (src.shape[0],)


def test_torch_debug_mode_reads_token_ranges():
    """The reads the hot path lacks are those debug mode does: with it on, the forward reads the ids' range."""
    torch = pytest.importorskip("torch")
    import txcourse.torch as tx

    model = tx.Transformer(small_config()).eval()
    src, tgt = (torch.from_numpy(a) for a in _batch())
    with txcourse.debug_checks(), _no_host_reads(torch), pytest.raises(AssertionError, match="host synchronisation"):
        model(src, tgt)


def test_tf_compiled_training_step_traces_once_without_host_reads():
    tf = pytest.importorskip("tensorflow")
    import keras

    import txcourse.tf as tx

    keras.utils.set_random_seed(0)
    model = tx.Transformer(small_config())
    optimizer = keras.optimizers.Adam(1e-3)
    optimizer.build(model.trainable_variables)  # its variables exist before the trace: one trace, not two
    src, tgt = (tf.constant(a) for a in _batch())

    @tf.function(autograph=False)  # no autograph: a Python branch on a tensor's value would fail to trace
    def train_step(src, tgt):
        with tf.GradientTape() as tape:
            logits = model(src, tgt[:, :-1], training=True)  # (B, T_tgt, V)
            loss, _ = tx.label_smoothed_cross_entropy(logits, tgt[:, 1:], 0.1, 0)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(3):
        train_step(src, tgt)
    assert train_step.experimental_get_tracing_count() == 1
    ops = _op_types(train_step.get_concrete_function(src, tgt).graph)
    assert not ops & {"Assert", "PyFunc", "EagerPyFunc", "NumpyFunction"}, sorted(ops)
    with txcourse.debug_checks():  # debug mode: the token ranges become graph assertions
        debug = _op_types(tf.function(lambda s, t: model(s, t)).get_concrete_function(src, tgt).graph)
    assert "Assert" in debug


def _op_types(graph) -> set:
    """The op types of a traced graph and of the functions it calls (an assertion sits inside a cond's branch)."""
    graph_def = graph.as_graph_def()
    types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        types |= {node.op for node in function.node_def}
    return types


def _trainer(half, steps=6, log_every=3):
    from support.training import copy_data, tiny_config_dict

    from txcourse.training import TrainConfig

    tok, data = copy_data(n=64)
    cfg = tiny_config_dict(tok.vocab_size)
    config = TrainConfig(steps=steps, batch_size=8, log_every=log_every, warmup_steps=4, progress=False, seed=0)
    half.set_seed(0)  # the same initial weights for every Trainer built here
    return half.Trainer(half.build_model("transformer", cfg), "transformer", cfg, data, config)


def test_torch_trainer_step_reads_nothing_on_the_host():
    """The Trainer's own step (forward, loss, backward, clipping, Adam, schedule) reads no tensor on the host;
    the loop reads the steps' values at its log steps only, and the history is that of an unpatched run."""
    torch = pytest.importorskip("torch")
    from txcourse.torch import train

    plain = _trainer(train).fit()
    trainer = _trainer(train)
    step, reads = trainer.train_step, []

    def patched_step(batch):
        # torch's Adam on a CPU (capturable=False) keeps its step counter as a CPU tensor and reads it there on
        # purpose (no device copy); those counters alone may be read, every other tensor read raises
        counters = lambda: [s["step"] for s in trainer.optimizer.state.values() if "step" in s]  # noqa: E731
        with _no_host_reads(torch, allowed=counters):
            out = step(batch)
        reads.append(trainer.step)
        return out

    trainer.train_step = patched_step
    records = trainer.fit()
    assert reads == [1, 2, 3, 4, 5, 6]  # every step ran patched, log steps (3, 6) and the others alike
    assert [r["step"] for r in records] == [3, 6]
    assert [(r["loss"], r["accuracy"]) for r in records] == [(r["loss"], r["accuracy"]) for r in plain]


def test_tf_trainer_step_reads_nothing_on_the_host():
    """The TF Trainer's step: its compiled function is traced once and holds no assertion or Python read, and the
    Python around it reads no tensor (float(), int(), bool(), .numpy() raise); the history is an unpatched run's."""
    pytest.importorskip("tensorflow")
    from tensorflow.python.framework import ops

    from txcourse.tf import train

    plain = _trainer(train).fit()
    trainer = _trainer(train)
    step = trainer.train_step

    def patched_step(batch):
        with _no_tf_reads(ops._EagerTensorBase):
            return step(batch)

    trainer.train_step = patched_step
    records = trainer.fit()
    assert [(r["loss"], r["accuracy"]) for r in records] == [(r["loss"], r["accuracy"]) for r in plain]
    assert trainer._step.experimental_get_tracing_count() == 1
    batch = next(trainer.stream)
    arrays = (batch.src, batch.tgt_in, batch.tgt_out)
    graph = trainer._step.get_concrete_function(*(ops.convert_to_tensor(a) for a in arrays)).graph
    assert not _op_types(graph) & {"PyFunc", "EagerPyFunc", "NumpyFunction"}
    # One graph for every batch shape: the length (B, T) is unknown when traced, so the positional table's
    # bound (T <= max_len) is the graph's one assertion, per side; it reads no value into Python
    asserts = sorted(node.name for node in graph.as_graph_def().node if node.op == "Assert")
    assert len(asserts) == 2 and all("positional_encoding" in name for name in asserts), asserts


@contextlib.contextmanager
def _no_tf_reads(tensor_type):
    """Every way of reading an eager tf.Tensor's value into Python raises inside the block."""

    def refuse(name):
        def read(self, *args, **kwargs):
            raise AssertionError(f"host synchronisation: tf.Tensor.{name} called in the hot path")

        return read

    names = ("__float__", "__int__", "__bool__", "__index__", "numpy")
    saved = {name: tensor_type.__dict__[name] for name in names}
    try:
        for name in names:
            setattr(tensor_type, name, refuse(name))
        yield
    finally:
        for name, method in saved.items():
            setattr(tensor_type, name, method)
