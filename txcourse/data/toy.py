"""Toy tasks: copy a sequence of symbols, or reverse it.

Sources are symbols joined by spaces (``"q c c x"``); the ``copy`` target is
the same string, the ``reverse`` target the symbols in reverse order. They
are the smallest sanity checks of a sequence-to-sequence model: a working
Transformer learns ``copy`` in minutes.

Splits are disjoint by source sequence. Train and valid lengths lie in
``[min_len, max_len]``; with ``long_test_fraction > 0`` part of the test
split is longer, ``max_len + 1`` to ``long_max_len`` symbols, to measure
length generalisation, as in :func:`txcourse.data.numbers.make_numbers_task`.
Lengths are spread evenly over their range (then symbols drawn uniformly).

Example:
    >>> s = make_reverse_task(min_len=2, max_len=4, sizes=(3, 1, 1), seed=0)
    >>> src, tgt = s.train[0]
    >>> tgt == " ".join(reversed(src.split()))
    True
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence

import numpy as np

from txcourse.data._checks import check_fraction, check_int, is_int
from txcourse.data.splits import TranslationSplits, check_sizes
from txcourse.errors import TxcourseError

__all__ = ["LETTERS", "make_copy_task", "make_reverse_task"]

LETTERS = tuple(string.ascii_lowercase)  # default vocabulary: a..z

_ENUMERATE_LIMIT = 1_000_000  # per length, sample by index when V**L is at most this


def _check_vocab(vocab) -> tuple[str, ...]:
    if not isinstance(vocab, Sequence):  # a str counts: "abc" means ('a', 'b', 'c')
        raise TxcourseError(
            f"vocab must be a sequence of symbol strings such as ('a', 'b', 'c') or 'abc', got {vocab!r}", "vocab"
        )
    vocab = tuple(vocab)
    for i, sym in enumerate(vocab):
        if not isinstance(sym, str) or not sym or any(ch.isspace() for ch in sym):
            raise TxcourseError(f"vocab[{i}] must be a non-empty string without whitespace, got {sym!r}", "vocab")
    if len(set(vocab)) != len(vocab):
        raise TxcourseError(f"vocab must hold distinct symbols, got {vocab!r}", "vocab")
    if not vocab:
        raise TxcourseError("vocab is empty: need at least one symbol", "vocab")
    return vocab


def _allocate(total: int, capacities: list[int], rng: np.random.Generator) -> list[int]:
    """Spread ``total`` over lengths as evenly as their capacities allow."""
    counts = [0] * len(capacities)
    open_ = [i for i, c in enumerate(capacities) if c > 0]
    remaining = total
    while remaining and open_:
        share, extra = divmod(remaining, len(open_))
        lucky = set(rng.permutation(open_)[:extra].tolist()) if extra else set()
        for i in open_:
            give = min(share + (i in lucky), capacities[i] - counts[i])
            counts[i] += give
            remaining -= give
        open_ = [i for i in open_ if counts[i] < capacities[i]]
    return counts


def _sample_sequences(rng: np.random.Generator, vocab_size: int, lengths: range, total: int) -> list[tuple[int, ...]]:
    """``total`` distinct symbol-index sequences, lengths spread evenly over ``lengths``."""
    caps = [min(vocab_size**length, 2**62) for length in lengths]
    counts = _allocate(total, caps, rng)
    out: list[tuple[int, ...]] = []
    for length, cap, count in zip(lengths, caps, counts):
        if not count:
            continue
        if cap <= _ENUMERATE_LIMIT:  # small space: draw distinct indices, write them in base V
            codes = rng.choice(cap, size=count, replace=False)
            digits = (codes[:, None] // vocab_size ** np.arange(length - 1, -1, -1)) % vocab_size
            out.extend(tuple(row) for row in digits.tolist())
        else:  # huge space: draw and reject the (rare) repeats
            seen: set[tuple[int, ...]] = set()
            while len(seen) < count:
                seq = tuple(rng.integers(0, vocab_size, size=length).tolist())
                if seq not in seen:
                    seen.add(seq)
                    out.append(seq)
    return [out[i] for i in rng.permutation(len(out))]


def _check_enough(sizes, v: int, wanted) -> None:
    """Enough distinct sequences of each length range: ``wanted`` holds (lengths, how many, the range's name)."""
    for lengths, need, what in wanted:
        available = sum(min(v**length, 2**62) for length in lengths)
        if need > available:
            raise TxcourseError(
                f"sizes={tuple(sizes)} need {need} distinct sequences of length {what} "
                f"({lengths.start}..{lengths.stop - 1}) over a vocabulary of {v} symbols, "
                f"but only {available} exist; lower sizes or use longer sequences / more symbols",
                "sizes",
            )


def _symbol_pairs(seqs, vocab: tuple[str, ...], reverse: bool) -> list[tuple[str, str]]:
    """(source, target) of each sequence of symbol ids: the symbols, and the same symbols (reversed)."""
    out = []
    for seq in seqs:
        symbols = [vocab[i] for i in seq]
        target = symbols[::-1] if reverse else symbols
        out.append((" ".join(symbols), " ".join(target)))
    return out


def _make_symbol_task(
    name: str, reverse: bool, vocab, min_len, max_len, sizes, seed, long_test_fraction, long_max_len
) -> TranslationSplits:
    vocab = _check_vocab(vocab)
    min_len = check_int("min_len", min_len, minimum=1)
    max_len = check_int("max_len", max_len, minimum=1)
    if min_len > max_len:
        raise TxcourseError(f"min_len must be <= max_len, got min_len={min_len}, max_len={max_len}", "min_len")
    n_train, n_valid, n_test = check_sizes(sizes)
    if not is_int(seed):
        raise TxcourseError(f"seed must be an integer, got {seed!r}", "seed")
    long_test_fraction = check_fraction("long_test_fraction", long_test_fraction)
    if long_max_len is None:
        long_max_len = 2 * max_len
    long_max_len = check_int("long_max_len", long_max_len, minimum=1)
    n_long = int(round(n_test * long_test_fraction))
    if n_long and long_max_len <= max_len:
        raise TxcourseError(
            f"long_max_len must be > max_len={max_len} when long_test_fraction > 0, got long_max_len={long_max_len}"
        )

    v = len(vocab)
    short_lengths = range(min_len, max_len + 1)
    long_lengths = range(max_len + 1, long_max_len + 1)
    n_short = n_train + n_valid + n_test - n_long
    _check_enough(
        sizes, v, ((short_lengths, n_short, "min_len..max_len"), (long_lengths, n_long, "max_len+1..long_max_len"))
    )

    rng = np.random.default_rng(seed)
    short = _sample_sequences(rng, v, short_lengths, n_short)
    long = _sample_sequences(rng, v, long_lengths, n_long) if n_long else []
    test = short[n_train + n_valid :] + long
    test = [test[i] for i in rng.permutation(len(test))]

    pairs = functools.partial(_symbol_pairs, vocab=vocab, reverse=reverse)
    return TranslationSplits(
        train=pairs(short[:n_train]),
        valid=pairs(short[n_train : n_train + n_valid]),
        test=pairs(test),
        metadata={
            "task": name,
            "vocab": vocab,
            "min_len": min_len,
            "max_len": max_len,
            "sizes": (n_train, n_valid, n_test),
            "seed": int(seed),
            "long_test_fraction": long_test_fraction,
            "long_max_len": long_max_len,
            "test_is_long": [len(seq) > max_len for seq in test],
        },
    )


def make_copy_task(
    vocab: Sequence[str] = LETTERS,
    min_len: int = 1,
    max_len: int = 10,
    sizes: tuple[int, int, int] = (10000, 500, 1000),
    seed: int = 0,
    long_test_fraction: float = 0.0,
    long_max_len: int | None = None,
) -> TranslationSplits:
    """The copy task: the target is the source.

    Args:
        vocab: the symbols (non-empty strings without whitespace); a string
            means its characters.
        min_len, max_len: length range of train/valid sequences, in symbols.
        sizes: number of pairs in (train, valid, test).
        seed: random seed; the same arguments give the same splits.
        long_test_fraction: share of test with lengths ``max_len+1..long_max_len``.
        long_max_len: longest long test sequence (default ``2 * max_len``).

    Returns:
        :class:`TranslationSplits` of ``(src, src)`` pairs, disjoint by source.

    Example:
        >>> make_copy_task(vocab="ab", min_len=3, max_len=3, sizes=(2, 0, 0)).train
        [('b b b', 'b b b'), ('b a b', 'b a b')]
    """
    return _make_symbol_task("copy", False, vocab, min_len, max_len, sizes, seed, long_test_fraction, long_max_len)


def make_reverse_task(
    vocab: Sequence[str] = LETTERS,
    min_len: int = 1,
    max_len: int = 10,
    sizes: tuple[int, int, int] = (10000, 500, 1000),
    seed: int = 0,
    long_test_fraction: float = 0.0,
    long_max_len: int | None = None,
) -> TranslationSplits:
    """The reverse task: the target is the source's symbols in reverse order.

    Args:
        Same as :func:`make_copy_task`.

    Returns:
        :class:`TranslationSplits` of ``(src, reversed src)`` pairs, disjoint by source.

    Example:
        >>> s = make_reverse_task(sizes=(1, 0, 0), min_len=3, max_len=3, seed=0)
        >>> src, tgt = s.train[0]
        >>> tgt.split() == src.split()[::-1]
        True
    """
    return _make_symbol_task("reverse", True, vocab, min_len, max_len, sizes, seed, long_test_fraction, long_max_len)
