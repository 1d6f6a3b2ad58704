"""txcourse.decoding: what greedy decoding, sampling and beam search share, written once for both halves."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest
from support.configs import tiny_config

import txcourse
from txcourse.decoding import BeamState, check_beam, length_penalty, max_steps, run_steps
from txcourse.registry import FRAMEWORKS

ROOT = pathlib.Path(txcourse.__file__).resolve().parent


class _Model:
    def __init__(self, max_len=None):
        self.config = None if max_len is None else type("Config", (), {"max_len": max_len})()


def test_max_steps_is_2_t_plus_10_within_the_model():
    assert max_steps(_Model(), 7, None) == 24
    assert max_steps(_Model(max_len=20), 7, None) == 20
    assert max_steps(_Model(max_len=20), 7, 5) == 5
    with pytest.raises(ValueError, match=r"max_len=30 is longer than the model's max_len=20 positions"):
        max_steps(_Model(max_len=20), 7, 30)
    with pytest.raises(ValueError, match="max_len"):
        max_steps(_Model(), 7, 0)


def test_check_beam_names_the_argument():
    check_beam(1, 0.0)
    with pytest.raises(ValueError, match="beam_size"):
        check_beam(0, 0.6)
    with pytest.raises(ValueError, match=r"length_penalty_alpha must be >= 0, got nan"):
        check_beam(4, float("nan"))


def test_length_penalty_is_wu_et_al_eq_14():
    assert length_penalty(1.0, 0.6) == pytest.approx(1.0)
    assert length_penalty(7.0, 1.0) == pytest.approx(2.0)
    assert length_penalty(np.array([1.0, 7.0]), 0.0).tolist() == [1.0, 1.0]


def test_run_steps_stops_after_every_row_has_finished():
    calls = []

    def step(token, finished, scores, state, extra):
        calls.append(extra)
        return token + 1, token + 1 >= 3, scores - 1.0, state, None

    tokens, weights, scores = run_steps(step, 10, 0, False, 0.0, None, lambda t: (t * 10,), bool)
    assert tokens == [1, 2, 3] and weights == [None] * 3 and scores == -3.0 and calls == [0, 10, 20]
    tokens, _, _ = run_steps(step, 2, 0, False, 0.0, None, lambda t: (t,), bool)
    assert tokens == [1, 2]  # at most `steps`


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_each_half_keeps_only_its_tensor_ops(framework):
    """The step limit, the beam checks, the length penalty and the loop live here, not in a half."""
    for module in ("decode", "sample"):
        tree = ast.parse((ROOT / framework / f"{module}.py").read_text(encoding="utf-8"))
        defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        shared = defined & {"_max_steps", "max_steps", "length_penalty", "run_steps", "BeamState"}
        assert not shared, f"txcourse/{framework}/{module}.py defines {sorted(shared)}: they are txcourse.decoding's"


def test_the_beam_step_returns_the_same_named_state_in_both_halves(fw):
    """Each half's beam step takes and returns a BeamState (no 9-tuple), the decoding state and the attention."""
    if fw.name == "torch":
        from txcourse.torch import decode
    else:
        from txcourse.tf import decode
    config = tiny_config(11, d_model=8, d_ff=16, max_len=12, dropout=0.0)
    model = fw.eval(fw.module.Transformer(config))
    k = 3
    repeated = np.repeat(np.array([[3, 4, 5], [6, 7, 0]]), k, axis=0)
    state = model.start_decoding(fw.tensor(repeated, "int64"), True)
    scores = np.zeros((2, k), np.float32)
    scores[:, 1:] = -np.inf
    beams = BeamState(
        token=fw.tensor(np.full(2 * k, 1), "int64"),
        scores=fw.tensor(scores, "float32"),
        ranked=fw.tensor(scores, "float32"),
        lengths=fw.tensor(np.zeros(2 * k), "int64"),
        finished=fw.tensor(np.zeros(2 * k, bool), "bool"),
        sequences=fw.tensor(np.zeros((2 * k, 0)), "int64"),
        origin=fw.tensor(np.arange(2 * k), "int64"),
    )
    out = decode._beam_step(model, beams, state, 0.6, 1, 2, 0)
    assert len(out) == 3 and isinstance(out[0], BeamState)
    new = out[0]
    assert fw.numpy(new.sequences).shape == (2 * k, 1) and fw.numpy(new.ranked).shape == (2, k)
    assert set(fw.numpy(new.origin)[:k]) <= set(range(k)) and set(fw.numpy(new.origin)[k:]) <= set(range(k, 2 * k))


def test_torch_cross_attention_cache_is_contiguous():
    """The memory's keys and values are copied into (B, H, T_src, d_k) order once (issue 34), not at every step:
    a view of the projection's (B, T_src, H, d_k) layout would be copied by each step's matmul."""
    torch = pytest.importorskip("torch")
    import txcourse.torch as tx

    model = tx.Transformer(tiny_config(11, d_model=8, d_ff=16, max_len=12, dropout=0.0)).eval()
    with torch.no_grad():
        state = model.start_decoding(torch.tensor([[3, 4, 5], [6, 7, 0]]), True)
    for layer in state["cache"]:
        assert layer.cross_attn.key.is_contiguous() and layer.cross_attn.value.is_contiguous()
        assert tuple(layer.cross_attn.key.shape) == (2, model.config.kv_heads, 3, model.config.d_k)


@pytest.mark.parametrize("decoder", ["greedy_decode", "beam_search", "sample_decode"])
def test_torch_decoders_run_in_inference_mode_and_return_ordinary_tensors(decoder):
    """The steps run under torch.inference_mode (issue 34: cheaper per op than no_grad); what comes back is an
    ordinary tensor, which a caller may change in place or feed to a model that trains."""
    torch = pytest.importorskip("torch")
    import txcourse.torch as tx

    model = tx.Transformer(tiny_config(11, d_model=8, d_ff=16, max_len=12, dropout=0.0)).train()
    modes = []
    model.decoder.register_forward_hook(lambda *_: modes.append(torch.is_inference_mode_enabled()))
    out = getattr(tx, decoder)(model, torch.tensor([[3, 4, 5], [6, 7, 0]]), max_len=4)
    assert modes and all(modes) and model.training  # every step in inference mode; train mode restored
    for tensor in (out.tokens, out.scores, out.attention):
        assert not tensor.is_inference()
    out.tokens[:, 0] = 0  # an inference tensor would refuse this outside inference mode
    model(out.tokens, out.tokens).sum().backward()  # and refuse to be saved for backward
