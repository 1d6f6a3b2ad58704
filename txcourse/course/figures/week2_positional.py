"""The figure of week 2 (book/week2_positional.md): the sinusoidal positional encoding."""

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
