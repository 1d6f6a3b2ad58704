"""PyTorch and TensorFlow agree to 1e-5 with grouped-query and multi-query attention (``num_kv_heads``).

As tests/parity/test_parity.py does for every layer: build both from one config, check that the fresh
layers disagree, convert the weights (both directions) and compare every output, cache and weight. Also:
the conversion round trip is exact, a checkpoint's arrays load back into each half, and the converter
refuses layers that differ in ``num_kv_heads``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, assert_close, small_config
from support.references import inputs

from txcourse.convert import tf_to_torch, torch_to_tf

ATOL = 1e-5
KV_HEADS = [1, 2, 4]  # multi-query, grouped-query, multi-head (num_heads = 4)


def _leaves(result) -> list:
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [] if result is None else [result]


def _mha(fw, layer, d):
    """Self-attention with a padding mask, cross-attention, then two cached steps after three positions."""
    x, memory = fw.tensor(d["x"]), fw.tensor(d["memory"])
    self_mask = fw.module.padding_mask(fw.tensor(d["tgt"]))
    leaves = _leaves(layer(x, x, x, self_mask, return_weights=True))
    leaves += _leaves(layer(x, memory, memory, fw.module.padding_mask(fw.tensor(d["src"])), return_weights=True))
    cache = layer.project_key_value(fw.tensor(d["x"][:, :3]), fw.tensor(d["x"][:, :3]))
    new = fw.tensor(d["x"][:, 3:])
    return leaves + _leaves(layer(new, new, new, fw.module.look_ahead_mask(2, 3), cache, return_weights=True))


def _decoder_cached(fw, layer, d):
    memory = fw.tensor(d["memory"])
    cache, leaves = layer.init_cache(memory), []
    for t in range(3):
        step = layer(fw.tensor(d["tgt"][:, t : t + 1]), memory, fw.module.look_ahead_mask(1, t), None, cache)
        cache, leaves = step.cache, leaves + _leaves(step)
    return leaves


CASES = {
    "MultiHeadAttention": (
        lambda m, c: m.MultiHeadAttention(c.d_model, c.num_heads, False, num_kv_heads=c.num_kv_heads),
        _mha,
    ),
    "EncoderLayer": (
        lambda m, c: m.EncoderLayer(c),
        lambda fw, l, d: _leaves(
            l(fw.tensor(d["memory"]), fw.module.padding_mask(fw.tensor(d["src"])), return_weights=True)
        ),
    ),
    "Decoder, cached steps": (lambda m, c: m.Decoder(c), _decoder_cached),
    "Transformer": (lambda m, c: m.Transformer(c), lambda fw, l, d: [l(fw.tensor(d["src"]), fw.tensor(d["tgt"]))]),
}


@pytest.mark.parametrize("direction", ["torch_to_tf", "tf_to_torch"])
@pytest.mark.parametrize("kv_heads", KV_HEADS)
@pytest.mark.parametrize("case", list(CASES))
def test_grouped_query_parity(case, kv_heads, direction):
    import torch

    cfg = small_config(num_kv_heads=kv_heads, norm_first=kv_heads == 2)
    build, run = CASES[case]
    pt, tf = Framework("torch"), Framework("tf")
    torch.manual_seed(0)
    t_layer = pt.eval(build(pt.module, cfg))
    k_layer = build(tf.module, cfg)
    data = inputs(cfg)
    with torch.no_grad():
        before = [pt.numpy(o) for o in run(pt, t_layer, data)]
    k_before = [tf.numpy(o) for o in run(tf, k_layer, data)]
    assert max(np.abs(a - b).max() for a, b in zip(before, k_before)) > 1e-3
    if direction == "torch_to_tf":
        torch_to_tf(t_layer, k_layer)
    else:
        tf_to_torch(k_layer, t_layer)
    with torch.no_grad():
        t_out = [pt.numpy(o) for o in run(pt, t_layer, data)]
    k_out = [tf.numpy(o) for o in run(tf, k_layer, data)]
    assert len(t_out) == len(k_out) > 0
    for i, (a, b) in enumerate(zip(t_out, k_out)):
        assert a.shape == b.shape, (case, i)
        assert_close(b, a, atol=ATOL, what=f"{case} [H_kv={kv_heads}, {direction}] output {i}")


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_conversion_round_trip_is_exact(kv_heads):
    """torch -> tf -> a fresh torch model: every weight comes back bit for bit, w_k and w_v (H_kv d_k, D)."""
    import tensorflow as tf
    import torch

    cfg = small_config(num_kv_heads=kv_heads)
    pt, k = Framework("torch"), Framework("tf")
    torch.manual_seed(0)
    source, back = pt.module.Transformer(cfg), pt.module.Transformer(cfg)
    keras_model = k.module.Transformer(cfg)
    keras_model(tf.ones((1, 3), tf.int32), tf.ones((1, 2), tf.int32))
    torch_to_tf(source, keras_model)
    tf_to_torch(keras_model, back)
    assert tuple(source.encoder.layers[0].self_attn.w_k.weight.shape) == (kv_heads * cfg.d_k, cfg.d_model)
    for (name, a), b in zip(source.state_dict().items(), back.state_dict().values()):
        assert torch.equal(a, b), name


def test_checkpoint_arrays_load_back_in_each_half_and_refuse_another_num_kv_heads(fw):
    import tensorflow as tf

    weights = __import__(f"txcourse.{fw.name}.weights", fromlist=["model_arrays"])
    cfg = small_config(num_kv_heads=2)

    def build(config):
        model = fw.module.Transformer(config)
        if fw.name == "tf":
            model(tf.ones((1, 3), tf.int32), tf.ones((1, 2), tf.int32))
        return model

    model = build(cfg)
    arrays = weights.model_arrays(model)
    again = build(cfg)
    weights.load_model_arrays(again, arrays, "gqa.npz")
    src, tgt = fw.tensor(np.array([[3, 4, 5]])), fw.tensor(np.array([[1, 2]]))
    assert np.array_equal(fw.numpy(fw.eval(model)(src, tgt)), fw.numpy(fw.eval(again)(src, tgt)))
    with pytest.raises(ValueError, match=r"checkpoint 'gqa.npz' does not fit the model: .*w_k.* has shape"):
        weights.load_model_arrays(build(cfg.replace(num_kv_heads=None)), arrays, "gqa.npz")


def test_converter_refuses_layers_that_differ_in_num_kv_heads():
    pt, k = Framework("torch"), Framework("tf")
    with pytest.raises(
        ValueError, match=r"MultiHeadAttention: the two layers differ in num_kv_heads \(PyTorch 1, Keras 2\)"
    ):
        torch_to_tf(
            pt.module.MultiHeadAttention(8, 2, num_kv_heads=1), k.module.MultiHeadAttention(8, 2, num_kv_heads=2)
        )
    with pytest.raises(ValueError, match=r"configs differ in num_kv_heads \(PyTorch 2, Keras None\)"):
        torch_to_tf(pt.module.Transformer(small_config(num_kv_heads=2)), k.module.Transformer(small_config()))
