# Slide decks (slides/README.md): one reveal.js deck per week, written in
# slides/week*.md, turned into notebooks by slides/build.py and into HTML by
# `jupyter nbconvert --to slides`.
#
#   make slides        build _build/slides/: <week>.slides.html, figures/, index.html
#                      and the vendored reveal.js, require.js, jQuery and MathJax 2; and the Korean
#                      decks (issue 33) in _build/slides/ko/ (the indexes and each deck link its twin)
#   make test-slides   build them, then open every deck in headless Chromium
#                      (tests/book/test_slides_browser.py); screenshots in _build/screenshots/slides/
#
# Every asset is local, so the folder works offline, from a local web server or
# from file://. The libraries come from node_modules (package.json pins
# reveal.js 4.0.2, requirejs 2.1.10, jquery 2.2.4 and MathJax 2.7.9 as the alias
# `mathjax2`; `npm ci` installs them) and slides/build.py copies the files the
# decks load. The URLs below are relative to _build/slides/.
#
# Mermaid: nbconvert's reveal template imports mermaid from a CDN in every deck,
# and HTMLExporter.mermaid_js_url is not configurable (nbconvert 7.17 ignores
# --HTMLExporter.mermaid_js_url with a warning), so the course's template
# (slides/templates/txcourse-reveal) leaves that import out; the decks draw no
# diagrams. `build.py assets` fails if a deck still names a remote asset.

SLIDES_SRC     := $(sort $(wildcard slides/week*.md))
SLIDES_OUT     := _build/slides
SLIDES_NB      := _build/slides-notebooks
# where `make figures` (mk/figures.mk) writes
SLIDES_FIGURES  = $(or $(FIGURES_DIR),_build/figures)

# $(call slides_nbconvert_flags,PREFIX): the asset URLs, PREFIX before each (../ for a translated deck in
# $(SLIDES_OUT)/<lang>/, which loads the English build's libraries; its figures, drawn in its language by
# `make figures` into $(SLIDES_FIGURES)/<lang>/, are copied into $(SLIDES_OUT)/<lang>/figures/)
slides_nbconvert_flags = \
  --TemplateExporter.extra_template_basedirs=slides/templates --template=txcourse-reveal --no-prompt \
  --SlidesExporter.reveal_url_prefix=$(1)reveal.js \
  --SlidesExporter.reveal_theme=white \
  --SlidesExporter.reveal_number=c/t \
  --SlidesExporter.reveal_width=1280 --SlidesExporter.reveal_height=720 \
  --HTMLExporter.require_js_url=$(1)vendor/require.js \
  --HTMLExporter.jquery_url=$(1)vendor/jquery.min.js \
  '--HTMLExporter.mathjax_url=$(1)mathjax2/MathJax.js?config=TeX-AMS_CHTML-full,Safe'
SLIDES_NBCONVERT_FLAGS := $(call slides_nbconvert_flags,)
# the translated editions (mk/i18n.mk: I18N_LANGS), each into $(SLIDES_OUT)/<lang>/ from
# locales/<lang>/LC_MESSAGES/slides/<deck>.po; `make slides SLIDES_LANGS=` builds English alone
SLIDES_LANGS ?= $(I18N_LANGS)

TEST_STEPS += test-slides

.PHONY: slides test-slides

slides: figures $(NPM_STAMP) $(VENV_STAMP)
	rm -rf $(SLIDES_OUT) $(SLIDES_NB)
	$(PY) slides/build.py notebooks --out $(SLIDES_NB) $(addprefix --twin ,$(SLIDES_LANGS))
	$(VENV)/bin/jupyter nbconvert --to slides --log-level=WARN --output-dir $(SLIDES_OUT) \
	  $(SLIDES_NBCONVERT_FLAGS) $(patsubst slides/%.md,$(SLIDES_NB)/%.ipynb,$(SLIDES_SRC))
	@for lang in $(SLIDES_LANGS); do \
	  $(PY) slides/build.py notebooks --lang $$lang --out $(SLIDES_NB)/$$lang --twin en \
	    $(addprefix --twin ,$(SLIDES_LANGS)) && \
	  $(VENV)/bin/jupyter nbconvert --to slides --log-level=WARN --output-dir $(SLIDES_OUT)/$$lang \
	    $(call slides_nbconvert_flags,../) --HTMLExporter.language_code=$$lang \
	    $(patsubst slides/%.md,$(SLIDES_NB)/$$lang/%.ipynb,$(SLIDES_SRC)) || exit 1; \
	done
	$(PY) slides/build.py assets --figures $(SLIDES_FIGURES) --out $(SLIDES_OUT) $(addprefix --lang ,$(SLIDES_LANGS))
	@echo "==> open $(SLIDES_OUT)/index.html (or serve it: python -m http.server -d $(SLIDES_OUT))"

test-slides: browser-deps slides
	TXCOURSE_SLIDES_TESTS=1 $(PY) -m pytest tests/book/test_slides_browser.py -q $(PYTEST_ARGS)
