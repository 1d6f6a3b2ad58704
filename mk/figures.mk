# Figures (txcourse/course/figures/): every figure of the book, redrawn from fixed seeds into one folder,
# with manifest.json (figure -> file, chapters, caption, plotting function, recipe, parameters, inputs
# and outputs with their sha256) and README.md. Two runs write the same bytes.
#
#   make figures                                  every figure into $(FIGURES_DIR); a missing input
#                                                 (book/data/*.npz, benchmarks/results/*.json) is an error
#   make figures FIGURES_ARGS='--only week3_*'    some of them (txcourse figures --help for the options:
#                                                 --format svg|pdf, --dpi, --framework, --list)
#
# The figures' words in each language of the editions (issue 33): English into $(FIGURES_DIR), every other
# language of FIGURES_LANGS (default: mk/i18n.mk's I18N_LANGS) into $(FIGURES_DIR)/<lang>/, its labels from
# locales/<lang>/LC_MESSAGES/figures.po (`txcourse figures --lang ko`); the Korean slide decks show those.
#
#   make figures FIGURES_LANGS=                   English alone
#
# Independent of the book build, and not a test step: tests/course/test_figures.py runs in test-python.

FIGURES_DIR  ?= _build/figures
FIGURES_ARGS ?=
FIGURES_LANGS ?= $(I18N_LANGS)

.PHONY: figures

figures: $(VENV_STAMP) book-fonts
	$(PY) -m txcourse figures --out '$(FIGURES_DIR)' --strict $(FIGURES_ARGS)
	@for lang in $(FIGURES_LANGS); do \
	  echo "==> the figures in $$lang into $(FIGURES_DIR)/$$lang"; \
	  $(PY) -m txcourse figures --out '$(FIGURES_DIR)'/$$lang --lang $$lang --strict $(FIGURES_ARGS) || exit 1; \
	done
