"""What the export tests share: the sources they translate, and both engines' outputs and log-probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np

from txcourse.data import draw_by_digit_count, get_task, numbers_to_words
from txcourse.data.batching import pad_sequences
from txcourse.decoding import never_generated
from txcourse.deploy.engine import load_exported
from txcourse.evaluation.translate import translate

NEVER = list(never_generated(1, 0))  # <pad>, <sos>, <unk>: never generated, so both engines renormalise without them


def sources(task: str, count: int, seed: int = 7) -> list[str]:
    """``count`` fresh inputs of the task: numbers of every digit count (written as the task writes them), or
    the dates of the test split (every phrasing it holds)."""
    if task == "numbers":
        drawn = draw_by_digit_count(-(-count // 6), seed=seed)
        return [numbers_to_words(n, "en") for group in drawn.values() for n in group][:count]
    return [source for source, _ in get_task("dates")["test"][:count]]


def both(fw: Any, model: Any, folder: Any, texts: list[str], **decoding: Any) -> tuple[list[str], list[str]]:
    """The translations of ``texts`` by txcourse (``fw``, ``model``) and by the exported folder, the same way."""
    engine, exported, _, src_tok, tgt_tok = load_exported(folder, threads=1)
    ours = translate(fw, model, texts, src_tok, tgt_tok, **decoding)
    theirs = translate(engine, exported, texts, src_tok, tgt_tok, **decoding)
    return ours, theirs


def differences(ours: list[str], theirs: list[str], texts: list[str]) -> list[tuple[str, str, str]]:
    return [(text, a, b) for text, a, b in zip(texts, ours, theirs) if a != b]


def log_prob_gap(torch_model: Any, folder: Any, pairs: list[tuple[str, str]]) -> float:
    """The largest |log p_txcourse - log p_CTranslate2| of a target token (teacher forcing, <eos> included).

    txcourse's log-probabilities are those its decoders choose from: the softmax over the tokens it may
    generate (NEVER excluded), which is what the exported -1e9 bias gives CTranslate2.
    """
    import torch

    _, exported, _, src_tok, tgt_tok = load_exported(folder, threads=1)
    src = [src_tok.encode(s) for s, _ in pairs]
    tgt = [tgt_tok.encode(t)[: exported.config.max_len - 1] for _, t in pairs]  # room for <eos>
    scored = exported.translator.score_batch(
        [[src_tok.vocab[i] for i in row] for row in src], [[tgt_tok.vocab[i] for i in row] for row in tgt]
    )
    src_ids, _ = pad_sequences(src, pad_id=0)
    tgt_in, _ = pad_sequences([[1] + row for row in tgt], pad_id=0)
    torch_model.eval()
    with torch.no_grad():
        logits = torch_model(torch.tensor(src_ids), torch.tensor(tgt_in)).float()  # (B, T, V)
    logits[..., NEVER] = -float("inf")
    log_probs = torch.log_softmax(logits, dim=-1).numpy()  # (B, T, V)
    gaps = [
        np.abs(log_probs[row, np.arange(len(ids) + 1), ids + [2]] - np.asarray(result.log_probs)).max()
        for row, (ids, result) in enumerate(zip(tgt, scored))
    ]
    return float(max(gaps))
