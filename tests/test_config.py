"""TransformerConfig: the paper's base model by default, invalid values rejected at construction."""

import dataclasses

import pytest

from txcourse import TransformerConfig


def test_defaults_are_the_base_model():
    cfg = TransformerConfig()
    assert (cfg.d_model, cfg.num_heads, cfg.num_encoder_layers, cfg.num_decoder_layers, cfg.d_ff, cfg.dropout) \
        == (512, 8, 6, 6, 2048, 0.1)
    assert cfg.d_k == 64
    assert cfg.norm_first is False  # post-LN, as in the paper


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TransformerConfig().d_model = 256


@pytest.mark.parametrize("field, value, message", [
    ("d_model", 0, r"TransformerConfig\.d_model must be an integer >= 1, got 0"),
    ("d_model", 12.0, r"TransformerConfig\.d_model must be an integer >= 1, got 12\.0"),
    ("num_heads", -2, r"TransformerConfig\.num_heads must be an integer >= 1, got -2"),
    ("d_ff", True, r"TransformerConfig\.d_ff must be an integer >= 1, got True"),
    ("num_encoder_layers", -1, r"TransformerConfig\.num_encoder_layers must be an integer >= 0, got -1"),
    ("max_len", 0, r"TransformerConfig\.max_len must be an integer >= 1, got 0"),
    ("src_vocab_size", 0, r"TransformerConfig\.src_vocab_size must be an integer >= 1, got 0"),
    ("dropout", 1.0, r"TransformerConfig\.dropout must be a probability in \[0, 1\), got 1\.0"),
    ("dropout", -0.1, r"TransformerConfig\.dropout must be a probability in \[0, 1\), got -0\.1"),
    ("layer_norm_eps", 0.0, r"TransformerConfig\.layer_norm_eps must be a positive finite number such as 1e-6, got 0\.0"),
    ("layer_norm_eps", float("inf"), r"TransformerConfig\.layer_norm_eps must be a positive finite number .*got inf"),
    ("layer_norm_eps", float("nan"), r"TransformerConfig\.layer_norm_eps must be a positive finite number .*got nan"),
    ("norm_first", "yes", r"TransformerConfig\.norm_first must be True or False, got 'yes'"),
    ("tie_embeddings", 1, r"TransformerConfig\.tie_embeddings must be True or False, got 1"),
    ("num_heads", 7, r"d_model \(512\) must be divisible by num_heads \(7\).*num_heads=8"),
    ("pad_id", 37000, r"pad_id \(37000\) must be a token id below both vocabulary sizes"),
])
def test_invalid_values_raise_naming_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        TransformerConfig(**{field: value})


def test_replace_validates_and_rejects_unknown_fields():
    cfg = TransformerConfig(d_model=64, num_heads=4)
    assert cfg.replace(d_ff=128).d_ff == 128
    with pytest.raises(ValueError, match=r"must be divisible"):
        cfg.replace(num_heads=5)
    with pytest.raises(ValueError, match=r"no field\(s\) \['heads'\]"):
        cfg.replace(heads=2)


def test_dict_round_trip():
    cfg = TransformerConfig(d_model=64, num_heads=4, norm_first=True)
    assert TransformerConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['bogus'\]"):
        TransformerConfig.from_dict({**cfg.to_dict(), "bogus": 1})
