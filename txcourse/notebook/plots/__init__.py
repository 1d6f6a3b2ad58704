"""Framework-free figures for the course: positional encodings, masks, attention, results.

Imports numpy and matplotlib only, never PyTorch or TensorFlow: convert
tensors with ``.numpy()`` (``.detach().cpu().numpy()`` in PyTorch) first. Every
function draws on ``ax`` when given (on a new figure otherwise) and returns the
:class:`matplotlib.figure.Figure`; nothing calls ``plt.show()``, so the module
works under the headless ``Agg`` backend. :func:`save_figure` writes files
that are byte-for-byte reproducible.

Korean (or other CJK) token labels need a font with Hangul glyphs; matplotlib's
default DejaVu Sans has none. When one is installed (Noto Sans CJK, Nanum
Gothic, UnDotum...; on Debian/Ubuntu ``apt-get install fonts-noto-cjk`` or
``fonts-nanum``) tick labels fall back to it; otherwise the missing glyphs
show as boxes and the "Glyph ... missing" warnings are silenced.

Example:
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> w = np.full((2, 3), 1 / 3)
    >>> fig = plot_attention(w, ["je", "suis", "<eos>"], ["I", "am"])
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['je', 'suis', '<eos>']
"""

from txcourse.notebook.plots.attention import plot_attention, plot_attention_heads, plot_mask
from txcourse.notebook.plots.common import cjk_font

# _ and N_ (labels.py) mark a figure's words for the catalogue; importable from here, not in __all__
from txcourse.notebook.plots.labels import N_, _, in_language, show_in_each_edition, tr  # noqa: F401
from txcourse.notebook.plots.positional import plot_alibi_bias, plot_positional_encoding
from txcourse.notebook.plots.results import plot_accuracy_by_length, plot_distributions, plot_training_curves
from txcourse.notebook.plots.save import save_figure

__all__ = [
    "plot_positional_encoding",
    "plot_alibi_bias",
    "plot_mask",
    "plot_attention",
    "plot_attention_heads",
    "plot_accuracy_by_length",
    "plot_training_curves",
    "plot_distributions",
    "save_figure",
    "cjk_font",
    "show_in_each_edition",
    "in_language",
    "tr",
]

# Each function's public path is ``txcourse.notebook.plots.<name>`` wherever it is defined: the figures'
# manifests record it (txcourse.course.figures.Recipe.function_path), and the book calls it so.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
