# Browser check of the built book (tests/book/test_book_browser.py): headless
# Chromium opens every page of _toc.yml from a local server and checks that it
# rendered, that MathJax typeset the equations, that every figure loaded, that
# no cell shows an error and that no internal link is broken. Screenshots go to
# _build/screenshots/.
#
#   make test-browser   build the book (installing Chromium first if missing), then check it

TEST_STEPS += test-browser

.PHONY: test-browser browser-deps

# Chromium from apt when `chromium` is missing and $$CHROMIUM names no other
# binary, where apt-get may install (APT_OK, Makefile: as root, or with sudo on
# CI); elsewhere an error that says what to install. `$${CHROMIUM:-}`: the
# recipes run under `bash -u`, and an unset CHROMIUM is the normal case.
browser-deps:
	@if command -v chromium >/dev/null 2>&1 || [ -n "$${CHROMIUM:-}" ]; then :; \
	elif [ "$(APT_OK)" = yes ]; then \
	  echo "==> installing chromium for the browser tests"; \
	  $(APT_SUDO) apt-get update && \
	  $(APT_SUDO) $(APT_ENV) apt-get install -y chromium; \
	else \
	  echo "ERROR: the browser tests need Chromium: install it (Debian: sudo apt-get install chromium)" \
	       "or set CHROMIUM=/path/to/chromium" >&2; exit 1; \
	fi

test-browser: browser-deps book
	TXCOURSE_BROWSER_TESTS=1 $(PY) -m pytest tests/book/test_book_browser.py -q $(PYTEST_ARGS)
