"""Week 2: sinusoidal positional encoding against the paper's formula."""

import numpy as np
import pytest
from conftest import assert_close
from support.references import formula


@pytest.mark.parametrize("d_model", [1, 2, 3, 4, 7, 16, 63, 128])
def test_matches_formula_at_every_position_and_dimension(fw, d_model):
    table = fw.numpy(fw.module.positional_encoding(50, d_model))
    assert table.shape == (50, d_model)
    assert table.dtype == np.float32
    # float32 rounding of values in [-1, 1] is at most 6e-8
    assert_close(table, formula(50, d_model), atol=1e-7, what=f"PE table d_model={d_model}")


def test_position_zero_is_sin0_cos0(fw):
    table = fw.numpy(fw.module.positional_encoding(3, 6))
    assert table[0].tolist() == [0, 1, 0, 1, 0, 1]


@pytest.mark.parametrize("d_model", [4, 16, 64])
def test_distance_depends_only_on_offset(fw, d_model):
    """||PE(p + k) - PE(p)||^2 = sum_i 2 - 2 cos(k w_i), whatever p is."""
    dtype = fw.lib.float64
    table = fw.numpy(fw.module.positional_encoding(60, d_model, dtype=dtype))
    for k in (1, 2, 5, 17):
        distances = np.linalg.norm(table[k:] - table[:-k], axis=1)
        assert distances.max() - distances.min() < 1e-9, f"offset {k}: distances vary by {np.ptp(distances)}"
        omega = 1 / 10000 ** (2 * np.arange(d_model // 2) / d_model)
        assert np.isclose(distances[0], np.sqrt(np.sum(2 - 2 * np.cos(k * omega))))


def test_layer_adds_the_table_for_the_sequence_length(fw):
    """Shorter and longer sequences than the width: the table is sliced by length (errata E2)."""
    layer = fw.module.PositionalEncoding(max_len=40, d_model=8)
    table = formula(40, 8)
    for length in (5, 8, 13):
        x = np.random.default_rng(length).normal(size=(2, length, 8)).astype(np.float32)
        out = fw.numpy(layer(fw.tensor(x)))
        assert_close(
            out - x, np.broadcast_to(table[:length], (2, length, 8)), atol=1e-6, what=f"PE added for T={length}"
        )


def test_rejects_nonpositive_sizes(fw):
    with pytest.raises(ValueError, match=r"d_model must be a positive integer, got 0"):
        fw.module.positional_encoding(10, 0)
    with pytest.raises(ValueError, match=r"max_len must be a positive integer, got -1"):
        fw.module.positional_encoding(-1, 4)
