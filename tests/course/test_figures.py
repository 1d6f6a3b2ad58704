"""txcourse figures: every figure of the book from its recipe, a manifest, and the same bytes twice."""

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from conftest import TINY_MODEL_ARGS
from matplotlib.figure import Figure  # noqa: E402
from support.figure_words import left_in_english, translatable  # noqa: E402

from txcourse.cli import main  # noqa: E402
from txcourse.course import figures  # noqa: E402
from txcourse.errors import TxcourseError  # noqa: E402
from txcourse.notebook import plots  # noqa: E402
from txcourse.notebook.plots import labels  # noqa: E402
from txcourse.registry import MODEL_KINDS

REPO = Path(__file__).resolve().parents[2]
# The names the slides reference as figures/<name>.png: they must not change.
BOOK_FIGURES = [
    "week1_accuracy_by_length",
    "week1_bahdanau_alignment",
    "week2_positional_encoding",
    "week3_attention_example",
    "week3_scaling",
    "week3_padding_mask",
    "week3_attention_heads",
    "week4_encoder_representations",
    "week5_look_ahead_mask",
    "week5_decoder_heads",
    "week6_warmup_schedule",
    "week6_label_smoothing",
    "week6_training_curves",
    "week6_attention_heads",
    "week6_attention_maps",
]
# Cheap figures for the runs in subprocesses: two framework-free, two PyTorch, one read from a checkpoint.
CHEAP = [
    "week6_warmup_schedule",
    "week6_training_curves",
    "week3_scaling",
    "week5_look_ahead_mask",
    "week1_bahdanau_alignment",
]
TINY_TRANSFORMER = TINY_MODEL_ARGS


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    """A root holding every input, small: two tiny checkpoints trained 4 steps, their history, length curves.

    120 test pairs, so that the attention-map recipes find test sentences of 3-4 and 5-8 source tokens."""
    root = tmp_path_factory.mktemp("root")
    data = root / "book" / "data"
    data.mkdir(parents=True)
    common = [
        "train",
        "--task",
        "numbers",
        "--task-arg",
        "sizes=(300,20,120)",
        "--steps",
        "4",
        "--log-every",
        "2",
        "--batch-size",
        "16",
        "--no-progress",
    ]
    runs = tmp_path_factory.mktemp("runs")
    assert (
        main(
            [*common, "--model", "bahdanau", "--set", "embedding_dim=16", "--set", "units=16", "--out", str(runs / "b")]
        )
        == 0
    )
    assert main([*common, "--model", "transformer", *TINY_TRANSFORMER, "--out", str(runs / "t")]) == 0
    shutil.copy(runs / "b" / "model.npz", data / "numbers-bahdanau-torch.npz")
    shutil.copy(runs / "t" / "model.npz", data / "numbers-transformer-torch.npz")
    shutil.copy(runs / "t" / "history.jsonl", data / "numbers-transformer-torch.history.jsonl")
    results = root / "benchmarks" / "results"
    results.mkdir(parents=True)
    models = {
        kind: {"steps": 10, "by_length": [[2, 4, 10, 0.9], [5, 8, 10, 0.5 - i / 10], [9, 12, 5, 0.1]]}
        for i, kind in enumerate(MODEL_KINDS)
    }
    (results / "length_curves.json").write_text(json.dumps({"framework": "torch", "task": "copy", "models": models}))
    return root


def _main_axes(fig: Figure) -> list:
    """The plotting axes of a figure, without its colour bars."""
    return [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is None]


# ---------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------
def test_registry_has_the_names_the_slides_use():
    assert set(BOOK_FIGURES) <= set(figures.RECIPES), sorted(set(BOOK_FIGURES) - set(figures.RECIPES))
    for name, recipe in figures.RECIPES.items():
        assert re.fullmatch(r"(week[1-6]|bert_gpt)_[a-z0-9_]+", name), name
        assert name.startswith(recipe.chapters[0].split("_")[0]), (name, recipe.chapters)


def test_each_recipe_lives_in_the_module_of_its_chapter():
    """A reader of week 3 finds its figures in txcourse/course/figures/week3_attention.py."""
    for name, recipe in figures.RECIPES.items():
        assert recipe.draw.__module__ == f"txcourse.course.figures.{recipe.chapters[0]}", (name, recipe.draw.__module__)


def test_every_figure_of_the_book_has_a_recipe():
    """Each `name: fig-...` figure of a chapter is one recipe's label, and each recipe's chapter shows it."""
    in_book = {}
    for page in (REPO / "book").glob("*.md"):
        for label in re.findall(r"^\s+name: (fig-[a-z0-9-]+)$", page.read_text(encoding="utf-8"), re.M):
            in_book[label] = page.stem
    by_label = {r.label: r for r in figures.RECIPES.values()}
    assert set(by_label) == set(in_book), (sorted(set(in_book) - set(by_label)), sorted(set(by_label) - set(in_book)))
    for label, page in in_book.items():
        assert page in by_label[label].chapters, (label, page, by_label[label].chapters)


def test_module_examples():
    import doctest

    assert doctest.testmod(figures).failed == 0


def test_recipes_name_a_plots_function_json_parameters_and_importable_paths():
    for recipe in figures.RECIPES.values():
        module, _, function = recipe.function_path.rpartition(".")
        assert module == "txcourse.notebook.plots" and function in plots.__all__, recipe.function_path
        module, _, attr = recipe.recipe_path.rpartition(".")
        assert getattr(sys.modules[module], attr) is recipe.draw, recipe.recipe_path
        assert json.loads(json.dumps(recipe.params)) == recipe.params, recipe.name
        assert recipe.caption.strip() and recipe.chapters
        for path in recipe.inputs:
            assert not Path(path).is_absolute() and ".." not in Path(path).parts, path


@pytest.mark.parametrize("name", list(figures.RECIPES))
def test_recipe_draws_a_titled_labelled_figure(name, data_root):
    fig = figures.draw(name, root=data_root)
    assert isinstance(fig, Figure)
    axes = _main_axes(fig)
    titles = [fig._suptitle.get_text() if fig._suptitle else ""] + [ax.get_title() for ax in axes]
    assert any(t.strip() for t in titles), titles
    assert any(ax.get_xlabel() for ax in axes) and any(ax.get_ylabel() for ax in axes), name
    for ax in axes:
        assert ax.images or ax.lines or ax.collections or ax.patches, f"{name}: an empty panel {ax.get_title()!r}"
    matplotlib.pyplot.close("all")


def test_recipes_match_the_chapters_numbers():
    """Spot checks that the recipes compute what the chapters show."""
    fig = figures.draw("week3_attention_example")
    weights = np.asarray(fig.axes[0].images[0].get_array())
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(weights[0], [0, 0, 0.5, 0.5], atol=1e-3)  # q = (0, 0, 10): k3 and k4
    fig = figures.draw("week5_decoder_heads")
    heads = [np.asarray(ax.images[0].get_array()) for ax in _main_axes(fig)]
    assert len(heads) == 4 and all(np.triu(h, 1).max() == 0 for h in heads)
    fig = figures.draw("week5_no_leak")
    # row r: input position j = r + 1 edited; column t: output position. Output t may depend on j <= t only.
    with_mask, without_mask = (np.asarray(ax.images[0].get_array()) for ax in _main_axes(fig))
    assert np.tril(with_mask).max() == 0 and np.tril(without_mask).max() > 0.01
    matplotlib.pyplot.close("all")


def _line(ax, label: str):
    return next(line for line in ax.lines if line.get_label() == label)


@pytest.mark.parametrize("root", ["shipped", "tiny"])
def test_schedule_figure_is_the_checkpoints_schedule(root, data_root):
    """The plotted schedule is the one the checkpoint was trained with: it equals the history's logged lr."""
    from txcourse.training import read_history
    from txcourse.training.checkpoint import read_checkpoint_meta

    root = REPO if root == "shipped" else data_root
    meta = read_checkpoint_meta(root / "book/data/numbers-transformer-torch.npz")
    history = read_history(root / "book/data/numbers-transformer-torch.history.jsonl")
    ax = figures.draw("week6_warmup_schedule", root=root).axes[0]
    label = figures.shipped_schedule_label(meta)
    for value in (
        meta["model"]["config"]["d_model"],
        meta["train_config"]["warmup_steps"],
        meta["train_config"]["cooldown_steps"],
        meta["train_config"]["steps"],
    ):
        assert f" {value}" in label, (value, label)
    steps, rates = _line(ax, label).get_data()
    plotted = dict(zip(np.asarray(steps).tolist(), np.asarray(rates).tolist()))
    assert len(plotted) == meta["train_config"]["steps"] and min(plotted) == 1
    logged = {r["step"]: r["lr"] for r in history}
    assert logged, "the history logs no learning rate"
    for step, lr in logged.items():
        assert plotted[step] == pytest.approx(lr, rel=1e-9), (step, plotted[step], lr)
    dots_x, dots_y = _line(ax, figures.LOGGED_LR).get_data()
    assert list(dots_x) == list(logged) and list(dots_y) == list(logged.values())
    matplotlib.pyplot.close("all")


def test_draw_keeps_what_loading_the_backend_turns_on(monkeypatch):
    """In a notebook, loading pyplot's backend turns interactive mode on (IPython's inline backend shows only
    figures made in it). draw() loads the backend before it saves the settings it restores afterwards, so
    that a first draw() does not turn the mode off again for the rest of the notebook."""
    import matplotlib.pyplot as plt

    real, loaded = plt._get_backend_mod, []

    def load_like_ipython():  # the first load turns interactive mode on
        if not loaded:
            loaded.append(True)
            matplotlib.interactive(True)
        return real()

    monkeypatch.setattr(plt, "_get_backend_mod", load_like_ipython)
    was = matplotlib.is_interactive()
    matplotlib.interactive(False)
    try:
        figures.draw("week3_scaling")
        assert loaded and matplotlib.is_interactive(), "draw() turned interactive mode off again"
    finally:
        matplotlib.interactive(was)
        plt.close("all")


def test_label_smoothing_figure_is_the_losss_target():
    """The smoothed bars are the target txcourse's loss minimises towards: eps spread over all V, <pad> included."""
    import torch

    from txcourse.torch import label_smoothed_cross_entropy
    from txcourse.training.checkpoint import read_checkpoint_meta

    meta = read_checkpoint_meta(REPO / "book/data/numbers-transformer-torch.npz")
    vocab, eps = meta["model"]["config"]["tgt_vocab_size"], meta["train_config"]["label_smoothing"]
    ax = figures.draw("week6_label_smoothing").axes[0]
    bars = np.array([b.get_height() for b in ax.patches]).reshape(2, vocab)
    assert bars[0].sum() == 1 and bars[0].max() == 1
    np.testing.assert_allclose(bars[1].sum(), 1.0)
    target = int(bars[0].argmax())
    # the loss's gradient with respect to the logits is p - q: zero exactly when p is the plotted q
    logits = torch.log(torch.tensor(bars[1], dtype=torch.float64))[None, None].float().requires_grad_()
    loss, _ = label_smoothed_cross_entropy(logits, torch.tensor([[target]]), smoothing=eps)
    loss.backward()
    assert float(logits.grad.abs().max()) < 1e-6
    matplotlib.pyplot.close("all")


def test_training_curves_figure_shows_the_history_validation_and_floor():
    from txcourse.course.artefacts import smoothed_target_entropy
    from txcourse.training import read_history
    from txcourse.training.checkpoint import read_checkpoint_meta

    meta = read_checkpoint_meta(REPO / "book/data/numbers-transformer-torch.npz")
    history = read_history(REPO / "book/data/numbers-transformer-torch.history.jsonl")
    fig = figures.draw("week6_training_curves")
    loss_ax = next(ax for ax in fig.axes if ax.get_title() == "loss")
    accuracy_ax = next(ax for ax in fig.axes if ax.get_title() == "accuracy")
    steps, losses = _line(loss_ax, "training batches (dropout on)").get_data()
    assert list(losses) == [r["loss"] for r in history]
    # the validation curve: one point per logged step, the history's own numbers
    valid_x, valid_y = _line(loss_ax, figures.VALID_CURVE).get_data()
    assert list(valid_x) == [r["step"] for r in history] and list(valid_y) == [r["valid_loss"] for r in history]
    assert list(_line(accuracy_ax, figures.VALID_CURVE).get_ydata()) == [r["valid_accuracy"] for r in history]
    final_x, final_y = _line(loss_ax, "training sentences, final weights (dropout off)").get_data()
    assert list(final_x) == [meta["step"]] and 0 < final_y[0] < 3
    floor = smoothed_target_entropy(meta["model"]["config"]["tgt_vocab_size"], meta["train_config"]["label_smoothing"])
    floor_line = next(line for line in loss_ax.lines if line.get_label().startswith("floor"))
    assert floor_line.get_ydata()[0] == pytest.approx(floor)
    assert min(valid_y) >= floor - 1e-6 and final_y[0] >= floor - 1e-6 and min(losses) >= floor - 0.01
    # week 6 says the squares (training sentences, dropout off) sit on the validation curve
    assert final_y[0] == pytest.approx(valid_y[-1], abs=0.005)
    matplotlib.pyplot.close("all")


def test_attention_maps_show_every_kind_layer_and_head():
    from txcourse.training.checkpoint import read_checkpoint_meta

    config = read_checkpoint_meta(REPO / "book/data/numbers-transformer-torch.npz")["model"]["config"]
    fig = figures.draw("week6_attention_maps")
    axes = _main_axes(fig)
    rows = config["num_encoder_layers"] + 2 * config["num_decoder_layers"]
    assert len(axes) == rows * config["num_heads"]
    titles = [ax.get_title() for ax in axes]
    for kind, layers in (
        ("encoder self", config["num_encoder_layers"]),
        ("decoder self", config["num_decoder_layers"]),
        ("cross", config["num_decoder_layers"]),
    ):
        for layer in range(layers):
            for head in range(config["num_heads"]):
                assert f"{kind}, layer {layer}, head {head}" in titles
    for ax, title in zip(axes, titles):
        weights = np.asarray(ax.images[0].get_array())
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5, err_msg=title)  # each query's weights sum to 1
        if title.startswith("decoder self"):
            assert np.triu(weights, 1).max() == 0, title  # causal
    matplotlib.pyplot.close("all")


# ---------------------------------------------------------------------------
# Running them: manifest, determinism, missing inputs, errors
# ---------------------------------------------------------------------------
def test_manifest_schema(data_root, tmp_path):
    out = tmp_path / "figs"
    manifest = figures.build_figures(out, ["week6_*", "week3_padding_mask"], root=data_root)
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8")) == manifest
    assert {
        "txcourse",
        "matplotlib",
        "numpy",
        "framework",
        "framework_version",
        "cjk_font",
        "format",
        "dpi",
        "language",
        "figures",
    } <= set(manifest)
    assert manifest["framework"] == "torch" and manifest["format"] == "png" and manifest["dpi"] == 150
    assert manifest["language"] == "en"
    assert list(manifest["figures"]) == [
        "week3_padding_mask",
        "week6_warmup_schedule",
        "week6_label_smoothing",
        "week6_training_curves",
        "week6_attention_heads",
        "week6_attention_maps",
    ]  # registry order
    readme = (out / "README.md").read_text(encoding="utf-8")
    for name, entry in manifest["figures"].items():
        recipe = figures.RECIPES[name]
        assert set(entry) == {
            "file",
            "chapters",
            "book_label",
            "caption",
            "function",
            "recipe",
            "parameters",
            "inputs",
            "sha256",
            "labels",
            "status",
            "reason",
        }
        assert entry["status"] == "written" and entry["reason"] is None
        assert entry["file"] == f"{name}.png" and entry["sha256"] == _sha256(out / entry["file"])
        assert entry["function"] == recipe.function_path and entry["recipe"] == recipe.recipe_path
        assert entry["parameters"] == recipe.params and entry["chapters"] == list(recipe.chapters)
        assert [i["path"] for i in entry["inputs"]] == list(recipe.inputs)
        for item in entry["inputs"]:
            assert item["sha256"] == _sha256(data_root / item["path"])
        assert f"[{name}]({name}.png)" in readme
        assert entry["labels"] and entry["labels"] == sorted(set(entry["labels"])), (name, entry["labels"])
    assert (out / "week6_attention_heads.png").read_bytes()[:4] == b"\x89PNG"


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "txcourse", "figures", "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_two_runs_write_identical_bytes(data_root, tmp_path):
    """Two processes, and a third run in this process after other figures and other seeds: the same bytes."""
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        result = _run_cli("--out", str(out), "--root", str(data_root), "--only", *CHEAP)
        assert result.returncode == 0, result.stderr
        assert f"wrote {len(CHEAP)} figure(s)" in result.stdout
    files = sorted(p.name for p in outs[0].iterdir())
    assert files == sorted([f"{n}.png" for n in CHEAP] + ["manifest.json", "README.md"])
    assert files == sorted(p.name for p in outs[1].iterdir())
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name

    import torch

    torch.manual_seed(123)
    torch.randn(7)
    np.random.seed(5)
    figures.draw("week3_attention_heads")  # another figure first, other settings
    with matplotlib.rc_context({"lines.linewidth": 5, "font.size": 20}):
        figures.build_figures(tmp_path / "c", ["week3_scaling", "week6_warmup_schedule"], root=data_root)
    for name in ("week3_scaling.png", "week6_warmup_schedule.png"):
        assert (tmp_path / "c" / name).read_bytes() == (outs[0] / name).read_bytes(), name


@pytest.mark.parametrize("fmt", ["svg", "pdf"])
def test_svg_and_pdf_are_reproducible(fmt, tmp_path):
    shas = []
    for run in ("a", "b"):
        manifest = figures.build_figures(tmp_path / run, ["week6_warmup_schedule"], fmt=fmt)
        shas.append(manifest["figures"]["week6_warmup_schedule"]["sha256"])
        assert (tmp_path / run / f"week6_warmup_schedule.{fmt}").is_file()
    assert shas[0] == shas[1]


def test_missing_input_is_skipped_with_a_warning(tmp_path, capsys):
    out = tmp_path / "out"
    (out).mkdir()
    (out / "week6_training_curves.png").write_bytes(b"stale")  # from an earlier run
    assert (
        main(
            [
                "figures",
                "--out",
                str(out),
                "--root",
                str(tmp_path),
                "--no-progress",
                "--only",
                "week6_training_curves",
                "week3_scaling",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    inputs = ["book/data/numbers-transformer-torch.history.jsonl", "book/data/numbers-transformer-torch.npz"]
    assert f"warning: week6_training_curves skipped: missing input {', '.join(inputs)}" in captured.err
    assert "skipped 1: week6_training_curves" in captured.out
    entry = json.loads((out / "manifest.json").read_text())["figures"]["week6_training_curves"]
    assert entry["status"] == "skipped" and entry["sha256"] is None
    assert entry["reason"] == f"missing input {', '.join(inputs)}"
    assert entry["inputs"] == [{"path": path, "sha256": None} for path in inputs]
    assert not (out / "week6_training_curves.png").exists()
    assert (out / "week3_scaling.png").is_file()


def test_strict_turns_a_missing_input_into_an_error(tmp_path):
    out = tmp_path / "out"
    result = _run_cli("--out", str(out), "--root", str(tmp_path), "--strict", "--only", "week1_*", "week2_*")
    assert result.returncode == 2
    err = result.stderr
    assert err.startswith("txcourse: error: missing input(s) under ") and err.count("\n") == 1, err
    assert "benchmarks/results/length_curves.json (for week1_accuracy_by_length)" in err
    assert "book/data/numbers-bahdanau-torch.npz (for week1_bahdanau_alignment)" in err
    assert not out.exists()  # nothing drawn


def test_an_unreadable_input_fails_that_figure_only(data_root, tmp_path, capsys):
    root = tmp_path / "root"
    shutil.copytree(data_root, root)
    (root / "benchmarks" / "results" / "length_curves.json").write_text('{"models": {"gru": {}}}')
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "figures",
                "--out",
                str(tmp_path / "out"),
                "--root",
                str(root),
                "--no-progress",
                "--only",
                "week1_accuracy_by_length",
                "week2_positional_encoding",
            ]
        )
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "txcourse: error: 1 figure(s) could not be drawn from their inputs: week1_accuracy_by_length" in err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["figures"]
    assert manifest["week1_accuracy_by_length"]["status"] == "failed"
    assert "not in the format benchmarks/length_curves.py writes" in manifest["week1_accuracy_by_length"]["reason"]
    assert manifest["week2_positional_encoding"]["status"] == "written"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--only", "week9_nope"], "unknown figure 'week9_nope'; figures are ['week1_accuracy_by_length', "),
        (["--only", "week3_*", "bogus*"], "unknown figure 'bogus*'; figures are ["),
        (["--dpi", "0"], "argument --dpi: expected an integer from 10 to 2000, got 0"),
        (["--root", "no/such/folder"], "root folder 'no/such/folder' does not exist"),
        (["--lang", "fr"], "argument --lang: invalid choice: 'fr' (choose from "),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["figures", "--out", "out", "--no-progress", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("txcourse: error: ") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_list_names_every_figure_and_its_missing_inputs(tmp_path, capsys):
    assert main(["figures", "--list", "--root", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(figures.RECIPES)
    row = next(line for line in lines if line.startswith("week6_attention_heads "))
    assert "book/data/numbers-transformer-torch.npz (missing)" in row
    assert main(["figures", "--list", "--only", "week3_*"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "week3_attention_example",
        "week3_scaling",
        "week3_padding_mask",
        "week3_attention_heads",
    ]


def test_default_root_is_the_current_folder_when_it_holds_inputs(data_root, tmp_path, monkeypatch):
    monkeypatch.chdir(data_root)
    assert figures.default_root() == data_root
    monkeypatch.chdir(tmp_path)  # nothing here: the package's checkout
    in_checkout = any((figures.REPO_ROOT / r.inputs[0]).is_file() for r in figures.RECIPES.values() if r.inputs)
    assert figures.default_root() == (figures.REPO_ROOT if in_checkout else tmp_path)


def test_tensorflow_draws_the_same_bytes(tmp_path):
    """The framework-neutral figures come out identical from either half; PyTorch-only ones are skipped."""
    pytest.importorskip("tensorflow")
    names = ["week3_attention_example", "week5_look_ahead_mask", "week3_scaling"]
    torch_run = figures.build_figures(tmp_path / "torch", names)["figures"]
    tf_manifest = figures.build_figures(tmp_path / "tf", names, framework="tf")
    tf_run = tf_manifest["figures"]
    assert tf_manifest["framework"] == "tf" and tf_manifest["framework_version"]
    for name in names[:2]:
        assert tf_run[name]["status"] == "written" and tf_run[name]["sha256"] == torch_run[name]["sha256"], name
    assert tf_run["week3_scaling"]["status"] == "skipped"
    assert tf_run["week3_scaling"]["reason"] == "drawn with torch only, as in the book"
    with pytest.raises(ValueError, match="figure week3_scaling is drawn with torch only"):
        figures.draw("week3_scaling", framework="tf")


# ---------------------------------------------------------------------------
# The figures in each language of the editions (issue 33): `txcourse figures --lang ko`
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def in_each_language(data_root, tmp_path_factory):
    """The cheap figures drawn in English and in Korean: {lang: (folder, manifest)}."""
    out = tmp_path_factory.mktemp("languages")
    return {
        lang: (out / lang, figures.build_figures(out / lang, CHEAP, root=data_root, lang=lang))
        for lang in labels.LANGUAGES
    }


def test_cli_languages_are_the_editions():
    from txcourse.cli.figures import LANGUAGES

    assert LANGUAGES == labels.LANGUAGES


def test_an_unknown_language_is_refused_before_drawing(tmp_path):
    with pytest.raises(TxcourseError, match=r"lang must be one of \['en', 'ko'\], got 'fr'"):
        figures.build_figures(tmp_path / "out", ["week6_warmup_schedule"], lang="fr")
    assert not (tmp_path / "out").exists()


def test_left_in_english_finds_an_english_word_and_a_missing_translation():
    catalogue = {"loss": "손실", "step": "스텝", "x": "x"}
    assert left_in_english(["loss", "step", "x", "나"], ["손실", "스텝", "x", "나"], catalogue) == []
    assert left_in_english(["loss", "step"], ["loss", "스텝"], catalogue) == ["left in English: 'loss'"]
    assert left_in_english(["loss", "step"], ["스텝"], catalogue) == ["'loss' is not drawn as '손실'"]
    assert translatable(["x", "loss", "data"], catalogue) == ["loss"]


@pytest.mark.parametrize("name", CHEAP)
def test_a_figure_in_korean_shows_the_catalogues_words(name, in_each_language):
    """Every English word of the catalogue comes out translated; the manifest says which words were drawn."""
    (_, en), (ko_dir, ko) = in_each_language["en"], in_each_language["ko"]
    assert en["language"] == "en" and ko["language"] == "ko"
    catalogue = labels.catalogue("ko")
    english, korean = en["figures"][name]["labels"], ko["figures"][name]["labels"]
    assert translatable(english, catalogue), f"{name}: the English figure shows no word of the catalogue: {english}"
    assert left_in_english(english, english, catalogue), "the check finds nothing on the English figure"
    assert left_in_english(english, korean, catalogue) == [], (name, korean)
    assert any("\uac00" <= c <= "\ud7a3" for word in korean for c in word), (name, korean)
    assert ko["figures"][name]["sha256"] != en["figures"][name]["sha256"], f"{name}: the same image in both"
    assert (ko_dir / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


def test_english_figures_are_the_default_languages(in_each_language, data_root, tmp_path):
    """``lang="en"`` is the build without a language: the same bytes, so the English decks do not change."""
    en_dir, en = in_each_language["en"]
    default = figures.build_figures(tmp_path, CHEAP[:2], root=data_root)
    for name in CHEAP[:2]:
        assert default["figures"][name]["sha256"] == en["figures"][name]["sha256"], name
        assert (tmp_path / f"{name}.png").read_bytes() == (en_dir / f"{name}.png").read_bytes(), name


def test_a_figure_without_words_is_the_same_image_in_every_language(tmp_path, monkeypatch):
    def no_words(ctx):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.imshow(np.arange(9.0).reshape(3, 3))
        ax.set_axis_off()
        return fig

    import matplotlib.pyplot as plt

    recipe = figures.Recipe("week0_no_words", ("intro",), "fig-none", "No words.", plots.plot_mask, no_words)
    monkeypatch.setitem(figures.RECIPES, recipe.name, recipe)
    shas = {
        lang: figures.build_figures(tmp_path / lang, [recipe.name], lang=lang)["figures"][recipe.name]
        for lang in labels.LANGUAGES
    }
    assert shas["en"]["labels"] == shas["ko"]["labels"] == []
    assert shas["en"]["sha256"] == shas["ko"]["sha256"]


def test_cli_draws_korean_figures(data_root, tmp_path):
    result = _run_cli("--out", str(tmp_path), "--root", str(data_root), "--only", "week3_scaling", "--lang", "ko")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["language"] == "ko"
    assert labels.catalogue("ko")["attention weight"] in manifest["figures"]["week3_scaling"]["labels"]
