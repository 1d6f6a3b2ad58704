"""Framework-free data layer: tasks, tokenizers, corpora and numpy batches.

Imports numpy (and, lazily, ``num2words`` / ``tokenizers``) only, never
PyTorch or TensorFlow, so both halves of the course share it.

Example:
    >>> from txcourse.data import get_task, WordTokenizer, encode_pairs, make_batches
    >>> splits = get_task("numbers", sizes=(64, 8, 16))
    >>> src_tok = WordTokenizer.fit([s for s, _ in splits.train])
    >>> from txcourse.data import CharTokenizer
    >>> tgt_tok = CharTokenizer.fit([t for _, t in splits.train])
    >>> enc = encode_pairs(splits.train, src_tok, tgt_tok)
    >>> batch = make_batches(enc, batch_size=16)[0]
    >>> batch.src.dtype.name, batch.tgt_in.shape == batch.tgt_out.shape
    ('int64', True)
"""

from txcourse.data.batching import Batch, EncodedPairs, encode_pairs, iterate_batches, make_batches, pad_sequences
from txcourse.data.bpe import BPETokenizer
from txcourse.data.char_word import CharTokenizer, WordTokenizer
from txcourse.data.corpora import (
    ANKI_SHA256,
    ANKI_URL,
    default_cache_dir,
    download_anki,
    load_anki,
    load_pairs_csv,
    load_tsv,
)
from txcourse.data.file_task import file_tokenizers, make_file_task, split_pairs
from txcourse.data.numbers import (
    SUPPORTED_LANGS,
    TARGET_LANGS,
    digit_count,
    draw_by_digit_count,
    make_numbers_task,
    numbers_to_words,
    round_numbers,
    zero_pattern,
)
from txcourse.data.splits import SPLIT_NAMES, TranslationSplits
from txcourse.data.tasks import TASKS, get_task
from txcourse.data.toy import LETTERS, make_copy_task, make_reverse_task
from txcourse.data.vocab import (
    EOS,
    EOS_ID,
    PAD,
    PAD_ID,
    SOS,
    SOS_ID,
    SPECIAL_TOKENS,
    UNK,
    UNK_ID,
    Tokenizer,
    load_tokenizer,
    tokenizer_from_json,
)

__all__ = [
    # tokenizers
    "PAD",
    "SOS",
    "EOS",
    "UNK",
    "PAD_ID",
    "SOS_ID",
    "EOS_ID",
    "UNK_ID",
    "SPECIAL_TOKENS",
    "Tokenizer",
    "CharTokenizer",
    "WordTokenizer",
    "BPETokenizer",
    "load_tokenizer",
    "tokenizer_from_json",
    # tasks
    "TranslationSplits",
    "SPLIT_NAMES",
    "TASKS",
    "get_task",
    "make_numbers_task",
    "numbers_to_words",
    "digit_count",
    "draw_by_digit_count",
    "zero_pattern",
    "round_numbers",
    "SUPPORTED_LANGS",
    "TARGET_LANGS",
    "make_copy_task",
    "make_reverse_task",
    "LETTERS",
    "make_file_task",
    "split_pairs",
    "file_tokenizers",
    # corpora
    "load_anki",
    "load_tsv",
    "download_anki",
    "load_pairs_csv",
    "default_cache_dir",
    "ANKI_URL",
    "ANKI_SHA256",
    # batching
    "Batch",
    "EncodedPairs",
    "pad_sequences",
    "encode_pairs",
    "make_batches",
    "iterate_batches",
]
