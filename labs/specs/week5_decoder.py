"""Week 5 lab: the decoder layer and the look-ahead leak test (Vaswani et al. 2017, Sec. 3.1 and 3.2.3)."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, readonly, solution, tests
from specs.week4_encoder import RUN

COPY_WEIGHTS = {
    "torch": """
        def copy_weights(source, target):
            \"\"\"Load the weights of `source` (a txcourse layer) into `target` (yours): same attribute names.\"\"\"
            target.load_state_dict(source.state_dict())
    """,
    "tf": """
        def copy_weights(source, target, names=("self_attn", "self_attn_norm", "cross_attn", "cross_attn_norm",
                                                "feed_forward", "feed_forward_norm")):
            \"\"\"Set the weights of `target` (yours, called once so Keras has built it) from `source` (txcourse).\"\"\"
            for name in names:
                getattr(target, name).set_weights(getattr(source, name).get_weights())
    """,
}

CELLS = [
    md(
        (
            """
        # Week 5 lab: the decoder ([[FW]])

        A decoder layer has three sublayers, each wrapped as $x \\leftarrow \\mathrm{LayerNorm}(x +
        \\mathrm{Dropout}(\\mathrm{Sublayer}(x)))$ (post-LN):

        1. **masked self-attention** over the target prefix: position $t$ may attend to positions
           $\\le t$ only (the look-ahead mask), and never to padding;
        2. **encoder-decoder (cross) attention**: queries from the decoder, keys and values from the
           encoder output (the *memory*), with the source padding mask;
        3. the position-wise **feed-forward** network.

        The look-ahead mask is what lets the decoder train on a whole target sentence at once (teacher
        forcing) without seeing the answer. You will write the layer and its mask, and a test that
        catches a decoder that peeks at the future.
        """,
            HOW_IT_WORKS,
        )
    ),
    readonly("install", INSTALL),
    readonly("setup", (SETUP, RUN)),
    md(SETUP_NOTE),
    md(
        {
            "torch": """
            ## Exercise 1: `DecoderLayer` (2 + 4 points)

            Create these attributes in `__init__` (the tests copy a `tx.DecoderLayer`'s weights into yours by name):
            `self_attn` and `cross_attn` (each `tx.MultiHeadAttention(d_model, num_heads)`), `self_attn_norm`,
            `cross_attn_norm` and `feed_forward_norm` (each `nn.LayerNorm(d_model, eps=layer_norm_eps)`),
            `feed_forward` (`tx.PositionwiseFeedForward(d_model, d_ff)`) and `dropout` (`nn.Dropout(dropout)`).

            `forward(x, memory, self_attn_mask=None, cross_attn_mask=None)`: `x` `(B, T_tgt, D)`, `memory`
            `(B, T_src, D)`; the self-attention is `self.self_attn(x, x, x, self_attn_mask)`, the cross-attention
            `self.cross_attn(x, memory, memory, cross_attn_mask)`. Return `(B, T_tgt, D)`.
        """,
            "tf": """
            ## Exercise 1: `DecoderLayer` (2 + 4 points)

            Create these attributes in `__init__` (the tests copy a `tx.DecoderLayer`'s weights into yours by name):
            `self_attn` and `cross_attn` (each `tx.MultiHeadAttention(d_model, num_heads)`), `self_attn_norm`,
            `cross_attn_norm` and `feed_forward_norm` (each `keras.layers.LayerNormalization(epsilon=layer_norm_eps)`),
            `feed_forward` (`tx.PositionwiseFeedForward(d_model, d_ff)`) and `dropout` (`keras.layers.Dropout(dropout)`).

            `call(x, memory, self_attn_mask=None, cross_attn_mask=None, training=None)`: `x` `(B, T_tgt, D)`,
            `memory` `(B, T_src, D)`; the self-attention is `self.self_attn(x, x, x, self_attn_mask)`, the
            cross-attention `self.cross_attn(x, memory, memory, cross_attn_mask)`; pass `training=training` to
            the dropout. Return `(B, T_tgt, D)`.
        """,
        }
    ),
    solution(
        "decoder_layer",
        {
            "torch": """
            class DecoderLayer(nn.Module):
                \"\"\"Masked self-attention, cross-attention over the memory, FFN; each wrapped post-LN.\"\"\"

                def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6):
                    super().__init__()
                    ### BEGIN SOLUTION
                    self.self_attn = tx.MultiHeadAttention(d_model, num_heads)
                    self.self_attn_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
                    self.cross_attn = tx.MultiHeadAttention(d_model, num_heads)
                    self.cross_attn_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
                    self.feed_forward = tx.PositionwiseFeedForward(d_model, d_ff)
                    self.feed_forward_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
                    self.dropout = nn.Dropout(dropout)
                    ### END SOLUTION

                def forward(self, x, memory, self_attn_mask=None, cross_attn_mask=None):
                    ### BEGIN SOLUTION
                    x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, self_attn_mask)))  # (B, T_tgt, D)
                    x = self.cross_attn_norm(x + self.dropout(self.cross_attn(x, memory, memory, cross_attn_mask)))
                    x = self.feed_forward_norm(x + self.dropout(self.feed_forward(x)))  # (B, T_tgt, D)
                    return x
                    ### END SOLUTION
        """,
            "tf": """
            class DecoderLayer(keras.layers.Layer):
                \"\"\"Masked self-attention, cross-attention over the memory, FFN; each wrapped post-LN.\"\"\"

                def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6, **kwargs):
                    super().__init__(**kwargs)
                    ### BEGIN SOLUTION
                    self.self_attn = tx.MultiHeadAttention(d_model, num_heads)
                    self.self_attn_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
                    self.cross_attn = tx.MultiHeadAttention(d_model, num_heads)
                    self.cross_attn_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
                    self.feed_forward = tx.PositionwiseFeedForward(d_model, d_ff)
                    self.feed_forward_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
                    self.dropout = keras.layers.Dropout(dropout)
                    ### END SOLUTION

                def call(self, x, memory, self_attn_mask=None, cross_attn_mask=None, training=None):
                    ### BEGIN SOLUTION
                    attended = self.self_attn(x, x, x, self_attn_mask)  # (B, T_tgt, D)
                    x = self.self_attn_norm(x + self.dropout(attended, training=training))
                    attended = self.cross_attn(x, memory, memory, cross_attn_mask)  # (B, T_tgt, D)
                    x = self.cross_attn_norm(x + self.dropout(attended, training=training))
                    x = self.feed_forward_norm(x + self.dropout(self.feed_forward(x), training=training))
                    return x
                    ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_decoder_layer_parts",
        2,
        (
            """
        layer = DecoderLayer(16, 4, 32)
        for name in ("self_attn", "self_attn_norm", "cross_attn", "cross_attn_norm", "feed_forward",
                     "feed_forward_norm", "dropout"):
            assert hasattr(layer, name), f"DecoderLayer has no attribute {name!r}"
        assert layer.self_attn is not layer.cross_attn, "self- and cross-attention need their own weights"

        out = run(layer, tensor(normal(2, 4, 16, seed=1)), tensor(normal(2, 6, 16, seed=2)))
        assert tuple(out.shape) == (2, 4, 16), f"output shape {tuple(out.shape)}, expected (2, 4, 16)"
        ### BEGIN HIDDEN TESTS
        out = run(layer, tensor(normal(1, 9, 16, seed=3)), tensor(normal(1, 2, 16, seed=4)))
        assert tuple(out.shape) == (1, 9, 16), "T_tgt = 9, T_src = 2"
        ### END HIDDEN TESTS
    """
        ),
    ),
    tests(
        "test_decoder_layer_matches_reference",
        4,
        (
            COPY_WEIGHTS,
            """
        set_seed(0)
        reference = tx.DecoderLayer(16, 4, 32, dropout=0.1)  # fixed weights from the seed
        mine = DecoderLayer(16, 4, 32, dropout=0.1)
        x, memory = tensor(normal(2, 5, 16, seed=5)), tensor(normal(2, 7, 16, seed=6))
        run(mine, x, memory)  # builds Keras weights (no effect in PyTorch)
        copy_weights(reference, mine)
        assert_close(run(mine, x, memory), run(reference, x, memory), 1e-5, "decoder layer, no masks")
        self_mask = tx.look_ahead_mask(5)
        cross_mask = tx.padding_mask(tensor([[1, 2, 3, 4, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7]]))
        assert_close(run(mine, x, memory, self_mask, cross_mask), run(reference, x, memory, self_mask, cross_mask),
                     1e-5, "decoder layer with look-ahead and source padding masks")
        ### BEGIN HIDDEN TESTS
        from txcourse.notebook.checks import no_calls_to
        set_seed(1)
        # a layer_norm_eps far from the default, so that ignoring it shows
        reference = tx.DecoderLayer(24, 6, 48, dropout=0.3, layer_norm_eps=0.5)
        with no_calls_to(tx.DecoderLayer, what="DecoderLayer"):
            mine = DecoderLayer(24, 6, 48, dropout=0.3, layer_norm_eps=0.5)
            x, memory = tensor(normal(3, 4, 24, seed=7)), tensor(normal(3, 3, 24, seed=8))
            run(mine, x, memory)
        copy_weights(reference, mine)
        cross_mask = tx.padding_mask(tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]))
        with no_calls_to(tx.DecoderLayer, what="DecoderLayer"):
            out = run(mine, x, memory, None, cross_mask)
        assert_close(out, run(reference, x, memory, None, cross_mask), 1e-5,
                     "cross-attention mask only, layer_norm_eps=0.5")
        # training mode, with a stand-in for dropout that halves its input: LayerNorm(x + Dropout(Sublayer(x)))
        # in each of the three sublayers, dropout on the sublayer's output only
        if "torch" in globals():
            class HalfDropout(nn.Module):
                def forward(self, x):
                    return 0.5 * x if self.training else x
        else:
            class HalfDropout(keras.layers.Layer):
                def call(self, x, training=None):
                    return 0.5 * x if training else x
        for target in (mine, reference):  # Keras: no new sublayer on a built layer, so past its tracking
            (setattr if "torch" in globals() else object.__setattr__)(target, "dropout", HalfDropout())
        assert_close(run(mine, x, memory, None, cross_mask, training=True),
                     run(reference, x, memory, None, cross_mask, training=True), 1e-5,
                     "training mode: dropout (a stand-in that halves) on each sublayer's output, before the residual sum")
        ### END HIDDEN TESTS
    """,
        ),
    ),
    md("""
        ## Exercise 2: the decoder's self-attention mask (2 points)

        Write `decoder_self_attention_mask(tgt, pad_id=0)`: for target ids `tgt` `(B, T)` return the boolean
        `(B, 1, T, T)` mask that is `True` where query `t` may not attend key `s`: a future key (`s > t`) **or**
        a padding key. You may use `tx.look_ahead_mask` and `tx.padding_mask` (week 3).
        """),
    solution(
        "decoder_mask",
        {
            "torch": """
            def decoder_self_attention_mask(tgt, pad_id=0):
                \"\"\"(B, T) target ids -> (B, 1, T, T) bool: True for future or padding keys.\"\"\"
                ### BEGIN SOLUTION
                length = tgt.shape[1]
                return tx.look_ahead_mask(length).to(tgt.device) | tx.padding_mask(tgt, pad_id)  # (B, 1, T, T)
                ### END SOLUTION
        """,
            "tf": """
            def decoder_self_attention_mask(tgt, pad_id=0):
                \"\"\"(B, T) target ids -> (B, 1, T, T) bool: True for future or padding keys.\"\"\"
                ### BEGIN SOLUTION
                length = tgt.shape[1]
                return tf.logical_or(tx.look_ahead_mask(length), tx.padding_mask(tgt, pad_id))  # (B, 1, T, T)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_decoder_mask",
        2,
        """
        tgt = tensor([[1, 5, 6, 0], [1, 7, 0, 0]])
        mask = decoder_self_attention_mask(tgt)
        assert tuple(mask.shape) == (2, 1, 4, 4), f"shape {tuple(mask.shape)}, expected (2, 1, 4, 4)"
        future = np.triu(np.ones((4, 4), dtype=bool), k=1)
        expected = np.stack([future | [False, False, False, True], future | [False, False, True, True]])[:, None]
        assert_equal(mask, expected, "decoder self-attention mask")
        ### BEGIN HIDDEN TESTS
        tgt = tensor([[4, 4, 9, 9, 9]])
        expected = np.triu(np.ones((5, 5), dtype=bool), k=1) | np.array([False, False, True, True, True])
        assert_equal(decoder_self_attention_mask(tgt, pad_id=9), expected[None, None], "pad_id=9")
        ### END HIDDEN TESTS
    """,
    ),
    md("""
        ## Exercise 3: a test for look-ahead leaks (3 + 3 points)

        A decoder leaks if its output at position $t$ depends on target tokens after $t$: at inference time
        those tokens do not exist yet, so a leaky model trains to a low loss and then translates badly.
        Tutorials have shipped such leaks (a mask of the wrong sign, a mask applied to the wrong axis).

        Write `future_leak(decode, tgt, t, vocab_size, seed=0)`:

        - `decode(tgt)` is any function from target ids `(B, T)` to outputs `(B, T, ...)` (a tensor or an array);
        - replace every token **after** position `t` (positions `t + 1 .. T - 1`) by a different random id in
          `[1, vocab_size)` (use `np.random.default_rng(seed)`), keeping positions `0 .. t`;
        - return, as a Python float, the largest absolute change of the outputs at positions `0 .. t`.

        A correct decoder gives 0 (up to float rounding) for every `t`.
        """),
    solution(
        "future_leak",
        """
        def future_leak(decode, tgt, t, vocab_size, seed=0):
            \"\"\"Largest change of decode(tgt)[:, :t + 1] when the tokens after position t are replaced.\"\"\"
            ### BEGIN SOLUTION
            rng = np.random.default_rng(seed)
            ids = to_numpy(tgt)
            changed = ids.copy()
            tail = changed[:, t + 1:]
            shift = rng.integers(1, vocab_size - 1, size=tail.shape)  # in [1, V - 2]
            changed[:, t + 1:] = (tail - 1 + shift) % (vocab_size - 1) + 1  # a different id in [1, V)
            before = to_numpy(decode(tensor(ids)))[:, :t + 1]
            after = to_numpy(decode(tensor(changed)))[:, :t + 1]
            return float(np.abs(after.astype(np.float64) - before.astype(np.float64)).max())
            ### END SOLUTION
    """,
    ),
    tests(
        "test_future_leak_detects_leaks",
        3,
        """
        tgt = tensor([[1, 4, 7, 2, 9, 3], [1, 8, 8, 5, 2, 6]])
        def sees_all(ids):  # output t holds the whole sentence: a leak
            ids = to_numpy(ids).astype(float)
            return np.repeat(ids[:, None, :], ids.shape[1], axis=1)  # (B, T, T)

        def sees_past(ids):  # output t holds tokens 0..t only: no leak
            return np.tril(sees_all(ids))  # (B, T, T)

        for t in range(5):
            assert future_leak(sees_past, tgt, t, vocab_size=10) == 0.0, f"no leak at t={t}, but future_leak > 0"
            assert future_leak(sees_all, tgt, t, vocab_size=10) > 0.0, f"a leak at t={t} went undetected"
        assert isinstance(future_leak(sees_past, tgt, 2, vocab_size=10), float), "return a Python float"
        ### BEGIN HIDDEN TESTS
        # every later token must change (a function that reads only the last token must be caught)
        last_token = lambda ids: np.repeat(to_numpy(ids)[:, -1:], to_numpy(ids).shape[1], axis=1).astype(float)
        for seed in range(5):
            assert future_leak(last_token, tgt, 3, vocab_size=10, seed=seed) > 0.0, "tokens after t must all change"
        # positions 0..t must be kept
        first_tokens = lambda ids: to_numpy(ids).astype(float)
        assert future_leak(first_tokens, tgt, 4, vocab_size=3) == 0.0, "positions 0..t must be kept as they were"
        # what decode sees: positions 0..t as they were; each later token a different id in [1, vocab_size);
        # the result is the LARGEST absolute change (here only output 0 of each sentence moves, by the last token)
        original = to_numpy(tgt)
        for seed in range(8):
            for vocab_size in (3, 5, 12):
                seen = []
                def spy(ids):
                    seen.append(to_numpy(ids).copy())
                    out = np.zeros(to_numpy(ids).shape, dtype=np.float64)
                    out[:, 0] = to_numpy(ids)[:, -1]
                    return out
                for t in (0, 2, 4):
                    seen.clear()
                    leak = future_leak(spy, tgt, t, vocab_size=vocab_size, seed=seed)
                    changed = [ids for ids in seen if not np.array_equal(ids, original)]
                    assert len(changed) == 1, "decode must see the original ids and one changed copy"
                    new = changed[0]
                    assert (new[:, :t + 1] == original[:, :t + 1]).all(), f"positions 0..{t} must be kept"
                    assert (new[:, t + 1:] != original[:, t + 1:]).all(), \\
                        f"every token after t={t} must get a DIFFERENT id (seed={seed}, vocab_size={vocab_size})"
                    assert ((new[:, t + 1:] >= 1) & (new[:, t + 1:] < vocab_size)).all(), "new ids in [1, vocab_size)"
                    expected = np.abs(new[:, -1].astype(np.float64) - original[:, -1]).max()
                    assert abs(leak - expected) < 1e-9, \\
                        f"future_leak should be the largest absolute change of the outputs: {expected}, got {leak}"
        ### END HIDDEN TESTS
    """,
    ),
    tests(
        "test_decoder_does_not_look_ahead",
        3,
        (
            """
        # future_leak on a real decoder layer (txcourse's, so that this test judges exercise 3 alone): with the
        # decoder mask, no leak at any position; the same layer without the mask leaks.
        set_seed(2)
        layer, embed = tx.DecoderLayer(16, 4, 32, dropout=0.1), tx.TransformerEmbedding(12, 16, max_len=10, dropout=0.1)
        memory = tensor(normal(2, 5, 16, seed=9))
        tgt = tensor([[1, 3, 5, 7, 9, 11, 2], [1, 4, 4, 6, 2, 0, 0]])

        decoder_mask = lambda ids: tx.padding_mask(ids) | tx.look_ahead_mask(ids.shape[1]) if "torch" in globals() \\
            else tf.logical_or(tx.padding_mask(ids), tx.look_ahead_mask(ids.shape[1]))
        masked = lambda ids: run(layer, run(embed, ids), memory, decoder_mask(ids))
        unmasked = lambda ids: run(layer, run(embed, ids), memory)
        for t in range(6):
            leak = future_leak(masked, tgt, t, vocab_size=12)
            assert leak < 1e-5, f"future_leak finds a leak at t={t} in a masked layer: {leak:.3g}"
        assert future_leak(unmasked, tgt, 2, vocab_size=12) > 1e-3, "without a mask the layer should leak"
        ### BEGIN HIDDEN TESTS
        set_seed(3)
        from txcourse import TransformerConfig
        model = tx.Transformer(TransformerConfig(
            src_vocab_size=12, tgt_vocab_size=12, d_model=16, num_heads=4, num_encoder_layers=1,
            num_decoder_layers=2, d_ff=32, max_len=16))
        src = tensor([[3, 4, 5, 0], [6, 7, 8, 9]])
        whole = lambda ids: run(model, src, ids)
        for t in range(6):
            assert future_leak(whole, tgt, t, vocab_size=12) < 1e-4, f"tx.Transformer should not leak (t={t})"
        ### END HIDDEN TESTS
    """
        ),
    ),
    md("""
        ## Looking at the masks and the cross-attention

        Left: the mask your function builds for a padded target; right: the cross-attention of your layer
        (random weights) from each target position to the source tokens, with the source padding masked.
        """),
    code("""
        set_seed(4)
        layer = DecoderLayer(16, 4, 32)
        tgt = tensor([[1, 6, 7, 8, 2, 0]])
        src_tokens = tensor([[5, 9, 3, 0, 0]])
        x = run(tx.TransformerEmbedding(12, 16, max_len=10), tgt)
        memory = tensor(normal(1, 5, 16, seed=10))
        self_mask, cross_mask = decoder_self_attention_mask(tgt), tx.padding_mask(src_tokens)
        run(layer, x, memory, self_mask, cross_mask)
        # the weights are an output: ask your layer's cross_attn for them, on the output of its first sublayer
        queries = run(layer.self_attn_norm, x + run(layer.self_attn, x, x, x, self_mask))  # (B, T_tgt, D)
        _, _, weights = run(layer.cross_attn, queries, memory, memory, cross_mask, return_weights=True)
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
        plots.plot_mask(self_mask, title="look-ahead + target padding", ax=left)
        plots.plot_attention(to_numpy(weights)[0, 0],
                             ["s5", "s9", "s3", "<pad>", "<pad>"], ["<sos>", "t6", "t7", "t8", "<eos>", "<pad>"],
                             title="cross-attention, head 0 (random weights)", ax=right)
        plt.show()
    """),
]
