"""Week 2, positions as built today: learned tables, RoPE (Su et al. 2021) and ALiBi (Press et al. 2022).

Every test body runs once per framework (the ``fw`` fixture): the defining properties, against references
written out in NumPy; cached decoding equal to uncached decoding; bad values refused naming ``positions``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import Framework, assert_close, small_config

import txcourse
from txcourse import TransformerConfig
from txcourse.data import PAD_ID, SOS_ID
from txcourse.registry import FRAMEWORKS

pytestmark = pytest.mark.usefixtures("one_torch_thread")
POSITIONS = ["sinusoidal", "learned", "rope", "alibi"]


def _rotary_reference(x: np.ndarray, offset: int = 0, base: float = 10000.0) -> np.ndarray:
    """Eq. (34) of Su et al. (2021) pair by pair in float64: (x_2i, x_2i+1) turned by (offset + m) theta_i."""
    out = np.zeros_like(x, dtype=np.float64)
    length, d_k = x.shape[-2:]
    for m in range(length):
        for i in range(d_k // 2):
            angle = (offset + m) * base ** (-2 * i / d_k)
            a, b = x[..., m, 2 * i], x[..., m, 2 * i + 1]
            out[..., m, 2 * i] = a * np.cos(angle) - b * np.sin(angle)
            out[..., m, 2 * i + 1] = a * np.sin(angle) + b * np.cos(angle)
    return out


@pytest.mark.parametrize("offset", [0, 3])
def test_apply_rotary_matches_the_pairwise_rotation(fw, offset):
    x = np.random.default_rng(0).normal(size=(2, 3, 6, 8)).astype(np.float32)
    got = fw.numpy(fw.module.apply_rotary(fw.tensor(x), offset))
    assert_close(got, _rotary_reference(x, offset), atol=1e-5, what=f"RoPE, offset {offset}")


def test_rotary_keeps_the_norm_and_position_zero(fw):
    x = np.random.default_rng(1).normal(size=(4, 16)).astype(np.float32)
    got = fw.numpy(fw.module.apply_rotary(fw.tensor(x)))
    assert_close(got[0], x[0], atol=0, what="position 0 is not rotated")
    assert_close(np.linalg.norm(got, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-5, what="rotations keep norms")
    assert np.abs(got[1:] - x[1:]).max() > 0.1, "later positions are rotated"


@pytest.mark.parametrize("d_k", [2, 8, 32])
def test_rotated_scores_depend_only_on_the_offset(fw, d_k):
    """q_m . k_n after rotation is a function of m - n (Su et al. 2021, Eq. (11)): the same q and k at
    positions (m, n) and (m + s, n + s) give the same score, and different offsets give different ones."""
    rng = np.random.default_rng(d_k)
    q, k = rng.normal(size=d_k), rng.normal(size=d_k)
    length = 40
    qs = fw.numpy(fw.module.apply_rotary(fw.tensor(np.tile(q, (length, 1)), "float64")))  # q at 0..39
    ks = fw.numpy(fw.module.apply_rotary(fw.tensor(np.tile(k, (length, 1)), "float64")))  # k at 0..39
    scores = qs @ ks.T  # (m, n)
    for delta in (-7, -1, 0, 1, 5, 20):
        diagonal = np.diagonal(scores, offset=-delta)  # m - n = delta
        assert np.ptp(diagonal) < 1e-9, f"offset {delta}: scores vary by {np.ptp(diagonal)}"
    assert abs(scores[5, 0] - scores[0, 0]) > 1e-3, "the score does depend on the offset"


def test_alibi_slopes_for_8_heads_are_the_papers(fw):
    """Press et al. (2022), Sec. 3: for 8 heads the slopes are 1/2^1, ..., 1/2^8."""
    got = fw.numpy(fw.module.alibi_slopes(8, fw.lib.float64))
    np.testing.assert_array_equal(got, 1 / 2.0 ** np.arange(1, 9))


@pytest.mark.parametrize(
    "heads,expected",
    [
        (1, [2**-8]),
        (2, [2**-4, 2**-8]),
        (4, [2**-2, 2**-4, 2**-6, 2**-8]),
        (6, [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3]),
    ],
)
def test_alibi_slopes_follow_the_papers_rule(fw, heads, expected):
    """A power of two: 2^(-8h/H); otherwise the closest power below, then every other slope of twice as many."""
    np.testing.assert_allclose(fw.numpy(fw.module.alibi_slopes(heads, fw.lib.float64)), expected)


@pytest.mark.parametrize("t_q,t_k", [(5, 5), (2, 6), (1, 4)])
def test_alibi_bias_is_minus_slope_times_distance(fw, t_q, t_k):
    bias = fw.numpy(fw.module.alibi_bias(4, t_q, t_k))
    slopes = 2.0 ** (-2.0 * np.arange(1, 5))
    i = np.arange(t_q)[:, None] + t_k - t_q  # the queries are the last t_q positions
    expected = -slopes[:, None, None] * np.abs(i - np.arange(t_k)[None, :])
    assert bias.shape == (4, t_q, t_k)
    assert_close(bias, expected, atol=1e-7, what=f"ALiBi bias {t_q}x{t_k}")


def test_sdpa_adds_the_bias_before_the_softmax(fw):
    rng = np.random.default_rng(2)
    q, k, v = (rng.normal(size=(1, 2, 4, 8)).astype(np.float32) for _ in range(3))
    bias = rng.normal(size=(2, 4, 4)).astype(np.float32)
    _, weights = fw.module.scaled_dot_product_attention(fw.tensor(q), fw.tensor(k), fw.tensor(v), None, fw.tensor(bias))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(8) + bias
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    assert_close(
        fw.numpy(weights), expected / expected.sum(-1, keepdims=True), atol=1e-6, what="softmax(QK^T/sqrt(d)+b)"
    )
    with txcourse.debug_checks(), pytest.raises(ValueError, match=r"bias of shape \(3, 4, 4\) does not broadcast"):
        fw.module.scaled_dot_product_attention(
            fw.tensor(q), fw.tensor(k), fw.tensor(v), None, fw.tensor(bias[:1].repeat(3, 0))
        )


def test_learned_table_is_a_weight_added_by_position(fw):
    layer = fw.module.LearnedPositionalEmbedding(max_len=10, d_model=4)
    weights = [w for w in (layer.parameters() if fw.name == "torch" else layer.weights)]
    assert [tuple(w.shape) for w in weights] == [(10, 4)]
    table = weights[0].detach().numpy() if fw.name == "torch" else np.asarray(weights[0].numpy())
    x = np.random.default_rng(3).normal(size=(2, 3, 4)).astype(np.float32)
    assert_close(fw.numpy(layer(fw.tensor(x), offset=2)) - x, np.broadcast_to(table[2:5], x.shape), atol=1e-6)
    with pytest.raises(ValueError, match=r"x has length 11, longer than max_len=10"):
        layer(fw.tensor(np.zeros((1, 11, 4), np.float32)))


@pytest.mark.parametrize("positions", POSITIONS)
def test_embedding_adds_positions_only_for_tables(fw, positions):
    config = TransformerConfig(src_vocab_size=11, d_model=8, num_heads=2, max_len=16, dropout=0.0, positions=positions)
    layer = fw.eval(fw.module.TransformerEmbedding(config))
    tokens = np.array([[3, 3, 3, 3]])
    out = fw.numpy(layer(fw.tensor(tokens)))
    same_rows = np.abs(out - out[:, :1]).max() < 1e-7  # one token repeated: equal rows unless positions are added
    assert same_rows == (positions in ("rope", "alibi")), f"{positions}: rows equal? {same_rows}"


@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_and_uncached_decode_steps_agree(fw, positions, norm_first):
    """The cache changes the work, not the numbers, for every kind of positions: RoPE's queries and new keys
    are rotated at the cache length, ALiBi's queries sit after the cached keys."""
    cfg = small_config(
        num_encoder_layers=1, num_decoder_layers=2, max_len=20, positions=positions, norm_first=norm_first
    )
    if fw.name == "torch":
        torch.manual_seed(4)
        model = fw.module.Transformer(cfg).eval()
    else:
        import keras

        keras.utils.set_random_seed(4)
        model = fw.module.Transformer(cfg)
    src = fw.tensor(np.array([[5, 9, 3, 7, 11, 4], [8, 8, 6, 3, PAD_ID, PAD_ID]]))
    cached, uncached = model.start_decoding(src, True), model.start_decoding(src, False)
    steps = [[SOS_ID] * 2, [5, 6], [8, 8], [10, 4], [3, 7]]
    for t, ids in enumerate(steps):
        token = fw.tensor(np.array(ids))
        logits, cached, _ = model.decode_step(token, cached)
        ref_logits, uncached, _ = model.decode_step(token, uncached)
        assert_close(fw.numpy(logits), fw.numpy(ref_logits), 1e-5, f"{fw} {positions}: logits of step {t}")
    tgt = fw.tensor(np.array(steps).T)  # (2, 5): teacher forcing on the same tokens
    full = fw.numpy(model(src, tgt))[:, -1]
    assert_close(fw.numpy(logits), full, 1e-5, f"{fw} {positions}: last cached step vs the full forward pass")


@pytest.mark.parametrize("positions", POSITIONS)
def test_only_alibi_gives_a_source_and_its_reversal_the_same_output(fw, positions):
    """ALiBi's encoder bias -m_h |i - j| is unchanged when the source is reversed, so the encoder's rows come out
    in reverse order, and encoder-decoder attention ignores the order of its rows: the logits are the same, with
    or without padding after the source. The other three kinds of positions tell the two apart (book: week 2,
    the ALiBi subsection)."""
    cfg = small_config(dropout=0.0, positions=positions)
    if fw.name == "torch":
        torch.manual_seed(7)
        model = fw.module.Transformer(cfg).eval()
    else:
        import keras

        keras.utils.set_random_seed(7)
        model = fw.module.Transformer(cfg)
    rng = np.random.default_rng(7)
    src = rng.integers(4, cfg.src_vocab_size, (3, 9))  # ids 0-3 are special tokens
    src[2, 6:] = PAD_ID  # the last source: 6 tokens, then 3 pads
    flipped = src[:, ::-1].copy()
    flipped[2] = np.concatenate([src[2, 5::-1], src[2, 6:]])  # its tokens reversed, the pads kept at the end
    assert not any((flipped[b] == src[b]).all() for b in range(3)), "no source is a palindrome"
    tgt = fw.tensor(rng.integers(4, cfg.tgt_vocab_size, (3, 7)))
    logits, logits_flipped = (fw.numpy(model(fw.tensor(s), tgt)) for s in (src, flipped))
    gap = np.abs(logits - logits_flipped).max(axis=(1, 2))  # (B,): one largest difference per source
    if positions == "alibi":
        assert gap.max() < 1e-5, f"{fw} alibi: a source and its reversal differ by {gap}"
    else:
        assert gap.min() > 1e-3, f"{fw} {positions}: a source and its reversal give the same logits, {gap}"


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_tf_compiled_greedy_decoding_equals_uncached(positions):
    """TensorFlow traces its decoding step (the cache length is then a tensor): same tokens with and without cache."""
    import keras

    fw = Framework("tf")
    keras.utils.set_random_seed(5)
    model = fw.module.Transformer(small_config(num_encoder_layers=1, num_decoder_layers=1, positions=positions))
    src = fw.tensor(np.array([[5, 9, 3, 7], [8, 8, 6, PAD_ID]]))
    cached = fw.module.greedy_decode(model, src, max_len=8, eos_id=-1)
    uncached = fw.module.greedy_decode(model, src, max_len=8, eos_id=-1, use_cache=False)
    np.testing.assert_array_equal(fw.numpy(cached.tokens), fw.numpy(uncached.tokens))
    assert_close(fw.numpy(cached.scores), fw.numpy(uncached.scores), 1e-5, f"{positions}: scores")


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_fused_path_supports_rope_and_alibi(fw, positions):
    x = np.random.default_rng(6).normal(size=(2, 5, 16)).astype(np.float32)
    plain = fw.module.MultiHeadAttention(16, 4, False, positions)
    fused = fw.module.MultiHeadAttention(16, 4, True, positions)
    if fw.name == "torch":
        fused.load_state_dict(plain.state_dict())
    else:
        fused.set_weights(plain.get_weights())
    mask = fw.module.look_ahead_mask(5)
    a = fw.numpy(plain(fw.tensor(x), fw.tensor(x), fw.tensor(x), mask))
    b = fw.numpy(fused(fw.tensor(x), fw.tensor(x), fw.tensor(x), mask))
    assert_close(b, a, atol=1e-5, what=f"fused vs teaching path, {positions}")


@pytest.mark.parametrize("value", ["rotary", "ALiBi", "", None, 1])
def test_bad_positions_are_refused_naming_positions(fw, value):
    with pytest.raises(ValueError, match=r"positions must be one of \['sinusoidal', 'learned', 'rope', 'alibi'\], got"):
        TransformerConfig(positions=value)
    if value is not None:  # None: no positions act in this attention (the encoder-decoder attention)
        with pytest.raises(ValueError, match=r"^positions must be one of .* or None, got"):
            fw.module.MultiHeadAttention(8, 2, positions=value)


def test_rope_needs_an_even_head_width(fw):
    with pytest.raises(ValueError, match=r"positions='rope'.*even.*got 12 / 4 = 3"):
        TransformerConfig(d_model=12, num_heads=4, positions="rope")
    with pytest.raises(ValueError, match=r"^positions='rope' rotates pairs of dimensions.*even, got 12 / 4 = 3"):
        fw.module.MultiHeadAttention(12, 4, positions="rope")
    with pytest.raises(ValueError, match=r"d_k must be even.*got d_k=3"):
        fw.module.apply_rotary(fw.tensor(np.zeros((2, 3), np.float32)))


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_positions_in_attention_need_self_attention(fw, positions):
    mha = fw.module.MultiHeadAttention(8, 2, positions=positions)
    x = fw.tensor(np.zeros((1, 3, 8), np.float32))
    memory = mha.project_key_value(x, x)
    with pytest.raises(ValueError, match=rf"positions='{positions}' acts in self-attention only"):
        mha(x, None, None, None, memory)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_rope_and_alibi_add_no_weights(framework):
    fw = Framework(framework)
    counts = {}
    for positions in POSITIONS:
        model = fw.module.Transformer(small_config(positions=positions))
        params = model.parameters() if framework == "torch" else model.trainable_weights
        counts[positions] = sum(int(np.prod(tuple(p.shape))) for p in params)
    cfg = small_config()
    assert counts["rope"] == counts["alibi"] == counts["sinusoidal"]
    assert counts["learned"] == counts["sinusoidal"] + 2 * cfg.max_len * cfg.d_model  # one table per side
