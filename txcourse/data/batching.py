"""From string pairs to padded numpy batches, grouped by length.

Pipeline::

    pairs --encode_pairs--> EncodedPairs --make_batches / iterate_batches--> Batch, Batch, ...

A :class:`Batch` holds int64 numpy arrays, padded with ``pad_id`` (0) after
each sequence. Both frameworks take them as they are
(``torch.from_numpy(batch.src)``, ``tf.constant(batch.src)``).

Teacher forcing: the decoder reads ``tgt_in`` (``<sos>`` + target) and is
trained to predict ``tgt_out`` (target + ``<eos>``), the same sequence
shifted left by one::

    target    "hola mundo"  -> ids [7, 9]
    tgt_in    [1, 7, 9]      (<sos> hola mundo)
    tgt_out   [7, 9, 2]      (hola mundo <eos>)

Example:
    >>> from txcourse.data.char_word import CharTokenizer
    >>> tok = CharTokenizer.fit(["ab", "ba", "abc"])
    >>> enc = encode_pairs([("ab", "ba"), ("abc", "c")], tok, tok)
    >>> b = make_batches(enc, batch_size=2, shuffle=False)[0]
    >>> b.src.tolist(), b.tgt_in.tolist(), b.tgt_out.tolist()
    ([[4, 5, 0], [4, 5, 6]], [[1, 5, 4], [1, 6, 0]], [[5, 4, 2], [6, 2, 0]])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from txcourse.data._checks import check_int, is_int
from txcourse.errors import TxcourseError

__all__ = ["Batch", "EncodedPairs", "pad_sequences", "encode_pairs", "make_batches", "iterate_batches"]


@dataclass
class Batch:
    """One padded batch of B examples (all arrays are numpy int64).

    Attributes:
        src: (B, T_src) source ids, ``pad_id`` after each sequence.
        tgt_in: (B, T_tgt) decoder input, ``<sos>`` + target ids.
        tgt_out: (B, T_tgt) decoder labels, target ids + ``<eos>``.
        src_lengths: (B,) number of real tokens in each ``src`` row.
        tgt_lengths: (B,) number of real tokens in each ``tgt_in``/``tgt_out`` row
            (target length + 1).
        indices: (B,) index of each example in the ``pairs`` given to
            :func:`encode_pairs`.
        pad_id: the padding id.
    """

    src: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray
    src_lengths: np.ndarray
    tgt_lengths: np.ndarray
    indices: np.ndarray
    pad_id: int = 0

    def __len__(self) -> int:
        return int(self.src.shape[0])

    @property
    def num_tokens(self) -> int:
        """Real (non-pad) target tokens, the usual normaliser of the loss."""
        return int(self.tgt_lengths.sum())


@dataclass
class EncodedPairs:
    """Token ids of a list of pairs, before padding.

    Attributes:
        src: one int64 array of source ids per example (no special tokens).
        tgt: one int64 array of target ids per example (no special tokens;
            batching adds ``<sos>``/``<eos>``).
        indices: (N,) position of each example in the original ``pairs``
            (differs from ``arange(N)`` when ``drop_long`` dropped some).
        pad_id, sos_id, eos_id: special ids of the target tokenizer.
    """

    src: list[np.ndarray]
    tgt: list[np.ndarray]
    indices: np.ndarray
    pad_id: int = 0
    sos_id: int = 1
    eos_id: int = 2

    def __len__(self) -> int:
        return len(self.src)

    @property
    def src_lengths(self) -> np.ndarray:
        """(N,) source lengths."""
        return np.array([len(s) for s in self.src], dtype=np.int64)

    @property
    def tgt_lengths(self) -> np.ndarray:
        """(N,) decoder lengths (target length + 1 for ``<sos>``/``<eos>``)."""
        return np.array([len(t) + 1 for t in self.tgt], dtype=np.int64)


def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Stack sequences into one right-padded int64 matrix.

    Args:
        seqs: N sequences of token ids.
        pad_id: value written after each sequence.

    Returns:
        ``(padded, lengths)``: (N, max length) int64 matrix and (N,) lengths.

    Example:
        >>> pad_sequences([[5, 6, 7], [8]])[0].tolist()
        [[5, 6, 7], [8, 0, 0]]
    """
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    width = int(lengths.max()) if len(seqs) else 0
    out = np.full((len(seqs), width), pad_id, dtype=np.int64)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = seq
    return out, lengths


def _check_encoding_args(src_tok, tgt_tok, max_len, drop_long) -> int | None:
    """:func:`encode_pairs`'s arguments other than the pairs, checked; ``max_len`` to use."""
    if max_len is not None:
        max_len = check_int("max_len", max_len, minimum=2)
    if not isinstance(drop_long, bool):
        raise TxcourseError(f"drop_long must be True or False, got {drop_long!r}", "drop_long")
    for name, tok in (("src_tok", src_tok), ("tgt_tok", tgt_tok)):
        if not (hasattr(tok, "encode") and hasattr(tok, "pad_id")):
            raise TxcourseError(
                f"{name} must be a tokenizer with encode() and pad_id "
                f"(e.g. txcourse.data.CharTokenizer), got {type(tok).__name__}"
            )
    if src_tok.pad_id != tgt_tok.pad_id:
        raise TxcourseError(f"src_tok and tgt_tok must share the pad id, got {src_tok.pad_id} and {tgt_tok.pad_id}")
    return max_len


def encode_pairs(
    pairs: Sequence[tuple[str, str]], src_tok, tgt_tok, max_len: int | None = None, drop_long: bool = False
) -> EncodedPairs:
    """Tokenize (source, target) string pairs.

    Args:
        pairs: list of ``(src, tgt)`` strings.
        src_tok, tgt_tok: tokenizers (see :mod:`txcourse.data.vocab`); may be the same.
        max_len: longest allowed source length and decoder length (target + 1),
            in tokens; ``None`` for no limit. Nothing is ever truncated.
        drop_long: if True, skip pairs longer than ``max_len`` (their original
            positions are absent from ``indices``); if False (default), raise.

    Returns:
        :class:`EncodedPairs`.

    Raises:
        ValueError: a pair is longer than ``max_len`` (and ``drop_long`` is
            False), a source encodes to no tokens, or a pair is not two strings.

    Example:
        >>> from txcourse.data.char_word import CharTokenizer
        >>> tok = CharTokenizer.fit(["abc"])
        >>> enc = encode_pairs([("abc", "a"), ("a", "b")], tok, tok, max_len=2, drop_long=True)
        >>> enc.indices.tolist()
        [1]
    """
    max_len = _check_encoding_args(src_tok, tgt_tok, max_len, drop_long)
    src_ids, tgt_ids, kept = [], [], []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise TxcourseError(f"pairs[{i}] must be a (src, tgt) pair of strings, got {pair!r}", "pairs")
        s = np.asarray(src_tok.encode(pair[0]), dtype=np.int64)
        t = np.asarray(tgt_tok.encode(pair[1]), dtype=np.int64)
        if len(s) == 0:
            raise TxcourseError(
                f"pairs[{i}] has a source that encodes to no tokens: {pair[0]!r}; "
                f"remove empty sources (an all-padding row has nothing to attend to)"
            )
        if max_len is not None and (len(s) > max_len or len(t) + 1 > max_len):
            if drop_long:
                continue
            raise TxcourseError(
                f"pairs[{i}] is longer than max_len={max_len}: source {len(s)} "
                f"tokens, target {len(t)} + 1 tokens; raise max_len or pass "
                f"drop_long=True to skip such pairs (nothing is truncated)"
            )
        src_ids.append(s)
        tgt_ids.append(t)
        kept.append(i)
    return EncodedPairs(
        src=src_ids,
        tgt=tgt_ids,
        indices=np.array(kept, dtype=np.int64),
        pad_id=tgt_tok.pad_id,
        sos_id=tgt_tok.sos_id,
        eos_id=tgt_tok.eos_id,
    )


def _collate(encoded: EncodedPairs, rows: np.ndarray) -> Batch:
    src, src_len = pad_sequences([encoded.src[r] for r in rows], encoded.pad_id)
    tgt_in, tgt_len = pad_sequences([np.concatenate([[encoded.sos_id], encoded.tgt[r]]) for r in rows], encoded.pad_id)
    tgt_out, _ = pad_sequences([np.concatenate([encoded.tgt[r], [encoded.eos_id]]) for r in rows], encoded.pad_id)
    return Batch(
        src=src,
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        src_lengths=src_len,
        tgt_lengths=tgt_len,
        indices=encoded.indices[rows].copy(),
        pad_id=encoded.pad_id,
    )


def _check_batching_args(encoded, batch_size, max_tokens, seed, epoch, bucket_size) -> None:
    if not isinstance(encoded, EncodedPairs):
        raise TxcourseError(
            f"encoded must be the EncodedPairs returned by encode_pairs(), got {type(encoded).__name__}", "encoded"
        )
    if batch_size is None and max_tokens is None:
        raise TxcourseError(
            "give batch_size (examples per batch), max_tokens (padded tokens per batch) or both; got neither"
        )
    if batch_size is not None:
        check_int("batch_size", batch_size, minimum=1)
    if max_tokens is not None:
        check_int("max_tokens", max_tokens, minimum=1)
    if bucket_size is not None:
        check_int("bucket_size", bucket_size, minimum=1)
    if not is_int(seed):
        raise TxcourseError(f"seed must be an integer, got {seed!r}", "seed")
    check_int("epoch", epoch, minimum=0)


def _batch_rows(
    encoded: EncodedPairs,
    batch_size: int | None,
    max_tokens: int | None,
    shuffle: bool,
    seed: int,
    bucket: bool,
    epoch: int,
    bucket_size: int | None,
) -> list[np.ndarray]:
    """The example rows of each batch, in the order the batches are served."""
    n = len(encoded)
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(n) if shuffle else np.arange(n)
    src_len, tgt_len = encoded.src_lengths, encoded.tgt_lengths
    if bucket and n:
        size = bucket_size or n
        chunks = []
        for start in range(0, n, size):
            chunk = order[start : start + size]
            # stable sort by (source length, target length): ties keep the shuffled order
            chunks.append(chunk[np.lexsort((tgt_len[chunk], src_len[chunk]))])
        order = np.concatenate(chunks)
    batches: list[np.ndarray] = []
    current: list[int] = []
    width = 0
    for row in order.tolist():
        row_width = max(int(src_len[row]), int(tgt_len[row]))
        if max_tokens is not None and row_width > max_tokens:
            raise TxcourseError(
                f"example {int(encoded.indices[row])} needs {row_width} tokens, more "
                f"than max_tokens={max_tokens} allows for a single example; raise "
                f"max_tokens or drop long pairs with encode_pairs(max_len=...)"
            )
        new_width = max(width, row_width)
        full = (batch_size is not None and len(current) >= batch_size) or (
            max_tokens is not None and (len(current) + 1) * new_width > max_tokens
        )
        if current and full:
            batches.append(np.array(current, dtype=np.int64))
            current, new_width = [], row_width
        current.append(row)
        width = new_width
    if current:
        batches.append(np.array(current, dtype=np.int64))
    if shuffle and bucket:  # sorted batches would otherwise come shortest first
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def iterate_batches(
    encoded: EncodedPairs,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    shuffle: bool = True,
    seed: int = 0,
    bucket: bool = True,
    epoch: int = 0,
    bucket_size: int | None = None,
) -> Iterator[Batch]:
    """Yield the batches of one epoch, each example exactly once.

    The order depends only on ``(seed, epoch)``: the same call gives the same
    batches, and each epoch is reshuffled differently.

    Args:
        encoded: the output of :func:`encode_pairs`.
        batch_size: at most this many examples per batch.
        max_tokens: at most this many padded tokens per batch, counted as
            ``B * max(T_src, T_tgt)``; give it, ``batch_size``, or both.
        shuffle: shuffle examples (and, with ``bucket``, the batch order).
        seed: random seed.
        bucket: group examples of similar length: within each bucket of
            ``bucket_size`` (shuffled) examples, sort by length before cutting
            batches, so batches carry little padding.
        epoch: epoch number (>= 0), mixed with ``seed`` for the shuffle.
        bucket_size: examples per bucket; ``None`` sorts the whole epoch at once.

    Yields:
        :class:`Batch` objects.

    Example:
        >>> for epoch in range(3):                                   # doctest: +SKIP
        ...     for batch in iterate_batches(enc, batch_size=64, epoch=epoch):
        ...         loss = train_step(batch.src, batch.tgt_in, batch.tgt_out)
    """
    _check_batching_args(encoded, batch_size, max_tokens, seed, epoch, bucket_size)
    # The batch plan is made (and checked) now; the padded arrays are built lazily.
    plan = _batch_rows(encoded, batch_size, max_tokens, bool(shuffle), int(seed), bool(bucket), int(epoch), bucket_size)
    return (_collate(encoded, rows) for rows in plan)


def make_batches(
    encoded: EncodedPairs,
    batch_size: int | None = None,
    max_tokens: int | None = None,
    shuffle: bool = True,
    seed: int = 0,
    bucket: bool = True,
    epoch: int = 0,
    bucket_size: int | None = None,
) -> list[Batch]:
    """All batches of one epoch as a list (see :func:`iterate_batches` for the arguments).

    Returns:
        List of :class:`Batch`; every example appears in exactly one.

    Example:
        >>> from txcourse.data.char_word import CharTokenizer
        >>> tok = CharTokenizer.fit(["abc"])
        >>> enc = encode_pairs([("a", "b"), ("abc", "c"), ("ab", "a")], tok, tok)
        >>> [b.indices.tolist() for b in make_batches(enc, batch_size=2, shuffle=False)]
        [[0, 2], [1]]
    """
    return list(
        iterate_batches(
            encoded,
            batch_size=batch_size,
            max_tokens=max_tokens,
            shuffle=shuffle,
            seed=seed,
            bucket=bucket,
            epoch=epoch,
            bucket_size=bucket_size,
        )
    )
