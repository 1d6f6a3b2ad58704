"""The figures' catalogue (issue 33): the words drawn in the book's figures, in each edition's language.

A figure's labels are English strings in code, marked ``_("...")``,
``N_("...")`` or ``tr("...")`` (txcourse/notebook/plots/labels.py): in the plotting functions
(``txcourse/notebook/plots/*.py``), in the book's figure recipes
(``txcourse/course/figures/*.py``) and in the book's code cells
(``book/*.md``). :func:`messages` extracts them (Babel's Python extractor);
:func:`update` brings ``locales/<lang>/LC_MESSAGES/figures.po`` in step with
them (new messages untranslated, changed ones fuzzy, removed ones obsolete),
and :func:`problems` lists what the catalogue lacks, as tests/book/test_i18n.py
and ``make translations`` report it::

    python book/_ext/figure_catalogue.py ROOT LANG    # update ROOT/locales/LANG/LC_MESSAGES/figures.po
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from string import Formatter

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_python
from babel.messages.pofile import read_po, write_po

KEYWORDS = {"_": None, "N_": None, "tr": None}
WIDTH = 76  # the catalogues' line width (Babel's write_po)
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
OPTION_LINE = re.compile(r"^:[a-z-]+:.*$", re.M)  # a cell option such as ":tab: PyTorch"


def code_cells(markdown: str) -> list[tuple[int, str]]:
    """Return (line, source) of each ``{code-cell}`` of a MyST page, without its options."""
    cells = []
    for match in CODE_CELL.finditer(markdown):
        source = FRONT_MATTER.sub(lambda m: "\n" * m.group(0).count("\n"), match.group(1))
        source = OPTION_LINE.sub("", source)
        cells.append((markdown[: match.start()].count("\n") + 2, source))
    return cells


def _extract(source: str) -> list[tuple[int, str]]:
    found = extract_python(io.BytesIO(source.encode("utf-8")), KEYWORDS, [], {"encoding": "utf-8"})
    return [(line, text) for line, _, text, _ in found if isinstance(text, str)]


def messages(root: Path) -> dict[str, list[str]]:
    """Return {message: ["path:line", ...]} of every marked figure label under ``root``, in source order."""
    root = Path(root)
    found: dict[str, list[str]] = {}
    modules = [
        *(root / "txcourse" / "notebook" / "plots").glob("*.py"),
        *(root / "txcourse" / "course" / "figures").glob("*.py"),
    ]
    for path in sorted(modules):
        for line, text in _extract(path.read_text(encoding="utf-8")):
            found.setdefault(text, []).append(f"{path.relative_to(root).as_posix()}:{line}")
    for page in sorted((root / "book").glob("*.md")):
        for start, source in code_cells(page.read_text(encoding="utf-8")):
            for line, text in _extract(source):
                found.setdefault(text, []).append(f"{page.relative_to(root).as_posix()}:{start + line - 1}")
    found.pop("", None)
    return found


def template(found: dict[str, list[str]]) -> Catalog:
    """Return the catalogue template (no translations) of :func:`messages`."""
    catalog = Catalog(project="txcourse figures", fuzzy=False)
    for text, places in found.items():
        catalog.add(text, locations=[(path, int(line)) for path, line in (p.rsplit(":", 1) for p in places)])
    return catalog


def update(po_path: Path, found: dict[str, list[str]], lang: str) -> Catalog:
    """Bring the catalogue ``po_path`` in step with ``found`` and write it; return it."""
    po_path = Path(po_path)
    if po_path.is_file():
        with open(po_path, "rb") as f:
            catalog = read_po(f, locale=lang)
    else:
        catalog = Catalog(locale=lang, project="txcourse figures", fuzzy=False)
    catalog.update(template(found), update_header_comment=False, update_creation_date=False)
    po_path.parent.mkdir(parents=True, exist_ok=True)
    with open(po_path, "wb") as f:
        write_po(f, catalog, width=WIDTH, include_previous=False, include_lineno=False)
    return catalog


def problems(catalog: Catalog, found: dict[str, list[str]]) -> list[str]:
    """Return one line per message of ``found`` the catalogue lacks or leaves untranslated or fuzzy,
    and per message it holds that the code no longer draws (obsolete, or not extracted)."""
    out = []
    for text, places in found.items():
        message = catalog.get(text)
        where = places[0]
        if message is None:
            out.append(f"figures.po: missing (run make translations): {text!r} ({where})")
        elif message.fuzzy:
            out.append(f"figures.po: fuzzy: {text!r} ({where})")
        elif not message.string:
            out.append(f"figures.po: untranslated: {text!r} ({where})")
    for message in catalog:
        if message.id and message.id not in found:
            out.append(f"figures.po: no longer in the code: {message.id!r}")
    for message in catalog.obsolete.values():
        out.append(f"figures.po: obsolete (remove it): {message.id!r}")
    return out


def fields(text: str) -> list[str]:
    """The ``str.format`` replacement fields of ``text`` (``{name}``, ``{eps:g}``), sorted."""
    return sorted(
        f"{{{name}{':' + spec if spec else ''}}}" for _, name, spec, _ in Formatter().parse(text) if name is not None
    )


def field_problems(catalog: Catalog) -> list[str]:
    """Return one line per translation whose replacement fields differ from its English's (``.format`` would fail
    or drop a number)."""
    out = []
    for message in catalog:
        if message.id and message.string:
            try:
                same = fields(message.id) == fields(message.string)
            except ValueError as error:  # an unmatched brace
                same, error_text = False, f" ({error})"
            else:
                error_text = ""
            if not same:
                out.append(f"figures.po: the fields of {message.string!r} are not those of {message.id!r}{error_text}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: figure_catalogue.py ROOT LANG", file=sys.stderr)
        return 2
    root, lang = Path(argv[0]), argv[1]
    found = messages(root)
    catalog = update(root / "locales" / lang / "LC_MESSAGES" / "figures.po", found, lang)
    lines = problems(catalog, found) + field_problems(catalog)
    print(f"locales/{lang}/LC_MESSAGES/figures.po: {len(found)} messages, {len(lines)} to translate or remove")
    for line in lines:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
