"""Week 1 lab (GPU): Bahdanau attention, and a GRU seq2seq with and without it (smoke run: `numbers`; full run: `copy`)."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, parameters, readonly, solution, tests
from txcourse.course.grading.allowlist import setup_allow

# The probe run's txcourse (txcourse/course/grading/allowlist.py): the setup's helpers, the initialisers the
# layer is built with and the training config of the course cells; the rest raises "write it yourself".
ALLOW = {
    fw: [*setup_allow(fw), f"txcourse.{fw}.init:linear", "txcourse.training.config:TrainConfig.*"]
    for fw in ("torch", "tf")
}

# The probes: the student's BahdanauAttention with weights and inputs drawn from PROBE_SEED (the same in the
# reference run, where the layer is the solution's), its context and weights printed as plain arrays.
PROBE_SETUP = {
    "torch": """
        def probe_layer(units, rng):
            \"\"\"The student's layer of `units` with weights drawn from `rng` (torch: weight is (out, in)).\"\"\"
            layer = BahdanauAttention(units)
            with torch.no_grad():
                for name, shape in (("w_a", (units, units)), ("u_a", (units, units)), ("v_a", (1, units))):
                    getattr(layer, name).weight.copy_(tensor(rng.standard_normal(shape) / np.sqrt(units), "float32"))
                layer.w_a.bias.copy_(tensor(rng.standard_normal(units) * 0.1, "float32"))
            return layer
    """,
    "tf": """
        def probe_layer(units, rng):
            \"\"\"The student's layer of `units` with weights drawn from `rng` (Keras: kernel is (in, out)).\"\"\"
            layer = BahdanauAttention(units)
            layer(tensor(np.zeros((1, units)), "float32"), tensor(np.zeros((1, 2, units)), "float32"))  # builds
            for name, shape in (("w_a", (units, units)), ("u_a", (units, units)), ("v_a", (1, units))):
                kernel = (rng.standard_normal(shape) / np.sqrt(units)).T.astype(np.float32)
                getattr(layer, name).kernel.assign(kernel)
            layer.w_a.bias.assign((rng.standard_normal(units) * 0.1).astype(np.float32))
            return layer
    """,
}
PROBE_RUN = """
    rng = np.random.default_rng(PROBE_SEED + OFFSET)
    units, batch, length = int(rng.integers(2, 17)), int(rng.integers(1, 5)), int(rng.integers(2, 10))
    layer = probe_layer(units, rng)
    query = tensor(rng.standard_normal((batch, units)), "float32")
    values = rng.standard_normal((batch, length, units)).astype(np.float32)
    mask = np.arange(length)[None, :] >= rng.integers(1, length + 1, size=(batch, 1))  # at least one position kept
    for name, m in (("no mask", None), ("mask", tensor(mask))):
        context, weights = layer(query, tensor(values), m)
        probe_emit(f"{name}: context", context, 1e-5)
        probe_emit(f"{name}: weights", weights, 1e-5)
    probe_emit("weights exactly 0 at padding", np.all(to_numpy(weights)[mask] == 0), 0)
    probe_emit("context of doubled states", layer(query, tensor(values * 2))[0], 1e-5)
"""


def probe(offset):
    """The probe of one test cell: the layer on its own fresh draw (``offset`` added to the seed)."""
    return (PROBE_SETUP, PROBE_RUN.replace("OFFSET", str(offset)))


PARAMETERS = """
    # Parameters. papermill can set them: papermill IN.ipynb OUT.ipynb -p SMOKE False -p DEVICE cuda
    DEVICE = "auto"  # "auto" (a GPU if there is one), "cpu", "cuda" or "mps"
    SMOKE = True  # True: about a minute on a CPU, small split and models; False: the full runs (use a GPU)
    STEPS = 1500  # optimizer steps of each full run (the book's length curves use 1500 too)
    UNITS = 256  # GRU units of the full runs (embeddings: UNITS // 2)
    MAX_SECONDS = 900  # each full run stops training after this many seconds
    SEED = 0
"""

IMPORTS = {
    "torch": """
        from txcourse.data import make_batches
        from txcourse.backends import backend
        from txcourse.registry import default_model_config
        from txcourse.evaluation.translate import evaluate
        from txcourse.data.prepare import prepare_task
        from txcourse.evaluation.metrics import accuracy_by_length, exact_match, format_length_table
        from txcourse.torch.init import linear
        from txcourse.training import TrainConfig


        def run(model, *args):
            \"\"\"Call `model` in inference mode, without recording gradients.\"\"\"
            model.eval()
            with torch.no_grad():
                return model(*args)
    """,
    "tf": """
        from txcourse.data import make_batches
        from txcourse.backends import backend
        from txcourse.registry import default_model_config
        from txcourse.evaluation.translate import evaluate
        from txcourse.data.prepare import prepare_task
        from txcourse.evaluation.metrics import accuracy_by_length, exact_match, format_length_table
        from txcourse.tf.init import linear
        from txcourse.training import TrainConfig


        def run(model, *args):
            \"\"\"Call `model` in inference mode.\"\"\"
            return model(*args, training=False)
    """,
}

CELLS = [
    md(
        (
            """
        # Week 1 lab: sequence to sequence, with and without attention ([[FW]])

        An RNN encoder-decoder (Sutskever et al. 2014; Cho et al. 2014) reads the source into one vector,
        the encoder's final state, and the decoder writes the translation from that vector alone: the
        longer the sentence, the more it must squeeze into a fixed width. Bahdanau et al. (2015) let the
        decoder look back at **every** encoder state $h_j$ at every step $t$, weighted by how well it
        matches the decoder's state $s$:

        $$e_{j} = v_a^\\top \\tanh(W_a s + U_a h_j), \\qquad \\alpha = \\mathrm{softmax}(e), \\qquad
          c = \\sum_j \\alpha_j h_j .$$

        You will write this *additive attention*, plug it into txcourse's GRU decoder, train the model with
        and without attention on the same budget, and compare their accuracy by source length.

        **Running it.** The first code cell holds the parameters. With `SMOKE = True` (the default) both
        models train for a few seconds each on a CPU on three-digit `numbers` (English number words →
        Korean); that is what the autograder runs. For the real comparison set `SMOKE = False` on a machine
        with a GPU (or let papermill do it: `papermill [[LAB]]_[[fw]].ipynb out.ipynb -p SMOKE False -p DEVICE
        cuda`): both models then learn the `copy` task (strings of 2 to 20 letters, the target the source)
        for the same 1500 steps, the setting of the book's length curves. Not `numbers` at full size: its
        sources are at most 11 tokens long, and on an H200 both models reach 100% on them, the fixed context
        too, so the comparison would show nothing.
        """,
            HOW_IT_WORKS,
        )
    ),
    parameters(PARAMETERS),
    readonly("install", INSTALL),
    readonly("setup", (SETUP, IMPORTS)),
    md(SETUP_NOTE),
    code("""
        PROGRESS = os.environ.get("TXCOURSE_PROGRESS", "1") != "0"  # progress bars (the tests switch them off)
        if SMOKE:  # three-digit numbers, 64 GRU units, 150 steps per model
            TASK_NAME = "numbers"
            TASK = dict(low=100, high=999, sizes=(700, 50, 100), closed_digits=2)  # 3-digit numbers, disjoint splits
            MODEL = dict(embedding_dim=32, units=64)
            TRAIN = dict(steps=150, batch_size=32, warmup_steps=100, lr_factor=1.0, log_every=20, max_seconds=600)
            EXACT_MATCH_TARGET = 0.5
        else:  # copy 2-20 letters (the book's length curves): on full-size numbers both models reach 100%
            TASK_NAME = "copy"
            TASK = dict(min_len=2, max_len=20, sizes=(20000, 500, 2000))
            MODEL = dict(embedding_dim=UNITS // 2, units=UNITS)
            TRAIN = dict(steps=STEPS, batch_size=64, warmup_steps=400, lr_factor=1.0, log_every=100,
                         max_seconds=MAX_SECONDS)
            EXACT_MATCH_TARGET = 0.5
        print(f"SMOKE={SMOKE}, DEVICE={DEVICE!r}: task {TASK_NAME} {TASK}, model {MODEL}")
    """),
    md(
        {
            "torch": """
            ## Exercise 1: additive attention (2 + 3 + 2 points)

            Complete `BahdanauAttention(units)`. In `__init__` create three linear layers with
            `linear(in_features, out_features, bias=...)` (txcourse's `nn.Linear` with Glorot weights):
            `w_a` ($W_a$: units → units, with a bias), `u_a` ($U_a$: units → units, no bias) and `v_a`
            ($v_a$: units → 1, no bias). The tests copy a `tx.BahdanauAttention`'s weights into yours by these names.

            `forward(query, values, mask=None)`: the decoder state `query` $s$ `(B, U)`, the encoder states
            `values` $h$ `(B, T_src, U)`, and `mask` `(B, T_src)`, `True` at source padding. Return the context
            `(B, U)` and the weights `(B, T_src)`. Masked positions get a weight of exactly 0 (set their
            scores to `torch.finfo(scores.dtype).min` before the softmax and their weights to 0 after). The
            context is the weighted sum of the encoder states $h_j$ themselves: the source notes summed the
            projections $U_a h_j$ instead (errata E7).
        """,
            "tf": """
            ## Exercise 1: additive attention (2 + 3 + 2 points)

            Complete `BahdanauAttention(units)`. In `__init__` create three dense layers with
            `linear(in_features, out_features, bias=...)` (txcourse's `keras.layers.Dense` with Glorot weights,
            built at once): `w_a` ($W_a$: units → units, with a bias), `u_a` ($U_a$: units → units, no bias) and
            `v_a` ($v_a$: units → 1, no bias). The tests copy a `tx.BahdanauAttention`'s weights into yours by
            these names.

            `call(query, values, mask=None)`: the decoder state `query` $s$ `(B, U)`, the encoder states
            `values` $h$ `(B, T_src, U)`, and `mask` `(B, T_src)`, `True` at source padding. Return the context
            `(B, U)` and the weights `(B, T_src)`. Masked positions get a weight of exactly 0 (set their scores
            to `scores.dtype.min` with `tf.where` before the softmax and their weights to 0 after). The context
            is the weighted sum of the encoder states $h_j$ themselves: the source notes summed the projections
            $U_a h_j$ instead (errata E7).
        """,
        }
    ),
    solution(
        "bahdanau_attention",
        {
            "torch": """
            class BahdanauAttention(nn.Module):
                \"\"\"e_j = v_a^T tanh(W_a s + U_a h_j), alpha = softmax(e), context = sum_j alpha_j h_j.\"\"\"

                def __init__(self, units):
                    super().__init__()
                    ### BEGIN SOLUTION
                    self.w_a = linear(units, units)  # W_a, with a bias
                    self.u_a = linear(units, units, bias=False)  # U_a
                    self.v_a = linear(units, 1, bias=False)  # v_a
                    ### END SOLUTION

                def forward(self, query, values, mask=None):
                    ### BEGIN SOLUTION
                    scores = self.v_a(torch.tanh(self.w_a(query)[:, None, :] + self.u_a(values)))[..., 0]  # (B, T_src)
                    if mask is not None:
                        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # (B, T_src)
                    weights = torch.softmax(scores, dim=-1)  # (B, T_src)
                    if mask is not None:
                        weights = weights.masked_fill(mask, 0.0)  # (B, T_src)
                    context = torch.sum(weights[:, :, None] * values, dim=1)  # (B, U): the states themselves
                    return context, weights
                    ### END SOLUTION
        """,
            "tf": """
            class BahdanauAttention(keras.layers.Layer):
                \"\"\"e_j = v_a^T tanh(W_a s + U_a h_j), alpha = softmax(e), context = sum_j alpha_j h_j.\"\"\"

                def __init__(self, units, **kwargs):
                    super().__init__(**kwargs)
                    ### BEGIN SOLUTION
                    self.w_a = linear(units, units, name="w_a")  # W_a, with a bias
                    self.u_a = linear(units, units, bias=False, name="u_a")  # U_a
                    self.v_a = linear(units, 1, bias=False, name="v_a")  # v_a
                    ### END SOLUTION

                def call(self, query, values, mask=None):
                    ### BEGIN SOLUTION
                    scores = self.v_a(tf.tanh(self.w_a(query)[:, tf.newaxis, :] + self.u_a(values)))[..., 0]  # (B, T_src)
                    if mask is not None:
                        scores = tf.where(mask, tf.constant(scores.dtype.min, scores.dtype), scores)  # (B, T_src)
                    weights = tf.nn.softmax(scores, axis=-1)  # (B, T_src)
                    if mask is not None:
                        weights = tf.where(mask, tf.zeros_like(weights), weights)  # (B, T_src)
                    context = tf.reduce_sum(weights[:, :, tf.newaxis] * values, axis=1)  # (B, U): the states themselves
                    return context, weights
                    ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_attention_properties",
        2,
        """
        set_seed(0)
        layer = BahdanauAttention(8)
        query, values = tensor(normal(3, 8, seed=1)), tensor(normal(3, 5, 8, seed=2))
        mask = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 1, 1, 1]], dtype=bool)
        context, weights = layer(query, values, tensor(mask))
        assert tuple(context.shape) == (3, 8), f"context shape {tuple(context.shape)}, expected (3, 8)"
        assert tuple(weights.shape) == (3, 5), f"weights shape {tuple(weights.shape)}, expected (3, 5)"
        w = to_numpy(weights)
        assert_close(w.sum(-1), np.ones(3), 1e-5, "sum of the weights of each sentence")
        assert (w[mask] == 0).all(), "padded source positions must get a weight of exactly 0"
    """,
        probe=probe(0),
    ),
    tests(
        "test_attention_matches_reference",
        3,
        (
            {
                "torch": """
            def copy_weights(source, target):
                \"\"\"Load the weights of `source` (txcourse's layer) into `target` (yours): same attribute names.\"\"\"
                target.load_state_dict(source.state_dict())
        """,
                "tf": """
            def copy_weights(source, target):
                \"\"\"Set the weights of `target` (yours) from `source` (txcourse's layer), by attribute name.\"\"\"
                for name in ("w_a", "u_a", "v_a"):
                    getattr(target, name).set_weights(getattr(source, name).get_weights())
        """,
            },
            """
        set_seed(1)
        reference, mine = tx.BahdanauAttention(16), BahdanauAttention(16)  # txcourse's has fixed weights
        query, values = tensor(normal(4, 16, seed=3)), tensor(normal(4, 6, 16, seed=4))
        mask = tensor(np.arange(6)[None, :] >= np.array([[6], [4], [2], [1]]))  # lengths 6, 4, 2, 1
        mine(query, values, mask)  # builds Keras weights (no effect in PyTorch)
        copy_weights(reference, mine)
        for m in (None, mask):
            context, weights = mine(query, values, m)
            ref_context, ref_weights = reference(query, values, m)
            assert_close(weights, ref_weights, 1e-5, f"attention weights ({'with' if m is not None else 'no'} mask)")
            assert_close(context, ref_context, 1e-5, f"context ({'with' if m is not None else 'no'} mask)")
    """,
        ),
        probe=probe(1),
    ),
    tests(
        "test_context_of_the_states",
        2,
        """
        # Errata E7: the context is sum_j alpha_j h_j over the encoder states, not over their projections.
        set_seed(3)
        layer = BahdanauAttention(12)
        query, values = tensor(normal(2, 12, seed=7)), normal(2, 7, 12, seed=8)
        context, weights = layer(query, tensor(values))
        expected = np.einsum("bt,btu->bu", to_numpy(weights), values)
        assert_close(context, expected, 1e-5, "context = sum_j alpha_j h_j")
    """,
        probe=probe(2),
    ),
    md("""
        ## Plugging your attention into a GRU encoder-decoder

        `fw.build_model("seq2seq", ...)` builds txcourse's GRU encoder-decoder with one **fixed** context
        vector: at every step the decoder gets the encoder's final state. Its decoder calls
        `self.attention(state, encoder_outputs, mask)` at every step when it has an attention layer, so setting
        `model.decoder.attention` to **your** layer turns it into Bahdanau's model. `train(kind)` trains either
        model with txcourse's `Trainer` on the same data, seed and budget.
        """),
    code(
        """
        prepared = prepare_task(TASK_NAME, **TASK)
        src_tok, tgt_tok = prepared.src_tokenizer, prepared.tgt_tokenizer
        print(f"{len(prepared.train)} training pairs, e.g. {prepared.splits.train[0]}")
        fw = backend("[[fw]]")


        def train(kind):
            \"\"\"Train the GRU encoder-decoder: 'bahdanau' with your attention, 'seq2seq' with a fixed context.\"\"\"
            set_seed(SEED)
            model_config = default_model_config(kind, src_tok.vocab_size, tgt_tok.vocab_size, MODEL)
            model = fw.build_model("seq2seq", model_config)  # fixed context vector
            if kind == "bahdanau":
                model.decoder.attention = BahdanauAttention(model_config.units)  # yours: attend at every step
            sample = make_batches(prepared.train, batch_size=2)[0]
            run(model, fw.to_tensor(sample.src), fw.to_tensor(sample.tgt_in))  # one call builds every weight
            config = TrainConfig(seed=SEED, device=DEVICE, progress=PROGRESS, **TRAIN)
            trainer = fw.Trainer(model, kind, model_config, prepared.train, config)
            history = trainer.fit()
            print(f"{kind}: {trainer.step} steps, loss {history[0]['loss']:.3f} -> {history[-1]['loss']:.3f}")
            return trainer.model, history
    """,
        in_probe_run=False,
    ),
    code(
        """
        models, histories = {}, {}
        for kind in ("bahdanau", "seq2seq"):  # your attention first
            models[kind], histories[kind] = train(kind)
    """,
        in_probe_run=False,
    ),
    md("""
        ## Accuracy by source length

        Both models translate the test split with txcourse's greedy decoder. "Long" sources are the
        longest quarter of the test split (by number of words, or of letters in the full run's `copy`).
        """),
    code(
        """
        test_pairs = prepared.splits.test
        results = {kind: evaluate(fw, model, test_pairs, src_tok, tgt_tok, device=DEVICE) for kind, model in models.items()}
        lengths = np.array([len(source.split()) for source, _ in test_pairs])
        UNIT = "letters" if TASK_NAME == "copy" else "words"  # the copy task separates its letters by spaces
        long = lengths >= np.percentile(lengths, 75)
        long_match = {kind: exact_match([h for h, keep in zip(r["hypotheses"], long) if keep],
                                        [t for (_, t), keep in zip(test_pairs, long) if keep])
                      for kind, r in results.items()}
        for kind, r in results.items():
            print(f"{kind}: exact match {100 * r['exact_match']:.1f}%, chrF {r['chrf']:.1f}, "
                  f"long sources ({long.sum()} with >= {lengths[long].min()} {UNIT}) {100 * long_match[kind]:.1f}%")
        names = {"bahdanau": "with attention (yours)", "seq2seq": "fixed context"}
        print(format_length_table({names[k]: r["by_length"] for k, r in results.items()}))
        plots.plot_accuracy_by_length({names[k]: r["by_length"] for k, r in results.items()},
                                      title=f"{TASK_NAME} test split: exact match by source length")
        plt.show()
    """,
        in_probe_run=False,
    ),
    tests(
        "test_training_with_your_attention",
        3,
        """
        first, last = histories["bahdanau"][0]["loss"], histories["bahdanau"][-1]["loss"]
        assert last < 0.5 * first, f"with your attention the loss fell only from {first:.3f} to {last:.3f}"
        assert results["bahdanau"]["exact_match"] >= EXACT_MATCH_TARGET, (
            f"exact match with your attention {results['bahdanau']['exact_match']:.3f} < {EXACT_MATCH_TARGET}")
        if not SMOKE:  # the full runs (copy): attention must beat the fixed context on the long sources by far
            assert long_match["bahdanau"] >= long_match["seq2seq"] + 0.5, long_match
    """,
        probe=probe(3),  # a training run is not repeated outside: its probe checks the layer it trains with
    ),
    md("""
        ## Where does the decoder look?

        The attention weights $\\alpha$ of your layer while the trained model translates one test sentence:
        one row per output token, one column per source token. (The fixed-context model has nothing to show:
        it sees the same vector at every step.)
        """),
    code(
        """
        source = max(test_pairs[:50], key=lambda pair: len(pair[0].split()))[0]
        ids = src_tok.encode(source)
        out = fw.greedy_decode(models["bahdanau"], fw.to_tensor(np.array([ids]), DEVICE))
        out_ids = [int(i) for i in to_numpy(out.tokens)[0]]
        plots.plot_attention(to_numpy(out.attention)[0, 0], [src_tok.vocab[i] for i in ids],
                             [tgt_tok.vocab[i] for i in out_ids], title=f"your attention: {source!r}")
        plt.show()
    """,
        in_probe_run=False,
    ),
]
