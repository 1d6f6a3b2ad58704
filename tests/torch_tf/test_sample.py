"""Decoding by sampling in both halves (week 6): filter_logits (temperature, top-k, top-p) and sample_decode.

The filtered distribution is deterministic: both halves agree with each other and with a NumPy reference
written token by token here. The draws are not comparable across frameworks (their random generators differ),
so they are tested within each framework: a fixed seed repeats, top-k 1, a tiny top-p and a tiny temperature
are greedy decoding, and many draws from one fixed distribution have the frequencies it gives (a margin test,
fixed seed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import Framework, assert_close
from support.training import module
from test_decode import SRC, prefer_specials, tiny_transformer

from txcourse.data import EOS_ID, PAD_ID, SOS_ID, UNK_ID
from txcourse.registry import FRAMEWORKS

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SETTINGS = [
    dict(),
    dict(temperature=0.5),
    dict(temperature=2.0),
    dict(top_k=1),
    dict(top_k=3),
    dict(top_k=100),
    dict(top_p=0.3),
    dict(top_p=0.9),
    dict(top_p=1.0),
    dict(temperature=0.7, top_k=5, top_p=0.8),
    dict(temperature=1e-40),
    dict(temperature=1e-40, top_p=0.9),
    dict(temperature=1e30, top_k=4),
]


def reference_filter(logits: np.ndarray, temperature=1.0, top_k=None, top_p=None) -> np.ndarray:
    """The filtered probabilities of one row (V,), token by token: sort (ties by id), cut, renormalise."""
    z = np.asarray(logits, np.float64) / temperature
    order = sorted(range(len(z)), key=lambda i: (-z[i], i))  # best first, equal ones by id
    kept = [i for i in order if z[i] > -np.inf][: top_k or len(z)]
    if top_p is not None:
        p = np.exp(z[kept] - z[kept].max())
        p = p / p.sum()
        kept = [i for i, above in zip(kept, np.cumsum(p) - p) if above < top_p]
    out = np.zeros(len(z))
    e = np.exp(z[kept] - z[kept].max())
    out[kept] = e / e.sum()
    return out


def _logits(shape=(2, 3, 11), seed=0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(0.0, 2.0, size=shape).astype(np.float32)
    logits[..., 4] = -np.inf  # a token the model rules out
    return logits


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_filter_logits_matches_the_reference(fw, settings):
    logits = _logits()
    log_probs = fw.numpy(fw.module.filter_logits(fw.tensor(logits), **settings))  # (2, 3, 11)
    assert log_probs.dtype == np.float32 and log_probs.shape == logits.shape
    assert np.isfinite(log_probs).all(), "excluded tokens get the most negative finite value, not -inf"
    probs = np.exp(log_probs)
    expected = np.apply_along_axis(reference_filter, -1, logits, **settings)
    assert_close(probs, expected, 1e-6, f"{fw}: filter_logits({settings})")
    assert (log_probs[expected == 0] == np.finfo(np.float32).min).all()
    assert_close(probs.sum(-1), np.ones(logits.shape[:-1]), 1e-6, f"{fw}: kept tokens renormalised")


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_filter_logits_agrees_across_frameworks(settings):
    torch_fw, tf_fw = Framework("torch"), Framework("tf")
    logits = _logits((5, 19), seed=1)
    t = np.exp(torch_fw.numpy(torch_fw.module.filter_logits(torch_fw.tensor(logits), **settings)))
    k = np.exp(tf_fw.numpy(tf_fw.module.filter_logits(tf_fw.tensor(logits), **settings)))
    assert_close(k, t, 1e-6, f"filter_logits({settings}): TensorFlow vs PyTorch")


def test_filter_logits_cuts_ties_by_id_and_always_keeps_the_best(fw):
    logits = fw.tensor(np.array([[1.0, 3.0, 3.0, 3.0, 0.0], [9.0, 0.0, 0.0, 0.0, 0.0]], np.float32))
    kept = lambda **kw: (fw.numpy(fw.module.filter_logits(logits, **kw)) > -1e30).astype(int).tolist()  # noqa: E731
    assert kept(top_k=2) == [[0, 1, 1, 0, 0], [1, 1, 0, 0, 0]], "ties: the lower ids first"
    assert kept(top_p=1e-9) == [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]], "the most probable token is always kept"
    assert kept(top_p=0.5) == [[0, 1, 1, 0, 0], [1, 0, 0, 0, 0]], "the smallest set that reaches p"
    assert kept(top_k=2, top_p=0.999999) == [[0, 1, 1, 0, 0], [1, 1, 0, 0, 0]], "top-p after top-k"


def test_a_tiny_temperature_is_greedy(fw):
    """T -> 0: all the probability on the best token, however small T is (no empty row, no nan)."""
    rows = np.array([[10.0, 9.0, -np.inf], [-0.1, -3.0, -2.5], [-50.0, 40.0, 39.9]], np.float32)  # logits, log-probs
    for temperature in (1e-4, 1e-38, 1e-40, 1e-50):
        log_probs = fw.numpy(fw.module.filter_logits(fw.tensor(rows), temperature=temperature))  # (3, 3)
        assert np.isfinite(log_probs).all(), f"{fw}: T = {temperature}: {log_probs}"
        np.testing.assert_array_equal(np.exp(log_probs), np.eye(3)[rows.argmax(-1)], err_msg=f"{fw}: T = {temperature}")


@pytest.mark.parametrize(
    "kwargs, argument, why",
    [
        (
            dict(temperature=0.0),
            "temperature",
            "got 0.0; temperature 0 is not a distribution: its limit is greedy decoding, use greedy_decode",
        ),
        (dict(temperature=-1.0), "temperature", "got -1.0 (negative)"),
        (dict(temperature=math.inf), "temperature", "got inf (not finite)"),
        (dict(temperature=math.nan), "temperature", "got nan (not finite)"),
        (dict(temperature="1"), "temperature", "got '1' (not a number)"),
        (dict(top_k=0), "top_k", "got 0"),
        (dict(top_k=2.5), "top_k", "got 2.5 (not an integer)"),
        (dict(top_k=True), "top_k", "got True (not an integer)"),
        (dict(top_p=0.0), "top_p", "got 0.0"),
        (dict(top_p=1.5), "top_p", "got 1.5"),
        (dict(top_p=math.nan), "top_p", "got nan"),
        (dict(top_p="0.5"), "top_p", "got '0.5' (not a number)"),
    ],
    ids=str,
)
def test_bad_settings_are_refused_naming_the_argument(fw, kwargs, argument, why):
    from txcourse._validation import ArgumentError

    logits = fw.tensor(_logits((1, 5)))
    with pytest.raises(ArgumentError, match=f"^{argument} must be") as err:
        fw.module.filter_logits(logits, **kwargs)
    assert err.value.argument == argument
    assert str(err.value).endswith(why), str(err.value)  # each refusal says why
    with pytest.raises(ArgumentError, match=f"^{argument} must be"):
        fw.module.sample_decode(tiny_transformer(fw), fw.tensor(SRC), max_len=4, **kwargs)


def test_a_row_with_no_token_to_draw_is_refused(fw):
    from txcourse._validation import ArgumentError

    logits = _logits((2, 3, 5))
    logits[0, 1] = logits[1, 2] = -np.inf  # two rows of -inf only
    with pytest.raises(
        ArgumentError, match=r"^logits must give some token a logit > -inf in every row, got 2 rows"
    ) as err:
        fw.module.filter_logits(fw.tensor(logits))
    assert err.value.argument == "logits"


def test_a_row_with_no_token_to_draw_fails_a_tf_graph():
    """TensorFlow: inside a tf.function the values are unknown when it is traced: a graph assertion."""
    import tensorflow as tf

    fw = Framework("tf")
    graph = tf.function(fw.module.filter_logits, autograph=False)
    assert np.isfinite(graph(fw.tensor(_logits((2, 5)))).numpy()).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits has a row of -inf only"):
        graph(fw.tensor(np.full((2, 5), -np.inf, np.float32)))


def test_a_negative_seed_is_refused(fw):
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -1"):
        fw.module.sample_decode(tiny_transformer(fw), fw.tensor(SRC), max_len=4, seed=-1)


# ---------------------------------------------------------------------------
# sample_decode on a model
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=FRAMEWORKS)
def sampled(request):
    """One random Transformer per framework, decoded greedily and by sampling (eager Keras is slow: decode once)."""
    fw = Framework(request.param)
    model = tiny_transformer(fw, seed=1)
    src = fw.tensor(np.repeat(SRC, 4, axis=0))  # (12, 6) each source 4 times
    runs = {
        "greedy": fw.module.greedy_decode(model, src, max_len=8),
        "top_k 1": fw.module.sample_decode(model, src, max_len=8, top_k=1, seed=3),
        "top_p tiny": fw.module.sample_decode(model, src, max_len=8, top_p=1e-6, temperature=2.0, seed=4),
        "T tiny": fw.module.sample_decode(model, src, max_len=8, temperature=1e-40, seed=5),
        "seed 0": fw.module.sample_decode(model, src, max_len=8, temperature=1.5, seed=0),
        "seed 0 again": fw.module.sample_decode(model, src, max_len=8, temperature=1.5, seed=0),
        "seed 1": fw.module.sample_decode(model, src, max_len=8, temperature=1.5, seed=1),
        "no cache": fw.module.sample_decode(model, src, max_len=8, temperature=1.5, seed=0, use_cache=False),
    }
    return fw, model, {key: (fw.numpy(o.tokens), fw.numpy(o.scores), fw.numpy(o.attention)) for key, o in runs.items()}


@pytest.mark.parametrize(
    "a,b", [("top_k 1", "greedy"), ("top_p tiny", "greedy"), ("T tiny", "greedy"), ("seed 0 again", "seed 0")]
)
def test_sampling_repeats(sampled, a, b):
    """top_k=1, a tiny top_p and a tiny T are greedy decoding; the same seed and batch draw the same tokens."""
    fw, _, runs = sampled
    np.testing.assert_array_equal(runs[a][0], runs[b][0], err_msg=f"{fw}: {a} != {b}")
    assert_close(runs[a][1], runs[b][1], 1e-5, f"{fw}: scores of {a} and {b}")
    assert_close(runs[a][2], runs[b][2], 1e-5, f"{fw}: attention of {a} and {b}")


def test_sampling_draws(sampled):
    """Another seed draws other tokens; the cache changes the work, not the draws; scores are log P under the model."""
    fw, model, runs = sampled
    assert not np.array_equal(runs["seed 0"][0], runs["seed 1"][0]), f"{fw}: seeds 0 and 1 drew the same tokens"
    assert len({tuple(row) for row in runs["seed 0"][0]}) > len({tuple(row) for row in runs["greedy"][0]})
    np.testing.assert_array_equal(runs["no cache"][0], runs["seed 0"][0], err_msg=f"{fw}: cached vs uncached")
    tokens, scores, attention = runs["seed 0"]
    assert attention.shape == (12, model.config.num_heads, tokens.shape[1], SRC.shape[1])
    assert (scores < runs["greedy"][1] + 1e-5).sum() >= 6, "samples are mostly less probable than greedy"


def test_sampling_never_generates_pad_sos_or_unk_and_pads_after_eos(fw):
    model = tiny_transformer(fw, seed=3, tie_embeddings=False)
    prefer_specials(fw, model)
    out = fw.module.sample_decode(model, fw.tensor(np.repeat(SRC, 3, axis=0)), max_len=8, temperature=3.0, seed=2)
    tokens = fw.numpy(out.tokens)
    assert (tokens == EOS_ID).any(axis=1).sum() >= 1  # some rows finish
    for row in tokens:
        end = list(row).index(EOS_ID) if EOS_ID in row else len(row)
        assert SOS_ID not in row and UNK_ID not in row and PAD_ID not in row[:end], row
        assert (row[end + 1 :] == PAD_ID).all(), row


# ---------------------------------------------------------------------------
# the draws follow the filtered distribution
# ---------------------------------------------------------------------------

FIXED = np.array([0.0, 0.0, 2.0, 1.5, 1.5, 1.0, 0.2, -0.5, -1.0, -3.0], np.float32)  # ids 0, 1, 3: <pad>, <sos>, <unk>


class FixedLogits:
    """A decoder that gives the same logits FIXED at every step: sample_decode draws from filter_logits(FIXED)."""

    training = False

    def __init__(self, fw: Framework):
        self.fw = fw

    def eval(self):
        return self

    def train(self, mode: bool = True):
        return self

    def start_decoding(self, src, use_cache=True):
        return {"src": src}

    def decode_step(self, token, state):
        rows = self.fw.tensor(np.ones((1, 1), np.float32))  # (1, 1)
        rows = rows * (
            token[:, None].float() if self.fw.name == "torch" else self.fw.lib.cast(token[:, None], "float32")
        )
        return 0.0 * rows + self.fw.tensor(FIXED)[None, :], state, None  # (B, V)


@pytest.mark.parametrize("settings", [dict(), dict(temperature=0.6), dict(top_k=4), dict(top_p=0.7)], ids=str)
def test_draws_have_the_filtered_frequencies(fw, settings):
    """N = 6000 one-token draws: every token's count within 5 standard deviations of N p; excluded ones never."""
    n = 6000
    out = fw.module.sample_decode(FixedLogits(fw), fw.tensor(np.full((n, 1), 5)), max_len=1, seed=11, **settings)
    counts = np.bincount(fw.numpy(out.tokens)[:, 0], minlength=len(FIXED))
    banned = FIXED.copy()
    banned[[PAD_ID, SOS_ID, UNK_ID]] = -np.inf
    p = reference_filter(banned, **settings)
    assert (counts[p == 0] == 0).all(), f"{fw}: drew excluded tokens: {counts} for p = {p.round(3)}"
    margin = 5 * np.sqrt(n * p * (1 - p)) + 1
    assert (np.abs(counts - n * p) <= margin).all(), f"{fw}: counts {counts}, expected {(n * p).round(0)}"
    chi2 = (((counts - n * p) ** 2)[p > 0] / (n * p[p > 0])).sum()
    assert chi2 < 30.0, f"{fw}: chi-square {chi2:.1f} over {(p > 0).sum() - 1} degrees of freedom"


def test_the_tf_sampling_step_is_traced_once(monkeypatch):
    """TensorFlow: one trace of the sampling step for every step and seed (the seed is a tensor)."""
    fw = Framework("tf")
    model = tiny_transformer(fw, seed=1)
    traced = []
    method = type(model).decode_step

    def counted(self, *args):
        traced.append(self)
        return method(self, *args)

    monkeypatch.setattr(type(model), "decode_step", counted)
    for seed in (0, 1):
        fw.module.sample_decode(model, fw.tensor(SRC), max_len=6, eos_id=-1, seed=seed, top_k=3)
    assert len(traced) == 1, f"traced {len(traced)} times"
    module(fw, "sample")  # the module is importable by its name, as the drift test expects
