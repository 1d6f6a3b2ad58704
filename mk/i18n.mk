# The book's translated editions (issue 33): Sphinx's gettext workflow on Jupyter Book's configuration.
#
#   make book           also builds the Korean edition into _build/html/ko (the Makefile's book recipe calls
#                       book-editions after the English build)
#   make book-editions  only the translated editions, from the English build's execution cache
#   make book I18N_LANGS=   the English edition alone
#   make translations   after an English edit: re-extract the messages and update locales/<lang>/LC_MESSAGES/book
#                       and, from slides/week*.md, locales/<lang>/LC_MESSAGES/slides (slides/i18n.py)
#                       and, from labs/specs, locales/<lang>/LC_MESSAGES/labs (labs/i18n.py)
#                       (new messages come out untranslated, changed ones fuzzy, removed ones obsolete), and
#                       the figures' labels (the strings marked _(), N_(), tr() in txcourse/notebook/plots, the
#                       figure recipes and the book's code cells) into locales/<lang>/LC_MESSAGES/figures.po
#                       (book/_ext/figure_catalogue.py). locales/<lang>/LC_MESSAGES/sphinx.po translates the
#                       theme's labels (book/_ext/editions.py); Sphinx compiles it itself.
#
# Jupyter Book 1 has no language flag (jupyter-book issue 1791): book/_ext/edition_conf.py writes the Sphinx
# configuration Jupyter Book builds with (paths made absolute) into $(I18N_CONF), and sphinx-build reads it
# with -D language=<lang>. Each edition builds in _build/<lang>/ (its doctrees, and the jupyter_execute folder
# MyST-NB puts beside the output folder) and is copied into $(BOOK_HTML)/<lang>. It must execute nothing: its
# notebooks come from the English build's _build/.jupyter_cache, and a run that executes one fails.

I18N_LANGS   ?= ko
I18N_CONF    := _build/i18n
# the editions each page's language switch links (book/_ext/editions.py); none but English: no switch
export TXCOURSE_EDITIONS := en $(I18N_LANGS)
SPHINX_BUILD := $(VENV)/bin/sphinx-build
I18N_SPHINX  := $(SPHINX_BUILD) -c $(I18N_CONF)

.PHONY: book-editions translations

$(I18N_CONF)/conf.py: _config.yml _toc.yml book/_ext/edition_conf.py $(VENV_STAMP)
	$(PY) book/_ext/edition_conf.py . $(I18N_CONF)

# The warm case (the execution cache full: a second `make book`, or one after a page or a .po edit) costs little:
# Sphinx keeps each edition's environment in _build/<lang>/.doctrees and re-reads only the pages whose source or
# catalogue changed (the generated conf.py is rewritten only when _config.yml or _toc.yml change, and Sphinx
# compiles a .mo only when its .po is newer), and when no input changed at all since the edition's last good
# build (book/_ext/edition_stamp.py: every file of the repository but the build outputs, the execution cache's
# notebooks, conf.py, the venv; the same command and editions) sphinx-build is not even started: its start-up
# alone costs seconds. `make book-editions I18N_FORCE=1` builds anyway.
I18N_STAMP_INPUTS = $(I18N_CONF)/conf.py _build/.jupyter_cache/executed $(VENV_STAMP)
I18N_FORCE ?=

book-editions: $(VENV_STAMP) $(MATHJAX_ENTRY) $(I18N_CONF)/conf.py
	@for lang in $(I18N_LANGS); do \
	  stamp=_build/$$lang/.edition-stamp; \
	  signature="$(I18N_SPHINX) -b html -D language=$$lang -W -n; editions: $$TXCOURSE_EDITIONS"; \
	  if [ -z "$(I18N_FORCE)" ] && [ -f $(BOOK_HTML)/$$lang/book/intro.html ] && \
	     why=$$($(PY) book/_ext/edition_stamp.py check $$stamp "$$signature" $(I18N_STAMP_INPUTS)); then \
	    echo "==> the $$lang edition in $(BOOK_HTML)/$$lang is $$why"; continue; fi; \
	  echo "==> the $$lang edition into $(BOOK_HTML)/$$lang (log: _build/$$lang/build.log)"; \
	  mkdir -p _build/$$lang; \
	  $(PY) book/_ext/edition_stamp.py start $$stamp "$$signature" || exit 1; \
	  $(I18N_SPHINX) -b html -d _build/$$lang/.doctrees -D language=$$lang -W -n --keep-going \
	    . _build/$$lang/html > _build/$$lang/build.log || { tail -30 _build/$$lang/build.log >&2; exit 1; }; \
	  if grep -E 'Executing notebook|Executed notebook' _build/$$lang/build.log >&2; then \
	    echo "ERROR: the $$lang edition executed the notebooks above: it must reuse the English build's" \
	         "_build/.jupyter_cache (run \`make book\`, which builds the English edition first)" >&2; exit 1; fi; \
	  grep -q '_static/mathjax/tex-chtml.js' _build/$$lang/html/book/intro.html || \
	    { echo "ERROR: _build/$$lang/html/book/intro.html does not load _static/mathjax/tex-chtml.js" >&2; exit 1; }; \
	  rm -rf $(BOOK_HTML)/$$lang && cp -al _build/$$lang/html $(BOOK_HTML)/$$lang && \
	  $(PY) book/_ext/edition_stamp.py done $$stamp || exit 1; \
	done

translations: $(VENV_STAMP) $(I18N_CONF)/conf.py
	rm -rf _build/gettext
	$(I18N_SPHINX) -b gettext -q -d _build/gettext/.doctrees -D nb_execution_mode=off \
	  -D suppress_warnings=myst.domains,myst-nb.lexer . _build/gettext/pot
	@# sphinx.pot (the labels of the book's own templates) is not the theme catalogue's source: sphinx.po holds the
	@# theme's and Sphinx's labels too (tests/book/test_i18n.py checks it covers both); sphinx-intl would make them
	@# obsolete
	mv _build/gettext/pot/sphinx.pot _build/gettext/templates.pot
	@for lang in $(I18N_LANGS); do \
	  $(VENV)/bin/sphinx-intl update -p _build/gettext/pot -l $$lang -d locales >/dev/null; \
	  echo "==> locales/$$lang: translate what is untranslated or fuzzy; obsolete messages are listed (remove them)"; \
	  $(PY) book/_ext/i18n_checks.py locales/$$lang; \
	  echo "==> locales/$$lang/LC_MESSAGES/slides: the decks' messages (slides/i18n.py)"; \
	  $(PY) slides/i18n.py update --lang $$lang || exit 1; \
	  echo "==> locales/$$lang/LC_MESSAGES/labs: the labs' messages (labs/i18n.py)"; \
	  $(PY) labs/i18n.py update locales/$$lang || exit 1; \
	  echo "==> locales/$$lang/LC_MESSAGES/figures.po: the figures' labels (book/_ext/figure_catalogue.py)"; \
	  $(PY) book/_ext/figure_catalogue.py . $$lang || exit 1; \
	done
