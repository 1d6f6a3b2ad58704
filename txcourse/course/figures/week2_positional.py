"""The figures of week 2 (book/week2_positional.md): the sinusoidal positional encoding and the ALiBi bias."""

from __future__ import annotations

from txcourse.course.figures.recipe import Context, register
from txcourse.notebook import plots
from txcourse.registry import FRAMEWORKS


@register(
    "week2_positional_encoding",
    ["week2_positional"],
    "fig-pe-heatmap",
    "The sinusoidal positional encoding for 50 positions and d_model = 128 (red -1, blue +1).",
    plots.plot_positional_encoding,
    params={"max_len": 50, "d_model": 128, "title": "Sinusoidal positional encoding, 50 positions, d_model = 128"},
    frameworks=FRAMEWORKS,
)
def positional_encoding(ctx: Context, max_len: int, d_model: int, title: str):
    table = ctx.numpy(ctx.lib.positional_encoding(max_len, d_model))  # (max_len, d_model)
    return plots.plot_positional_encoding(table, title=title)


@register(
    "week2_alibi_bias",
    ["week2_positional"],
    "fig-alibi-bias",
    "The ALiBi bias -m_h |i - j| of alibi_bias(8, 16, 16) for four of eight heads.",
    plots.plot_alibi_bias,
    params={
        "num_heads": 8,
        "length": 16,
        "heads": [0, 1, 3, 7],
        "title": "ALiBi bias -m_h |i - j|, 8 heads, 16 positions",
    },
    frameworks=FRAMEWORKS,
)
def alibi_bias(ctx: Context, num_heads: int, length: int, heads: list, title: str):
    bias = ctx.numpy(ctx.lib.alibi_bias(num_heads, length, length))  # (H, T, T)
    slopes = ctx.numpy(ctx.lib.alibi_slopes(num_heads))  # (H,)
    return plots.plot_alibi_bias(bias, slopes, heads=heads, title=title)
