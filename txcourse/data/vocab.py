"""Tokenizers: text <-> token ids, with the four special tokens at fixed ids.

Every tokenizer of the course shares the same special tokens and ids, so a
batch padded with ``0`` means the same thing whatever tokenizer built it:

====== ======= ==============================================
token  id      meaning
====== ======= ==============================================
<pad>  0       padding; masked out by the model
<sos>  1       start of sequence; first decoder input
<eos>  2       end of sequence; last decoder target
<unk>  3       a character or word not in the vocabulary
====== ======= ==============================================

Three kinds, from the smallest vocabulary to the most practical:

* :class:`CharTokenizer` -- one token per character;
* :class:`WordTokenizer` -- words and punctuation marks;
* :class:`BPETokenizer`  -- subword byte-pair encoding (HuggingFace ``tokenizers``).

All of them :meth:`~Tokenizer.save` to JSON and come back with
:func:`load_tokenizer`.

Example:
    >>> tok = CharTokenizer.fit(["abba", "cab"])
    >>> tok.encode("cab", add_sos=True, add_eos=True)
    [1, 6, 4, 5, 2]
    >>> tok.decode([1, 6, 4, 5, 2, 0, 0])
    'cab'
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

__all__ = [
    "PAD", "SOS", "EOS", "UNK", "SPECIAL_TOKENS",
    "PAD_ID", "SOS_ID", "EOS_ID", "UNK_ID",
    "Tokenizer", "CharTokenizer", "WordTokenizer", "BPETokenizer", "load_tokenizer",
    "tokenizer_from_json",
]

PAD, SOS, EOS, UNK = "<pad>", "<sos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, SOS, EOS, UNK)  # position in this tuple = token id
PAD_ID, SOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3

_FORMAT_VERSION = 1


class Tokenizer:
    """Base class: the interface every tokenizer of the course implements.

    Subclasses implement :meth:`_encode_text`, :meth:`_decode_ids`,
    :attr:`vocab` and :meth:`_state`; the special-token handling, the
    argument checks and :meth:`save` live here, once.
    """

    kind: str = ""

    # ---- special ids: the same for every tokenizer ----
    @property
    def pad_id(self) -> int:
        """Id of ``<pad>`` (0)."""
        return PAD_ID

    @property
    def sos_id(self) -> int:
        """Id of ``<sos>`` (1)."""
        return SOS_ID

    @property
    def eos_id(self) -> int:
        """Id of ``<eos>`` (2)."""
        return EOS_ID

    @property
    def unk_id(self) -> int:
        """Id of ``<unk>`` (3)."""
        return UNK_ID

    @property
    def vocab(self) -> list[str]:
        """All tokens, ordered by id (``vocab[i]`` is the token of id ``i``)."""
        raise NotImplementedError

    @property
    def vocab_size(self) -> int:
        """Number of tokens, special tokens included."""
        return len(self.vocab)

    def __len__(self) -> int:
        return self.vocab_size

    # ---- encode / decode ----
    def encode(self, text: str, add_sos: bool = False, add_eos: bool = False) -> list[int]:
        """Turn a string into token ids.

        Args:
            text: the string to encode.
            add_sos: put ``<sos>`` (id 1) in front.
            add_eos: put ``<eos>`` (id 2) at the end.

        Returns:
            The token ids; unknown characters/words become ``<unk>`` (id 3).

        Example:
            >>> CharTokenizer.fit(["ab"]).encode("abz", add_eos=True)
            [4, 5, 3, 2]
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}: {text!r}")
        ids = self._encode_text(text)
        return ([SOS_ID] if add_sos else []) + ids + ([EOS_ID] if add_eos else [])

    def decode(self, ids: Iterable[int], strip_special: bool = True) -> str:
        """Turn token ids back into a string.

        Args:
            ids: token ids (a list, tuple or 1-D numpy array).
            strip_special: if True (default), stop at the first ``<eos>`` and
                drop ``<pad>`` and ``<sos>``; ``<unk>`` stays visible as the
                text ``"<unk>"`` so unknown tokens are not silently lost. If
                False, every id is rendered, special tokens included.

        Returns:
            The decoded string.

        Example:
            >>> CharTokenizer.fit(["ab"]).decode([1, 4, 5, 2, 4, 0])
            'ab'
        """
        checked = self._check_ids(ids)
        if strip_special:
            kept = []
            for i in checked:
                if i == EOS_ID:
                    break
                if i not in (PAD_ID, SOS_ID):
                    kept.append(i)
            checked = kept
        return self._decode_ids(checked)

    def _check_ids(self, ids: Iterable[int]) -> list[int]:
        if isinstance(ids, (str, bytes)):
            raise ValueError(f"ids must be a sequence of token ids, got a string {ids!r}")
        try:
            values = list(ids)
        except TypeError:
            raise ValueError(f"ids must be a sequence of token ids, got "
                             f"{type(ids).__name__}: {ids!r}") from None
        out = []
        size = self.vocab_size
        for pos, value in enumerate(values):
            try:
                as_int = int(value)
            except (TypeError, ValueError):
                raise ValueError(f"ids[{pos}] must be an integer token id, got {value!r}") from None
            if as_int != value or isinstance(value, bool) or not 0 <= as_int < size:
                raise ValueError(f"ids[{pos}] = {value!r} is not a token id of this "
                                 f"{type(self).__name__}: expected an integer in [0, {size})")
            out.append(as_int)
        return out

    def unknown_words(self, text: str) -> list[str]:
        """The words of ``text`` that :meth:`encode` would turn into ``<unk>``.

        Applies the same normalisation as :meth:`encode` (for a
        :class:`WordTokenizer`: lower-casing and dropped punctuation, if it was
        fitted with them), so a word that only differs in case from a known one
        is not reported when the tokenizer lower-cases.

        Args:
            text: the string to check.

        Returns:
            The unknown words (characters for a :class:`CharTokenizer`), each
            once, in the order they first occur; ``[]`` if every one is known.

        Example:
            >>> tok = WordTokenizer.fit(["one hundred", "two"], lowercase=True)
            >>> tok.unknown_words("One zebra, two zebras")
            ['zebra', ',', 'zebras']
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}: {text!r}")
        unknown = [w for w in self._words(text) if UNK_ID in self._encode_text(w)]
        return list(dict.fromkeys(unknown))

    def _words(self, text: str) -> list[str]:
        """The units :meth:`unknown_words` reports: whitespace-separated words by default."""
        return text.split()

    def _encode_text(self, text: str) -> list[int]:
        raise NotImplementedError

    def _decode_ids(self, ids: list[int]) -> str:
        raise NotImplementedError

    # ---- persistence ----
    def _state(self) -> dict:
        raise NotImplementedError

    def save(self, path: str | Path) -> None:
        """Write the tokenizer to a JSON file (read it back with :func:`load_tokenizer`).

        Args:
            path: the file to write; its parent directory must exist.

        Example:
            >>> tok = CharTokenizer.fit(["ab"])
            >>> tok.save("/tmp/char.json")
            >>> load_tokenizer("/tmp/char.json").vocab == tok.vocab
            True
        """
        Path(path).write_text(self.to_json(), encoding="utf-8")

    def to_json(self) -> str:
        """The tokenizer as a JSON string (what :meth:`save` writes; read with :func:`tokenizer_from_json`)."""
        state = {"kind": self.kind, "format_version": _FORMAT_VERSION, **self._state()}
        return json.dumps(state, ensure_ascii=False, indent=1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


# --------------------------------------------------------------------------
# Vocabulary-list tokenizers (characters, words)
# --------------------------------------------------------------------------

def _check_texts(texts: Iterable[str]) -> list[str]:
    if isinstance(texts, str):
        raise ValueError("texts must be a list of strings, got a single string; "
                         "wrap it in a list: fit([text])")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise ValueError(f"texts[{i}] must be a str, got {type(text).__name__}: {text!r}")
    if not out:
        raise ValueError("texts is empty: need at least one string to build a vocabulary")
    return out


def _check_min_freq(min_freq) -> None:
    if not isinstance(min_freq, int) or isinstance(min_freq, bool) or min_freq < 1:
        raise ValueError(f"min_freq must be an integer >= 1, got {min_freq!r}")


def _vocab_from_counts(counts: Counter, min_freq: int) -> list[str]:
    """Special tokens, then tokens by decreasing frequency, ties by the token itself."""
    kept = [t for t, c in counts.items() if c >= min_freq and t not in SPECIAL_TOKENS]
    kept.sort(key=lambda t: (-counts[t], t))
    return list(SPECIAL_TOKENS) + kept


class _ListTokenizer(Tokenizer):
    """A tokenizer whose vocabulary is an explicit list of strings."""

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        if tuple(tokens[:4]) != SPECIAL_TOKENS:
            raise ValueError(f"tokens must start with the special tokens {list(SPECIAL_TOKENS)}, "
                             f"got {tokens[:4]}")
        if len(set(tokens)) != len(tokens):
            dupes = sorted(t for t, c in Counter(tokens).items() if c > 1)
            raise ValueError(f"tokens must be distinct, got duplicates {dupes[:10]}")
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
            raise ValueError(f"text must be a str, got {type(text).__name__}: {text!r}")
        return list(dict.fromkeys(t for t in self.tokenize(text) if t not in self._index))

    def _decode_ids(self, ids: list[int]) -> str:
        return self._join([self._tokens[i] for i in ids])

    def _state(self) -> dict:
        return {"tokens": self._tokens}


class CharTokenizer(_ListTokenizer):
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
    def fit(cls, texts: Iterable[str], min_freq: int = 1) -> "CharTokenizer":
        """Build the vocabulary from ``texts``.

        Args:
            texts: training strings.
            min_freq: characters seen fewer times become ``<unk>``.

        Returns:
            A CharTokenizer whose vocabulary is the special tokens, then the
            characters by decreasing frequency, ties broken by the character.
        """
        texts = _check_texts(texts)
        _check_min_freq(min_freq)
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


class WordTokenizer(_ListTokenizer):
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
    def fit(cls, texts: Iterable[str], min_freq: int = 1, lowercase: bool = False,
            ignore: Iterable[str] = ()) -> "WordTokenizer":
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
        texts = _check_texts(texts)
        _check_min_freq(min_freq)
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


def _split_words(text: str, lowercase: bool, ignore: tuple[str, ...]) -> list[str]:
    tokens = _WORD_RE.findall(text.lower() if lowercase else text)
    return [t for t in tokens if t not in ignore] if ignore else tokens


def _check_lowercase(lowercase) -> bool:
    if not isinstance(lowercase, bool):
        raise ValueError(f"lowercase must be True or False, got {lowercase!r}")
    return lowercase


def _check_ignore(ignore) -> tuple[str, ...]:
    if isinstance(ignore, str):
        raise ValueError(f"ignore must be a list of tokens, got the string {ignore!r}; "
                         f"write ignore=({ignore!r},) or ignore=tuple({ignore!r})")
    try:
        items = list(ignore)
    except TypeError:
        raise ValueError(f"ignore must be a list of tokens, got {type(ignore).__name__}: {ignore!r}") from None
    for item in items:
        if not isinstance(item, str) or _WORD_RE.fullmatch(item) is None:
            raise ValueError(f"ignore holds {item!r}, which is not one token of the split: expected a word "
                             f"(letters, digits, _) or a single punctuation mark such as ',' or '-'")
    return tuple(dict.fromkeys(items))


# --------------------------------------------------------------------------
# Subword BPE (HuggingFace tokenizers)
# --------------------------------------------------------------------------

class BPETokenizer(Tokenizer):
    """Subword byte-pair encoding, trained with HuggingFace ``tokenizers``.

    Pre-tokenization is ``Metaspace`` (spaces become ``▁``, as in
    SentencePiece), so :meth:`decode` restores single spaces between words.
    Characters never seen in training become ``<unk>``.

    Example:
        >>> tok = BPETokenizer.fit(["low lower lowest"] * 20, vocab_size=30)
        >>> tok.decode(tok.encode("lower low"))
        'lower low'
    """

    kind = "bpe"

    def __init__(self, hf_tokenizer):
        self._hf = hf_tokenizer
        ids = [hf_tokenizer.token_to_id(t) for t in SPECIAL_TOKENS]
        if ids != [PAD_ID, SOS_ID, EOS_ID, UNK_ID]:
            raise ValueError(f"the HuggingFace tokenizer must map {list(SPECIAL_TOKENS)} to ids "
                             f"[0, 1, 2, 3], got {ids}")

    @classmethod
    def fit(cls, texts: Iterable[str], vocab_size: int = 1000,
            min_frequency: int = 2) -> "BPETokenizer":
        """Train a BPE vocabulary on ``texts``.

        Args:
            texts: training strings.
            vocab_size: target vocabulary size, special tokens and the
                character alphabet included (smaller if the corpus runs out
                of merges).
            min_frequency: a pair is merged only if seen at least this often.

        Returns:
            A trained BPETokenizer (deterministic for the same texts).
        """
        from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, trainers

        texts = _check_texts(texts)
        if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) \
                or vocab_size <= len(SPECIAL_TOKENS):
            raise ValueError(f"vocab_size must be an integer > {len(SPECIAL_TOKENS)} "
                             f"(the special tokens), got {vocab_size!r}")
        _check_min_freq(min_frequency)
        hf = HFTokenizer(models.BPE(unk_token=UNK))
        hf.pre_tokenizer = pre_tokenizers.Metaspace()
        hf.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=list(SPECIAL_TOKENS), show_progress=False)
        hf.train_from_iterator(texts, trainer=trainer)
        return cls(hf)

    @property
    def vocab(self) -> list[str]:
        by_id = sorted(self._hf.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1])
        return [tok for tok, _ in by_id]

    @property
    def vocab_size(self) -> int:
        return self._hf.get_vocab_size(with_added_tokens=True)

    @property
    def hf_tokenizer(self):
        """The underlying ``tokenizers.Tokenizer``."""
        return self._hf

    def tokenize(self, text: str) -> list[str]:
        """The subword strings ``text`` is split into."""
        return self._hf.encode(text, add_special_tokens=False).tokens

    def _encode_text(self, text: str) -> list[int]:
        return list(self._hf.encode(text, add_special_tokens=False).ids)

    def _decode_ids(self, ids: list[int]) -> str:
        return self._hf.decode(ids, skip_special_tokens=False)

    def _state(self) -> dict:
        return {"tokenizer": self._hf.to_str()}


# --------------------------------------------------------------------------

_KINDS = {"char": CharTokenizer, "word": WordTokenizer, "bpe": BPETokenizer}


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Read back a tokenizer written by :meth:`Tokenizer.save` (any kind).

    Args:
        path: the JSON file.

    Returns:
        A CharTokenizer, WordTokenizer or BPETokenizer equal to the saved one.

    Example:
        >>> WordTokenizer.fit(["a b"]).save("/tmp/w.json")
        >>> load_tokenizer("/tmp/w.json").vocab
        ['<pad>', '<sos>', '<eos>', '<unk>', 'a', 'b']
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tokenizer file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"tokenizer file {str(path)!r} is not valid UTF-8 JSON: {err}") from None
    return tokenizer_from_json(text, source=f"tokenizer file {str(path)!r}")


def tokenizer_from_json(text: str, source: str = "tokenizer JSON") -> Tokenizer:
    """Inverse of :meth:`Tokenizer.to_json`; ``source`` names the origin in error messages."""
    try:
        state = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{source} is not valid UTF-8 JSON: {err}") from None
    kind = state.get("kind") if isinstance(state, dict) else None
    if kind not in _KINDS:
        raise ValueError(f"{source} has kind {kind!r}, expected one of {sorted(_KINDS)}")
    try:
        if kind == "bpe":
            from tokenizers import Tokenizer as HFTokenizer
            return BPETokenizer(HFTokenizer.from_str(state["tokenizer"]))
        if kind == "word":
            # files written before `lowercase` / `ignore` existed load as they were fitted
            return WordTokenizer(state["tokens"], lowercase=state.get("lowercase", False),
                                 ignore=state.get("ignore", ()))
        return CharTokenizer(state["tokens"])
    except KeyError as err:
        raise ValueError(f"{source} (kind {kind!r}) lacks the field {err.args[0]!r}") from None
