# Figures (txcourse/course/figures/): every figure of the book, redrawn from fixed seeds into one folder,
# with manifest.json (figure -> file, chapters, caption, plotting function, recipe, parameters, inputs
# and outputs with their sha256) and README.md. Two runs write the same bytes.
#
#   make figures                                  every figure into $(FIGURES_DIR); a missing input
#                                                 (book/data/*.npz, benchmarks/results/*.json) is an error
#   make figures FIGURES_ARGS='--only week3_*'    some of them (txcourse figures --help for the options:
#                                                 --format svg|pdf, --dpi, --framework, --list)
#
# Independent of the book build, and not a test step: tests/course/test_figures.py runs in test-python.

FIGURES_DIR  ?= _build/figures
FIGURES_ARGS ?=

.PHONY: figures

figures: $(VENV_STAMP)
	$(PY) -m txcourse figures --out '$(FIGURES_DIR)' --strict $(FIGURES_ARGS)
