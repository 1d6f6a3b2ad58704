"""The fused path (TransformerConfig.fused) gives the teaching path's numbers, to 1e-5."""

import numpy as np
import pytest
from conftest import Framework, assert_close, small_config
from support.references import inputs


@pytest.mark.parametrize("norm_first", [False, True])
def test_torch_fused_matches_teaching_path(norm_first):
    import torch

    pt = Framework("torch")
    cfg = small_config(norm_first=norm_first, dropout=0.0)
    torch.manual_seed(0)
    teaching = pt.module.Transformer(cfg)
    fused = pt.module.Transformer(cfg.replace(fused=True))
    fused.load_state_dict(teaching.state_dict())
    d = inputs(cfg)
    d["src"][0] = 0  # a fully padded source row: zeros, not NaN, on both paths
    src, tgt = pt.tensor(d["src"]), pt.tensor(d["tgt"])
    a, b = teaching(src, tgt), fused(src, tgt)
    assert np.isfinite(pt.numpy(b)).all()
    assert_close(pt.numpy(b), pt.numpy(a), atol=1e-5, what="fused vs teaching logits")
    a.square().mean().backward()
    b.square().mean().backward()
    for (name, p), q in zip(teaching.named_parameters(), fused.parameters()):
        assert_close(q.grad.numpy(), p.grad.numpy(), atol=1e-5, what=f"gradient of {name}")


def test_torch_fused_attention_function_matches():
    pt = Framework("torch")
    from txcourse.torch.attention import fused_attention

    rng = np.random.default_rng(0)
    q, k, v = (pt.tensor(rng.normal(size=(2, 3, 5, 8)).astype(np.float32)) for _ in range(3))
    mask = pt.tensor(np.array([[[[0, 0, 1, 1, 1]]], [[[1, 1, 1, 1, 1]]]], bool))
    expected, _ = pt.module.scaled_dot_product_attention(q, k, v, mask)
    assert_close(pt.numpy(fused_attention(q, k, v, mask)), pt.numpy(expected), atol=1e-6, what="fused_attention")
    assert_close(
        pt.numpy(fused_attention(q, k, v)),
        pt.numpy(pt.module.scaled_dot_product_attention(q, k, v)[0]),
        atol=1e-6,
        what="fused_attention without mask",
    )


def test_tf_fused_xla_matches_teaching_path():
    import tensorflow as tf

    k = Framework("tf")
    cfg = small_config(norm_first=True, dropout=0.0)
    teaching = k.module.Transformer(cfg)
    fused = k.module.Transformer(cfg.replace(fused=True))
    fused.set_weights(teaching.get_weights())
    d = inputs(cfg)
    src, tgt = k.tensor(d["src"]), k.tensor(d["tgt"])
    compiled = tf.function(lambda s, t: fused(s, t), jit_compile=True)
    assert_close(compiled(src, tgt).numpy(), teaching(src, tgt).numpy(), atol=1e-5, what="XLA fused vs teaching")


def test_fused_decoding_gives_the_same_tokens(fw):
    from importlib import import_module

    decode = import_module(f"txcourse.{fw.name}.decode")
    cfg = small_config(dropout=0.0)
    teaching = fw.eval(fw.module.Transformer(cfg))
    fused = fw.eval(fw.module.Transformer(cfg.replace(fused=True)))
    if fw.name == "torch":
        fused.load_state_dict(teaching.state_dict())
    else:
        fused.set_weights(teaching.get_weights())
    src = fw.tensor(inputs(cfg)["src"])
    a = decode.greedy_decode(teaching, src, max_len=8)
    b = decode.greedy_decode(fused, src, max_len=8)
    assert (fw.numpy(a.tokens) == fw.numpy(b.tokens)).all()
    assert b.attention is None and a.attention is not None


@pytest.mark.parametrize(
    "fused,device,expected",
    [(True, "/GPU:0", True), (True, "/gpu:1", True), (True, "/CPU:0", False), (False, "/GPU:0", False)],
)
def test_tf_trainer_compiles_with_xla_only_the_fused_path_on_a_gpu(fused, device, expected):
    """benchmarks/train_step.py times the TF fused path through this rule (and XLA forced, in a row of its own)."""
    from txcourse.tf.train import uses_xla

    assert uses_xla(fused, device) is expected
