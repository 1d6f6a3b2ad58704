"""Build the weekly slide decks (slides/README.md describes the format).

``make slides`` (mk/slides.mk) runs three steps:

1. ``build.py notebooks --out DIR``: each ``slides/week*.md`` becomes
   ``DIR/<week>.ipynb``, one Markdown cell per slide (``slideshow.slide_type``
   ``slide``), speaker notes as ``notes`` cells, ``:::errata E1 E8`` lines
   expanded from :data:`txcourse.course.errata.ERRATA`.
2. ``jupyter nbconvert --to slides`` on those notebooks, with every asset URL
   pointing into the output folder (the flags are in mk/slides.mk).
3. ``build.py assets --figures _build/figures --out _build/slides``: copies the
   figures the decks show (a translated deck's, drawn in its language by
   ``make figures``, from ``_build/figures/<lang>/`` into
   ``_build/slides/<lang>/figures/``), the vendored reveal.js, require.js, jQuery and
   MathJax 2 from ``node_modules`` (only the files the decks load), writes an
   ``index.html`` of the decks, and fails if a deck still names a remote asset.

The output is deterministic: cell ids are derived from the slide numbers, and
nothing depends on the time or the order of a directory listing.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COURSE = "txcourse: the Transformer, week by week"
REPO = "https://github.com/txcourse/txcourse"

SLIDE_BREAK = re.compile(r"^---\s*$")
FENCE = re.compile(r"^(```|~~~)")
NOTE = re.compile(r"^Note:\s*$")
NOTE_INLINE = re.compile(r"^Note:\s*\S")  # "Note: text" would show on the slide, not in the notes
SLIDE_ATTRS = re.compile(r"^<!--\s*\.slide:(.*?)-->\s*$")
ATTR = re.compile(r'data-([a-z][a-z0-9-]*)="([^"]*)"')
ERRATA_LINE = re.compile(r"^:::errata((?:\s+E\d+)+)\s*$")
FIGURE = re.compile(r"\(figures/([A-Za-z0-9_.-]+\.png)\)")


# ---------------------------------------------------------------------------
# Parsing slides/<week>.md
# ---------------------------------------------------------------------------
@dataclass
class Slide:
    body: str
    notes: str = ""
    data: dict[str, str] = field(default_factory=dict)


@dataclass
class Deck:
    name: str  # week1_seq2seq
    title: str  # the first slide's "# ..." heading: "Week 1: Sequence to sequence"
    slides: list[Slide]

    @property
    def figures(self) -> list[str]:
        return sorted({f for s in self.slides for f in FIGURE.findall(s.body)})


# A week may come in parts, one deck each ("# Week 6, part 2: ..."); the week's
# one lab is named after its first part.
DECK_TITLE = re.compile(r"^# Week (\d+)(?:, part (\d+))?: ", re.M)
LAB_OF = {"week6_decoding": "week6_training"}


def lab_name(deck: str) -> str:
    """The lab folder (labs/release/<lab>/) a deck's last slide links: its own name unless listed in LAB_OF."""
    return LAB_OF.get(deck, deck)


def _deck_order(path: Path) -> tuple[int, int, str]:
    """(week, part, name) from the deck's title: week 6 part 1 before part 2, whatever the file names."""
    match = DECK_TITLE.search(path.read_text(encoding="utf-8"))
    if not match:
        raise ValueError(f"{path.name}: the first heading must read '# Week N: ...' or '# Week N, part M: ...'")
    return int(match.group(1)), int(match.group(2) or 0), path.name


def deck_sources(folder: Path = HERE) -> list[Path]:
    """The deck sources in teaching order: by week, then by part."""
    return sorted(folder.glob("week*.md"), key=_deck_order)


def split_slides(text: str) -> list[list[str]]:
    """The lines of each slide: a line of just ``---`` outside a code fence starts the next."""
    slides: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if not fenced and SLIDE_BREAK.match(line):
            slides.append([])
        else:
            slides[-1].append(line)
    if fenced:
        raise ValueError("a code fence (```) is never closed")
    return slides


def parse_slide(lines: list[str]) -> Slide:
    body: list[str] = []
    notes: list[str] | None = None
    explanations: list[str] = []  # the errata's "why", for the speaker notes
    data: dict[str, str] = {}
    fenced = False
    for line in lines:
        if FENCE.match(line):
            if not fenced and line[3:].strip().startswith("mermaid"):
                raise ValueError("mermaid diagrams are not supported in the decks (the template loads no mermaid)")
            fenced = not fenced
            if not fenced and line.strip() != line.strip()[:3]:
                raise ValueError(f"a closing fence takes no language: {line!r}")
        if not fenced:
            attrs = SLIDE_ATTRS.match(line)
            if attrs:
                data.update(ATTR.findall(attrs.group(1)))
                continue
            if NOTE.match(line):
                notes = []
                continue
            if NOTE_INLINE.match(line):
                raise ValueError(f"`Note:` must be alone on its line (the notes follow it), got {line[:60]!r}")
            errata = ERRATA_LINE.match(line)
            if errata:
                shown, why = errata_markdown(errata.group(1).split())
                (notes if notes is not None else body).extend(shown)
                explanations += why
                continue
        (notes if notes is not None else body).append(line)
    notes = (notes or []) + explanations
    return Slide("\n".join(body).strip("\n"), "\n".join(notes).strip("\n"), data)


def parse_deck(path: Path) -> Deck:
    slides = []
    for number, lines in enumerate(split_slides(path.read_text(encoding="utf-8")), 1):
        try:
            slide = parse_slide(lines)
        except ValueError as error:
            raise ValueError(f"{path.name}, slide {number}: {error}") from None
        if not slide.body.strip():
            raise ValueError(f"{path.name}, slide {number} is empty (two `---` in a row, or one at the end?)")
        slides.append(slide)
    title = re.search(r"^#\s+(.+)$", slides[0].body, re.M)
    if not title:
        raise ValueError(f"{path.name}: the first slide (the title slide) needs a `# ` heading")
    slides[0].data.setdefault("kind", "title")
    return Deck(path.stem, strip_markdown(title.group(1)), slides)


def strip_markdown(text: str) -> str:
    return re.sub(r"[*_`$\\]", "", text).strip()


def errata_markdown(ids: list[str]) -> tuple[list[str], list[str]]:
    """``:::errata E1 E8``: Markdown for the slide and, for the speaker notes, why each is wrong.

    Taken from txcourse.course.errata, so slides, book and tests agree.
    """
    from txcourse.course.errata import ERRATA

    known = {e.id: e for e in ERRATA}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ValueError(f":::errata names {unknown}; txcourse.course.errata.ERRATA has {sorted(known)}")
    shown: list[str] = []
    why: list[str] = []
    for i in ids:
        e = known[i]
        shown += [
            f"**{e.id}: {e.topic}** · notes {html.escape(e.source)}",
            "",
            f"- notes: {code(e.wrong)}",
            f"- course: {code(e.right)}",
            f"- guarded by <code>tests/course/test_errata.py::{e.test}</code>",
            "",
        ]
        why += [f"{e.id}: {e.why}", ""]
    return shown, why


def code(text: str) -> str:
    """Inline code as HTML: the errata hold backticks, pipes and dollar signs."""
    return "<code>" + html.escape(text, quote=False).replace("$", "&#36;") + "</code>"


# ---------------------------------------------------------------------------
# Counting what the browser test expects (tests/book/test_slides_browser.py)
# ---------------------------------------------------------------------------
def count_math(markdown: str) -> int:
    """Number of TeX expressions MathJax 2 should find: $$...$$ and $...$ outside code."""
    text = re.sub(r"^(```|~~~).*?^\1\s*$", "", markdown, flags=re.M | re.S)
    text = re.sub(r"<code>.*?</code>|`[^`\n]*`", "", text, flags=re.S)
    display = len(re.findall(r"\$\$.+?\$\$", text, flags=re.S))
    text = re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)
    return display + len(re.findall(r"\$[^$\n]+?\$", text))


def summary(deck: Deck) -> dict:
    return {
        "title": deck.title,
        "slides": len(deck.slides),
        "figures": deck.figures,
        "equations": sum(count_math(s.body) for s in deck.slides),
    }


# ---------------------------------------------------------------------------
# Step 1: notebooks
# ---------------------------------------------------------------------------
def to_notebook(deck: Deck, lang: str = "en", up: str = "", twins: list[str] = ()):
    """The deck as a notebook; ``up`` prefixes the URLs of its twins (``../`` for a translated deck in ``<lang>/``);
    its figures are ``figures/<name>.png`` beside it (a translated deck's in ``<lang>/figures/``, drawn in its
    language); ``twins``: the other languages the deck is built in, linked from its corner (the template's
    body_footer)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    links = [
        {"lang": other, "label": INDEX_TEXT[other]["name"],
         "href": f"{up}{'' if other == 'en' else other + '/'}{deck.name}.slides.html"}
        for other in twins
    ]  # fmt: skip
    nb.metadata = {"title": deck.title, "language": lang, "txcourse": {"source": f"slides/{deck.name}.md"}}
    if links:
        nb.metadata["txcourse"]["twins"] = links
    for number, slide in enumerate(deck.slides, 1):
        slideshow = {"slide_type": "slide"}
        if slide.data:
            slideshow["data"] = dict(sorted(slide.data.items()))
        nb.cells.append(
            nbformat.v4.new_markdown_cell(slide.body, id=f"s{number:02d}", metadata={"slideshow": slideshow})
        )
        if slide.notes:
            nb.cells.append(
                nbformat.v4.new_markdown_cell(
                    slide.notes, id=f"s{number:02d}-notes", metadata={"slideshow": {"slide_type": "notes"}}
                )
            )
    nbformat.validate(nb)
    return nb


def build_notebooks(out: Path, sources: list[Path], lang: str | None = None, twins: list[str] = ()) -> list[Deck]:
    """One notebook per deck in ``out``; with ``lang``, the deck translated by its catalogue (slides/i18n.py),
    built into ``<output>/<lang>/`` beside its own figures (``<output>/<lang>/figures/``). ``twins``:
    the other languages built (``en`` for the English decks), which each deck links."""
    unknown = [t for t in twins if t not in INDEX_TEXT]
    if unknown:
        raise ValueError(f"--twin {unknown}: slides/build.py INDEX_TEXT has {sorted(INDEX_TEXT)}")
    import nbformat

    out.mkdir(parents=True, exist_ok=True)
    decks = [parse_deck(p) for p in sources]
    if lang:
        decks = [translated_deck(d, lang) for d in decks]
    for deck in decks:
        nb = to_notebook(deck, lang or "en", "../" if lang else "", [t for t in twins if t != (lang or "en")])
        nbformat.write(nb, out / f"{deck.name}.ipynb")
        info = summary(deck)
        print(f"  {lang + '/' if lang else ''}{deck.name}: {info['slides']} slides, {info['equations']} equations, "
              f"{len(info['figures'])} figures")  # fmt: skip
    return decks


def i18n_module():
    """slides/i18n.py (slides/ is no package: loaded by path, once)."""
    import importlib.util

    if "slides_i18n" not in sys.modules:
        spec = importlib.util.spec_from_file_location("slides_i18n", HERE / "i18n.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["slides_i18n"] = module
        spec.loader.exec_module(module)
    return sys.modules["slides_i18n"]


def translated_deck(deck: Deck, lang: str, locales: Path | None = None) -> Deck:
    """``deck`` in ``lang`` from ``locales/<lang>/LC_MESSAGES/slides/<deck>.po``; an untranslated or fuzzy
    message stays English and is reported on stderr (tests/book/test_slides_i18n.py fails on it)."""
    i18n = i18n_module()
    path = i18n.catalogue_path(lang, deck.name, locales or i18n.LOCALES)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `make translations` (slides/i18n.py update --lang {lang})")
    missing: list[str] = []
    out = i18n.translated(deck, i18n.read(path), strip_markdown, missing)
    if missing:
        print(f"WARNING: {path}: {len(missing)} messages untranslated or fuzzy, left in English", file=sys.stderr)
    return out


# ---------------------------------------------------------------------------
# Step 3: assets
# ---------------------------------------------------------------------------
# What the decks load, relative to node_modules: (source, destination in the output).
# reveal.js: the UMD build, its CSS, the white theme (local fonts; `simple`, nbconvert's
# default, imports Google Fonts) and the notes plugin the template requires.
VENDOR = [
    ("reveal.js/dist/reveal.js", "reveal.js/dist/reveal.js"),
    ("reveal.js/dist/reveal.css", "reveal.js/dist/reveal.css"),
    ("reveal.js/dist/theme/white.css", "reveal.js/dist/theme/white.css"),
    ("reveal.js/dist/theme/fonts/source-sans-pro", "reveal.js/dist/theme/fonts/source-sans-pro"),
    ("reveal.js/plugin/notes", "reveal.js/plugin/notes"),
    ("reveal.js/LICENSE", "reveal.js/LICENSE"),
    ("requirejs/require.js", "vendor/require.js"),
    ("requirejs/package.json", "vendor/require.package.json"),
    ("jquery/dist/jquery.min.js", "vendor/jquery.min.js"),
    ("jquery/LICENSE.txt", "vendor/jquery.LICENSE.txt"),
]
# MathJax 2 (the npm alias mathjax2 = mathjax@2.7.9), loaded as
# mathjax2/MathJax.js?config=TeX-AMS_CHTML-full,Safe: the TeX input, the CommonHTML
# output with its TeX web fonts (woff), the extensions and element data it loads on
# demand. Left out: the unpacked sources, the other outputs (HTML-CSS, SVG, ...) and
# the other fonts, which that configuration never requests.
MATHJAX2_KEEP = [
    "MathJax.js",
    "LICENSE",
    "config/TeX-AMS_CHTML-full.js",
    "config/Safe.js",
    "config/local",
    "extensions",
    "jax/element",
    "jax/input/TeX",
    "jax/output/CommonHTML",
    "localization/en",
    "fonts/HTML-CSS/TeX/woff",
]


def copy(src: Path, dst: Path) -> None:
    if not src.exists():
        raise FileNotFoundError(f"{src} is missing: run `npm ci` (make does it through $(NPM_STAMP))")
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        shutil.copyfile(src, dst)


def vendor(node_modules: Path, out: Path) -> None:
    for src, dst in VENDOR:
        copy(node_modules / src, out / dst)
    version = json.loads((node_modules / "mathjax2/package.json").read_text())["version"]
    if not version.startswith("2."):
        raise ValueError(f"node_modules/mathjax2 is MathJax {version}; the decks need MathJax 2 (package.json)")
    for part in MATHJAX2_KEEP:
        src = node_modules / "mathjax2" / part
        if part == "localization/en" and not src.exists():
            continue
        copy(src, out / "mathjax2" / part)


# The index pages' words, per language (the decks' own text comes from the catalogues).
INDEX_TEXT = {
    "en": {
        "name": "English",
        "course": COURSE,
        "title": "slides",
        "intro": "Slide decks, one per week. Arrow keys to move, <kbd>S</kbd> for the speaker notes, <kbd>Esc</kbd> "
        "for the overview. Open this folder from a local web server (<code>python -m http.server</code>) or as files.",
        "slides": "{n} slides",
        "other": "The same decks in {name}",
    },
    "ko": {
        "name": "한국어",
        "course": "txcourse: 주차별로 배우는 트랜스포머",
        "title": "슬라이드",
        "intro": "주차마다 슬라이드 한 벌. 화살표 키로 이동, <kbd>S</kbd>는 발표자 노트, <kbd>Esc</kbd>는 전체 보기. "
        "이 폴더를 로컬 웹 서버(<code>python -m http.server</code>)로 열거나 파일로 연다.",
        "slides": "슬라이드 {n}장",
        "other": "같은 슬라이드의 {name} 판",
    },
}
HANGUL_FONTS = '"Noto Sans KR", "Noto Sans CJK KR", "Nanum Gothic", NanumGothic, "Apple SD Gothic Neo", "Malgun Gothic"'


def write_index(out: Path, decks: list[Deck], lang: str = "en", twins: dict[str, str] | None = None) -> None:
    """``out/index.html``: the decks of one language, each with a link to its twin in every other language.

    ``twins`` maps each other language to its folder relative to ``out`` (``{"ko": "ko/"}`` for the
    English index, ``{"en": "../"}`` for the Korean one)."""
    if lang not in INDEX_TEXT:
        raise ValueError(
            f"no index text for the language {lang!r}; slides/build.py INDEX_TEXT has {sorted(INDEX_TEXT)}"
        )
    text, twins = INDEX_TEXT[lang], twins or {}

    def twin_links(deck: str) -> str:
        return "".join(
            f' · <a class="twin" href="{where}{deck}.slides.html" hreflang="{other}" lang="{other}">'
            f"{INDEX_TEXT[other]['name']}</a>"
            for other, where in twins.items()
        )

    items = "\n".join(
        f'<li><a href="{d.name}.slides.html">{html.escape(d.title)}</a> '
        f"({text['slides'].format(n=len(d.slides))}){twin_links(d.name)}</li>"
        for d in decks
    )
    others = "".join(
        f'<p><a class="twin-index" href="{where}index.html" hreflang="{other}" lang="{other}">'
        f"{INDEX_TEXT[other]['other'].format(name=INDEX_TEXT[other]['name'])}</a></p>\n"
        for other, where in twins.items()
    )
    font = f"{HANGUL_FONTS}, sans-serif" if lang == "ko" else "sans-serif"
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.html").write_text(
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">\n'
        f"<title>{html.escape(text['course'])}: {text['title']}</title>\n"
        f"<style>body{{font-family:{font};max-width:46em;margin:3em auto;line-height:1.5}}</style>\n"
        f"</head><body>\n<h1>{html.escape(text['course'])}</h1>\n<p>{text['intro']}</p>\n{others}"
        f"<ol>\n{items}\n</ol>\n</body></html>\n",
        encoding="utf-8",
    )


REMOTE_ASSET = re.compile(
    r"""<(?:script|img|link|iframe|source|video|audio)\b[^>]*?\b(?:src|href)\s*=\s*["']?(https?://[^"'\s>]+)"""
    r"""|["'](https?://[^"'\s]+)["']"""  # a quoted URL: script strings, require/MathJax paths
    r"""|url\(\s*["']?(https?://[^"')\s]+)"""  # CSS url(...)
    r"""|@import\s+["'](https?://[^"']+)""",
    re.I,
)


def remote_assets(page: str) -> list[str]:
    """Remote URLs a page would load. Links in the slide text (<a href>) are not assets."""
    page = re.sub(r"<a\b[^>]*>", "<a>", page, flags=re.I)  # links to papers and the repository
    return sorted({next(g for g in m.groups() if g) for m in REMOTE_ASSET.finditer(page)})


def copy_figures(out: Path, figures: Path, decks: list[Deck], langs: list[str] = ()) -> None:
    """The figures the decks show, English from ``figures/`` into ``out/figures/``, and each language's, drawn
    with its words by ``make figures`` (``txcourse figures --lang <lang>``), from ``figures/<lang>/`` into
    ``out/<lang>/figures/``, where its translated decks load them.

    Raises:
        FileNotFoundError: a figure is missing from a folder (the folder, the files and the command named).
    """
    needed = sorted({f for d in decks for f in d.figures})
    for lang in ["", *langs]:
        folder = figures / lang if lang else figures
        missing = [f for f in needed if not (folder / f).is_file()]
        if missing:
            run = f"`make figures` (txcourse figures --lang {lang} --out {folder})" if lang else "`make figures`"
            raise FileNotFoundError(f"figures missing from {folder}: {missing} (run {run})")
        for name in needed:
            copy(folder / name, (out / lang if lang else out) / "figures" / name)


def build_assets(out: Path, figures: Path, node_modules: Path, sources: list[Path], langs: list[str] = ()) -> None:
    """Figures and libraries into ``out``, the index of each language, and the check that no deck, English or
    translated, loads a remote asset. The translated decks in ``out/<lang>/`` load the libraries from ``../``
    and their own figures, drawn in their language (``figures/<lang>/``, ``make figures``), from
    ``out/<lang>/figures/``."""
    decks = [parse_deck(p) for p in sources]
    copy_figures(out, figures, decks, langs)
    vendor(node_modules, out)
    write_index(out, decks, "en", {lang: f"{lang}/" for lang in langs})
    pages = [out / f"{deck.name}.slides.html" for deck in decks]
    for lang in langs:
        translated = [translated_deck(d, lang) for d in decks]
        write_index(out / lang, translated, lang, {"en": "../", **{o: f"../{o}/" for o in langs if o != lang}})
        pages += [out / lang / f"{deck.name}.slides.html" for deck in decks]
    problems = []
    for page in pages:
        if not page.is_file():
            problems.append(f"{page} was not written (did nbconvert run?)")
            continue
        remote = remote_assets(page.read_text(encoding="utf-8"))
        if remote:
            problems.append(f"{page.relative_to(out)} loads remote assets: {remote}")
    if problems:
        raise SystemExit("ERROR: " + "\n  ".join(problems))
    print(f"==> {len(decks)} decks in {out}: " + ", ".join(f"{d.name} ({len(d.slides)})" for d in decks))
    for lang in langs:
        print(f"==> the same {len(decks)} decks in {lang} in {out / lang}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    nb = sub.add_parser("notebooks", help="slides/week*.md -> notebooks for nbconvert")
    nb.add_argument("--out", type=Path, required=True)
    nb.add_argument("--lang", help="build the decks translated by locales/<lang>/LC_MESSAGES/slides/*.po")
    nb.add_argument("--twin", action="append", default=[], help="another language built (en, ko): link it (repeat)")
    assets = sub.add_parser("assets", help="figures, vendored JS/CSS, index.html; check the decks")
    assets.add_argument("--out", type=Path, required=True)
    assets.add_argument("--figures", type=Path, required=True)
    assets.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    assets.add_argument("--lang", action="append", default=[], help="a translated edition in OUT/<lang>/ (repeat)")
    info = sub.add_parser("summary", help="print slides, equations and figures per deck as JSON")
    for p in (nb, assets, info):
        p.add_argument("sources", nargs="*", type=Path, help="slide sources (default: slides/week*.md)")
    args = parser.parse_args(argv)
    sources = args.sources or deck_sources()
    try:
        if args.command == "notebooks":
            build_notebooks(args.out, sources, args.lang, args.twin)
        elif args.command == "assets":
            build_assets(args.out, args.figures, args.node_modules, sources, args.lang)
        else:
            print(json.dumps({p.stem: summary(parse_deck(p)) for p in sources}, indent=2, ensure_ascii=False))
    except (ValueError, FileNotFoundError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
