"""Every Transformer setting CTranslate2 can express exports with txcourse's outputs (issue 34).

A tiny model of each setting is trained for a few steps in the test (``txcourse train``, the numbers task),
exported, and decoded by both engines: the greedy outputs of 300 fresh numbers are equal, and the
teacher-forced log-probabilities agree within 1e-4. A few steps leave the model far from trained, so many
outputs run to the step limit: that limit (2 T_src + 10 within max_len) is the same in both engines too.
"""

from __future__ import annotations

import pytest
from support.configs import tiny_model_args
from support_deploy import both, differences, log_prob_gap, sources

from txcourse.backends import backend
from txcourse.cli import main
from txcourse.deploy.ctranslate2 import export_ctranslate2

SETTINGS = {
    "sinusoidal post-LN tied": {},
    "learned positions": {"positions": "learned"},
    "rope": {"positions": "rope"},
    "grouped-query (1 kv head)": {"num_kv_heads": 1},
    "pre-LN": {"norm_first": True},
    "untied output": {"tie_embeddings": False},
}
TF_SETTING = {"positions": "learned", "norm_first": True, "tie_embeddings": False, "num_kv_heads": 1}


def _train(out, framework: str, setting: dict) -> object:
    args = tiny_model_args(max_len=32, **setting)
    code = main(
        [
            "train",
            "--framework",
            framework,
            "--task",
            "numbers",
            "--task-arg",
            "sizes=(2100,6,12)",
            "--steps",
            "6",
            "--batch-size",
            "16",
            "--no-progress",
            "--out",
            str(out),
            *args,
        ]
    )
    assert code == 0
    return out / "model.npz"


def _check(tmp_path, framework: str, setting: dict) -> None:
    checkpoint = _train(tmp_path / "run", framework, setting)
    folder = export_ctranslate2(checkpoint, tmp_path / "exported")
    fw = backend(framework)
    model, meta = fw.load_model(str(checkpoint))
    assert all(meta["model"]["config"][key] == value for key, value in setting.items())
    texts = sources("numbers", 300)
    ours, theirs = both(fw, model, folder, texts)
    assert differences(ours, theirs, texts) == [], differences(ours, theirs, texts)[:3]
    if framework == "torch":
        assert log_prob_gap(model, folder, list(zip(texts[:64], ours[:64]))) < 1e-4


@pytest.mark.parametrize("setting", list(SETTINGS.values()), ids=list(SETTINGS))
def test_torch_setting_exports_with_txcourse_outputs(tmp_path, capsys, setting):
    _check(tmp_path, "torch", setting)


def test_tf_model_with_every_weight_kind_exports_with_txcourse_outputs(tmp_path, capsys):
    """TensorFlow: a learned table, pre-LN final norms, an untied projection and grouped keys, read from Keras."""
    _check(tmp_path, "tf", TF_SETTING)
