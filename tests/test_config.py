"""TransformerConfig: the paper's base model by default, invalid values rejected at construction."""

import dataclasses

import pytest

from txcourse import TransformerConfig


def test_defaults_are_the_base_model():
    cfg = TransformerConfig()
    assert (cfg.d_model, cfg.num_heads, cfg.num_encoder_layers, cfg.num_decoder_layers, cfg.d_ff, cfg.dropout) == (
        512,
        8,
        6,
        6,
        2048,
        0.1,
    )
    assert cfg.d_k == 64
    assert cfg.norm_first is False  # post-LN, as in the paper


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        TransformerConfig().d_model = 256


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("d_model", 0, r"TransformerConfig\.d_model must be an integer >= 1, got 0"),
        ("d_model", 12.0, r"TransformerConfig\.d_model must be an integer >= 1, got 12\.0"),
        ("num_heads", -2, r"TransformerConfig\.num_heads must be an integer >= 1, got -2"),
        ("d_ff", True, r"TransformerConfig\.d_ff must be an integer >= 1, got True"),
        ("num_encoder_layers", -1, r"TransformerConfig\.num_encoder_layers must be an integer >= 0, got -1"),
        ("max_len", 0, r"TransformerConfig\.max_len must be an integer >= 1, got 0"),
        ("src_vocab_size", 0, r"TransformerConfig\.src_vocab_size must be an integer >= 1, got 0"),
        ("dropout", 1.0, r"TransformerConfig\.dropout must be a probability in \[0, 1\), got 1\.0"),
        ("dropout", -0.1, r"TransformerConfig\.dropout must be a probability in \[0, 1\), got -0\.1"),
        (
            "layer_norm_eps",
            0.0,
            r"TransformerConfig\.layer_norm_eps must be a positive finite number such as 1e-6, got 0\.0",
        ),
        (
            "layer_norm_eps",
            float("inf"),
            r"TransformerConfig\.layer_norm_eps must be a positive finite number .*got inf",
        ),
        (
            "layer_norm_eps",
            float("nan"),
            r"TransformerConfig\.layer_norm_eps must be a positive finite number .*got nan",
        ),
        ("norm_first", "yes", r"TransformerConfig\.norm_first must be True or False, got 'yes'"),
        ("tie_embeddings", 1, r"TransformerConfig\.tie_embeddings must be True or False, got 1"),
        ("num_heads", 7, r"d_model \(512\) must be divisible by num_heads \(7\).*num_heads=8"),
        ("pad_id", 37000, r"pad_id \(37000\) must be a token id below both vocabulary sizes"),
    ],
)
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


@pytest.mark.parametrize(
    "changes, arguments",
    [
        ({"dropout": 1.0}, ("dropout",)),
        ({"d_ff": 0}, ("d_ff",)),
        ({"fused": 1}, ("fused",)),
        ({"d_model": 30, "num_heads": 4}, ("num_heads", "d_model")),
        ({"pad_id": 40000}, ("pad_id", "src_vocab_size", "tgt_vocab_size")),
    ],
)
def test_errors_name_their_fields_as_data(changes, arguments):
    """The message is a plain ValueError's; ``.arguments`` names the fields, for a caller that maps them to its
    own inputs (the command line: ``--set FIELD=...``) without reading the message."""
    import pickle

    from txcourse._validation import ArgumentError

    with pytest.raises(ArgumentError) as err:
        TransformerConfig(**changes)
    assert isinstance(err.value, ValueError) and err.value.arguments == arguments
    assert str(err.value).startswith("TransformerConfig.")
    copy = pickle.loads(pickle.dumps(err.value))  # e.g. from a worker process
    assert (str(copy), copy.arguments) == (str(err.value), arguments)
    with pytest.raises(ArgumentError) as err:
        TransformerConfig.from_dict({"d_model": 64, "bogus": 1, "another": 2})
    assert err.value.arguments == ("another", "bogus")


# --- Configuration flows once (issue 31): a setting lives in the config, the layer that reads it, the converter ---

# Fields of TransformerConfig that no layer reads (none today): a new field is either read by a layer of both halves
# or listed here with the reason, so that a setting added to the config cannot be silently ignored by the model.
NOT_LAYER_SETTINGS: dict[str, str] = {}


def _config_reads(framework: str) -> set[str]:
    """The fields the layers of one half read from a config: ``config.X`` and ``self.config.X`` in its modules."""
    import ast
    import pathlib

    import txcourse

    reads = set()
    for path in (pathlib.Path(txcourse.__file__).parent / framework).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and (
                (isinstance(node.value, ast.Name) and node.value.id == "config")
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "config")
            ):
                reads.add(node.attr)
    return reads


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_every_field_is_read_by_a_layer_or_listed(framework):
    fields = {f.name for f in dataclasses.fields(TransformerConfig)}
    reads = _config_reads(framework)
    unread = fields - reads - set(NOT_LAYER_SETTINGS)
    assert not unread, f"TransformerConfig fields no {framework} layer reads: {sorted(unread)}"
    assert not set(NOT_LAYER_SETTINGS) & reads, "listed as not a layer setting, yet read by a layer"


def test_both_halves_read_the_same_fields():
    fields = {f.name for f in dataclasses.fields(TransformerConfig)} | {"d_k", "kv_heads"}
    assert _config_reads("torch") & fields == _config_reads("tf") & fields


def test_the_converter_classifies_every_field():
    """The converter refuses two models whose configs differ in a field that changes their function: every field
    either changes it (the default) or is named in SAME_FUNCTION_FIELDS; a typo there would be a field that is not."""
    from txcourse.convert import SAME_FUNCTION_FIELDS

    assert set(SAME_FUNCTION_FIELDS) <= {f.name for f in dataclasses.fields(TransformerConfig)}


def test_kv_heads_is_num_heads_unless_set():
    assert TransformerConfig(num_heads=8).kv_heads == 8
    assert TransformerConfig(num_heads=8, num_kv_heads=2).kv_heads == 2


@pytest.mark.parametrize("framework", ["torch", "tf"])
def test_a_checkpoint_round_trips_every_field(framework, tmp_path):
    """Every field, each away from its default, survives a checkpoint: saved in the header, read back into the
    same config object, and the loaded model built from it."""
    import importlib

    pytest.importorskip("torch" if framework == "torch" else "tensorflow")
    from txcourse.training.config import TrainConfig

    train = importlib.import_module(f"txcourse.{framework}.train")
    cfg = TransformerConfig(
        src_vocab_size=11,
        tgt_vocab_size=13,
        d_model=8,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=2,
        d_ff=12,
        dropout=0.2,
        max_len=10,
        pad_id=0,  # the batching pads with 0: the one field kept at its default
        norm_first=True,
        tie_embeddings=False,
        layer_norm_eps=1e-5,
        fused=True,
        positions="rope",
        num_kv_heads=2,
    )
    defaults = TransformerConfig()
    same = {f.name for f in dataclasses.fields(cfg) if getattr(cfg, f.name) == getattr(defaults, f.name)}
    assert same == {"pad_id"}, same
    train.set_seed(0)
    model = train.build_model("transformer", cfg.to_dict())
    trainer = train.Trainer(
        model,
        "transformer",
        cfg.to_dict(),
        [([3, 4], [5, 6])] * 4,
        TrainConfig(steps=1, batch_size=2, progress=False, device="cpu"),
    )
    trainer.save(str(tmp_path / "every_field.npz"))
    loaded, header = train.load_model(str(tmp_path / "every_field.npz"))
    assert TransformerConfig.from_dict(header["model"]["config"]) == cfg
    assert loaded.config == cfg
