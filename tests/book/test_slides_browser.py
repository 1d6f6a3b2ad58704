"""The weekly slide decks in a real browser: reveal.js starts, MathJax 2 typesets
every equation, every figure loads, nothing is fetched from outside, no slide
overflows; and no deck names a remote asset.

``make test-slides`` builds the decks (``make slides``), installs Chromium if
it is missing, and runs this file with ``TXCOURSE_SLIDES_TESTS=1``. Without
that variable the tests are skipped (a plain ``pytest`` run must not need
built decks or a browser). With it, a missing deck or browser is a failure.

``_build/slides`` is served by ``http.server`` on 127.0.0.1, logging every
request. Each deck is opened in headless Chromium inside a same-origin iframe
of a small harness page, which waits for reveal.js and MathJax, inspects the
deck (slides, equations, images, the resources it loaded, the height of every
slide) and writes the result into its own DOM, which ``--dump-dom`` returns.
The expected numbers of slides, equations and figures come from the sources,
``slides/week*.md``, through ``slides/build.py``.

The translated decks (issue 33), ``_build/slides/<lang>/<week>.slides.html``, built from
``locales/<lang>/LC_MESSAGES/slides/<week>.po``, go through the same checks (reveal.js, MathJax,
no failed request, no overflow), plus: Hangul drawn in a font that has it (no missing-glyph boxes),
the index pages link every deck to its twin in the other language, and each loads the figures drawn
in its language (``make figures``: ``_build/figures/<lang>/``, copied into ``<lang>/figures/``), whose
words (the manifest's ``labels``) are the catalogue's translations, none left in English.
"""

from __future__ import annotations

import functools
import hashlib
import html as htmllib
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.browser import find_chromium, logging_handler, png_size, run_chromium, serve
from support.figure_words import left_in_english, translatable
from support.slides_support import load_slides_build

ROOT = Path(__file__).resolve().parents[2]
DECKS = ROOT / "_build" / "slides"
FIGURES = ROOT / "_build" / "figures"  # make figures: English here, each language in <lang>/
SHOTS = ROOT / "_build" / "screenshots" / "slides"
WEEKS = tuple(p.stem for p in load_slides_build().deck_sources(ROOT / "slides"))  # teaching order
# the translated editions: every language with slide catalogues, each deck in _build/slides/<lang>/
LANGS = tuple(sorted(p.parent.parent.name for p in (ROOT / "locales").glob("*/LC_MESSAGES/slides")))
TRANSLATED = tuple(f"{lang}/{week}" for lang in LANGS for week in WEEKS)
ALL_DECKS = WEEKS + TRANSLATED
SIZE = (1280, 720)  # the decks' reveal width and height (mk/slides.mk)

pytestmark = pytest.mark.skipif(
    os.environ.get("TXCOURSE_SLIDES_TESTS") != "1",
    reason="browser tests of the slide decks run with `make test-slides`, which builds them and sets "
    "TXCOURSE_SLIDES_TESTS=1 (set it yourself to check an existing _build/slides)",
)


@functools.cache
def expected(week: str) -> dict:
    """Slides, equations and figures of a deck (``week`` or ``<lang>/<week>``), counted in its source
    (translated by its catalogue)."""
    build = load_slides_build()
    lang, _, name = week.rpartition("/")
    deck = build.parse_deck(ROOT / "slides" / f"{name}.md")
    return build.summary(build.translated_deck(deck, lang) if lang else deck)


def test_six_weeks():
    assert WEEKS == (
        "week1_seq2seq",
        "week2_positional",
        "week3_attention",
        "week4_encoder",
        "week5_decoder",
        "week6_training",
        "week6_decoding",
    ), f"slides/ has {WEEKS}"


# ---------------------------------------------------------------------------
# Fixtures: the decks, a local server that logs every request, the browser
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def decks() -> Path:
    missing = [w for w in ALL_DECKS if not (DECKS / f"{w}.slides.html").is_file()]
    if missing:
        pytest.fail(f"no built decks {missing} in {DECKS}: run `make slides` first (`make test-slides` does)")
    return DECKS


# Served at /__txcourse_deck__.html#<deck>: loads the deck in a 1280 x 720 frame,
# waits for reveal.js and MathJax 2, and writes what it finds into #out.
HARNESS_PAGE = "/__txcourse_deck__.html"
HARNESS = r"""<!DOCTYPE html><html><body><pre id="out">DECK-PENDING</pre>
<iframe id="deck" style="width:1280px;height:720px;border:0"></iframe>
<script>
const out = document.getElementById("out");
const frame = document.getElementById("deck");
const deck = decodeURIComponent(location.hash.slice(1));
const up = "../".repeat(deck.split("/").length - 1);  // a translated deck sits in <lang>/
const result = {deck: deck, ready: false, total: null, steps: []};
const report = () => { out.textContent = "DECK-RESULT " + JSON.stringify(result); };
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function until(what, test, seconds) {
  for (let i = 0; i < seconds * 10; i++) {
    let value = null;
    try { value = test(); } catch (e) { value = null; }
    if (value) return value;
    await sleep(100);
  }
  result.steps.push("timed out waiting for " + what);
  return null;
}

// MathJax 2 tests callbacks with `instanceof Function`, which fails for a function of
// another frame: wrap each one in a function made by the deck's own window.
function local(win, fn) {
  return win.eval("(function (f) { return function () { return f.apply(null, arguments); }; })")(fn);
}

function mathjaxQueue(win) {  // resolves once everything queued so far (typesetting included) is done
  return new Promise(resolve => win.MathJax.Hub.Queue(local(win, () => resolve(true))));
}

function mathjaxDone(win) {  // resolves after the start-up typeset and everything queued behind it
  return new Promise(resolve => win.MathJax.Hub.Register.StartupHook("End",
    local(win, () => mathjaxQueue(win).then(resolve))));
}

function rawTex(doc) {  // TeX left in the visible text of the slides
  const skip = new Set(["SCRIPT", "STYLE", "PRE", "CODE", "ASIDE", "NOSCRIPT"]);
  const found = [];
  const walker = doc.createTreeWalker(doc.querySelector(".slides") || doc.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    let el = node.parentElement, skipped = false;
    for (; el; el = el.parentElement) {
      if (skip.has(el.tagName) || el.classList.contains("MathJax_CHTML")) { skipped = true; break; }
    }
    const text = node.textContent;
    if (!skipped && /\$\$|\\\(|\\\[|\\begin\{|\$[^$\s][^$]*\$/.test(text)) found.push(text.trim().slice(0, 80));
  }
  return found;
}

// Hangul: the first text of the slides (not code, not math) with three Hangul syllables; its computed
// font, and three of its syllables drawn one by one in that font on a canvas, beside two characters no
// font has (U+E000, U+E001: the missing-glyph box). As tests/book/test_book_browser.py does for the book.
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

function hangul(win, doc) {
  const found = {font: null, text: null, glyphs: [], missing: [], syllables: 0};
  const walker = doc.createTreeWalker(doc.querySelector(".slides") || doc.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const syllables = node.textContent.match(/[\uac00-\ud7a3]/g) || [];
    const el = node.parentElement;
    if (el.closest("pre, code, script, style, aside, .MathJax_CHTML")) continue;
    found.syllables += syllables.length;
    if (found.font === null && syllables.length >= 3 && el.closest("p, h1, h2, h3, li, td, th")) {
      found.font = win.getComputedStyle(el).fontFamily;
      found.text = node.textContent.trim().slice(0, 60);
      found.glyphs = [...new Set(syllables)].slice(0, 3).map(ch => digest(found.font, ch));
      found.missing = ["\ue000", "\ue001"].map(ch => digest(found.font, ch));
    }
  }
  return found;
}

async function inspect() {
  const win = frame.contentWindow, doc = frame.contentDocument;
  const reveal = await until("require.js", () => win.require, 20) &&
    await new Promise(resolve => win.require([up + "reveal.js/dist/reveal.js"], resolve, () => resolve(null)));
  if (!reveal) { result.steps.push("reveal.js did not load"); return; }
  result.ready = Boolean(await until("Reveal.isReady()", () => reveal.isReady(), 20));
  result.total = reveal.getTotalSlides();
  result.height = reveal.getConfig().height;
  result.width = reveal.getConfig().width;
  result.mathjax = Boolean(await until("MathJax", () => win.MathJax && win.MathJax.Hub, 20));
  if (result.mathjax) {
    await mathjaxDone(win);
    result.mathjaxVersion = win.MathJax.version;
    result.jax = win.MathJax.Hub.getAllJax().length;
    const texErrors = [];
    win.MathJax.Hub.Register.MessageHook("TeX Jax - parse error", local(win, m => texErrors.push(String(m[1]))));
    win.MathJax.Hub.Register.MessageHook("Math Processing Error", local(win, m => texErrors.push("processing error")));
    result.texErrors = texErrors;  // message hooks replay the messages already posted
  }
  result.typeset = doc.querySelectorAll(".slides .MathJax_CHTML").length;
  result.errorElements = doc.querySelectorAll(".mjx-merror, .MathJax_Error, .mjx-noError, .noError").length;
  result.rawTex = rawTex(doc);
  result.lang = doc.documentElement.lang;
  result.hangul = hangul(win, doc);
  await until("the images", () => [...doc.images].every(img => img.complete), 10);
  result.images = [...doc.images].map(img => ({src: img.getAttribute("src"), width: img.naturalWidth}));
  result.resources = win.performance.getEntriesByType("resource").map(e => e.name);
  result.overflow = [];
  const slides = reveal.getSlides();
  for (let i = 0; i < slides.length; i++) {
    reveal.slide(i);
    const section = reveal.getCurrentSlide();
    if (result.mathjax) {  // the template re-renders the math of each slide it shows: wait for it
      const scripts = section.querySelectorAll("script[type^='math/tex']").length;
      const rendered = () => {
        const frames = [...section.querySelectorAll(".MathJax_CHTML")];
        return frames.length === scripts && frames.every(f => f.firstElementChild)
               && !section.querySelector(".MJXc-processing, .MathJax_Processing");
      };
      await until("the equations of slide " + (i + 1), rendered, 10);
      await mathjaxQueue(win);
    }
    const title = section.querySelector("h1, h2");
    const name = (i + 1) + " (" + (title ? title.textContent.replace(/\u00b6/g, "").trim() : "?") + "): ";
    if (section.scrollHeight > result.height + 2) result.overflow.push(name + section.scrollHeight + "px high");
    if (section.scrollWidth > result.width + 2) result.overflow.push(name + section.scrollWidth + "px wide");
    section.querySelectorAll(".MJXc-display").forEach(display => {  // a displayed equation wider than its column
      const math = display.firstElementChild;
      if (math && math.offsetWidth > display.clientWidth + 2) {
        result.overflow.push(name + "equation " + math.offsetWidth + "px in " + display.clientWidth + "px");
      }
    });
    section.querySelectorAll("table, pre").forEach(el => {  // tables and code wider than their column
      const room = el.tagName === "PRE" ? el.clientWidth : el.parentElement.clientWidth;
      if (el.scrollWidth > room + 2) {
        result.overflow.push(name + el.tagName.toLowerCase() + " " + el.scrollWidth + "px in " + room + "px: "
                             + el.textContent.replace(/\s+/g, " ").trim().slice(0, 50));
      }
    });
  }
  reveal.slide(0);
}

frame.onload = () => inspect().catch(e => result.steps.push("harness error: " + e)).then(report);
frame.src = "/" + deck;
</script></body></html>"""


_Handler = logging_handler(HARNESS_PAGE, HARNESS)


@pytest.fixture(scope="module")
def server(decks):
    with serve(decks, _Handler) as url:
        yield url


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium("make test-slides")


def console_problems(stderr: str) -> list[str]:
    """Failed loads and uncaught errors from Chromium's console log."""
    lines = [line for line in stderr.splitlines() if "CONSOLE" in line]
    return [
        line.split("CONSOLE", 1)[1][:300]
        for line in lines
        if re.search(r"Failed to load|Uncaught|net::ERR_|Refused to|blocked", line)
    ]


@pytest.fixture(scope="module")
def inspected(server, chromium):
    """deck -> (the harness's findings, [(path, status) the browser requested], console problems)."""
    cache: dict[str, tuple[dict, list[tuple[str, int]], list[str]]] = {}

    def get(week: str):
        if week not in cache:
            _Handler.requests.clear()
            deck = f"{week}.slides.html"
            result = run_chromium(
                chromium, f"{server}{HARNESS_PAGE}#{deck}", "--dump-dom", "--window-size=1400,900", budget_ms=30000
            )
            assert result.returncode == 0, f"chromium failed on {deck}:\n{result.stderr[-2000:]}"
            found = re.search(r"DECK-RESULT (.*?)</pre>", result.stdout, re.S)
            assert found, f"{deck}: the harness did not finish:\n{result.stdout[-1000:]}\n{result.stderr[-2000:]}"
            cache[week] = (
                json.loads(htmllib.unescape(found.group(1))),
                list(_Handler.requests),
                console_problems(result.stderr),
            )
        return cache[week]

    return get


# ---------------------------------------------------------------------------
# The decks in the browser
# ---------------------------------------------------------------------------
def test_every_deck_was_built(decks):
    assert (decks / "index.html").is_file(), "no index.html of the decks"
    for asset in (
        "reveal.js/dist/reveal.js",
        "reveal.js/dist/reveal.css",
        "reveal.js/dist/theme/white.css",
        "reveal.js/plugin/notes/notes.js",
        "vendor/require.js",
        "vendor/jquery.min.js",
        "mathjax2/MathJax.js",
        "mathjax2/config/TeX-AMS_CHTML-full.js",
    ):
        assert (decks / asset).is_file(), f"vendored asset {asset} missing from {decks}"
    index = (decks / "index.html").read_text(encoding="utf-8")
    for week in WEEKS:
        assert f'href="{week}.slides.html"' in index, f"index.html does not link {week}"


@pytest.mark.parametrize("week", ALL_DECKS)
def test_reveal_starts(week, inspected):
    result, _, _ = inspected(week)
    assert result["ready"], f"{week}: reveal.js did not start: {result['steps']}"
    want = expected(week)["slides"]
    assert result["total"] == want, f"{week}: Reveal.getTotalSlides() = {result['total']}, the source has {want}"
    assert result["total"] >= 8, f"{week}: only {result['total']} slides"


@pytest.mark.parametrize("week", ALL_DECKS)
def test_equations_are_typeset(week, inspected):
    result, _, _ = inspected(week)
    assert result.get("mathjax"), f"{week}: MathJax did not load: {result['steps']}"
    assert str(result.get("mathjaxVersion", "")).startswith("2."), f"{week}: MathJax {result.get('mathjaxVersion')}"
    want = expected(week)["equations"]
    assert want > 0, f"{week}: the source has no equations"
    assert result["jax"] == want, f"{week}: MathJax found {result['jax']} expressions, the source has {want}"
    assert result["typeset"] >= want, f"{week}: {result['typeset']} typeset outputs for {want} expressions"
    assert not result["texErrors"] and not result["errorElements"], (
        f"{week}: MathJax reports errors: {result['texErrors']} ({result['errorElements']} error elements)"
    )
    assert not result["rawTex"], f"{week}: raw TeX left in the slides: {result['rawTex']}"
    stuck = [step for step in result["steps"] if "equations of slide" in step]
    assert not stuck, f"{week}: MathJax never finished rendering: {stuck}"


def folder(deck: str) -> str:
    """A deck's folder under _build/slides/ (and its figures' under _build/figures/): ``ko/`` or ``""``."""
    return deck.rpartition("/")[0] + "/" if "/" in deck else ""


@pytest.mark.parametrize("week", ALL_DECKS)
def test_images_load(week, inspected):
    """Each deck loads the figures of its own language: a translated deck those in its folder, <lang>/figures/."""
    result, requests, _ = inspected(week)
    want = {f"figures/{name}" for name in expected(week)["figures"]}
    shown = {img["src"] for img in result["images"]}
    assert want <= shown, f"{week}: figures of the source not in the deck: {sorted(want - shown)}"
    broken = [img["src"] for img in result["images"] if not img["width"]]
    assert not broken, f"{week}: images that did not load: {broken}"
    served = {urlsplit(path).path: code for path, code in requests}
    for name in expected(week)["figures"]:
        status = served.get(f"/{folder(week)}figures/{name}")
        assert status == 200, f"{week}: {folder(week)}figures/{name} was not served (status {status})"
    if folder(week):
        english = [p for p in served if p.startswith("/figures/")]
        assert not english, f"{week}: the translated deck loaded English figures: {english}"
    for name in expected(week)["figures"]:
        width, height = png_size(DECKS / folder(week).rstrip("/") / "figures" / name)
        assert width > 100 and height > 100, f"{week}: figure {name} is {width}x{height}"


@pytest.mark.parametrize("week", ALL_DECKS)
def test_no_request_fails(week, server, inspected):
    result, requests, console = inspected(week)
    failed = [(path, code) for path, code in requests if code >= 400 and not path.endswith("favicon.ico")]
    assert not failed, f"{week}: requests failed: {failed}"
    remote = [url for url in result["resources"] if not url.startswith(server)]
    assert not remote, f"{week}: the deck loaded resources from elsewhere: {remote}"
    console = [line for line in console if "favicon.ico" not in line]
    assert not console, f"{week}: the browser console reports:\n  " + "\n  ".join(console)
    paths = {urlsplit(path).path for path, _ in requests}
    for asset in ("/vendor/require.js", "/vendor/jquery.min.js", "/reveal.js/dist/reveal.js", "/mathjax2/MathJax.js"):
        assert asset in paths, f"{week}: the deck never requested {asset}"


@pytest.mark.parametrize("week", ALL_DECKS)
def test_slides_fit(week, inspected):
    """No slide is taller or wider than 1280 x 720, and no equation, table or code block is
    wider than its column: nothing is cut off or scrolls sideways."""
    result, _, _ = inspected(week)
    assert result["ready"], f"{week}: reveal.js did not start"
    assert (result["width"], result["height"]) == SIZE, f"{week}: slides of {result['width']}x{result['height']}"
    assert not result["overflow"], f"{week}: slides larger than {SIZE[0]}x{SIZE[1]}:\n  " + "\n  ".join(
        result["overflow"]
    )


@pytest.mark.parametrize("week", WEEKS)
def test_title_slide_screenshot(week, server, chromium, decks):
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{week}.png"
    shot.unlink(missing_ok=True)
    result = run_chromium(
        chromium,
        f"{server}/{week}.slides.html",
        f"--screenshot={shot}",
        f"--window-size={SIZE[0]},{SIZE[1]}",
        budget_ms=30000,
    )
    assert result.returncode == 0 and shot.is_file(), f"no screenshot of {week}:\n{result.stderr[-2000:]}"
    assert png_size(shot) == SIZE
    assert shot.stat().st_size > 10_000, f"{week}: the screenshot is only {shot.stat().st_size} bytes"
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.std() > 0.03, f"{week}: the screenshot is (nearly) blank"
    dark = (pixels.mean(-1) < 0.5).mean()
    assert 0.005 < dark < 0.5, f"{week}: {dark:.1%} of the title slide is dark text: not a rendered title"


def test_title_slides_differ(decks):
    shots = [SHOTS / f"{w}.png" for w in WEEKS]
    if not all(s.is_file() for s in shots):
        pytest.skip("run with the screenshot tests")
    digests = {hashlib.sha256(s.read_bytes()).hexdigest() for s in shots}
    assert len(digests) == len(WEEKS), "two title slides render to the same picture"


@pytest.mark.parametrize("week", WEEKS)
def test_deck_works_from_file_url(week, chromium, decks):
    """Opened as a file (no server), reveal.js still starts and MathJax still typesets."""
    result = run_chromium(chromium, (decks / f"{week}.slides.html").as_uri(), "--dump-dom", budget_ms=30000)
    assert result.returncode == 0, result.stderr[-2000:]
    reveal = re.search(r'<div class="reveal ([^"]*)"', result.stdout)
    assert reveal and "ready" in reveal.group(1).split(), f"{week}: reveal.js did not start from file://"
    typeset = len(re.findall(r'class="[^"]*\bMathJax_CHTML\b', result.stdout))
    assert typeset == expected(week)["equations"], (
        f"{week}: MathJax typeset {typeset} of {expected(week)['equations']} expressions from file://"
    )
    assert not re.search(r'class="[^"]*\b(MathJax_Error|mjx-merror|mjx-noError|noError)\b', result.stdout), (
        f"{week}: MathJax reports errors from file://"
    )


# ---------------------------------------------------------------------------
# No remote assets in the decks' HTML
# ---------------------------------------------------------------------------
class _Assets(HTMLParser):
    """Remote URLs a page loads: src/href of asset tags, URLs in scripts and styles."""

    ASSET_TAGS = {"script", "img", "link", "iframe", "source", "video", "audio", "embed", "object", "track"}
    REMOTE = re.compile(r"https?://", re.I)

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.remote: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if tag in self.ASSET_TAGS and name in ("src", "href", "data") and value and self.REMOTE.match(value):
                self.remote.append(f"<{tag} {name}={value}>")
            if name == "style" and value:
                self._css(value, f"<{tag} style>")
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            # Quoted strings (require/MathJax paths, import specifiers, config); comments are not loaded.
            for url in re.findall(r"""["'`](https?://[^"'`\s]*)""", data):
                self.remote.append(f"<script> string {url}")
        elif self._in == "style":
            self._css(data, "<style>")

    def _css(self, css, where):
        for url in re.findall(r"""url\(\s*["']?(https?://[^"')\s]+)|@import\s+["'](https?://[^"']+)""", css):
            self.remote.append(f"{where} {url[0] or url[1]}")


def remote_assets(page: str) -> list[str]:
    parser = _Assets()
    parser.feed(page)
    return parser.remote


def test_remote_asset_scan_finds_cdn_urls():
    """The scan itself: it must catch each kind of remote asset, and pass links in the text."""
    page = """<html><head>
      <script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js"></script>
      <link rel="stylesheet" href="http://unpkg.com/reveal.js@4.0.2/dist/reveal.css">
      <style>@import "https://fonts.googleapis.com/css?family=Lato"; .a{background:url(https://x.org/a.png)}</style>
      <script type="module">import mermaid from 'https://cdn.jsdelivr.net/npm/mermaid.esm.min.mjs';</script>
      <script>// docs: https://github.com/hakimel/reveal.js#configuration
        require({}, ["https://unpkg.com/reveal.js@4.0.2/dist/reveal.js"]);</script>
      </head><body><img src="https://example.org/figure.png">
      <a href="https://github.com/txcourse/txcourse">the repository</a></body></html>"""
    found = remote_assets(page)
    assert len(found) == 7, found
    assert not any("github.com" in f for f in found), found


@pytest.mark.parametrize("week", WEEKS)
def test_no_remote_assets(week, decks):
    page = (decks / f"{week}.slides.html").read_text(encoding="utf-8")
    remote = remote_assets(page)
    assert not remote, f"{week}.slides.html loads assets from the network:\n  " + "\n  ".join(remote)
    assert 'src="vendor/require.js"' in page and "mathjax2/MathJax.js?config=" in page


# ---------------------------------------------------------------------------
# The translated decks (issue 33): Hangul, and the way to the twin deck
# ---------------------------------------------------------------------------
HANGUL_FONTS = ("Noto Sans KR", "Noto Sans CJK KR", "Nanum Gothic", "NanumGothic")


@pytest.mark.parametrize("deck", TRANSLATED)
def test_hangul_is_drawn(deck, inspected):
    """The deck says its language, holds Korean prose, and draws it in a font that has Hangul: each
    syllable leaves ink unlike the missing-glyph box (tofu) that U+E000 and U+E001 draw."""
    result, _, _ = inspected(deck)
    lang = deck.split("/")[0]
    assert result["lang"] == lang, f"{deck}: <html lang={result['lang']!r}>, expected {lang!r}"
    found = result["hangul"]
    assert found["syllables"] >= 200, f"{deck}: only {found['syllables']} Hangul syllables in the slides' prose"
    assert found["font"], f"{deck}: no paragraph, heading or list item with Hangul"
    assert any(name in found["font"] for name in HANGUL_FONTS), (
        f"{deck}: {found['text']!r} is set in {found['font']}, which names none of {HANGUL_FONTS}"
    )
    tofu = {g["hash"] for g in found["missing"]}
    for glyph in found["glyphs"]:
        assert glyph["ink"] > 30, f"{deck}: {glyph['ch']!r} drew nothing in {found['font']}"
        assert glyph["hash"] not in tofu, f"{deck}: {glyph['ch']!r} is drawn as a missing-glyph box in {found['font']}"


def _links(page: Path) -> list[tuple[str, str]]:
    """(class, href) of every link of an index page."""
    return re.findall(r'<a (?:class="([^"]*)" )?href="([^"]+)"', page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", LANGS)
def test_indexes_and_decks_link_every_twin(lang, decks):
    """English index -> each translated deck and the translated index; translated index -> each English deck
    and back; every deck -> its twin (the link in its corner); every link leads to a built file."""
    pairs = {"": (decks / "index.html", f"{lang}/"), f"{lang}/": (decks / lang / "index.html", "../")}
    for here, (index, there) in pairs.items():
        assert index.is_file(), f"no {index}"
        links = _links(index)
        twins = {href for cls, href in links if cls == "twin"}
        assert twins == {f"{there}{w}.slides.html" for w in WEEKS}, f"{index}: twin links {sorted(twins)}"
        assert ("twin-index", f"{there}index.html") in links, f"{index} does not link the other index"
        for _, href in links:
            assert (index.parent / href).resolve().is_file(), f"{index}: {href} leads to no file"
        assert f'<html lang="{"en" if not here else lang}">' in index.read_text(encoding="utf-8")
        for week in WEEKS:
            page = index.parent / f"{week}.slides.html"
            links = re.findall(r'<a class="txcourse-twin" href="([^"]+)"', page.read_text(encoding="utf-8"))
            assert links == [f"{there}{week}.slides.html"], f"{page}: twin links {links}"


# Served at /__txcourse_twins__.html: opens the English index in a frame, follows its link to the translated
# index, there the first deck's link to its English twin, then that deck's corner link to its translation and
# back; writes the path and <html lang> of each page.
TWINS_PAGE = "/__txcourse_twins__.html"
TWINS_HARNESS = """<!DOCTYPE html><html><body><pre id="out">TWINS-PENDING</pre>
<iframe id="page" style="width:1280px;height:720px;border:0"></iframe>
<script>
const frame = document.getElementById("page");
const seen = [];
const clicks = ["a.twin-index", "a.twin", "a.txcourse-twin", "a.txcourse-twin"];
frame.onload = () => {
  const doc = frame.contentDocument;
  seen.push({path: frame.contentWindow.location.pathname, lang: doc.documentElement.lang});
  const link = seen.length <= clicks.length ? doc.querySelector(clicks[seen.length - 1]) : null;
  if (link) { link.click(); return; }
  document.getElementById("out").textContent = "TWINS-RESULT " + JSON.stringify(seen);
};
frame.src = "/index.html";
</script></body></html>"""


@pytest.mark.parametrize("lang", LANGS)
def test_twin_links_work_in_the_browser(lang, decks, chromium):
    handler = logging_handler(TWINS_PAGE, TWINS_HARNESS)
    with serve(decks, handler) as url:
        result = run_chromium(chromium, f"{url}{TWINS_PAGE}", "--dump-dom", budget_ms=20000)
    found = re.search(r"TWINS-RESULT (.*?)</pre>", result.stdout, re.S)
    assert found, f"the harness did not finish:\n{result.stdout[-1000:]}\n{result.stderr[-2000:]}"
    seen = json.loads(htmllib.unescape(found.group(1)))
    assert seen == [
        {"path": "/index.html", "lang": "en"},
        {"path": f"/{lang}/index.html", "lang": lang},
        {"path": f"/{WEEKS[0]}.slides.html", "lang": "en"},
        {"path": f"/{lang}/{WEEKS[0]}.slides.html", "lang": lang},
        {"path": f"/{WEEKS[0]}.slides.html", "lang": "en"},
    ], seen


# ---------------------------------------------------------------------------
# The figures of the translated decks: drawn in their language, none left in English
# ---------------------------------------------------------------------------
def figure_manifest(lang: str = "") -> dict:
    path = FIGURES / lang / "manifest.json"
    if not path.is_file():
        pytest.fail(f"no {path}: run `make figures` (`make slides` does)")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("deck", TRANSLATED)
def test_translated_deck_shows_the_figures_of_its_language(deck, decks):
    """The deck's files are ``make figures``'s in its language; their words are the catalogue's translations."""
    from txcourse.notebook.plots import labels

    lang, week = deck.split("/")
    english, translated = figure_manifest()["figures"], figure_manifest(lang)
    assert translated["language"] == lang, f"{FIGURES / lang}/manifest.json is in {translated['language']!r}"
    catalogue = labels.catalogue(lang)
    names = expected(deck)["figures"]
    assert names, f"{deck}: no figure"
    for name in names:
        stem = name.removesuffix(".png")
        shown = (decks / lang / "figures" / name).read_bytes()
        assert shown == (FIGURES / lang / name).read_bytes(), f"{deck}: {name} is not the {lang} figure"
        words, own = english[stem]["labels"], translated["figures"][stem]["labels"]
        assert left_in_english(words, own, catalogue) == [], f"{deck}: {name}: {own}"
        if translatable(words, catalogue):  # words to translate: another image than the English deck's
            assert shown != (decks / "figures" / name).read_bytes(), f"{deck}: {name} is the English image"
