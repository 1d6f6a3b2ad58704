"""Week 4 lab: the encoder layer (Vaswani et al. 2017, Sec. 3.1 and 3.3)."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, readonly, solution, tests
from txcourse.course.grading.allowlist import setup_allow, sublayers_allow

# The probe run's txcourse (txcourse/course/grading/allowlist.py): the building blocks the exercise names
# (tx.MultiHeadAttention with the attention it runs, tx.PositionwiseFeedForward, the masks, the layers'
# initialisers) and tx.EncoderLayer's constructor (the probes read the shapes of its weights); its forward
# pass, the decoder's layers, the fused and tiled attention and the rest raise.
ALLOW = {
    fw: [
        *setup_allow(fw),
        *sublayers_allow(fw),
        f"txcourse.{fw}.encoder:EncoderLayer.__init__",
        f"txcourse.{fw}.init:linear",
        f"txcourse.{fw}.init:layer_norm",
    ]
    for fw in ("torch", "tf")
}

# The probes: what the grader checks outside the student's process (fresh sizes and inputs from PROBE_SEED).
# Sizes of a layer: H heads of width 4..8 (a d_model of 4 or more: a LayerNorm row of 2 or 3 values can have a
# variance near its eps by chance, where the outputs depend on the layer's random initial weights), an FFN of
# width 16..40 (as narrow as 4, the ReLU sometimes silences a whole row of a layer without the FFN's residual,
# whose post-LN variance then falls short of 1 by more than the tolerance: a wrong answer, but one the tests'
# own sizes do not catch, and a seed should not decide).
PROBE_SIZES = """
    def probe_sizes(rng):
        \"\"\"(d_model, num_heads, d_ff) drawn from rng.\"\"\"
        num_heads = int(rng.integers(1, 5))
        return num_heads * int(rng.integers(4, 9)), num_heads, int(rng.integers(16, 41))
"""

# Weights drawn from rng, in the shapes of txcourse's layer of the same sizes (only its __init__ runs: its
# forward pass is redacted), loaded into the student's layer by attribute name as the tests' copy_weights
# does; the layer norms get gains near 1 and biases near 0, so that a wrong wrapping shows in them too.
PROBE_WEIGHTS = {
    "torch": """
        def probe_weights(rng, layer, d_model, num_heads, d_ff):
            \"\"\"Load weights drawn from rng into `layer` (yours), in the shapes of tx.EncoderLayer's.\"\"\"
            state = {}
            config = TransformerConfig(d_model=d_model, num_heads=num_heads, d_ff=d_ff)
            for key, value in tx.EncoderLayer(config).state_dict().items():
                if "norm" in key:
                    draw = float(key.endswith("weight")) + 0.3 * rng.standard_normal(tuple(value.shape))
                else:
                    draw = rng.standard_normal(tuple(value.shape)) / np.sqrt(value.shape[-1])
                state[key] = torch.tensor(draw, dtype=torch.float32)
            layer.load_state_dict(state)
    """,
    "tf": """
        def probe_weights(rng, layer, d_model, num_heads, d_ff):
            \"\"\"Set weights drawn from rng in `layer` (yours, called once so Keras has built it), by sublayer name.\"\"\"
            source = tx.EncoderLayer(TransformerConfig(d_model=d_model, num_heads=num_heads, d_ff=d_ff))
            for name in ("self_attn", "self_attn_norm", "feed_forward", "feed_forward_norm"):
                draws = []
                for index, value in enumerate(getattr(source, name).get_weights()):
                    if "norm" in name:  # [gamma, beta]
                        draws.append(float(index == 0) + 0.3 * rng.standard_normal(value.shape))
                    else:
                        draws.append(rng.standard_normal(value.shape) / np.sqrt(value.shape[0]))
                getattr(layer, name).set_weights([d.astype(np.float32) for d in draws])
    """,
}

# The padding tokens of a batch: rows of 1..T-1 real tokens (ids 1..19), then padding (id 0).
PROBE_TOKENS = """
    def probe_tokens(rng, batch, length):
        \"\"\"(tokens (B, T) with each row padded at its end, real (B, T) True at the real tokens).\"\"\"
        lengths = rng.integers(1, length, size=batch)  # at least one real token and one pad per row
        real = np.arange(length)[None, :] < lengths[:, None]  # (B, T)
        return np.where(real, rng.integers(1, 20, (batch, length)), 0), real
"""

PROBE_PARTS = (
    PROBE_SIZES,
    PROBE_WEIGHTS,
    """
    # The attributes the tests copy weights into, their kinds, the output shape, and post-LN: with
    # LayerNorm's initial gain 1 and bias 0 every output row has mean 0 and variance 1 (whatever the
    # layer's random initial weights, which depend on the order the student creates the sublayers in).
    rng = np.random.default_rng(PROBE_SEED)
    d_model, num_heads, d_ff = probe_sizes(rng)
    set_seed(PROBE_SEED)
    layer = EncoderLayer(d_model, num_heads, d_ff, dropout=0.1)
    for name in ("self_attn", "self_attn_norm", "feed_forward", "feed_forward_norm", "dropout"):
        probe_emit(f"has {name}", np.array(hasattr(layer, name)), 0)
    for name, kind in (("self_attn", tx.MultiHeadAttention), ("feed_forward", tx.PositionwiseFeedForward)):
        probe_emit(f"{name} is a tx.{kind.__name__}", np.array(isinstance(getattr(layer, name, None), kind)), 0)
    batch, length = int(rng.integers(1, 4)), int(rng.integers(1, 9))
    out = run(layer, tensor(rng.standard_normal((batch, length, d_model)), "float32"))
    probe_emit("output shape", np.array(tuple(out.shape)), 0)
    rows = to_numpy(out).reshape(batch * length, d_model).astype(np.float64)
    probe_emit("mean of each output row", rows.mean(-1), 1e-5)
    probe_emit("variance of each output row", rows.var(-1), 1e-3)
    # and the output itself, with weights drawn from the seed (the reference: the solution's layer with them)
    probe_weights(rng, layer, d_model, num_heads, d_ff)
    x = tensor(rng.standard_normal((batch, length, d_model)), "float32")
    probe_emit("output with weights drawn from the seed", run(layer, x), 1e-5)
""",
)

PROBE_MATCHES = (
    PROBE_SIZES,
    PROBE_WEIGHTS,
    PROBE_TOKENS,
    """
    # The layer's outputs with weights drawn from the seed: the default layer_norm_eps without a mask and
    # with a padding mask; then a layer_norm_eps far from the default (ignoring it shows) and a look-ahead
    # mask, alone and combined with padding.
    rng = np.random.default_rng(PROBE_SEED + 1)
    set_seed(PROBE_SEED + 1)
    for case in ("default eps", "large eps"):
        d_model, num_heads, d_ff = probe_sizes(rng)
        batch, length = int(rng.integers(1, 4)), int(rng.integers(2, 9))
        eps = float(rng.uniform(0.2, 1.0))
        if case == "default eps":
            mine = EncoderLayer(d_model, num_heads, d_ff, dropout=0.1)
        else:
            mine = EncoderLayer(d_model, num_heads, d_ff, dropout=0.2, layer_norm_eps=eps)
        x = tensor(rng.standard_normal((batch, length, d_model)), "float32")
        run(mine, x)  # builds Keras weights (no effect in PyTorch)
        probe_weights(rng, mine, d_model, num_heads, d_ff)
        tokens, _ = probe_tokens(rng, batch, length)
        padding = tx.padding_mask(tensor(tokens))
        if case == "default eps":
            probe_emit(f"{case}, no mask", run(mine, x), 1e-5)
            probe_emit(f"{case}, padding mask", run(mine, x, padding), 1e-5)
        else:
            look_ahead = tx.look_ahead_mask(length)
            probe_emit(f"{case}, look-ahead mask", run(mine, x, look_ahead), 1e-5)
            probe_emit(f"{case}, padding and look-ahead masks", run(mine, x, padding | look_ahead), 1e-5)
""",
)

PROBE_PADDING = (
    PROBE_SIZES,
    PROBE_TOKENS,
    """
    # Changing the vectors at padded positions must not change the outputs at the real tokens (with the
    # mask), and must (without it). Differences only: they do not depend on the layer's initial weights.
    rng = np.random.default_rng(PROBE_SEED + 2)
    d_model, num_heads, d_ff = probe_sizes(rng)
    batch, length = int(rng.integers(1, 4)), int(rng.integers(2, 9))
    set_seed(PROBE_SEED + 2)
    layer = EncoderLayer(d_model, num_heads, d_ff, dropout=0.0)
    x = rng.standard_normal((batch, length, d_model)).astype(np.float32)
    tokens, real = probe_tokens(rng, batch, length)
    mask = tx.padding_mask(tensor(tokens))
    out = to_numpy(run(layer, tensor(x), mask)).astype(np.float64)
    x_changed = np.where(real[:, :, None], x, rng.choice([-50.0, 50.0], size=(batch, 1, 1))).astype(np.float32)
    out_changed = to_numpy(run(layer, tensor(x_changed), mask)).astype(np.float64)
    probe_emit("largest change at the real tokens, with the mask", np.abs(out_changed - out)[real].max(), 1e-5)
    unmasked = to_numpy(run(layer, tensor(x_changed))).astype(np.float64)
    # the number, not the yes/no: the grader applies "> 1e-3" (round E 2026-11-28, E2)
    probe_emit("without the mask the padding matters", np.abs(unmasked - out)[real].max(), ">1e-3")
""",
)

# The stand-in for the dropout that halves its input in training mode: with it, the training-mode output says
# where the layer applies its dropout (the grader compares it with the reference's in its own process).
PROBE_HALF = {
    "torch": """
        class HalfDropout(nn.Module):
            def forward(self, x):
                return 0.5 * x if self.training else x


        def swap_dropout(layer):
            layer.dropout = HalfDropout()
    """,
    "tf": """
        class HalfDropout(keras.layers.Layer):
            def call(self, x, training=None):
                return 0.5 * x if training else x


        def swap_dropout(layer):
            object.__setattr__(layer, "dropout", HalfDropout())  # Keras: no new sublayer on a built layer
    """,
}

PROBE_DROPOUT = (
    PROBE_SIZES,
    PROBE_WEIGHTS,
    PROBE_HALF,
    """
    # Dropout in training mode only, and where it goes: with weights drawn from the seed and a stand-in
    # dropout that halves in training mode, the training-mode output (dropout on each sublayer's output,
    # before the residual sum).
    rng = np.random.default_rng(PROBE_SEED + 3)
    d_model, num_heads, d_ff = probe_sizes(rng)
    batch, length = int(rng.integers(1, 4)), int(rng.integers(2, 9))
    set_seed(PROBE_SEED + 3)
    layer = EncoderLayer(d_model, num_heads, d_ff, dropout=0.5)
    x = tensor(rng.standard_normal((batch, length, d_model)), "float32")
    # the numbers, not the yes/no: the grader applies the rule (round E 2026-11-28, E2)
    a, b = to_numpy(run(layer, x)).astype(np.float64), to_numpy(run(layer, x)).astype(np.float64)
    probe_emit("two calls in inference mode agree", np.abs(a - b).max(), "<=0.0")
    a, b = to_numpy(run(layer, x, training=True)), to_numpy(run(layer, x, training=True))
    probe_emit("two calls in training mode with dropout 0.5 differ", np.abs(a - b).max(), ">1e-3")
    quiet = EncoderLayer(d_model, num_heads, d_ff, dropout=0.0)
    same = np.abs(to_numpy(run(quiet, x, training=True)) - to_numpy(run(quiet, x))).max()
    probe_emit("dropout 0: training mode = inference mode", same, "<=1e-6")
    probe_weights(rng, layer, d_model, num_heads, d_ff)
    swap_dropout(layer)
    probe_emit("training mode, a dropout stand-in that halves", run(layer, x, training=True), 1e-5)
""",
)

# Copy the weights of a txcourse layer into the student's, sublayer by sublayer (same attribute names).
COPY_WEIGHTS = {
    "torch": """
        def copy_weights(source, target):
            \"\"\"Load the weights of `source` (a txcourse layer) into `target` (yours): same attribute names.\"\"\"
            target.load_state_dict(source.state_dict())
    """,
    "tf": """
        def copy_weights(source, target, names=("self_attn", "self_attn_norm", "feed_forward", "feed_forward_norm")):
            \"\"\"Set the weights of `target` (yours, called once so Keras has built it) from `source` (txcourse).\"\"\"
            for name in names:
                getattr(target, name).set_weights(getattr(source, name).get_weights())
    """,
}

# Run a layer without dropout: .eval() in PyTorch; Keras layers run in inference mode unless training=True.
RUN = {
    "torch": """
        def run(layer, *args, training=False, **kwargs):
            \"\"\"Call `layer` in inference mode (dropout off) or in training mode.\"\"\"
            layer.train(training)
            with torch.no_grad():
                return layer(*args, **kwargs)
    """,
    "tf": """
        def run(layer, *args, training=False, **kwargs):
            \"\"\"Call `layer` in inference mode (dropout off) or in training mode.\"\"\"
            return layer(*args, training=training, **kwargs)
    """,
}

CELLS = [
    md(
        (
            """
        # Week 4 lab: the encoder layer ([[FW]])

        An encoder layer has two sublayers: multi-head self-attention and a position-wise feed-forward
        network $\\mathrm{FFN}(x) = \\max(0, xW_1 + b_1)W_2 + b_2$. The paper wraps each one as

        $$x \\leftarrow \\mathrm{LayerNorm}(x + \\mathrm{Dropout}(\\mathrm{Sublayer}(x)))$$

        (residual connection, then layer normalisation: *post-LN*, Sec. 3.1 and 5.4). You will write that
        layer from txcourse's sublayers and check it against `tx.EncoderLayer` with the same weights.
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
            ## Exercise 1: `EncoderLayer` (2 + 4 + 2 + 2 points)

            Complete the class. In `__init__`, create these attributes (the names matter: the tests copy the
            weights of a `tx.EncoderLayer` into yours by name):

            | attribute | what |
            |---|---|
            | `self_attn` | `tx.MultiHeadAttention(d_model, num_heads)` |
            | `self_attn_norm` | `nn.LayerNorm(d_model, eps=layer_norm_eps)` |
            | `feed_forward` | `tx.PositionwiseFeedForward(d_model, d_ff)` |
            | `feed_forward_norm` | `nn.LayerNorm(d_model, eps=layer_norm_eps)` |
            | `dropout` | `nn.Dropout(dropout)` |

            In `forward(x, mask=None)`: self-attention of `x` to itself (`self.self_attn(x, x, x, mask)`), then
            the FFN, each wrapped as above. `x` is `(B, T, D)`, `mask` broadcasts to `(B, H, T, T)`
            (`True` = may not attend); return `(B, T, D)`.
        """,
            "tf": """
            ## Exercise 1: `EncoderLayer` (2 + 4 + 2 + 2 points)

            Complete the class. In `__init__`, create these attributes (the names matter: the tests copy the
            weights of a `tx.EncoderLayer` into yours by name):

            | attribute | what |
            |---|---|
            | `self_attn` | `tx.MultiHeadAttention(d_model, num_heads)` |
            | `self_attn_norm` | `keras.layers.LayerNormalization(epsilon=layer_norm_eps)` |
            | `feed_forward` | `tx.PositionwiseFeedForward(d_model, d_ff)` |
            | `feed_forward_norm` | `keras.layers.LayerNormalization(epsilon=layer_norm_eps)` |
            | `dropout` | `keras.layers.Dropout(dropout)` |

            In `call(x, mask=None, training=None)`: self-attention of `x` to itself
            (`self.self_attn(x, x, x, mask)`), then the FFN, each wrapped as above; pass `training=training`
            to the dropout. `x` is `(B, T, D)`, `mask` broadcasts to `(B, H, T, T)` (`True` = may not attend);
            return `(B, T, D)`.
        """,
        }
    ),
    solution(
        "encoder_layer",
        {
            "torch": """
            class EncoderLayer(nn.Module):
                \"\"\"Self-attention, then the FFN; each x = LayerNorm(x + Dropout(Sublayer(x))) (post-LN).\"\"\"

                def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6):
                    super().__init__()
                    ### BEGIN SOLUTION
                    self.self_attn = tx.MultiHeadAttention(d_model, num_heads)
                    self.self_attn_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
                    self.feed_forward = tx.PositionwiseFeedForward(d_model, d_ff)
                    self.feed_forward_norm = nn.LayerNorm(d_model, eps=layer_norm_eps)
                    self.dropout = nn.Dropout(dropout)
                    ### END SOLUTION

                def forward(self, x, mask=None):
                    ### BEGIN SOLUTION
                    x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask)))  # (B, T, D)
                    x = self.feed_forward_norm(x + self.dropout(self.feed_forward(x)))  # (B, T, D)
                    return x
                    ### END SOLUTION
        """,
            "tf": """
            class EncoderLayer(keras.layers.Layer):
                \"\"\"Self-attention, then the FFN; each x = LayerNorm(x + Dropout(Sublayer(x))) (post-LN).\"\"\"

                def __init__(self, d_model, num_heads, d_ff, dropout=0.1, layer_norm_eps=1e-6, **kwargs):
                    super().__init__(**kwargs)
                    ### BEGIN SOLUTION
                    self.self_attn = tx.MultiHeadAttention(d_model, num_heads)
                    self.self_attn_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
                    self.feed_forward = tx.PositionwiseFeedForward(d_model, d_ff)
                    self.feed_forward_norm = keras.layers.LayerNormalization(epsilon=layer_norm_eps)
                    self.dropout = keras.layers.Dropout(dropout)
                    ### END SOLUTION

                def call(self, x, mask=None, training=None):
                    ### BEGIN SOLUTION
                    x = self.self_attn_norm(x + self.dropout(self.self_attn(x, x, x, mask), training=training))  # (B, T, D)
                    x = self.feed_forward_norm(x + self.dropout(self.feed_forward(x), training=training))  # (B, T, D)
                    return x
                    ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_encoder_layer_parts",
        2,
        (
            """
        layer = EncoderLayer(16, 4, 32, dropout=0.1)
        for name in ("self_attn", "self_attn_norm", "feed_forward", "feed_forward_norm", "dropout"):
            assert hasattr(layer, name), f"EncoderLayer has no attribute {name!r}"
        assert isinstance(layer.self_attn, tx.MultiHeadAttention), "self_attn must be a tx.MultiHeadAttention"
        assert isinstance(layer.feed_forward, tx.PositionwiseFeedForward), "feed_forward must be a tx.PositionwiseFeedForward"

        out = run(layer, tensor(normal(2, 5, 16, seed=1)))
        assert tuple(out.shape) == (2, 5, 16), f"output shape {tuple(out.shape)}, expected (2, 5, 16)"
    """
        ),
        probe=PROBE_PARTS,
    ),
    tests(
        "test_encoder_layer_matches_reference",
        4,
        (
            COPY_WEIGHTS,
            """
        set_seed(0)
        reference = tx.EncoderLayer(TransformerConfig(d_model=16, num_heads=4, d_ff=32, dropout=0.1))  # weights: the seed's
        mine = EncoderLayer(16, 4, 32, dropout=0.1)
        x = tensor(normal(2, 5, 16, seed=2))
        run(mine, x)  # builds Keras weights (no effect in PyTorch)
        copy_weights(reference, mine)
        assert_close(run(mine, x), run(reference, x), 1e-5, "encoder layer output, no mask")
        mask = tx.padding_mask(tensor([[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]]))
        assert_close(run(mine, x, mask), run(reference, x, mask), 1e-5, "encoder layer output with a padding mask")
    """,
        ),
        probe=PROBE_MATCHES,
    ),
    tests(
        "test_padding_does_not_leak",
        2,
        """
        # Changing the vectors at padded positions must not change the outputs at the real tokens.
        set_seed(5)
        layer = EncoderLayer(16, 4, 32, dropout=0.0)
        x = normal(2, 6, 16, seed=6)
        tokens = tensor([[5, 6, 7, 8, 0, 0], [5, 6, 7, 0, 0, 0]])
        mask = tx.padding_mask(tokens)
        out = to_numpy(run(layer, tensor(x), mask))
        x_changed = x.copy()
        x_changed[0, 4:] = 50.0
        x_changed[1, 3:] = -50.0
        out_changed = to_numpy(run(layer, tensor(x_changed), mask))
        assert_close(out_changed[0, :4], out[0, :4], 1e-5, "sentence 0, real tokens")
        assert_close(out_changed[1, :3], out[1, :3], 1e-5, "sentence 1, real tokens")
    """,
        probe=PROBE_PADDING,
    ),
    tests(
        "test_dropout_in_training_only",
        2,
        (
            COPY_WEIGHTS,
            """
        # Dropout is active in training mode only; in inference mode the layer is deterministic.
        set_seed(7)
        layer = EncoderLayer(16, 4, 32, dropout=0.5)
        x = tensor(normal(2, 5, 16, seed=8))
        assert_close(run(layer, x), run(layer, x), 0.0, "two calls in inference mode")
        a, b = to_numpy(run(layer, x, training=True)), to_numpy(run(layer, x, training=True))
        assert np.abs(a - b).max() > 1e-3, "two calls in training mode with dropout 0.5 should differ"
    """,
        ),
        probe=PROBE_DROPOUT,
    ),
    md("""
        ## Stacking layers: a small encoder

        `tx.Encoder` embeds the tokens (`Embedding * sqrt(d_model) + PE`) and runs `N` encoder layers. Here
        is the same with your layer: embed a padded batch with `tx.TransformerEmbedding`, run two of your
        layers, and look at the self-attention of the first one: its `self_attn` returns the weights
        `(B, H, T, T)` when asked, `self_attn(x, x, x, mask, return_weights=True)` giving
        `(output, cache, weights)`. The weights are random, so the pattern means nothing yet, except that no
        query attends to the padding.
        """),
    code(
        """
        set_seed(0)
        embed = tx.TransformerEmbedding(TransformerConfig(src_vocab_size=20, d_model=32, max_len=16, dropout=0.1))
        layers = [EncoderLayer(32, 4, 64, dropout=0.1) for _ in range(2)]
        tokens = tensor([[3, 9, 4, 12, 7, 0, 0], [5, 5, 8, 0, 0, 0, 0]])
        mask = tx.padding_mask(tokens)
        x = run(embed, tokens)
        _, _, weights = run(layers[0].self_attn, x, x, x, mask, return_weights=True)  # the first layer's input
        for layer in layers:
            x = run(layer, x, mask)
        print("encoder output:", tuple(x.shape))
        weights = to_numpy(weights)[0]  # (H, T, T), sentence 0
        words = ["w3", "w9", "w4", "w12", "w7", "<pad>", "<pad>"]
        plots.plot_attention_heads(weights, words, words, title="Layer 1 self-attention (random weights)")
        plt.show()
    """,
        in_probe_run=False,
    ),
]
