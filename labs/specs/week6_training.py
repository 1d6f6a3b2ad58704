"""Week 6 lab (GPU): the label-smoothed loss, greedy decoding, top-p filtering, and training a Transformer on `numbers`."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, parameters, readonly, solution, tests
from txcourse.course.grading.allowlist import setup_allow, sublayers_allow

# The probe run's txcourse (txcourse/course/grading/allowlist.py): the Transformer and its parts (a greedy
# decoder calls start_decoding, decode_step and project, or the model on the whole prefix); the loss, every
# decoder (greedy, beam, sampling), the Trainer and filter_logits raise. The cells that train, evaluate and plot
# are left out of the probe run (in_probe_run=False).
ALLOW = {
    fw: [
        *setup_allow(fw),
        f"txcourse.{fw}.model:Transformer.*",
        f"txcourse.{fw}.encoder:Encoder.*",
        f"txcourse.{fw}.encoder:EncoderLayer.*",
        f"txcourse.{fw}.decoder:Decoder.*",
        f"txcourse.{fw}.decoder:DecoderLayer.*",
        f"txcourse.{fw}.embedding:TransformerEmbedding.*",
        f"txcourse.{fw}.positional:PositionalEncoding.*",
        f"txcourse.{fw}.positional:positional_encoding",
        f"txcourse.{fw}.residual:residual",
        *sublayers_allow(fw),
        *(f"txcourse.{fw}.init:{name}" for name in ("linear", "embedding", "layer_norm")),
    ]
    for fw in ("torch", "tf")
}

# The probes: what the grader checks outside the student's process (fresh inputs from PROBE_SEED).
# A batch for the loss: (B, T, V) float32 logits, targets (B, T) with real tokens first and pad_id after
# (every row keeps at least one real token, one row at least ends with padding).
PROBE_LOSS_BATCH = """
    def loss_batch(rng, pad_id=PAD_ID, scale=1.0):
        b, t, v = int(rng.integers(1, 5)), int(rng.integers(2, 8)), int(rng.integers(4, 12))
        x = (rng.standard_normal((b, t, v)) * scale).astype(np.float32)
        real = [i for i in range(v) if i != pad_id]
        y = rng.choice(real, size=(b, t))
        lengths = rng.integers(1, t + 1, b)
        lengths[rng.integers(0, b)] = rng.integers(1, t)  # one row at least is padded
        y[np.arange(t)[None, :] >= lengths[:, None]] = pad_id
        return x, y
"""
PROBE_LOSS_PLAIN = (
    PROBE_LOSS_BATCH,
    """
    rng = np.random.default_rng(PROBE_SEED)
    for case in range(3):  # the default pad_id, then pad_id=0 given, then another pad_id
        pad_id = PAD_ID if case < 2 else int(rng.integers(1, 4))
        x, y = loss_batch(rng, pad_id)
        given = {} if case == 0 else {"pad_id": pad_id}
        probe_emit(f"loss {case}, smoothing 0", label_smoothed_loss(tensor(x), tensor(y), smoothing=0.0, **given), 1e-5)
    """,
)
PROBE_LOSS_SMOOTH = (
    PROBE_LOSS_BATCH,
    """
    rng = np.random.default_rng(PROBE_SEED + 1)
    for case, eps in enumerate((0.1, float(np.round(rng.uniform(0.05, 0.95), 3)), 1.0)):
        x, y = loss_batch(rng)
        probe_emit(f"loss {case}, smoothing {eps}", label_smoothed_loss(tensor(x), tensor(y), smoothing=eps), 1e-5)
    x, y = loss_batch(rng)
    probe_emit("loss, default smoothing", label_smoothed_loss(tensor(x), tensor(y)), 1e-5)
    # large logits: log(softmax(...)) underflows to -inf there, a log-softmax does not
    x, y = loss_batch(rng, scale=100.0)
    x[..., int(rng.integers(0, x.shape[-1]))] -= 300.0  # one token far below the others at every position
    probe_emit("loss of large logits", label_smoothed_loss(tensor(x), tensor(y), smoothing=0.1), 1e-4)
    """,
)
PROBE_LOSS_PADDING = (
    PROBE_LOSS_BATCH,
    """
    rng = np.random.default_rng(PROBE_SEED + 2)
    x, y = loss_batch(rng)
    probe_emit("loss", label_smoothed_loss(tensor(x), tensor(y)), 1e-5)
    x_changed = x.copy()
    x_changed[y == PAD_ID] = rng.uniform(-100.0, 100.0, size=x_changed[y == PAD_ID].shape)
    probe_emit("loss after changing padded logits", label_smoothed_loss(tensor(x_changed), tensor(y)), 1e-5)
    more = int(rng.integers(1, 4))
    x_longer = np.concatenate([x, rng.standard_normal((x.shape[0], more, x.shape[2])).astype(np.float32)], axis=1)
    y_longer = np.concatenate([y, np.full((y.shape[0], more), PAD_ID, dtype=y.dtype)], axis=1)
    probe_emit(f"loss with {more} more pads", label_smoothed_loss(tensor(x_longer), tensor(y_longer)), 1e-5)
    probe_emit("padding only", label_smoothed_loss(tensor(x), tensor(np.full_like(y, PAD_ID))), 0)  # exactly 0
    """,
    {
        "torch": """
        logits = tensor(x).requires_grad_()
        label_smoothed_loss(logits, tensor(y)).backward()
        probe_emit("gradient", logits.grad, 1e-5)
        probe_emit("gradient 0 at padding", np.array(bool((to_numpy(logits.grad)[y == PAD_ID] == 0).all())))
    """,
        "tf": """
        logits = tf.Variable(x)
        with tf.GradientTape() as tape:
            loss = label_smoothed_loss(logits, tensor(y))
        grad = tf.convert_to_tensor(tape.gradient(loss, logits))
        probe_emit("gradient", grad, 1e-5)
        probe_emit("gradient 0 at padding", np.array(bool((to_numpy(grad)[y == PAD_ID] == 0).all())))
    """,
    },
)
# Scripted: the stand-in model of test_greedy_decode (next-token scores follow a script; <pad> and <sos>
# always score highest). Nudged: a (random, fixed-seed) Transformer whose <eos> score a script raises from
# a given step on, so that its rows end one by one, as a trained model's do.
PROBE_DECODE_MODELS = """
    class Scripted:
        config = None

        def __init__(self, script, vocab_size):
            self.script, self.vocab_size = script, vocab_size

        def eval(self):
            return self

        def train(self, mode=True):
            return self

        def start_decoding(self, src, use_cache=True):
            return {"step": 0}

        def decode_step(self, token, state):
            scores = np.full((len(self.script), self.vocab_size), -5.0, dtype=np.float32)
            scores[:, [PAD_ID, SOS_ID]] = 9.0  # must never be chosen
            for b, row in enumerate(self.script):
                scores[b, row[min(state["step"], len(row) - 1)]] = 5.0
            return tensor(scores), {"step": state["step"] + 1}, None


    class Nudged:
        def __init__(self, model, ends):
            self.model, self.ends = model, np.asarray(ends)  # row b ends at step ends[b] (counted from 0)

        def __getattr__(self, name):
            return getattr(self.model, name)

        def eval(self):
            self.model.eval()
            return self

        def train(self, mode=True):
            self.model.train(mode)
            return self

        def start_decoding(self, src, use_cache=True):
            return {"inner": self.model.start_decoding(src, use_cache), "step": 0}

        def decode_step(self, token, state):
            logits, inner, attention = self.model.decode_step(token, state["inner"])
            bonus = np.zeros(tuple(logits.shape), dtype=np.float32)
            bonus[self.ends <= state["step"], EOS_ID] = 1000.0
            return logits + tensor(bonus), {"inner": inner, "step": state["step"] + 1}, attention


    def random_transformer(rng):
        set_seed(int(rng.integers(0, 10_000)))
        config = TransformerConfig(src_vocab_size=int(rng.integers(8, 20)), tgt_vocab_size=int(rng.integers(8, 20)),
                                   d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                                   max_len=40)
        return tx.Transformer(config), config


    def padded_sources(rng, config, batch):
        lengths = rng.integers(1, 9, batch)
        ids = rng.integers(4, config.src_vocab_size, (batch, int(lengths.max())))
        ids[np.arange(ids.shape[1])[None, :] >= lengths[:, None]] = PAD_ID
        return ids
"""
PROBE_GREEDY = (
    PROBE_DECODE_MODELS,
    """
    rng = np.random.default_rng(PROBE_SEED + 5)
    vocab = int(rng.integers(6, 12))


    def word():
        return int(rng.integers(3, vocab))  # not <pad>, <sos> nor <eos>


    src = tensor(np.ones((4, 3), dtype=np.int64))
    # every row produces <eos> before max_len: decoding stops there
    script = [[word() for _ in range(int(rng.integers(0, 4)))] + [EOS_ID] for _ in range(4)]
    probe_emit("scripted, all end", greedy_decode(Scripted(script, vocab), src, max_len=6), 0)
    # some rows never produce <eos>: max_len cuts them
    script = [[word() for _ in range(int(rng.integers(1, 4)))] + ([EOS_ID] if b % 2 else []) for b in range(4)]
    max_len = int(rng.integers(2, 7))
    probe_emit(f"scripted, max_len {max_len}", greedy_decode(Scripted(script, vocab), src, max_len=max_len), 0)
    probe_emit("scripted, max_len 1", greedy_decode(Scripted(script, vocab), src, max_len=1), 0)
    # a random Transformer (dropout on unless your decoder runs it in inference mode), its rows ended one by one
    model, config = random_transformer(rng)
    src = padded_sources(rng, config, 3)
    ends = rng.integers(0, 10, 3)
    out = greedy_decode(Nudged(model, ends), tensor(src), max_len=12)
    probe_emit("random Transformer", out, 0)
    """,
)
# test_your_decoder_translates judges a training run (your decoder's translations by the trained model
# against txcourse's): that cannot be re-judged without training again, so its probe runs your
# greedy_decode the way the cell `translate` does (a padded batch of sources, max_len = min(the model's
# max_len, 2 T_src + 10)) on a random Transformer whose rows end one by one, as a trained model's do.
PROBE_TRANSLATES = (
    PROBE_DECODE_MODELS,
    """
    # test_your_decoder_translates judges a training run: its probe decodes as `translate` does, untrained
    rng = np.random.default_rng(PROBE_SEED + 6)
    model, config = random_transformer(rng)
    src = padded_sources(rng, config, int(rng.integers(2, 7)))
    max_len = min(config.max_len, 2 * src.shape[1] + 10)
    ends = np.where(rng.random(len(src)) < 0.8, rng.integers(0, max_len, len(src)), max_len)  # some never end
    probe_emit("translations", greedy_decode(Nudged(model, ends), tensor(src), max_len=max_len), 0)
    """,
)
# test_training_worked judges a training run, which cannot be re-judged without training again, and the
# Trainer uses txcourse's loss. Its probe trains with YOUR loss instead: three SGD steps of a small random
# Transformer (dropout off) on a padded batch from the seed, the reference doing the same with the solution's
# loss. The losses of the steps and the logits after them match only if your loss and its gradient are right
# (a constant loss has no gradient; a loss off by a factor moves the weights by a different step).
PROBE_TRAINING = (
    PROBE_DECODE_MODELS,
    {
        "torch": """
        def train_steps(model, src, tgt_in, tgt_out, steps):
            model.eval()  # no dropout: the same steps in both runs
            optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
            losses = []
            for _ in range(steps):
                loss = label_smoothed_loss(model(src, tgt_in), tgt_out, smoothing=0.1)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(float(loss))
            with torch.no_grad():
                return losses, model(src, tgt_in)
    """,
        "tf": """
        def train_steps(model, src, tgt_in, tgt_out, steps):
            optimizer = keras.optimizers.SGD(learning_rate=0.5)
            losses = []
            for _ in range(steps):
                with tf.GradientTape() as tape:
                    loss = label_smoothed_loss(model(src, tgt_in, training=False), tgt_out, smoothing=0.1)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                losses.append(float(loss))
            return losses, model(src, tgt_in, training=False)
    """,
    },
    """
    # test_training_worked judges a training run (txcourse's Trainer): its probe trains a few steps with your loss
    rng = np.random.default_rng(PROBE_SEED + 7)
    model, config = random_transformer(rng)
    src = padded_sources(rng, config, 4)
    lengths = rng.integers(1, 7, 4)
    tgt = rng.integers(4, config.tgt_vocab_size, (4, 8))
    tgt[np.arange(8)[None, :] >= lengths[:, None]] = PAD_ID
    tgt_in = np.concatenate([np.full((4, 1), SOS_ID), tgt[:, :-1]], axis=1)
    losses, logits = train_steps(model, tensor(src), tensor(tgt_in), tensor(tgt), steps=3)
    probe_emit("the loss at each of 3 steps trained with your loss", np.array(losses), 1e-4)
    probe_emit("the logits after them", logits, 1e-3)
    """,
)


# Top-p: every top_p is kept at least 1e-3 away from the running totals of the sorted probabilities, where
# correct answers may round either way.
PROBE_TOP_P_VALUES = """
    def clear_top_p(rng, probs, low=0.05, high=0.99):
        totals = np.cumsum(-np.sort(-probs, axis=-1), axis=-1)  # (B, V)
        while True:
            p = float(np.round(rng.uniform(low, high), 4))
            if np.abs(totals - p).min() > 1e-3:
                return p


    def softmax(z):
        z = np.asarray(z, dtype=np.float64)
        e = np.exp(z - z.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
"""
PROBE_TOP_P_WORKED = (
    PROBE_TOP_P_VALUES,
    """
    rng = np.random.default_rng(PROBE_SEED + 3)
    worked = np.log([[0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.3, 0.5]])
    for p in (0.6, 0.9, 0.4):
        probe_emit(f"worked example, top_p {p}", top_p_filter(tensor(worked, "float32"), p), 1e-5)
    b, v = int(rng.integers(1, 5)), int(rng.integers(3, 9))
    probs = 0.9 * rng.dirichlet(np.ones(v), size=b) + 0.1 / v  # no probability below 1%
    logits = tensor(np.log(probs), "float32")
    for case, p in enumerate((clear_top_p(rng, probs), clear_top_p(rng, probs), 1.0, 1e-6)):
        probe_emit(f"probabilities {case}, top_p {p}", top_p_filter(logits, p), 1e-5)
    """,
)
PROBE_TOP_P_REFERENCE = (
    PROBE_TOP_P_VALUES,
    """
    rng = np.random.default_rng(PROBE_SEED + 4)
    x = (rng.standard_normal((int(rng.integers(2, 6)), int(rng.integers(8, 40)))) * 2).astype(np.float32)
    for case in range(3):
        p = clear_top_p(rng, softmax(x))
        probe_emit(f"logits {case}, top_p {p}", top_p_filter(tensor(x), p), 1e-5)
    wide = (rng.standard_normal((3, 50)) * 0.3).astype(np.float32)  # a flat distribution: a large nucleus
    p = clear_top_p(rng, softmax(wide), 0.7, 0.9)
    probe_emit(f"flat, top_p {p}", top_p_filter(tensor(wide), p), 1e-5)
    """,
)

PARAMETERS = """
    # Parameters. papermill can set them: papermill IN.ipynb OUT.ipynb -p SMOKE False -p DEVICE cuda
    DEVICE = "auto"  # "auto" (a GPU if there is one), "cpu", "cuda" or "mps"
    SMOKE = True  # True: about a minute on a CPU, small split and model; False: the full run (use a GPU)
    STEPS = 8000  # optimizer steps of the full run
    D_MODEL = 128  # model width of the full run (4 heads, 2 + 2 layers, d_ff = 4 * D_MODEL)
    MAX_SECONDS = 1800  # the full run stops training after this many seconds
    SEED = 0
"""

IMPORTS = {
    "torch": """
        from txcourse import TransformerConfig
        from txcourse.data import EOS_ID, PAD_ID, SOS_ID, encode_pairs, make_batches, pad_sequences
        from txcourse.backends import backend
        from txcourse.registry import default_model_config
        from txcourse.evaluation.translate import evaluate, evaluate_by_digit_count
        from txcourse.data.prepare import prepare_task
        from txcourse.evaluation.metrics import exact_match, format_length_table
        from txcourse.torch.decode import greedy_decode as tx_greedy_decode
        from txcourse.torch.loss import label_smoothed_cross_entropy
        from txcourse.torch.sample import filter_logits as tx_filter_logits
        from txcourse.training import TrainConfig, validation_curve


        def run(model, *args):
            \"\"\"Call `model` in inference mode (dropout off), without recording gradients.\"\"\"
            model.eval()
            with torch.no_grad():
                return model(*args)
    """,
    "tf": """
        from txcourse import TransformerConfig
        from txcourse.data import EOS_ID, PAD_ID, SOS_ID, encode_pairs, make_batches, pad_sequences
        from txcourse.backends import backend
        from txcourse.registry import default_model_config
        from txcourse.evaluation.translate import evaluate, evaluate_by_digit_count
        from txcourse.data.prepare import prepare_task
        from txcourse.evaluation.metrics import exact_match, format_length_table
        from txcourse.tf.decode import greedy_decode as tx_greedy_decode
        from txcourse.tf.loss import label_smoothed_cross_entropy
        from txcourse.tf.sample import filter_logits as tx_filter_logits
        from txcourse.training import TrainConfig, validation_curve


        def run(model, *args):
            \"\"\"Call `model` in inference mode (dropout off).\"\"\"
            return model(*args, training=False)
    """,
}

# Issue 3's exact-match targets for the full run (benchmarks/numbers_quality.py).
TARGETS = {"torch": "0.98", "tf": "0.95"}

SETTINGS = """
    PROGRESS = os.environ.get("TXCOURSE_PROGRESS", "1") != "0"  # progress bars (the tests switch them off)
    if SMOKE:  # three-digit numbers, a 64-wide model, 300 steps: about a minute on a CPU
        TASK = dict(low=100, high=999, sizes=(700, 50, 100), closed_digits=2)  # 3-digit numbers, disjoint splits
        MODEL = dict(d_model=64, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=128)
        # lr_factor 0.5: with 1.0 one trajectory in five collapsed (5% exact match under ATEN_CPU_CAPABILITY=avx2,
        # seed 0); with 0.5, 96-100% under default, avx2 and avx512
        TRAIN = dict(steps=300, batch_size=32, warmup_steps=200, lr_factor=0.5, log_every=20, max_seconds=600)
        EXACT_MATCH_TARGET = 0.5
    else:  # the default numbers task: 20000 training pairs, digit count d drawn with probability d/21 (1 to 6)
        TASK = dict()
        MODEL = dict(d_model=D_MODEL, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=4 * D_MODEL)
        # lr_factor 0.5, the command line's default: 2.0 stalled at loss 1.2 (0.1% exact match) on an H100
        TRAIN = dict(steps=STEPS, batch_size=64, warmup_steps=400, lr_factor=0.5, log_every=100,
                     max_seconds=MAX_SECONDS)
        EXACT_MATCH_TARGET = [[TARGET]]  # issue 3's target for [[FW]] (benchmarks/numbers_quality.py)
    print(f"SMOKE={SMOKE}, DEVICE={DEVICE!r}: task {TASK or 'numbers (default)'}, model {MODEL}")
"""

CELLS = [
    md(
        (
            """
        # Week 6 lab: training and decoding ([[FW]])

        You will write the three pieces that turn the model of weeks 2 to 5 into a translator: the
        **label-smoothed cross-entropy** it is trained with (Sec. 5.4 of Vaswani et al. 2017), **greedy
        decoding**, which translates one token at a time, and the **top-p (nucleus) filter** that sampling
        decoders draw from. Then you train a small Transformer on the course's
        `numbers` task (an English number in words → the same number in Korean, e.g. "twelve thousand, three
        hundred and forty-five" → "만 이천삼백사십오"), score it (exact match, chrF) with your decoder and
        txcourse's, and look at its training curves and attention.

        **Running it.** The first code cell holds the parameters. With `SMOKE = True` (the default) the
        notebook trains for about a minute on a CPU on three-digit numbers; that is what the autograder runs.
        For the real run set `SMOKE = False` on a machine with a GPU (or let papermill do it:
        `papermill [[LAB]]_[[fw]].ipynb out.ipynb -p SMOKE False -p DEVICE cuda`): numbers up to 999999
        (every digit count from 1 to 6 in training; the test set holds 4- to 6-digit numbers never seen in
        training), a 128-wide model, and a target of 98% exact match (95% in TensorFlow).
        """,
            HOW_IT_WORKS,
        )
    ),
    parameters(PARAMETERS),
    readonly("install", INSTALL),
    readonly("setup", (SETUP, IMPORTS)),
    md(SETUP_NOTE),
    code({fw: SETTINGS.replace("[[TARGET]]", target) for fw, target in TARGETS.items()}, in_probe_run=False),
    md("""
        ## Exercise 1: label-smoothed cross-entropy (2 + 3 + 2 points)

        With label smoothing $\\varepsilon$ the target distribution puts $1 - \\varepsilon + \\varepsilon/V$ on
        the correct token and $\\varepsilon/V$ on each of the $V$ tokens of the vocabulary, so the loss of one
        position with log-probabilities $\\log p$ and target $y$ is

        $$(1 - \\varepsilon)\\,(-\\log p_y) + \\varepsilon \\cdot \\frac{1}{V}\\sum_{v=1}^{V} (-\\log p_v).$$

        Write `label_smoothed_loss(logits, targets, smoothing=0.1, pad_id=PAD_ID)`: `logits` `(B, T, V)`,
        `targets` `(B, T)` ids; return the **mean over the non-padding positions** as a scalar tensor
        (differentiable: use [[FW]] operations). Padding positions count for nothing; a batch of padding
        only gives 0, not NaN. Use a log-softmax rather than `log(softmax(...))`.
        """),
    solution(
        "label_smoothed_loss",
        {
            "torch": """
            def label_smoothed_loss(logits, targets, smoothing=0.1, pad_id=PAD_ID):
                \"\"\"Mean over non-padding positions of (1 - eps) NLL + eps * mean_v(-log p_v). A scalar tensor.\"\"\"
                ### BEGIN SOLUTION
                log_probs = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
                nll = -log_probs.gather(-1, targets[..., None])[..., 0]  # (B, T)
                uniform = -log_probs.mean(dim=-1)  # (B, T)
                per_token = (1.0 - smoothing) * nll + smoothing * uniform  # (B, T)
                keep = (targets != pad_id).float()  # (B, T)
                return (per_token * keep).sum() / keep.sum().clamp(min=1.0)
                ### END SOLUTION
        """,
            "tf": """
            def label_smoothed_loss(logits, targets, smoothing=0.1, pad_id=PAD_ID):
                \"\"\"Mean over non-padding positions of (1 - eps) NLL + eps * mean_v(-log p_v). A scalar tensor.\"\"\"
                ### BEGIN SOLUTION
                log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)  # (B, T, V)
                nll = -tf.gather(log_probs, targets, axis=-1, batch_dims=2)  # (B, T)
                uniform = -tf.reduce_mean(log_probs, axis=-1)  # (B, T)
                per_token = (1.0 - smoothing) * nll + smoothing * uniform  # (B, T)
                keep = tf.cast(tf.not_equal(targets, pad_id), tf.float32)  # (B, T)
                return tf.reduce_sum(per_token * keep) / tf.maximum(tf.reduce_sum(keep), 1.0)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_loss_without_smoothing",
        2,
        """
        # smoothing = 0 is the ordinary cross-entropy: the mean over real tokens of -log softmax(logits)[target].
        x = normal(2, 5, 7, seed=1).astype(np.float64)
        y = np.array([[3, 1, 6, 2, 0], [4, 4, 5, 0, 0]])
        log_p = x - x.max(-1, keepdims=True) - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))
        picked = np.take_along_axis(log_p, y[..., None], axis=-1)[..., 0]  # (B, T)
        expected = -picked[y != 0].mean()
        loss = label_smoothed_loss(tensor(x, "float32"), tensor(y), smoothing=0.0)
        assert np.ndim(to_numpy(loss)) == 0, f"return a scalar, got shape {np.shape(to_numpy(loss))}"
        assert_close(loss, expected, 1e-5, "loss with smoothing 0")
    """,
        probe=PROBE_LOSS_PLAIN,
    ),
    tests(
        "test_loss_matches_reference",
        3,
        """
        logits = tensor(normal(3, 6, 11, seed=2))
        targets = tensor([[5, 3, 9, 2, 0, 0], [7, 7, 1, 4, 10, 2], [6, 2, 0, 0, 0, 0]])
        for eps in (0.1, 0.3):
            reference, _ = label_smoothed_cross_entropy(logits, targets, eps)
            assert_close(label_smoothed_loss(logits, targets, smoothing=eps), reference, 1e-5, f"loss with smoothing {eps}")
    """,
        probe=PROBE_LOSS_SMOOTH,
    ),
    tests(
        "test_loss_ignores_padding",
        2,
        """
        # Changing the logits at padding positions, or adding padding, must not change the loss.
        x = normal(2, 4, 6, seed=4)
        y = np.array([[3, 4, 0, 0], [5, 2, 2, 0]])
        base = to_numpy(label_smoothed_loss(tensor(x), tensor(y)))
        x_changed = x.copy()
        x_changed[y == 0] = 100.0
        assert_close(label_smoothed_loss(tensor(x_changed), tensor(y)), base, 1e-5, "loss after changing padded logits")
        x_longer = np.concatenate([x, normal(2, 3, 6, seed=5)], axis=1)
        y_longer = np.concatenate([y, np.zeros((2, 3), dtype=y.dtype)], axis=1)
        assert_close(label_smoothed_loss(tensor(x_longer), tensor(y_longer)), base, 1e-5, "loss with 3 more pads")
        all_pad = to_numpy(label_smoothed_loss(tensor(x), tensor(np.zeros_like(y))))
        assert np.isfinite(all_pad) and all_pad == 0.0, f"a batch of padding only must give 0, got {all_pad}"
    """,
        probe=PROBE_LOSS_PADDING,
    ),
    md("""
        ## Exercise 2: greedy decoding (3 points)

        A trained model translates one token at a time: start from `<sos>`, feed the tokens produced so far,
        take the most probable next token, stop at `<eos>`. txcourse's models (the Transformer and the GRU
        seq2seq of week 1) expose this as two methods:

        - `state = model.start_decoding(src)`: encode the source `(B, T_src)` once;
        - `logits, state, attention = model.decode_step(token, state)`: feed the newest token `(B,)` of
          every sentence, get the next-token scores `(B, V)` and the new state (which holds the earlier
          tokens; the state you pass in is not changed, so keep the one returned).

        Write `greedy_decode(model, src, max_len, sos_id=SOS_ID, eos_id=EOS_ID, pad_id=PAD_ID)` returning the
        tokens `(B, T_out)`, `T_out <= max_len`, **without** the leading `<sos>`:

        - never generate `<pad>` or `<sos>` (give them a score of minus infinity);
        - a sentence that has produced `<eos>` continues with `<pad>` only;
        - stop as soon as every sentence has produced `<eos>`, or after `max_len` tokens;
        - run the model in inference mode: in PyTorch call `model.eval()` and decode under `torch.no_grad()`;
          Keras layers run in inference mode unless called with `training=True`.
        """),
    solution(
        "greedy_decode",
        {
            "torch": """
            def greedy_decode(model, src, max_len, sos_id=SOS_ID, eos_id=EOS_ID, pad_id=PAD_ID):
                \"\"\"The most probable token at every step, until every sentence has produced <eos>. (B, T_out).\"\"\"
                ### BEGIN SOLUTION
                model.eval()
                with torch.no_grad():
                    state = model.start_decoding(src)
                    token = torch.full((src.shape[0],), sos_id, dtype=torch.long, device=src.device)  # (B,)
                    finished = torch.zeros_like(token, dtype=torch.bool)  # (B,)
                    tokens = []
                    for _ in range(max_len):
                        logits, state, _ = model.decode_step(token, state)  # (B, V)
                        logits = logits.float().clone()
                        logits[:, [pad_id, sos_id]] = float("-inf")
                        token = logits.argmax(dim=-1)  # (B,)
                        token = torch.where(finished, torch.full_like(token, pad_id), token)  # (B,)
                        tokens.append(token)
                        finished = finished | (token == eos_id)
                        if bool(finished.all()):
                            break
                    return torch.stack(tokens, dim=1)  # (B, T_out)
                ### END SOLUTION
        """,
            "tf": """
            def greedy_decode(model, src, max_len, sos_id=SOS_ID, eos_id=EOS_ID, pad_id=PAD_ID):
                \"\"\"The most probable token at every step, until every sentence has produced <eos>. (B, T_out).\"\"\"
                ### BEGIN SOLUTION
                state = model.start_decoding(src)
                token = tf.fill((src.shape[0],), tf.constant(sos_id, tf.int64))  # (B,)
                finished = tf.zeros_like(token, dtype=tf.bool)  # (B,)
                tokens = []
                for _ in range(max_len):
                    logits, state, _ = model.decode_step(token, state)  # (B, V)
                    logits = tf.cast(logits, tf.float32)
                    banned = tf.reduce_any(tf.one_hot([pad_id, sos_id], logits.shape[-1]) > 0, axis=0)  # (V,)
                    logits = tf.where(banned, float("-inf"), logits)  # (B, V)
                    token = tf.argmax(logits, axis=-1)  # (B,) int64
                    token = tf.where(finished, tf.constant(pad_id, tf.int64), token)  # (B,)
                    tokens.append(token)
                    finished = finished | (token == eos_id)
                    if bool(tf.reduce_all(finished)):
                        break
                return tf.stack(tokens, axis=1)  # (B, T_out)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_greedy_decode",
        3,
        """
        class Scripted:
            \"\"\"A stand-in model whose next-token scores follow a script; <pad> and <sos> always score highest.\"\"\"

            config = None

            def __init__(self, script, vocab_size=9):
                self.script, self.vocab_size = script, vocab_size

            def eval(self):
                return self

            def train(self, mode=True):
                return self

            def start_decoding(self, src, use_cache=True):
                return {"step": 0}

            def decode_step(self, token, state):
                scores = np.full((len(self.script), self.vocab_size), -5.0, dtype=np.float32)
                scores[:, [PAD_ID, SOS_ID]] = 9.0  # must never be chosen
                for b, row in enumerate(self.script):
                    scores[b, row[min(state["step"], len(row) - 1)]] = 5.0
                return tensor(scores), {"step": state["step"] + 1}, None  # a new state; the given one unchanged


        E = EOS_ID
        src = tensor(np.ones((3, 4), dtype=np.int64))
        out = greedy_decode(Scripted([[7, 8, E], [5, E], [6]]), src, max_len=5)
        assert_equal(out, [[7, 8, E, 0, 0], [5, E, 0, 0, 0], [6, 6, 6, 6, 6]], "greedy decoding of a scripted model")
        out = greedy_decode(Scripted([[7, E], [E], [4, 4, E]]), src, max_len=6)
        assert_equal(out, [[7, E, 0], [E, 0, 0], [4, 4, E]], "stop once every sentence has produced <eos>")
    """,
        probe=PROBE_GREEDY,
    ),
    md("""
        ## Exercise 3: top-p (nucleus) filtering (2 + 2 points)

        Instead of taking the most probable token, a decoder can **sample** it from the model's
        distribution. Nucleus sampling (Holtzman et al. 2020) first cuts the unreliable tail: it keeps the
        *smallest* set of most probable tokens whose probability reaches `top_p`, sets the others to 0 and
        renormalises. Sort the probabilities in decreasing order; a token is kept when the tokens ranked
        above it hold **less than** `top_p` together, so the most probable token is always kept. With
        probabilities `(0.5, 0.3, 0.15, 0.05)` and `top_p = 0.6`, the first two are kept (0.5 above the
        second is less than 0.6, 0.8 above the third is not): `(0.625, 0.375, 0, 0)`.

        Write `top_p_filter(logits, top_p)`: `logits` `(B, V)`, `0 < top_p <= 1`; return the filtered
        **probabilities** `(B, V)` (each row sums to 1), in the original token order. Use [[FW]]
        operations (a sort, a cumulative sum); txcourse's `filter_logits` does this among other things:
        write it yourself. Sampling from the result is one call (`torch.multinomial` /
        `tf.random.categorical` of its log).
        """),
    solution(
        "top_p_filter",
        {
            "torch": """
            def top_p_filter(logits, top_p):
                \"\"\"The probabilities (B, V) of the nucleus: the fewest most probable tokens reaching top_p, renormalised.\"\"\"
                ### BEGIN SOLUTION
                probs = torch.softmax(logits.float(), dim=-1)  # (B, V)
                sorted_probs, order = torch.sort(probs, dim=-1, descending=True)  # (B, V), (B, V)
                above = torch.cumsum(sorted_probs, dim=-1) - sorted_probs  # (B, V) mass ranked above each token
                keep_sorted = above < top_p  # (B, V)
                keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)  # (B, V) in token order
                kept = torch.where(keep, probs, torch.zeros_like(probs))  # (B, V)
                return kept / kept.sum(dim=-1, keepdim=True)
                ### END SOLUTION
        """,
            "tf": """
            def top_p_filter(logits, top_p):
                \"\"\"The probabilities (B, V) of the nucleus: the fewest most probable tokens reaching top_p, renormalised.\"\"\"
                ### BEGIN SOLUTION
                probs = tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)  # (B, V)
                order = tf.argsort(probs, axis=-1, direction="DESCENDING")  # (B, V)
                sorted_probs = tf.gather(probs, order, batch_dims=1)  # (B, V)
                above = tf.cumsum(sorted_probs, axis=-1) - sorted_probs  # (B, V) mass ranked above each token
                keep_sorted = above < top_p  # (B, V)
                keep = tf.gather(keep_sorted, tf.argsort(order, axis=-1), batch_dims=1)  # (B, V) in token order
                kept = tf.where(keep, probs, tf.zeros_like(probs))  # (B, V)
                return kept / tf.reduce_sum(kept, axis=-1, keepdims=True)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_top_p_worked",
        2,
        """
        logits = tensor(np.log([[0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.3, 0.5]]), "float32")
        assert_close(top_p_filter(logits, 0.6), [[0.625, 0.375, 0, 0], [0, 0, 0.375, 0.625]], 1e-5, "top_p 0.6")
        assert_close(top_p_filter(logits, 0.9), [[0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0],
                                                [0, 0.15 / 0.95, 0.3 / 0.95, 0.5 / 0.95]], 1e-5, "top_p 0.9")
        assert_close(top_p_filter(logits, 0.4), [[1, 0, 0, 0], [0, 0, 0, 1]], 1e-6, "top_p 0.4: the best alone")
    """,
        probe=PROBE_TOP_P_WORKED,
    ),
    tests(
        "test_top_p_matches_reference",
        2,
        """
        logits = tensor(normal(4, 12, seed=7) * 2)
        for p in (0.5, 0.9):
            probs = to_numpy(top_p_filter(logits, p))
            assert probs.shape == (4, 12), f"return (B, V) probabilities, got shape {probs.shape}"
            assert_close(probs.sum(-1), np.ones(4), 1e-5, f"rows of top_p_filter(logits, {p}) sum to 1")
    """,
        probe=PROBE_TOP_P_REFERENCE,
    ),
    md("""
        ## Training

        The model is `tx.Transformer` built from txcourse's defaults for this task (`default_model_config`),
        trained by txcourse's `Trainer`: Adam with the warm-up schedule of Eq. (3), label smoothing 0.1,
        gradient clipping, and a tokenizer per side (English words, Korean characters). At every logged step
        it also scores the validation split, teacher-forced with dropout off (`valid=`). Before training, the
        next cell checks your loss on one batch against txcourse's: the untrained model's loss is about
        $\\log V$.
        """),
    code(
        {
            "torch": """
            prepared = prepare_task("numbers", **TASK)
            src_tok, tgt_tok = prepared.src_tokenizer, prepared.tgt_tokenizer
            print(f"{len(prepared.train)} training pairs, vocabularies {src_tok.vocab_size} / {tgt_tok.vocab_size}; "
                  f"e.g. {prepared.splits.train[0]}")
            fw = backend("torch")
            set_seed(SEED)
            model_config = default_model_config("transformer", src_tok.vocab_size, tgt_tok.vocab_size, MODEL)
            model = fw.build_model("transformer", model_config)
            train_config = TrainConfig(seed=SEED, device=DEVICE, progress=PROGRESS, **TRAIN)
            valid = encode_pairs(prepared.splits.valid, src_tok, tgt_tok)  # scored at every logged step
            trainer = fw.Trainer(model, "transformer", model_config, prepared.train, train_config, valid=valid)
            print(f"{sum(p.numel() for p in model.parameters())} parameters on {trainer.device}")
        """,
            "tf": """
            prepared = prepare_task("numbers", **TASK)
            src_tok, tgt_tok = prepared.src_tokenizer, prepared.tgt_tokenizer
            print(f"{len(prepared.train)} training pairs, vocabularies {src_tok.vocab_size} / {tgt_tok.vocab_size}; "
                  f"e.g. {prepared.splits.train[0]}")
            fw = backend("tf")
            set_seed(SEED)
            model_config = default_model_config("transformer", src_tok.vocab_size, tgt_tok.vocab_size, MODEL)
            model = fw.build_model("transformer", model_config)
            train_config = TrainConfig(seed=SEED, device=DEVICE, progress=PROGRESS, **TRAIN)
            valid = encode_pairs(prepared.splits.valid, src_tok, tgt_tok)  # scored at every logged step
            trainer = fw.Trainer(model, "transformer", model_config, prepared.train, train_config, valid=valid)
            print(f"{model.count_params()} parameters on {trainer.device}")
        """,
        },
        in_probe_run=False,
    ),
    code(
        """
        batch = make_batches(prepared.train, batch_size=64)[0]
        src, tgt_in, tgt_out = (fw.to_tensor(a, DEVICE) for a in (batch.src, batch.tgt_in, batch.tgt_out))
        logits = run(trainer.model, src, tgt_in)
        yours = float(label_smoothed_loss(logits, tgt_out, smoothing=train_config.label_smoothing))
        reference = float(label_smoothed_cross_entropy(logits, tgt_out, train_config.label_smoothing)[0])
        print(f"untrained loss on one batch: yours {yours:.4f}, txcourse {reference:.4f}, "
              f"log V = {math.log(tgt_tok.vocab_size):.4f}")

        history = trainer.fit()
        print(f"{trainer.step} steps: loss {history[0]['loss']:.3f} -> {history[-1]['loss']:.3f}, "
              f"token accuracy {history[-1]['accuracy']:.3f}; validation loss {history[-1]['valid_loss']:.3f}, "
              f"token accuracy {history[-1]['valid_accuracy']:.3f}")
    """,
        in_probe_run=False,
    ),
    md("""
        ## Evaluation

        `txcourse.evaluation.translate.evaluate` translates the test split with txcourse's greedy decoder and scores
        it: exact match (the whole number right), chrF (character n-gram F-score, 0-100), BLEU on characters,
        and exact match by source length. A test split only says what it samples, so the model is also scored
        on fresh numbers of every digit count (`evaluate_by_digit_count`): "nine" matters as much as
        "nine hundred thousand" to whoever types it. Then the test sentences go through **your**
        `greedy_decode`: the translations should be identical.
        """),
    code(
        """
        test_pairs = prepared.splits.test
        result = evaluate(fw, trainer.model, test_pairs, src_tok, tgt_tok, device=DEVICE)
        print(f"test ({len(test_pairs)} pairs): exact match {100 * result['exact_match']:.1f}%, "
              f"chrF {result['chrf']:.1f}, BLEU (characters) {result['bleu']:.1f}")
        print(format_length_table({"transformer": result["by_length"]}))
        by_digits = evaluate_by_digit_count(fw, trainer.model, prepared.splits, src_tok, tgt_tok, per_count=50,
                                            device=DEVICE)
        print(format_length_table({"transformer": by_digits["by_digits"]}, key="digits"))
        for (source, reference), hypothesis in list(zip(test_pairs, result["hypotheses"]))[:5]:
            print(f"{source!r} -> {hypothesis!r} ({'right' if hypothesis == reference else 'expected ' + repr(reference)})")
    """,
        in_probe_run=False,
    ),
    code(
        """
        def translate(decode, sources, batch_size=128):
            \"\"\"Translate `sources` with `decode` (a greedy decoder such as yours) and the trained model.\"\"\"
            outputs = []
            for start in range(0, len(sources), batch_size):
                ids, _ = pad_sequences([src_tok.encode(s) for s in sources[start:start + batch_size]], pad_id=PAD_ID)
                max_len = min(model_config.max_len, 2 * ids.shape[1] + 10)
                tokens = decode(trainer.model, fw.to_tensor(ids, DEVICE), max_len=max_len)
                outputs += [tgt_tok.decode(row.tolist()) for row in to_numpy(tokens)]
            return outputs


        yours = translate(greedy_decode, [s for s, _ in test_pairs])
        agreement = float(np.mean([a == b for a, b in zip(yours, result["hypotheses"])]))
        print(f"your greedy decoding: exact match {100 * exact_match(yours, [t for _, t in test_pairs]):.1f}%, "
              f"same translation as txcourse for {100 * agreement:.1f}% of the sentences")
    """,
        in_probe_run=False,
    ),
    tests(
        "test_training_worked",
        3,
        """
        first, last = history[0]["loss"], history[-1]["loss"]
        assert last < 0.5 * first, f"the loss fell only from {first:.3f} to {last:.3f}"
        assert result["exact_match"] >= EXACT_MATCH_TARGET, (
            f"exact match {result['exact_match']:.3f} < {EXACT_MATCH_TARGET} after {trainer.step} steps")
    """,
        probe=PROBE_TRAINING,
    ),
    tests(
        "test_your_decoder_translates",
        2,
        """
        assert len(yours) == len(test_pairs)
        assert agreement >= 0.99, f"your greedy decoding agrees with txcourse's on {100 * agreement:.1f}% only"
    """,
        probe=PROBE_TRANSLATES,
    ),
    md("""
        ## Training curves and attention

        Left to right: the label-smoothed loss (it cannot reach 0: with $\\varepsilon = 0.1$ the best
        possible loss is the entropy of the smoothed targets), the token accuracy under teacher forcing, and
        the learning rate of Eq. (3), rising for the warm-up steps and then decaying as $1/\\sqrt{step}$.
        The training curve averages each logging interval with dropout on; the validation curve scores the
        weights of its step with dropout off, which is why it can lie below the training curve (week 6,
        part 1, "How to read the two curves").
        Below: the encoder-decoder attention of the last decoder layer while translating one test sentence,
        one panel per head.
        """),
    code(
        """
        plots.plot_training_curves({"training batches (dropout on)": history,
                                    "validation split (dropout off)": validation_curve(history)},
                                   title=f"Transformer on numbers ([[FW]], {trainer.step} steps)")
        plt.show()

        source = max(test_pairs[:50], key=lambda pair: len(pair[0].split()))[0]
        ids = src_tok.encode(source)
        out = fw.greedy_decode(trainer.model, fw.to_tensor(np.array([ids]), DEVICE))
        out_ids = [int(i) for i in to_numpy(out.tokens)[0]]
        plots.plot_attention_heads(to_numpy(out.attention)[0], [src_tok.vocab[i] for i in ids],
                                   [tgt_tok.vocab[i] for i in out_ids], ncols=2,
                                   title=f"cross-attention: {source!r}")
        plt.show()
    """,
        in_probe_run=False,
    ),
]
