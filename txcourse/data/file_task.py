"""The ``file`` task: your own parallel corpus, read from a tab-separated (or Anki) file.

``txcourse train --task file --data PATH`` trains on it (book: chapter "Tokens", section "Your own
corpus"). Each line of the file is ``source<TAB>target[<TAB>anything]`` (:func:`~txcourse.data.corpora.load_tsv`,
the format of the Anki/manythings.org files of notes 002). The pairs are shuffled with ``seed`` and cut into
train / valid / test by ``fractions``, so the same file and arguments always give the same splits.

The task also says how its text becomes tokens (``tokens``, ``vocab_size``, ``shared_vocab``), and records the
file's absolute path and SHA-256 in :attr:`TranslationSplits.metadata` under ``"task_kwargs"``: a checkpoint
stores those arguments, so ``txcourse evaluate`` rebuilds the same test split, and refuses a file that changed.

Example:
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv"
    >>> _ = p.write_text("".join(f"{i} apples\\t{i} manzanas\\n" for i in range(10)), encoding="utf-8")
    >>> s = make_file_task(p, tokens="char")
    >>> len(s.train), len(s.valid), len(s.test)
    (8, 1, 1)
    >>> src_tok, tgt_tok = file_tokenizers(s)
    >>> src_tok is tgt_tok     # shared_vocab=True: one vocabulary for both sides
    True
"""

from __future__ import annotations

import hashlib
import math
import numbers
import random
from pathlib import Path
from typing import Any

from txcourse.data._checks import check_int
from txcourse.data.bpe import BPETokenizer
from txcourse.data.char_word import CharTokenizer
from txcourse.data.corpora import load_tsv
from txcourse.data.splits import SPLIT_NAMES, Pair, TranslationSplits
from txcourse.data.vocab import SPECIAL_TOKENS, Tokenizer
from txcourse.errors import TxcourseError

__all__ = ["TOKENS", "make_file_task", "split_pairs", "file_tokenizers", "file_sha256"]

TOKENS = ("bpe", "char")  # how the file's text becomes tokens: subwords (BPE) or characters


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hexadecimal (what a checkpoint records of its training file)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_pairs(path: Path, max_pairs: int | None) -> list[tuple[str, str]]:
    """The file's pairs (:func:`load_tsv`); an empty file is refused, naming ``path``."""
    pairs = load_tsv(path, max_pairs=max_pairs)
    if not pairs:
        raise TxcourseError(f"file {str(path)!r} holds no pairs: it is empty; expected source<TAB>target lines", "path")
    return pairs


def make_file_task(
    path: str | Path,
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
    tokens: str = "bpe",
    vocab_size: int = 8000,
    shared_vocab: bool = True,
    min_frequency: int = 2,
    max_pairs: int | None = None,
    sha256: str | None = None,
) -> TranslationSplits:
    """The splits of the pairs in a tab-separated file.

    Args:
        path: the file: ``source<TAB>target[<TAB>anything]`` lines, UTF-8; empty lines and the
            ``#key:value`` header of an Anki export are skipped.
        fractions: shares of (train, valid, test); they sum to 1. A split with a share above 0
            gets at least one pair.
        seed: the shuffle before the cut; the same file and seed give the same splits.
        tokens: ``"bpe"`` (subwords, Sennrich et al. 2016) or ``"char"`` (characters), read by
            :func:`file_tokenizers`.
        vocab_size: BPE: the vocabulary size to reach, special tokens and alphabet included
            (smaller if the training split runs out of pairs to merge).
        shared_vocab: one vocabulary for source and target, trained on both sides (Sec. 5.1 of
            Vaswani et al. 2017: a shared source-target BPE vocabulary of about 37000 tokens for EN-DE).
        min_frequency: BPE: a pair of symbols is merged only if seen at least this often.
        max_pairs: read only the first this many pairs of the file (default: all).
        sha256: the file's expected SHA-256; a checkpoint passes the one it was trained on, so a
            changed file is refused rather than split differently.

    Returns:
        :class:`~txcourse.data.splits.TranslationSplits`; ``metadata["task_kwargs"]`` holds the
        arguments that rebuild it (the absolute path and the file's SHA-256 included).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        IsADirectoryError: ``path`` is a folder.
        ValueError: a line without a tab (the message names the line), an empty file, too few pairs
            for the splits, a file that does not match ``sha256``, or a bad argument.
    """
    fractions, seed, vocab_size, min_frequency, max_pairs = _check_file_task_args(
        fractions, seed, tokens, vocab_size, shared_vocab, min_frequency, max_pairs
    )
    path, digest = _checked_file(path, sha256)
    pairs = _read_pairs(path, max_pairs)
    train, valid, test = split_pairs(pairs, fractions, seed)
    task_kwargs = dict(
        path=str(path),
        fractions=list(fractions),
        seed=seed,
        tokens=tokens,
        vocab_size=vocab_size,
        shared_vocab=shared_vocab,
        min_frequency=min_frequency,
        max_pairs=max_pairs,
        sha256=digest,
    )
    metadata: dict[str, Any] = {"task": "file", "pairs": len(pairs), **task_kwargs, "task_kwargs": task_kwargs}
    return TranslationSplits(train, valid, test, metadata)


def _check_file_task_args(fractions, seed, tokens, vocab_size, shared_vocab, min_frequency, max_pairs) -> tuple:
    """:func:`make_file_task`'s arguments other than the file, checked: (fractions, seed, vocab_size,
    min_frequency, max_pairs) to use; each error names its argument."""
    fractions = _check_fractions(fractions)
    seed = _check_int("seed", seed, minimum=0)
    if tokens not in TOKENS:
        raise TxcourseError(f"tokens must be one of {list(TOKENS)}, got {tokens!r}", "tokens")
    vocab_size = _check_int("vocab_size", vocab_size, minimum=len(SPECIAL_TOKENS) + 1)
    if not isinstance(shared_vocab, bool):
        raise TxcourseError(f"shared_vocab must be True or False, got {shared_vocab!r}", "shared_vocab")
    min_frequency = _check_int("min_frequency", min_frequency, minimum=1)
    if max_pairs is not None:
        max_pairs = _check_int("max_pairs", max_pairs, minimum=1)
    return fractions, seed, vocab_size, min_frequency, max_pairs


def _checked_file(path, sha256: str | None) -> tuple[Path, str]:
    """The file's absolute path and SHA-256; it exists, and matches ``sha256`` when given."""
    if not isinstance(path, (str, Path)) or not str(path).strip():
        raise TxcourseError(f"path must be the name of a tab-separated file, got {path!r}", "path")
    path = Path(path).expanduser().resolve()
    if path.is_dir():
        held = sorted(str(child) for child in path.iterdir() if child.is_file())
        hint = f" (it holds {', '.join(map(repr, held[:3]))}{' ...' if len(held) > 3 else ''})" if held else ""
        raise IsADirectoryError(
            f"{str(path)!r} is a folder, not a file; the file task reads source<TAB>target lines from a file: "
            f"give the path of one{hint}"
        )
    if not path.is_file():
        raise FileNotFoundError(
            f"file {str(path)!r} does not exist; the file task reads source<TAB>target lines from it"
        )
    digest = file_sha256(path)
    if sha256 is not None and digest != sha256:
        raise TxcourseError(
            f"file {str(path)!r} has changed since the checkpoint was trained on it: its SHA-256 is {digest}, "
            f"expected sha256={sha256}; restore the file, or train again on the new one",
            "path",
        )
    return path, digest


def split_pairs(
    pairs: list[Pair], fractions: tuple[float, float, float], seed: int
) -> tuple[list[Pair], list[Pair], list[Pair]]:
    """Shuffle ``pairs`` with ``seed`` (Python's ``random.Random``, stable across versions) and cut them.

    The valid and test splits take ``round(share * len(pairs))`` pairs each, at least one if their
    share is above 0; the training split takes the rest, in shuffled order.

    Raises:
        ValueError: too few pairs to give every split with a share above 0 at least one.

    Example:
        >>> train, valid, test = split_pairs([(str(i), str(i)) for i in range(10)], (0.6, 0.2, 0.2), seed=0)
        >>> len(train), len(valid), len(test)
        (6, 2, 2)
    """
    fractions = _check_fractions(fractions)
    n = len(pairs)
    n_valid, n_test = (max(1, round(share * n)) if share > 0 else 0 for share in fractions[1:])
    if n - n_valid - n_test < 1:
        needed = 1 + (fractions[1] > 0) + (fractions[2] > 0)
        raise TxcourseError(
            f"{n} pair{'s' if n != 1 else ''} in the file, too few for the splits fractions={tuple(fractions)}: "
            f"valid takes {n_valid} and test {n_test}, which leaves {n - n_valid - n_test} for train; "
            f"give at least {max(needed, n_valid + n_test + 1)} pairs, or smaller valid and test shares"
        )
    order = list(range(n))
    random.Random(seed).shuffle(order)
    test = [pairs[i] for i in order[:n_test]]
    valid = [pairs[i] for i in order[n_test : n_test + n_valid]]
    train = [pairs[i] for i in order[n_test + n_valid :]]
    return train, valid, test


def file_tokenizers(splits: TranslationSplits) -> tuple[Tokenizer, Tokenizer]:
    """The source and target tokenizers a ``file`` task asks for, fitted on its training split only.

    With ``shared_vocab`` one tokenizer is fitted on the sources and targets together and returned twice.
    """
    meta = splits.metadata
    sources, targets = [s for s, _ in splits.train], [t for _, t in splits.train]

    def fit(texts: list[str]) -> Tokenizer:
        if meta["tokens"] == "char":
            return CharTokenizer.fit(texts)
        return BPETokenizer.fit(texts, vocab_size=meta["vocab_size"], min_frequency=meta["min_frequency"])

    if meta["shared_vocab"]:
        shared = fit(sources + targets)
        return shared, shared
    return fit(sources), fit(targets)


def _check_int(name: str, value, minimum: int) -> int:
    """:func:`~txcourse.data._checks.check_int`: its :class:`TxcourseError` names the argument."""
    return check_int(name, value, minimum=minimum)


def _check_fractions(fractions) -> tuple[float, float, float]:
    """Three numbers >= 0 (train, valid, test) that sum to 1, the first above 0."""
    if isinstance(fractions, (str, bytes)) or not hasattr(fractions, "__len__") or len(fractions) != 3:
        raise TxcourseError(
            f"fractions must be 3 numbers (train, valid, test) that sum to 1, got {fractions!r}", "fractions"
        )
    for name, value in zip(SPLIT_NAMES, fractions):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
            raise TxcourseError(
                f"fractions must hold numbers in [0, 1], got {name}={value!r} in {tuple(fractions)!r}", "fractions"
            )
    if not math.isclose(sum(fractions), 1.0, abs_tol=1e-9) or fractions[0] <= 0:
        raise TxcourseError(
            f"fractions (train, valid, test) must sum to 1 with train above 0, got {tuple(fractions)!r} "
            f"(sum {sum(fractions):g})",
            "fractions",
        )
    return tuple(float(v) for v in fractions)
