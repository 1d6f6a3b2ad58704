"""Export a txcourse Transformer checkpoint to a CTranslate2 model folder. Book: appendix "Serving".

CTranslate2 (OpenNMT) is an inference engine: the encoder-decoder of
Vaswani et al. (2017) in C++, with the decoding loop, fused kernels and
int8 weights inside it. Its ``TransformerSpec`` describes the same model as
:class:`~txcourse.config.TransformerConfig` once these choices are spelled
out (each one changes the outputs if left to CTranslate2's defaults):

* positions: the sinusoid table of Sec. 3.5 as txcourse computes it
  (dimensions 2i and 2i+1 interleaved) is stored explicitly, because
  CTranslate2's built-in table is ordered [sin | cos]; a learned table is
  stored as it is; RoPE is CTranslate2's interleaved rotary embedding of
  every head dimension (base 10000), with no table; ALiBi is refused:
  CTranslate2 has no ALiBi in the encoder, where txcourse adds the
  symmetric -m_h |i - j|;
* the embeddings are multiplied by sqrt(d_model) (Sec. 3.4);
* post-LN (``pre_norm=False``, the paper) or pre-LN with a final norm
  (``norm_first``), with the checkpoint's LayerNorm epsilon;
* W^Q, W^K, W^V of self-attention stacked into one matrix, W^K and W^V of
  the encoder-decoder attention stacked; grouped-query attention as
  ``num_heads_kv``;
* the output projection: the target embedding matrix when tied (Sec. 3.4),
  with a bias of -1e9 on ``<pad>``, ``<sos>`` and ``<unk>``, which txcourse
  never generates (:func:`~txcourse.decoding.never_generated`): the same
  argmax, at no cost per step.

The folder also holds ``txcourse.json``: the checkpoint's header without its
training state (model config, task, tokenizers), so that
:func:`txcourse.deploy.engine.load_exported` reads the input exactly as the
checkpoint's commands do. The GRU models (``bahdanau``, ``seq2seq``) have no
CTranslate2 counterpart and are refused. ``ctranslate2`` is imported inside
:func:`export_ctranslate2` only.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from txcourse.config import TransformerConfig
from txcourse.data.vocab import SOS_ID
from txcourse.decoding import never_generated
from txcourse.errors import TxcourseError

__all__ = [
    "FORMAT",
    "META_FILE",
    "NEVER",
    "export_ctranslate2",
    "sinusoid_table",
    "check_exportable",
    "import_ctranslate2",
]

FORMAT = "txcourse-ctranslate2-1"
META_FILE = "txcourse.json"  # beside CTranslate2's model.bin: the header txcourse reads the input with
NEVER = -1e9  # output bias of the ids txcourse never generates (<pad>, <sos>, <unk>)
DROPPED_META = ("train_config", "stream", "torch_version", "tf_version", "weights_only", "format")

Weights = Callable[[str], np.ndarray]  # a weight by its PyTorch name, e.g. "encoder.layers.0.self_attn.w_q.weight"


def import_ctranslate2() -> Any:
    """The ``ctranslate2`` module, or a TxcourseError saying how to install it (the ``deploy`` extra)."""
    try:
        import ctranslate2
    except ModuleNotFoundError as err:
        if err.name != "ctranslate2":
            raise
        raise TxcourseError(
            "exported models need the ctranslate2 package, which is not installed: pip install 'txcourse[deploy]'"
        ) from None
    return ctranslate2


def sinusoid_table(max_len: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i / d_model)), PE(pos, 2i+1) = cos(...), Sec. 3.5 of Vaswani et al.

    txcourse's table (``txcourse.torch.positional.positional_encoding``), computed
    in float64 with NumPy: (max_len, D) float32.
    """
    pos = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
    i = np.arange(d_model, dtype=np.float64)[None, :]  # (1, D)
    angles = pos / np.power(10000.0, 2 * (i // 2) / d_model)  # (max_len, D)
    return np.where(i % 2 == 0, np.sin(angles), np.cos(angles)).astype(np.float32)  # (max_len, D)


def check_exportable(path: str, meta: dict[str, Any]) -> TransformerConfig:
    """The checkpoint's TransformerConfig, or a TxcourseError naming the setting CTranslate2 cannot express."""
    kind = meta["model"]["kind"]
    if kind != "transformer":
        raise TxcourseError(
            f"--checkpoint {path!r} holds a {kind!r} model (a GRU encoder-decoder): CTranslate2 runs "
            f"Transformers only, and has no GRU counterpart; export a 'transformer' checkpoint",
            "--checkpoint",
        )
    config = TransformerConfig.from_dict(meta["model"]["config"])
    if config.positions == "alibi":
        raise TxcourseError(
            f"--checkpoint {path!r}: positions='alibi' cannot be exported: txcourse adds ALiBi's -m_h |i - j| "
            f"in the encoder too, and CTranslate2 has ALiBi in the decoder only; export a model with positions "
            f"'sinusoidal', 'learned' or 'rope'",
            "--checkpoint",
        )
    return config


def export_ctranslate2(checkpoint: str | os.PathLike, out: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write the CTranslate2 model of a Transformer checkpoint (either half) and its txcourse header to ``out``.

    Args:
        checkpoint: a ``.npz`` written by ``txcourse train`` (PyTorch or TensorFlow).
        out: a new or empty folder; with ``overwrite``, a folder this function wrote before is replaced.

    Returns:
        ``out`` as a Path.

    Raises:
        TxcourseError: the checkpoint is not a Transformer, uses ALiBi, or ``out`` is taken.
    """
    from txcourse.training.checkpoint import load_checkpoint

    import_ctranslate2()
    out = Path(out)
    _check_out(out, overwrite)
    ckpt = load_checkpoint(checkpoint, None)
    config = check_exportable(str(checkpoint), ckpt.meta)
    weights = _torch_weights(ckpt) if ckpt.framework == "torch" else _keras_weights(ckpt)
    spec = _model_spec(config, weights, ckpt.meta)
    spec.validate()
    spec.optimize()  # aliases equal variables (the tied output projection); no quantization: chosen at load
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    spec.save(str(out))
    header = {key: value for key, value in ckpt.meta.items() if key not in DROPPED_META}
    header.update(format=FORMAT, exported_from={"path": str(checkpoint), "framework": ckpt.framework})
    (out / META_FILE).write_text(json.dumps(header, ensure_ascii=False, indent=1), encoding="utf-8")
    return out


def _check_out(out: Path, overwrite: bool) -> None:
    """``out`` must be new or empty; with ``overwrite`` it may be a folder exported before (never anything else)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise TxcourseError(f"--out {str(out)!r} is a file; expected a new or empty folder", "--out")
    if not any(out.iterdir()):
        return
    if not (out / META_FILE).is_file():
        raise TxcourseError(
            f"--out {str(out)!r} is a folder that is not empty and holds no exported model; expected a new or "
            f"empty folder (--overwrite replaces only a folder txcourse export wrote)",
            "--out",
        )
    if not overwrite:
        raise TxcourseError(
            f"--out {str(out)!r} already holds an exported model; pass --overwrite to replace it", "--out"
        )


def _torch_weights(ckpt: Any) -> Weights:
    """A PyTorch checkpoint's weights by name, read from its arrays (no framework imported)."""
    return lambda name: np.asarray(ckpt.arrays[f"model/{name}"], dtype=np.float32)


def _keras_weights(ckpt: Any) -> Weights:
    """A TensorFlow checkpoint's weights under their PyTorch names: the Keras model is built by its half, then
    each sublayer is found by the attribute path both halves share (txcourse.convert); a Dense kernel is
    transposed to PyTorch's (out, in)."""
    from txcourse.backends import backend  # the one module that imports a half (`txcourse export`: quietly)

    model, _ = backend("tf").load_model(ckpt)

    def weight(name: str) -> np.ndarray:
        *path, leaf = name.split(".")
        layer = model
        for part in path:
            layer = layer[int(part)] if part.isdigit() else getattr(layer, part)
        if hasattr(layer, "kernel"):  # Dense: kernel (in, out)
            value = layer.kernel.numpy().T if leaf == "weight" else layer.bias.numpy()
        elif hasattr(layer, "gamma"):  # LayerNormalization
            value = layer.gamma.numpy() if leaf == "weight" else layer.beta.numpy()
        else:  # Embedding
            value = layer.embeddings.numpy()
        return np.asarray(value, dtype=np.float32)

    return weight


def _model_spec(config: TransformerConfig, weights: Weights, meta: dict[str, Any]) -> Any:
    """The ctranslate2 TransformerSpec of ``config`` holding ``weights``, its vocabularies and special tokens."""
    from ctranslate2.specs import transformer_spec as ts

    from txcourse.data.prepare import tokenizers_from_meta

    rope = config.positions == "rope"
    common = {
        "pre_norm": config.norm_first,
        "num_heads_kv": None if config.kv_heads == config.num_heads else config.kv_heads,
        "rotary_dim": 0 if rope else None,  # 0: every dimension of a head; pairs (2i, 2i+1) as txcourse rotates
        "rotary_interleave": True,
    }
    encoder = ts.TransformerEncoderSpec(config.num_encoder_layers, config.num_heads, **common)
    decoder = ts.TransformerDecoderSpec(config.num_decoder_layers, config.num_heads, **common)
    if rope:  # the encoder spec keeps a position table otherwise, filled with CTranslate2's own sinusoids
        del encoder.position_encodings
    _set_embeddings(encoder, "encoder", config, weights, rope)
    _set_embeddings(decoder, "decoder", config, weights, rope)
    for i, layer in enumerate(encoder.layer):
        _set_self_attention(layer.self_attention, f"encoder.layers.{i}", weights)
        _set_ffn(layer.ffn, f"encoder.layers.{i}", weights)
    for i, layer in enumerate(decoder.layer):
        _set_self_attention(layer.self_attention, f"decoder.layers.{i}", weights)
        _set_cross_attention(layer.attention, f"decoder.layers.{i}", weights)
        _set_ffn(layer.ffn, f"decoder.layers.{i}", weights)
    if config.norm_first:
        _set_norm(encoder.layer_norm, "encoder.final_norm", weights)
        _set_norm(decoder.layer_norm, "decoder.final_norm", weights)
    _set_projection(decoder.projection, config, weights)
    spec = ts.TransformerSpec(encoder, decoder)
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    spec.register_source_vocabulary(_vocabulary(src_tok, "source"))
    spec.register_target_vocabulary(_vocabulary(tgt_tok, "target"))
    special = {"unk_token": "<unk>", "bos_token": "<sos>", "eos_token": "<eos>", "decoder_start_token": "<sos>"}
    for key, value in special.items():
        setattr(spec.config, key, value)
    spec.config.layer_norm_epsilon = float(config.layer_norm_eps)
    return spec


def _vocabulary(tok: Any, side: str) -> list[str]:
    """The tokenizer's tokens in id order: CTranslate2 maps the strings back to ids, so they must be distinct."""
    tokens = list(tok.vocab)
    if len(set(tokens)) != len(tokens):
        twice = sorted({t for t in tokens if tokens.count(t) > 1})
        raise TxcourseError(
            f"the {side} tokenizer has tokens that appear more than once ({twice[:5]}): CTranslate2 needs distinct "
            f"tokens to map strings to ids",
            "--checkpoint",
        )
    return tokens


def _set_embeddings(spec: Any, side: str, config: TransformerConfig, weights: Weights, rope: bool) -> None:
    """Token embeddings (scaled by sqrt(d_model) in CTranslate2 too) and the position table, if any."""
    embeddings = spec.embeddings[0] if isinstance(spec.embeddings, list) else spec.embeddings
    embeddings.weight = weights(f"{side}.embedding.token_embedding.weight")  # (V, D)
    spec.scale_embeddings = True
    if rope:
        return
    if config.positions == "learned":
        spec.position_encodings.encodings = weights(f"{side}.embedding.positional_encoding.table.weight")  # (L, D)
    else:
        spec.position_encodings.encodings = sinusoid_table(config.max_len, config.d_model)  # (L, D)


def _set_linear(spec: Any, weights: Weights, *names: str) -> None:
    """One CTranslate2 linear layer from one or more txcourse ones, stacked along the outputs (Q, K, V)."""
    spec.weight = np.concatenate([weights(f"{name}.weight") for name in names], axis=0)  # (out, in)
    spec.bias = np.concatenate([weights(f"{name}.bias") for name in names], axis=0)  # (out,)


def _set_norm(spec: Any, name: str, weights: Weights) -> None:
    spec.gamma = weights(f"{name}.weight")  # (D,)
    spec.beta = weights(f"{name}.bias")  # (D,)


def _set_self_attention(spec: Any, layer: str, weights: Weights) -> None:
    """W^Q, W^K, W^V stacked into linear[0], W^O into linear[1]; the sublayer's LayerNorm."""
    attn = f"{layer}.self_attn"
    _set_linear(spec.linear[0], weights, f"{attn}.w_q", f"{attn}.w_k", f"{attn}.w_v")
    _set_linear(spec.linear[1], weights, f"{attn}.w_o")
    _set_norm(spec.layer_norm, f"{layer}.self_attn_norm", weights)


def _set_cross_attention(spec: Any, layer: str, weights: Weights) -> None:
    """W^Q into linear[0], W^K and W^V stacked into linear[1] (applied to the memory), W^O into linear[2]."""
    attn = f"{layer}.cross_attn"
    _set_linear(spec.linear[0], weights, f"{attn}.w_q")
    _set_linear(spec.linear[1], weights, f"{attn}.w_k", f"{attn}.w_v")
    _set_linear(spec.linear[2], weights, f"{attn}.w_o")
    _set_norm(spec.layer_norm, f"{layer}.cross_attn_norm", weights)


def _set_ffn(spec: Any, layer: str, weights: Weights) -> None:
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (Eq. (2)); CTranslate2's default activation is ReLU."""
    _set_linear(spec.linear_0, weights, f"{layer}.feed_forward.w_1")
    _set_linear(spec.linear_1, weights, f"{layer}.feed_forward.w_2")
    _set_norm(spec.layer_norm, f"{layer}.feed_forward_norm", weights)


def _set_projection(spec: Any, config: TransformerConfig, weights: Weights) -> None:
    """The final linear layer: the target embeddings when tied (Sec. 3.4), and -1e9 on the never-generated ids."""
    if config.tie_embeddings:
        spec.weight = weights("decoder.embedding.token_embedding.weight")  # (V_tgt, D)
        bias = np.zeros(config.tgt_vocab_size, dtype=np.float32)  # (V_tgt,)
    else:
        spec.weight = weights("output_projection.weight")  # (V_tgt, D)
        bias = weights("output_projection.bias").copy()  # (V_tgt,)
    bias[list(never_generated(SOS_ID, config.pad_id))] = NEVER  # (V_tgt,)
    spec.bias = bias
