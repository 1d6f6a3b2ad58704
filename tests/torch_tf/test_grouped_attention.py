"""Multi-query and grouped-query attention (``num_kv_heads``) in both halves, and the key/value cache's size.

MQA (Shazeer 2019) and GQA (Ainslie et al. 2023): ``w_k`` and ``w_v`` project to H_kv heads, each
shared by H / H_kv consecutive query heads. Checked here, in each framework: the grouped layer equals a
multi-head layer whose key/value heads are copies, cached decoding equals uncached, the cache holds H_kv
heads (its bytes are those of ``kv_cache_bytes``), and bad values raise naming ``num_kv_heads``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import assert_close, small_config

from txcourse import TransformerConfig
from txcourse.evaluation.accounting import kv_cache_bytes

D, H = 32, 4
KV_HEADS = [1, 2, 4]


def _weights(fw, layer) -> dict[str, np.ndarray]:
    """``w_q`` ... ``w_o`` as (D_in, D_out) kernels and biases, whatever the framework."""
    out = {}
    for name in ("w_q", "w_k", "w_v", "w_o"):
        sub = getattr(layer, name)
        if fw.name == "torch":
            out[name] = (sub.weight.detach().numpy().T.copy(), sub.bias.detach().numpy().copy())
        else:
            out[name] = (np.asarray(sub.kernel.numpy()), np.asarray(sub.bias.numpy()))
    return out


def _set_weights(fw, layer, weights) -> None:
    for name, (kernel, bias) in weights.items():
        sub = getattr(layer, name)
        if fw.name == "torch":
            import torch

            with torch.no_grad():
                sub.weight.copy_(torch.from_numpy(np.ascontiguousarray(kernel.T)))
                sub.bias.copy_(torch.from_numpy(bias))
        else:
            sub.kernel.assign(kernel)
            sub.bias.assign(bias)


def _run(fw, layer, x, memory, mask=None):
    out = layer(fw.tensor(x), fw.tensor(memory), fw.tensor(memory), mask, return_weights=True)
    return fw.numpy(out.output), fw.numpy(out.weights)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2, 5, D)).astype(np.float32), rng.normal(size=(2, 7, D)).astype(np.float32)


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_grouped_layer_equals_multi_head_with_copied_kv_heads(fw, kv_heads):
    """Key/value head j serves query heads j g .. j g + g - 1: copy it there and multi-head attention agrees."""
    grouped = fw.module.MultiHeadAttention(D, H, num_kv_heads=kv_heads)
    full = fw.module.MultiHeadAttention(D, H)
    x, memory = _inputs()
    _run(fw, grouped, x, memory), _run(fw, full, x, memory)  # Keras builds its weights on the first call
    weights = _weights(fw, grouped)
    d_k, group = D // H, H // kv_heads
    for name in ("w_k", "w_v"):
        kernel, bias = weights[name]  # (D, H_kv d_k), (H_kv d_k,)
        heads = kernel.reshape(D, kv_heads, d_k)  # (D, H_kv, d_k)
        weights[name] = (
            np.repeat(heads, group, axis=1).reshape(D, D),  # (D, H d_k): head j copied to its g query heads
            np.repeat(bias.reshape(kv_heads, d_k), group, axis=0).reshape(D),
        )
    _set_weights(fw, full, weights)
    mask = fw.module.padding_mask(fw.tensor(np.array([[3, 4, 5, 6, 7, 0, 0], [1, 2, 3, 4, 5, 6, 7]])))
    out_g, w_g = _run(fw, grouped, x, memory, mask)
    out_f, w_f = _run(fw, full, x, memory, mask)
    assert_close(out_g, out_f, atol=1e-5, what=f"H_kv={kv_heads} output vs multi-head with copied heads")
    assert_close(w_g, w_f, atol=1e-6, what=f"H_kv={kv_heads} weights")
    if kv_heads > 1:  # the key heads differ, so a wrong assignment of query heads to kv heads would show
        assert np.abs(weights["w_k"][0][:, :d_k] - weights["w_k"][0][:, -d_k:]).max() > 1e-3


def test_num_kv_heads_equal_to_num_heads_is_the_papers_layer(fw):
    """num_kv_heads=H builds the same weights and computes the same numbers as the default layer, exactly."""
    default = fw.module.MultiHeadAttention(D, H)
    explicit = fw.module.MultiHeadAttention(D, H, num_kv_heads=H)
    x, memory = _inputs(1)
    _run(fw, default, x, memory), _run(fw, explicit, x, memory)
    _set_weights(fw, explicit, _weights(fw, default))
    assert explicit.num_kv_heads == default.num_kv_heads == H
    for got, expected in zip(_run(fw, explicit, x, memory), _run(fw, default, x, memory)):
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("kv_heads", KV_HEADS)
def test_projection_shapes_and_cache_heads(fw, kv_heads):
    layer = fw.module.MultiHeadAttention(D, H, num_kv_heads=kv_heads)
    x, memory = _inputs()
    _run(fw, layer, x, memory)
    assert _weights(fw, layer)["w_k"][0].shape == (D, kv_heads * D // H)
    assert _weights(fw, layer)["w_q"][0].shape == (D, D)
    cache = layer.project_key_value(fw.tensor(memory), fw.tensor(memory))
    assert tuple(cache.key.shape) == tuple(cache.value.shape) == (2, kv_heads, 7, D // H)


@pytest.mark.parametrize("kv_heads", KV_HEADS)
def test_cached_decoding_equals_uncached(fw, kv_heads):
    """The decoder fed one token at a time through its cache gives the outputs of one full pass."""
    config = small_config(num_kv_heads=kv_heads, d_model=D, num_heads=H)
    decoder = fw.eval(fw.module.Decoder(config))
    rng = np.random.default_rng(2)
    tokens = rng.integers(1, config.tgt_vocab_size, size=(2, 6))
    memory = fw.tensor(rng.normal(size=(2, 5, D)).astype(np.float32))
    full = fw.numpy(decoder(fw.tensor(tokens), memory, fw.module.look_ahead_mask(6)))
    cache, steps = decoder.init_cache(memory), []
    for t in range(6):
        out = decoder(fw.tensor(tokens[:, t : t + 1]), memory, fw.module.look_ahead_mask(1, t), None, cache)
        cache = out.cache
        steps.append(fw.numpy(out.output))
    assert_close(np.concatenate(steps, axis=1), full, atol=1e-5, what=f"cached vs full, H_kv={kv_heads}")
    assert tuple(cache[0].self_attn.key.shape) == (2, kv_heads, 6, D // H)


@pytest.mark.parametrize("kv_heads", KV_HEADS)
def test_cache_bytes_match_the_account_and_shrink_by_the_group(fw, kv_heads):
    """Measured: the real cache's bytes after 9 steps equal kv_cache_bytes, and shrink by H / H_kv."""
    sizes = {}
    for heads in (H, kv_heads):
        config = small_config(num_kv_heads=heads, d_model=D, num_heads=H, num_decoder_layers=3)
        decoder = fw.eval(fw.module.Decoder(config))
        memory = fw.tensor(np.random.default_rng(3).normal(size=(2, 5, D)).astype(np.float32))
        cache = decoder.init_cache(memory)
        for _ in range(9):
            cache = decoder(fw.tensor(np.full((2, 1), 3)), memory, None, None, cache).cache
        sizes[heads] = sum(fw.numpy(t).nbytes for layer in cache for t in layer.self_attn)  # keys and values
        total = sum(fw.numpy(t).nbytes for layer in cache for kv in layer for t in kv)  # and the memory's
        assert sizes[heads] == kv_cache_bytes(config, 9, batch=2)
        assert total == kv_cache_bytes(config, 9, batch=2, source_length=5)
    assert sizes[H] == sizes[kv_heads] * (H // kv_heads)


@pytest.mark.parametrize(
    "value, message",
    [
        (3, r"^num_kv_heads \(3\) must divide num_heads \(4\)"),
        (0, r"^num_kv_heads must be an integer >= 1 or None, got 0"),
        ("2", r"^num_kv_heads must be an integer >= 1 or None, got '2'"),
        (True, r"^num_kv_heads must be an integer >= 1 or None, got True"),
    ],
)
def test_bad_num_kv_heads_raise(fw, value, message):
    with pytest.raises(ValueError, match=message) as info:
        fw.module.MultiHeadAttention(D, H, num_kv_heads=value)
    assert info.value.arguments[0] == "num_kv_heads"


@pytest.mark.parametrize(
    "value, message",
    [
        (3, r"TransformerConfig\.num_kv_heads \(3\) must divide num_heads \(4\).*\[1, 2, 4\]"),
        (0, r"TransformerConfig\.num_kv_heads must be an integer >= 1 or None, got 0"),
        (2.0, r"TransformerConfig\.num_kv_heads must be an integer >= 1 or None, got 2\.0"),
    ],
)
def test_bad_config_num_kv_heads_raise(value, message):
    with pytest.raises(ValueError, match=message) as info:
        TransformerConfig(d_model=32, num_heads=4, num_kv_heads=value)
    assert info.value.arguments[0] == "num_kv_heads"


def test_config_round_trips_num_kv_heads():
    config = TransformerConfig(num_kv_heads=2)
    assert TransformerConfig.from_dict(config.to_dict()) == config
    assert TransformerConfig.from_dict({k: v for k, v in config.to_dict().items() if k != "num_kv_heads"}) == (
        config.replace(num_kv_heads=None)
    )


def test_checkpoints_written_before_num_kv_heads_still_load(tmp_path):
    """A header without num_kv_heads (every checkpoint shipped before it) means None: one kv head per query head."""
    import txcourse.torch as txt
    from txcourse.training.checkpoint import read_checkpoint, write_checkpoint

    shipped = Path(__file__).resolve().parents[2] / "book" / "data" / "numbers-transformer-torch.npz"
    meta, arrays = read_checkpoint(shipped)
    assert "num_kv_heads" not in meta["model"]["config"]  # the shipped file predates the field
    model, _ = txt.load_model(str(shipped))
    assert all(layer.self_attn.num_kv_heads == layer.self_attn.num_heads for layer in model.encoder.layers)
    # the same weights under a header that says num_kv_heads=2 do not fit: w_k has another shape
    header = {key: value for key, value in meta.items() if key != "format"}
    header["model"] = {**meta["model"], "config": {**meta["model"]["config"], "num_kv_heads": 2}}
    write_checkpoint(tmp_path / "gqa.npz", header, arrays)
    with pytest.raises(ValueError, match=r"does not fit the model: .*w_k\.weight has shape"):
        txt.load_model(str(tmp_path / "gqa.npz"))
