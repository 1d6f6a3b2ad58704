"""Numbers about the shipped artefacts, read from them at build time, as MyST substitutions.

``txcourse.course.artefacts.book_values`` reads ``book/data/`` (the trained
checkpoint's header and its training history) and names each value the prose
may state: ``tx_d_model``, ``tx_warmup``, ``tx_loss_floor``... This extension
adds them to ``myst_substitutions`` when the configuration is read, so a page
writes::

    The shipped model has $d_\\text{model} =$ {{ tx_d_model }}.

and the built page shows the checkpoint's own value. Retraining the
checkpoint changes the text with it; an unknown name is a MyST warning, which
``make book`` (``-W``) turns into an error. MyST does not substitute inside
math, so a value stands outside the ``$...$``.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config


def artefact_substitutions(srcdir: str | Path, config: Config) -> dict[str, str]:
    """Merge the artefacts' values into ``config.myst_substitutions`` and return them.

    Raises:
        ValueError: a name is already a substitution of the book's own configuration.
    """
    from txcourse.course.artefacts import book_values

    values = book_values(Path(srcdir))
    existing = dict(getattr(config, "myst_substitutions", None) or {})
    clash = sorted(set(values) & set(existing))
    if clash:
        raise ValueError(
            f"myst_substitutions already defines {clash}: the names of txcourse.course.artefacts.book_values "
            f"are reserved for the shipped artefacts' values"
        )
    config.myst_substitutions = {**existing, **values}
    return values


def _on_config_inited(app: Sphinx, config: Config) -> None:
    artefact_substitutions(app.srcdir, config)


def setup(app: Sphinx) -> dict:
    # config-inited runs before builder-inited, where myst-parser reads its settings.
    app.connect("config-inited", _on_config_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
