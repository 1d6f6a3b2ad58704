"""What the Trainer and decoding tests share: tiny copy-task data and configs."""

from __future__ import annotations

import importlib

import numpy as np
from conftest import Framework

from txcourse.config import TransformerConfig
from txcourse.data import WordTokenizer, encode_pairs, get_task
from txcourse.training import TrainConfig


def _module(fw: Framework | str, stem: str):
    name = fw if isinstance(fw, str) else fw.name
    return importlib.import_module(f"txcourse.{name}.{stem}")


def _weights(fw_name: str, model) -> dict[str, np.ndarray]:
    """Every weight (and, in Keras, every dropout seed state) as NumPy, by position."""
    if fw_name == "torch":
        return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    return {f"{i:04d}:{v.path}": np.asarray(v.numpy()).copy() for i, v in enumerate(model.variables)}


def _copy_data(vocab: str = "abcdefgh", min_len: int = 2, max_len: int = 6, n: int = 1000):
    splits = get_task("copy", vocab=vocab, min_len=min_len, max_len=max_len, sizes=(n, 4, 4))
    tok = WordTokenizer.fit([s for s, _ in splits.train])
    return tok, encode_pairs(splits.train, tok, tok)


def _tiny_config(vocab_size: int, **changes) -> dict:
    base = dict(
        src_vocab_size=vocab_size,
        tgt_vocab_size=vocab_size,
        d_model=16,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        dropout=0.1,
        max_len=16,
    )
    base.update(changes)
    return TransformerConfig(**base).to_dict()


SCENARIO_CONFIG = TrainConfig(
    steps=6,
    batch_size=8,
    warmup_steps=4,
    cooldown_steps=3,
    lr_factor=1.0,
    log_every=1,
    progress=False,
    device="cpu",
    seed=0,
)
