"""txcourse: the Transformer, week by week, in PyTorch and TensorFlow/Keras.

The package holds two reference implementations that mirror each other:
:mod:`txcourse.torch` (imports only PyTorch) and :mod:`txcourse.tf` (imports
only TensorFlow/Keras). Same module names, same class names, same arguments,
same shapes; :mod:`txcourse.convert` moves weights between them. Everything
that needs no framework lives outside the two halves, once. The folders, by
whom they serve:

- ``torch/``, ``tf/``: the twins (the model, its layers, decoding, the
  Trainer's framework steps, each half's weight layout);
- ``config.py``, ``cache.py``, ``_validation.py``: what both twins share (the
  model config, the decoder's cache values, argument checks);
- ``errors.py``: :class:`TxcourseError`, the one error type of the user's
  mistakes (a bad option, field, file or checkpoint); anything else is a bug;
- ``registry.py``: the frameworks and model kinds, and the one function that
  imports a half by name (:func:`txcourse.registry.backend`);
- ``data/``: tasks, tokenizers, batching, corpora;
- ``training/``: the configuration, the one training loop both Trainers run,
  checkpoints, data parallelism;
- ``evaluation/``: translating with a model, metrics, parameter and FLOP counts;
- ``notebook/``: what book pages and lab cells import (plots, checks);
- ``cli/``: the ``txcourse`` command;
- ``course/``: the instructor's tooling (grading, errata, artefacts, figures):
  the package's own modules never import it, and only grading needs its extra
  (``pip install -e '.[course]'``).

Shape legend used in every shape comment of the teaching code::

    B    batch size
    T    sequence length (T_q: queries, T_k: keys and values,
         T_src: source tokens, T_tgt: target tokens)
    D    model width, ``d_model``
    H    number of attention heads, ``num_heads``
    H_kv number of key/value heads, ``num_kv_heads`` (H unless multi-query
         or grouped-query attention)
    d_k  width of one head, ``D // H``
    F    inner width of the feed-forward network, ``d_ff``
    V    vocabulary size
    U    hidden units of a GRU (week 1)

Mask convention (both frameworks): ``True`` (or 1) marks a position that may
NOT be attended, as in the source notes and ``torch.nn.Transformer``.
"""

from txcourse.config import TransformerConfig
from txcourse.errors import TxcourseError

__all__ = ["TransformerConfig", "TxcourseError", "__version__"]
__version__ = "0.1.0"
