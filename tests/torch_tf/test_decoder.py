"""The decoder of both halves (week 5): no position sees the future, and the cache changes nothing.

Every test body runs once per framework (the ``fw`` fixture). Decoding with it: tests/torch_tf/test_decode.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, small_config

TGT = np.array([[1, 7, 4, 9, 12, 3], [1, 5, 5, 8, 2, 6]])


def _decoder_and_memory(fw, **changes):
    config = small_config(dropout=0.0, **changes)
    rng = np.random.default_rng(0)
    memory = fw.tensor(rng.standard_normal((2, 5, config.d_model)).astype(np.float32))  # (B, T_src, D)
    if fw.name == "torch":
        import torch

        torch.manual_seed(0)
    else:
        import keras

        keras.utils.set_random_seed(0)
    return fw.eval(fw.module.Decoder(config)), memory


@pytest.mark.parametrize("norm_first", [False, True])
def test_no_position_sees_a_later_token(fw, norm_first):
    """Changing the token at position t leaves every output before t as it was (the look-ahead mask, Sec. 3.2.3)."""
    decoder, memory = _decoder_and_memory(fw, norm_first=norm_first)
    mask = fw.module.look_ahead_mask(TGT.shape[1])
    base = fw.numpy(decoder(fw.tensor(TGT), memory, mask))
    for t in range(1, TGT.shape[1]):
        edited = TGT.copy()
        edited[:, t] = 17
        out = fw.numpy(decoder(fw.tensor(edited), memory, mask))
        assert_close(out[:, :t], base[:, :t], 1e-5, f"positions before {t} after editing token {t}")
        assert np.abs(out[:, t] - base[:, t]).max() > 1e-4, f"position {t} must see its own token"


def test_without_the_mask_the_future_leaks(fw):
    decoder, memory = _decoder_and_memory(fw)
    edited = TGT.copy()
    edited[:, -1] = 17
    before = fw.numpy(decoder(fw.tensor(TGT), memory))[:, 0]
    after = fw.numpy(decoder(fw.tensor(edited), memory))[:, 0]
    assert np.abs(after - before).max() > 1e-4


@pytest.mark.parametrize("norm_first", [False, True])
def test_one_token_at_a_time_with_the_cache_equals_the_whole_sequence(fw, norm_first):
    decoder, memory = _decoder_and_memory(fw, norm_first=norm_first)
    whole = fw.numpy(decoder(fw.tensor(TGT), memory, fw.module.look_ahead_mask(TGT.shape[1])))
    cache = decoder.init_cache(memory)
    steps = []
    for t in range(TGT.shape[1]):
        out = decoder(fw.tensor(TGT[:, t : t + 1]), memory, cache=cache)
        cache = out.cache
        steps.append(fw.numpy(out.output))
        assert fw.numpy(cache[0].self_attn.key).shape[2] == t + 1, "the self-attention cache grows by one"
    assert_close(np.concatenate(steps, axis=1), whole, 1e-5, "cached steps vs the whole sequence")


def test_a_cache_of_the_wrong_length_is_refused(fw):
    decoder, memory = _decoder_and_memory(fw)
    cache = decoder.init_cache(memory)
    with pytest.raises(ValueError, match=r"cache must be a tuple of 2 DecoderLayerCache .* got a tuple of 1"):
        decoder(fw.tensor(TGT[:, :1]), memory, cache=cache[:1])
