"""Figures: titles, labels, colour bars, token labels, data, errors and reproducible files."""

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from txcourse.evaluation.metrics import LengthBucket  # noqa: E402
from txcourse.notebook import plots  # noqa: E402
from txcourse.notebook.plots import (  # noqa: E402
    common,  # noqa: E402
    plot_accuracy_by_length,
    plot_attention,
    plot_attention_heads,
    plot_mask,
    plot_positional_encoding,
    plot_training_curves,
    save_figure,
)

SRC = ["je", "suis", "étudiant", "<eos>"]
TGT = ["I", "am", "a", "student", "<eos>"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def weights(*shape, seed=0):
    w = np.random.default_rng(seed).random(shape)
    return w / w.sum(-1, keepdims=True)


def texts(labels):
    return [t.get_text() for t in labels]


def assert_labelled(ax):
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def sinusoids(T=20, D=16):
    angle = np.arange(T)[:, None] / 10000 ** (2 * (np.arange(D)[None] // 2) / D)
    return np.where(np.arange(D) % 2 == 0, np.sin(angle), np.cos(angle))


def test_positional_encoding_heat_map():
    table = sinusoids()
    fig = plot_positional_encoding(table[None])  # (1, T, D) is accepted
    assert isinstance(fig, Figure) and len(fig.axes) == 2  # heat map + colour bar
    ax = fig.axes[0]
    assert_labelled(ax)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("dimension", "position")
    np.testing.assert_array_equal(np.asarray(ax.collections[0].get_array()).reshape(table.shape), table)
    with pytest.raises(ValueError, match=r"table must be .*got shape \(2, 20, 16\)"):
        plot_positional_encoding(np.stack([table, table]))


def test_mask_plot_explains_its_colours():
    mask = np.triu(np.ones((5, 5), dtype=bool), k=1)
    fig = plot_mask(mask, "look-ahead mask")
    ax, bar = fig.axes
    assert_labelled(ax)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key position", "query position")
    assert texts(bar.get_yticklabels()) == ["False: may attend", "True: masked"]
    np.testing.assert_array_equal(ax.images[0].get_array(), mask.astype(int))

    padding = np.array([0, 0, 1], dtype=bool)[None, None, None, :]  # (B=1, 1, 1, T_k)
    fig = plot_mask(padding, "padding mask", ylabel="batch row")
    assert fig.axes[0].images[0].get_array().shape == (1, 3)
    with pytest.raises(ValueError, match="mask must be boolean"):
        plot_mask(np.full((2, 2), 0.5))


def test_attention_heat_map_labels_and_data():
    w = weights(5, 4)
    fig = plot_attention(w, SRC, TGT, "cross-attention")
    assert len(fig.axes) == 2
    ax, bar = fig.axes
    assert_labelled(ax)
    assert ax.get_title() == "cross-attention"
    assert texts(ax.get_xticklabels()) == SRC
    assert texts(ax.get_yticklabels()) == TGT
    assert all(t.get_rotation() == 90 for t in ax.get_xticklabels())
    np.testing.assert_array_equal(ax.images[0].get_array(), w)
    assert bar.get_ylabel() == "attention weight"


def test_attention_without_tokens_uses_positions():
    fig = plot_attention(weights(3, 6))
    assert fig.axes[0].get_xlabel() == "key position"
    assert fig.axes[0].get_ylabel() == "query position"


def test_attention_token_count_mismatch_names_both_numbers():
    with pytest.raises(ValueError, match="src_tokens has 3 tokens but the weights have 4 key"):
        plot_attention(weights(5, 4), SRC[:3], TGT)
    with pytest.raises(ValueError, match="tgt_tokens has 4 tokens but the weights have 5 query"):
        plot_attention(weights(5, 4), SRC, TGT[:4])
    with pytest.raises(ValueError, match="src_tokens has 3 tokens but the weights have 4 key"):
        plot_attention_heads(weights(2, 5, 4), SRC[:3], TGT)
    with pytest.raises(ValueError, match=r"weights must be .*\(T_q, T_k\)"):
        plot_attention(weights(2, 5, 4))


def test_attention_heads_share_one_colour_scale():
    w = weights(5, 5, 4)
    w[3, 0, 0] = 0.99  # the largest weight sets the scale of every head
    fig = plot_attention_heads(w, SRC, TGT, "self-attention", ncols=2)
    panels, bar = fig.axes[:5], fig.axes[5]
    assert len(fig.axes) == 6  # 5 heads + 1 shared colour bar (empty slot removed)
    assert fig.get_suptitle() == "self-attention"
    assert [a.get_title() for a in panels] == [f"head {h}" for h in range(5)]
    assert bar.get_ylabel() == "attention weight"
    for h, a in enumerate(panels):
        np.testing.assert_array_equal(a.images[0].get_array(), w[h])
        assert a.images[0].get_clim() == (0.0, pytest.approx(0.99))
    bottom_left = panels[4]  # row 2, column 0
    assert_labelled(bottom_left)
    assert texts(bottom_left.get_xticklabels()) == SRC
    assert texts(bottom_left.get_yticklabels()) == TGT
    assert panels[1].get_xlabel() == ""  # inner panels stay uncluttered
    with pytest.raises(ValueError, match="ncols must be a positive integer"):
        plot_attention_heads(w, ncols=0)


def test_plotting_into_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert plot_attention(weights(5, 4), SRC, TGT, ax=b) is fig
    fig2, axs = plt.subplots(1, 2)
    assert plot_attention_heads(weights(2, 5, 4), SRC, TGT, ax=axs) is fig2
    with pytest.raises(ValueError, match="at least 3 matplotlib Axes"):
        plot_attention_heads(weights(3, 5, 4), ax=axs)


def test_korean_labels_do_not_warn():
    src = ["나는", "학생", "입니다", "<eos>"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = plot_attention(weights(5, 4), src, TGT)
        fig.canvas.draw()
        plot_attention_heads(weights(2, 5, 4), src, TGT).canvas.draw()
    assert not [w for w in caught if "Glyph" in str(w.message)]
    assert texts(fig.axes[0].get_xticklabels()) == src


def test_cjk_font_detection(monkeypatch):
    assert common._pick_cjk_font(["DejaVu Sans", "NanumGothic", "STIXGeneral"]) == "NanumGothic"
    assert common._pick_cjk_font(["DejaVu Sans", "Noto Sans CJK JP"]) == "Noto Sans CJK JP"
    assert common._pick_cjk_font(["DejaVu Sans", "cmr10"]) is None
    monkeypatch.setattr(common, "cjk_font", lambda: "DejaVu Serif")  # stands in for one
    fig = plot_attention(weights(5, 4), ["나는", "학생", "입니다", "<eos>"], TGT)
    assert "DejaVu Serif" in fig.axes[0].get_xticklabels()[0].get_fontfamily()


def test_accuracy_by_length_lines():
    results = {
        "gru": [LengthBucket(1, 1, 10, 0.9), LengthBucket(2, 4, 10, 0.5)],
        "transformer": [LengthBucket(1, 1, 10, 1.0), LengthBucket(2, 4, 10, 0.8)],
    }
    fig = plot_accuracy_by_length(results, "numbers task")
    ax = fig.axes[0]
    assert_labelled(ax)
    assert ax.get_ylim() == (0, 100)
    assert texts(ax.get_legend().get_texts()) == ["gru", "transformer"]
    assert ax.lines[0].get_xdata().tolist() == [1.0, 3.0]
    assert ax.lines[1].get_ydata().tolist() == pytest.approx([100.0, 80.0])
    assert ax.lines[0].get_marker() == "o"
    with pytest.raises(ValueError, match=r"results\['gru'\] must be a non-empty list"):
        plot_accuracy_by_length({"gru": [0.9, 0.5]})


def history(n=5, scale=1.0):
    return [
        {"step": 10 * s, "loss": scale / (s + 1), "lr": 1e-3 * s, **({"accuracy": s / n} if s % 2 == 0 else {})}
        for s in range(n)
    ]


def test_training_curves_one_panel_per_key():
    fig = plot_training_curves(history())
    assert [a.get_title() for a in fig.axes] == ["loss", "accuracy", "lr"]
    for a in fig.axes:
        assert_labelled(a)
        assert a.get_xlabel() == "step"
    assert fig.axes[1].lines[0].get_xdata().tolist() == [0, 20, 40]  # only logged steps

    fig = plot_training_curves({"base": history(), "big": history(scale=2)}, keys=("loss",))
    ax = fig.axes[0]
    assert len(ax.lines) == 2
    assert texts(ax.get_legend().get_texts()) == ["base", "big"]

    fig = plot_training_curves([{"step": 0, "loss": 1.0}])  # absent keys are skipped
    assert [a.get_title() for a in fig.axes] == ["loss"]


def test_training_curves_bad_history():
    with pytest.raises(ValueError, match=r"history\[1\] must be a dict with a 'step'"):
        plot_training_curves([{"step": 0, "loss": 1.0}, {"loss": 0.5}])
    with pytest.raises(ValueError, match=r"none of keys \['bleu'\].*\['loss', 'step'\]"):
        plot_training_curves([{"step": 0, "loss": 1.0}], keys=("bleu",))


def build_figure():
    return plot_attention(weights(5, 4), SRC, TGT, "reproducible")


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_save_figure_is_byte_for_byte_reproducible(tmp_path, suffix):
    fig = build_figure()
    first = save_figure(fig, tmp_path / f"a.{suffix}").read_bytes()
    second = save_figure(fig, tmp_path / f"b.{suffix}").read_bytes()
    plt.close(fig)
    rebuilt = save_figure(build_figure(), tmp_path / "sub" / f"c.{suffix}").read_bytes()
    assert first == second == rebuilt
    if suffix == "png":
        assert matplotlib.__version__.encode() not in first  # no "Software" entry


def test_save_figure_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match=r"path must end in one of .*got '.*a\.jpg'"):
        save_figure(build_figure(), tmp_path / "a.jpg")
    with pytest.raises(ValueError, match="fig must be a matplotlib Figure"):
        save_figure(None, tmp_path / "a.png")


def test_examples_run_and_every_function_is_public_under_txcourse_plots():
    """The docstring examples of every figure module run (doctest finds them under txcourse.notebook.plots, where
    each function says it lives: the path the figures' manifests record)."""
    import doctest

    result = doctest.testmod(plots)
    assert result.attempted >= 10 and result.failed == 0, result
    assert {getattr(plots, name).__module__ for name in plots.__all__} == {"txcourse.notebook.plots"}
