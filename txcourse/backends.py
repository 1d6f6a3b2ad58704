"""The half the user chose: the one module that maps a framework's name, "torch" or "tf", to its half.

An upper layer, beside :mod:`txcourse.cli`: it imports the halves, and the
halves and the framework-free modules below them (config, registry, data,
training, evaluation) never import it. The command line, the benchmarks and
the figures ask it for a half by name; code written for one framework imports
that half itself (``import txcourse.torch as txt``).

``txcourse.torch`` and ``txcourse.tf`` are optional (the ``torch`` and ``tf``
extras), so each is imported inside the function that needs it, and only
then: importing this module imports no framework.

Example:
    >>> from txcourse.backends import backend
    >>> fw = backend("torch")  # doctest: +SKIP
    >>> model = fw.build_model("transformer", config)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from types import ModuleType

from txcourse.registry import FRAMEWORKS, Backend, check_framework

__all__ = ["backend", "library", "set_threads"]

# The package each half needs: set_threads skips a half whose framework is not installed.
_FRAMEWORK_PACKAGES = {"torch": "torch", "tf": "tensorflow"}


def backend(framework: str) -> Backend:
    """The :class:`~txcourse.registry.Backend` of the half ``framework`` names, imported now.

    Raises ValueError for an unknown framework, and ImportError, naming the
    extra to install, when the half's framework is not installed.
    """
    check_framework(framework)
    if framework == "torch":
        from txcourse.torch.backend import BACKEND
    else:
        from txcourse.tf.backend import BACKEND
    return BACKEND


def library(framework: str) -> ModuleType:
    """The half itself, ``txcourse.torch`` or ``txcourse.tf``: its layers and functions, for code that shows
    them (the book's figures draw positional encodings and attention weights with the layers themselves).

    What runs a model (training, decoding, tensors in and out) is in :func:`backend`.
    """
    check_framework(framework)
    if framework == "torch":
        import txcourse.torch as half
    else:
        import txcourse.tf as half
    return half


def set_threads(n: int, frameworks: Sequence[str] = FRAMEWORKS) -> None:
    """Limit the frameworks ``frameworks`` names to ``n`` CPU threads (call before they run anything).

    Each half sets its own (:attr:`Backend.set_threads <txcourse.registry.Backend>`, in
    ``txcourse/<framework>/devices.py``); importing a half runs nothing in its framework, so the count still
    applies. A framework that is not installed is skipped; none is imported that ``frameworks`` does not name.
    """
    for name in FRAMEWORKS:
        if name in frameworks and importlib.util.find_spec(_FRAMEWORK_PACKAGES[name]) is not None:
            backend(name).set_threads(n)
