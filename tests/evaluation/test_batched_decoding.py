"""translate's batched greedy decoding (issue 34, item 4) gives exactly the tokens of a straightforward reference.

The reference is the plain loop: the sources in their given order, in batches of 128 (translate's batch size before
issue 34), each decoded without the key/value cache (the whole prefix recomputed at every step, the slow way kept to
compare). translate sorts the sources by length, decodes batches of BATCH_SIZE (1024) with the cache (its memory
keys and values made contiguous once) in inference mode and puts the outputs back in order: every output must be
the reference's, on fresh numbers and on the dates test split, with the shipped checkpoints in both frameworks
(TensorFlow: their converted twin).
"""

from __future__ import annotations

import numpy as np
import pytest
from support.checkpoints import BOOK_DATA, tf_twin

from txcourse.backends import backend
from txcourse.data.batching import pad_sequences
from txcourse.data.prepare import tokenizers_from_meta
from txcourse.evaluation.translate import BATCH_SIZE, SAMPLING_BATCH_SIZE, translate
from txcourse.registry import FRAMEWORKS

COUNT = 2000  # inputs per checkpoint


def _reference(fw, model, sources, src_tok, tgt_tok, batch_size=128):
    """Greedy decoding the plain way: given order, batches of ``batch_size``, no cache."""
    outputs = []
    for start in range(0, len(sources), batch_size):
        src, _ = pad_sequences([src_tok.encode(s) for s in sources[start : start + batch_size]], src_tok.pad_id)
        out = fw.greedy_decode(model, fw.to_tensor(src), use_cache=False)
        outputs += [tgt_tok.decode(row.tolist()) for row in fw.to_numpy(out.tokens)]
    return outputs


def _sources(task: str, meta: dict) -> list[str]:
    """COUNT fresh numbers in words (seeded), or the first COUNT sources of the dates test split."""
    if task == "numbers":
        from txcourse.data.numbers import numbers_to_words

        numbers = np.random.default_rng(34).integers(0, 1_000_000, size=COUNT)
        return [numbers_to_words(int(n), "en") for n in numbers]
    from txcourse.data import get_task

    splits = get_task(meta["task"]["name"], **meta["task"]["kwargs"])
    return [source for source, _ in splits.test[:COUNT]]


@pytest.fixture(scope="module")
def models(tmp_path_factory, one_torch_thread):
    """(framework, task) -> (backend, model, meta): the shipped Transformers and their TensorFlow twins, lazily."""
    built = {}

    def get(framework, task):
        if (framework, task) not in built:
            path = BOOK_DATA / f"{task}-transformer-torch.npz"
            if framework == "tf":
                path = tf_twin(path, tmp_path_factory.mktemp("tf") / f"{task}-tf.npz")
            fw = backend(framework)
            built[framework, task] = (fw, *fw.load_model(str(path)))
        return built[framework, task]

    return get


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("task", ["numbers", "dates"])
def test_translate_gives_the_reference_tokens(models, framework, task):
    fw, model, meta = models(framework, task)
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    sources = _sources(task, meta)
    assert len(sources) == COUNT and len({len(src_tok.encode(s)) for s in sources}) > 3  # lengths to sort
    expected = _reference(fw, model, sources, src_tok, tgt_tok)
    got = translate(fw, model, sources, src_tok, tgt_tok)
    wrong = [(s, g, e) for s, g, e in zip(sources, got, expected) if g != e]
    assert not wrong, f"{len(wrong)} of {COUNT} outputs differ from the reference, e.g. {wrong[:3]}"
    assert BATCH_SIZE > 128 and len(set(expected)) > COUNT // 4  # a larger batch; outputs, not one repeated


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_translate_keeps_the_order_of_its_sources(models, framework):
    """Sorted by length inside, the outputs come back in the order given: the same list, reversed, reverses."""
    fw, model, meta = models(framework, "numbers")
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    sources = ["seven", "one hundred twenty-three thousand four hundred fifty-six", "forty-two", "nine hundred"]
    forward = translate(fw, model, sources, src_tok, tgt_tok, batch_size=3)
    assert translate(fw, model, sources[::-1], src_tok, tgt_tok, batch_size=3) == forward[::-1]
    assert forward == [translate(fw, model, [s], src_tok, tgt_tok)[0] for s in sources]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_sampling_keeps_the_order_and_its_batches_seeds(models, framework):
    """Sampling is not sorted: batch k of SAMPLING_BATCH_SIZE sources, in the given order, draws with seed + k."""
    fw, model, meta = models(framework, "numbers")
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    sources = _sources("numbers", meta)[: SAMPLING_BATCH_SIZE + 20]
    got = translate(fw, model, sources, src_tok, tgt_tok, sampling={"temperature": 2.0, "seed": 5})
    expected = []
    for k, start in enumerate(range(0, len(sources), SAMPLING_BATCH_SIZE)):
        src, _ = pad_sequences([src_tok.encode(s) for s in sources[start : start + SAMPLING_BATCH_SIZE]], 0)
        out = fw.sample_decode(model, fw.to_tensor(src), temperature=2.0, seed=5 + k)
        expected += [tgt_tok.decode(row.tolist()) for row in fw.to_numpy(out.tokens)]
    assert got == expected


@pytest.mark.parametrize("batch_size", [0, -1, 2.0])
def test_translate_refuses_a_batch_size_that_is_not_a_positive_integer(models, batch_size):
    fw, model, meta = models("torch", "numbers")
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    with pytest.raises(ValueError, match=rf"batch_size must be a positive integer, got {batch_size!r}"):
        translate(fw, model, ["seven"], src_tok, tgt_tok, batch_size=batch_size)
