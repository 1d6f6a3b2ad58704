"""PyTorch and TensorFlow agree to 1e-5 in float32 for every kind of positions (week 2, "Positions as built today").

The functions of rotary.py and alibi.py, the learned table, the attention layers that rotate or bias,
and whole models with each ``positions`` value, as tests/parity/test_parity.py does for the rest: fresh
layers disagree, converted ones agree, in both directions. The learned table round-trips through the
converter unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, assert_close, small_config
from support.references import inputs
from test_parity import decoder_cached, decoder_masks, leaves_of, mha_causal, mha_self

from txcourse.convert import tf_to_torch, torch_to_tf

ATOL = 1e-5
POSITIONS = ["sinusoidal", "learned", "rope", "alibi"]


@pytest.mark.parametrize(
    "name, call",
    [
        ("rotary_tables", lambda m, fw: m.rotary_tables(9, 8, 3)),
        ("apply_rotary", lambda m, fw: [m.apply_rotary(fw.tensor(inputs(small_config())["x"].reshape(3, 5, 4, 8)), 2)]),
        ("rotate_pairs", lambda m, fw: [m.rotate_pairs(fw.tensor(inputs(small_config())["x"]))]),
        ("alibi_slopes", lambda m, fw: [m.alibi_slopes(12)]),
        ("alibi_bias", lambda m, fw: [m.alibi_bias(6, 3, 7)]),
    ],
)
def test_function_parity(name, call):
    pt, tf = Framework("torch"), Framework("tf")
    t_out, k_out = call(pt.module, pt), call(tf.module, tf)
    assert len(t_out) == len(k_out)
    for i, (a, b) in enumerate(zip(t_out, k_out)):
        assert_close(tf.numpy(b), pt.numpy(a), atol=ATOL, what=f"{name} output {i}")


def _mha_cached_from_empty(fw, layer, d):
    """Three positions into an empty cache, then two more: the cache holds rotated keys (RoPE)."""
    x, d_k = d["x"], layer.d_model // layer.num_heads
    empty = fw.tensor(np.zeros((3, layer.num_heads, 0, d_k), np.float32))
    cache = type(layer.project_key_value(fw.tensor(x[:, :1]), fw.tensor(x[:, :1])))(empty, empty)
    first = layer(*(fw.tensor(x[:, :3]),) * 3, fw.module.look_ahead_mask(3), cache, return_weights=True)
    second = layer(*(fw.tensor(x[:, 3:]),) * 3, fw.module.look_ahead_mask(2, 3), first.cache, return_weights=True)
    return leaves_of(first) + leaves_of(second)


CASES = {
    "LearnedPositionalEmbedding": (
        lambda m, c, p: m.LearnedPositionalEmbedding(c.max_len, c.d_model),
        lambda fw, l, d: [l(fw.tensor(d["x"])), l(fw.tensor(d["x"]), offset=4)],
    ),
    "TransformerEmbedding": (
        lambda m, c, p: m.TransformerEmbedding(c.replace(positions=p)),
        lambda fw, l, d: [l(fw.tensor(d["src"]))],
    ),
    "MultiHeadAttention self": (lambda m, c, p: m.MultiHeadAttention(c.d_model, c.num_heads, False, p), mha_self),
    "MultiHeadAttention look-ahead": (
        lambda m, c, p: m.MultiHeadAttention(c.d_model, c.num_heads, False, p),
        mha_causal,
    ),
    "MultiHeadAttention cached": (
        lambda m, c, p: m.MultiHeadAttention(c.d_model, c.num_heads, False, p),
        _mha_cached_from_empty,
    ),
    "Encoder": (
        lambda m, c, p: m.Encoder(c.replace(positions=p)),
        lambda fw, l, d: leaves_of(
            l(fw.tensor(d["src"]), fw.module.padding_mask(fw.tensor(d["src"])), return_weights=True)
        ),
    ),
    "Decoder": (
        lambda m, c, p: m.Decoder(c.replace(positions=p)),
        lambda fw, l, d: leaves_of(
            l(fw.tensor(d["tgt"]), fw.tensor(d["memory"]), *decoder_masks(fw, d), return_weights=True)
        ),
    ),
    "Decoder, cached steps": (lambda m, c, p: m.Decoder(c.replace(positions=p)), decoder_cached),
    "Transformer": (
        lambda m, c, p: m.Transformer(c.replace(positions=p)),
        lambda fw, l, d: [l(fw.tensor(d["src"]), fw.tensor(d["tgt"]))],
    ),
}


@pytest.mark.parametrize("direction", ["torch_to_tf", "tf_to_torch"])
@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_layer_parity(case, positions, direction):
    import torch

    if case == "LearnedPositionalEmbedding" and positions != "learned":
        pytest.skip("the learned table alone: once")
    cfg = small_config(norm_first=positions in ("learned", "alibi"))  # both layer-norm placements
    build, run = CASES[case]
    pt, tf = Framework("torch"), Framework("tf")
    torch.manual_seed(0)
    t_layer = pt.eval(build(pt.module, cfg, positions))
    k_layer = build(tf.module, cfg, positions)
    data = inputs(cfg)
    with torch.no_grad():
        before = [pt.numpy(o) for o in run(pt, t_layer, data)]
    k_before = [tf.numpy(o) for o in run(tf, k_layer, data)]
    assert max(np.abs(a - b).max() for a, b in zip(before, k_before)) > 1e-3, "fresh layers must disagree"
    if direction == "torch_to_tf":
        torch_to_tf(t_layer, k_layer)
    else:
        tf_to_torch(k_layer, t_layer)
    with torch.no_grad():
        t_out = [pt.numpy(o) for o in run(pt, t_layer, data)]
    k_out = [tf.numpy(o) for o in run(tf, k_layer, data)]
    assert len(t_out) == len(k_out)
    for i, (a, b) in enumerate(zip(t_out, k_out)):
        assert_close(b, a, atol=ATOL, what=f"{case} [{positions}, {direction}] output {i}")


def test_learned_table_round_trips_through_the_converter():
    import torch

    cfg = small_config(positions="learned")
    pt, tf = Framework("torch"), Framework("tf")
    torch.manual_seed(3)
    original = pt.module.Transformer(cfg)
    k_model, back = tf.module.Transformer(cfg), pt.module.Transformer(cfg)
    torch_to_tf(original, k_model)
    tf_to_torch(k_model, back)
    for side in ("encoder", "decoder"):
        table = getattr(original, side).embedding.positional_encoding.table.weight
        k_table = getattr(k_model, side).embedding.positional_encoding.table.embeddings
        np.testing.assert_array_equal(np.asarray(k_table.numpy()), table.detach().numpy())
    for (name, a), (_, b) in zip(original.state_dict().items(), back.state_dict().items()):
        np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=name)


@pytest.mark.parametrize("other", ["sinusoidal", "rope", "alibi"])
def test_converter_refuses_models_with_other_positions(other):
    """RoPE and ALiBi models have the sinusoidal model's weights, but compute another function."""
    pt, tf = Framework("torch"), Framework("tf")
    with pytest.raises(ValueError, match=rf"configs differ in positions \(PyTorch 'learned', Keras '{other}'\)"):
        torch_to_tf(
            pt.module.Transformer(small_config(positions="learned")),
            tf.module.Transformer(small_config(positions=other)),
        )
    with pytest.raises(ValueError, match=r"differ in positions \(PyTorch 'rope', Keras 'alibi'\)"):
        torch_to_tf(
            pt.module.EncoderLayer(small_config(positions="rope")),
            tf.module.EncoderLayer(small_config(positions="alibi")),
        )
