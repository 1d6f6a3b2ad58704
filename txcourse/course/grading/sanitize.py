"""What a student's code can print, made safe before it reaches the CSV, the feedback banner or the verdict.

Three kinds of text come from the student's side: the lines a probe cell prints (``@txprobe <key> <tol>
<base64>``, which the student's code can forge or interleave), the reasons the verdict gives (they name
keys and shapes read from those lines) and whatever nbgrader's log and the submission's file names put into
a CSV field. Each has a grammar here:

- a probe line (:func:`probe_lines`): ``@txprobe``, a key of :data:`PROBE_KEY` (1 to 120 printable
  ASCII characters, no space; the verdict then accepts only the reference's keys), a tolerance that is a
  finite non-negative decimal number, and standard base64 of at most :data:`MAX_PROBE_DATA` characters,
  separated by single spaces. A line that starts with ``@txprobe`` and is anything else makes the probe
  fail with a reason that quotes nothing of it;
- text shown to people (:func:`clean_text`): ANSI escape sequences (CSI, OSC, and lone ESC pairs), every
  other control character (C0, DEL, C1) and the bidirectional overrides (U+202A-U+202E, U+2066-U+2069)
  removed, runs of white space made one space, and the result cut to a stated length with ``" [cut]"``;
- a CSV row (:func:`csv_row`): every text field cleaned and cut to :data:`FIELD_CHARS`, the note to
  :data:`NOTE_CHARS`; a field that would start with ``= + - @`` (a formula in a spreadsheet) gets a ``'``
  in front;
- the verdict's reasons (:func:`failure_reasons`): each cut to :data:`REASON_CHARS`, at most
  :data:`MAX_REASONS` of them.

Standard library only; called by :func:`~txcourse.course.grading.probes.read_probe_outputs`, the CSV writer
and :func:`~txcourse.course.grading.grade.add_verdict_banner`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "PROBE_KEY",
    "MAX_PROBE_DATA",
    "NOTE_CHARS",
    "FIELD_CHARS",
    "REASON_CHARS",
    "MAX_REASONS",
    "probe_lines",
    "clean_text",
    "csv_row",
    "failure_reasons",
]

PROBE_KEY = re.compile(r"[!-~]{1,120}")  # printable ASCII, no space (probe_emit drops white space from keys)
_TOLERANCE = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?")
# or a rule the grader applies to the numbers (probes.py, round E 2026-11-28): ">1e-3", "<=0.0", "!=0.0"
_RULE = re.compile(r"(>=|<=|!=|>|<)(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
MAX_PROBE_DATA = 48 << 20  # base64 characters of one probe value (probes.py refuses arrays over 4 M elements)
NOTE_CHARS = 1000  # characters of a CSV note
FIELD_CHARS = 500  # characters of any other text field of the CSV (status, failed tests, paths)
REASON_CHARS = 200  # characters of one reason the verdict gives (CSV note and feedback banner)
MAX_REASONS = 40  # reasons kept (a lab has at most a few dozen test cells)
PROBE_MARK = "@txprobe"

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[@-_]"  # other two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+")
_CUT = " [cut]"


def clean_text(text: Any, limit: int) -> str:
    """``text`` (made a string) without escape sequences, control characters and bidirectional overrides,
    white space runs as one space, at most ``limit`` characters (a longer text ends with ``" [cut]"``).

    >>> clean_text("\\x1b[31mred\\x1b[0m\\tline\\r\\nnext", 100)
    'red line next'
    """
    if limit < len(_CUT) + 1:
        raise ValueError(f"limit must be at least {len(_CUT) + 1} characters, got {limit}")
    text = str(text)[: 4 * limit + 4096]  # no need to scan more than can be kept (escapes removed first)
    text = _CONTROL.sub(" ", _ESCAPES.sub("", text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - len(_CUT)] + _CUT


def probe_lines(output: str) -> tuple[list[tuple[str, Any, str]], str]:
    """The ``(key, tolerance, base64)`` of every ``@txprobe`` line of a probe cell's ``output``, and ``""``
    (the tolerance a float, or a rule ``(operator, threshold)`` such as ``(">", 0.001)``);
    or what is wrong (``[], why``) when a line that starts with ``@txprobe`` breaks the grammar. The reason
    names the line's number and the part that is wrong, never its text."""
    found = []
    for number, line in enumerate(output.split("\n"), start=1):
        if not line.startswith(PROBE_MARK):
            continue
        parts = line.split(" ")
        if len(parts) != 4 or parts[0] != PROBE_MARK:
            return [], f"output line {number}: a malformed {PROBE_MARK} line (expected 4 fields)"
        _, key, tol, data = parts
        if not PROBE_KEY.fullmatch(key):
            return [], f"output line {number}: a {PROBE_MARK} key that is not a name"
        rule = _RULE.fullmatch(tol)
        if rule and math.isfinite(float(rule.group(2))):
            tolerance: Any = (rule.group(1), float(rule.group(2)))
        elif _TOLERANCE.fullmatch(tol) and math.isfinite(float(tol)):
            tolerance = float(tol)
        else:
            return [], f"output line {number}: a {PROBE_MARK} tolerance that is not a number nor a rule"
        if len(data) > MAX_PROBE_DATA or len(data) % 4 or not _BASE64.fullmatch(data):
            return (
                [],
                f"output line {number}: {PROBE_MARK} data that is not base64 of at most {MAX_PROBE_DATA} characters",
            )
        found.append((key, tolerance, data))
    return found, ""


def csv_row(row: Mapping[str, Any], fields: Iterable[str]) -> dict[str, Any]:
    """``row`` restricted to ``fields``, each text field cleaned (:func:`clean_text`; the note to
    :data:`NOTE_CHARS`, the others to :data:`FIELD_CHARS`) and kept from reading as a spreadsheet formula."""
    out: dict[str, Any] = {}
    for name in fields:
        value = row.get(name, "")
        if isinstance(value, str):
            value = clean_text(value, NOTE_CHARS if name == "note" else FIELD_CHARS)
            if value[:1] in ("=", "+", "-", "@"):
                value = "'" + value
        out[name] = value
    return out


def failure_reasons(failures: Mapping[str, Any]) -> dict[str, str]:
    """grade id -> reason, each cleaned and cut to :data:`REASON_CHARS` (the ids to 64), at most
    :data:`MAX_REASONS` of them (the rest counted in one last entry)."""
    items = list(failures.items())
    out = {clean_text(g, 64): clean_text(w, REASON_CHARS) for g, w in items[:MAX_REASONS]}
    if len(items) > MAX_REASONS:
        out["..."] = f"{len(items) - MAX_REASONS} more tests failed the check"
    return out
