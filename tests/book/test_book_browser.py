"""The built book in a real browser: every page renders, MathJax typesets the equations,
every figure loads, no cell shows an error, no internal link is broken.

``make test-browser`` builds the book, installs Chromium if it is missing, and
runs this file with ``TXCOURSE_BROWSER_TESTS=1``. Without that variable the
tests are skipped (a plain ``pytest`` run must not need a built site or a
browser). With it, a missing site or browser is a failure, not a skip.

The site in ``_build/html`` is served by ``http.server`` on 127.0.0.1 and each
page of ``_toc.yml`` is opened in headless Chromium twice: once to dump the
DOM after scripts ran (``--dump-dom`` with a virtual time budget, so MathJax
has finished), once to save a screenshot to ``_build/screenshots/``.
"""

from __future__ import annotations

import functools
import html as htmllib
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest
from support.browser import find_chromium, logging_handler, png_size, run_chromium, serve

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
WEEKS = (
    "week1_seq2seq",
    "week2_positional",
    "week3_attention",
    "week4_encoder",
    "week5_decoder",
    "week6_training",
    "week6_decoding",
)  # week 6 in two parts

pytestmark = pytest.mark.skipif(
    os.environ.get("TXCOURSE_BROWSER_TESTS") != "1",
    reason="browser tests of the built book run with `make test-browser`, which builds the book "
    "and sets TXCOURSE_BROWSER_TESTS=1 (set it yourself to check an existing _build/html)",
)


def toc_pages() -> list[str]:
    """Every page of _toc.yml, as a path relative to the site: ``book/week1_seq2seq.html``.

    A regular expression rather than a YAML parser, so that collecting this
    file needs nothing beyond pytest (it runs in every ``make test-python``).
    """
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    files = re.findall(r"^\s*root:\s*(\S+)", toc, re.M) + re.findall(r"^\s*-?\s*file:\s*(\S+)", toc, re.M)
    return [f"{f.removesuffix('.md').removesuffix('.ipynb')}.html" for f in files]


PAGES = toc_pages()


# ---------------------------------------------------------------------------
# Fixtures: the site, a local server that logs every request, the browser
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built book in {SITE}: run `make book` first (`make test-browser` does)")
    return SITE


# Served at /__txcourse_fit__.html#<page>: loads the page in a 1280-pixel-wide
# frame, waits for MathJax, and writes into its own DOM every displayed
# equation and table that is wider than the column it sits in.
FIT_PAGE = "/__txcourse_fit__.html"
FIT_HARNESS = """<!DOCTYPE html><html><body><pre id="out">FIT-PENDING</pre>
<iframe id="page" style="width:1280px;height:2000px;border:0"></iframe>
<script>
const frame = document.getElementById("page");
frame.onload = () => {
  const win = frame.contentWindow;
  const ready = (win.MathJax && win.MathJax.startup && win.MathJax.startup.promise) || Promise.resolve();
  ready.then(() => setTimeout(() => {
    const wide = [];
    frame.contentDocument.querySelectorAll('mjx-container[display="true"], article table').forEach(el => {
      const room = el.parentElement.clientWidth;
      if (el.scrollWidth > room + 2) {
        wide.push(el.tagName.toLowerCase() + " " + el.scrollWidth + "px in " + room + "px: "
                  + (el.textContent || "").replace(/\\s+/g, " ").slice(0, 60));
      }
    });
    document.getElementById("out").textContent = "FIT-RESULT " + JSON.stringify(wide);
  }, 500));
};
frame.src = decodeURIComponent(location.hash.slice(1));
</script></body></html>"""


_Handler = logging_handler(FIT_PAGE, FIT_HARNESS)


@pytest.fixture(scope="module")
def server(site):
    with serve(site, _Handler) as url:
        yield url


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium("make test-browser")


@pytest.fixture(scope="module")
def rendered(server, chromium):
    """page -> (DOM after scripts ran, [(path, status) the browser requested]); computed once per page."""
    cache: dict[str, tuple[str, list[tuple[str, int]]]] = {}

    def get(page: str):
        if page not in cache:
            _Handler.requests.clear()
            result = run_chromium(chromium, f"{server}/{page}", "--dump-dom")
            assert result.returncode == 0, f"chromium failed on {page}:\n{result.stderr[-2000:]}"
            cache[page] = (result.stdout, list(_Handler.requests))
        return cache[page]

    return get


# ---------------------------------------------------------------------------
# HTML helpers
# ---------------------------------------------------------------------------
class _Text(HTMLParser):
    """Visible text outside code, scripts and MathJax's own output."""

    SKIP = {"script", "style", "pre", "code", "textarea", "mjx-container", "noscript"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []  # (attribute, value)
        self.images: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and name in ("href", "src"):
                self.refs.append((f"{tag}.{name}", value))
        if tag == "img":
            self.images += [v for n, v in attrs if n == "src" and v]


def refs_of(html: str) -> _Refs:
    parser = _Refs()
    parser.feed(html)
    return parser


def is_internal(url: str) -> bool:
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and not url.startswith(("mailto:", "javascript:", "data:"))


def local_file(page: str, url: str) -> Path:
    """The file under the site that a relative ``url`` on ``page`` points to."""
    path = unquote(urlsplit(url).path)
    target = (SITE / page).parent / path if not path.startswith("/") else SITE / path.lstrip("/")
    target = Path(os.path.normpath(target))
    return target / "index.html" if target.is_dir() else target


@functools.cache
def ids_in(path: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8", errors="replace")))


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------
def test_every_toc_page_was_built(site):
    missing = [p for p in PAGES if not (site / p).is_file()]
    assert not missing, f"pages of _toc.yml missing from {site}: {missing}"
    assert all(f"book/{w}.html" in PAGES for w in WEEKS), f"_toc.yml lacks a week: {PAGES}"
    reports = sorted((site / "reports").rglob("*.err.log")) if (site / "reports").is_dir() else []
    assert not reports, f"notebook execution failed; see {[str(r) for r in reports]}"


@pytest.mark.parametrize("page", PAGES)
def test_page_renders(page, site, rendered):
    dom, requests = rendered(page)
    assert len(dom) > 5000 and "<article" in dom, f"{page}: the browser got no article (DOM of {len(dom)} chars)"
    title = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    assert title and visible_text(title.group(1)).strip(), f"{page}: no page title (h1)"
    failed = [(path, code) for path, code in requests if code >= 400 and not path.endswith("favicon.ico")]
    assert not failed, f"{page}: the browser's requests failed: {failed}"


@pytest.mark.parametrize("page", PAGES)
def test_equations_are_typeset(page, site, rendered):
    static = (site / page).read_text(encoding="utf-8")
    expected = len(re.findall(r'class="math notranslate nohighlight"', static))
    dom, _ = rendered(page)
    typeset = dom.count("<mjx-container")
    assert typeset >= expected, f"{page}: {expected} equations in the page, MathJax typeset {typeset}"
    assert "<mjx-merror" not in dom, f"{page}: MathJax reports a TeX error"
    text = visible_text(dom)
    for delimiter in ("$$", "\\[", "\\(", "\\begin{"):
        assert delimiter not in text, (
            f"{page}: raw TeX {delimiter!r} left in the text: "
            f"...{text[max(0, text.find(delimiter) - 80) : text.find(delimiter) + 80]}..."
        )


@pytest.mark.parametrize("page", PAGES)
def test_equations_and_tables_fit(page, server, chromium):
    """At 1280 pixels, no displayed equation or table is wider than the text column."""
    result = run_chromium(chromium, f"{server}{FIT_PAGE}#/{page}", "--dump-dom", "--window-size=1400,2100")
    found = re.search(r"FIT-RESULT (.*?)</pre>", result.stdout, re.S)
    assert found, f"{page}: the layout check did not finish:\n{result.stdout[-500:]}{result.stderr[-1000:]}"
    wide = json.loads(htmllib.unescape(found.group(1)))
    assert not wide, f"{page}: too wide for the page (it scrolls sideways):\n  " + "\n  ".join(wide)


@pytest.mark.parametrize("page", PAGES)
def test_figures_load(page, site, rendered):
    dom, requests = rendered(page)
    requested = {unquote(urlsplit(path).path): code for path, code in requests}
    for src in refs_of(dom).images:
        if not is_internal(src):
            continue
        path = local_file(page, src)
        assert path.is_file() and path.stat().st_size > 0, f"{page}: image {src} missing or empty"
        if path.suffix == ".png":
            width, height = png_size(path)
            assert width > 10 and height > 10, f"{page}: image {src} is {width}x{height}"
        served = "/" + str(path.relative_to(site))
        assert requested.get(served) == 200, f"{page}: the browser did not load {src} (status {requested.get(served)})"


ERROR_CLASSES = {"traceback", "output_error", "ename", "evalue"}  # myst-nb, nbsphinx, classic notebook


@pytest.mark.parametrize("page", PAGES)
def test_no_cell_errors(page, site):
    html = (site / page).read_text(encoding="utf-8")
    classes = {c for attr in re.findall(r'\bclass="([^"]*)"', html) for c in attr.split()}
    assert not classes & ERROR_CLASSES, f"{page}: a cell output shows an error (classes {classes & ERROR_CLASSES})"
    assert "Traceback (most recent call last)" not in visible_text(html), f"{page}: a traceback is shown"
    assert "stderr" not in classes, f"{page}: a cell wrote to stderr (warnings belong in the log, not the book)"


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(page, site):
    html = (site / page).read_text(encoding="utf-8")
    broken = []
    for attribute, url in refs_of(html).refs:
        if not is_internal(url) or url.startswith("#") and len(url) == 1:
            continue
        target = local_file(page, url) if urlsplit(url).path else site / page
        if not target.is_file():
            broken.append(
                f"{attribute}={url} (no file {target.relative_to(site) if target.is_relative_to(site) else target})"
            )
            continue
        fragment = unquote(urlsplit(url).fragment)
        if fragment and target.suffix == ".html" and fragment not in ids_in(target):
            broken.append(f"{attribute}={url} (no id {fragment!r} in {target.relative_to(site)})")
    assert not broken, f"{page}: broken internal links:\n  " + "\n  ".join(broken)


@pytest.mark.parametrize("week", WEEKS)
def test_weeks_show_both_frameworks(week, rendered):
    dom, _ = rendered(f"book/{week}.html")
    labels = re.findall(r'<label[^>]*class="sd-tab-label"[^>]*>\s*(.*?)\s*</label>', dom, re.S)
    labels = [visible_text(label).strip() for label in labels]
    assert "PyTorch" in labels and "TensorFlow" in labels, f"{week}: framework tabs missing, labels {labels}"
    assert "<figure" in dom or 'class="figure' in dom, f"{week}: no figure on the page"


@pytest.mark.parametrize("page", PAGES)
def test_screenshot(page, server, chromium):
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / (page.replace("/", "_").removesuffix(".html") + ".png")
    shot.unlink(missing_ok=True)
    result = run_chromium(chromium, f"{server}/{page}", f"--screenshot={shot}", "--window-size=1280,2000")
    assert result.returncode == 0 and shot.is_file(), f"no screenshot of {page}:\n{result.stderr[-2000:]}"
    assert png_size(shot) == (1280, 2000)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels[..., :3].std() > 0.05, f"{page}: the screenshot is (nearly) blank"


def test_search_finds_a_chapter(server, chromium):
    result = run_chromium(chromium, f"{server}/search.html?q=positional+encoding", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    hits = re.findall(r'<li[^>]*>\s*<a[^>]+href="([^"]+)"', result.stdout.split('id="search-results"', 1)[-1])
    assert any("week2_positional" in h for h in hits), f"search for 'positional encoding' found {hits[:10]}"


# ---------------------------------------------------------------------------
# The Korean edition (issue 33): _build/html/ko, built by `make book` from the same sources with -D language=ko
# (mk/i18n.mk), with a language switch on every page of both editions (book/_ext/editions.py).
# ---------------------------------------------------------------------------
KO = "ko"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
SWITCH = re.compile(r'<a\b[^>]*class="[^"]*txcourse-language-link[^"]*"[^>]*>', re.S)

# Served at /__txcourse_hangul__.html#<page>: loads the page in a frame, waits for MathJax, takes the first
# element of the article's prose (not a cell's output: the course's translations print Korean) whose own text
# holds Hangul, and draws three of its syllables, one by one, in the
# element's computed font on a canvas, beside two characters no font has (U+E000, U+E001 of the Private Use
# Area: the missing-glyph box). Writes the element's font, the syllables and the canvas pixels' digests.
HANGUL_PAGE = "/__txcourse_hangul__.html"
HANGUL_HARNESS = """<!DOCTYPE html><html><body><pre id="out">HANGUL-PENDING</pre>
<iframe id="page" style="width:1280px;height:1200px;border:0"></iframe>
<script>
const frame = document.getElementById("page");
function digest(font, ch) {
  const canvas = document.createElement("canvas");
  canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext("2d");
  ctx.font = "40px " + font;
  ctx.fillStyle = "#000";
  ctx.fillText(ch, 4, 48);
  const data = ctx.getImageData(0, 0, 64, 64).data;
  let ink = 0, hash = 0;
  for (let i = 3; i < data.length; i += 4) { if (data[i]) { ink++; hash = (hash * 31 + i * data[i]) % 1000000007; } }
  return {ch: ch, ink: ink, hash: hash};
}
frame.onload = () => {
  const win = frame.contentWindow, doc = frame.contentDocument;
  const ready = (win.MathJax && win.MathJax.startup && win.MathJax.startup.promise) || Promise.resolve();
  ready.then(() => doc.fonts.ready).then(() => setTimeout(() => {
    const result = {lang: doc.documentElement.lang, font: null, glyphs: [], missing: []};
    const walker = doc.createTreeWalker(doc.querySelector("article") || doc.body, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      const hangul = (node.textContent.match(/[\\uac00-\\ud7a3]/g) || []);
      const el = node.parentElement;
      if (hangul.length >= 3 && el.closest("p, h1, h2, h3, li, td") && !el.closest(".cell_output, pre, code, mjx-container")) {
        result.font = win.getComputedStyle(node.parentElement).fontFamily;
        result.glyphs = [...new Set(hangul)].slice(0, 3).map(ch => digest(result.font, ch));
        result.missing = ["\\ue000", "\\ue001"].map(ch => digest(result.font, ch));
        break;
      }
    }
    document.getElementById("out").textContent = "HANGUL-RESULT " + JSON.stringify(result);
  }, 300));
};
frame.src = decodeURIComponent(location.hash.slice(1));
</script></body></html>"""


# Served at /__txcourse_switch__.html#<page>: loads the page in a frame, clicks its language switch, then the
# twin's; writes the path and <html lang> of the three pages it saw.
SWITCH_PAGE = "/__txcourse_switch__.html"
SWITCH_HARNESS = """<!DOCTYPE html><html><body><pre id="out">SWITCH-PENDING</pre>
<iframe id="page" style="width:1280px;height:800px;border:0"></iframe>
<script>
const frame = document.getElementById("page");
const seen = [];
frame.onload = () => {
  const doc = frame.contentDocument;
  seen.push({path: frame.contentWindow.location.pathname, lang: doc.documentElement.lang});
  const link = doc.querySelector("a.txcourse-language-link");
  if (seen.length < 3 && link) { link.click(); return; }
  document.getElementById("out").textContent = "SWITCH-RESULT " + JSON.stringify(seen);
};
frame.src = decodeURIComponent(location.hash.slice(1));
</script></body></html>"""
HARNESSES = {HANGUL_PAGE: HANGUL_HARNESS, SWITCH_PAGE: SWITCH_HARNESS}


class _KoHandler(_Handler):
    """The book's handler, plus the Korean edition's harness pages."""

    def do_GET(self):
        if urlsplit(self.path).path not in HARNESSES:
            return super().do_GET()
        body = HARNESSES[urlsplit(self.path).path].encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def ko_server(site):
    with serve(site, _KoHandler) as url:
        yield url


def switch_targets(page: str) -> list[Path]:
    """The files the language switch of ``page`` (a path under the site) leads to."""
    html = (SITE / page).read_text(encoding="utf-8")
    hrefs = [re.search(r'href="([^"]+)"', a).group(1) for a in SWITCH.findall(html)]
    return [local_file(page, htmllib.unescape(h)) for h in hrefs]


def test_korean_edition_has_every_page(site):
    missing = [p for p in PAGES if not (site / KO / p).is_file()]
    assert not missing, f"pages of _toc.yml missing from the Korean edition {site / KO}: {missing}"
    for page in PAGES:
        head = (site / KO / page).read_text(encoding="utf-8")[:400]
        assert '<html lang="ko"' in head, f"{KO}/{page}: not marked as Korean (<html lang=...>): {head[:200]}"


@pytest.mark.parametrize("page", [*PAGES, "search.html", "genindex.html"])
def test_language_switch_leads_to_the_twin_and_back(page, site):
    assert switch_targets(page) == [site / KO / page], f"{page}: the switch leads to {switch_targets(page)}"
    assert switch_targets(f"{KO}/{page}") == [site / page], f"{KO}/{page}: the switch leads to {switch_targets(page)}"


def test_language_switch_navigates_in_the_browser(ko_server, chromium):
    """Clicking the switch opens the twin page; clicking the twin's switch comes back."""
    for page, twin in (("book/week3_attention.html", f"{KO}/book/week3_attention.html"),
                       (f"{KO}/book/week4_encoder.html", "book/week4_encoder.html")):  # fmt: skip
        result = run_chromium(chromium, f"{ko_server}{SWITCH_PAGE}#/{page}", "--dump-dom")
        found = re.search(r"SWITCH-RESULT (.*?)</pre>", result.stdout, re.S)
        assert found, f"{page}: the switch check did not finish:\n{result.stdout[-500:]}{result.stderr[-1000:]}"
        visited = json.loads(htmllib.unescape(found.group(1)))
        assert [v["path"] for v in visited] == [f"/{page}", f"/{twin}", f"/{page}"], f"{page}: visited {visited}"
        langs = [v["lang"] for v in visited]
        assert langs[0] == langs[2] != langs[1] and set(langs) == {"en", "ko"}, f"{page}: languages {visited}"


@pytest.mark.parametrize("page", PAGES)
def test_korean_page_renders_with_hangul_and_math(page, site, rendered, ko_server, chromium):
    dom, requests = rendered(f"{KO}/{page}")
    assert len(dom) > 5000 and "<article" in dom, f"{KO}/{page}: the browser got no article"
    failed = [(path, code) for path, code in requests if code >= 400 and not path.endswith("favicon.ico")]
    assert not failed, f"{KO}/{page}: the browser's requests failed: {failed}"
    expected = len(re.findall(r'class="math notranslate nohighlight"', (site / KO / page).read_text(encoding="utf-8")))
    assert dom.count("<mjx-container") >= expected, f"{KO}/{page}: MathJax typeset fewer than {expected} equations"
    assert "<mjx-merror" not in dom, f"{KO}/{page}: MathJax reports a TeX error"
    title = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    title = visible_text(title.group(1)) if title else ""
    assert HANGUL.search(title), f"{KO}/{page}: the title is not in Korean: {title.strip()!r}"
    result = run_chromium(chromium, f"{ko_server}{HANGUL_PAGE}#/{KO}/{page}", "--dump-dom", "--window-size=1400,1300")
    found = re.search(r"HANGUL-RESULT (.*?)</pre>", result.stdout, re.S)
    assert found, f"{KO}/{page}: the Hangul check did not finish:\n{result.stdout[-500:]}{result.stderr[-1000:]}"
    fonts = json.loads(htmllib.unescape(found.group(1)))
    assert fonts["lang"] == "ko" and fonts["glyphs"], f"{KO}/{page}: no Hangul text element found: {fonts}"
    assert "Nanum Gothic" in fonts["font"] or "Noto Sans KR" in fonts["font"], (
        f"{KO}/{page}: Hangul is not set in the book's Korean fonts (editions.css): {fonts['font']}"
    )
    tofu = {g["hash"] for g in fonts["missing"]}
    for glyph in fonts["glyphs"]:
        assert glyph["ink"] > 20, f"{KO}/{page}: {glyph['ch']!r} draws (almost) nothing: {glyph}"
        assert glyph["hash"] not in tofu, f"{KO}/{page}: {glyph['ch']!r} draws the missing-glyph box (tofu)"
    assert len({g["hash"] for g in fonts["glyphs"]}) == len(fonts["glyphs"]), (
        f"{KO}/{page}: different syllables draw the same box (tofu): {fonts['glyphs']}"
    )


@pytest.mark.parametrize(("word", "page"), [("어텐션", "week3_attention"), ("인코더", "week4_encoder")])
def test_korean_search_finds_the_chapter(word, page, server, chromium):
    result = run_chromium(chromium, f"{server}/{KO}/search.html?q={quote(word)}", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    hits = re.findall(r'<li[^>]*>\s*<a[^>]+href="([^"]+)"', result.stdout.split('id="search-results"', 1)[-1])
    assert any(page in h for h in hits), f"search of the Korean edition for {word!r} found {hits[:10]}"


# ---------------------------------------------------------------------------
# Each edition's figures and theme labels in its language (issue 33)
# ---------------------------------------------------------------------------
EXECUTED = ROOT / "_build" / "jupyter_execute"
THEME_PO = ROOT / "locales" / "ko" / "LC_MESSAGES" / "sphinx.po"
IMAGE_SRC = re.compile(r'<img[^>]+src="[^"]*?_images/([0-9a-f]{64})\.png"')


def tagged_images(page: str) -> dict[str, set[str]]:
    """{language: the file names (sha256 of the PNG, as MyST-NB names them) of the images tagged with it}, from the
    executed notebook of ``page`` (``book/week3_attention.html``); images with no language under "untagged"."""
    import base64
    import hashlib

    notebook = EXECUTED / page.replace(".html", ".ipynb")
    found: dict[str, set[str]] = {}
    if not notebook.is_file():
        return found
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            lang = (output.get("metadata") or {}).get("txcourse", {}).get("lang") or "untagged"
            if "image/png" in output.get("data", {}):
                png = base64.b64decode(output["data"]["image/png"])
                found.setdefault(lang, set()).add(hashlib.sha256(png).hexdigest())
    return found


def test_the_figure_cells_drew_each_figure_in_both_languages(site):
    counts = {page: {lang: len(h) for lang, h in tagged_images(page).items()} for page in PAGES}
    drawn = {page: c for page, c in counts.items() if c}
    assert len(drawn) >= 10, f"expected the chapters' figures drawn per language, found {drawn}"
    uneven = {page: c for page, c in drawn.items() if set(c) != {"en", "ko"} or c["en"] != c["ko"]}
    assert not uneven, f"pages whose figures are not drawn once in each language (or not tagged): {uneven}"


@pytest.mark.parametrize("page", PAGES)
def test_each_edition_shows_the_images_of_its_language(page, site):
    tagged = tagged_images(page)
    if not tagged:
        return  # a page without figure cells: nothing tagged to check (the test above counts the pages that have)
    shown = {"en": set(IMAGE_SRC.findall((site / page).read_text(encoding="utf-8"))),
             "ko": set(IMAGE_SRC.findall((site / KO / page).read_text(encoding="utf-8")))}  # fmt: skip
    for edition, other in (("en", "ko"), ("ko", "en")):
        assert tagged[edition] <= shown[edition], (
            f"{edition}/{page}: missing its figures {tagged[edition] - shown[edition]}"
        )
        assert not tagged[other] & shown[edition], (
            f"{edition}/{page}: shows the {other} figures {tagged[other] & shown[edition]}"
        )
    assert len(shown["en"]) == len(shown["ko"]), (
        f"{page}: {len(shown['en'])} images in English, {len(shown['ko'])} in Korean"
    )


class _ThemeLabels(HTMLParser):
    """The theme's labels of a page: attributes people read (aria-label, title, placeholder) anywhere, and the
    text outside the article (the header, sidebars, footer, prev/next links)."""

    ATTRIBUTES = ("aria-label", "title", "placeholder")

    def __init__(self):
        super().__init__()
        self.labels: set[str] = set()
        self.depth = 0  # inside <article>

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self.depth += 1
        for name, value in attrs:
            if name in self.ATTRIBUTES and value:
                self.labels.add(" ".join(value.split()))

    def handle_endtag(self, tag):
        if tag == "article" and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not self.depth:
            self.labels.add(text)


def theme_labels(path: Path) -> set[str]:
    parser = _ThemeLabels()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.labels


def covered_theme_labels() -> set[str]:
    """The English labels locales/ko/LC_MESSAGES/sphinx.po translates (to something else)."""
    from babel.messages.pofile import read_po

    with open(THEME_PO, "rb") as f:
        return {m.id for m in read_po(f) if m.id and m.string and m.string != m.id and "%(" not in m.id}


@pytest.mark.parametrize("page", [*PAGES, "search.html"])
def test_korean_pages_show_no_english_theme_label(page, site):
    covered = covered_theme_labels()
    english = theme_labels(site / page) & covered
    assert len(english) >= 8, (
        f"{page}: the English page shows few of the catalogue's labels ({english}): parser broken?"
    )
    left = theme_labels(site / KO / page) & covered
    assert not left, f"{KO}/{page}: theme labels still in English: {sorted(left)}"
