"""Week 5 lab: the decoder layer and the look-ahead leak test (Vaswani et al. 2017, Sec. 3.1 and 3.2.3)."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, readonly, solution, tests
from specs.week4_encoder import RUN
from txcourse.course.grading.allowlist import setup_allow, sublayers_allow

# The probe run's txcourse (txcourse/course/grading/allowlist.py): the building blocks the exercise names
# (tx.MultiHeadAttention with the attention it runs, tx.PositionwiseFeedForward, the masks, the layers'
# initialisers); tx.DecoderLayer (its constructor included), the encoder's layer, the fused and tiled
# attention and the rest raise.
ALLOW = {
    fw: [
        *setup_allow(fw),
        *sublayers_allow(fw),
        f"txcourse.{fw}.init:linear",
        f"txcourse.{fw}.init:layer_norm",
    ]
    for fw in ("torch", "tf")
}

# The probes: what the grader checks outside the student's process (fresh inputs from PROBE_SEED).
# Fresh weights for the six sublayers, by name (the test copies a tx.DecoderLayer's; its constructor is redacted
# here): txcourse's sublayers hold their weights in the same order in any correct layer.
SET_WEIGHTS = {
    "torch": """
        def set_weights(layer, rng):
            with torch.no_grad():
                for name in SUBLAYERS:
                    for _, weight in sorted(getattr(layer, name).named_parameters()):
                        shape = tuple(weight.shape)
                        new = 0.3 * rng.standard_normal(shape) + (1.0 if len(shape) == 1 else 0.0)
                        weight.copy_(torch.as_tensor(new, dtype=weight.dtype))
    """,
    "tf": """
        def set_weights(layer, rng):
            for name in SUBLAYERS:
                sublayer = getattr(layer, name)
                sublayer.set_weights([0.3 * rng.standard_normal(w.shape) + (1.0 if w.ndim == 1 else 0.0)
                                      for w in sublayer.get_weights()])
    """,
}
HALF_DROPOUT = {
    "torch": """
        class HalfDropout(nn.Module):  # a stand-in for dropout that halves its input in training mode
            def forward(self, x):
                return 0.5 * x if self.training else x


        mine.dropout = HalfDropout()
    """,
    "tf": """
        class HalfDropout(keras.layers.Layer):  # a stand-in for dropout that halves its input in training mode
            def call(self, x, training=None):
                return 0.5 * x if training else x


        object.__setattr__(mine, "dropout", HalfDropout())  # Keras: no new sublayer on a built layer
    """,
}
PROBE_PARTS = (
    """
    SUBLAYERS = ("self_attn", "self_attn_norm", "cross_attn", "cross_attn_norm", "feed_forward", "feed_forward_norm")
    """,
    SET_WEIGHTS,
    """
    rng = np.random.default_rng(PROBE_SEED)
    num_heads = int(rng.integers(1, 5))
    d_model, d_ff = num_heads * 2 * int(rng.integers(1, 5)), int(rng.integers(4, 50))
    layer = DecoderLayer(d_model, num_heads, d_ff)
    names = ("self_attn", "self_attn_norm", "cross_attn", "cross_attn_norm", "feed_forward", "feed_forward_norm",
             "dropout")
    probe_emit("has the attributes", np.array([hasattr(layer, name) for name in names]), 0)
    probe_emit("self_attn is not cross_attn",
               np.array(getattr(layer, "self_attn", None) is not getattr(layer, "cross_attn", None)), 0)
    for batch, t_tgt, t_src in ((1, 9, 2), tuple(int(n) for n in rng.integers(1, 8, 3))):
        x = tensor(rng.standard_normal((batch, t_tgt, d_model)), "float32")
        memory = tensor(rng.standard_normal((batch, t_src, d_model)), "float32")
        out = run(layer, x, memory)
        probe_emit(f"output shape, x ({batch}, {t_tgt}, {d_model}), memory ({batch}, {t_src}, {d_model})",
                   np.array(tuple(out.shape)), 0)
    # and the output itself, with weights drawn from the seed (the reference: the solution's layer with them)
    set_weights(layer, rng)
    probe_emit("output with weights drawn from the seed", run(layer, x, memory), 1e-5)
    """,
)
PROBE_MATCHES = (
    """
    rng = np.random.default_rng(PROBE_SEED)
    SUBLAYERS = ("self_attn", "self_attn_norm", "cross_attn", "cross_attn_norm", "feed_forward", "feed_forward_norm")
    """,
    SET_WEIGHTS,
    """
    num_heads = int(rng.integers(1, 4))
    d_model, d_ff = num_heads * 2 * int(rng.integers(1, 4)), int(rng.integers(8, 40))
    eps = float(rng.uniform(0.2, 1.0))  # far from the default, so that ignoring layer_norm_eps shows
    batch, t_tgt, t_src = (int(n) for n in rng.integers(2, 7, 3))
    mine = DecoderLayer(d_model, num_heads, d_ff, dropout=0.3, layer_norm_eps=eps)
    x = tensor(rng.standard_normal((batch, t_tgt, d_model)), "float32")
    memory = tensor(rng.standard_normal((batch, t_src, d_model)), "float32")
    run(mine, x, memory)  # builds Keras weights (no effect in PyTorch)
    set_weights(mine, rng)
    # look-ahead | target padding (position 0 never padding); source padding in every sentence
    target_padding = np.arange(t_tgt)[None, :] >= rng.integers(1, t_tgt + 1, (batch, 1))  # (B, T_tgt)
    self_mask = tensor(np.triu(np.ones((t_tgt, t_tgt), dtype=bool), 1) | target_padding[:, None, None, :])
    cross_mask = tensor(np.arange(t_src)[None, None, None, :] >= rng.integers(1, t_src, (batch, 1, 1, 1)))
    probe_emit("no masks", run(mine, x, memory), 1e-5)
    probe_emit("look-ahead and padding masks", run(mine, x, memory, self_mask, cross_mask), 1e-5)
    probe_emit("cross-attention mask only", run(mine, x, memory, None, cross_mask), 1e-5)
    # training mode: dropout (a stand-in that halves) on each sublayer's output, before the residual sum
    """,
    HALF_DROPOUT,
    """
    probe_emit("training, halving dropout", run(mine, x, memory, self_mask, cross_mask, training=True), 1e-5)
    """,
)
PROBE_MASK = """
    rng = np.random.default_rng(PROBE_SEED)
    # np.equal(mask, True): the test's assert_equal against a bool mask accepts 0/1 as well
    tgt = [[1, 5, 6, 0], [1, 7, 0, 0]]
    probe_emit("the test's example", np.equal(to_numpy(decoder_self_attention_mask(tensor(tgt))), True), 0)
    batch, length = int(rng.integers(1, 5)), int(rng.integers(2, 10))
    tgt = rng.integers(1, 12, (batch, length))
    tgt[np.arange(length)[None, :] >= rng.integers(1, length + 1, (batch, 1))] = 0  # padding at the end
    probe_emit(f"tgt {tgt.tolist()}", np.equal(to_numpy(decoder_self_attention_mask(tensor(tgt))), True), 0)
    pad_id = int(rng.integers(2, 12))
    tgt = np.where(rng.random((batch, length)) < 0.4, pad_id, rng.integers(0, 12, (batch, length)))  # 0 too
    tgt[0, -1] = pad_id
    probe_emit(f"tgt {tgt.tolist()}, pad_id={pad_id}",
               np.equal(to_numpy(decoder_self_attention_mask(tensor(tgt), pad_id=pad_id)), True), 0)
"""
# future_leak judges functions: the probe gives it stand-ins defined here, whose right answer it knows.
PROBE_LEAK = """
    rng = np.random.default_rng(PROBE_SEED)


    def sees_all(ids):  # output t holds the whole sentence: a leak
        ids = to_numpy(ids).astype(float)
        return np.repeat(ids[:, None, :], ids.shape[1], axis=1)  # (B, T, T)


    def sees_past(ids):  # output t holds tokens 0..t only: no leak
        return np.tril(sees_all(ids))  # (B, T, T)


    results = []
    batch, length, vocab_size = int(rng.integers(1, 4)), int(rng.integers(4, 9)), int(rng.integers(3, 15))
    tgt = rng.integers(0, 12, (batch, length))
    found = {"sees_past": [], "sees_all": []}
    for t in range(length - 1):
        seed = int(rng.integers(0, 1000))
        leak = future_leak(sees_past, tensor(tgt.copy()), t, vocab_size=vocab_size, seed=seed)
        found["sees_past"].append(leak)  # the test: == 0.0 (the grader applies "!= 0.0")
        results.append(leak)
        leak = future_leak(sees_all, tensor(tgt.copy()), t, vocab_size=vocab_size, seed=seed)
        found["sees_all"].append(leak)  # the grader applies "> 0.0"
        results.append(leak)
    # the numbers, not the yes/no: the grader applies the rule (round E 2026-11-28, E2: a float whose > lied)
    probe_emit("leak found, outputs that see tokens 0..t only", found["sees_past"], "!=0.0")
    probe_emit("leak found, outputs that see the whole sentence", found["sees_all"], ">0.0")


    def spy_for(original, t, vocab_size, weights):
        \"\"\"A decode whose output 0 tells what it was given: sum(weights) when every token after t is a
        different id in [1, vocab_size) and positions 0..t are kept; outputs after t are large and move.\"\"\"
        calls = []

        def spy(ids):
            ids = np.array(to_numpy(ids))
            calls.append(ids)
            kept = (ids[:, : t + 1] == original[:, : t + 1]).all()
            new = ids[:, t + 1 :]
            changed = ((new != original[:, t + 1 :]) & (new >= 1) & (new < vocab_size)).all(axis=1)  # (B,)
            out = np.zeros(ids.shape, dtype=np.float64)  # (B, T)
            out[:, 0] = float(weights @ changed) + (0.0 if kept else 100.0)
            out[:, t + 1 :] = 1000.0 * ids[:, t + 1 :]  # a correct future_leak never compares these
            return out

        return spy, calls


    # a correct future_leak returns sum(weights) here, whatever ids it draws, and decode sees one changed copy
    batch, length = int(rng.integers(2, 4)), int(rng.integers(5, 9))
    cases = ((3, 0, 1), (3, 1, 1), (int(rng.integers(3, 15)), int(rng.integers(1, length - 1)), 0))
    for i, (vocab_size, t, low) in enumerate(cases):
        original = rng.integers(low, vocab_size if low else 12, (batch, length))  # ids 1..V-1, or any in 0..11
        weights = rng.uniform(1.0, 2.0, batch)
        spy, calls = spy_for(original, t, vocab_size, weights)
        leak = future_leak(spy, tensor(original.copy()), t, vocab_size=vocab_size, seed=int(rng.integers(0, 1000)))
        results.append(leak)
        probe_emit(f"spy {i}: future_leak", np.array(leak, dtype=np.float64), 1e-6)
        probe_emit(f"spy {i}: changed copies decode saw",
                   np.array(sum(not np.array_equal(ids, original) for ids in calls)), 0)
    probe_emit("a Python float every time", np.array(all(isinstance(leak, float) for leak in results)), 0)
"""
PROBE_LOOK_AHEAD = """
    # The test judges future_leak on tx.DecoderLayer and tx.Transformer (redacted here): the probe judges it on
    # an attention decoder written here, with the look-ahead mask, without it, and with the mask on the wrong axis.
    rng = np.random.default_rng(PROBE_SEED + 1)
    vocab_size, width = int(rng.integers(6, 16)), 8
    table, positions = rng.standard_normal((vocab_size, width)), rng.standard_normal((16, width))
    w_q, w_k, w_v = (rng.standard_normal((width, width)) * s / np.sqrt(width) for s in (0.5, 0.5, 1.0))


    def attention_decoder(kind):
        def decode(ids):
            ids = to_numpy(ids).astype(np.int64)
            length = ids.shape[1]
            x = table[ids] + positions[:length]  # (B, T, W)
            scores = (x @ w_q) @ np.swapaxes(x @ w_k, 1, 2) / np.sqrt(width)  # (B, T, T)
            future = np.triu(np.ones((length, length), dtype=bool), 1)  # (T, T)
            blocked = {"look-ahead": future | (ids == 0)[:, None, :], "none": ~np.ones_like(future),
                       "wrong axis": future.T}[kind]
            scores = np.where(blocked, -np.inf, scores)
            weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
            weights = weights / weights.sum(axis=-1, keepdims=True)
            return tensor(x + weights @ (x @ w_v), "float32")  # (B, T, W)

        return decode


    batch, length = int(rng.integers(1, 4)), int(rng.integers(5, 10))
    tgt = rng.integers(1, vocab_size, (batch, length))
    tgt[np.arange(length)[None, :] >= rng.integers(2, length + 1, (batch, 1))] = 0  # padding at the end
    for kind in ("look-ahead", "none", "wrong axis"):
        leaks = [future_leak(attention_decoder(kind), tensor(tgt.copy()), t, vocab_size=vocab_size, seed=t)
                 for t in range(length - 1)]
        if kind == "look-ahead":  # the test: leak < 1e-5 at every t
            probe_emit("leak found with the look-ahead mask", leaks, ">=1e-5")  # the grader applies the rule
        else:  # the test: leak > 1e-3
            probe_emit(f"leak found, mask {kind}", leaks, ">1e-3")
"""

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
    """
        ),
        probe=PROBE_PARTS,
    ),
    tests(
        "test_decoder_layer_matches_reference",
        4,
        (
            COPY_WEIGHTS,
            """
        set_seed(0)
        reference = tx.DecoderLayer(TransformerConfig(d_model=16, num_heads=4, d_ff=32, dropout=0.1))  # weights: the seed's
        mine = DecoderLayer(16, 4, 32, dropout=0.1)
        x, memory = tensor(normal(2, 5, 16, seed=5)), tensor(normal(2, 7, 16, seed=6))
        run(mine, x, memory)  # builds Keras weights (no effect in PyTorch)
        copy_weights(reference, mine)
        assert_close(run(mine, x, memory), run(reference, x, memory), 1e-5, "decoder layer, no masks")
        self_mask = tx.look_ahead_mask(5)
        cross_mask = tx.padding_mask(tensor([[1, 2, 3, 4, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7]]))
        assert_close(run(mine, x, memory, self_mask, cross_mask), run(reference, x, memory, self_mask, cross_mask),
                     1e-5, "decoder layer with look-ahead and source padding masks")
    """,
        ),
        probe=PROBE_MATCHES,
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
    """,
        probe=PROBE_MASK,
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
    """,
        probe=PROBE_LEAK,
    ),
    tests(
        "test_decoder_does_not_look_ahead",
        3,
        (
            """
        # future_leak on a real decoder layer (txcourse's, so that this test judges exercise 3 alone): with the
        # decoder mask, no leak at any position; the same layer without the mask leaks.
        set_seed(2)
        config = TransformerConfig(src_vocab_size=12, d_model=16, num_heads=4, d_ff=32, dropout=0.1, max_len=10)
        layer, embed = tx.DecoderLayer(config), tx.TransformerEmbedding(config)
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
    """
        ),
        probe=PROBE_LOOK_AHEAD,
    ),
    md("""
        ## Looking at the masks and the cross-attention

        Left: the mask your function builds for a padded target; right: the cross-attention of your layer
        (random weights) from each target position to the source tokens, with the source padding masked.
        """),
    code(
        """
        set_seed(4)
        layer = DecoderLayer(16, 4, 32)
        tgt = tensor([[1, 6, 7, 8, 2, 0]])
        src_tokens = tensor([[5, 9, 3, 0, 0]])
        x = run(tx.TransformerEmbedding(TransformerConfig(src_vocab_size=12, d_model=16, max_len=10)), tgt)
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
    """,
        in_probe_run=False,
    ),
]
