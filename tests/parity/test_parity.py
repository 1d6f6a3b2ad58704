"""PyTorch and TensorFlow agree to 1e-5 in float32 for every layer, after converting weights.

Each case builds the layer in both frameworks, checks that the fresh
(independently initialised) layers disagree, copies the weights in one
direction and checks that they then agree. Failures print the largest
difference and its index.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import Framework, assert_close, small_config
from support.references import inputs

from txcourse.config import Seq2SeqConfig, TransformerConfig
from txcourse.convert import tf_to_torch, torch_to_tf

ATOL = 1e-5


def _gru_config(c: TransformerConfig) -> Seq2SeqConfig:
    """The GRU models' sizes for the vocabularies of ``c``."""
    return Seq2SeqConfig(c.src_vocab_size, c.tgt_vocab_size, embedding_dim=12, units=16)


CONFIGS = {
    "post-LN tied": small_config(),
    "pre-LN untied": small_config(
        norm_first=True,
        tie_embeddings=False,
        d_model=24,
        num_heads=3,
        d_ff=40,
        num_encoder_layers=1,
        num_decoder_layers=3,
        src_vocab_size=31,
        tgt_vocab_size=17,
    ),
    "one head, deep encoder": small_config(
        d_model=16, num_heads=1, num_encoder_layers=3, num_decoder_layers=1, layer_norm_eps=1e-5
    ),
}


# name -> (build(module, cfg), run(fw, layer, data) -> list of arrays to compare)
def leaves_of(result) -> list:
    """Every tensor of a layer's result (an AttentionOutput: output, cache, weights), in order, Nones left out."""
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in leaves_of(item)]
    return [] if result is None else [result]


def mha_self(fw, layer, d):
    mask = fw.module.padding_mask(fw.tensor(d["tgt"]))
    return leaves_of(layer(fw.tensor(d["x"]), fw.tensor(d["x"]), fw.tensor(d["x"]), mask, return_weights=True))


def _mha_cross(fw, layer, d):
    mask = fw.module.padding_mask(fw.tensor(d["src"]))
    return leaves_of(
        layer(fw.tensor(d["x"]), fw.tensor(d["memory"]), fw.tensor(d["memory"]), mask, return_weights=True)
    )


def mha_causal(fw, layer, d):
    x = fw.tensor(d["x"])
    return leaves_of(layer(x, x, x, fw.module.look_ahead_mask(5), return_weights=True))


def _mha_cached(fw, layer, d):
    """Two positions after three cached ones; then a static cache (the memory projected once), attended as it is."""
    x = d["x"]
    cache = layer.project_key_value(fw.tensor(x[:, :3]), fw.tensor(x[:, :3]))
    step = layer(
        fw.tensor(x[:, 3:]),
        fw.tensor(x[:, 3:]),
        fw.tensor(x[:, 3:]),
        fw.module.look_ahead_mask(2, 3),
        cache,
        return_weights=True,
    )
    memory = layer.project_key_value(fw.tensor(d["memory"]), fw.tensor(d["memory"]))
    return leaves_of(step) + leaves_of(layer(fw.tensor(x[:, 3:]), None, None, None, memory, return_weights=True))


def decoder_masks(fw, d):
    self_mask = fw.module.look_ahead_mask(5)
    if fw.name == "torch":
        self_mask = self_mask | fw.module.padding_mask(fw.tensor(d["tgt"]))
    else:
        self_mask = fw.lib.logical_or(self_mask, fw.module.padding_mask(fw.tensor(d["tgt"])))
    return self_mask, fw.module.padding_mask(fw.tensor(d["src"]))


def decoder_cached(fw, layer, d):
    """Two decoding steps through the cache: outputs, every cached key and value, every weight."""
    memory, (_, cross_mask) = fw.tensor(d["memory"]), decoder_masks(fw, d)
    cache, leaves = layer.init_cache(memory), []
    for t in range(2):
        step = layer(
            fw.tensor(d["tgt"][:, t : t + 1]),
            memory,
            fw.module.look_ahead_mask(1, t),
            cross_mask,
            cache,
            return_weights=True,
        )
        cache, leaves = step.cache, leaves + leaves_of(step)
    return leaves


def _seq2seq_decoder(fw, layer, d):
    mask = fw.tensor(d["src"] == 0)
    logits, weights = layer(fw.tensor(d["tgt"]), fw.tensor(d["values"]), fw.tensor(d["state"]), mask)
    return [logits] + ([] if weights is None else [weights])


CASES = {
    "PositionalEncoding": (
        lambda m, c: m.PositionalEncoding(c.max_len, c.d_model),
        lambda fw, l, d: [l(fw.tensor(d["x"]))],
    ),
    "TransformerEmbedding": (
        lambda m, c: m.TransformerEmbedding(c),
        lambda fw, l, d: [l(fw.tensor(d["src"]))],
    ),
    "PositionwiseFeedForward": (
        lambda m, c: m.PositionwiseFeedForward(c.d_model, c.d_ff),
        lambda fw, l, d: [l(fw.tensor(d["x"]))],
    ),
    "MultiHeadAttention self, padding mask": (lambda m, c: m.MultiHeadAttention(c.d_model, c.num_heads), mha_self),
    "MultiHeadAttention cross, T_q != T_k": (lambda m, c: m.MultiHeadAttention(c.d_model, c.num_heads), _mha_cross),
    "MultiHeadAttention look-ahead": (lambda m, c: m.MultiHeadAttention(c.d_model, c.num_heads), mha_causal),
    "MultiHeadAttention with caches": (lambda m, c: m.MultiHeadAttention(c.d_model, c.num_heads), _mha_cached),
    "EncoderLayer": (
        lambda m, c: m.EncoderLayer(c),
        lambda fw, l, d: leaves_of(
            l(fw.tensor(d["memory"]), fw.module.padding_mask(fw.tensor(d["src"])), return_weights=True)
        ),
    ),
    "DecoderLayer": (
        lambda m, c: m.DecoderLayer(c),
        lambda fw, l, d: leaves_of(
            l(fw.tensor(d["x"]), fw.tensor(d["memory"]), *decoder_masks(fw, d), return_weights=True)
        ),
    ),
    "Encoder": (
        lambda m, c: m.Encoder(c),
        lambda fw, l, d: leaves_of(
            l(fw.tensor(d["src"]), fw.module.padding_mask(fw.tensor(d["src"])), return_weights=True)
        ),
    ),
    "Decoder": (
        lambda m, c: m.Decoder(c),
        lambda fw, l, d: leaves_of(
            l(fw.tensor(d["tgt"]), fw.tensor(d["memory"]), *decoder_masks(fw, d), return_weights=True)
        ),
    ),
    "Decoder, cached steps": (lambda m, c: m.Decoder(c), decoder_cached),
    "Transformer": (lambda m, c: m.Transformer(c), lambda fw, l, d: [l(fw.tensor(d["src"]), fw.tensor(d["tgt"]))]),
    "BahdanauAttention": (
        lambda m, c: m.BahdanauAttention(16),
        lambda fw, l, d: list(l(fw.tensor(d["state"]), fw.tensor(d["values"]), fw.tensor(d["src"] == 0))),
    ),
    "Seq2SeqEncoder": (
        lambda m, c: m.Seq2SeqEncoder(_gru_config(c)),
        lambda fw, l, d: list(l(fw.tensor(d["src"]))),
    ),
    "Seq2SeqDecoder attention": (
        lambda m, c: m.Seq2SeqDecoder(_gru_config(c), attention=True),
        _seq2seq_decoder,
    ),
    "Seq2SeqDecoder fixed context": (
        lambda m, c: m.Seq2SeqDecoder(_gru_config(c), attention=False),
        _seq2seq_decoder,
    ),
    "Seq2Seq attention": (
        lambda m, c: m.Seq2Seq(_gru_config(c), attention=True),
        lambda fw, l, d: list(l(fw.tensor(d["src"]), fw.tensor(d["tgt"]), return_weights=True)),
    ),
    "Seq2Seq fixed context": (
        lambda m, c: m.Seq2Seq(_gru_config(c), attention=False),
        lambda fw, l, d: [l(fw.tensor(d["src"]), fw.tensor(d["tgt"]))],
    ),
}


@pytest.mark.parametrize("direction", ["torch_to_tf", "tf_to_torch"])
@pytest.mark.parametrize("config_name", list(CONFIGS))
@pytest.mark.parametrize("case", list(CASES))
def test_layer_parity(case, config_name, direction):
    import torch

    cfg = CONFIGS[config_name]
    build, run = CASES[case]
    pt, tf = Framework("torch"), Framework("tf")
    torch.manual_seed(0)
    t_layer = pt.eval(build(pt.module, cfg))
    k_layer = build(tf.module, cfg)
    data = inputs(cfg)
    has_weights = any(True for _ in t_layer.parameters())

    with torch.no_grad():
        before = [pt.numpy(o) for o in run(pt, t_layer, data)]
    k_before = [tf.numpy(o) for o in run(tf, k_layer, data)]
    if has_weights:  # independent initialisations must disagree, or this test could not fail
        assert max(np.abs(a - b).max() for a, b in zip(before, k_before)) > 1e-3

    if direction == "torch_to_tf":
        torch_to_tf(t_layer, k_layer)
    else:
        tf_to_torch(k_layer, t_layer)
    with torch.no_grad():
        t_out = [pt.numpy(o) for o in run(pt, t_layer, data)]
    k_out = [tf.numpy(o) for o in run(tf, k_layer, data)]
    assert len(t_out) == len(k_out)
    for i, (a, b) in enumerate(zip(t_out, k_out)):
        assert_close(b, a, atol=ATOL, what=f"{case} [{config_name}, {direction}] output {i}")


def test_parity_in_training_mode_without_dropout():
    """Gradients agree too: the same loss, the same gradient for every converted weight."""
    import tensorflow as tf
    import torch

    cfg = small_config(dropout=0.0, norm_first=True, tie_embeddings=False)
    pt, k = Framework("torch"), Framework("tf")
    torch.manual_seed(1)
    t_model = pt.module.Transformer(cfg)
    k_model = k.module.Transformer(cfg)
    torch_to_tf(t_model, k_model)
    d = inputs(cfg, seed=3)
    t_loss = t_model(pt.tensor(d["src"]), pt.tensor(d["tgt"])).square().mean()
    t_loss.backward()
    with tf.GradientTape() as tape:
        k_loss = tf.reduce_mean(tf.square(k_model(k.tensor(d["src"]), k.tensor(d["tgt"]), training=True)))
    grads = tape.gradient(k_loss, k_model.trainable_weights)
    assert_close(k_loss.numpy(), t_loss.item(), atol=1e-5, what="loss")
    t_grad = {id(v): g for v, g in zip(k_model.trainable_weights, grads)}
    w_q = t_model.encoder.layers[0].self_attn.w_q
    k_w_q = k_model.encoder.layers[0].self_attn.w_q
    assert_close(t_grad[id(k_w_q.kernel)].numpy(), w_q.weight.grad.numpy().T, atol=1e-5, what="dL/dW^Q")
    out = t_model.output_projection
    assert_close(
        t_grad[id(k_model.output_projection.kernel)].numpy(),
        out.weight.grad.numpy().T,
        atol=1e-5,
        what="dL/d output projection",
    )


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(d_ff=48), r"^Transformer: the two models' configs differ in d_ff \(PyTorch 64, Keras 48\)"),
        (dict(num_encoder_layers=1), r"configs differ in num_encoder_layers \(PyTorch 2, Keras 1\)"),
        (dict(tie_embeddings=False), r"configs differ in tie_embeddings \(PyTorch True, Keras False\)"),
        (dict(layer_norm_eps=1e-5), r"configs differ in layer_norm_eps \(PyTorch 1e-06, Keras 1e-05\)"),
    ],
)
def test_converter_names_the_mismatch(change, message):
    pt, k = Framework("torch"), Framework("tf")
    t_model = pt.module.Transformer(small_config())
    k_model = k.module.Transformer(small_config(**change))
    with pytest.raises(ValueError, match=message):
        torch_to_tf(t_model, k_model)


@pytest.mark.parametrize(
    "keras_args, message",
    [
        (dict(d_ff=12), r"EncoderLayer\.feed_forward\.w_1\.weight: shape mismatch"),
        (dict(layer_norm_eps=1e-5), r"EncoderLayer\.self_attn_norm: epsilon mismatch"),
        (dict(norm_first=True), r"EncoderLayer: the two layers differ in norm_first \(PyTorch False, Keras True\)"),
    ],
)
def test_converter_names_the_mismatched_sublayer(keras_args, message):
    """Layers without a config: the walk names the path of the first weight (or attribute) that differs."""
    pt, k = Framework("torch"), Framework("tf")
    with pytest.raises(ValueError, match=message):
        layer = TransformerConfig(d_model=8, num_heads=2, d_ff=16)
        torch_to_tf(pt.module.EncoderLayer(layer), k.module.EncoderLayer(layer.replace(**keras_args)))


def test_converter_missing_sublayer_and_wrong_kind():
    pt, k = Framework("torch"), Framework("tf")
    gru = Seq2SeqConfig(src_vocab_size=9, tgt_vocab_size=9, embedding_dim=4, units=8)
    with pytest.raises(ValueError, match=r"Seq2SeqDecoder\.attention: the Keras layer Seq2SeqDecoder has no sublayer"):
        tf_to_torch(k.module.Seq2SeqDecoder(gru, attention=False), pt.module.Seq2SeqDecoder(gru, attention=True))
    with pytest.raises(ValueError, match=r"expected a Keras Dense"):
        torch_to_tf(pt.module.PositionwiseFeedForward(8, 16), _Odd())


class _Odd:
    """A fake Keras layer whose w_1 is not a Dense."""

    weights: list = []

    def __init__(self):
        import keras

        self.w_1 = keras.layers.LayerNormalization()
        self.w_2 = self.w_1
