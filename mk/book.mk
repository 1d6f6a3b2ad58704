# Book extras. The `book` target itself is in the Makefile; this fragment adds
# two prerequisites to it:
#
#   book-fonts       a Hangul font for the Korean labels of the figures: when
#                    matplotlib finds none and we run as root (or on CI, with
#                    password-less sudo) on Debian/Ubuntu, apt-get installs
#                    fonts-nanum and matplotlib's font cache is rebuilt;
#                    otherwise a note, and the labels show as boxes.
#   book-exec-stamp  jupyter-cache re-runs a chapter only when its code cells
#                    change, not when the package they import does. The stamp's
#                    name carries a hash of txcourse/ and of the results the
#                    chapters read (benchmarks/results/length_curves.json,
#                    book/data/*, and the figures' translations, locales/*/LC_MESSAGES/
#                    figures.po, which the figure cells draw the Korean images with):
#                    when it changes, every chapter is re-executed.

BOOK_EXEC_INPUTS := $(sort $(shell find txcourse -name '*.py' 2>/dev/null) \
                      $(wildcard benchmarks/results/length_curves.json book/data/* locales/*/LC_MESSAGES/figures.po))
BOOK_EXEC_HASH   := $(shell cat $(BOOK_EXEC_INPUTS) /dev/null | sha256sum | cut -c1-16)
BOOK_EXEC_STAMP  := _build/.exec-inputs-$(BOOK_EXEC_HASH)
BOOK_FONT_PKG    := fonts-nanum
# where fonts-nanum puts its files: present means installed, even without fontconfig's fc-list
# (a variable so that tests/install/test_makefile_install.py can point it away from this machine's fonts)
BOOK_FONT_DIR    ?= /usr/share/fonts/truetype/nanum
# APT_OK, APT_SUDO, APT_ENV (may we apt-get install, and how): see the Makefile.

.PHONY: book-fonts book-exec-stamp

book: book-fonts book-exec-stamp

book-exec-stamp: $(BOOK_EXEC_STAMP)

$(BOOK_EXEC_STAMP):
	@if [ -d _build/.jupyter_cache ] || [ -d _build/.doctrees ]; then \
	  echo "==> txcourse/ or the book's data changed since the last build: re-executing every chapter"; \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/jupyter_execute; \
	fi
	@mkdir -p _build && rm -f _build/.exec-inputs-* && touch $@

book-fonts: $(VENV_STAMP)
	@if ! $(PY) -c 'import sys; from txcourse.notebook.plots import cjk_font; sys.exit(cjk_font() is None)' 2>/dev/null; then \
	  if ! fc-list 2>/dev/null | grep -i nanum >/dev/null && [ ! -d "$(BOOK_FONT_DIR)" ]; then \
	    if [ "$(APT_OK)" = yes ]; then \
	      echo "==> installing $(BOOK_FONT_PKG) for the Korean labels of the figures"; \
	      { $(APT_SUDO) apt-get update -qq && \
	        $(APT_SUDO) $(APT_ENV) apt-get install -y -qq $(BOOK_FONT_PKG) >/dev/null; } || \
	        echo "warning: could not install $(BOOK_FONT_PKG); Korean labels in figures will show as boxes" >&2; \
	    else \
	      echo "note: no Hangul font found; Korean labels in figures will show as boxes" \
	           "(install $(BOOK_FONT_PKG) or fonts-noto-cjk)"; \
	    fi; \
	  fi; \
	  $(PY) -c 'from matplotlib import font_manager as fm; fm._load_fontmanager(try_read_cache=False)'; \
	  if $(PY) -c 'import sys; from txcourse.notebook.plots import cjk_font; sys.exit(cjk_font() is None)'; then \
	    echo "==> matplotlib now finds a Hangul font: re-executing every chapter"; \
	    rm -rf _build/.jupyter_cache _build/.doctrees _build/jupyter_execute; \
	  fi; \
	fi
