"""Agreement of txcourse's attention with the frameworks' own implementations.

Weights are copied from our layers into the reference layers, so every
comparison is exact up to float32 round-off (``ATOL``):

(a) ``txcourse.torch.scaled_dot_product_attention`` against
    ``torch.nn.functional.scaled_dot_product_attention`` (outputs) and a
    float64 NumPy softmax (weights);
(b) ``txcourse.torch.MultiHeadAttention`` against ``torch.nn.MultiheadAttention``;
(c) ``txcourse.tf.MultiHeadAttention`` against ``keras.layers.MultiHeadAttention``;
(d) across frameworks: weights moved with ``txcourse.convert`` and compared
    between our two implementations and the two reference layers.

Mask convention of txcourse: True = may NOT attend. ``F.scaled_dot_product_attention``
and Keras take the opposite (True = may attend); ``nn.MultiheadAttention``'s
bool ``key_padding_mask`` / ``attn_mask`` agree with ours.
"""

from __future__ import annotations

import inspect
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch
import torch.nn.functional as F

import txcourse.tf as ktx
import txcourse.tf.attention as ktx_attention
import txcourse.torch as ttx
import txcourse.torch.attention as ttx_attention
from txcourse.convert import tf_to_torch, torch_to_tf
from txcourse.notebook.checks import assert_close, largest_difference
from txcourse.registry import FRAMEWORKS

ATOL = 1e-5  # float32 throughout


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _np(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _make_mask(kind: str, rng: np.random.Generator, batch: int, t_q: int, t_k: int):
    """Our mask (True = may NOT attend) as a NumPy bool array, or None.

    Every query keeps at least one visible key (key 0), so no softmax row is
    fully masked: there the references differ by design (NaN or uniform).
    Returns (mask, lengths) where lengths (B,) are the unpadded key lengths.
    """
    lengths = rng.integers(1, t_k + 1, size=batch)
    lengths[0] = max(1, t_k - 1) if t_k > 1 else 1  # at least one row really padded when possible
    pad = np.arange(t_k)[None, :] >= lengths[:, None]  # (B, T_k)
    if kind == "none":
        return None, None
    if kind == "padding":
        return pad[:, None, None, :], lengths  # (B, 1, 1, T_k)
    if kind == "look_ahead":
        assert t_q == t_k
        return np.triu(np.ones((t_q, t_k), dtype=bool), k=1), None  # (T, T)
    if kind == "both":
        assert t_q == t_k
        look = np.triu(np.ones((t_q, t_k), dtype=bool), k=1)
        return look[None, None] | pad[:, None, None, :], lengths  # (B, 1, T, T)
    raise ValueError(kind)


def _reference_attention(q, k, v, mask):
    """float64 NumPy softmax(q k^T / sqrt(d_k)) v; mask True = may not attend.

    A fully masked query row gets all-zero weights (so a zero output), the
    convention txcourse documents.
    """
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    row_max = scores.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(row_max)  # fully masked rows
    w = np.exp(scores - np.where(dead, 0.0, row_max))
    total = w.sum(axis=-1, keepdims=True)
    w = np.where(dead, 0.0, w / np.where(dead, 1.0, total))
    return w @ v, w


# (case id, B, T_q, T_k, D, H, mask kind). Look-ahead needs T_q == T_k.
MHA_CASES = [
    ("cross-nomask", 2, 3, 5, 16, 4, "none"),
    ("cross-padding", 3, 7, 4, 32, 8, "padding"),
    ("cross-padding-h1", 2, 4, 6, 12, 1, "padding"),
    ("self-nomask-dk1", 2, 5, 5, 8, 8, "none"),
    ("self-lookahead", 4, 6, 6, 24, 3, "look_ahead"),
    ("self-both", 3, 5, 5, 16, 2, "both"),
    ("self-both-long", 2, 9, 9, 32, 4, "both"),
]
SEEDS = [0, 1, 2]


def _supports_fused(cls) -> bool:
    return "fused" in inspect.signature(cls.__init__).parameters


def _mha_params():
    return [pytest.param(seed, *case[1:], id=f"{case[0]}-seed{seed}") for case in MHA_CASES for seed in SEEDS]


def _mha_params_fused():
    """Every case with the teaching path, plus each case once (seed 0) with ``fused=True``."""
    params = [pytest.param(seed, *case[1:], False, id=f"{case[0]}-seed{seed}") for case in MHA_CASES for seed in SEEDS]
    params += [pytest.param(0, *case[1:], True, id=f"{case[0]}-seed0-fused") for case in MHA_CASES]
    return params


def _make_mha(cls, d_model, num_heads, fused):
    if not fused:
        return cls(d_model, num_heads)
    if not _supports_fused(cls):
        pytest.skip(f"{cls.__module__}.MultiHeadAttention has no fused option")
    return cls(d_model, num_heads, fused=True)


def _inputs(rng, batch, t_q, t_k, d):
    q = rng.standard_normal((batch, t_q, d)).astype(np.float32)
    k = rng.standard_normal((batch, t_k, d)).astype(np.float32)
    v = rng.standard_normal((batch, t_k, d)).astype(np.float32)
    return q, k, v


def _randomise_torch_mha(mha: ttx.MultiHeadAttention, rng) -> None:
    """Random weights and (non-zero) biases, so that a mis-copied bias shows."""
    with torch.no_grad():
        for lin in (mha.w_q, mha.w_k, mha.w_v, mha.w_o):
            lin.weight.copy_(torch.from_numpy(rng.normal(0, 0.3, lin.weight.shape).astype(np.float32)))
            lin.bias.copy_(torch.from_numpy(rng.normal(0, 0.3, lin.bias.shape).astype(np.float32)))


def _randomise_tf_mha(mha: ktx.MultiHeadAttention, rng) -> None:
    for dense in (mha.w_q, mha.w_k, mha.w_v, mha.w_o):
        dense.kernel.assign(rng.normal(0, 0.3, dense.kernel.shape).astype(np.float32))
        dense.bias.assign(rng.normal(0, 0.3, dense.bias.shape).astype(np.float32))


# ---------------------------------------------------------------------------
# (a) scaled dot-product attention vs F.scaled_dot_product_attention
# ---------------------------------------------------------------------------

SDPA_CASES = [
    # (case id, leading dims, T_q, T_k, d_k, d_v, mask kind)
    ("3d-nomask", (2,), 3, 5, 4, 6, "none"),
    ("4d-nomask", (2, 3), 4, 7, 8, 8, "none"),
    ("4d-padding", (3, 2), 5, 6, 8, 5, "padding"),
    ("4d-lookahead", (2, 4), 6, 6, 16, 16, "look_ahead"),
    ("4d-both", (3, 2), 7, 7, 4, 3, "both"),
    ("4d-random-full", (2, 3), 5, 8, 8, 8, "random"),
    ("4d-padding-int", (2, 2), 3, 6, 8, 8, "padding-int"),
]


def _sdpa_params():
    return [pytest.param(seed, *case[1:], id=f"{case[0]}-seed{seed}") for case in SDPA_CASES for seed in SEEDS]


@pytest.mark.parametrize("seed,lead,t_q,t_k,d_k,d_v,mask_kind", _sdpa_params())
def test_sdpa_matches_torch_functional(seed, lead, t_q, t_k, d_k, d_v, mask_kind):
    rng = _rng(seed)
    q = rng.standard_normal((*lead, t_q, d_k)).astype(np.float32)
    k = rng.standard_normal((*lead, t_k, d_k)).astype(np.float32)
    v = rng.standard_normal((*lead, t_k, d_v)).astype(np.float32)
    batch = lead[0]
    if mask_kind == "random":
        mask = rng.random((*lead, t_q, t_k)) < 0.5  # (B, H, T_q, T_k), every element its own
        mask[..., 0] = False  # no fully masked row
    else:
        mask, _ = _make_mask(mask_kind.replace("-int", ""), rng, batch, t_q, t_k)
        if mask is not None and len(lead) == 1 and mask.ndim == 4:
            mask = mask[:, 0]  # (B, 1, T_k) for 3-d inputs

    our_mask = None
    if mask is not None:
        our_mask = torch.from_numpy(mask)
        if mask_kind.endswith("-int"):
            our_mask = our_mask.to(torch.int64)  # 1 = may not attend, as documented
    out, weights = ttx.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), our_mask
    )

    ref_mask = None if mask is None else ~torch.from_numpy(mask)  # F.sdpa: True = MAY attend
    ref_out = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), attn_mask=ref_mask
    )
    assert_close(out, ref_out, ATOL, "output vs F.scaled_dot_product_attention")
    fused = getattr(ttx_attention, "fused_attention", None)
    if fused is not None:
        fused_out = fused(torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), our_mask)
        assert_close(fused_out, ref_out, ATOL, "fused_attention vs F.scaled_dot_product_attention")

    np_out, np_weights = _reference_attention(q, k, v, mask)
    assert_close(weights, np_weights, ATOL, "weights vs float64 softmax")
    assert_close(out, np_out, ATOL, "output vs float64 reference")
    if mask is not None:
        assert np.all(_np(weights)[np.broadcast_to(mask, weights.shape)] == 0), (
            "masked positions must get weight exactly 0"
        )


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("seed", SEEDS)
def test_sdpa_fully_masked_rows(seed, framework):
    """A query that may see no key gets zero weights and a zero output (documented).

    The other rows must still match F.scaled_dot_product_attention, which
    (torch >= 2.5) also returns zeros there; older releases returned NaN, so
    the fully masked rows are compared with the float64 reference only.
    """
    rng = _rng(seed)
    q = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
    k = rng.standard_normal((2, 3, 6, 8)).astype(np.float32)
    v = rng.standard_normal((2, 3, 6, 4)).astype(np.float32)
    mask = rng.random((2, 3, 5, 6)) < 0.5
    mask[..., 0] = False
    mask[0, 1, 2] = True  # fully masked rows
    mask[1, :, 4] = True
    dead = mask.all(axis=-1)
    if framework == "torch":
        out, weights = ttx.scaled_dot_product_attention(
            torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), torch.from_numpy(mask)
        )
    else:
        out, weights = ktx.scaled_dot_product_attention(
            tf.constant(q), tf.constant(k), tf.constant(v), tf.constant(mask)
        )
    np_out, np_weights = _reference_attention(q, k, v, mask)
    assert_close(weights, np_weights, ATOL, f"{framework} weights vs float64 softmax")
    assert_close(out, np_out, ATOL, f"{framework} output vs float64 reference")
    module = ttx_attention if framework == "torch" else ktx_attention
    if hasattr(module, "fused_attention"):
        to = torch.from_numpy if framework == "torch" else tf.constant
        fused_out = module.fused_attention(to(q), to(k), to(v), to(mask))
        assert_close(fused_out, np_out, ATOL, f"{framework} fused_attention vs float64 reference")
        assert np.all(_np(fused_out)[dead] == 0), "fused_attention: fully masked rows must give zero output"
    assert np.all(_np(weights)[dead] == 0) and np.all(_np(out)[dead] == 0), (
        "fully masked rows must give exactly zero weights and output"
    )
    ref_out = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), attn_mask=~torch.from_numpy(mask)
    )
    assert_close(
        _np(out)[~dead],
        _np(ref_out)[~dead],
        ATOL,
        f"{framework} output vs F.scaled_dot_product_attention (rows with a visible key)",
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_sdpa_tf_matches_torch_functional(seed):
    """The Keras half of (a): txcourse.tf's function against the same reference."""
    rng = _rng(seed)
    q, k, v = (rng.standard_normal((2, 3, t, 8)).astype(np.float32) for t in (4, 6, 6))
    mask = rng.random((2, 1, 4, 6)) < 0.4
    mask[..., 0] = False
    out, weights = ktx.scaled_dot_product_attention(tf.constant(q), tf.constant(k), tf.constant(v), tf.constant(mask))
    ref_out = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), attn_mask=~torch.from_numpy(mask)
    )
    assert_close(out, ref_out, ATOL, "tf output vs F.scaled_dot_product_attention")
    assert_close(weights, _reference_attention(q, k, v, mask)[1], ATOL, "tf weights vs float64 softmax")


# ---------------------------------------------------------------------------
# (b) txcourse.torch.MultiHeadAttention vs torch.nn.MultiheadAttention
# ---------------------------------------------------------------------------


def _torch_reference_mha(ours: ttx.MultiHeadAttention) -> torch.nn.MultiheadAttention:
    ref = torch.nn.MultiheadAttention(ours.d_model, ours.num_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight], dim=0))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias], dim=0))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    return ref.eval()


def _torch_reference_masks(mask_kind, mask, lengths, t_k):
    """Our mask as nn.MultiheadAttention's (key_padding_mask (B, T_k), attn_mask (T_q, T_k))."""
    key_padding_mask = attn_mask = None
    if mask_kind in ("padding", "both"):
        key_padding_mask = torch.from_numpy(np.arange(t_k)[None, :] >= lengths[:, None])  # True = pad
    if mask_kind == "look_ahead":
        attn_mask = torch.from_numpy(mask)
    if mask_kind == "both":
        attn_mask = torch.from_numpy(np.triu(np.ones((t_k, t_k), dtype=bool), k=1))
    return key_padding_mask, attn_mask


@pytest.mark.parametrize("seed,batch,t_q,t_k,d_model,num_heads,mask_kind,fused", _mha_params_fused())
def test_torch_mha_matches_nn_multihead_attention(seed, batch, t_q, t_k, d_model, num_heads, mask_kind, fused):
    rng = _rng(seed)
    torch.manual_seed(seed)
    ours = _make_mha(ttx.MultiHeadAttention, d_model, num_heads, fused).eval()
    _randomise_torch_mha(ours, rng)
    ref = _torch_reference_mha(ours)
    q, k, v = (torch.from_numpy(x) for x in _inputs(rng, batch, t_q, t_k, d_model))
    mask, lengths = _make_mask(mask_kind, rng, batch, t_q, t_k)

    with torch.no_grad():
        out, _, weights = ours(q, k, v, None if mask is None else torch.from_numpy(mask), return_weights=True)
        key_padding_mask, attn_mask = _torch_reference_masks(mask_kind, mask, lengths, t_k)
        ref_out, ref_w = ref(
            q,
            k,
            v,
            key_padding_mask=key_padding_mask,
            attn_mask=attn_mask,
            need_weights=True,
            average_attn_weights=False,
        )
        _, ref_w_avg = ref(
            q,
            k,
            v,
            key_padding_mask=key_padding_mask,
            attn_mask=attn_mask,
            need_weights=True,
            average_attn_weights=True,
        )

    assert out.shape == (batch, t_q, d_model)
    assert_close(out, ref_out, ATOL, "output vs nn.MultiheadAttention")
    if fused:
        assert weights is None, "the fused path computes no weights (documented)"
        return
    assert weights.shape == (batch, num_heads, t_q, t_k)
    assert_close(weights, ref_w, ATOL, "per-head weights vs nn.MultiheadAttention")
    assert_close(weights.mean(dim=1), ref_w_avg, ATOL, "head-averaged weights vs nn.MultiheadAttention")


# ---------------------------------------------------------------------------
# (c) txcourse.tf.MultiHeadAttention vs keras.layers.MultiHeadAttention
# ---------------------------------------------------------------------------


def _keras_reference_mha(d_model: int, num_heads: int, w_q, w_k, w_v, w_o) -> keras.layers.MultiHeadAttention:
    """A built Keras MHA holding our weights; w_* are (kernel (in, out), bias (out,)) NumPy pairs.

    The fused Dense kernel (D, D) maps feature h * d_k + j to head h, column j
    (``split_heads`` reshapes (B, T, D) -> (B, T, H, d_k)), hence the reshapes.
    The variables are found by path and their shapes checked, not assumed.
    """
    d_k = d_model // num_heads
    ref = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=d_k)
    dummy = np.zeros((1, 2, d_model), np.float32)
    ref(dummy, dummy, dummy)  # build
    target = {
        "query/kernel": w_q[0].reshape(d_model, num_heads, d_k),
        "query/bias": w_q[1].reshape(num_heads, d_k),
        "key/kernel": w_k[0].reshape(d_model, num_heads, d_k),
        "key/bias": w_k[1].reshape(num_heads, d_k),
        "value/kernel": w_v[0].reshape(d_model, num_heads, d_k),
        "value/bias": w_v[1].reshape(num_heads, d_k),
        "attention_output/kernel": w_o[0].reshape(num_heads, d_k, d_model),
        "attention_output/bias": w_o[1],
    }
    assigned = set()
    for var in ref.weights:
        suffix = "/".join(var.path.split("/")[-2:])
        assert suffix in target, f"unexpected Keras MHA variable {var.path}"
        assert tuple(var.shape) == target[suffix].shape, (
            f"{var.path}: Keras shape {tuple(var.shape)} != mapped shape {target[suffix].shape}"
        )
        var.assign(target[suffix])
        assigned.add(suffix)
    assert assigned == set(target), f"Keras MHA variables not found: {set(target) - assigned}"
    return ref


def _tf_dense_weights(mha: ktx.MultiHeadAttention):
    return [(np.asarray(d.kernel.numpy()), np.asarray(d.bias.numpy())) for d in (mha.w_q, mha.w_k, mha.w_v, mha.w_o)]


def _keras_attention_mask(mask, batch, t_q, t_k):
    """Our mask -> Keras' (B, T_q, T_k) with True = MAY attend."""
    if mask is None:
        return None
    full = np.broadcast_to(mask, (batch, 1, t_q, t_k))[:, 0]  # (B, T_q, T_k); no per-head masks here
    return tf.logical_not(tf.constant(full))


@pytest.mark.parametrize("seed,batch,t_q,t_k,d_model,num_heads,mask_kind,fused", _mha_params_fused())
def test_tf_mha_matches_keras_multi_head_attention(seed, batch, t_q, t_k, d_model, num_heads, mask_kind, fused):
    rng = _rng(seed)
    ours = _make_mha(ktx.MultiHeadAttention, d_model, num_heads, fused)
    _randomise_tf_mha(ours, rng)
    ref = _keras_reference_mha(d_model, num_heads, *_tf_dense_weights(ours))
    q, k, v = (tf.constant(x) for x in _inputs(rng, batch, t_q, t_k, d_model))
    mask, _ = _make_mask(mask_kind, rng, batch, t_q, t_k)

    out, _, weights = ours(q, k, v, None if mask is None else tf.constant(mask), return_weights=True)
    attention_mask = _keras_attention_mask(mask, batch, t_q, t_k)
    # Keras' order is (query, VALUE, KEY).
    ref_out, ref_scores = ref(q, v, k, attention_mask=attention_mask, return_attention_scores=True)
    ref_out_plain = ref(q, v, k, attention_mask=attention_mask)  # the path without scores may differ

    assert tuple(out.shape) == (batch, t_q, d_model)
    assert_close(out, ref_out, ATOL, "output vs keras.layers.MultiHeadAttention")
    assert_close(out, ref_out_plain, ATOL, "output vs keras.layers.MultiHeadAttention (no scores)")
    if fused:
        assert weights is None, "the fused path computes no weights (documented)"
        return
    assert tuple(weights.shape) == (batch, num_heads, t_q, t_k)
    assert_close(weights, ref_scores, ATOL, "weights vs Keras attention scores")


# ---------------------------------------------------------------------------
# (d) across frameworks, weights moved with txcourse.convert
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed,batch,t_q,t_k,d_model,num_heads,mask_kind", _mha_params())
def test_mha_across_frameworks(seed, batch, t_q, t_k, d_model, num_heads, mask_kind):
    """torch ours -> torch_to_tf -> tf ours, and the two reference layers, all agree."""
    rng = _rng(seed)
    t_ours = ttx.MultiHeadAttention(d_model, num_heads).eval()
    _randomise_torch_mha(t_ours, rng)
    k_ours = ktx.MultiHeadAttention(d_model, num_heads)
    torch_to_tf(t_ours, k_ours)
    q, k, v = _inputs(rng, batch, t_q, t_k, d_model)
    mask, lengths = _make_mask(mask_kind, rng, batch, t_q, t_k)

    with torch.no_grad():
        t_out, _, t_weights = t_ours(
            torch.from_numpy(q),
            torch.from_numpy(k),
            torch.from_numpy(v),
            None if mask is None else torch.from_numpy(mask),
            return_weights=True,
        )
        t_ref = _torch_reference_mha(t_ours)
        key_padding_mask, attn_mask = _torch_reference_masks(mask_kind, mask, lengths, t_k)
        t_ref_out, _ = t_ref(
            torch.from_numpy(q),
            torch.from_numpy(k),
            torch.from_numpy(v),
            key_padding_mask=key_padding_mask,
            attn_mask=attn_mask,
        )
    k_out, _, k_weights = k_ours(
        tf.constant(q), tf.constant(k), tf.constant(v), None if mask is None else tf.constant(mask), return_weights=True
    )
    k_ref = _keras_reference_mha(d_model, num_heads, *_tf_dense_weights(k_ours))
    k_ref_out = k_ref(
        tf.constant(q), tf.constant(v), tf.constant(k), attention_mask=_keras_attention_mask(mask, batch, t_q, t_k)
    )

    assert_close(k_out, t_out, ATOL, "txcourse.tf vs txcourse.torch output")
    assert_close(k_weights, t_weights, ATOL, "txcourse.tf vs txcourse.torch weights")
    assert_close(k_ref_out, t_ref_out, ATOL, "keras.layers.MultiHeadAttention vs nn.MultiheadAttention output")

    # and back: tf -> torch into a fresh module reproduces the torch output
    t_back = ttx.MultiHeadAttention(d_model, num_heads).eval()
    tf_to_torch(k_ours, t_back)
    with torch.no_grad():
        back_out = t_back(
            torch.from_numpy(q),
            torch.from_numpy(k),
            torch.from_numpy(v),
            None if mask is None else torch.from_numpy(mask),
        )
    assert_close(back_out, t_out, ATOL, "tf_to_torch round trip output")


# ---------------------------------------------------------------------------
# self-checks of the helper: it must fail, and say where
# ---------------------------------------------------------------------------


def test_assert_close_reports_largest_difference_and_index():
    expected = np.zeros((2, 3, 4), np.float32)
    actual = expected.copy()
    actual[1, 2, 3] = 0.5
    actual[0, 0, 0] = 1e-6  # within tolerance
    with pytest.raises(AssertionError, match=r"largest difference 0\.5 > 1e-05 at index \(1, 2, 3\)"):
        assert_close(actual, expected, ATOL, "probe")
    assert assert_close(expected, expected, ATOL, "probe") is None  # None: a lab's test cell must not score it
    assert largest_difference(actual, expected) == 0.5


def test_assert_close_treats_nan_and_shape_as_failures():
    with pytest.raises(AssertionError, match=r"largest difference nan > 1e-05 at index \(1,\)"):
        assert_close(np.array([0.0, np.nan]), np.array([0.0, 0.0]), ATOL, "nan")
    with pytest.raises(AssertionError, match="shape"):
        assert_close(np.zeros((2, 3)), np.zeros((3, 2)), ATOL, "shape")
