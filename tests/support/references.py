"""Inputs and float64 references more than one suite uses."""

from __future__ import annotations

import numpy as np


def formula(max_len: int, d_model: int) -> np.ndarray:
    """The formula of Sec. 3.5 (unnumbered in the paper), written out position by position in float64."""
    table = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for j in range(d_model):
            i = j // 2  # dimensions 2i and 2i+1 share the frequency 1 / 10000^(2i / d_model)
            angle = pos / 10000 ** (2 * i / d_model)
            table[pos, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return table


def inputs(cfg, seed: int = 0) -> dict[str, np.ndarray]:
    """Batch of 3, source length 7, target length 5, with right-padding in some rows."""
    rng = np.random.default_rng(seed)
    src = rng.integers(1, cfg.src_vocab_size, size=(3, 7))
    src[1, 5:] = cfg.pad_id
    src[2, 2:] = cfg.pad_id
    tgt = rng.integers(1, cfg.tgt_vocab_size, size=(3, 5))
    tgt[2, 3:] = cfg.pad_id
    return {
        "src": src,
        "tgt": tgt,
        "x": rng.normal(size=(3, 5, cfg.d_model)).astype(np.float32),
        "memory": rng.normal(size=(3, 7, cfg.d_model)).astype(np.float32),
        "state": rng.normal(size=(3, 16)).astype(np.float32),
        "values": rng.normal(size=(3, 7, 16)).astype(np.float32),
    }
