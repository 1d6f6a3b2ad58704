"""The labs' translated editions (issue 33, item 4): gettext catalogues of the specs' Markdown text.

Each Markdown cell of ``labs/specs/<lab>.py`` is cut into paragraphs (blocks
separated by a blank line; a fenced code block and a paragraph that is only
display math stay as they are, untranslated). Every other paragraph is one
message, in its spec form (with the ``[[FW]]``-style placeholders, which the
translation keeps and ``make_sources.py`` fills in afterwards). The text of
``labs/specs/_cells.py`` (shared by every lab) goes into its own catalogue
``_cells.po``; each lab's own text into ``<lab>.po``:

    locales/<lang>/LC_MESSAGES/labs/_cells.po, <lab>.po

Code, tests and probes are never extracted: the translated notebooks differ
from the English ones in their Markdown text only.

    python labs/i18n.py update locales/ko   # (re)extract: new messages untranslated, changed fuzzy,
                                            # removed obsolete (``make translations`` runs it)
    python labs/i18n.py stats locales/ko    # per catalogue: messages, translated, fuzzy, untranslated, obsolete
"""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (HERE, ROOT / "book" / "_ext"):  # the specs' package; the book's checks (i18n_checks.py)
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

SHARED = "_cells"  # the catalogue of labs/specs/_cells.py's text
LANGS = ("ko",)  # the translated editions make_sources.py writes (labs/<lang>/)
CREATED = datetime(2026, 11, 28, tzinfo=timezone.utc)  # a fixed date in the headers: no diff on each update
HEADER = "# {lang} translation of the txcourse labs' Markdown (labs/specs), written by labs/i18n.py.\n#"
FENCE = re.compile(r"^\s*(```|~~~)")
DISPLAY_MATH = re.compile(r"^\$\$.*\$\$$", re.S)


def catalogue_dir(lang: str, root: Path = ROOT) -> Path:
    """Return the folder of the ``lang`` catalogues of the labs."""
    return root / "locales" / lang / "LC_MESSAGES" / "labs"


def blocks(text: str) -> list[str]:
    """Cut dedented Markdown ``text`` into blocks separated by blank lines (a fenced block stays whole)."""
    out, current, fenced = [], [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                out.append("\n".join(current))
            current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def translatable(block: str) -> bool:
    """Whether ``block`` is a message: not a fenced code block, not display math alone."""
    return not FENCE.match(block) and not DISPLAY_MATH.match(block.strip())


def parts(source) -> list[str]:
    """The dedented, stripped Markdown texts of a cell ``source`` (a string, per-framework dict or tuple)."""
    if isinstance(source, (list, tuple)):
        return [text for part in source for text in parts(part)]
    if isinstance(source, dict):
        return [text for value in source.values() for text in parts(value)]
    return [textwrap.dedent(source).strip("\n")]


def shared_texts() -> set[str]:
    """The dedented module-level strings of labs/specs/_cells.py (text shared by every lab)."""
    cells = importlib.import_module("specs._cells")
    return {textwrap.dedent(v).strip("\n") for k, v in vars(cells).items() if k.isupper() and isinstance(v, str)}


def messages(labs) -> dict[str, list[tuple[str, str]]]:
    """``{catalogue: [(msgid, where), ...]}`` in the specs' order: every translatable block of every Markdown
    cell of ``labs`` (``where``: ``<lab> cell-<index>``), the shared text under :data:`SHARED`."""
    shared = shared_texts()
    out: dict[str, list[tuple[str, str]]] = {SHARED: []}
    for lab in labs:
        spec = importlib.import_module(f"specs.{lab}")
        out[lab] = []
        for index, cell in enumerate(spec.CELLS):
            if cell.kind != "md":
                continue
            for text in parts(cell.source):
                name = SHARED if text in shared else lab
                for block in blocks(text):
                    if translatable(block):
                        out[name].append((block, f"{lab} cell-{index:02d}"))
    return out


def template(name: str, entries: list[tuple[str, str]]):
    """A babel catalogue (the .pot) of one catalogue's messages, each with its cells as comments."""
    from babel.messages.catalog import Catalog

    catalogue = Catalog(project="txcourse labs", fuzzy=False, creation_date=CREATED)
    for msgid, where in entries:
        message = catalogue.get(msgid)
        if message is None:
            catalogue.add(msgid, auto_comments=[where])
        elif where not in message.auto_comments:
            message.auto_comments.append(where)
    return catalogue


def write(catalogue, path: Path) -> None:
    from babel.messages.pofile import write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        write_po(f, catalogue, width=76, omit_header=False)


def read(path: Path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        return read_po(f)


def update(lang: str, labs, root: Path = ROOT) -> list[str]:
    """(Re)write ``locales/<lang>/LC_MESSAGES/labs/*.po`` from the specs: a new message comes out
    untranslated, a changed one fuzzy (babel's match of the old translation), a removed one obsolete.
    Return one line per catalogue written."""
    from babel.messages.catalog import Catalog

    folder = catalogue_dir(lang, root)
    lines = []
    for name, entries in messages(labs).items():
        path = folder / f"{name}.po"
        pot = template(name, entries)
        catalogue = read(path) if path.exists() else Catalog(locale=lang, project="txcourse labs", fuzzy=False)
        catalogue.update(pot, update_header_comment=False)
        catalogue.header_comment = HEADER.format(lang=lang)
        catalogue.creation_date = catalogue.revision_date = CREATED
        catalogue.fuzzy = False
        write(catalogue, path)
        lines.append(f"{path.relative_to(root)}: {len(pot)} messages")
    return lines


class Translator:
    """Translate the Markdown text of a cell with the ``lang`` catalogues; collect what is missing."""

    def __init__(self, lang: str, root: Path = ROOT):
        self.lang = lang
        self.tables: dict[str, dict[str, str]] = {}  # catalogue -> {msgid: msgstr}, translated and not fuzzy
        self.missing: list[str] = []
        for path in sorted(catalogue_dir(lang, root).glob("*.po")):
            self.tables[path.stem] = {m.id: m.string for m in read(path) if m.id and m.string and not m.fuzzy}

    def __call__(self, text: str, lab: str, where: str) -> str:
        """``text`` (dedented Markdown of a cell of ``lab``) with each translatable block replaced by its
        translation from the lab's catalogue or the shared one; an untranslated or fuzzy block stays English
        and is recorded in :attr:`missing` (with ``where``)."""
        out = []
        for block in blocks(text):
            if translatable(block):
                found = [t[block] for t in (self.tables.get(lab, {}), self.tables.get(SHARED, {})) if block in t]
                if found:
                    block = found[0]
                else:
                    self.missing.append(f"{where}: no {self.lang} translation of {block[:80]!r}")
            out.append(block)
        return "\n\n".join(out)


PLACEHOLDER = re.compile(r"\[\[[A-Za-z_]+\]\]")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def message_problems(name: str, msgid: str, msgstr: str, terms, checks) -> list[str]:
    """What a translation ``msgstr`` of ``msgid`` (catalogue ``name``) breaks: a code span, math, role or link
    target lost (``checks``: book/_ext/i18n_checks.py), a ``[[FW]]``-style placeholder lost or added, a term of
    ``terms`` (locales/<lang>/terms.tsv) not used. Terms are matched with line breaks read as spaces, so
    inline math broken over two lines of a cell stays math."""
    if not msgstr:
        return []
    out = checks.markup_problems(name, msgid, msgstr)
    if sorted(PLACEHOLDER.findall(msgid)) != sorted(PLACEHOLDER.findall(msgstr)):
        out.append(
            f"{name}: placeholders {sorted(PLACEHOLDER.findall(msgstr))} in the translation of "
            f"{checks.short(msgid)!r}, which has {sorted(PLACEHOLDER.findall(msgid))}"
        )
    return out + checks.term_problems(name, msgid.replace("\n", " "), msgstr.replace("\n", " "), terms)


def edition_problems(name: str, english, translated, script=HANGUL) -> list[str]:
    """How the translated notebook ``translated`` differs from ``english`` (both nbformat v4) beyond the text
    of its Markdown: notebook metadata, cell count, each cell's type, id and metadata, every code cell's
    source, every Markdown cell's blocks (same count; code blocks and display math unchanged). A Markdown
    block with English prose and none of ``script`` (Hangul) in its translation is reported as left English."""
    import i18n_checks as checks

    out = []
    if (english.metadata, english.nbformat, english.nbformat_minor) != (
        translated.metadata,
        translated.nbformat,
        translated.nbformat_minor,
    ):
        out.append(f"{name}: notebook metadata {dict(translated.metadata)} != the English {dict(english.metadata)}")
    if len(english.cells) != len(translated.cells):
        return out + [f"{name}: {len(translated.cells)} cells, the English has {len(english.cells)}"]
    for index, (en, tr) in enumerate(zip(english.cells, translated.cells)):
        where = f"{name} cell {index} ({en.get('id')})"
        for key in ("cell_type", "id", "metadata"):
            if en.get(key) != tr.get(key):
                out.append(f"{where}: {key} {tr.get(key)!r} != the English {en.get(key)!r}")
        if en.cell_type != "markdown":
            if en.source != tr.source:
                out.append(f"{where}: the {en.cell_type} cell's source differs from the English")
            continue
        en_blocks, tr_blocks = blocks(en.source), blocks(tr.source)
        if len(en_blocks) != len(tr_blocks):
            out.append(f"{where}: {len(tr_blocks)} Markdown blocks, the English has {len(en_blocks)}")
            continue
        for a, b in zip(en_blocks, tr_blocks):
            if not translatable(a) and a != b:
                out.append(f"{where}: a code block or display math changed: {checks.short(a)!r}")
            elif translatable(a) and re.search(r"[A-Za-z]{3}", checks.prose(a)) and not script.search(b):
                out.append(f"{where}: left English: {checks.short(b)!r}")
    return out


def stats(lang: str, root: Path = ROOT) -> list[str]:
    """Per catalogue: messages, translated, fuzzy, untranslated, obsolete."""
    lines = []
    for path in sorted(catalogue_dir(lang, root).glob("*.po")):
        cat = [m for m in read(path) if m.id]
        fuzzy = sum(1 for m in cat if m.string and m.fuzzy)
        done = sum(1 for m in cat if m.string and not m.fuzzy)
        lines.append(
            f"{path.stem}: {len(cat)} messages, {done} translated, {fuzzy} fuzzy, "
            f"{len(cat) - done - fuzzy} untranslated, {len(read(path).obsolete)} obsolete"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    import argparse

    from txcourse.course.labs import LABS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("update", "stats"))
    parser.add_argument("locale_dir", type=Path, help="locales/<lang>")
    args = parser.parse_args(argv)
    lang = args.locale_dir.resolve().name
    root = args.locale_dir.resolve().parents[1]
    lines = update(lang, LABS, root) if args.action == "update" else []
    print("\n".join(lines + stats(lang, root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
