"""Checks of the translated editions' catalogues (issue 33): what `make test` refuses, as pure functions.

The catalogues are ``locales/<lang>/LC_MESSAGES/book/<page>.po``, one per
page, written by ``make translations`` (Sphinx's gettext builder, then
``sphinx-intl update``). tests/book/test_i18n.py runs every check below on
them; each function takes parsed catalogues or strings and returns the
problems it found as readable lines naming the page and the English sentence,
so the tests show them and can feed the functions small made-up catalogues::

    python book/_ext/i18n_checks.py locales/ko    # per page: messages, translated, fuzzy, untranslated, obsolete
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

# Spans a translation must keep unchanged (the translators' po_tools.py rules): roles and their targets,
# inline code, math, substitutions, link targets, footnote references, HTML tags.
KEEP = (
    r"\{[a-z:-]+\}`[^`]*`",  # {cite:t}`key`, {ref}`label`, {numref}`...`, {doc}`...`
    r"(?<!\{[a-z:])(?<![a-z}])`[^`]+`",  # `code`
    r"\$\$.+?\$\$",  # display math inside a paragraph
    r"(?<![\\$])\$[^$\n]+?\$",  # $math$
    r"\{\{[^}]+\}\}",  # {{ substitution }}
    r"\]\([^)]+\)",  # ](link target)
    r"\[\^[^\]]+\]",  # [^footnote]
    r"<[a-zA-Z/][^>]*>",  # HTML tags
)
KEEP_RE = re.compile("|".join(f"(?:{k})" for k in KEEP), re.S)


def short(text: str, width: int = 100) -> str:
    """Return ``text`` on one line, cut to ``width`` characters."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 3] + "..."


def read_catalogue(path: Path):
    """Return the babel catalogue of the ``.po``/``.pot`` file at ``path``."""
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        return read_po(f)


def read_catalogues(folder: Path, suffix: str = ".po") -> dict:
    """Return ``{page: catalogue}`` for every ``<page><suffix>`` file in ``folder``."""
    return {p.stem: read_catalogue(p) for p in sorted(Path(folder).glob(f"*{suffix}"))}


def status_problems(page: str, catalogue) -> list[str]:
    """Return one line per message of ``catalogue`` (page ``page``) that is untranslated, fuzzy or obsolete."""
    out = []
    for message in catalogue:
        if not message.id:
            continue
        if not message.string:
            out.append(f"{page}: untranslated: {short(message.id)!r}")
        elif message.fuzzy:
            out.append(f"{page}: fuzzy (the English changed; check the translation): {short(message.id)!r}")
    for msgid in catalogue.obsolete:
        out.append(f"{page}: obsolete (no longer in the English page; `make translations` lists it): {short(msgid)!r}")
    return out


def drift_problems(english: Mapping[str, Iterable[str]], catalogues: Mapping[str, Iterable[str]]) -> list[str]:
    """Compare the messages of the English pages (``{page: msgids}``) with the catalogues' (``{page: msgids}``).

    A page or message of the English with no catalogue entry, or a catalogue
    page or entry the English no longer has, is one line each.
    """
    out = []
    for page in sorted(set(english) | set(catalogues)):
        if page not in catalogues:
            out.append(f"{page}: the English page has no catalogue (run `make translations`)")
            continue
        if page not in english:
            out.append(f"{page}: the catalogue's page is no longer in the English book (run `make translations`)")
            continue
        en, cat = set(english[page]) - {""}, set(catalogues[page]) - {""}
        out += [f"{page}: not in the catalogue (run `make translations`): {short(m)!r}" for m in sorted(en - cat)]
        out += [f"{page}: in the catalogue, not in the English page: {short(m)!r}" for m in sorted(cat - en)]
    return out


ROLE_RE = re.compile(r"^(\{[a-z:-]+\})`(?:[^`<]*<([^`>]+)>|([^`]*))`$", re.S)


def role_target(span: str) -> str:
    """A role as its name and target: the text a reader sees may be translated, the target may not.

    ``{doc}`week 2 <week2_positional>``` and ``{doc}`2주차 <week2_positional>``` both give
    ``{doc}`<week2_positional>```, and so does ``{doc}`week2_positional``` (no display text: the target).
    """
    match = ROLE_RE.match(span)
    if not match:
        return span
    return f"{match.group(1)}`<{(match.group(2) or match.group(3)).strip()}>`"


def kept_spans(text: str) -> Counter:
    """Return the spans of ``text`` a translation must keep (code, math, roles, substitutions, links, tags);
    a role with display text counts by its target only (:func:`role_target`)."""
    return Counter(role_target(m.group(0)) for m in KEEP_RE.finditer(text))


def markup_problems(page: str, msgid: str, msgstr: str) -> list[str]:
    """Return a line for each span of ``msgid`` that ``msgstr`` lost or changed (empty when untranslated)."""
    if not msgstr:
        return []
    missing = kept_spans(msgid) - kept_spans(msgstr)
    return [f"{page}: the translation lost {span!r} of {short(msgid)!r}" for span in sorted(missing)]


def read_terms(text: str) -> list[tuple[tuple[str, ...], str]]:
    """Parse terms.tsv: ``[(english alternatives, korean), ...]``, skipping comments and the header.

    Raises:
        ValueError: a row has not exactly two tab-separated fields, or an empty one.
    """
    terms = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not all(f.strip() for f in fields):
            raise ValueError(f"terms.tsv line {number}: expected 'english<TAB>korean', got {line!r}")
        if fields == ["english", "korean"]:
            continue
        terms.append((tuple(a.strip() for a in fields[0].split("|")), fields[1].strip()))
    return terms


def prose(text: str) -> str:
    """Return ``text`` without the spans that are not prose (code, math, roles, substitutions, link targets)."""
    return KEEP_RE.sub(" ", text)


def _term_pattern(english: str) -> re.Pattern:
    """The English term ``english`` as whole words, any spacing, any case."""
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, english.split())) + r"(?!\w)", re.I)


def uses_term(text: str, english: str) -> bool:
    """Does the prose of ``text`` hold the English term ``english`` as whole words (any case)?"""
    return _term_pattern(english).search(prose(text)) is not None


def term_problems(page: str, msgid: str, msgstr: str, terms: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """Return a line for each term whose English ``msgid`` uses in prose and whose Korean ``msgstr`` lacks.

    Longer terms are matched first and consume their words ("gradient descent" is not also "gradient",
    "self-attention" not also "attention"); a term whose Korean is ``=`` is a name kept in Latin letters
    (it only consumes its words). A message kept as it is (``msgstr == msgid``: a name, code, the English
    column of the glossary) needs no Korean term.
    """
    if not msgstr or msgstr == msgid:
        return []
    text = prose(msgid)
    ordered = sorted(((a, korean) for alternatives, korean in terms for a in alternatives), key=lambda t: -len(t[0]))
    out, seen = [], set()
    for english, korean in ordered:
        pattern = _term_pattern(english)
        if not pattern.search(text):
            continue
        text = pattern.sub(" ", text)
        if korean != "=" and korean not in msgstr and korean not in seen:
            seen.add(korean)
            out.append(f"{page}: {english!r} is {korean!r} (locales/ko/terms.tsv), missing from the translation of "
                       f"{short(msgid)!r}")  # fmt: skip
    return out


def glossary_rows(markdown: str) -> list[tuple[str, str]]:
    """Return ``(korean cell, english cell)`` of every row of the glossary's tables (first two columns)."""
    rows = []
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if len(cells) >= 2 and not set(cells[0]) <= set("-: ") and cells[:2] != ["한국어 (Korean)", "English"]:
            rows.append((cells[0], cells[1]))
    return rows


def english_variants(cell: str) -> list[str]:
    """Return the readings of a glossary English cell: as written, without brackets, without bracketed words."""
    return [cell, re.sub(r"[()]", "", cell), re.sub(r"\s*\([^)]*\)", "", cell)]


def glossary_problems(terms: list[tuple[tuple[str, ...], str]], markdown: str) -> list[str]:
    """Return a line for each row of terms.tsv that no row of the glossary's tables holds.

    A glossary row holds a term when its Korean cell contains the Korean term
    and its English cell (as written, without brackets or without the
    bracketed words) one of the English alternatives, as whole words.
    """
    rows = glossary_rows(markdown)
    out = []
    for alternatives, korean in terms:
        if korean == "=":
            continue  # a name kept in Latin letters, not a term of the glossary
        found = any(
            korean in ko and any(uses_term(v, a) for v in english_variants(en) for a in alternatives) for ko, en in rows
        )
        if not found:
            out.append(f"terms.tsv: {'|'.join(alternatives)!r} = {korean!r} is in no table row of book/glossary.md")
    return out


def summary(folder: Path) -> list[str]:
    """Return one line per catalogue of ``folder``: messages, translated, fuzzy, untranslated, obsolete."""
    lines = []
    for page, cat in read_catalogues(folder).items():
        ids = [m for m in cat if m.id]
        fuzzy = sum(1 for m in ids if m.string and m.fuzzy)
        done = sum(1 for m in ids if m.string and not m.fuzzy)
        lines.append(
            f"{page:24s} {len(ids):4d} messages, {done:4d} translated, {fuzzy:3d} fuzzy, "
            f"{len(ids) - done - fuzzy:4d} untranslated, {len(cat.obsolete):3d} obsolete"
        )
        lines += [f"    obsolete: {short(msgid)!r}" for msgid in cat.obsolete]
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: i18n_checks.py locales/<lang>")
    print("\n".join(summary(Path(sys.argv[1]) / "LC_MESSAGES" / "book")))
