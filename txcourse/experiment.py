"""Glue shared by the command line, the benchmarks and the book: tasks, models, translation.

Framework-free: the framework half is loaded by :func:`backend` only when
asked for, so ``txcourse train --framework tf`` never imports PyTorch.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Optional, Sequence

import numpy as np

from txcourse._validation import ArgumentError
from txcourse.config import TransformerConfig
from txcourse.data import (CharTokenizer, EncodedPairs, Tokenizer, TranslationSplits, WordTokenizer,
                           encode_pairs, get_task, pad_sequences, tokenizer_from_json)
from txcourse.data.tasks import TASKS
from txcourse.metrics import LengthBucket, evaluate_translations, exact_match
from txcourse.training import MODEL_KINDS

__all__ = ["FRAMEWORKS", "backend", "set_threads", "Prepared", "prepare_task", "default_model_config", "translate",
           "evaluate", "NUMBERS_SOURCE_NORMALISATION", "DIGIT_SEED", "evaluate_by_digit_count"]

DIGIT_SEED = 1  # seed of the fresh numbers drawn by digit count (the task's splits use their own seed)

FRAMEWORKS = ("torch", "tf")

# Model sizes that train on a CPU in minutes; --set overrides any field.
DEFAULT_MODELS: dict[str, dict[str, Any]] = {
    "transformer": dict(d_model=128, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=512,
                        dropout=0.1, max_len=128, tie_embeddings=True),
    "bahdanau": dict(embedding_dim=128, units=256),
    "seq2seq": dict(embedding_dim=128, units=256),
}


def backend(framework: str) -> SimpleNamespace:
    """The framework half's trainer, model loader and decoders, imported on demand."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {list(FRAMEWORKS)}, got {framework!r}")
    train = importlib.import_module(f"txcourse.{framework}.train")
    decode = importlib.import_module(f"txcourse.{framework}.decode")
    if framework == "torch":
        import torch

        def to_tensor(array: np.ndarray, device: Any = "cpu") -> Any:
            return torch.from_numpy(array).to(train.resolve_device(device) if isinstance(device, str) else device)

        def to_numpy(tensor: Any) -> np.ndarray:
            return tensor.detach().cpu().numpy()
    else:
        import tensorflow as tf

        def to_tensor(array: np.ndarray, device: Any = "cpu") -> Any:
            return tf.constant(array)

        def to_numpy(tensor: Any) -> np.ndarray:
            return np.asarray(tensor)
    return SimpleNamespace(name=framework, Trainer=train.Trainer, build_model=train.build_model,
                           load_model=train.load_model, set_seed=train.set_seed, resolve_device=train.resolve_device,
                           greedy_decode=decode.greedy_decode, beam_search=decode.beam_search,
                           to_tensor=to_tensor, to_numpy=to_numpy)


def set_threads(n: int, frameworks: Sequence[str] = FRAMEWORKS) -> None:
    """Limit the given frameworks to ``n`` CPU threads (call before building models).

    A framework that is not installed is skipped; none is imported that
    ``frameworks`` does not name.
    """
    if "torch" in frameworks and importlib.util.find_spec("torch") is not None:
        import torch
        torch.set_num_threads(n)
    if "tf" in frameworks and importlib.util.find_spec("tensorflow") is not None:
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)


@dataclass
class Prepared:
    """A task ready to train on: splits, tokenizers and the encoded training pairs."""

    task: str
    task_kwargs: dict[str, Any]
    splits: TranslationSplits
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    train: EncodedPairs


# Source normalisation of the numbers task: what a user may type differently without changing the number.
# It lives in the source tokenizer, so training and translation apply the same steps and a checkpoint
# carries them in its tokenizer JSON. "Twelve thousand three hundred and forty five" reads as
# "twelve thousand, three hundred and forty-five".
NUMBERS_SOURCE_NORMALISATION: dict[str, Any] = dict(lowercase=True, ignore=(",", "-"))


def make_tokenizers(task: str, splits: TranslationSplits) -> tuple[Tokenizer, Tokenizer]:
    """English words in, characters out for ``numbers`` (Korean has no spaces inside 10^4 groups);
    words on both sides for the toy tasks.

    The ``numbers`` source tokenizer lower-cases and drops commas and hyphens
    (:data:`NUMBERS_SOURCE_NORMALISATION`); the toy tasks' words are their
    content, so their tokenizers change nothing.
    """
    sources, targets = [s for s, _ in splits.train], [t for _, t in splits.train]
    if task == "numbers":
        return WordTokenizer.fit(sources, **NUMBERS_SOURCE_NORMALISATION), CharTokenizer.fit(targets)
    return WordTokenizer.fit(sources), WordTokenizer.fit(targets)


def prepare_task(task: str, **task_kwargs: Any) -> Prepared:
    """Generate the task's splits (deterministic), fit tokenizers on the training split and encode it."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; choose one of {sorted(TASKS)}")
    splits = get_task(task, **task_kwargs)
    src_tok, tgt_tok = make_tokenizers(task, splits)
    return Prepared(task, dict(task_kwargs), splits, src_tok, tgt_tok, encode_pairs(splits.train, src_tok, tgt_tok))


def default_model_config(kind: str, src_vocab_size: int, tgt_vocab_size: int,
                         overrides: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The model config dict for ``kind``, with the vocabulary sizes and ``overrides`` applied and checked.

    A bad setting raises :class:`~txcourse._validation.ArgumentError` (a ``ValueError``) whose ``arguments`` name
    the setting(s), so that a caller can say which of its inputs set them.
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"model must be one of {list(MODEL_KINDS)}, got {kind!r}")
    config = {**DEFAULT_MODELS[kind], "src_vocab_size": src_vocab_size, "tgt_vocab_size": tgt_vocab_size,
              "pad_id": 0, **(overrides or {})}
    if kind == "transformer":
        return TransformerConfig.from_dict(config).to_dict()  # validates every field
    allowed = {"src_vocab_size", "tgt_vocab_size", "embedding_dim", "units", "pad_id"}
    unknown = set(config) - allowed
    if unknown:
        raise ArgumentError(f"unknown {kind} setting(s) {sorted(unknown)}; settable: {sorted(allowed)}",
                            *sorted(unknown))
    for key, value in config.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if key == "pad_id" else 1):
            raise ArgumentError(f"{kind} setting {key} must be a positive integer, got {value!r}", key)
    return config


def tokenizers_from_meta(meta: dict[str, Any]) -> tuple[Tokenizer, Tokenizer]:
    """The tokenizers a checkpoint carries."""
    try:
        toks = meta["tokenizers"]
        return (tokenizer_from_json(toks["src"], "checkpoint source tokenizer"),
                tokenizer_from_json(toks["tgt"], "checkpoint target tokenizer"))
    except KeyError:
        raise ValueError("checkpoint holds no tokenizers (was it written by `txcourse train`?)") from None


def translate(fw: SimpleNamespace, model: Any, sources: Sequence[str], src_tok: Tokenizer, tgt_tok: Tokenizer,
              beam_size: int = 1, batch_size: int = 128, device: str = "cpu", length_penalty_alpha: float = 0.6,
              max_len: Optional[int] = None) -> list[str]:
    """Translate ``sources`` with greedy decoding (beam_size 1) or beam search.

    Each source goes through ``src_tok`` as in training (its normalisation
    included); words outside its vocabulary become ``<unk>`` (find them first
    with ``src_tok.unknown_words``). A source with no token left (empty,
    blank, or only ignored punctuation) is refused with a ValueError: the
    model would otherwise translate nothing into a confident number.
    """
    encoded = [src_tok.encode(s) for s in sources]
    for i, ids in enumerate(encoded):
        if not ids:
            raise ValueError(f"sources[{i}] = {sources[i]!r} has no words to translate; drop it from sources")
    outputs: list[str] = []
    for start in range(0, len(sources), batch_size):
        src, _ = pad_sequences(encoded[start:start + batch_size], pad_id=src_tok.pad_id)
        src_t = fw.to_tensor(src, device)
        if beam_size == 1:
            out = fw.greedy_decode(model, src_t, max_len=max_len, sos_id=tgt_tok.sos_id, eos_id=tgt_tok.eos_id,
                                   pad_id=tgt_tok.pad_id)
        else:
            out = fw.beam_search(model, src_t, beam_size=beam_size, max_len=max_len,
                                 length_penalty_alpha=length_penalty_alpha, sos_id=tgt_tok.sos_id,
                                 eos_id=tgt_tok.eos_id, pad_id=tgt_tok.pad_id)
        outputs += [tgt_tok.decode(row.tolist()) for row in fw.to_numpy(out.tokens)]
    return outputs


def evaluate(fw: SimpleNamespace, model: Any, pairs: Sequence[tuple[str, str]], src_tok: Tokenizer,
             tgt_tok: Tokenizer, beam_size: int = 1, device: str = "cpu", tokenize: str = "char") -> dict[str, Any]:
    """BLEU, chrF, exact match and accuracy by source length on ``pairs``.

    BLEU uses character tokenisation by default: Korean targets are short
    and written without spaces inside a 10^4 group.
    """
    sources, references = [s for s, _ in pairs], [t for _, t in pairs]
    hypotheses = translate(fw, model, sources, src_tok, tgt_tok, beam_size=beam_size, device=device)
    result = evaluate_translations(sources, hypotheses, references, tokenize=tokenize)
    result["hypotheses"] = hypotheses
    return result


def evaluate_by_phrasing(fw: SimpleNamespace, model: Any, splits: TranslationSplits, src_tok: Tokenizer,
                         tgt_tok: Tokenizer, count: int = 100, seed: int = DIGIT_SEED + 1, beam_size: int = 1,
                         device: str = "cpu") -> dict[str, Any]:
    """Exact match on fresh ``numbers`` written each way people write them, through what ``translate`` does.

    ``count`` numbers drawn evenly by digit count; each is written in every
    way of :data:`txcourse.data.english_numbers.VARIANTS` that applies to it
    ("one hundred five", "a thousand and one", "FORTY-TWO", "twelve hundred"),
    read back with :func:`~txcourse.data.english_numbers.canonical` as
    ``txcourse translate`` does, and translated. A phrasing the reader refuses
    counts as wrong (it would be skipped, not translated).

    Returns:
        ``{variant: LengthBucket(low digits, high digits, count, exact match)}`` for every variant that
        applied to at least one of the numbers, plus ``"refused"``: how many phrasings could not be read.
    """
    from txcourse.data import digit_count, draw_by_digit_count, numbers_to_words
    from txcourse.data.english_numbers import VARIANTS, NotANumber, canonical, variants

    meta = splits.metadata
    if meta.get("task") != "numbers":
        raise ValueError(f"evaluate_by_phrasing needs the splits of the numbers task, got task {meta.get('task')!r}")
    digits = range(digit_count(meta["low"]), digit_count(meta["high"]) + 1)
    per_count = max(1, -(-count // len(digits)))
    numbers = [n for group in draw_by_digit_count(per_count, low=meta["low"], high=meta["high"], seed=seed).values()
               for n in group][:count]
    rows: dict[str, list[tuple[int, Optional[str]]]] = {name: [] for name in VARIANTS}
    for n in numbers:
        for name, text in variants(n).items():
            try:
                rows[name].append((n, canonical(text, meta["low"], meta["high"])))
            except NotANumber:
                rows[name].append((n, None))
    result: dict[str, Any] = {"refused": sum(source is None for row in rows.values() for _, source in row)}
    for name, row in rows.items():
        if not row:
            continue
        readable = [(n, source) for n, source in row if source is not None]
        hypotheses = translate(fw, model, [source for _, source in readable], src_tok, tgt_tok, beam_size=beam_size,
                               device=device) if readable else []
        references = [numbers_to_words(n, meta["target_lang"]) for n, _ in readable]
        right = round(exact_match(hypotheses, references) * len(readable)) if readable else 0
        sizes = [digit_count(n) for n, _ in row]
        result[name] = LengthBucket(min(sizes), max(sizes), len(row), right / len(row))
    return result


def evaluate_by_digit_count(fw: SimpleNamespace, model: Any, splits: TranslationSplits, src_tok: Tokenizer,
                            tgt_tok: Tokenizer, per_count: int = 200, seed: int = DIGIT_SEED, beam_size: int = 1,
                            device: str = "cpu") -> dict[str, Any]:
    """Exact match on fresh ``numbers`` drawn by digit count, and on round numbers: what users type.

    ``per_count`` numbers of every digit count of the task's range, drawn
    with :func:`txcourse.data.draw_by_digit_count` and avoiding the training
    numbers where enough others exist (the numbers below 1000 are all in
    training by design, so their buckets repeat them); then every round
    number of the range with one or two significant digits
    (:func:`txcourse.data.round_numbers`: "one hundred thousand",
    "forty-two thousand"), which a uniform draw almost never makes.

    Args:
        splits: the task's splits (``get_task("numbers", ...)``), for its range,
            target language and training numbers.
        per_count: numbers per digit count.

    Returns:
        ``{"by_digits": [LengthBucket(d, d, count, exact match)], "seen": {d: share of
        the bucket's numbers that are in the training split}, "round": LengthBucket of the
        round numbers (low/high: their smallest and largest digit count), "exact_match": mean of
        the digit buckets, "hypotheses": {d or "round": [...]}, "numbers": {d or "round": [...]}}``.

    Example:
        >>> # result = evaluate_by_digit_count(fw, model, splits, src_tok, tgt_tok)
        >>> # [b.exact_match for b in result["by_digits"]], result["round"].exact_match
    """
    from txcourse.data import digit_count, draw_by_digit_count, numbers_to_words, round_numbers

    meta = splits.metadata
    if meta.get("task") != "numbers":
        raise ValueError(f"evaluate_by_digit_count needs the splits of the numbers task, got task "
                         f"{meta.get('task')!r}")
    train = set(meta["numbers"]["train"])
    drawn: dict[Any, list[int]] = dict(draw_by_digit_count(per_count, low=meta["low"], high=meta["high"], seed=seed,
                                                           exclude=train))
    drawn["round"] = round_numbers(meta["low"], meta["high"])
    scores, hypotheses = {}, {}
    for key, numbers in drawn.items():
        sources = [numbers_to_words(n, "en") for n in numbers]
        references = [numbers_to_words(n, meta["target_lang"]) for n in numbers]
        hypotheses[key] = translate(fw, model, sources, src_tok, tgt_tok, beam_size=beam_size, device=device)
        digits = [digit_count(n) for n in numbers]
        scores[key] = LengthBucket(min(digits), max(digits), len(numbers), exact_match(hypotheses[key], references))
    buckets = [scores[key] for key in drawn if key != "round"]
    seen = {key: sum(n in train for n in numbers) / len(numbers) for key, numbers in drawn.items()}
    return {"by_digits": buckets, "seen": seen, "round": scores["round"],
            "exact_match": float(np.mean([b.exact_match for b in buckets])), "hypotheses": hypotheses,
            "numbers": drawn}
