"""torch.compile traces the Transformer's forward as one graph (no graph break), and debug mode still checks eagerly.

The per-call checks ask :func:`txcourse._validation.debugging` whether to run; it reads a ``ContextVar`` and the
environment, which TorchDynamo cannot trace: before the fix every layer's forward broke the graph there, and in
PyTorch 2.11 the resumed frames crashed (``benchmarks/gpu_mfu.py``'s compiled row on an H100). ``txcourse.torch``
now tells the checks when a compiler traces (``torch.compiler.is_compiling``), so they are off in the graph.
"""

from __future__ import annotations

import pytest
from conftest import small_config

import txcourse
from txcourse import _validation as V

torch = pytest.importorskip("torch")
tx = pytest.importorskip("txcourse.torch")


def _model_and_batch():
    torch.manual_seed(0)
    config = small_config(dropout=0.0)
    model = tx.Transformer(config).eval()
    src = torch.randint(4, config.src_vocab_size, (2, 7))  # (B, S)
    tgt = torch.randint(4, config.tgt_vocab_size, (2, 5))  # (B, T)
    return model, src, tgt


@pytest.mark.parametrize("debug", [False, True])
def test_forward_is_one_graph(debug):
    """Zero graph breaks, with and without debug mode (debug mode checks eagerly only)."""
    model, src, tgt = _model_and_batch()
    torch._dynamo.reset()
    context = txcourse.debug_checks() if debug else _null()
    with context:
        explanation = torch._dynamo.explain(model)(src, tgt)
    reasons = [reason.reason.splitlines()[0] for reason in explanation.break_reasons]
    assert explanation.graph_break_count == 0, f"graph breaks: {reasons[:5]}"
    assert explanation.graph_count == 1


def test_debug_mode_still_checks_eagerly():
    """The tracing probe says False outside a compiler, so debug mode's dtype check still raises eagerly."""
    model, src, tgt = _model_and_batch()
    assert not V._tracing()
    layer = model.encoder.layers[0]
    x = torch.zeros(2, 7, layer.self_attn_norm.normalized_shape[0], dtype=torch.float64)  # (B, S, D), wrong dtype
    with txcourse.debug_checks(), pytest.raises(ValueError, match="x"):
        layer(x)
    layer(x.float())  # the right dtype passes


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
