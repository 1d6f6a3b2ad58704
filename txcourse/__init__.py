"""txcourse: the Transformer, week by week, in PyTorch and TensorFlow/Keras.

The package holds two reference implementations that mirror each other:
:mod:`txcourse.torch` (imports only PyTorch) and :mod:`txcourse.tf` (imports
only TensorFlow/Keras). Same module names, same class names, same arguments,
same shapes; :mod:`txcourse.convert` moves weights between them. Everything
that needs no framework (the config, validation) lives here, once.

Shape legend used in every shape comment of the teaching code::

    B    batch size
    T    sequence length (T_q: queries, T_k: keys and values,
         T_src: source tokens, T_tgt: target tokens)
    D    model width, ``d_model``
    H    number of attention heads, ``num_heads``
    d_k  width of one head, ``D // H``
    F    inner width of the feed-forward network, ``d_ff``
    V    vocabulary size
    U    hidden units of a GRU (week 1)

Mask convention (both frameworks): ``True`` (or 1) marks a position that may
NOT be attended, as in the source notes and ``torch.nn.Transformer``.
"""

from txcourse.config import TransformerConfig

__all__ = ["TransformerConfig", "__version__"]
__version__ = "0.1.0"
