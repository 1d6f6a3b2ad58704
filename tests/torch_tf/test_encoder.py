"""The encoder of both halves (week 4): shapes, attention weights as outputs, and padding that changes nothing.

Every test body runs once per framework (the ``fw`` fixture). Parity between the halves: tests/parity/.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, small_config

SRC = np.array([[5, 9, 3, 7, 11, 4], [8, 8, 6, 3, 0, 0]])  # pad_id 0


def _encoder(fw, **changes):
    if fw.name == "torch":
        import torch

        torch.manual_seed(0)
    else:
        import keras

        keras.utils.set_random_seed(0)
    return fw.eval(fw.module.Encoder(small_config(dropout=0.0, **changes)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_shapes_and_one_attention_map_per_layer(fw, norm_first):
    encoder = _encoder(fw, norm_first=norm_first)
    config = encoder.config
    mask = fw.module.padding_mask(fw.tensor(SRC))
    out = encoder(fw.tensor(SRC), mask, return_weights=True)
    assert fw.numpy(out.output).shape == (2, 6, config.d_model)
    assert out.cache is None and len(out.weights) == config.num_encoder_layers
    for weights in out.weights:
        w = fw.numpy(weights)  # (B, H, T_src, T_src)
        assert w.shape == (2, config.num_heads, 6, 6)
        assert_close(w.sum(-1), np.ones((2, config.num_heads, 6)), 1e-5, "each query's weights sum to 1")
        assert np.all(w[1, :, :, 4:] == 0), "no query attends to a padded key"


def test_plain_call_returns_the_output_alone(fw):
    encoder = _encoder(fw)
    tokens = fw.tensor(SRC)
    mask = fw.module.padding_mask(tokens)
    assert_close(
        fw.numpy(encoder(tokens, mask)),
        fw.numpy(encoder(tokens, mask, return_weights=True).output),
        0.0,
        "the output with and without the weights",
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_more_padding_changes_no_real_position(fw, norm_first):
    """Masked keys get weight 0, so padding a sentence further leaves its real positions as they were."""
    encoder = _encoder(fw, norm_first=norm_first)
    short = SRC[1:, :4]  # (1, 4), no padding
    padded = np.concatenate([short, np.zeros((1, 5), dtype=short.dtype)], axis=1)  # (1, 9)
    out_short = fw.numpy(encoder(fw.tensor(short), fw.module.padding_mask(fw.tensor(short))))
    out_padded = fw.numpy(encoder(fw.tensor(padded), fw.module.padding_mask(fw.tensor(padded))))
    assert_close(out_padded[:, :4], out_short, 1e-5, "real positions with five more pads")


def test_without_the_mask_padding_leaks_in(fw):
    """The check above can fail: without the padding mask, the pads do change the real positions."""
    encoder = _encoder(fw)
    short = SRC[1:, :4]
    padded = np.concatenate([short, np.zeros((1, 5), dtype=short.dtype)], axis=1)
    out_short = fw.numpy(encoder(fw.tensor(short)))
    out_padded = fw.numpy(encoder(fw.tensor(padded)))
    assert np.abs(out_padded[:, :4] - out_short).max() > 1e-3
