"""The translated slide decks (issue 33): gettext catalogues of the decks' text, and decks built from them.

One catalogue per deck, ``locales/<lang>/LC_MESSAGES/slides/<deck>.po``. A message is one
unit a translator can work with: a heading, a list item, a paragraph, a table cell, an
image line (its alt text), a line of the speaker notes, taken from the deck as
``slides/build.py`` parses it (``:::errata`` lines expanded, so the errata's topics and
explanations are translated too). Code blocks, displayed math, slide attributes, and
lines with no words outside code, math and markup are not messages: they reach the
translated deck unchanged.

    python slides/i18n.py update [--lang ko]   # re-extract; new -> untranslated, changed -> fuzzy, gone -> obsolete
    python slides/i18n.py stats  [--lang ko]   # per deck: messages, translated, fuzzy, untranslated, obsolete

``slides/build.py notebooks --lang ko`` builds the decks from the catalogues (``make slides``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOCALES = ROOT / "locales"
WIDTH = 76  # babel's write_po width, as the book's catalogues (sphinx-intl)

FENCE = re.compile(r"^\s*(```|~~~)")
DISPLAY_MATH = re.compile(r"^\s*\$\$")
COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
HEADING = re.compile(r"^(#{1,6}\s+)(.*)$")
ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)(.*)$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# What is not prose: code, math, roles, link targets, HTML tags (book/_ext/i18n_checks.KEEP), then
# Markdown's own marks. A unit whose rest has no word of two letters is not a message.
WORD = re.compile(r"[A-Za-z]{2,}")


def _prose(text: str) -> str:
    return _checks().prose(text)


def _checks():
    """book/_ext/i18n_checks.py, the book's catalogue checks (loaded by path: book/_ext is no package)."""
    if "i18n_checks" not in sys.modules:
        sys.path.insert(0, str(ROOT / "book" / "_ext"))
        import i18n_checks  # noqa: F401

    return sys.modules["i18n_checks"]


def is_message(text: str) -> bool:
    """Does ``text`` hold words to translate (outside code, math, tags and link targets)?"""
    return bool(WORD.search(_prose(text)))


@dataclass(frozen=True)
class Unit:
    """One message of a Markdown text: lines ``[start, end)``, the line's ``prefix`` (heading
    marks, list marker), the ``text`` (the msgid) and, for a table cell, its ``cell`` index."""

    start: int
    end: int
    prefix: str
    text: str
    cell: int | None = None


def _cells(line: str) -> list[str]:
    return line.strip().strip("|").split("|")


def units(markdown: str) -> list[Unit]:
    """The translatable units of ``markdown`` (a slide's body or its notes), in order."""
    lines = markdown.split("\n")
    out: list[Unit] = []
    fenced = math = False
    paragraph: list[int] = []

    def flush():
        if paragraph:
            text = "\n".join(lines[i] for i in paragraph)
            if is_message(text):
                out.append(Unit(paragraph[0], paragraph[-1] + 1, "", text))
            paragraph.clear()

    for i, line in enumerate(lines):
        if fenced or FENCE.match(line):
            flush()
            if FENCE.match(line):
                fenced = not fenced
            continue
        if math or DISPLAY_MATH.match(line):
            flush()
            # a line that opens $$ and does not close it on the same line starts a block
            if DISPLAY_MATH.match(line) and line.count("$$") % 2 == 1 or math and "$$" in line:
                math = not math
            continue
        if not line.strip() or COMMENT.match(line):
            flush()
            continue
        if line.lstrip().startswith("|"):
            flush()
            if not TABLE_RULE.match(line):
                for k, cell in enumerate(_cells(line)):
                    if is_message(cell.strip()):
                        out.append(Unit(i, i + 1, "", cell.strip(), k))
            continue
        marked = HEADING.match(line) or ITEM.match(line)
        if marked:
            flush()
            if is_message(marked.group(2)):
                out.append(Unit(i, i + 1, marked.group(1), marked.group(2)))
            continue
        paragraph.append(i)
    flush()
    return out


def apply(markdown: str, translate) -> str:
    """``markdown`` with every unit's text replaced by ``translate(text)``."""
    lines = markdown.split("\n")
    for unit in reversed(units(markdown)):
        new = translate(unit.text)
        if unit.cell is not None:
            cells = _cells(lines[unit.start])
            cells[unit.cell] = f" {new} "
            lines[unit.start] = "|" + "|".join(cells) + "|"
        else:
            lines[unit.start : unit.end] = [unit.prefix + new]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Checks (tests/book/test_slides_i18n.py): the book's (book/_ext/i18n_checks.py), plus the errata's <code>
# ---------------------------------------------------------------------------
CODE_ELEMENT = re.compile(r"<code>.*?</code>", re.S)  # the errata's wrong/right versions and test names


def markup_problems(deck: str, msgid: str, msgstr: str) -> list[str]:
    """The book's markup check (code, math, link targets, tags kept), and every ``<code>...</code>`` kept whole:
    the errata's code is shown as the notes and the course wrote it, in any language."""
    out = _checks().markup_problems(deck, msgid, msgstr)
    if msgstr:
        kept = CODE_ELEMENT.findall(msgstr)
        out += [f"{deck}: the translation changed {span!r} of {_checks().short(msgid)!r}"
                for span in CODE_ELEMENT.findall(msgid) if span not in kept]  # fmt: skip
    return out


def term_problems(deck: str, msgid: str, msgstr: str, terms) -> list[str]:
    """The book's term check (locales/<lang>/terms.tsv), on the prose outside ``<code>...</code>``."""
    if msgstr == msgid:  # kept as it is (a name, code): no Korean term needed
        return []
    return _checks().term_problems(deck, CODE_ELEMENT.sub("<code></code>", msgid), msgstr, terms)


# ---------------------------------------------------------------------------
# Catalogues
# ---------------------------------------------------------------------------
def deck_messages(deck) -> list[tuple[str, int, bool]]:
    """``(msgid, slide number, in the speaker notes)`` of a parsed deck (slides/build.py's Deck), in order."""
    found = []
    for number, slide in enumerate(deck.slides, 1):
        found += [(u.text, number, False) for u in units(slide.body)]
        found += [(u.text, number, True) for u in units(slide.notes)]
    return found


def template(deck):
    """The deck's messages as a babel catalogue (a .pot): locations ``slides/<deck>.md:<slide>``."""
    from babel.messages.catalog import Catalog

    catalogue = Catalog(project="txcourse slides", fuzzy=False)
    for msgid, number, notes in deck_messages(deck):
        message = catalogue.get(msgid)
        if message is None:
            catalogue.add(msgid, locations=[(f"slides/{deck.name}.md", number)],
                          auto_comments=["speaker notes"] if notes else [])  # fmt: skip
        else:
            message.locations.append((f"slides/{deck.name}.md", number))
    return catalogue


def catalogue_path(lang: str, deck: str, locales: Path = LOCALES) -> Path:
    return locales / lang / "LC_MESSAGES" / "slides" / f"{deck}.po"


def read(path: Path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        return read_po(f)


def write(catalogue, path: Path) -> None:
    from babel.messages.pofile import write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        write_po(f, catalogue, width=WIDTH, omit_header=False)


def _content(catalogue) -> list:
    """What a catalogue says, without its header: messages, translations, flags, locations, obsolete ids."""
    messages = [(m.id, m.string, sorted(m.flags), m.locations, m.auto_comments) for m in catalogue if m.id]
    return messages + sorted(catalogue.obsolete)


def update(decks, lang: str, locales: Path = LOCALES) -> list[str]:
    """Bring ``lang``'s catalogues in step with ``decks``: new messages untranslated, changed ones fuzzy
    (babel's nearest match), removed ones obsolete; a deck with no catalogue gets one. Returns a line per deck."""
    from babel.messages.catalog import Catalog

    lines = []
    for deck in decks:
        path = catalogue_path(lang, deck.name, locales)
        catalogue = read(path) if path.is_file() else Catalog(locale=lang, project="txcourse slides", fuzzy=False)
        before = _content(catalogue) if path.is_file() else None
        catalogue.update(template(deck), update_header_comment=False)
        catalogue.fuzzy = False
        if _content(catalogue) != before:  # unchanged messages: leave the file (and its dates) alone
            write(catalogue, path)
            lines.append(f"{deck.name}: {path} updated")
    for path in sorted(catalogue_path(lang, "x", locales).parent.glob("*.po")):
        if path.stem not in {d.name for d in decks}:
            lines.append(f"{path}: no deck slides/{path.stem}.md any more: remove the catalogue")
    return lines


def translator(catalogue, missing: list[str] | None = None):
    """``msgid -> msgstr`` from ``catalogue``; an untranslated or fuzzy message stays English (listed in ``missing``)."""

    def translate(msgid: str) -> str:
        message = catalogue.get(msgid)
        if message is None or not message.string or message.fuzzy:
            if missing is not None:
                missing.append(msgid)
            return msgid
        return message.string

    return translate


def translated(deck, catalogue, strip_markdown, missing: list[str] | None = None):
    """A copy of the parsed ``deck`` (slides/build.py's Deck) in the catalogue's language."""
    translate = translator(catalogue, missing)
    slides = [replace(s, body=apply(s.body, translate), notes=apply(s.notes, translate)) for s in deck.slides]
    title = re.search(r"^#\s+(.+)$", slides[0].body, re.M)
    return replace(deck, slides=slides, title=strip_markdown(title.group(1)))


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    import build

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "stats"])
    parser.add_argument("--lang", action="append", help="language (default: ko); may repeat")
    args = parser.parse_args(argv)
    decks = [build.parse_deck(p) for p in build.deck_sources()]
    for lang in args.lang or ["ko"]:
        if args.command == "update":
            print("\n".join(update(decks, lang)) or f"{lang}: every catalogue in step with the decks")
        print("\n".join(summary(lang)))
    return 0


def summary(lang: str, locales: Path = LOCALES) -> list[str]:
    folder = catalogue_path(lang, "x", locales).parent
    lines = []
    for path in sorted(folder.glob("*.po")):
        cat = read(path)
        ids = [m for m in cat if m.id]
        fuzzy = sum(1 for m in ids if m.string and m.fuzzy)
        done = sum(1 for m in ids if m.string and not m.fuzzy)
        lines.append(f"{lang}/{path.stem:18s} {len(ids):4d} messages, {done:4d} translated, {fuzzy:3d} fuzzy, "
                     f"{len(ids) - done - fuzzy:4d} untranslated, {len(cat.obsolete):3d} obsolete")  # fmt: skip
    return lines


if __name__ == "__main__":
    sys.exit(main())
