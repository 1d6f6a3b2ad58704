"""What the command line prints when a command fails: one line, ``txcourse: error: ...``.

The messages name the option themselves (:mod:`txcourse.cli.options`); this module only decides which errors are
the user's (printed, exit 2) and, for the framework errors that span several lines, which line is printed. It does
not rewrite a message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["user_errors", "error_line", "print_rows", "silence_stdout"]

KERAS_WRAPPER = "Exception encountered when calling "  # how Keras begins a layer's error it wraps
TF_GRAPH_ERROR = "Graph execution error:"  # how TensorFlow begins an error inside a tf.function


def user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a user's input causes; TensorFlow's only when TensorFlow was imported."""
    errors: tuple[type[BaseException], ...] = (
        ValueError,
        FileNotFoundError,
        FloatingPointError,
        PermissionError,
        IsADirectoryError,
        NotADirectoryError,
    )
    tf = sys.modules.get("tensorflow")
    return errors + ((tf.errors.InvalidArgumentError,) if tf is not None and hasattr(tf, "errors") else ())


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
        raise ValueError(f"cannot write the output to standard output: {err.strerror or err}") from None
