"""Hidden tests: the one scanner that finds their code lines, and the check that feedback shows none.

A test cell of a lab may hold hidden tests between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN
TESTS``: nbgrader takes them out of the student version and puts them back when grading. Two places
need to know which lines those are, and both use :func:`hidden_lines`:

- ``labs/nbgrader_config.py`` (``HideHiddenTestOutput``) blanks every output line of a test cell
  that holds one of its hidden lines (IPython's traceback of a failing test prints the lines around
  the failure, hidden ones included) before the feedback is written;
- :func:`feedback_leaks` (``make test-labs``, ``labs/mutants/run.py``) checks a feedback file for
  the markers and for every hidden line of the notebook (:func:`hidden_test_lines`).

Student code runs in the kernel that runs the tests, so it can read a test cell's source (an IPython
``pre_run_cell`` hook) and print it in any later cell, encoded. Both places therefore also look inside
each base64 or hex run of a text (:func:`encoded_runs`) and at its ROT13 and reversed forms
(:func:`plain_views`): a hidden line in any of them is a leak.

One scanner and one threshold, so the check looks for exactly the lines the feedback promises to
hide. Standard library only at import time (the nbgrader config imports this module).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html as html_module
import os
import re
from collections.abc import Iterable

__all__ = [
    "HIDDEN_BEGIN",
    "HIDDEN_END",
    "MIN_HIDDEN_LINE",
    "normalise_line",
    "hidden_lines",
    "hidden_test_lines",
    "encoded_runs",
    "plain_views",
    "feedback_leaks",
]

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"

# The shortest hidden line that counts (characters, whitespace collapsed). 6, not 12: the course's
# hidden tests hold lines of 6 to 11 characters that do tell a student something -- the seed a
# hidden test draws with (``set_seed(2)``, weeks 1, 4, 5, 6), ``return out``, ``seen = []``
# (week 5) -- so the feedback must hide them and the check must look for them. Shorter lines are
# syntax (``else:``, ``])``, ``)``): they reveal nothing, and would blank or flag any output line
# that happens to hold them. The scrubber once used 6 and the check 12, so the check missed lines
# the scrubber hid; now both use this one value.
MIN_HIDDEN_LINE = 6


def normalise_line(line: str) -> str:
    """``line`` with its whitespace collapsed to single spaces and stripped: how lines are compared."""
    return " ".join(line.split())


def hidden_lines(sources: Iterable[str], min_length: int = MIN_HIDDEN_LINE) -> set[str]:
    """The hidden-test code lines of some cells that appear nowhere else in them.

    Args:
        sources: the source of each cell (one cell for the feedback scrubber, every cell of a
            notebook for :func:`hidden_test_lines`); a cell's hidden block ends at its end.
        min_length: the shortest line that counts (see :data:`MIN_HIDDEN_LINE`).

    Returns:
        Each line between the markers, whitespace collapsed (:func:`normalise_line`), at least
        ``min_length`` characters long and not part of any visible line of ``sources``.

    Example:
        >>> sorted(hidden_lines(["assert f(1) == 2\\n### BEGIN HIDDEN TESTS\\nassert f(-3)  == -6\\nelse:\\n"
        ...                      "### END HIDDEN TESTS"]))
        ['assert f(-3) == -6']
    """
    if isinstance(sources, str):
        raise ValueError(
            f"sources must be a list of cell sources, got one string {sources[:40]!r}...; "
            f"wrap it in a list: hidden_lines([source])"
        )
    hidden, shown = set(), []
    for source in sources:
        inside = False
        for line in source.splitlines():
            text = normalise_line(line)
            if HIDDEN_BEGIN in line:
                inside = True
            elif HIDDEN_END in line:
                inside = False
            elif inside:
                if len(text) >= min_length:
                    hidden.add(text)
            else:
                shown.append(text)
    visible = "\n".join(shown)
    return {line for line in hidden if line not in visible}


def hidden_test_lines(source_notebook: str | os.PathLike) -> set[str]:
    """The hidden-test code lines of a source notebook (:func:`hidden_lines` over all its cells):
    each appears between the hidden-test markers and nowhere else in the notebook (not even as part
    of a longer line)."""
    import nbformat

    nb = nbformat.read(str(source_notebook), as_version=4)
    return hidden_lines([cell.source for cell in nb.cells])


# Runs of base64 (standard or URL-safe alphabet) and of hex digits, whitespace inside allowed (base64
# wrapped at 76 characters, a hex dump in pairs). "=" ends a base64 run: padding, or a new string.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]+(?:\s+[A-Za-z0-9+/_-]+)*")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]+(?:\s+[0-9A-Fa-f]+)*")
_URLSAFE = str.maketrans("-_", "+/")


def _decoded(run: str, block: int) -> list[str]:
    """What ``run`` decodes to (base64 if ``block`` is 4, hex if 2), from each start offset in a block
    (a run may begin mid-block, after a word that happens to use the same alphabet), as UTF-8 text
    with undecodable bytes dropped, lines whitespace-collapsed (:func:`normalise_line`)."""
    chars = "".join(run.split())
    views = []
    for offset in range(block):
        part = chars[offset:]
        part = part[: len(part) - len(part) % block]
        try:
            data = base64.b64decode(part.translate(_URLSAFE)) if block == 4 else bytes.fromhex(part)
        except (binascii.Error, ValueError):
            continue
        text = data.decode("utf-8", errors="ignore")
        views.append("\n".join(normalise_line(line) for line in text.splitlines()))
    return views


def encoded_runs(text: str, min_bytes: int = MIN_HIDDEN_LINE) -> list[tuple[int, int, list[str]]]:
    """The base64 and hex runs of ``text`` long enough to encode ``min_bytes`` bytes, each as ``(start,
    end, decoded)``: its span in ``text`` and what it decodes to (:func:`_decoded`, one text per start
    offset). The feedback scrubber replaces a run whose decoded text holds a hidden line;
    :func:`feedback_leaks` reports that line.

    Example:
        >>> [views[0] for _, _, views in encoded_runs("leaked: YXNzZXJ0IGYoLTMpID09IC02")]
        ['assert f(-3) == -6']
    """
    runs = []
    for pattern, block, per_byte in ((_BASE64_RUN, 4, 4 / 3), (_HEX_RUN, 2, 2)):
        for match in pattern.finditer(text):
            if len("".join(match.group().split())) >= min_bytes * per_byte:
                runs.append((match.start(), match.end(), _decoded(match.group(), block)))
    return runs


def plain_views(text: str) -> list[str]:
    """``text`` as it is and as the two transforms a student can apply without a key: ROT13 and reversed
    (each line backwards, the lines in reverse order), so a hidden line printed either way is found too.

    Example:
        >>> plain_views("njfreg")[1], plain_views("ab cd")[2]
        ('awsert', 'dc ba')
    """
    return [text, codecs.decode(text, "rot_13"), text[::-1]]


def feedback_leaks(html: str, hidden: Iterable[str]) -> list[str]:
    """What a feedback file shows of the hidden tests: the markers, and each line of ``hidden`` (from
    :func:`hidden_test_lines`) found in its text (tags taken out and entities decoded, so a highlighted or
    escaped line is found too), in its ROT13 or reversed text (:func:`plain_views`), or in what one of its
    base64 or hex runs decodes to (:func:`encoded_runs`)."""
    raw = html_module.unescape(re.sub(r"<[^>]*>", "", html))
    text = "\n".join(normalise_line(line) for line in raw.splitlines())
    views = plain_views(text) + [view for _, _, decoded in encoded_runs(raw) for view in decoded]
    found = [m for m in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS") if any(m in view for view in views)]
    found += sorted(line for line in set(hidden) if any(line in view for view in views))
    return found
