"""txcourse.course.artefacts and book/_ext/artefact_values.py: the numbers the prose states about the shipped
checkpoint are read from it at build time, and the week-6 pages state none by hand."""

import importlib.util
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from txcourse.course import artefacts

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / artefacts.TRANSFORMER_CHECKPOINT
HISTORY = ROOT / artefacts.TRANSFORMER_HISTORY
# The pages whose every number about the shipped model must be a {{ tx_... }} substitution.
PAGES = ["book/week6_training.md", "book/week6_decoding.md"]
WEEK1 = "book/week1_seq2seq.md"  # its accuracy-by-length numbers come from benchmarks/results/length_curves.json
# Values too common to police (4 heads, 2 layers, seed 0, eps 0.1 is also the paper's, factor 0.5, ...).
GENERIC = {
    "tx_num_heads",
    "tx_encoder_layers",
    "tx_decoder_layers",
    "tx_seed",
    "tx_smoothing",
    "tx_lr_factor",
    "tx_log_every",
    "tx_logged_steps",
    "tx_tgt_vocab_minus_1",
    "tx_peak_step",
}
# Numbers that equal a shipped value by coincidence: (page, the exact text, why it is not about the artefact).
COINCIDENCES = [
    ("book/week6_training.md", r"$512^{-0.5} \cdot 4000^{-0.5}", "the paper's base model, d_model 512"),
    ("book/week6_training.md", "checkpoints 400 steps apart", "earlier runs without a cool-down"),
    ("book/week6_decoding.md", "at 16, 64 and\n128 output tokens", "benchmarks/decode_cache.py's output lengths"),
]


def _meta() -> dict:
    """The checkpoint's header, read here with numpy alone (not through txcourse)."""
    with np.load(CHECKPOINT, allow_pickle=False) as z:
        return json.loads(bytes(z["__meta__"]).decode("utf-8"))


def _history() -> list[dict]:
    return [json.loads(line) for line in HISTORY.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_values_are_the_artefacts():
    meta, history = _meta(), _history()
    cfg, train = meta["model"]["config"], meta["train_config"]
    values = artefacts.book_values(ROOT)
    assert all(name.startswith(artefacts.PREFIX) for name in values)
    expected = {
        "tx_d_model": cfg["d_model"],
        "tx_d_ff": cfg["d_ff"],
        "tx_num_heads": cfg["num_heads"],
        "tx_tgt_vocab": cfg["tgt_vocab_size"],
        "tx_src_vocab": cfg["src_vocab_size"],
        "tx_steps": meta["step"],
        "tx_batch_size": train["batch_size"],
        "tx_warmup": train["warmup_steps"],
        "tx_cooldown": train["cooldown_steps"],
        "tx_cooldown_start": train["steps"] - train["cooldown_steps"],
        "tx_seed": train["seed"],
    }
    for name, value in expected.items():
        assert values[name] == str(value), (name, values[name], value)
    assert float(values["tx_smoothing"]) == train["label_smoothing"]
    assert float(values["tx_lr_factor"]) == train["lr_factor"]
    assert float(values["tx_final_loss"]) == pytest.approx(history[-1]["loss"], abs=5e-4)
    assert float(values["tx_min_loss"]) == pytest.approx(min(r["loss"] for r in history), abs=5e-4)
    logged = {r["step"]: r["lr"] for r in history}
    peak_step = int(values["tx_peak_step"])
    assert peak_step == train["warmup_steps"] and peak_step in logged
    assert float(values["tx_peak_lr"]) == pytest.approx(logged[peak_step], rel=5e-3)
    assert max(logged.values()) <= logged[peak_step]
    assert float(values["tx_final_lr"]) == pytest.approx(logged[train["steps"]], rel=5e-2)


def test_validation_values_are_the_history():
    """The validation numbers week 6 states, recomputed here from the raw history lines."""
    meta, history = _meta(), _history()
    values = artefacts.book_values(ROOT)
    start = meta["train_config"]["steps"] - meta["train_config"]["cooldown_steps"]
    losses = [(r["step"], r["valid_loss"]) for r in history]
    assert len(losses) == len(history), "every logged record holds a validation loss"
    assert float(values["tx_final_valid_loss"]) == pytest.approx(losses[-1][1], abs=5e-5)
    assert float(values["tx_final_valid_accuracy"]) == pytest.approx(100 * history[-1]["valid_accuracy"], abs=5e-3)
    best = min(losses, key=lambda sl: sl[1])
    assert values["tx_min_valid_step"] == str(best[0])
    assert float(values["tx_min_valid_loss"]) == pytest.approx(best[1], abs=5e-5)
    assert values["tx_valid_below_train"] == str(sum(r["valid_loss"] < r["loss"] for r in history))
    rises = [(b[0], b[1] - a[1]) for a, b in zip(losses, losses[1:])]
    warm = max((r for r in rises if r[0] <= start), key=lambda r: r[1])
    assert values["tx_valid_rise_warm_step"] == str(warm[0])
    assert float(values["tx_valid_rise_warm"]) == pytest.approx(warm[1], abs=5e-4)
    assert float(values["tx_valid_rise_cool"]) == pytest.approx(max(d for step, d in rises if step > start), abs=5e-4)


def test_the_claims_week6_makes_about_its_validation_curve():
    """week6_training.md reads the curve in words; a retrained artefact that no longer fits them fails here."""
    history = _history()
    values = artefacts.book_values(ROOT)
    # "No overfitting": the validation loss is lowest at the last step
    assert values["tx_min_valid_step"] == values["tx_steps"]
    # "Validation scores better than training" in most records, and "the gap is widest early"
    assert int(values["tx_valid_below_train"]) > len(history) / 2
    gaps = [r["loss"] - r["valid_loss"] for r in history]
    assert gaps.index(max(gaps)) < len(gaps) // 4
    # the cool-down calms the curve
    assert float(values["tx_valid_rise_cool"]) < float(values["tx_valid_rise_warm"]) / 5


def test_history_validation_belongs_to_the_shipped_weights():
    """The last record's validation loss is what the shipped checkpoint scores on the whole validation split."""
    from txcourse.backends import backend
    from txcourse.data import get_task
    from txcourse.data.prepare import tokenizers_from_meta

    fw = backend("torch")
    model, meta = fw.load_model(str(CHECKPOINT))
    src_tok, tgt_tok = tokenizers_from_meta(meta)
    splits = get_task(meta["task"]["name"], **meta["task"]["kwargs"])
    scores = artefacts.teacher_forced(
        fw, model, splits.valid, src_tok, tgt_tok, meta["train_config"]["label_smoothing"]
    )
    last = _history()[-1]
    assert last["step"] == meta["step"]
    assert scores["loss"] == pytest.approx(last["valid_loss"], rel=1e-5)
    assert scores["accuracy"] == pytest.approx(last["valid_accuracy"], abs=1e-9)


def test_schedule_reproduces_every_logged_rate():
    meta = _meta()
    for record in _history():
        assert artefacts.schedule_lr(meta, record["step"]) == pytest.approx(record["lr"], rel=1e-9), record["step"]


def test_loss_floor_is_the_minimum_of_the_course_loss():
    """The floor is what txcourse's own loss gives at p = q, and any other p scores higher."""
    import torch

    from txcourse.torch import label_smoothed_cross_entropy

    meta = _meta()
    vocab, eps = meta["model"]["config"]["tgt_vocab_size"], meta["train_config"]["label_smoothing"]
    floor = artefacts.smoothed_target_entropy(vocab, eps)
    true, other = artefacts.smoothed_target(vocab, eps)
    q = torch.full((vocab,), other, dtype=torch.float64)
    q[5] = true
    assert float(q.sum()) == pytest.approx(1.0)
    at_q, _ = label_smoothed_cross_entropy(q.log()[None, None], torch.tensor([[5]]), smoothing=eps)
    assert float(at_q) == pytest.approx(floor, abs=1e-6)
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        logits = q.log() + 0.1 * torch.randn(vocab, generator=generator, dtype=torch.float64)
        loss, _ = label_smoothed_cross_entropy(logits[None, None], torch.tensor([[5]]), smoothing=eps)
        assert float(loss) > floor
    assert float(artefacts.book_values(ROOT)["tx_loss_floor"]) == pytest.approx(floor, abs=5e-4)
    # the old claim, "about 0.1 log V plus a little", is well below it; the logged loss never goes under it
    assert eps * math.log(vocab) < floor - 0.2
    assert min(r["loss"] for r in _history()) > floor


@pytest.mark.parametrize(
    "vocab, eps, error",
    [(1, 0.1, "vocab_size must be an integer >= 2, got 1"), (19, 1.5, "smoothing must be in \\[0, 1\\], got 1.5")],
)
def test_bad_arguments(vocab, eps, error):
    with pytest.raises(ValueError, match=error):
        artefacts.smoothed_target_entropy(vocab, eps)


def test_schedule_of_a_header_without_a_train_config():
    with pytest.raises(ValueError, match="meta must be a checkpoint header"):
        artefacts.schedule({"model": {"config": {"d_model": 8}}})


def _extension():
    spec = importlib.util.spec_from_file_location("artefact_values", ROOT / "book" / "_ext" / "artefact_values.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_extension_adds_the_values_as_substitutions():
    ext = _extension()
    config = SimpleNamespace(myst_substitutions={"course": "txcourse"})
    values = ext.artefact_substitutions(ROOT, config)
    assert config.myst_substitutions == {"course": "txcourse", **values} and values == artefacts.book_values(ROOT)
    with pytest.raises(ValueError, match="tx_d_model"):
        ext.artefact_substitutions(ROOT, SimpleNamespace(myst_substitutions={"tx_d_model": "64"}))
    config_yml = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+artefact_values: book/_ext$", config_yml, re.M), "_config.yml does not load it"
    assert re.search(r"^\s+- substitution$", config_yml, re.M), "MyST's substitution extension is off"


def _prose(page: str) -> str:
    """A page without its code (cells, fences, inline code), its substitutions and the listed coincidences."""
    text = (ROOT / page).read_text(encoding="utf-8")
    for where, phrase, _ in COINCIDENCES:
        if where == page:
            assert phrase in text, f"{page}: the listed coincidence {phrase!r} is gone: drop it from COINCIDENCES"
            text = text.replace(phrase, " ")
    text = re.sub(r"^```.*?^```", " ", text, flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    return re.sub(r"\{\{\s*\w+\s*\}\}", " ", text)


@pytest.mark.parametrize("page", PAGES + [WEEK1, "book/instructor.md"])
def test_pages_use_only_defined_values(page):
    used = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", (ROOT / page).read_text(encoding="utf-8")))
    if page == "book/week6_training.md":
        assert used, f"{page} states no value of the shipped model through a substitution"
    unknown = sorted(used - set(artefacts.book_values(ROOT)))
    assert not unknown, f"{page} uses {unknown}, which txcourse.course.artefacts.book_values does not define"


@pytest.mark.parametrize("page", PAGES)
def test_pages_state_no_artefact_number_by_hand(page):
    """A number of the shipped model typed into the prose would not follow the checkpoint: use {{ tx_... }}."""
    prose = _prose(page)
    found = []
    for name, value in artefacts.book_values(ROOT).items():
        if name in GENERIC or name.startswith(artefacts.PREFIX + "lc_"):  # week 1's values: see below
            continue
        for match in re.finditer(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", prose):
            line = prose.count("\n", 0, match.start()) + 1
            found.append(f"{value} ({name}) near line {line}: {prose[max(0, match.start() - 40) : match.end() + 20]!r}")
    assert not found, f"{page} states shipped-artefact numbers by hand:\n" + "\n".join(found)


def test_length_curve_values_are_the_file():
    """Week 1's values, against length_curves.json read here with json alone."""
    results = json.loads((ROOT / artefacts.LENGTH_CURVES).read_text(encoding="utf-8"))
    values = artefacts.book_values(ROOT)
    for kind, model in results["models"].items():
        assert values[f"tx_lc_{kind}_steps"] == values["tx_lc_steps"] == str(model["steps"])
        assert values[f"tx_lc_{kind}_seconds"] == str(round(model["train_seconds"]))
        for lo, hi, _, accuracy in model["by_length"]:
            assert values[f"tx_lc_{kind}_{lo}_{hi}"] == str(round(100 * accuracy)), (kind, lo, hi)
    assert values["tx_lc_minutes"] == str(round(sum(m["train_seconds"] for m in results["models"].values()) / 60))


def test_length_curve_values_refuse_unequal_budgets(tmp_path):
    results = json.loads((ROOT / artefacts.LENGTH_CURVES).read_text(encoding="utf-8"))
    results["models"]["seq2seq"]["steps"] = 3000
    path = tmp_path / "length_curves.json"
    path.write_text(json.dumps(results))
    with pytest.raises(ValueError, match="different numbers of steps"):
        artefacts.length_curve_values(path)


def test_week1_states_no_accuracy_by_hand():
    """Every percentage in week 1's prose is a {{ tx_lc_... }} value of the shipped measurement."""
    prose = _prose(WEEK1)
    typed = [prose[max(0, m.start() - 40) : m.end()] for m in re.finditer(r"(?<![\w.])\d+(\.\d+)?\s?%", prose)]
    assert not typed, f"{WEEK1} types accuracies by hand (use the tx_lc_ values): {typed}"
    used = set(re.findall(r"\{\{\s*(tx_lc_\w+)\s*\}\}", (ROOT / WEEK1).read_text(encoding="utf-8")))
    assert {"tx_lc_steps", "tx_lc_seq2seq_9_10", "tx_lc_transformer_18_20"} <= used, used
