"""What the command line prints when a command fails: one line for the user's mistakes, a traceback for a bug.

The messages name the option themselves (:mod:`txcourse.cli.options`); this module only decides which errors are
the user's (:data:`USER_ERRORS`: printed as one line ``txcourse: error: ...``, exit status 2) and, for the framework
errors that span several lines, which line is printed. It does not rewrite a message. Every other exception is a
bug in txcourse: :func:`report_bug` prints its traceback and where to report it (exit status :data:`BUG_STATUS`).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from txcourse.errors import TxcourseError

__all__ = ["USER_ERRORS", "BUG_STATUS", "ISSUES_URL", "error_line", "report_bug", "print_rows", "silence_stdout"]

# The user's mistakes: a bad option, field, file or checkpoint (TxcourseError), and what the system refused (a
# missing file, a full disk, a folder without permission: OSError). Nothing else: a ValueError or a KeyError from
# inside txcourse is a bug, and its traceback is shown.
USER_ERRORS: tuple[type[BaseException], ...] = (TxcourseError, OSError)
BUG_STATUS = 70  # EX_SOFTWARE of sysexits.h, "internal software error"; 1 is `txcourse grade`'s "not all graded"
ISSUES_URL = "https://github.com/txcourse/txcourse/issues"

KERAS_WRAPPER = "Exception encountered when calling "  # how Keras begins a layer's error it wraps
TF_GRAPH_ERROR = "Graph execution error:"  # how TensorFlow begins an error inside a tf.function


def report_bug(err: BaseException) -> int:
    """Print ``err``'s traceback and a line saying it is a bug in txcourse, with where to report it."""
    traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    print(
        f"txcourse: internal error: this is a bug in txcourse, not a mistake in what you typed ({type(err).__name__} "
        f"above); please report it with the command and the traceback at {ISSUES_URL}",
        file=sys.stderr,
    )
    return BUG_STATUS


def error_line(err: BaseException) -> str:
    """The one line printed for ``err``: the first non-blank line of its message, after two unwrappings.

    * Keras wraps an error raised inside a layer in a new one of the same type ("Exception encountered when
      calling PositionalEncoding.call().", the cause in bold, the call's arguments), raised while handling the
      cause: the cause (``err.__context__``) is printed instead.
    * TensorFlow's graph errors are paragraphs: "Graph execution error:", where the failing node was defined, then
      the cause followed by the node's name: the first line of the last paragraph is printed.

    The package's and the command line's own messages are one line, printed whole.
    """
    while str(err).startswith(KERAS_WRAPPER) and isinstance(err.__context__, type(err)):
        err = err.__context__
    text = str(getattr(err, "message", None) or err)  # TensorFlow's errors: .message, without the node's details
    if text.startswith(TF_GRAPH_ERROR):
        text = text.rpartition("\n\n")[2]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


def silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def print_rows(rows: Sequence[str]) -> None:
    """Print the results; a full disk or a closed pipe on stdout is a one-line error, not a traceback."""
    try:
        for row in rows:
            print(row)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as err:
        silence_stdout()
        raise TxcourseError(f"cannot write the output to standard output: {err.strerror or err}") from None
