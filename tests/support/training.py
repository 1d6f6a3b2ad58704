"""What the Trainer and decoding tests share: tiny copy-task data and configs (public names: import them)."""

from __future__ import annotations

import importlib

import numpy as np
from conftest import Framework
from support.configs import tiny_config

from txcourse.data import WordTokenizer, encode_pairs, get_task
from txcourse.training import TrainConfig


def module(fw: Framework | str, stem: str):
    """The module ``stem`` of a half: ``module("torch", "decode")`` is txcourse.torch.decode."""
    name = fw if isinstance(fw, str) else fw.name
    return importlib.import_module(f"txcourse.{name}.{stem}")


def weights(fw_name: str, model) -> dict[str, np.ndarray]:
    """Every weight (and, in Keras, every dropout seed state) as NumPy, by position."""
    if fw_name == "torch":
        return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    return {f"{i:04d}:{v.path}": np.asarray(v.numpy()).copy() for i, v in enumerate(model.variables)}


def copy_data(vocab: str = "abcdefgh", min_len: int = 2, max_len: int = 6, n: int = 1000):
    """A word tokenizer and the encoded training pairs of a copy task of ``n`` pairs."""
    splits = get_task("copy", vocab=vocab, min_len=min_len, max_len=max_len, sizes=(n, 4, 4))
    tok = WordTokenizer.fit([s for s, _ in splits.train])
    return tok, encode_pairs(splits.train, tok, tok)


def tiny_config_dict(vocab_size: int, **changes) -> dict:
    """:func:`support.configs.tiny_config` as the dict a Trainer and a checkpoint take."""
    return tiny_config(vocab_size, **changes).to_dict()


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
