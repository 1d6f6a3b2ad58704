"""Week 3: scaled dot-product attention reproduces the source notes' worked examples."""

import numpy as np
import pytest
from conftest import assert_close

import txcourse


@pytest.fixture
def debug_checks():
    with txcourse.debug_checks():
        yield


# The source notes (001, cells 45-48): temp_k, temp_v and three queries, with their printed results.
TEMP_K = [[10, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]]
TEMP_V = [[1, 0], [10, 0], [100, 5], [1000, 6]]
CASES = [
    ([[0, 10, 0]], [[0, 1, 0, 0]], [[10, 0]]),
    ([[0, 0, 10]], [[0, 0, 0.5, 0.5]], [[550, 5.5]]),
    (
        [[0, 0, 10], [0, 10, 0], [10, 10, 0]],
        [[0, 0, 0.5, 0.5], [0, 1, 0, 0], [0.5, 0.5, 0, 0]],
        [[550, 5.5], [10, 0], [5.5, 0]],
    ),
]


@pytest.mark.parametrize("query, weights, output", CASES, ids=["temp_q=[0,10,0]", "temp_q=[0,0,10]", "three queries"])
def test_source_notes_examples(fw, query, weights, output):
    q, k, v = (fw.tensor(np.array(x, dtype=np.float32)) for x in (query, TEMP_K, TEMP_V))
    out, attn = fw.module.scaled_dot_product_attention(q, k, v, None)
    # printed with 7 significant digits in the notes; the tiny weights are ~1e-25
    assert_close(fw.numpy(attn), weights, atol=1e-6, what="attention weights")
    assert_close(fw.numpy(out), output, atol=1e-5, what="attention output")


def test_thinking_machines_example(fw):
    """004's example: scores 112 and 96, divided by sqrt(d_k)=8 give 14 and 12, softmax 0.88 / 0.12."""
    d_k = 64
    q = np.zeros((1, d_k), np.float32)
    q[0, 0] = 1.0
    k = np.zeros((2, d_k), np.float32)
    k[0, 0], k[1, 0] = 112.0, 96.0
    v = np.eye(2, d_k, dtype=np.float32)
    _, attn = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v))
    expected = np.exp([14.0, 12.0]) / np.exp([14.0, 12.0]).sum()
    assert_close(fw.numpy(attn)[0], expected, atol=1e-6, what="softmax([14, 12])")
    assert_close(np.round(fw.numpy(attn)[0], 2), [0.88, 0.12], atol=1e-6, what="rounded as on the slide")


def test_weights_are_a_distribution(fw):
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=s).astype(np.float32) for s in ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)))
    out, attn = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v))
    attn = fw.numpy(attn)
    assert fw.numpy(out).shape == (2, 3, 5, 4)
    assert attn.shape == (2, 3, 5, 7)
    assert (attn >= 0).all()
    assert_close(attn.sum(-1), np.ones((2, 3, 5)), atol=1e-6, what="row sums")


def test_scaling_by_sqrt_dk(fw):
    """Doubling d_k by repeating the vectors leaves the weights unchanged only with the sqrt(d_k) scaling.

    q.k doubles when both vectors are repeated; sqrt(2 d_k) grows by sqrt(2); so
    the logits grow by sqrt(2) exactly: softmax(sqrt(2) * s) is what we must get.
    """
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(1, 4, 8)).astype(np.float32), rng.normal(size=(1, 6, 8)).astype(np.float32)
    v = rng.normal(size=(1, 6, 3)).astype(np.float32)
    _, attn = fw.module.scaled_dot_product_attention(
        fw.tensor(np.concatenate([q, q], -1)), fw.tensor(np.concatenate([k, k], -1)), fw.tensor(v)
    )
    logits = np.sqrt(2) * (q @ k.transpose(0, 2, 1)) / np.sqrt(8)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    assert_close(fw.numpy(attn), expected, atol=1e-6, what="weights with d_k=16")


def test_multi_head_attention_is_concat_then_w_o(fw):
    """MultiHead = Concat(head_1..head_h) W^O with head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)."""
    rng = np.random.default_rng(2)
    d_model, heads = 12, 3
    mha = fw.module.MultiHeadAttention(d_model, heads)
    x = rng.normal(size=(2, 5, d_model)).astype(np.float32)
    y = rng.normal(size=(2, 4, d_model)).astype(np.float32)
    out, cache, weights_out = mha(fw.tensor(x), fw.tensor(y), fw.tensor(y), return_weights=True)
    out = fw.numpy(out)
    assert cache is None, "no cache given, none returned"
    assert_close(
        out,
        fw.numpy(mha(fw.tensor(x), fw.tensor(y), fw.tensor(y))),
        atol=0,
        what="the output alone without return_weights",
    )

    def dense(layer, a):
        return fw.numpy(layer(fw.tensor(a.astype(np.float32))))

    q, k, v = dense(mha.w_q, x), dense(mha.w_k, y), dense(mha.w_v, y)
    d_k = d_model // heads
    outputs, weights = [], []
    for h in range(heads):
        part = slice(h * d_k, (h + 1) * d_k)
        s = q[..., part] @ k[..., part].transpose(0, 2, 1) / np.sqrt(d_k)
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        weights.append(w)
        outputs.append(w @ v[..., part])
    expected = dense(mha.w_o, np.concatenate(outputs, -1))
    assert out.shape == (2, 5, d_model)
    assert_close(out, expected, atol=1e-5, what="MultiHeadAttention output")
    assert_close(fw.numpy(weights_out), np.stack(weights, 1), atol=1e-6, what="returned attention weights")
    assert not hasattr(mha, "attention_weights"), "the weights are an output, not kept on the layer"


def test_cache_is_a_value_the_layer_returns_and_never_changes(fw):
    """Self-attention over a cache of earlier positions = attention over the whole sequence (Sec. 3.2.2):
    the new cache is returned, the given one is left as it was."""
    from txcourse.cache import AttentionOutput, KVCache

    rng = np.random.default_rng(4)
    mha = fw.eval(fw.module.MultiHeadAttention(8, 2))
    x = rng.normal(size=(2, 5, 8)).astype(np.float32)
    whole, _, whole_weights = mha(
        fw.tensor(x), fw.tensor(x), fw.tensor(x), fw.module.look_ahead_mask(5), return_weights=True
    )
    cache = mha.project_key_value(fw.tensor(x[:, :0]), fw.tensor(x[:, :0]))  # empty: (B, H, 0, d_k)
    assert isinstance(cache, KVCache) and tuple(cache.key.shape) == (2, 2, 0, 4)
    for t in range(5):
        new = fw.tensor(x[:, t : t + 1])
        given = fw.numpy(cache.key).copy()
        step = mha(new, new, new, fw.module.look_ahead_mask(1, t), cache, return_weights=True)
        assert isinstance(step, AttentionOutput) and isinstance(step.cache, KVCache)
        assert_close(fw.numpy(cache.key), given, atol=0, what="the given cache, unchanged")
        assert tuple(step.cache.key.shape) == tuple(step.cache.value.shape) == (2, 2, t + 1, 4)
        assert_close(fw.numpy(step.output)[:, 0], fw.numpy(whole)[:, t], atol=1e-5, what=f"cached step {t}")
        assert_close(
            fw.numpy(step.weights)[:, :, 0],
            fw.numpy(whole_weights)[:, :, t, : t + 1],
            atol=1e-6,
            what=f"weights of cached step {t}",
        )
        cache = step.cache
    static = mha(fw.tensor(x[:, :2]), None, None, None, cache, return_weights=True)  # attend to the cache as it is
    assert_close(fw.numpy(static.cache.key), fw.numpy(cache.key), atol=0, what="a static cache comes back as it was")
    assert_close(
        fw.numpy(static.output),
        fw.numpy(mha(fw.tensor(x[:, :2]), fw.tensor(x), fw.tensor(x))),
        atol=1e-5,
        what="attention to a projected memory",
    )


@pytest.mark.usefixtures("debug_checks")  # per-call checks of a layer: debug mode
def test_cache_and_missing_key_are_checked(fw):
    mha = fw.module.MultiHeadAttention(8, 2)
    x = fw.tensor(np.ones((1, 3, 8), np.float32))
    with pytest.raises(ValueError, match="cache must be a KVCache .* got dict"):
        mha(x, x, x, cache={"key": x})
    with pytest.raises(ValueError, match="key and value may be None only together and with a cache"):
        mha(x, None, None)


def test_split_and_merge_heads_are_inverse(fw):
    mha = fw.module.MultiHeadAttention(8, 2)
    x = np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
    split = mha.split_heads(fw.tensor(x))
    assert tuple(split.shape) == (2, 2, 3, 4)
    assert_close(fw.numpy(split)[:, 1], x[..., 4:], atol=0, what="head 1 holds dimensions 4..7")
    assert_close(fw.numpy(mha.merge_heads(split)), x, atol=0, what="merge(split(x))")
