"""Decoding in both halves (week 6): greedy and beam search, the cache, state in and state out.

Every test body runs once per framework (the ``fw`` fixture); the cross-framework tests convert weights
PyTorch -> TensorFlow and check that both decoders produce the same tokens."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import Framework, assert_close, small_config
from support.training import SCENARIO_CONFIG, copy_data, module, tiny_config_dict

from txcourse.config import Seq2SeqConfig
from txcourse.convert import torch_to_tf
from txcourse.data import EOS_ID, PAD_ID, SOS_ID, UNK_ID
from txcourse.registry import FRAMEWORKS, MODEL_KINDS

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------

SRC = np.array([[5, 9, 3, 7, 11, 4], [8, 8, 6, 3, PAD_ID, PAD_ID], [12, 4, PAD_ID, PAD_ID, PAD_ID, PAD_ID]])
DECODE_CONFIG = dict(num_encoder_layers=1, num_decoder_layers=1, max_len=20)  # small_config, one layer each


def tiny_transformer(fw: Framework, seed: int = 0, **changes):
    cfg = small_config(**{**DECODE_CONFIG, **changes})
    if fw.name == "torch":
        torch.manual_seed(seed)
        return fw.module.Transformer(cfg).eval()
    import keras

    keras.utils.set_random_seed(seed)
    return fw.module.Transformer(cfg)


@pytest.fixture(scope="module", params=FRAMEWORKS)
def decoded(request):
    """One random Transformer per framework, decoded every way (eager Keras decoding is slow: decode once)."""
    fw = Framework(request.param)
    decode = module(fw, "decode")
    model = tiny_transformer(fw, seed=1)
    src = fw.tensor(SRC)
    runs = {
        "greedy": decode.greedy_decode(model, src, max_len=8),
        "greedy, no cache": decode.greedy_decode(model, src, max_len=8, use_cache=False),
        "beam 1": decode.beam_search(model, src, beam_size=1, max_len=8, length_penalty_alpha=0.0),
        "beam 4": decode.beam_search(model, src, beam_size=4, max_len=8),
        "beam 4, no cache": decode.beam_search(model, src, beam_size=4, max_len=8, use_cache=False),
    }
    return fw, model, {key: (fw.numpy(o.tokens), fw.numpy(o.scores), fw.numpy(o.attention)) for key, o in runs.items()}


@pytest.mark.parametrize("a,b", [("greedy", "greedy, no cache"), ("beam 1", "greedy"), ("beam 4", "beam 4, no cache")])
def test_decoders_agree(decoded, a, b):
    """Cached = uncached (greedy and beam 4); beam 1 with alpha 0 = greedy."""
    fw, _, runs = decoded
    np.testing.assert_array_equal(runs[a][0], runs[b][0], err_msg=f"{fw}: {a} != {b}")
    assert_close(runs[a][1], runs[b][1], 1e-4, f"{fw}: scores of {a} and {b}")
    assert_close(runs[a][2], runs[b][2], 1e-5, f"{fw}: attention of {a} and {b}")


def test_decoded_shapes(decoded):
    fw, model, runs = decoded
    for key, (tokens, scores, attention) in runs.items():
        assert tokens.shape[0] == scores.shape[0] == 3 and 1 <= tokens.shape[1] <= 8, key
        assert attention.shape == (3, model.config.num_heads, tokens.shape[1], SRC.shape[1]), key
        assert np.isfinite(scores).all(), key


def prefer_specials(fw: Framework, model) -> None:
    """Make <pad>, <sos> and <unk> the most probable outputs by far, and <eos> likely: the decoder must still refuse them."""
    layer = model.output_projection
    bias = (layer.bias.detach() if fw.name == "torch" else layer.bias).numpy().copy()  # (V,)
    bias[[PAD_ID, SOS_ID, UNK_ID]] = 50.0
    bias[EOS_ID] = 2.5
    if fw.name == "torch":
        with torch.no_grad():
            model.output_projection.bias.copy_(torch.from_numpy(bias))
    else:
        model.output_projection.bias.assign(bias)


def test_decoders_never_generate_pad_sos_or_unk_and_pad_after_eos(fw):
    decode = module(fw, "decode")
    model = tiny_transformer(fw, seed=3, tie_embeddings=False)
    prefer_specials(fw, model)
    for out in (
        decode.greedy_decode(model, fw.tensor(SRC), max_len=8),
        decode.beam_search(model, fw.tensor(SRC), beam_size=3, max_len=8),
    ):
        tokens = fw.numpy(out.tokens)
        assert (tokens == EOS_ID).any(axis=1).sum() >= 1  # some rows finish
        for row in tokens:
            end = list(row).index(EOS_ID) if EOS_ID in row else len(row)
            assert SOS_ID not in row and UNK_ID not in row and PAD_ID not in row[:end], row
            assert (row[end + 1 :] == PAD_ID).all(), row


def test_max_len_longer_than_the_model_is_refused(fw):
    decode = module(fw, "decode")
    model = tiny_transformer(fw)
    with pytest.raises(ValueError, match="longer than the model's max_len=20"):
        decode.greedy_decode(model, fw.tensor(SRC), max_len=21)
    with pytest.raises(ValueError, match="longer than the model's max_len=20"):
        decode.beam_search(model, fw.tensor(SRC), max_len=21)
    with pytest.raises(ValueError, match="beam_size"):
        decode.beam_search(model, fw.tensor(SRC), beam_size=0)
    with pytest.raises(ValueError, match="length_penalty_alpha"):
        decode.beam_search(model, fw.tensor(SRC), length_penalty_alpha=-1.0)


def test_decoders_refuse_token_ids_outside_the_vocabulary(fw):
    """A clear ValueError, also where TensorFlow encodes in a graph (whose check is an assertion)."""
    decode = module(fw, "decode")
    model = tiny_transformer(fw)
    bad = fw.tensor(np.array([[5, 9, 99]]))
    with pytest.raises(ValueError, match="token id 99, outside the vocabulary"):
        decode.greedy_decode(model, bad, max_len=4)
    with pytest.raises(ValueError, match="token id 99, outside the vocabulary"):
        decode.beam_search(model, bad, beam_size=2, max_len=4)


def test_reorder_state_selects_rows_of_the_cache(fw):
    from txcourse.cache import DecoderLayerCache, KVCache

    decode = module(fw, "decode")
    rows = fw.tensor(np.arange(3.0)[:, None] * np.ones((3, 2), np.float32))
    cache = (DecoderLayerCache(KVCache(rows, rows), KVCache(rows, rows)),)
    given = {"memory": fw.tensor(np.arange(3)), "cache": cache}
    state = decode.reorder_state(given, fw.tensor(np.array([2, 2, 0])))
    np.testing.assert_array_equal(fw.numpy(state["memory"]), [2, 2, 0])
    assert isinstance(state["cache"], tuple) and isinstance(state["cache"][0], DecoderLayerCache)
    np.testing.assert_array_equal(fw.numpy(state["cache"][0].self_attn.key)[:, 0], [2, 2, 0])
    np.testing.assert_array_equal(fw.numpy(state["cache"][0].cross_attn.value)[:, 0], [2, 2, 0])
    np.testing.assert_array_equal(fw.numpy(given["cache"][0].self_attn.key)[:, 0], [0, 1, 2])  # a new state


_GRU = Seq2SeqConfig(src_vocab_size=23, tgt_vocab_size=19, embedding_dim=12, units=16)  # small_config's vocabularies


def _seq2seq(fw: Framework, seed: int = 0):
    if fw.name == "torch":
        torch.manual_seed(seed)
        return fw.module.Seq2Seq(_GRU).eval()
    import keras

    keras.utils.set_random_seed(seed)
    return fw.module.Seq2Seq(_GRU)


@pytest.mark.parametrize("kind, use_cache", [("transformer", True), ("transformer", False), ("seq2seq", True)])
def test_decode_step_returns_a_new_state_and_changes_nothing(fw, kind, use_cache):
    """decode_step(token, state) is a function: the same state twice gives the same result, the state is left as it was."""
    model = tiny_transformer(fw, seed=2) if kind == "transformer" else _seq2seq(fw, seed=2)
    src = fw.tensor(SRC)
    state = model.start_decoding(src, use_cache)
    token = fw.tensor(np.array([SOS_ID] * 3))
    logits, state, _ = model.decode_step(token, state)  # one step in: a non-empty cache or prefix
    flat = lambda nest: [fw.numpy(x).copy() for x in _tensors(nest)]  # noqa: E731
    before = flat(state)
    token = fw.tensor(np.array([5, 6, 7]))
    first = model.decode_step(token, state)
    second = model.decode_step(token, state)
    for a, b in zip(before, flat(state)):
        np.testing.assert_array_equal(a, b, err_msg=f"{fw}: decode_step changed its input state")
    assert len(_tensors(first)) == len(_tensors(second))
    for a, b in zip(_tensors(first), _tensors(second)):
        assert_close(fw.numpy(a), fw.numpy(b), 0.0, f"{fw}: decode_step twice on the same state")
    assert first[1] is not state


def test_bahdanau_decoding_projects_the_source_once(fw):
    """start_decoding keeps U_a h_j (Bahdanau's keys) in the state; a step with them gives exactly what a step that
    projects the encoder states again gives (the decoding state of the plain GRU has none)."""
    model = _seq2seq(fw, seed=3)  # attention=True: the "bahdanau" kind
    src = fw.tensor(SRC)
    state = model.start_decoding(src)
    expected = model.decoder.attention.u_a(state["encoder_outputs"])  # (B, T_src, U)
    np.testing.assert_array_equal(fw.numpy(state["keys"]), fw.numpy(expected))
    again = {key: value for key, value in state.items() if key != "keys"}  # the keys projected at every step
    for ids in ([SOS_ID] * 3, [5, 6, 7], [8, 8, 9]):
        token = fw.tensor(np.array(ids))
        (logits, state, weights), (ref_logits, again, ref_weights) = (
            model.decode_step(token, state),
            model.decode_step(token, again),
        )
        np.testing.assert_array_equal(fw.numpy(logits), fw.numpy(ref_logits))
        np.testing.assert_array_equal(fw.numpy(weights), fw.numpy(ref_weights))
        assert "keys" in state and "keys" not in again
    if fw.name == "torch":
        torch.manual_seed(0)
        plain = fw.module.Seq2Seq(_GRU, attention=False).eval()
    else:
        plain = fw.module.Seq2Seq(_GRU, attention=False)
    assert "keys" not in plain.start_decoding(src)


def _tensors(nest) -> list:
    """The tensors of a nest of dicts and tuples, in a fixed order."""
    if isinstance(nest, dict):
        return [x for key in sorted(nest) for x in _tensors(nest[key])]
    if isinstance(nest, (tuple, list)):
        return [x for item in nest for x in _tensors(item)]
    return [] if nest is None or isinstance(nest, (int, float)) else [nest]


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_and_uncached_decode_steps_agree(fw, norm_first):
    """The key/value cache changes the work, not the numbers: logits and cross-attention of every step agree to 1e-5."""
    model = tiny_transformer(fw, seed=4, norm_first=norm_first, num_decoder_layers=2)
    src = fw.tensor(SRC)
    cached, uncached = model.start_decoding(src, True), model.start_decoding(src, False)
    for t, ids in enumerate([[SOS_ID] * 3, [5, 6, 7], [8, 8, 9], [10, 4, 5]]):
        token = fw.tensor(np.array(ids))
        logits, cached, attention = model.decode_step(token, cached)
        ref_logits, uncached, ref_attention = model.decode_step(token, uncached)
        assert_close(fw.numpy(logits), fw.numpy(ref_logits), 1e-5, f"{fw}: logits of step {t}")
        assert_close(fw.numpy(attention), fw.numpy(ref_attention), 1e-5, f"{fw}: cross-attention of step {t}")
        assert tuple(cached["cache"][0].self_attn.key.shape)[2] == t + 1
        assert tuple(uncached["prefix"].shape) == (3, t + 1)


def test_tf_decoding_runs_traced_graphs_and_decodes_as_eagerly(monkeypatch):
    """TensorFlow decodes through start_decoding and its decoding steps traced into graphs, once per model
    and step (not once per step, length or batch), and returns what eager step-by-step decoding returns."""
    import tensorflow as tf

    fw = Framework("tf")
    decode = module(fw, "decode")
    model = tiny_transformer(fw, seed=1)
    calls = {"start_decoding": 0, "decode_step": 0}  # Python runs of each method: traces, or eager calls
    for name in calls:

        def counted(self, *args, _method=getattr(type(model), name), _name=name):
            calls[_name] += 1
            return _method(self, *args)

        monkeypatch.setattr(type(model), name, counted)
    src = fw.tensor(SRC)
    compiled = {}
    for key, run in (
        ("greedy 5", lambda: decode.greedy_decode(model, src, max_len=5, eos_id=-1)),
        ("greedy 9", lambda: decode.greedy_decode(model, src, max_len=9, eos_id=-1)),
        ("greedy 2 rows", lambda: decode.greedy_decode(model, src[:2], max_len=7, eos_id=-1)),
    ):
        compiled[key] = run()
    assert calls == {"start_decoding": 1, "decode_step": 1}, f"one trace for every step, length and batch: {calls}"
    compiled["beam 3"] = decode.beam_search(model, src, beam_size=3, max_len=9, eos_id=-1)
    assert calls == {"start_decoding": 1, "decode_step": 2}, f"the beam step: one trace of its own: {calls}"
    compiled["greedy, no cache"] = decode.greedy_decode(model, src, max_len=9, eos_id=-1, use_cache=False)
    assert calls == {"start_decoding": 2, "decode_step": 3}, f"no cache: another state, one more trace: {calls}"
    assert not any(
        hasattr(m, "attention_weights") for layer in model.decoder.layers for m in (layer.self_attn, layer.cross_attn)
    ), "nothing is kept on a layer"

    tf.config.run_functions_eagerly(True)
    try:
        eager = {
            "greedy 9": decode.greedy_decode(model, src, max_len=9, eos_id=-1),
            "beam 3": decode.beam_search(model, src, beam_size=3, max_len=9, eos_id=-1),
        }
    finally:
        tf.config.run_functions_eagerly(False)
    assert calls["decode_step"] == 3 + 2 * 9, "eagerly, decode_step runs once per step"
    for a, b in (("greedy 9", "greedy 9"), ("beam 3", "beam 3"), ("greedy, no cache", "greedy 9")):
        np.testing.assert_array_equal(fw.numpy(compiled[a].tokens), fw.numpy(eager[b].tokens), err_msg=f"{a} vs eager")
        assert_close(fw.numpy(compiled[a].scores), fw.numpy(eager[b].scores), 1e-5, f"scores of {a} vs eager")
        assert_close(fw.numpy(compiled[a].attention), fw.numpy(eager[b].attention), 1e-6, f"attention of {a} vs eager")
    eager_tokens = fw.numpy(eager["greedy 9"].tokens)  # (3, 9); a shorter decode or fewer rows: a part of it
    np.testing.assert_array_equal(fw.numpy(compiled["greedy 5"].tokens), eager_tokens[:, :5])
    np.testing.assert_array_equal(fw.numpy(compiled["greedy 2 rows"].tokens), eager_tokens[:2, :7])


def test_tf_decoding_traces_once_per_model(monkeypatch):
    """A second model gets its own trace; the first model's graphs are not traced again."""
    fw = Framework("tf")
    decode = module(fw, "decode")
    models = [tiny_transformer(fw, seed=1), tiny_transformer(fw, seed=2)]
    traced = []
    method = type(models[0]).decode_step

    def counted(self, *args):
        traced.append(self)
        return method(self, *args)

    monkeypatch.setattr(type(models[0]), "decode_step", counted)
    for _ in range(2):
        for model in models:
            decode.greedy_decode(model, fw.tensor(SRC), max_len=6, eos_id=-1)
    assert [models.index(m) for m in traced] == [0, 1], "one trace per model, whatever the number of steps and runs"


# ---------------------------------------------------------------------------
# PyTorch and TensorFlow decode alike
# ---------------------------------------------------------------------------


def _model_pair(kind: str):
    torch_fw, tf_fw = Framework("torch"), Framework("tf")
    torch.manual_seed(7)
    if kind == "transformer":
        cfg = small_config(**DECODE_CONFIG)
        pair = torch_fw.module.Transformer(cfg).eval(), tf_fw.module.Transformer(cfg)
    else:
        attention = kind == "bahdanau"
        pair = torch_fw.module.Seq2Seq(_GRU, attention).eval(), tf_fw.module.Seq2Seq(_GRU, attention)
    torch_to_tf(*pair)
    return torch_fw, tf_fw, pair


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_decoding_agrees_across_frameworks(kind):
    torch_fw, tf_fw, (t_model, k_model) = _model_pair(kind)
    heads = {"transformer": small_config().num_heads, "bahdanau": 1, "seq2seq": None}[kind]
    for name, run in (
        ("greedy", lambda fw, m: module(fw, "decode").greedy_decode(m, fw.tensor(SRC), max_len=10)),
        ("beam", lambda fw, m: module(fw, "decode").beam_search(m, fw.tensor(SRC), beam_size=4, max_len=10)),
    ):
        t_out, k_out = run(torch_fw, t_model), run(tf_fw, k_model)
        t_tokens, k_tokens = torch_fw.numpy(t_out.tokens), tf_fw.numpy(k_out.tokens)
        np.testing.assert_array_equal(k_tokens, t_tokens, err_msg=f"{kind} {name}: tokens differ")
        assert_close(tf_fw.numpy(k_out.scores), torch_fw.numpy(t_out.scores), 1e-4, f"{kind} {name} scores")
        if heads is None:
            assert t_out.attention is None and k_out.attention is None
        else:
            assert torch_fw.numpy(t_out.attention).shape == (3, heads, t_tokens.shape[1], SRC.shape[1])
            assert_close(
                tf_fw.numpy(k_out.attention), torch_fw.numpy(t_out.attention), 1e-4, f"{kind} {name} attention"
            )


def test_trained_weights_decode_alike_across_frameworks(tmp_path):
    """A short PyTorch training run, its checkpoint's weights moved to TensorFlow: the same translations."""
    t_train, k_train = module("torch", "train"), module("tf", "train")
    tok, data = copy_data(n=200)
    cfg = tiny_config_dict(len(tok.vocab), dropout=0.0)
    t_train.set_seed(0)
    trainer = t_train.Trainer(
        t_train.build_model("transformer", cfg),
        "transformer",
        cfg,
        data,
        SCENARIO_CONFIG.replace(steps=20, lr_factor=0.5, log_every=10),
    )
    trainer.fit(checkpoint_path=str(tmp_path / "torch.npz"))
    t_model, _ = t_train.load_model(str(tmp_path / "torch.npz"))
    k_model = k_train.build_model("transformer", cfg)
    torch_to_tf(t_model, k_model)
    src = np.array([tok.encode("a b c d"), tok.encode("h g f e")])
    t_fw, k_fw = Framework("torch"), Framework("tf")
    for beam in (1, 3):
        t_out = module("torch", "decode").beam_search(t_model, t_fw.tensor(src), beam_size=beam, max_len=10)
        k_out = module("tf", "decode").beam_search(k_model, k_fw.tensor(src), beam_size=beam, max_len=10)
        np.testing.assert_array_equal(k_fw.numpy(k_out.tokens), t_fw.numpy(t_out.tokens))


@pytest.mark.parametrize("attention", [True, False])
def test_padding_a_gru_source_changes_nothing(fw, attention):
    """The source padding is masked out of Bahdanau attention (and out of the encoder's final state): a padded
    source decodes to the same logits as the same source alone, outside debug mode too (the mask is not a check)."""
    import txcourse

    if fw.name == "torch":
        torch.manual_seed(3)
    else:
        import keras

        keras.utils.set_random_seed(3)
    model = fw.eval(fw.module.Seq2Seq(_GRU, attention))
    alone = np.array([[5, 6, 7]])
    padded = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]])
    tgt = np.array([[1, 4, 5]])
    with txcourse.debug_checks(False):
        want = fw.numpy(model(fw.tensor(alone), fw.tensor(tgt)))
        got = fw.numpy(model(fw.tensor(padded), fw.tensor(np.repeat(tgt, 2, axis=0))))[:1]
    np.testing.assert_allclose(got, want, atol=1e-5)
