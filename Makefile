# txcourse: the single entry point for building and testing.
#
#   make book       build the HTML book into _build/html, its Korean edition into _build/html/ko
#                   (mk/i18n.mk; creates .venv if missing)
#   make test       run every check (creates .venv if missing)
#   make figures    redraw every figure of the book (mk/figures.mk)
#   make slides     build the weekly slide decks (mk/slides.mk)
#   make venv       only create/update .venv
#   make mathjax    only vendor MathJax into _vendor/mathjax (needs npm)
#   make clean      remove build outputs
#   make distclean  also remove .venv, node_modules and _vendor
#
# The virtualenv is (re)installed only when pyproject.toml or constraints.txt
# change: the stamp file's name carries a hash of both, so a second `make test`
# skips installation entirely.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON   ?= python3
VENV     := .venv
PY       := $(VENV)/bin/python
# torch is installed first, alone, with exactly this spec (keep it in sync
# with constraints.txt), so the later `-c constraints.txt` install finds it
# satisfied and never resolves the multi-gigabyte CUDA build.
# Where pip's own indexes/find-links already serve the CPU wheel (2.13.0+cpu)
# the plain spec is used. Where they would serve the CUDA build (plain PyPI on
# Linux) the recipe switches to PyTorch's CPU index. Set TORCH_PIP_ARGS to
# choose yourself, e.g. TORCH_PIP_ARGS='--index-url <a CUDA index>'.
TORCH_SPEC      := torch==2.13.0
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
TORCH_PIP_ARGS  ?= auto
EXTRAS          := tf,book,labs,test,deploy

DEPS_HASH  := $(shell cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
VENV_STAMP := $(VENV)/.stamp-$(DEPS_HASH)
INSTALL_LOG := $(VENV)/install.log

# May a recipe apt-get install what is missing (python3.X-venv, fonts-nanum, chromium)? As root, yes; on
# CI (CI=true, e.g. GitHub Actions) through password-less sudo; never on someone's own machine. Run apt-get
# as `$(APT_SUDO) $(APT_ENV) apt-get ...`: sudo drops variables set in front of it, env sets them after it.
# tests/install/test_makefile_install.py runs every such branch with the tool hidden from PATH.
APT_SUDO := $(shell [ "$$(id -u)" != 0 ] && [ -n "$${CI:-}" ] && sudo -n true 2>/dev/null && echo sudo)
APT_OK   := $(shell { [ "$$(id -u)" = 0 ] || [ -n "$(APT_SUDO)" ]; } && command -v apt-get >/dev/null 2>&1 && echo yes)
APT_ENV  := env DEBIAN_FRONTEND=noninteractive

NPM_STAMP     := node_modules/.stamp-npm-ci
MATHJAX_ENTRY := _vendor/mathjax/tex-chtml.js

BOOK_HTML   := _build/html
PYTEST_ARGS ?=
JB_ARGS     ?=

.PHONY: help venv test test-lint format test-python test-sweeps book book-check mathjax clean distclean

help:
	@echo "make book       build the HTML book into $(BOOK_HTML), the Korean edition into $(BOOK_HTML)/ko"
	@echo "make translations  refresh locales/ko after an English edit (new: untranslated, changed: fuzzy)"
	@echo "make test       run all tests (ruff lint and format check first)"
	@echo "make test-sweeps  the whole domains make test reads a subset of; make test-caps: the grader's resource caps"
	@echo "make format     fix what ruff can and format the tree"
	@echo "make figures    redraw every figure of the book into _build/figures (manifest.json)"
	@echo "make slides     build the weekly reveal.js decks into _build/slides"
	@echo "make labs       regenerate the lab notebooks from labs/specs"
	@echo "make bench      run the benchmarks (not part of make test)"
	@echo "make venv       create/update $(VENV) only"
	@echo "make clean      remove build outputs"
	@echo "make distclean  also remove $(VENV), node_modules, _vendor"

# ---------------------------------------------------------------------------
# Python environment
# ---------------------------------------------------------------------------
venv: $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "txcourse needs python3 >= 3.10, found " + sys.version.split()[0])'
	@echo "==> installing $(VENV) (log: $(INSTALL_LOG))"
	@# a venv without pip is what `python3 -m venv` leaves where ensurepip is missing (Debian/Ubuntu
	@# without python3.X-venv): make it again, installing python3.X-venv first when apt-get may.
	@if ! $(PY) -m pip --version >/dev/null 2>&1; then \
	  rm -rf $(VENV); \
	  if ! $(PYTHON) -m venv $(VENV); then \
	    rm -rf $(VENV); \
	    pkg=$$($(PYTHON) -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])'); \
	    if [ "$(APT_OK)" != yes ]; then \
	      echo "ERROR: '$(PYTHON) -m venv' failed (see above); install $$pkg (Debian/Ubuntu:" \
	           "sudo apt-get install $$pkg), then run make again" >&2; exit 1; fi; \
	    echo "==> installing $$pkg so that $(PYTHON) can create $(VENV)"; \
	    $(APT_SUDO) apt-get update -qq; \
	    $(APT_SUDO) $(APT_ENV) apt-get install -y -qq $$pkg; \
	    $(PYTHON) -m venv $(VENV); \
	  fi; \
	fi
	rm -f $(VENV)/.stamp-*
	$(PY) -m pip install --upgrade pip 2>&1 | tee $(INSTALL_LOG)
	# torch first, alone, with the exact spec (see TORCH_SPEC above).
	torch_args='$(TORCH_PIP_ARGS)'; \
	if [ "$$torch_args" = auto ]; then \
	  torch_args=; \
	  if $(PY) -m pip install --dry-run --quiet --report - '$(TORCH_SPEC)' 2>/dev/null \
	      | grep -iE '"name": *"nvidia-' >/dev/null; then \
	    echo "==> '$(TORCH_SPEC)' resolves to the CUDA build here; using $(TORCH_CPU_INDEX)"; \
	    torch_args='--index-url $(TORCH_CPU_INDEX)'; \
	  fi; \
	fi; \
	$(PY) -m pip install $$torch_args '$(TORCH_SPEC)' 2>&1 | tee -a $(INSTALL_LOG)
	$(PY) -m pip install -c constraints.txt -e '.[$(EXTRAS)]' 2>&1 | tee -a $(INSTALL_LOG)
	@if [ '$(TORCH_PIP_ARGS)' = auto ] && \
	    $(PY) -m pip list --format=freeze 2>/dev/null | grep -iE '^nvidia-|^triton=='; then \
	  echo "ERROR: CUDA packages ended up in $(VENV) (see above); expected the CPU torch wheel" >&2; exit 1; fi
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (txcourse)"
	touch $@

# ---------------------------------------------------------------------------
# Tests. `test` runs every step; append new steps (lab notebooks, browser
# checks, ...) as prerequisites here, each as its own `test-*` target.
# ---------------------------------------------------------------------------
# Each area adds its own fragment under mk/ (labs.mk, browser.mk, ...) and
# registers its step with `TEST_STEPS += test-<area>`.
TEST_STEPS := test-lint test-python

# ruff (configured in pyproject.toml): lint and format, on the whole tree.
# `make format` rewrites what `ruff format --check` would refuse.
test-lint: $(VENV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV_STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

# Two passes (tests/conftest.py SERIAL): most files on $(PYTEST_WORKERS) workers (pytest-xdist, a file per worker),
# then the ones that grade in the sandbox, send signals or time a neighbour, one test at a time. A pass that
# selects nothing (PYTEST_ARGS naming one folder) is not a failure.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

test-python: $(VENV_STAMP)
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile -m 'not serial' $(PYTEST_ARGS) || test $$? = 5
	$(PY) -m pytest -m serial $(PYTEST_ARGS) || test $$? = 5

# The whole domain where `make test` reads a subset of it (TXCOURSE_SWEEPS=1): every English number 0-999,999 in
# every phrasing (tests/data/test_english_numbers.py, about 90 s). Not in `make test` (CI's 45 minutes).
test-sweeps: $(VENV_STAMP)
	TXCOURSE_SWEEPS=1 $(PY) -m pytest -q -p no:cacheprovider tests/data/test_english_numbers.py -k every_number

-include mk/*.mk

test: $(TEST_STEPS)

# ---------------------------------------------------------------------------
# Book
# ---------------------------------------------------------------------------
# MathJax is served from the book itself (not a CDN) so equations render
# offline. It lives in _vendor/, not _static/: Jupyter Book adds every .js
# under _static to every page.
$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "ERROR: npm is missing: install Node.js with npm (Debian/Ubuntu:" \
	  "sudo apt-get install npm; elsewhere https://nodejs.org), then run make again" >&2; exit 1; }
	npm ci --no-audit --no-fund
	touch $@

$(MATHJAX_ENTRY): $(NPM_STAMP)
	rm -rf _vendor/mathjax
	mkdir -p _vendor
	cp -r node_modules/mathjax/es5 _vendor/mathjax
	test -f $@ && touch $@

mathjax: $(MATHJAX_ENTRY)

book: $(VENV_STAMP) $(MATHJAX_ENTRY)
	@# execution reports of an earlier failed build would outlive a good one
	rm -rf $(BOOK_HTML)/reports
	$(VENV)/bin/jupyter-book build . --builder html -W -n --keep-going $(JB_ARGS)
	@# the translated editions into $(BOOK_HTML)/<lang>, from the English build's execution cache (mk/i18n.mk)
	@$(MAKE) --no-print-directory book-editions
	@$(MAKE) --no-print-directory book-check

# Guard: every page must load the vendored MathJax, none a CDN copy, and no page may hold exercise solutions.
book-check:
	@test -f $(BOOK_HTML)/book/intro.html
	@grep -q '_static/mathjax/tex-chtml.js' $(BOOK_HTML)/book/intro.html || \
	  { echo "ERROR: $(BOOK_HTML)/book/intro.html does not load _static/mathjax/tex-chtml.js" >&2; exit 1; }
	@if grep -rlE '<script[^>]+src="https?://[^"]*mathjax' $(BOOK_HTML) --include='*.html'; then \
	  echo "ERROR: the pages above load MathJax from a CDN" >&2; exit 1; fi
	@# instructor-only exercise solutions must never reach the site (tests/book/test_exercises.py)
	@$(PY) tests/book/test_exercises.py --check-site $(BOOK_HTML)
	@echo "==> book OK: open $(BOOK_HTML)/index.html"

# ---------------------------------------------------------------------------
# Cleaning
# ---------------------------------------------------------------------------
clean:
	rm -rf _build .pytest_cache .jupyter_cache *.egg-info
	find . -path ./$(VENV) -prune -o -path ./node_modules -prune -o \
	  -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) node_modules _vendor
