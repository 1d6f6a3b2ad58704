"""Tokenizers whose vocabulary is a list of strings: one token per character, or per word.

:class:`CharTokenizer` (week 1's toy tasks) and :class:`WordTokenizer` (the numbers task, the
translation pairs) share :class:`ListTokenizer`: a vocabulary list whose first four entries are the
special tokens of :mod:`txcourse.data.vocab`, and a lookup table token -> id.

Example:
    >>> tok = CharTokenizer.fit(["abba", "cab"])
    >>> tok.encode("cab", add_sos=True, add_eos=True)
    [1, 6, 4, 5, 2]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from txcourse.data.vocab import SPECIAL_TOKENS, UNK_ID, Tokenizer, check_min_freq, check_texts
from txcourse.errors import TxcourseError

__all__ = ["ListTokenizer", "CharTokenizer", "WordTokenizer"]


def _vocab_from_counts(counts: Counter, min_freq: int) -> list[str]:
    """Special tokens, then tokens by decreasing frequency, ties by the token itself."""
    kept = [t for t, c in counts.items() if c >= min_freq and t not in SPECIAL_TOKENS]
    kept.sort(key=lambda t: (-counts[t], t))
    return list(SPECIAL_TOKENS) + kept


class ListTokenizer(Tokenizer):
    """A tokenizer whose vocabulary is an explicit list of strings."""

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        if tuple(tokens[:4]) != SPECIAL_TOKENS:
            raise TxcourseError(
                f"tokens must start with the special tokens {list(SPECIAL_TOKENS)}, got {tokens[:4]}", "tokens"
            )
        if len(set(tokens)) != len(tokens):
            dupes = sorted(t for t, c in Counter(tokens).items() if c > 1)
            raise TxcourseError(f"tokens must be distinct, got duplicates {dupes[:10]}", "tokens")
        self._tokens = tokens
        self._index = {t: i for i, t in enumerate(tokens)}

    @property
    def vocab(self) -> list[str]:
        return list(self._tokens)

    def token_to_id(self, token: str) -> int:
        """Id of ``token`` (``unk_id`` when it is not in the vocabulary)."""
        return self._index.get(token, UNK_ID)

    def id_to_token(self, token_id: int) -> str:
        """Token of ``token_id``."""
        return self._tokens[self._check_ids([token_id])[0]]

    def tokenize(self, text: str) -> list[str]:
        """Split ``text`` into token strings (before the vocabulary lookup)."""
        raise NotImplementedError

    def _join(self, tokens: list[str]) -> str:
        raise NotImplementedError

    def _encode_text(self, text: str) -> list[int]:
        return [self._index.get(t, UNK_ID) for t in self.tokenize(text)]

    def unknown_words(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TxcourseError(f"text must be a str, got {type(text).__name__}: {text!r}", "text")
        return list(dict.fromkeys(t for t in self.tokenize(text) if t not in self._index))

    def _decode_ids(self, ids: list[int]) -> str:
        return self._join([self._tokens[i] for i in ids])

    def _state(self) -> dict:
        return {"tokens": self._tokens}

    @classmethod
    def from_state(cls, state: dict) -> ListTokenizer:
        return cls(state["tokens"])


class CharTokenizer(ListTokenizer):
    """One token per character (spaces included).

    Example:
        >>> tok = CharTokenizer.fit(["hello"])
        >>> tok.vocab[4:]          # 'l' is most frequent, then alphabetical
        ['l', 'e', 'h', 'o']
        >>> tok.decode(tok.encode("hole"))
        'hole'
    """

    kind = "char"

    @classmethod
    def fit(cls, texts: Iterable[str], min_freq: int = 1) -> CharTokenizer:
        """Build the vocabulary from ``texts``.

        Args:
            texts: training strings.
            min_freq: characters seen fewer times become ``<unk>``.

        Returns:
            A CharTokenizer whose vocabulary is the special tokens, then the
            characters by decreasing frequency, ties broken by the character.
        """
        texts = check_texts(texts)
        check_min_freq(min_freq)
        counts = Counter()
        for text in texts:
            counts.update(text)
        return cls(_vocab_from_counts(counts, min_freq))

    def tokenize(self, text: str) -> list[str]:
        return list(text)

    def _join(self, tokens: list[str]) -> str:
        return "".join(tokens)


# A word is a run of letters/digits/underscore; every other non-space
# character is a token of its own ("forty-five" -> "forty", "-", "five").
_WORD_RE = re.compile(r"\w+|[^\w\s]")
_NO_SPACE_BEFORE = set(".,!?;:%)]}…")
_NO_SPACE_AFTER = set("([{¿¡$")
_NO_SPACE_AROUND = set("-'/’")


class WordTokenizer(ListTokenizer):
    """Words and punctuation marks, split by the regex ``\\w+|[^\\w\\s]``.

    :meth:`decode` joins tokens with spaces, then re-attaches punctuation:
    no space before ``. , ! ? ; : % ) ] }``, none after ``( [ { ¿ ¡ $``, and
    none around ``- ' /`` (so "forty-five" and "don't" come back intact).

    Normalisation, the same at fit and encode time (and saved with the
    tokenizer, so a checkpoint applies what its training applied):
    ``lowercase`` lower-cases the text before splitting; ``ignore`` names
    tokens dropped after splitting, such as punctuation a task does not need.
    With ``lowercase=True, ignore=(",", "-")``, "Twelve thousand three hundred
    and forty five" and "twelve thousand, three hundred and forty-five" encode
    to the same ids. Whitespace never matters: the split drops it.

    Example:
        >>> tok = WordTokenizer.fit(["twelve thousand, three hundred and forty-five"])
        >>> tok.tokenize("forty-five.")
        ['forty', '-', 'five', '.']
        >>> tok.decode(tok.encode("twelve thousand, three hundred and forty-five"))
        'twelve thousand, three hundred and forty-five'
        >>> norm = WordTokenizer.fit(["forty-five"], lowercase=True, ignore=(",", "-"))
        >>> norm.tokenize("  Forty five, ")
        ['forty', 'five']
    """

    kind = "word"

    def __init__(self, tokens: Sequence[str], lowercase: bool = False, ignore: Iterable[str] = ()):
        super().__init__(tokens)
        self.lowercase = _check_lowercase(lowercase)
        self.ignore = _check_ignore(ignore)

    @classmethod
    def fit(
        cls, texts: Iterable[str], min_freq: int = 1, lowercase: bool = False, ignore: Iterable[str] = ()
    ) -> WordTokenizer:
        """Build the vocabulary from ``texts``.

        Args:
            texts: training strings.
            min_freq: words seen fewer times become ``<unk>``.
            lowercase: lower-case text before splitting (at fit and encode time).
            ignore: tokens dropped after splitting (at fit and encode time),
                e.g. ``(",", "-")``; each must be one token of the split,
                a word or a single punctuation mark.

        Returns:
            A WordTokenizer: special tokens, then words by decreasing
            frequency, ties broken alphabetically.
        """
        texts = check_texts(texts)
        check_min_freq(min_freq)
        lowercase, ignore = _check_lowercase(lowercase), _check_ignore(ignore)
        counts = Counter()
        for text in texts:
            counts.update(_split_words(text, lowercase, ignore))
        return cls(_vocab_from_counts(counts, min_freq), lowercase=lowercase, ignore=ignore)

    def tokenize(self, text: str) -> list[str]:
        return _split_words(text, self.lowercase, self.ignore)

    def _join(self, tokens: list[str]) -> str:
        out: list[str] = []
        glue_next = True  # no space before the first token
        for tok in tokens:
            if not (glue_next or tok in _NO_SPACE_BEFORE or tok in _NO_SPACE_AROUND):
                out.append(" ")
            out.append(tok)
            glue_next = tok in _NO_SPACE_AFTER or tok in _NO_SPACE_AROUND
        return "".join(out)

    def _state(self) -> dict:
        return {"tokens": self._tokens, "lowercase": self.lowercase, "ignore": list(self.ignore)}

    @classmethod
    def from_state(cls, state: dict) -> WordTokenizer:
        # files written before `lowercase` / `ignore` existed load as they were fitted
        return cls(state["tokens"], lowercase=state.get("lowercase", False), ignore=state.get("ignore", ()))


def _split_words(text: str, lowercase: bool, ignore: tuple[str, ...]) -> list[str]:
    tokens = _WORD_RE.findall(text.lower() if lowercase else text)
    return [t for t in tokens if t not in ignore] if ignore else tokens


def _check_lowercase(lowercase) -> bool:
    if not isinstance(lowercase, bool):
        raise TxcourseError(f"lowercase must be True or False, got {lowercase!r}", "lowercase")
    return lowercase


def _check_ignore(ignore) -> tuple[str, ...]:
    if isinstance(ignore, str):
        raise TxcourseError(
            f"ignore must be a list of tokens, got the string {ignore!r}; "
            f"write ignore=({ignore!r},) or ignore=tuple({ignore!r})"
        )
    try:
        items = list(ignore)
    except TypeError:
        raise TxcourseError(
            f"ignore must be a list of tokens, got {type(ignore).__name__}: {ignore!r}", "ignore"
        ) from None
    for item in items:
        if not isinstance(item, str) or _WORD_RE.fullmatch(item) is None:
            raise TxcourseError(
                f"ignore holds {item!r}, which is not one token of the split: expected a word "
                f"(letters, digits, _) or a single punctuation mark such as ',' or '-'"
            )
    return tuple(dict.fromkeys(items))
