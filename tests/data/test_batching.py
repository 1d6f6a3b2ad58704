"""Padding, teacher-forcing offsets, length bucketing and per-epoch shuffling."""

import numpy as np
import pytest

from txcourse.data import (
    EOS_ID,
    PAD_ID,
    SOS_ID,
    Batch,
    CharTokenizer,
    WordTokenizer,
    encode_pairs,
    get_task,
    iterate_batches,
    make_batches,
    pad_sequences,
)


@pytest.fixture(scope="module")
def data():
    splits = get_task("numbers", sizes=(400, 20, 40), seed=0)
    src_tok = WordTokenizer.fit([s for s, _ in splits.train])
    tgt_tok = CharTokenizer.fit([t for _, t in splits.train])
    return splits, src_tok, tgt_tok, encode_pairs(splits.train, src_tok, tgt_tok)


def test_pad_sequences():
    padded, lengths = pad_sequences([[5, 6, 7], [8], []], pad_id=0)
    assert padded.dtype == np.int64 and padded.tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert lengths.tolist() == [3, 1, 0]


def test_batch_contents_padding_and_offset(data):
    splits, src_tok, tgt_tok, enc = data
    batches = make_batches(enc, batch_size=32, seed=0)
    for b in batches:
        assert isinstance(b, Batch)
        for arr in (b.src, b.tgt_in, b.tgt_out, b.src_lengths, b.tgt_lengths, b.indices):
            assert arr.dtype == np.int64
        assert b.src.shape[0] == b.tgt_in.shape[0] == len(b) <= 32
        assert b.tgt_in.shape == b.tgt_out.shape
        assert b.src.shape[1] == b.src_lengths.max() and b.tgt_in.shape[1] == b.tgt_lengths.max()
        for row, idx in enumerate(b.indices):
            src, tgt = splits.train[idx]
            ns, nt = b.src_lengths[row], b.tgt_lengths[row]
            # real tokens first, then only padding
            assert b.src[row, :ns].tolist() == src_tok.encode(src)
            assert (b.src[row, ns:] == PAD_ID).all() and (b.src[row, :ns] != PAD_ID).all()
            tgt_ids = tgt_tok.encode(tgt)
            assert nt == len(tgt_ids) + 1
            assert b.tgt_in[row, :nt].tolist() == [SOS_ID] + tgt_ids
            assert b.tgt_out[row, :nt].tolist() == tgt_ids + [EOS_ID]
            assert (b.tgt_in[row, nt:] == PAD_ID).all() and (b.tgt_out[row, nt:] == PAD_ID).all()
            # shifted by one: the decoder input at t+1 is the label at t
            assert (b.tgt_in[row, 1:nt] == b.tgt_out[row, : nt - 1]).all()
            assert tgt_tok.decode(b.tgt_out[row]) == tgt


@pytest.mark.parametrize(
    "kwargs",
    [dict(batch_size=32), dict(max_tokens=300), dict(batch_size=7, bucket=False), dict(batch_size=16, bucket_size=64)],
)
def test_every_example_exactly_once_per_epoch(data, kwargs):
    enc = data[3]
    for epoch in range(3):
        seen = np.concatenate([b.indices for b in iterate_batches(enc, epoch=epoch, **kwargs)])
        assert sorted(seen.tolist()) == list(range(len(enc)))


def test_max_tokens_bounds_padded_size(data):
    enc = data[3]
    batches = make_batches(enc, max_tokens=300, seed=1)
    for b in batches:
        assert len(b) * max(b.src.shape[1], b.tgt_in.shape[1]) <= 300
    with pytest.raises(ValueError, match=r"needs \d+ tokens, more than max_tokens=10"):
        make_batches(enc, max_tokens=10)


def test_deterministic_and_reshuffled_per_epoch(data):
    enc = data[3]

    def order(**kw):
        return [b.indices.tolist() for b in iterate_batches(enc, batch_size=32, **kw)]

    assert order(seed=0, epoch=0) == order(seed=0, epoch=0)
    assert order(seed=0, epoch=0) != order(seed=0, epoch=1)
    assert order(seed=0, epoch=0) != order(seed=1, epoch=0)
    plain = [b.indices.tolist() for b in make_batches(enc, batch_size=32, shuffle=False, bucket=False)]
    assert sum(plain, []) == list(range(len(enc)))


def test_bucketing_reduces_padding(data):
    enc = data[3]

    def pad_fraction(batches):
        total = sum(b.tgt_in.size for b in batches)
        return sum((b.tgt_in == PAD_ID).sum() for b in batches) / total

    bucketed = pad_fraction(make_batches(enc, batch_size=32, bucket=True, seed=0))
    unsorted = pad_fraction(make_batches(enc, batch_size=32, bucket=False, seed=0))
    assert bucketed < unsorted / 2


def test_encode_pairs_max_len_error_or_drop():
    tok = CharTokenizer.fit(["abcdef"])
    pairs = [("ab", "a"), ("abcdef", "b"), ("a", "abcdef")]
    with pytest.raises(
        ValueError,
        match=r"pairs\[1\] is longer than max_len=4: source 6 tokens"
        r".*drop_long=True",
    ):
        encode_pairs(pairs, tok, tok, max_len=4)
    enc = encode_pairs(pairs, tok, tok, max_len=4, drop_long=True)
    assert enc.indices.tolist() == [0]
    assert enc.src[0].tolist() == tok.encode("ab")  # kept whole, never truncated
    batch = make_batches(enc, batch_size=4)[0]
    assert batch.indices.tolist() == [0]


def test_encode_pairs_and_batching_argument_errors():
    tok = CharTokenizer.fit(["ab"])
    with pytest.raises(ValueError, match=r"pairs\[0\] has a source that encodes to no tokens"):
        encode_pairs([("", "a")], tok, tok)
    with pytest.raises(ValueError, match=r"pairs\[1\] must be a \(src, tgt\) pair of strings"):
        encode_pairs([("a", "b"), ("a",)], tok, tok)
    enc = encode_pairs([("a", "b")], tok, tok)
    with pytest.raises(ValueError, match="give batch_size .* max_tokens .* or both; got neither"):
        make_batches(enc)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1, got 0"):
        make_batches(enc, batch_size=0)
    with pytest.raises(ValueError, match="epoch must be an integer >= 0, got -1"):
        iterate_batches(enc, batch_size=1, epoch=-1)
    with pytest.raises(ValueError, match="encoded must be the EncodedPairs"):
        make_batches([("a", "b")], batch_size=1)
