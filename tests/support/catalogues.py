"""Made-up gettext catalogues for the tests of the translation checks (tests/book/test_i18n.py and others)."""

from __future__ import annotations

from babel.messages.catalog import Catalog


def made_up_catalogue(*messages, obsolete=(), locale: str = "ko") -> Catalog:
    """A catalogue of ``(msgid, msgstr, *flags)`` messages, plus ``obsolete`` msgids (with an old translation)."""
    cat = Catalog(locale=locale)
    for msgid, msgstr, *flags in messages:
        cat.add(msgid, msgstr, flags=flags)
    for msgid in obsolete:
        cat.obsolete[msgid] = cat.add(msgid, "옛 번역")
        del cat[msgid]
    return cat
