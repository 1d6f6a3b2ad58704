"""txcourse.evaluation.accounting against the real models: parameters of both frameworks, FLOPs of PyTorch's counter.

The account is arithmetic on the config; these tests build the models the
package ships and count what they hold (PyTorch ``parameters()``, Keras
``count_params()``, per component by attribute path) and what they compute
(``torch.utils.flop_counter.FlopCounterMode``, per module).
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import re

import pytest
import tensorflow as tf
import torch
from torch.utils.flop_counter import FlopCounterMode

import txcourse.tf as txf
import txcourse.torch as txt
from txcourse import TransformerConfig
from txcourse.evaluation.accounting import count_parameters, forward_flops, kv_cache_bytes

SMALL = TransformerConfig(
    src_vocab_size=23,
    tgt_vocab_size=19,
    d_model=16,
    num_heads=2,
    num_encoder_layers=2,
    num_decoder_layers=3,
    d_ff=40,
    max_len=64,
)
CONFIGS = {
    "small-tied": SMALL,
    "small-untied": SMALL.replace(tie_embeddings=False),
    "small-pre-ln": SMALL.replace(norm_first=True, tie_embeddings=False),
    "odd-sizes": SMALL.replace(
        d_model=24, num_heads=3, d_ff=17, num_encoder_layers=1, num_decoder_layers=1, norm_first=True
    ),
    "no-encoder-layers": SMALL.replace(num_encoder_layers=0, num_decoder_layers=1),
    "multi-query": SMALL.replace(num_kv_heads=1),
    "grouped-query": SMALL.replace(d_model=24, num_heads=6, num_kv_heads=2, norm_first=True, tie_embeddings=False),
}


def _walk(obj, path: str):
    """Follow ``encoder.layers`` etc.; a missing or None attribute yields None."""
    for name in path.split("."):
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def _component_counts(model, keys, count) -> dict[str, int]:
    """Parameters per accounting key, summed over ``layers`` (the key without the layer index)."""
    counts = {}
    for key in keys:
        stack, _, leaf = key.partition(".")
        if key == "output_projection" or leaf in ("embedding", "final_norm"):
            part = _walk(model, key)
            counts[key] = 0 if part is None else count(part)
        else:
            counts[key] = sum(count(getattr(layer, leaf)) for layer in _walk(model, f"{stack}.layers"))
    return counts


def _torch_count(module) -> int:
    return sum(p.numel() for p in module.parameters())


def _torch_model(config):
    torch.manual_seed(0)
    return txt.Transformer(config)


def _tf_model(config):
    model = txf.Transformer(config)
    model(tf.ones((1, 3), tf.int32), tf.ones((1, 2), tf.int32))  # Keras builds weights on the first call
    return model


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameters_match_torch_model(name):
    config = CONFIGS[name]
    account = count_parameters(config)
    model = _torch_model(config)
    assert _component_counts(model, account.components, _torch_count) == account.components
    assert account.total == _torch_count(model)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parameters_match_tf_model(name):
    config = CONFIGS[name]
    account = count_parameters(config)
    model = _tf_model(config)
    assert _component_counts(model, account.components, lambda layer: layer.count_params()) == account.components
    assert account.total == model.count_params()


def test_base_model_parameters_both_frameworks():
    """The paper's base model with the course's defaults (37000 tokens on each side, output tied)."""
    config = TransformerConfig()
    account = count_parameters(config)
    assert account.total == _torch_count(_torch_model(config))
    assert account.total == _tf_model(config).count_params()
    assert account.embeddings == 2 * 37000 * 512
    # the paper's single shared matrix: one V x d fewer, about 63 million (Sec. 3.4)
    shared = count_parameters(config, share_source_target=True)
    assert account.total - shared.total == 37000 * 512
    assert 62.5e6 < shared.total < 63.5e6


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_layers_match_torch_nn_transformer():
    """An independent count: torch.nn.Transformer has the same layers plus a final LayerNorm per stack."""
    config = SMALL.replace(norm_first=True)
    reference = torch.nn.Transformer(
        d_model=config.d_model,
        nhead=config.num_heads,
        num_encoder_layers=config.num_encoder_layers,
        num_decoder_layers=config.num_decoder_layers,
        dim_feedforward=config.d_ff,
        norm_first=True,
    )
    assert count_parameters(config).non_embedding == _torch_count(reference)


def test_attention_without_bias_matches_torch_multihead_attention():
    config = SMALL.replace(num_decoder_layers=0)
    account = count_parameters(config, attention_bias=False)
    reference = torch.nn.MultiheadAttention(config.d_model, config.num_heads, bias=False)
    assert account.components["encoder.self_attn"] == config.num_encoder_layers * _torch_count(reference)


def _torch_flops(config, src_len, tgt_len):
    model = _torch_model(config).eval()
    src = torch.randint(1, config.src_vocab_size, (1, src_len))  # no <pad> (id 0)
    tgt = torch.randint(1, config.tgt_vocab_size, (1, tgt_len))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(src, tgt)
    return counter


def _module_sum(per_module: dict[str, int], pattern: str) -> int:
    regex = re.compile(pattern)
    return sum(v for k, v in per_module.items() if regex.fullmatch(k))


@pytest.mark.parametrize(
    "name,src_len,tgt_len",
    [
        ("small-tied", 5, 7),
        ("small-untied", 9, 3),
        ("odd-sizes", 1, 1),
        ("no-encoder-layers", 4, 6),
        ("multi-query", 6, 4),
        ("grouped-query", 3, 8),
    ],
)
def test_flops_match_torch_flop_counter(name, src_len, tgt_len):
    config = CONFIGS[name]
    account = forward_flops(config, src_len, tgt_len)
    counter = _torch_flops(config, src_len, tgt_len)
    per_module = {k: sum(v.values()) for k, v in counter.get_flop_counts().items()}
    assert account.total == counter.get_total_flops()
    layer = r"Transformer\.{}\.layers\.\d+\.{}"
    c = account.components
    for stack, sub in (("encoder", "self_attn"), ("decoder", "self_attn"), ("decoder", "cross_attn")):
        projections = _module_sum(per_module, layer.format(stack, sub) + r"\.w_[qkvo]")
        assert projections == c[f"{stack}.{sub}.projections"], (stack, sub)
        assert (
            _module_sum(per_module, layer.format(stack, sub)) - projections
            == c[f"{stack}.{sub}.scores"] + c[f"{stack}.{sub}.mix"]
        ), (stack, sub)
    for stack in ("encoder", "decoder"):
        assert _module_sum(per_module, layer.format(stack, "feed_forward")) == c[f"{stack}.feed_forward"]
    outside = (
        per_module.get("Transformer", 0)
        - per_module.get("Transformer.encoder", 0)
        - per_module.get("Transformer.decoder", 0)
    )
    assert outside == c["output_projection"]


def test_attention_terms_grow_quadratically():
    config = TransformerConfig()
    short, long = forward_flops(config, 10, 10), forward_flops(config, 20, 20)
    assert long.attention == 4 * short.attention
    assert long.linear == 2 * short.linear
    assert short.total == short.attention + short.linear
    assert short.per_token == short.total / 20


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="config must be a TransformerConfig"):
        count_parameters({"d_model": 512})
    with pytest.raises(ValueError, match="share_source_target=True needs one vocabulary.*23.*19"):
        count_parameters(SMALL, share_source_target=True)
    with pytest.raises(ValueError, match="attention_bias must be True or False, got 'no'"):
        count_parameters(SMALL, attention_bias="no")
    with pytest.raises(ValueError, match="src_len must be an integer >= 1.*got 0"):
        forward_flops(SMALL, 0, 3)
    with pytest.raises(ValueError, match="tgt_len must be an integer >= 1.*got 2.5"):
        forward_flops(SMALL, 3, 2.5)


def test_numbers_stated_in_why_self_attention():
    """The prose of book/why_self_attention.md states rounded counts; they must match the account."""
    import pathlib

    page = (pathlib.Path(__file__).resolve().parents[2] / "book" / "why_self_attention.md").read_text()
    base = TransformerConfig()
    shared = count_parameters(base, share_source_target=True)
    untied = count_parameters(base.replace(tie_embeddings=False))
    big = count_parameters(TransformerConfig(d_model=1024, num_heads=16, d_ff=4096), share_source_target=True)
    vocabulary_for_65m = (65e6 - shared.non_embedding) / base.d_model
    vocabulary_for_213m = base.src_vocab_size + (213e6 - big.total) / 1024
    stated = {
        "about 63 million parameters": round(shared.total / 1e6) == 63,
        "The layers alone are 44 million": round(shared.non_embedding / 1e6) == 44,
        "one above and one below 37,000, so no single vocabulary does": vocabulary_for_65m
        > 37_000
        > vocabulary_for_213m,
        "about 214 million for the big model": round(big.total / 1e6) == 214,
        "the base model would have 101 million": round(untied.total / 1e6) == 101,
        "a few tens of thousands": 10_000
        < shared.total - count_parameters(base, share_source_target=True, attention_bias=False).total
        < 100_000,
    }
    for phrase, holds in stated.items():
        assert phrase in " ".join(page.split()), f"the page no longer says {phrase!r}: update this test"
        assert holds, f"the page says {phrase!r}, the account disagrees"


def test_grouped_query_attention_shrinks_w_k_and_w_v_only():
    """H_kv = H / g: W^K and W^V (and their biases) lose (1 - 1/g) of their parameters; W^Q and W^O keep theirs."""
    base = TransformerConfig()
    for kv_heads in (1, 2, 4):
        saved = (
            count_parameters(base).components["encoder.self_attn"]
            - (count_parameters(base.replace(num_kv_heads=kv_heads)).components["encoder.self_attn"])
        )
        kv_width = kv_heads * base.d_k
        assert saved == base.num_encoder_layers * 2 * (base.d_model + 1) * (base.d_model - kv_width)
    assert count_parameters(base.replace(num_kv_heads=8)) == count_parameters(base)


def test_kv_cache_bytes_formula():
    """2 (K and V) x layers x batch x H_kv x positions x d_k x bytes; 24 KiB a position for the base model."""
    base = TransformerConfig()
    assert kv_cache_bytes(base, 1) == 2 * 6 * 8 * 64 * 4 == 24 * 1024
    assert kv_cache_bytes(base, 100, batch=3, bytes_per_value=2) == 3 * 100 * 2 * 6 * 512 * 2
    assert kv_cache_bytes(base, 10, source_length=30) == kv_cache_bytes(base, 40)
    assert kv_cache_bytes(base, 0) == 0
    assert kv_cache_bytes(base.replace(num_kv_heads=2), 50) * 4 == kv_cache_bytes(base, 50)
    assert kv_cache_bytes(base.replace(num_kv_heads=1), 50) * 8 == kv_cache_bytes(base, 50)
    assert kv_cache_bytes(base.replace(num_decoder_layers=0), 50) == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(length=-1), r"length must be an integer >= 0, got -1"),
        (dict(length=2.0), r"length must be an integer >= 0, got 2\.0"),
        (dict(length=3, batch=0), r"batch must be an integer >= 1, got 0"),
        (dict(length=3, bytes_per_value=0), r"bytes_per_value must be an integer >= 1, got 0"),
        (dict(length=3, source_length=-2), r"source_length must be an integer >= 0, got -2"),
    ],
)
def test_kv_cache_bytes_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kv_cache_bytes(SMALL, **kwargs)
    with pytest.raises(ValueError, match="config must be a TransformerConfig"):
        kv_cache_bytes({"d_model": 16}, 3)
