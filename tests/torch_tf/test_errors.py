"""Bad input raises ValueError naming the argument, what it got and what it expected, in both frameworks.

The layers' per-call checks (dtypes, widths, masks, caches, token ranges) run in debug mode only
(:func:`txcourse.debug_checks`): this module turns it on for every test, except where a test says otherwise.
"""

import numpy as np
import pytest
from conftest import small_config

import txcourse
from txcourse.config import Seq2SeqConfig, TransformerConfig


@pytest.fixture(autouse=True)
def _debug_checks():
    with txcourse.debug_checks():
        yield


def f32(*shape):
    return np.zeros(shape, np.float32)


def test_heads_must_divide_d_model(fw):
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by num_heads \(4\)"):
        fw.module.MultiHeadAttention(10, 4)


def test_query_and_key_widths_must_agree(fw):
    with pytest.raises(ValueError, match=r"query and key must have the same width d_k.*\(1, 3, 4\).*\(1, 5, 6\)"):
        fw.module.scaled_dot_product_attention(
            fw.tensor(f32(1, 3, 4)), fw.tensor(f32(1, 5, 6)), fw.tensor(f32(1, 5, 2))
        )


def test_key_and_value_lengths_must_agree(fw):
    with pytest.raises(ValueError, match=r"key and value must have the same length T_k.*\(5 != 4\)"):
        fw.module.scaled_dot_product_attention(
            fw.tensor(f32(1, 3, 4)), fw.tensor(f32(1, 5, 4)), fw.tensor(f32(1, 4, 2))
        )


def test_batch_dimensions_are_not_broadcast(fw):
    with pytest.raises(ValueError, match=r"same leading \(batch, head\) dimensions.*not broadcast"):
        fw.module.scaled_dot_product_attention(
            fw.tensor(f32(2, 3, 4)), fw.tensor(f32(1, 5, 4)), fw.tensor(f32(1, 5, 4))
        )


def test_mha_input_width_must_be_d_model(fw):
    mha = fw.module.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"key must have last dimension d_model=8, got shape \(2, 5, 6\)"):
        mha(fw.tensor(f32(2, 3, 8)), fw.tensor(f32(2, 5, 6)), fw.tensor(f32(2, 5, 8)))
    with pytest.raises(ValueError, match=r"query must have shape \(B, T, D\), got shape \(3, 8\)"):
        mha(fw.tensor(f32(3, 8)), fw.tensor(f32(2, 5, 8)), fw.tensor(f32(2, 5, 8)))


@pytest.mark.parametrize("mask_shape", [(2, 1, 1, 4), (1, 1, 3, 6), (4,), (2, 2, 1, 3, 5)])
def test_mask_must_broadcast_to_the_scores(fw, mask_shape):
    q, k = fw.tensor(f32(2, 2, 3, 4)), fw.tensor(f32(2, 2, 5, 4))
    with pytest.raises(ValueError, match=r"mask of shape .* (does not broadcast|has more dimensions)"):
        fw.module.scaled_dot_product_attention(q, k, k, fw.tensor(np.zeros(mask_shape, bool)))


def test_sequence_longer_than_max_len(fw):
    layer = fw.module.PositionalEncoding(max_len=6, d_model=4)
    with pytest.raises(ValueError, match=r"x has length 7, longer than max_len=6"):
        layer(fw.tensor(f32(1, 7, 4)))
    model = fw.eval(fw.module.Transformer(small_config(max_len=8)))
    with pytest.raises(ValueError, match=r"longer than max_len=8"):
        model(fw.tensor(np.ones((1, 9), np.int64)), fw.tensor(np.ones((1, 3), np.int64)))


@pytest.mark.parametrize("bad", [-1, 23, 100])
def test_token_ids_outside_the_vocabulary(fw, bad):
    cfg = small_config()  # src_vocab_size 23
    model = fw.eval(fw.module.Transformer(cfg))
    src = np.array([[3, 4, bad]])
    with pytest.raises(ValueError, match=rf"tokens holds token id {bad}, outside the vocabulary \[0, 23\)"):
        model(fw.tensor(src), fw.tensor(np.ones((1, 2), np.int64)))
    encoder = fw.module.Seq2SeqEncoder(Seq2SeqConfig(23, 23, embedding_dim=4, units=8))
    with pytest.raises(ValueError, match=rf"token id {bad}, outside the vocabulary \[0, 23\)"):
        encoder(fw.tensor(src))


def test_float_tokens_are_rejected(fw):
    emb = fw.module.TransformerEmbedding(TransformerConfig(src_vocab_size=10, d_model=8, num_heads=2, max_len=20))
    with pytest.raises(ValueError, match=r"tokens must hold integer token ids, got dtype float32"):
        emb(fw.tensor(f32(1, 3)))


def test_batch_sizes_of_source_and_target_must_agree(fw):
    model = fw.eval(fw.module.Transformer(small_config()))
    with pytest.raises(
        ValueError, match=r"src and tgt must have the same batch size, got src \(2, 4\) and tgt \(3, 2\)"
    ):
        model(fw.tensor(np.ones((2, 4), np.int64)), fw.tensor(np.ones((3, 2), np.int64)))


def test_layer_arguments_are_checked(fw):
    with pytest.raises(ValueError, match=r"^d_ff must be an integer >= 1, got 0"):
        fw.module.PositionwiseFeedForward(8, 0)
    with pytest.raises(ValueError, match=r"config must be a TransformerConfig, got int; build one"):
        fw.module.EncoderLayer(8)
    with pytest.raises(ValueError, match=r"^units must be an integer >= 1, got 0"):
        fw.module.BahdanauAttention(0)
    with pytest.raises(ValueError, match=r"length must be a positive integer, got 0"):
        fw.module.look_ahead_mask(0)
    with pytest.raises(ValueError, match=r"^offset must be an integer >= 0, got -5$"):
        fw.module.look_ahead_mask(3, offset=-5)
    with pytest.raises(ValueError, match=r"config must be a TransformerConfig, got dict"):
        fw.module.Transformer({"d_model": 8})


def test_bahdanau_shapes(fw):
    att = fw.module.BahdanauAttention(8)
    with pytest.raises(ValueError, match=r"values must have last dimension value_dim=8, got shape \(2, 5, 4\)"):
        att(fw.tensor(f32(2, 8)), fw.tensor(f32(2, 5, 4)))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 4\) does not broadcast"):
        att(fw.tensor(f32(2, 8)), fw.tensor(f32(2, 5, 8)), fw.tensor(np.zeros((2, 4), bool)))


def test_encoder_without_a_mask(fw):
    """Keras fills an argument named `mask` by itself; the encoder must still run without one."""
    cfg = small_config()
    encoder = fw.eval(fw.module.Encoder(cfg))
    out = encoder(fw.tensor(np.array([[1, 2, 3]])))
    assert tuple(out.shape) == (1, 3, cfg.d_model)


def test_without_debug_mode_a_layer_reads_no_token_values(fw):
    """Off by default: the range of token ids is not read inside a forward (a device-to-host copy per call); the
    dtype and rank still are (free). Where decoding's input enters, the range is read once."""
    cfg = small_config()  # src_vocab_size 23
    model = fw.eval(fw.module.Transformer(cfg))
    with txcourse.debug_checks(False):
        with pytest.raises(ValueError, match=r"tokens must hold integer token ids, got dtype float32"):
            model.encoder.embedding(fw.tensor(np.ones((1, 3), np.float32)))
        with pytest.raises(ValueError, match=r"src must have shape \(B, T_src\)"):
            model(fw.tensor(np.ones((3,), np.int64)), fw.tensor(np.ones((1, 2), np.int64)))
        with pytest.raises(ValueError, match=r"src holds token id 30, outside the vocabulary \[0, 23\)"):
            model.start_decoding(fw.tensor(np.array([[3, 30]])))
        with pytest.raises(ValueError, match=r"tokens holds token id 30, outside the vocabulary \[0, 23\)"):
            with txcourse.debug_checks():  # nested: on again
                model.encoder.embedding(fw.tensor(np.array([[3, 30]])))


def test_debug_mode_follows_the_environment(monkeypatch):
    from txcourse._validation import debugging

    with txcourse.debug_checks(False):
        assert not debugging()
    monkeypatch.setenv("TXCOURSE_DEBUG", "1")
    with txcourse.debug_checks(None):  # None: as the environment says
        assert debugging()
    monkeypatch.setenv("TXCOURSE_DEBUG", "0")
    with txcourse.debug_checks(None):
        assert not debugging()
