"""Training-step time and peak memory of txcourse's Transformer against the frameworks' own layers.

One training step = forward, the masked label-smoothed loss, backward and
an Adam update, in train mode (dropout on). Per framework three models of
the same size, trained on the same batch:

PyTorch
    * txcourse teaching path: ``txcourse.torch.Transformer`` (matmul + masked softmax);
    * txcourse fused path: the same with ``TransformerConfig(fused=True)``
      (``F.scaled_dot_product_attention``);
    * reference: ``torch.nn.Transformer`` with the same embeddings
      (``nn.Embedding`` x sqrt(d) + txcourse's sinusoidal table), the same
      output layer (tied to the target embedding, or an ``nn.Linear``) and
      the same masks (``tgt_mask`` look-ahead, ``src_key_padding_mask``,
      ``tgt_key_padding_mask``, ``memory_key_padding_mask``).

TensorFlow
    * txcourse teaching path: ``txcourse.tf.Transformer``, step in ``tf.function``;
    * txcourse fused path: ``fused=True``, the step compiled as the Trainer
      compiles it (``txcourse.tf.train.uses_xla``): with XLA
      (``jit_compile=True``) on a GPU, a plain ``tf.function`` on a CPU;
    * txcourse fused path with XLA forced (``jit_compile=True``) on any device;
    * reference: a Keras model built from ``keras.layers.MultiHeadAttention``,
      ``LayerNormalization`` and ``Dense`` with the same embeddings, output
      layer and masks, step in ``tf.function`` (no XLA).

So that the references compute the same function as ours, they are cut
to our architecture: ``nn.Transformer``'s final encoder/decoder LayerNorms
are removed for post-LN (ours has none; pre-LN keeps them, ours has
``final_norm`` too), and the dropouts ours does not have (on the attention
probabilities and inside the FFN) are set to 0. Before timing, our
teaching path's weights are copied into the other two models and the
logits compared in inference mode; the table states the largest
difference.

Timing: all models live in one process; every repeat runs one step of
each model in turn (rotating who goes first), and the table gives the
median over the repeats, after warm-up steps (which also trace / compile
the TensorFlow steps). Peak memory: each model trains a few steps in its
own subprocess; the figure is that process's peak resident set size
(Linux VmHWM, reset just before the model is built; ``ru_maxrss``
elsewhere) minus its resident size at that moment (the framework already
imported and initialised), i.e. weights, gradients, Adam moments,
activations and, for XLA, the compiler's own working memory.

    python benchmarks/train_step.py [--framework torch tf] [--repeats 10] [--warmup 2]
        [--batch 64] [--length 32] [--vocab 8000] [--threads N] [--quick] [--no-memory]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any, Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
from bench_config import bench_config

from txcourse.backends import set_threads
from txcourse.config import TransformerConfig
from txcourse.data.vocab import EOS_ID, PAD_ID, SOS_ID
from txcourse.registry import FRAMEWORKS
from txcourse.training import TrainConfig

MODELS = {"torch": ("teaching", "fused", "reference"), "tf": ("teaching", "fused", "xla", "reference")}
LABELS = {
    "torch": {
        "teaching": "txcourse teaching path",
        "fused": "txcourse fused path (F.sdpa)",
        "reference": "reference: torch.nn.Transformer",
    },
    "tf": {
        "teaching": "txcourse teaching path (tf.function)",
        "fused": "txcourse fused path, compiled as the Trainer does (XLA on a GPU only)",
        "xla": "txcourse fused path, XLA forced (tf.function, jit_compile=True)",
        "reference": "reference: keras.layers.MultiHeadAttention (tf.function)",
    },
}
SMOOTHING = 0.1
LEARNING_RATE = 1e-4  # a constant rate: the schedule is not what is measured
ADAM = TrainConfig()  # betas (0.9, 0.98), eps 1e-9 as in the paper (Sec. 5.3)
AGREEMENT_TOL = 1e-3  # largest |logits difference| (float32) accepted before a warning
MEMORY_STEPS = 3


def make_config(args: argparse.Namespace) -> TransformerConfig:
    return bench_config(
        args.vocab, max_len=max(512, args.length), norm_first=args.norm_first, tie_embeddings=not args.untied
    )


def make_batch(batch: int, length: int, vocab: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A padded batch: lengths drawn in [length/2, length], ids in [4, vocab); decoder input starts with <sos>.

    Every row keeps at least one real token, so no attention row is fully masked.
    """
    rng = np.random.default_rng(seed)
    src = np.full((batch, length), PAD_ID, np.int64)
    tgt_in = np.full((batch, length), PAD_ID, np.int64)
    tgt_out = np.full((batch, length), PAD_ID, np.int64)
    for row in range(batch):
        n_src, n_tgt = rng.integers(max(1, length // 2), length + 1, size=2)
        src[row, :n_src] = rng.integers(4, vocab, size=n_src)
        words = rng.integers(4, vocab, size=n_tgt - 1)
        tgt_in[row, 0], tgt_in[row, 1:n_tgt] = SOS_ID, words
        tgt_out[row, : n_tgt - 1], tgt_out[row, n_tgt - 1] = words, EOS_ID
    return src, tgt_in, tgt_out


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------


def torch_reference(cfg: TransformerConfig) -> Any:
    """``torch.nn.Transformer`` wrapped with txcourse's embeddings, output layer and masks."""
    import warnings

    import torch
    import torch.nn.functional as F
    from torch import nn

    from txcourse.torch.masks import look_ahead_mask
    from txcourse.torch.positional import positional_encoding

    class TorchReference(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            d = cfg.d_model
            self.src_embedding = nn.Embedding(cfg.src_vocab_size, d)
            self.tgt_embedding = nn.Embedding(cfg.tgt_vocab_size, d)
            for emb in (self.src_embedding, self.tgt_embedding):
                nn.init.normal_(emb.weight, std=d**-0.5)
            self.register_buffer("pe", positional_encoding(cfg.max_len, d), persistent=False)  # (max_len, D)
            self.src_dropout, self.tgt_dropout = nn.Dropout(cfg.dropout), nn.Dropout(cfg.dropout)
            with warnings.catch_warnings():  # pre-LN: "enable_nested_tensor is True, but ..." (eval fast path only)
                warnings.simplefilter("ignore", UserWarning)
                self.transformer = nn.Transformer(
                    d,
                    cfg.num_heads,
                    cfg.num_encoder_layers,
                    cfg.num_decoder_layers,
                    cfg.d_ff,
                    cfg.dropout,
                    batch_first=True,
                    norm_first=cfg.norm_first,
                    layer_norm_eps=cfg.layer_norm_eps,
                )
            if not cfg.norm_first:  # post-LN: every layer already ends with a LayerNorm; ours adds none
                self.transformer.encoder.norm = None
                self.transformer.decoder.norm = None
            for layer in [*self.transformer.encoder.layers, *self.transformer.decoder.layers]:
                layer.dropout = nn.Identity()  # the dropout inside the FFN: ours has none
                layer.self_attn.dropout = 0.0  # dropout on attention probabilities: ours has none
                if hasattr(layer, "multihead_attn"):
                    layer.multihead_attn.dropout = 0.0
            self.output_projection = None if cfg.tie_embeddings else nn.Linear(d, cfg.tgt_vocab_size)

        def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
            scale = math.sqrt(cfg.d_model)
            x = self.src_dropout(self.src_embedding(src) * scale + self.pe[: src.shape[1]])  # (B, T_src, D)
            y = self.tgt_dropout(self.tgt_embedding(tgt) * scale + self.pe[: tgt.shape[1]])  # (B, T_tgt, D)
            src_pad, tgt_pad = src == cfg.pad_id, tgt == cfg.pad_id  # True = padding, ignored as a key
            h = self.transformer(
                x,
                y,
                tgt_mask=look_ahead_mask(tgt.shape[1]).to(tgt.device),  # True = may NOT attend
                src_key_padding_mask=src_pad,
                tgt_key_padding_mask=tgt_pad,
                memory_key_padding_mask=src_pad,
            )  # (B, T_tgt, D)
            if self.output_projection is None:
                return F.linear(h, self.tgt_embedding.weight)  # (B, T_tgt, V) tied
            return self.output_projection(h)

    return TorchReference()


def torch_copy_into_reference(ours: Any, ref: Any) -> None:
    """Our teaching model's weights into the nn.Transformer reference (w_q, w_k, w_v -> in_proj)."""
    import torch

    def mha(dst: Any, src: Any) -> None:
        dst.in_proj_weight.copy_(torch.cat([src.w_q.weight, src.w_k.weight, src.w_v.weight]))
        dst.in_proj_bias.copy_(torch.cat([src.w_q.bias, src.w_k.bias, src.w_v.bias]))
        dst.out_proj.weight.copy_(src.w_o.weight)
        dst.out_proj.bias.copy_(src.w_o.bias)

    def same(dst: Any, src: Any) -> None:
        dst.weight.copy_(src.weight)
        if getattr(dst, "bias", None) is not None:
            dst.bias.copy_(src.bias)

    with torch.no_grad():
        same(ref.src_embedding, ours.encoder.embedding.token_embedding)
        same(ref.tgt_embedding, ours.decoder.embedding.token_embedding)
        for r, o in zip(ref.transformer.encoder.layers, ours.encoder.layers):
            mha(r.self_attn, o.self_attn)
            same(r.linear1, o.feed_forward.w_1)
            same(r.linear2, o.feed_forward.w_2)
            same(r.norm1, o.self_attn_norm)
            same(r.norm2, o.feed_forward_norm)
        for r, o in zip(ref.transformer.decoder.layers, ours.decoder.layers):
            mha(r.self_attn, o.self_attn)
            mha(r.multihead_attn, o.cross_attn)
            same(r.linear1, o.feed_forward.w_1)
            same(r.linear2, o.feed_forward.w_2)
            same(r.norm1, o.self_attn_norm)
            same(r.norm2, o.cross_attn_norm)
            same(r.norm3, o.feed_forward_norm)
        if ours.encoder.final_norm is not None:
            same(ref.transformer.encoder.norm, ours.encoder.final_norm)
            same(ref.transformer.decoder.norm, ours.decoder.final_norm)
        if ref.output_projection is not None:
            same(ref.output_projection, ours.output_projection)


class TorchRunner:
    """Adam + the masked label-smoothed loss around a PyTorch model."""

    def __init__(self, model: Any, batch: tuple[np.ndarray, ...]):
        import torch

        from txcourse.torch.loss import label_smoothed_cross_entropy

        self.model = model.train()
        self.loss_fn = label_smoothed_cross_entropy
        self.optimizer = torch.optim.Adam(
            model.parameters(), lr=LEARNING_RATE, betas=ADAM.adam_betas, eps=ADAM.adam_eps
        )
        self.src, self.tgt_in, self.tgt_out = (torch.from_numpy(a) for a in batch)
        self.parameters = sum(p.numel() for p in model.parameters())  # tied weights count once

    def step(self) -> float:
        logits = self.model(self.src, self.tgt_in)  # (B, T_tgt, V)
        loss, _ = self.loss_fn(logits, self.tgt_out, SMOOTHING, PAD_ID)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def eval_logits(self) -> tuple[np.ndarray, float]:
        """Logits and loss in inference mode (no dropout); grad stays on, so nn.Transformer takes its
        ordinary path (its no-grad fast path would zero the memory at padded source positions)."""
        self.model.eval()
        try:
            logits = self.model(self.src, self.tgt_in)
            loss, _ = self.loss_fn(logits, self.tgt_out, SMOOTHING, PAD_ID)
            return logits.detach().numpy(), float(loss.detach())
        finally:
            self.model.train()


def torch_runners(
    cfg: TransformerConfig, batch: tuple[np.ndarray, ...], names=MODELS["torch"], copy_weights: bool = True
) -> dict[str, TorchRunner]:
    import torch

    from txcourse.torch import Transformer

    torch.manual_seed(0)
    models: dict[str, Any] = {}
    for name in names:
        if name == "teaching":
            models[name] = Transformer(cfg)
        elif name == "fused":
            models[name] = Transformer(cfg.replace(fused=True))
        else:
            models[name] = torch_reference(cfg)
    if copy_weights and "teaching" in models:
        if "fused" in models:
            models["fused"].load_state_dict(models["teaching"].state_dict())
        if "reference" in models:
            torch_copy_into_reference(models["teaching"], models["reference"])
    return {name: TorchRunner(model, batch) for name, model in models.items()}


# ---------------------------------------------------------------------------
# TensorFlow
# ---------------------------------------------------------------------------


def tf_loss_function() -> tuple[Callable, str]:
    """txcourse.tf.loss.label_smoothed_cross_entropy, or the same formula inline if that module is missing."""
    try:
        from txcourse.tf.loss import label_smoothed_cross_entropy

        return label_smoothed_cross_entropy, "txcourse.tf.loss.label_smoothed_cross_entropy"
    except ImportError:  # pragma: no cover - older checkouts
        import tensorflow as tf

        def inline(logits, targets, smoothing=0.1, pad_id=0):
            log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)  # (B, T, V)
            nll = -tf.gather(log_probs, targets, axis=-1, batch_dims=2)  # (B, T)
            per_token = (1.0 - smoothing) * nll - smoothing * tf.reduce_mean(log_probs, axis=-1)  # (B, T)
            keep = tf.not_equal(targets, pad_id)  # (B, T)
            count = tf.reduce_sum(tf.cast(keep, tf.int64))
            loss = tf.reduce_sum(tf.where(keep, per_token, 0.0)) / tf.cast(tf.maximum(count, 1), tf.float32)
            return loss, count

        return inline, "inline copy of the PyTorch formula (txcourse.tf.loss missing)"


def keras_reference(cfg: TransformerConfig) -> Any:
    """A Transformer from ``keras.layers.MultiHeadAttention``, ``LayerNormalization`` and ``Dense``."""
    import keras
    import tensorflow as tf

    from txcourse.tf.positional import positional_encoding

    d, h, eps, p = cfg.d_model, cfg.num_heads, cfg.layer_norm_eps, cfg.dropout

    def sublayer(x, f, norm, drop, training):
        """Post-LN: norm(x + drop(f(x))); pre-LN: x + drop(f(norm(x)))."""
        if cfg.norm_first:
            return x + drop(f(norm(x)), training=training)
        return norm(x + drop(f(x), training=training))

    class RefEncoderLayer(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.attn = keras.layers.MultiHeadAttention(h, d // h, dropout=0.0, name="attn")
            self.ffn_1 = keras.layers.Dense(cfg.d_ff, activation="relu", name="ffn_1")
            self.ffn_2 = keras.layers.Dense(d, name="ffn_2")
            self.norm_1 = keras.layers.LayerNormalization(epsilon=eps, name="norm_1")
            self.norm_2 = keras.layers.LayerNormalization(epsilon=eps, name="norm_2")
            self.drop_1, self.drop_2 = keras.layers.Dropout(p), keras.layers.Dropout(p)

        def call(self, x, allowed, training=None):
            # Keras' order is (query, VALUE, KEY); attention_mask True = MAY attend
            x = sublayer(
                x,
                lambda q: self.attn(q, q, q, attention_mask=allowed, training=training),
                self.norm_1,
                self.drop_1,
                training,
            )
            return sublayer(x, lambda z: self.ffn_2(self.ffn_1(z)), self.norm_2, self.drop_2, training)

    class RefDecoderLayer(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.self_attn = keras.layers.MultiHeadAttention(h, d // h, dropout=0.0, name="self_attn")
            self.cross_attn = keras.layers.MultiHeadAttention(h, d // h, dropout=0.0, name="cross_attn")
            self.ffn_1 = keras.layers.Dense(cfg.d_ff, activation="relu", name="ffn_1")
            self.ffn_2 = keras.layers.Dense(d, name="ffn_2")
            self.norm_1 = keras.layers.LayerNormalization(epsilon=eps, name="norm_1")
            self.norm_2 = keras.layers.LayerNormalization(epsilon=eps, name="norm_2")
            self.norm_3 = keras.layers.LayerNormalization(epsilon=eps, name="norm_3")
            self.drop_1, self.drop_2, self.drop_3 = (keras.layers.Dropout(p) for _ in range(3))

        def call(self, y, memory, self_allowed, cross_allowed, training=None):
            y = sublayer(
                y,
                lambda q: self.self_attn(q, q, q, attention_mask=self_allowed, training=training),
                self.norm_1,
                self.drop_1,
                training,
            )
            y = sublayer(
                y,
                lambda q: self.cross_attn(q, memory, memory, attention_mask=cross_allowed, training=training),
                self.norm_2,
                self.drop_2,
                training,
            )
            return sublayer(y, lambda z: self.ffn_2(self.ffn_1(z)), self.norm_3, self.drop_3, training)

    class KerasReference(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            init = keras.initializers.RandomNormal(stddev=d**-0.5)
            self.src_embedding = keras.layers.Embedding(cfg.src_vocab_size, d, embeddings_initializer=init)
            self.tgt_embedding = keras.layers.Embedding(cfg.tgt_vocab_size, d, embeddings_initializer=init)
            self.pe = positional_encoding(cfg.max_len, d)  # (max_len, D) constant
            self.src_drop, self.tgt_drop = keras.layers.Dropout(p), keras.layers.Dropout(p)
            self.enc = [RefEncoderLayer(name=f"enc_{i}") for i in range(cfg.num_encoder_layers)]
            self.dec = [RefDecoderLayer(name=f"dec_{i}") for i in range(cfg.num_decoder_layers)]
            self.enc_norm = keras.layers.LayerNormalization(epsilon=eps) if cfg.norm_first else None
            self.dec_norm = keras.layers.LayerNormalization(epsilon=eps) if cfg.norm_first else None
            self.out = None if cfg.tie_embeddings else keras.layers.Dense(cfg.tgt_vocab_size, name="out")

        def call(self, src, tgt, training=None):
            b, t_src, t_tgt = tf.shape(src)[0], tf.shape(src)[1], tf.shape(tgt)[1]
            src_real, tgt_real = tf.not_equal(src, cfg.pad_id), tf.not_equal(tgt, cfg.pad_id)  # (B, T)
            causal = tf.range(t_tgt)[None, :] <= tf.range(t_tgt)[:, None]  # (T_tgt, T_tgt) key <= query
            enc_allowed = tf.broadcast_to(src_real[:, None, :], (b, t_src, t_src))  # (B, T_src, T_src)
            self_allowed = tf.logical_and(causal[None], tgt_real[:, None, :])  # (B, T_tgt, T_tgt)
            cross_allowed = tf.broadcast_to(src_real[:, None, :], (b, t_tgt, t_src))  # (B, T_tgt, T_src)
            scale = math.sqrt(d)
            x = self.src_drop(self.src_embedding(src) * scale + self.pe[:t_src], training=training)
            for layer in self.enc:
                x = layer(x, enc_allowed, training=training)
            if self.enc_norm is not None:
                x = self.enc_norm(x)
            y = self.tgt_drop(self.tgt_embedding(tgt) * scale + self.pe[:t_tgt], training=training)
            for layer in self.dec:
                y = layer(y, x, self_allowed, cross_allowed, training=training)
            if self.dec_norm is not None:
                y = self.dec_norm(y)
            if self.out is None:
                return tf.einsum("btd,vd->btv", y, self.tgt_embedding.embeddings)  # (B, T_tgt, V) tied
            return self.out(y)

    return KerasReference()


def keras_copy_into_reference(ours: Any, ref: Any) -> None:
    """Our teaching model's weights into the Keras reference (variables found by path, shapes checked)."""
    d, h = ours.config.d_model, ours.config.num_heads
    dk = d // h

    def mha(dst: Any, src: Any) -> None:
        k = {n: (getattr(src, n).kernel.numpy(), getattr(src, n).bias.numpy()) for n in ("w_q", "w_k", "w_v", "w_o")}
        target = {
            "query/kernel": k["w_q"][0].reshape(d, h, dk),
            "query/bias": k["w_q"][1].reshape(h, dk),
            "key/kernel": k["w_k"][0].reshape(d, h, dk),
            "key/bias": k["w_k"][1].reshape(h, dk),
            "value/kernel": k["w_v"][0].reshape(d, h, dk),
            "value/bias": k["w_v"][1].reshape(h, dk),
            "attention_output/kernel": k["w_o"][0].reshape(h, dk, d),
            "attention_output/bias": k["w_o"][1],
        }
        seen = set()
        for var in dst.weights:
            suffix = "/".join(var.path.split("/")[-2:])
            if suffix not in target or tuple(var.shape) != target[suffix].shape:
                raise RuntimeError(f"unexpected Keras MHA variable {var.path} {tuple(var.shape)}")
            var.assign(target[suffix])
            seen.add(suffix)
        if seen != set(target):
            raise RuntimeError(f"Keras MHA variables not found: {sorted(set(target) - seen)}")

    def dense(dst: Any, src: Any) -> None:
        dst.kernel.assign(src.kernel)
        dst.bias.assign(src.bias)

    def norm(dst: Any, src: Any) -> None:
        dst.gamma.assign(src.gamma)
        dst.beta.assign(src.beta)

    ref.src_embedding.embeddings.assign(ours.encoder.embedding.token_embedding.embeddings)
    ref.tgt_embedding.embeddings.assign(ours.decoder.embedding.token_embedding.embeddings)
    for r, o in zip(ref.enc, ours.encoder.layers):
        mha(r.attn, o.self_attn)
        dense(r.ffn_1, o.feed_forward.w_1)
        dense(r.ffn_2, o.feed_forward.w_2)
        norm(r.norm_1, o.self_attn_norm)
        norm(r.norm_2, o.feed_forward_norm)
    for r, o in zip(ref.dec, ours.decoder.layers):
        mha(r.self_attn, o.self_attn)
        mha(r.cross_attn, o.cross_attn)
        dense(r.ffn_1, o.feed_forward.w_1)
        dense(r.ffn_2, o.feed_forward.w_2)
        norm(r.norm_1, o.self_attn_norm)
        norm(r.norm_2, o.cross_attn_norm)
        norm(r.norm_3, o.feed_forward_norm)
    if ref.enc_norm is not None:
        norm(ref.enc_norm, ours.encoder.final_norm)
        norm(ref.dec_norm, ours.decoder.final_norm)
    if ref.out is not None:
        dense(ref.out, ours.output_projection)


class TFRunner:
    """Keras Adam + the masked label-smoothed loss around a Keras model, the step in a tf.function."""

    def __init__(self, model: Any, batch: tuple[np.ndarray, ...], jit_compile: bool):
        import keras
        import tensorflow as tf

        self.loss_fn, _ = tf_loss_function()
        self.model = model
        self.src, self.tgt_in, self.tgt_out = (tf.constant(a, tf.int64) for a in batch)
        model(self.src[:1, :2], self.tgt_in[:1, :2])  # build the variables eagerly, outside the graph
        self.optimizer = keras.optimizers.Adam(
            learning_rate=LEARNING_RATE, beta_1=ADAM.adam_betas[0], beta_2=ADAM.adam_betas[1], epsilon=ADAM.adam_eps
        )
        self.optimizer.build(model.trainable_variables)
        self.fn = tf.function(self._step, jit_compile=jit_compile, autograph=False)
        unique = {id(v): v for v in model.trainable_variables}.values()
        self.parameters = int(sum(np.prod(v.shape) for v in unique))

    def _step(self, src, tgt_in, tgt_out):
        import tensorflow as tf

        with tf.GradientTape() as tape:
            logits = self.model(src, tgt_in, training=True)  # (B, T_tgt, V)
            loss, _ = self.loss_fn(logits, tgt_out, SMOOTHING, PAD_ID)
        variables = self.model.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    def step(self) -> float:
        return float(self.fn(self.src, self.tgt_in, self.tgt_out))  # float() waits for the result

    def eval_logits(self) -> tuple[np.ndarray, float]:
        logits = self.model(self.src, self.tgt_in, training=False)
        loss, _ = self.loss_fn(logits, self.tgt_out, SMOOTHING, PAD_ID)
        return np.asarray(logits), float(loss)


def tf_runners(
    cfg: TransformerConfig, batch: tuple[np.ndarray, ...], names=MODELS["tf"], copy_weights: bool = True
) -> dict[str, TFRunner]:
    import keras

    from txcourse.tf import Transformer
    from txcourse.tf.train import resolve_device, uses_xla

    keras.utils.set_random_seed(0)
    runners: dict[str, TFRunner] = {}
    for name in names:
        if name == "teaching":
            runners[name] = TFRunner(Transformer(cfg), batch, jit_compile=False)
        elif name == "fused":
            runners[name] = TFRunner(
                Transformer(cfg.replace(fused=True)), batch, jit_compile=uses_xla(True, resolve_device("auto"))
            )
        elif name == "xla":
            runners[name] = TFRunner(Transformer(cfg.replace(fused=True)), batch, jit_compile=True)
        else:
            runners[name] = TFRunner(keras_reference(cfg), batch, jit_compile=False)
    if copy_weights and "teaching" in runners:
        ours = runners["teaching"].model
        for name in ("fused", "xla"):
            if name in runners:
                for dst, src in zip(runners[name].model.trainable_variables, ours.trainable_variables):
                    dst.assign(src)
        if "reference" in runners:
            keras_copy_into_reference(ours, runners["reference"].model)
    return runners


# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------


def build_runners(framework: str, cfg: TransformerConfig, batch, names=None, copy_weights: bool = True):
    names = MODELS[framework] if names is None else names
    if framework == "torch":
        return torch_runners(cfg, batch, names, copy_weights)
    return tf_runners(cfg, batch, names, copy_weights)


def agreement(runners: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Largest |logits difference| and loss difference of each model against the teaching path (inference mode)."""
    base_logits, base_loss = runners["teaching"].eval_logits()
    out = {}
    for name, runner in runners.items():
        if name == "teaching":
            continue
        logits, loss = runner.eval_logits()
        out[name] = {"max_abs_logits": float(np.max(np.abs(logits - base_logits))), "loss_diff": abs(loss - base_loss)}
    return out


def time_steps(runners: dict[str, Any], repeats: int, warmup: int) -> dict[str, list[float]]:
    """Warm up every model, then ``repeats`` rounds of one step each, rotating the order every round."""
    names = list(runners)
    for name in names:
        for _ in range(warmup):
            runners[name].step()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            runners[name].step()
            times[name].append(time.perf_counter() - start)
    return times


def current_rss() -> int:
    """Resident set size of this process now, in bytes (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        return 0


def reset_peak_rss() -> None:
    """Start a new high-water mark (Linux >= 4.0: writing 5 to clear_refs resets VmHWM); best effort."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # pragma: no cover - not Linux, or not allowed
        pass


def peak_rss() -> int:
    """Peak resident set size of this process, in bytes.

    Linux: VmHWM of /proc/self/status, which belongs to this program alone.
    (``ru_maxrss`` is kept across fork + execve, so a subprocess started by
    a big parent would report the parent's size.) Elsewhere ``ru_maxrss``.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS: bytes, Linux: KiB


def memory_worker(framework: str, name: str, args: argparse.Namespace) -> None:
    """Runs in a subprocess: build one model, train MEMORY_STEPS steps, print the peak as JSON."""
    cfg = make_config(args)
    batch = make_batch(args.batch, args.length, args.vocab)
    if framework == "torch":  # initialise the runtime (thread pool, kernels) before the baseline
        import torch

        (torch.ones(64, 64, requires_grad=True) @ torch.ones(64, 64)).sum().backward()
    else:
        import tensorflow as tf

        tf.function(lambda a: tf.reduce_sum(tf.matmul(a, a)))(tf.ones((64, 64))).numpy()
    reset_peak_rss()
    before = current_rss()
    runner = build_runners(framework, cfg, batch, names=(name,), copy_weights=False)[name]
    for _ in range(MEMORY_STEPS):
        runner.step()
    peak = peak_rss()
    print(json.dumps({"peak_bytes": peak - before, "rose": peak > before, "parameters": runner.parameters}))


def measure_memory(framework: str, name: str, args: argparse.Namespace) -> Optional[dict]:
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--memory-worker",
        framework,
        name,
        "--batch",
        str(args.batch),
        "--length",
        str(args.length),
        "--vocab",
        str(args.vocab),
    ]
    command += ["--threads", str(args.threads)] if args.threads else []
    command += ["--norm-first"] if args.norm_first else []
    command += ["--untied"] if args.untied else []
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"warning: memory worker {framework}/{name} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def cpu_name() -> str:
    """The processor's model name and core count."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), name)
    except OSError:  # pragma: no cover - not Linux
        pass
    return f"{name}, {os.cpu_count()} cores"


def versions(framework: str) -> str:
    if framework == "torch":
        import torch

        return f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads"
    import keras
    import tensorflow as tf

    threads = tf.config.threading.get_intra_op_parallelism_threads()
    return f"TensorFlow {tf.__version__}, Keras {keras.__version__}, {threads or 'all'} intra-op threads"


def run_framework(framework: str, args: argparse.Namespace) -> None:
    cfg = make_config(args)
    batch = make_batch(args.batch, args.length, args.vocab)
    runners = build_runners(framework, cfg, batch)
    check = agreement(runners)
    times = time_steps(runners, args.repeats, args.warmup)
    memory = {name: measure_memory(framework, name, args) for name in MODELS[framework]} if args.memory else {}

    real_tokens = int((batch[2] != PAD_ID).sum())
    print(f"\n### Training step, {framework}: {versions(framework)}, CPU: {cpu_name()}\n")
    print(
        f"d_model {cfg.d_model}, {cfg.num_heads} heads, {cfg.num_encoder_layers}+{cfg.num_decoder_layers} layers, "
        f"d_ff {cfg.d_ff}, vocab {cfg.src_vocab_size} ({'tied' if cfg.tie_embeddings else 'untied'} output), "
        f"{'pre' if cfg.norm_first else 'post'}-LN; batch {args.batch} x {args.length} source + {args.length} "
        f"target positions ({real_tokens} real target tokens), float32, dropout {cfg.dropout} (train mode), "
        f"Adam, label smoothing {SMOOTHING}; median of {args.repeats} repeats after {args.warmup} warm-up step(s). "
        f"Ratios: model / reference (> 1: slower, more memory).\n"
    )
    ref_time = statistics.median(times["reference"])
    ref_mem = (memory.get("reference") or {}).get("peak_bytes")
    print("| model | ms/step | vs reference | peak memory (MiB) | vs reference | parameters |")
    print("|---|---|---|---|---|---|")
    for name in MODELS[framework]:
        t = statistics.median(times[name])
        mem = memory.get(name)
        mem_cells = "n/a | n/a"
        if mem is not None:
            flag = "" if mem["rose"] else " (?)"
            ratio = f"{mem['peak_bytes'] / ref_mem:.2f}x" if ref_mem else "n/a"
            mem_cells = f"{mem['peak_bytes'] / 2**20:.0f}{flag} | {ratio}"
        print(
            f"| {LABELS[framework][name]} | {1000 * t:.1f} | {t / ref_time:.2f}x | {mem_cells} | "
            f"{runners[name].parameters:,} |"
        )
    params = {runners[name].parameters for name in MODELS[framework]}
    print(f"\nparameters equal: {'yes' if len(params) == 1 else 'NO'}; ", end="")
    print(
        "agreement with the teaching path in inference mode (same weights): "
        + ", ".join(
            f"{name} max |d logits| {c['max_abs_logits']:.1e}, |d loss| {c['loss_diff']:.1e}"
            for name, c in check.items()
        )
    )
    if framework == "tf":
        print(f"loss: {tf_loss_function()[1]}")
    if any(c["max_abs_logits"] > AGREEMENT_TOL for c in check.values()):
        print(
            f"WARNING: a model disagrees with the teaching path by more than {AGREEMENT_TOL}: "
            "they do not compute the same function"
        )
    if any(m is not None and not m["rose"] for m in memory.values()):
        print("(?): the peak did not rise above the resident size before the model was built: not measured")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", nargs="+", default=list(FRAMEWORKS), choices=FRAMEWORKS)
    parser.add_argument("--repeats", type=int, default=None, help="timed steps per model (default 10; --quick 3)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed steps per model first (default 2; --quick 1)")
    parser.add_argument("--batch", type=int, default=None, help="sentences per batch (default 64; --quick 16)")
    parser.add_argument("--length", type=int, default=None, help="source and target positions (default 32; --quick 16)")
    parser.add_argument("--vocab", type=int, default=8000, help="source and target vocabulary size")
    parser.add_argument("--norm-first", action="store_true", help="pre-LN instead of the paper's post-LN")
    parser.add_argument("--untied", action="store_true", help="an output layer of its own (tie_embeddings=False)")
    parser.add_argument("--no-memory", dest="memory", action="store_false", help="skip the peak-memory subprocesses")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads per framework (default: all)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small batch, few repeats")
    parser.add_argument("--memory-worker", nargs=2, metavar=("FRAMEWORK", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    quick = {"repeats": 3, "warmup": 1, "batch": 16, "length": 16}
    full = {"repeats": 10, "warmup": 2, "batch": 64, "length": 32}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.warmup < 1:
        parser.error("--warmup must be at least 1 (the first TensorFlow step traces and compiles)")
    if args.repeats < 1 or args.batch < 1 or args.length < 2 or args.vocab < 5:
        parser.error("--repeats and --batch must be >= 1, --length >= 2, --vocab >= 5")
    if args.threads:
        set_threads(args.threads)
    if args.memory_worker:
        memory_worker(*args.memory_worker, args)
        return
    for framework in args.framework:
        run_framework(framework, args)


if __name__ == "__main__":
    main()
