"""The book's editions (issue 33): a language switch on every page, and search that finds Korean words.

``make book`` builds the English edition into ``_build/html`` and the Korean
one, from the same sources with ``-D language=ko``, into ``_build/html/ko``
(mk/i18n.mk). ``txcourse_editions`` maps each language to its folder under
the site root::

    txcourse_editions = {"en": ("English", ""), "ko": ("한국어", "ko")}

Every page, in every edition, gets a link to the same page in each other
edition that is built, in the article header (``language-switch.html``,
before the theme's buttons): page ``X`` of the English edition links
``ko/X``, and back. The link is relative, so the site works from any folder
or server. The editions built are those named in ``$TXCOURSE_EDITIONS``
(mk/i18n.mk exports ``en ko``): a plain ``jupyter-book build``, or ``make
book I18N_LANGS=``, builds the English edition alone, without a switch and
without links to pages that do not exist.

Figures whose labels are words are drawn once per language by one execution
(``txcourse.notebook.plots.show_in_each_edition``): each image output is
tagged ``{"txcourse": {"lang": ...}}`` in its metadata. When MyST-NB turns a
cell's outputs into the document, :func:`outputs_for` keeps the untagged
outputs and those of the build's language (``-D language=ko``; English
otherwise), so each edition numbers, names and shows one figure per cell.
This happens as the outputs are rendered, not in a transform of the finished
doctree: a figure cell's ``name:`` and caption are attached to every output,
and two images would make two figures with one name (a duplicate target) and
a second figure number.

The themes' own labels (pydata-sphinx-theme's "Skip to main content", "Back
to top", the colour modes...) are looked up in Sphinx's ``sphinx`` message
domain, for which pydata-sphinx-theme ships no Korean;
``locales/ko/LC_MESSAGES/sphinx.po`` translates them (Sphinx compiles a
project's ``sphinx.po`` from ``locale_dirs`` and prefers it to the built-in
catalogues). A few labels no catalogue reaches are passed through the same
domain here: the search box's placeholder (a theme option), the header
buttons sphinx-book-theme's Korean catalogue lacks, and the sidebar toggles'
titles (``toggle-*-sidebar.html`` in editions_static, which mark them for
translation).

Sphinx has no Korean search language: it would index a Korean page with the
English splitter, word by word, so that ``어텐션`` never matches ``어텐션은``.
:class:`SearchKorean` strips the particles that follow a Korean noun, in the
index (Python) and in the query (its JavaScript ``Stemmer``), alike.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.locale import get_translation
from sphinx.search import SearchLanguage

HERE = Path(__file__).resolve().parent
STATIC = HERE / "editions_static"
DEFAULT_EDITIONS = {"en": ("English", ""), "ko": ("한국어", "ko")}
TITLES = {"en": "Read this page in English", "ko": "이 페이지를 한국어로 읽기"}

# Particles (조사) that follow a noun, longest first; a word keeps at least two syllables.
PARTICLES = (
    "에서는", "으로는", "에서도", "이라는", "에서", "으로", "에게", "부터", "까지", "처럼", "보다", "와의", "과의",
    "에는", "에도", "이나", "이며", "이고", "라는", "은", "는", "이", "가", "을", "를", "의", "에", "로", "와",
    "과", "도", "만",
)  # fmt: skip
HANGUL_WORD = re.compile(r"^[\uac00-\ud7a3]+$")


def strip_particle(word: str) -> str:
    """Return the Hangul ``word`` without the particle it ends with (``어텐션은`` -> ``어텐션``).

    Words that are not all Hangul syllables, and words that would keep fewer
    than two syllables, come back unchanged.
    """
    if not HANGUL_WORD.match(word):
        return word
    for particle in PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[: -len(particle)]
    return word


JS_STEMMER = """
const TXCOURSE_PARTICLES = %s;
class Stemmer {
  stemWord(word) {
    if (!/^[\\uac00-\\ud7a3]+$/.test(word)) return word;
    for (const p of TXCOURSE_PARTICLES) {
      if (word.endsWith(p) && word.length - p.length >= 2) return word.slice(0, -p.length);
    }
    return word;
  }
}
""" % ("[" + ", ".join(f'"{p}"' for p in PARTICLES) + "]")


class SearchKorean(SearchLanguage):
    """Sphinx's search for Korean pages: words split on spaces and punctuation, particles stripped."""

    lang = "ko"
    language_name = "Korean"
    js_stemmer_code = JS_STEMMER
    stopwords: set[str] = set()

    def stem(self, word: str) -> str:
        return strip_particle(word.lower())


def edition_links(pagename: str, here: str, editions: dict, suffix: str = ".html") -> list[dict]:
    """Return the links from page ``pagename`` of edition ``here`` to its twins in the other editions.

    Raises:
        ExtensionError: ``here`` is not a language of ``editions``.
    """
    if here not in editions:
        raise ExtensionError(f"txcourse_editions: language {here!r} is not one of {sorted(editions)}")
    up = "../" * (pagename.count("/") + len(Path(editions[here][1]).parts))
    links = []
    for lang, (name, folder) in editions.items():
        if lang == here:
            continue
        prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
        links.append(
            {"lang": lang, "name": name, "title": TITLES.get(lang, name), "url": f"{up}{prefix}{pagename}{suffix}"}
        )
    return links


def built_editions(editions: dict, here: str, listed: str | None) -> dict:
    """Return the editions of ``editions`` that are built: ``here`` and those ``listed`` ($TXCOURSE_EDITIONS).

    Raises:
        ExtensionError: ``listed`` names a language ``editions`` lacks.
    """
    names = set((listed or "").split())
    unknown = sorted(names - set(editions))
    if unknown:
        raise ExtensionError(f"TXCOURSE_EDITIONS: {unknown} not among the editions {sorted(editions)}")
    return {lang: edition for lang, edition in editions.items() if lang in names | {here}}


def output_language(output) -> str | None:
    """Return the language a code cell's output is tagged with (``{"txcourse": {"lang": ...}}``), or None."""
    tag = (output.get("metadata") or {}).get("txcourse")
    if tag is None:
        return None
    if not isinstance(tag, dict) or not isinstance(tag.get("lang"), str):
        raise ExtensionError(f'an output\'s metadata "txcourse" must be {{"lang": "<code>"}}, got {tag!r}')
    return tag["lang"]


def outputs_for(outputs: list, language: str) -> list:
    """Return the outputs of one code cell that the edition in ``language`` shows.

    Untagged outputs (text, tables, untranslated figures) show in every
    edition; a tagged one only in its language's.

    Raises:
        ExtensionError: the cell has tagged outputs but none in ``language``
            (the edition would lose the figure).
    """
    tags = [output_language(o) for o in outputs]
    if any(tags) and language not in tags:
        raise ExtensionError(f"a figure cell drew its figure in {sorted(set(filter(None, tags)))}, not in {language!r}")
    return [o for o, tag in zip(outputs, tags) if tag is None or tag == language]


def _keep_outputs_of_the_language() -> None:
    """Let MyST-NB render only :func:`outputs_for` the build's language of each code cell."""
    from myst_nb.sphinx_ import SphinxNbRenderer

    render = getattr(SphinxNbRenderer, "_render_nb_cell_code_outputs", None)
    if render is None:
        raise ExtensionError("myst_nb.sphinx_.SphinxNbRenderer has no _render_nb_cell_code_outputs: editions.py "
                             "cannot choose the figures of the edition's language (a new MyST-NB?)")  # fmt: skip
    if not getattr(render, "txcourse_editions", False):
        SphinxNbRenderer._render_nb_cell_code_outputs = language_filter(render)


def language_filter(render):
    """Return ``render`` (MyST-NB's renderer of a cell's outputs) given only :func:`outputs_for` the language
    of the build (``self.sphinx_env.config.language``; English when unset)."""

    def render_outputs(self, token, outputs):
        return render(self, token, outputs_for(outputs, self.sphinx_env.config.language or "en"))

    render_outputs.txcourse_editions = True
    render_outputs.__wrapped__ = render
    return render_outputs


def _translate_theme_labels(value, translate):
    """``value`` (a header button, a list of them, a string) with its tooltips and texts translated."""
    if isinstance(value, list):
        return [_translate_theme_labels(v, translate) for v in value]
    if isinstance(value, dict):
        return {
            key: translate(v) if key in ("tooltip", "text") and isinstance(v, str) and v
            else _translate_theme_labels(v, translate) if key == "buttons" else v
            for key, v in value.items()
        }  # fmt: skip
    return value


def _on_config_inited(app: Sphinx, config: Config) -> None:
    here = config.language or "en"
    # a config value, so that a change of the editions built rewrites every page
    config.txcourse_editions = built_editions(config.txcourse_editions, here, os.environ.get("TXCOURSE_EDITIONS"))
    # first: its toggle-*-sidebar.html replace the themes' components (pydata-sphinx-theme appends those at setup)
    config.templates_path = [str(STATIC), *[p for p in config.templates_path if p != str(STATIC)]]
    config.html_static_path = [*config.html_static_path, str(STATIC / "css")]
    options = dict(config.html_theme_options or {})
    end = options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",")]
    options["article_header_end"] = ["language-switch.html", *[e for e in end if e != "language-switch.html"]]
    if here != "en" and options.get("search_bar_text"):
        options["search_bar_text"] = get_translation("sphinx")(options["search_bar_text"])
    config.html_theme_options = options


def translated_title(title: str, language: str, locale_dirs: list[Path], root_doc: str) -> str:
    """Return ``title`` (``html_title``) as the catalogue of the root page translates it, else unchanged.

    The book's title is the root page's heading: its translation is in that
    page's catalogue (``<locale_dir>/<language>/LC_MESSAGES/<root_doc>.po``),
    which Sphinx does not consult for configuration values.
    """
    from babel.messages.pofile import read_po

    for folder in locale_dirs:
        po = Path(folder) / language / "LC_MESSAGES" / f"{root_doc}.po"
        if po.is_file():
            with open(po, "rb") as f:
                message = read_po(f).get(title)
            if message is not None and message.string and not message.fuzzy:
                return message.string
    return title


def _on_config_inited_title(app: Sphinx, config: Config) -> None:
    if config.language and config.language != "en" and config.html_title:
        dirs = [Path(app.confdir) / d for d in config.locale_dirs]
        config.html_title = translated_title(config.html_title, config.language, dirs, config.master_doc)


def _on_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    here = app.config.language or "en"
    suffix = getattr(app.builder, "out_suffix", ".html")
    context["txcourse_editions"] = edition_links(pagename, here, app.config.txcourse_editions, suffix)


def _on_page_context_buttons(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if (app.config.language or "en") != "en" and "header_buttons" in context:  # sphinx-book-theme's (priority 501)
        context["header_buttons"] = _translate_theme_labels(context["header_buttons"], get_translation("sphinx"))


def setup(app: Sphinx) -> dict:
    app.add_config_value("txcourse_editions", DEFAULT_EDITIONS, "html", types=[dict])
    app.connect("config-inited", _on_config_inited)
    app.connect("config-inited", _on_config_inited_title, priority=950)  # after sphinx_external_toc sets master_doc
    # the links before pydata-sphinx-theme's update_and_remove_templates (priority 500), which drops a component
    # that renders empty; the header buttons' labels after sphinx-book-theme adds them
    app.connect("html-page-context", _on_page_context, priority=400)
    app.connect("html-page-context", _on_page_context_buttons, priority=600)
    _keep_outputs_of_the_language()
    app.add_css_file("editions.css")
    app.add_search_language(SearchKorean)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
