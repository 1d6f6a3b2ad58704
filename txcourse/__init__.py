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
- ``registry.py``: the frameworks and model kinds, and what a half offers
  (:class:`~txcourse.registry.Backend`); ``decoding.py``: what greedy
  decoding, sampling and beam search share that needs no framework;
- ``backends.py``: the one module that chooses a half by name
  (:func:`txcourse.backends.backend`), an upper layer like ``cli/``;
  ``distributed_check.py``, the data-parallel check, runs a half so chosen;
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

Debug mode: a layer's forward/call checks only what is free (ranks, integer ids); the per-call checks of
dtypes, widths, masks, caches and token ranges run inside ``with txcourse.debug_checks():`` or with
``TXCOURSE_DEBUG=1`` (see :func:`txcourse._validation.debugging`).

Mask convention (both frameworks): ``True`` (or 1) marks a position that may
NOT be attended, as in the source notes and ``torch.nn.Transformer``.
"""

from txcourse._validation import debug_checks
from txcourse.config import Seq2SeqConfig, TransformerConfig
from txcourse.errors import TxcourseError

__all__ = ["TransformerConfig", "Seq2SeqConfig", "TxcourseError", "debug_checks", "__version__"]
__version__ = "0.1.0"
