"""Subword byte-pair encoding (BPE), trained with HuggingFace ``tokenizers``.

The special tokens and ids are those of every tokenizer of the course (:mod:`txcourse.data.vocab`);
``tokenizers`` is imported only when a BPE tokenizer is trained or loaded.
"""

from __future__ import annotations

from collections.abc import Iterable

from txcourse.data.vocab import (
    EOS_ID,
    PAD_ID,
    SOS_ID,
    SPECIAL_TOKENS,
    UNK,
    UNK_ID,
    Tokenizer,
    check_min_freq,
    check_texts,
)
from txcourse.errors import TxcourseError

__all__ = ["BPETokenizer"]


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
            raise TxcourseError(
                f"the HuggingFace tokenizer must map {list(SPECIAL_TOKENS)} to ids [0, 1, 2, 3], got {ids}"
            )

    @classmethod
    def fit(cls, texts: Iterable[str], vocab_size: int = 1000, min_frequency: int = 2) -> BPETokenizer:
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
        from tokenizers import Tokenizer as HFTokenizer
        from tokenizers import decoders, models, pre_tokenizers, trainers

        texts = check_texts(texts)
        if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size <= len(SPECIAL_TOKENS):
            raise TxcourseError(
                f"vocab_size must be an integer > {len(SPECIAL_TOKENS)} (the special tokens), got {vocab_size!r}"
            )
        check_min_freq(min_frequency)
        hf = HFTokenizer(models.BPE(unk_token=UNK))
        hf.pre_tokenizer = pre_tokenizers.Metaspace()
        hf.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS), show_progress=False
        )
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

    @classmethod
    def from_state(cls, state: dict) -> BPETokenizer:
        from tokenizers import Tokenizer as HFTokenizer

        return cls(HFTokenizer.from_str(state["tokenizer"]))
