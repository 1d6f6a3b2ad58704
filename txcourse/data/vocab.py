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

* :class:`~txcourse.data.char_word.CharTokenizer` -- one token per character;
* :class:`~txcourse.data.char_word.WordTokenizer` -- words and punctuation marks;
* :class:`~txcourse.data.bpe.BPETokenizer`  -- subword byte-pair encoding (HuggingFace ``tokenizers``).

This module holds what they share: the special tokens, the base class :class:`Tokenizer` (special
ids, encode/decode, the argument checks, :meth:`~Tokenizer.save`) and :func:`load_tokenizer`, which
reads back any kind. The kinds live in :mod:`txcourse.data.char_word` and :mod:`txcourse.data.bpe`.

Example:
    >>> from txcourse.data import CharTokenizer
    >>> tok = CharTokenizer.fit(["abba", "cab"])
    >>> tok.encode("cab", add_sos=True, add_eos=True)
    [1, 6, 4, 5, 2]
    >>> tok.decode([1, 6, 4, 5, 2, 0, 0])
    'cab'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from txcourse.errors import TxcourseError

__all__ = [
    "PAD",
    "SOS",
    "EOS",
    "UNK",
    "SPECIAL_TOKENS",
    "PAD_ID",
    "SOS_ID",
    "EOS_ID",
    "UNK_ID",
    "Tokenizer",
    "load_tokenizer",
    "tokenizer_from_json",
]

PAD, SOS, EOS, UNK = "<pad>", "<sos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, SOS, EOS, UNK)  # position in this tuple = token id
PAD_ID, SOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3

_FORMAT_VERSION = 1
_KINDS: dict[str, type[Tokenizer]] = {}  # "char", "word", "bpe": filled as each kind's class is defined


class Tokenizer:
    """Base class: the interface every tokenizer of the course implements.

    Subclasses implement :meth:`_encode_text`, :meth:`_decode_ids`,
    :attr:`vocab` and :meth:`_state`; the special-token handling, the
    argument checks and :meth:`save` live here, once.
    """

    kind: str = ""  # the "kind" field of the saved JSON; each kind registers itself (load_tokenizer)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind"):
            _KINDS[cls.kind] = cls

    @classmethod
    def from_state(cls, state: dict) -> Tokenizer:
        """The tokenizer a :meth:`to_json` state describes (KeyError names a missing field)."""
        raise NotImplementedError

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
            >>> from txcourse.data import CharTokenizer
            >>> CharTokenizer.fit(["ab"]).encode("abz", add_eos=True)
            [4, 5, 3, 2]
        """
        if not isinstance(text, str):
            raise TxcourseError(f"text must be a str, got {type(text).__name__}: {text!r}", "text")
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
            >>> from txcourse.data import CharTokenizer
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
            raise TxcourseError(f"ids must be a sequence of token ids, got a string {ids!r}", "ids")
        try:
            values = list(ids)
        except TypeError:
            raise TxcourseError(
                f"ids must be a sequence of token ids, got {type(ids).__name__}: {ids!r}", "ids"
            ) from None
        out = []
        size = self.vocab_size
        for pos, value in enumerate(values):
            try:
                as_int = int(value)
            except (TypeError, ValueError):
                raise TxcourseError(f"ids[{pos}] must be an integer token id, got {value!r}", "ids") from None
            if as_int != value or isinstance(value, bool) or not 0 <= as_int < size:
                raise TxcourseError(
                    f"ids[{pos}] = {value!r} is not a token id of this "
                    f"{type(self).__name__}: expected an integer in [0, {size})"
                )
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
            >>> from txcourse.data import WordTokenizer
            >>> tok = WordTokenizer.fit(["one hundred", "two"], lowercase=True)
            >>> tok.unknown_words("One zebra, two zebras")
            ['zebra', ',', 'zebras']
        """
        if not isinstance(text, str):
            raise TxcourseError(f"text must be a str, got {type(text).__name__}: {text!r}", "text")
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
            >>> from txcourse.data import CharTokenizer
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
# Argument checks shared by the kinds' ``fit``
# --------------------------------------------------------------------------


def check_texts(texts: Iterable[str]) -> list[str]:
    """``texts`` as a list, checked: strings only, at least one, not a single string."""
    if isinstance(texts, str):
        raise TxcourseError(
            "texts must be a list of strings, got a single string; wrap it in a list: fit([text])", "texts"
        )
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TxcourseError(f"texts[{i}] must be a str, got {type(text).__name__}: {text!r}", "texts")
    if not out:
        raise TxcourseError("texts is empty: need at least one string to build a vocabulary")
    return out


def check_min_freq(min_freq) -> None:
    """ValueError unless ``min_freq`` is an integer >= 1."""
    if not isinstance(min_freq, int) or isinstance(min_freq, bool) or min_freq < 1:
        raise TxcourseError(f"min_freq must be an integer >= 1, got {min_freq!r}", "min_freq")


# --------------------------------------------------------------------------
# Reading a saved tokenizer back (any kind)
# --------------------------------------------------------------------------


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Read back a tokenizer written by :meth:`Tokenizer.save` (any kind).

    Args:
        path: the JSON file.

    Returns:
        A CharTokenizer, WordTokenizer or BPETokenizer equal to the saved one.

    Example:
        >>> from txcourse.data import WordTokenizer
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
        raise TxcourseError(f"tokenizer file {str(path)!r} is not valid UTF-8 JSON: {err}") from None
    return tokenizer_from_json(text, source=f"tokenizer file {str(path)!r}")


def tokenizer_from_json(text: str, source: str = "tokenizer JSON") -> Tokenizer:
    """Inverse of :meth:`Tokenizer.to_json`; ``source`` names the origin in error messages."""
    try:
        state = json.loads(text)
    except json.JSONDecodeError as err:
        raise TxcourseError(f"{source} is not valid UTF-8 JSON: {err}") from None
    kind = state.get("kind") if isinstance(state, dict) else None
    if kind not in _KINDS:
        raise TxcourseError(f"{source} has kind {kind!r}, expected one of {sorted(_KINDS)}")
    try:
        return _KINDS[kind].from_state(state)
    except KeyError as err:
        raise TxcourseError(f"{source} (kind {kind!r}) lacks the field {err.args[0]!r}") from None
