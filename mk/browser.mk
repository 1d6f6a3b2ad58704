# Browser check of the built book (tests/test_book_browser.py): headless
# Chromium opens every page of _toc.yml from a local server and checks that it
# rendered, that MathJax typeset the equations, that every figure loaded, that
# no cell shows an error and that no internal link is broken. Screenshots go to
# _build/screenshots/.
#
#   make test-browser   build the book (installing Chromium first if missing), then check it

TEST_STEPS += test-browser

.PHONY: test-browser browser-deps

# Chromium from apt when `chromium` is missing (and $$CHROMIUM names no other
# binary). CI runs as root; APT_SUDO (mk/book.mk) adds sudo on CI runners that
# are not root.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1 && [ -z "$$CHROMIUM" ]; then \
	  echo "==> installing chromium for the browser tests"; \
	  $(APT_SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(APT_SUDO) apt-get install -y chromium; \
	fi

test-browser: browser-deps book
	TXCOURSE_BROWSER_TESTS=1 $(PY) -m pytest tests/test_book_browser.py -q $(PYTEST_ARGS)
