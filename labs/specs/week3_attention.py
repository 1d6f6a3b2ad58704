"""Week 3 lab: scaled dot-product attention, masks, and multi-head attention (Vaswani et al. 2017, Sec. 3.2)."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, readonly, solution, tests
from txcourse.course.grading.allowlist import setup_allow

# The probe run's txcourse (txcourse/course/grading/allowlist.py): the setup's helpers and the constructor of
# tx.MultiHeadAttention (the probes read its projections w_q, w_k, w_v, w_o); its forward pass, its heads,
# every attention function (fused, tiled) and the masks raise.
ALLOW = {
    fw: [*setup_allow(fw), f"txcourse.{fw}.attention:MultiHeadAttention.__init__", f"txcourse.{fw}.init:linear"]
    for fw in ("torch", "tf")
}

# The probes: what the grader checks outside the student's process (fresh inputs from PROBE_SEED).
PROBE_ATTENTION = """
    rng = np.random.default_rng(PROBE_SEED)
    t_q, t_k, d_k, d_v = (int(n) for n in rng.integers(1, 9, 4))
    for name, lead in (("no batch", ()), ("batch and heads", (2, 3))):
        q, k, v = (tensor(rng.standard_normal((*lead, t, d)), "float32") for t, d in ((t_q, d_k), (t_k, d_k), (t_k, d_v)))
        out, weights = scaled_dot_product_attention(q, k, v)
        probe_emit(f"{name}: output", out, 1e-5)
        probe_emit(f"{name}: weights", weights, 1e-5)
        _, doubled = scaled_dot_product_attention(q * 2, k, v)  # the 1/sqrt(d_k) scaling
        probe_emit(f"{name}: weights for 2q", doubled, 1e-5)
"""
PROBE_MASKED = """
    rng = np.random.default_rng(PROBE_SEED + 1)
    t_q, t_k = int(rng.integers(1, 6)), int(rng.integers(2, 8))
    q, k, v = (tensor(rng.standard_normal((3, 2, t, 4)), "float32") for t in (t_q, t_k, t_k))
    mask = np.zeros((3, 1, 1, t_k), dtype=bool)
    mask[0, ..., int(rng.integers(1, t_k)):] = True  # padding
    mask[2] = True  # a sentence with every key masked: zero weights, zero output, never NaN
    out, weights = scaled_dot_product_attention(q, k, v, tensor(mask))
    probe_emit("masked output", out, 1e-5)
    probe_emit("masked weights", weights, 1e-5)
    probe_emit("masked weights exactly 0", np.all(to_numpy(weights)[np.broadcast_to(mask, (3, 2, t_q, t_k))] == 0), 0)
    half = [tensor(to_numpy(x), "float16") for x in (q, k, v)]  # errata E6: float16 and a mask, no NaN
    out16, w16 = scaled_dot_product_attention(*half, tensor(mask))
    probe_emit("float16 output", to_numpy(out16).astype(np.float32), 2e-2)
    probe_emit("float16 weights", to_numpy(w16).astype(np.float32), 2e-2)
"""
PROBE_MASKS = """
    rng = np.random.default_rng(PROBE_SEED + 2)
    pad_id = int(rng.integers(0, 5))
    tokens = rng.integers(0, 5, size=(3, int(rng.integers(1, 8))))
    probe_emit(f"padding_mask(tokens, pad_id={pad_id})", padding_mask(tensor(tokens), pad_id=pad_id), 0)
    probe_emit("padding_mask(tokens)", padding_mask(tensor(tokens)), 0)
    for n in (1, int(rng.integers(2, 12))):
        probe_emit(f"look_ahead_mask({n})", look_ahead_mask(n), 0)
"""
PROBE_HEADS = """
    rng = np.random.default_rng(PROBE_SEED + 3)
    heads, d_k = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    x = rng.standard_normal((2, int(rng.integers(1, 7)), heads * d_k)).astype(np.float32)
    probe_emit(f"split_heads(x, {heads})", split_heads(tensor(x), heads), 0)
    y = rng.standard_normal((3, heads, int(rng.integers(1, 7)), d_k)).astype(np.float32)
    probe_emit("merge_heads(y)", merge_heads(tensor(y)), 0)
"""
# Exercise 4 judged alone, as its test does: the student's multi_head_attention with reference pieces,
# written here (txcourse's are redacted while the probes run).
PROBE_MULTI_HEAD = {
    "torch": """
        def _split(x, num_heads):  # (B, T, D) -> (B, H, T, d_k)
            return x.reshape(x.shape[0], x.shape[1], num_heads, x.shape[2] // num_heads).transpose(1, 2)

        def _merge(x):  # (B, H, T, d_k) -> (B, T, D)
            return x.transpose(1, 2).reshape(x.shape[0], x.shape[2], x.shape[1] * x.shape[3])

        def _attend(q, k, v, mask=None):
            scores = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
            if mask is not None:
                scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
            weights = torch.softmax(scores, dim=-1)
            if mask is not None:
                weights = weights.masked_fill(mask, 0.0)
            return weights @ v, weights
    """,
    "tf": """
        def _split(x, num_heads):  # (B, T, D) -> (B, H, T, d_k)
            b, t, d = x.shape
            return tf.transpose(tf.reshape(x, (b, t, num_heads, d // num_heads)), (0, 2, 1, 3))

        def _merge(x):  # (B, H, T, d_k) -> (B, T, D)
            b, h, t, d_k = x.shape
            return tf.reshape(tf.transpose(x, (0, 2, 1, 3)), (b, t, h * d_k))

        def _attend(q, k, v, mask=None):
            scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(q.shape[-1])
            if mask is not None:
                scores = tf.where(mask, tf.constant(scores.dtype.min, scores.dtype), scores)
            weights = tf.nn.softmax(scores, axis=-1)
            if mask is not None:
                weights = tf.where(mask, tf.zeros_like(weights), weights)
            return tf.matmul(weights, v), weights
    """,
}
PROBE_MULTI_HEAD_RUN = """
    split_heads, merge_heads, scaled_dot_product_attention = _split, _merge, _attend
    rng = np.random.default_rng(PROBE_SEED + 4)
    for num_heads in (4, 8):
        set_seed(int(rng.integers(0, 1000)))
        mha = tx.MultiHeadAttention(16, num_heads)
        t_q, t_k = int(rng.integers(1, 7)), int(rng.integers(2, 8))
        x, memory = tensor(rng.standard_normal((2, t_q, 16)), "float32"), tensor(rng.standard_normal((2, t_k, 16)), "float32")
        mask = np.zeros((2, 1, 1, t_k), dtype=bool)
        mask[1, ..., int(rng.integers(1, t_k)):] = True
        out, weights = multi_head_attention(mha, x, memory, memory, tensor(mask))
        probe_emit(f"{num_heads} heads: output", out, 1e-5)
        probe_emit(f"{num_heads} heads: weights", weights, 1e-5)
        causal = tensor(np.triu(np.ones((t_q, t_q), dtype=bool), k=1))
        probe_emit(f"{num_heads} heads: masked self-attention", multi_head_attention(mha, x, x, x, causal)[0], 1e-5)
"""

CELLS = [
    md(
        (
            """
        # Week 3 lab: attention ([[FW]])

        $$\\mathrm{Attention}(Q, K, V) = \\mathrm{softmax}\\!\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)V
          \\qquad \\text{(Eq. (1) of Vaswani et al. 2017)}$$

        You will write scaled dot-product attention, the two masks, and the reshapes that split the model
        width into heads and merge them back, then check that your pieces reproduce `tx.MultiHeadAttention`.

        **Mask convention** (the same in the whole course and in both frameworks): `True` marks a key that
        may **not** be attended. A masked key must get a weight of exactly 0.

        Shapes: `B` batch, `H` heads, `T_q` queries, `T_k` keys, `D` model width, `d_k = D / H`.
        """,
            HOW_IT_WORKS,
        )
    ),
    readonly("install", INSTALL),
    readonly("setup", SETUP),
    md(SETUP_NOTE),
    md("""
        ## Exercise 1: scaled dot-product attention (2 + 3 + 3 points)

        Write `scaled_dot_product_attention(query, key, value, mask=None)` for inputs of shape
        `(..., T_q, d_k)`, `(..., T_k, d_k)`, `(..., T_k, d_v)` and a boolean `mask` that broadcasts to the
        scores `(..., T_q, T_k)`. Return `(output, weights)`: `(..., T_q, d_v)` and `(..., T_q, T_k)`.

        Masking: set the masked scores to the most negative number of their dtype
        (`torch.finfo(scores.dtype).min` / `scores.dtype.min`) before the softmax. The source notes added
        `mask * -1e9`: TensorFlow rounds `-1e9` to float16 first, where it overflows to `-inf`, and `0 * -inf`
        is NaN, so every score becomes NaN under mixed precision (PyTorch rounds the product instead and gets
        no NaN there, but a float16 `-1e9` tensor or a fully masked row does give NaN: errata E6); the grader
        also runs your function in float16. After the
        softmax, set the masked weights to 0, so that a row whose keys are all masked gives zeros, not NaN
        or a uniform average.
        """),
    solution(
        "scaled_dot_product_attention",
        {
            "torch": """
            def scaled_dot_product_attention(query, key, value, mask=None):
                \"\"\"softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights).\"\"\"
                ### BEGIN SOLUTION
                d_k = query.shape[-1]
                scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)  # (..., T_q, T_k)
                if mask is not None:
                    scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # (..., T_q, T_k)
                weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
                if mask is not None:
                    weights = weights.masked_fill(mask, 0.0)  # (..., T_q, T_k)
                return torch.matmul(weights, value), weights  # (..., T_q, d_v), (..., T_q, T_k)
                ### END SOLUTION
        """,
            "tf": """
            def scaled_dot_product_attention(query, key, value, mask=None):
                \"\"\"softmax(Q K^T / sqrt(d_k)) V; mask True = may NOT attend. Returns (output, weights).\"\"\"
                ### BEGIN SOLUTION
                d_k = query.shape[-1]
                scores = tf.matmul(query, key, transpose_b=True) / math.sqrt(d_k)  # (..., T_q, T_k)
                if mask is not None:
                    scores = tf.where(mask, tf.constant(scores.dtype.min, scores.dtype), scores)  # (..., T_q, T_k)
                weights = tf.nn.softmax(scores, axis=-1)  # (..., T_q, T_k)
                if mask is not None:
                    weights = tf.where(mask, tf.zeros_like(weights), weights)  # (..., T_q, T_k)
                return tf.matmul(weights, value), weights  # (..., T_q, d_v), (..., T_q, T_k)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_attention_notes_example",
        2,
        """
        # The source notes' example: the query matches the second key exactly, so it copies the second value.
        temp_k = tensor([[10.0, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]], "float32")
        temp_v = tensor([[1.0, 0], [10, 0], [100, 5], [1000, 6]], "float32")
        out, weights = scaled_dot_product_attention(tensor([[0.0, 10, 0]], "float32"), temp_k, temp_v)
        assert_close(weights, [[0, 1, 0, 0]], 1e-6, "weights for the query [0, 10, 0]")
        assert_close(out, [[10, 0]], 1e-4, "output for the query [0, 10, 0]")
    """,
        probe="""
            # the notes' example (a query that matches one key copies its value) and one on fresh inputs
            temp_k = tensor([[10.0, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]], "float32")
            temp_v = tensor([[1.0, 0], [10, 0], [100, 5], [1000, 6]], "float32")
            rng = np.random.default_rng(PROBE_SEED + 5)
            for i, query in enumerate(([[0.0, 10, 0]], [[0.0, 0, 10]], rng.standard_normal((2, 3)) * 5)):
                out, weights = scaled_dot_product_attention(tensor(query, "float32"), temp_k, temp_v)
                probe_emit(f"query {i}: weights", weights, 1e-6)
                probe_emit(f"query {i}: output", out, 1e-5)
        """,
    ),
    tests(
        "test_attention_matches_reference",
        3,
        """
        # Batched inputs with heads: compare with txcourse, check the shapes and that each row of weights sums to 1.
        q, k, v = tensor(normal(2, 3, 5, 8, seed=1)), tensor(normal(2, 3, 7, 8, seed=2)), tensor(normal(2, 3, 7, 4, seed=3))
        out, weights = scaled_dot_product_attention(q, k, v)
        ref_out, ref_weights = tx.scaled_dot_product_attention(q, k, v)
        assert tuple(out.shape) == (2, 3, 5, 4), f"output shape {tuple(out.shape)}, expected (2, 3, 5, 4)"
        assert tuple(weights.shape) == (2, 3, 5, 7), f"weights shape {tuple(weights.shape)}, expected (2, 3, 5, 7)"
        assert_close(to_numpy(weights).sum(-1), np.ones((2, 3, 5)), 1e-5, "sum of each row of weights")
        assert_close(weights, ref_weights, 1e-5, "attention weights")
        assert_close(out, ref_out, 1e-5, "attention output")
    """,
        probe=PROBE_ATTENTION,
    ),
    tests(
        "test_attention_mask",
        3,
        """
        # Padding: the last keys of each sentence are masked; their weights must be exactly 0.
        q, k, v = tensor(normal(2, 2, 4, 8, seed=7)), tensor(normal(2, 2, 6, 8, seed=8)), tensor(normal(2, 2, 6, 5, seed=9))
        mask = np.zeros((2, 1, 1, 6), dtype=bool)
        mask[0, ..., 4:] = True  # sentence 0: 4 tokens + 2 padding
        mask[1, ..., 3:] = True  # sentence 1: 3 tokens + 3 padding
        out, weights = scaled_dot_product_attention(q, k, v, tensor(mask))
        w = to_numpy(weights)
        assert (w[0, ..., 4:] == 0).all() and (w[1, ..., 3:] == 0).all(), "masked keys must get a weight of exactly 0"
        assert_close(w.sum(-1), np.ones((2, 2, 4)), 1e-5, "sum of each row of weights (with a mask)")
        ref_out, ref_weights = tx.scaled_dot_product_attention(q, k, v, tensor(mask))
        assert_close(weights, ref_weights, 1e-5, "masked attention weights")
        assert_close(out, ref_out, 1e-5, "masked attention output")
    """,
        probe=PROBE_MASKED,
    ),
    md("""
        ## Exercise 2: the masks (2 + 2 points)

        - `padding_mask(tokens, pad_id=0)`: `tokens` `(B, T)` of ids → a boolean `(B, 1, 1, T)`, `True` where
          the token is `pad_id`. The two size-1 axes broadcast over heads and queries.
        - `look_ahead_mask(length)`: a boolean `(length, length)`, `True` above the diagonal: query `t` may
          not see the keys after `t`.
        """),
    solution(
        "masks",
        {
            "torch": """
            def padding_mask(tokens, pad_id=0):
                \"\"\"(B, T) ids -> (B, 1, 1, T) bool, True at padding.\"\"\"
                ### BEGIN SOLUTION
                return (tokens == pad_id)[:, None, None, :]  # (B, 1, 1, T)
                ### END SOLUTION


            def look_ahead_mask(length):
                \"\"\"(T, T) bool, True above the diagonal (the future).\"\"\"
                ### BEGIN SOLUTION
                return torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)  # (T, T)
                ### END SOLUTION
        """,
            "tf": """
            def padding_mask(tokens, pad_id=0):
                \"\"\"(B, T) ids -> (B, 1, 1, T) bool, True at padding.\"\"\"
                ### BEGIN SOLUTION
                return tf.equal(tokens, pad_id)[:, tf.newaxis, tf.newaxis, :]  # (B, 1, 1, T)
                ### END SOLUTION


            def look_ahead_mask(length):
                \"\"\"(T, T) bool, True above the diagonal (the future).\"\"\"
                ### BEGIN SOLUTION
                positions = tf.range(length)
                return positions[tf.newaxis, :] > positions[:, tf.newaxis]  # (T, T): key > query
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_masks",
        2,
        """
        tokens = tensor([[7, 6, 0, 0], [1, 2, 3, 0]])
        pm = padding_mask(tokens)
        assert tuple(pm.shape) == (2, 1, 1, 4), f"padding_mask shape {tuple(pm.shape)}, expected (2, 1, 1, 4)"
        assert to_numpy(pm).dtype == bool, f"padding_mask must be boolean, got {to_numpy(pm).dtype}"
        assert_equal(pm, [[[[False, False, True, True]]], [[[False, False, False, True]]]], "padding_mask")
        la = look_ahead_mask(4)
        assert to_numpy(la).dtype == bool, f"look_ahead_mask must be boolean, got {to_numpy(la).dtype}"
        assert_equal(la, np.triu(np.ones((4, 4), dtype=bool), k=1), "look_ahead_mask(4)")
    """,
        probe=PROBE_MASKS,
    ),
    tests(
        "test_no_look_ahead",
        2,
        """
        # With your look-ahead mask (and txcourse's attention), no query attends to a later key, and changing
        # the later values leaves the earlier outputs unchanged.
        attend = tx.scaled_dot_product_attention
        q, k, v = tensor(normal(1, 6, 8, seed=10)), tensor(normal(1, 6, 8, seed=11)), normal(1, 6, 4, seed=12)
        out, weights = attend(q, k, tensor(v), look_ahead_mask(6))
        assert (np.triu(to_numpy(weights)[0], k=1) == 0).all(), "a query attended to a later key"
        v_changed = v.copy()
        v_changed[:, 3:] += 100.0  # change positions 3, 4, 5
        out_changed, _ = attend(q, k, tensor(v_changed), look_ahead_mask(6))
        assert_close(to_numpy(out_changed)[:, :3], to_numpy(out)[:, :3], 1e-5, "outputs 0-2 after changing values 3-5")
    """,
        probe="""
            # the student's look-ahead mask, alone and combined with padding (txcourse's attention is redacted here)
            rng = np.random.default_rng(PROBE_SEED + 6)
            n = int(rng.integers(2, 10))
            probe_emit(f"look_ahead_mask({n})", look_ahead_mask(n), 0)
            pads = np.arange(n) >= int(rng.integers(1, n))
            probe_emit("combined with padding", np.logical_or(to_numpy(look_ahead_mask(n)), pads), 0)
        """,
    ),
    md("""
        ## Exercise 3: splitting and merging heads (2 points)

        Multi-head attention runs `H` attentions of width `d_k = D / H` side by side. Write
        - `split_heads(x, num_heads)`: `(B, T, D)` → `(B, H, T, d_k)`; head `h` gets the columns
          `h * d_k` to `(h + 1) * d_k - 1`;
        - `merge_heads(x)`: `(B, H, T, d_k)` → `(B, T, D)`, the concatenation of the heads
          (the inverse of `split_heads`).

        Reshape to `(B, T, H, d_k)` and then swap the `T` and `H` axes; a direct reshape to `(B, H, T, d_k)`
        would mix positions into heads.
        """),
    solution(
        "heads",
        {
            "torch": """
            def split_heads(x, num_heads):
                \"\"\"(B, T, D) -> (B, H, T, d_k).\"\"\"
                ### BEGIN SOLUTION
                batch, length, width = x.shape
                x = x.reshape(batch, length, num_heads, width // num_heads)  # (B, T, H, d_k)
                return x.transpose(1, 2)  # (B, H, T, d_k)
                ### END SOLUTION


            def merge_heads(x):
                \"\"\"(B, H, T, d_k) -> (B, T, D = H * d_k).\"\"\"
                ### BEGIN SOLUTION
                batch, heads, length, d_k = x.shape
                return x.transpose(1, 2).reshape(batch, length, heads * d_k)  # (B, T, D)
                ### END SOLUTION
        """,
            "tf": """
            def split_heads(x, num_heads):
                \"\"\"(B, T, D) -> (B, H, T, d_k).\"\"\"
                ### BEGIN SOLUTION
                batch, length, width = tf.shape(x)[0], tf.shape(x)[1], x.shape[-1]
                x = tf.reshape(x, (batch, length, num_heads, width // num_heads))  # (B, T, H, d_k)
                return tf.transpose(x, (0, 2, 1, 3))  # (B, H, T, d_k)
                ### END SOLUTION


            def merge_heads(x):
                \"\"\"(B, H, T, d_k) -> (B, T, D = H * d_k).\"\"\"
                ### BEGIN SOLUTION
                batch, length = tf.shape(x)[0], tf.shape(x)[2]
                x = tf.transpose(x, (0, 2, 1, 3))  # (B, T, H, d_k)
                return tf.reshape(x, (batch, length, x.shape[2] * x.shape[3]))  # (B, T, D)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_heads",
        2,
        """
        x = normal(2, 5, 12, seed=13)
        heads = split_heads(tensor(x), 3)
        assert tuple(heads.shape) == (2, 3, 5, 4), f"split_heads shape {tuple(heads.shape)}, expected (2, 3, 5, 4)"
        assert_close(to_numpy(heads)[:, 1], x[:, :, 4:8], 0.0, "head 1 holds columns 4-7")
        assert_close(merge_heads(heads), x, 0.0, "merge_heads(split_heads(x))")
    """,
        probe=PROBE_HEADS,
    ),
    md("""
        ## Exercise 4: multi-head attention from your pieces (3 points)

        $\\mathrm{MultiHead}(Q, K, V) = \\mathrm{Concat}(\\mathrm{head}_1, \\dots, \\mathrm{head}_h)W^O$ with
        $\\mathrm{head}_i = \\mathrm{Attention}(QW_i^Q, KW_i^K, VW_i^V)$. The heads are concatenated and
        projected, not added (the source notes said "added": errata E5).

        Write `multi_head_attention(mha, query, key, value, mask=None)` that uses the projections of a
        `tx.MultiHeadAttention` layer `mha` (`mha.w_q`, `mha.w_k`, `mha.w_v`, `mha.w_o`, each a linear layer
        you call on a `(B, T, D)` tensor; `mha.num_heads`) with **your** `split_heads`,
        `scaled_dot_product_attention` and `merge_heads`. Return `(output (B, T_q, D), weights (B, H, T_q, T_k))`.
        """),
    solution(
        "multi_head_attention",
        """
        def multi_head_attention(mha, query, key, value, mask=None):
            \"\"\"Concat(head_1..head_H) W^O with mha's projections and your pieces. Returns (output, weights).\"\"\"
            ### BEGIN SOLUTION
            q = split_heads(mha.w_q(query), mha.num_heads)  # (B, H, T_q, d_k)
            k = split_heads(mha.w_k(key), mha.num_heads)  # (B, H, T_k, d_k)
            v = split_heads(mha.w_v(value), mha.num_heads)  # (B, H, T_k, d_k)
            heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T_q, d_k), (B, H, T_q, T_k)
            return mha.w_o(merge_heads(heads)), weights  # (B, T_q, D), (B, H, T_q, T_k)
            ### END SOLUTION
    """,
    ),
    tests(
        "test_multi_head_attention",
        3,
        """
        # This test judges exercise 4 alone: your multi_head_attention runs with txcourse's attention and heads
        # in place of yours (exercises 1 and 3 have their own tests).
        pieces = ("split_heads", "merge_heads", "scaled_dot_product_attention")
        yours = {name: globals()[name] for name in pieces if name in globals()}  # put back at the end
        def use_txcourse_pieces(layer):
            global split_heads, merge_heads, scaled_dot_product_attention
            split_heads = lambda x, num_heads: layer.split_heads(x)
            merge_heads, scaled_dot_product_attention = layer.merge_heads, tx.scaled_dot_product_attention

        set_seed(0)
        mha = tx.MultiHeadAttention(16, 4)  # fixed weights from the seed; txcourse computes the reference
        use_txcourse_pieces(mha)
        x, memory = tensor(normal(2, 5, 16, seed=15)), tensor(normal(2, 7, 16, seed=16))
        mask = tx.padding_mask(tensor([[1, 2, 3, 4, 5, 0, 0], [1, 2, 3, 0, 0, 0, 0]]))
        out, weights = multi_head_attention(mha, x, memory, memory, mask)
        assert tuple(out.shape) == (2, 5, 16) and tuple(weights.shape) == (2, 4, 5, 7)
        reference = mha(x, memory, memory, mask, return_weights=True)  # (output, cache, weights)
        assert_close(out, reference.output, 1e-5, "your multi-head attention vs tx.MultiHeadAttention")
        assert_close(weights, reference.weights, 1e-5, "attention weights per head")
        globals().update(yours)
    """,
        probe=(PROBE_MULTI_HEAD, PROBE_MULTI_HEAD_RUN),
    ),
    md("""
        ## Looking at masks and attention

        Dark cells are `True`: positions that may not be attended. Below them, the self-attention weights of
        a random (untrained) layer on a padded sentence of 6 tokens, with look-ahead and padding masks
        combined as the decoder does: each row sums to 1 over the allowed keys.
        """),
    code(
        """
        tokens = tensor([[11, 12, 13, 14, 0, 0]])
        combined = to_numpy(look_ahead_mask(6)) | to_numpy(padding_mask(tokens))[0, 0]  # (6, 6)
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained")
        plots.plot_mask(look_ahead_mask(6), title="look_ahead_mask(6)", ax=axes[0])
        plots.plot_mask(padding_mask(tokens), title="padding_mask (2 pads)", ax=axes[1])
        plots.plot_mask(combined, title="combined", ax=axes[2])
        plt.show()

        set_seed(1)
        mha = tx.MultiHeadAttention(16, 4)
        x = tensor(normal(1, 6, 16, seed=17))
        _, weights = multi_head_attention(mha, x, x, x, tensor(combined))
        plots.plot_attention_heads(to_numpy(weights)[0], title="4 heads, look-ahead + padding mask")
        plt.show()
    """,
        in_probe_run=False,
    ),
]
