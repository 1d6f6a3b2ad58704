"""The one hidden-test scanner (txcourse.course.grading.hidden): its threshold, and no second copy of it.

The feedback scrubber of ``labs/nbgrader_config.py`` (``HideHiddenTestOutput``) and the grader's leak
check (``feedback_leaks``, fed by ``hidden_test_lines``) must agree on which lines are hidden tests:
two scanners with drifted thresholds (6 and 12 characters) meant the check ignored lines the
feedback hid. Both now call :func:`txcourse.course.grading.hidden.hidden_lines`.
"""

from __future__ import annotations

import ast
import runpy
from pathlib import Path

import pytest

from txcourse.course.grading import hidden
from txcourse.course.grading.hidden import HIDDEN_BEGIN, HIDDEN_END, MIN_HIDDEN_LINE, feedback_leaks, hidden_lines

ROOT = Path(__file__).resolve().parents[2]
SHORTEST = ("n = " + "9" * 40)[:MIN_HIDDEN_LINE]  # a hidden line of exactly the minimum length: n = 99
TOO_SHORT = ("m = " + "8" * 40)[: MIN_HIDDEN_LINE - 1]  # one character shorter: m = 8


def _cell(*hidden_code: str, visible: str = "assert f(1) == 2") -> str:
    return "\n".join([visible, HIDDEN_BEGIN, *hidden_code, HIDDEN_END])


def test_minimum_length_is_found_and_shorter_is_not():
    assert len(SHORTEST) == MIN_HIDDEN_LINE and len(TOO_SHORT) == MIN_HIDDEN_LINE - 1
    assert hidden_lines([_cell(SHORTEST, TOO_SHORT)]) == {SHORTEST}
    # whitespace is collapsed before measuring and comparing: indentation does not make a line long
    assert hidden_lines([_cell("    " + TOO_SHORT, "  x  =  f(1)")]) == {"x = f(1)"}
    # a hidden line that the visible code also holds is no secret
    assert hidden_lines([_cell("assert f(1) == 2", "assert f(-3) == -6")]) == {"assert f(-3) == -6"}
    # over several cells: visible anywhere counts, and a block ends with its cell
    assert hidden_lines([_cell("assert g(0) == 0"), "assert g(0) == 0"]) == set()
    assert hidden_lines([HIDDEN_BEGIN + "\nsecret = 1", "shown = 2"]) == {"secret = 1"}
    with pytest.raises(ValueError, match=r"sources must be a list of cell sources, got one string"):
        hidden_lines(_cell(SHORTEST))


def test_leak_check_flags_the_minimum_length_line_only():
    found = hidden_lines([_cell(SHORTEST, TOO_SHORT)])
    assert feedback_leaks(f"<pre>{SHORTEST}</pre>", found) == [SHORTEST]
    assert feedback_leaks(f"<pre>{TOO_SHORT}</pre>", found) == []
    assert feedback_leaks("<span>x</span>  =  <b>f</b>(1)", {"x = f(1)"}) == ["x = f(1)"]


def test_feedback_scrubber_uses_the_scanner():
    """labs/nbgrader_config.py blanks exactly the lines the leak check looks for."""
    pytest.importorskip("nbgrader")
    from traitlets.config import Config

    config = runpy.run_path(str(ROOT / "labs" / "nbgrader_config.py"), init_globals={"get_config": Config})
    scrubber = config["HideHiddenTestOutput"]()
    source = _cell("x  =  f(1)", TOO_SHORT, "assert x == 99")
    frames = [
        "Cell In[4], line 3\n      1 assert f(1) == 2\n----> 3 x  =  f(1)",  # the test cell's own frame
        f"File lib.py:7, in g\n      6 {TOO_SHORT}\n----> 7 x = f(1)\n      8 other = 3",
    ]
    cell = {
        "cell_type": "code",
        "source": source,
        "execution_count": 4,
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "x =   f(1)\nassert x == 99\nfine\n"},
            {"output_type": "error", "ename": "AssertionError", "evalue": "", "traceback": frames},
        ],
    }
    cell, _ = scrubber.preprocess_cell(cell, {}, 0)
    stream = cell["outputs"][0]["text"].split("\n")
    assert stream[:3] == ["    [a hidden test line]", "    [a hidden test line]", "fine"]
    own, other = cell["outputs"][1]["traceback"]
    assert own == "Cell In[4], line 3: the test cell (its hidden tests are not shown)"
    assert other.split("\n") == [
        "File lib.py:7, in g",
        f"      6 {TOO_SHORT}",
        "    [a hidden test line]",
        "      8 other = 3",
    ]  # below the threshold: shown, and no leak either
    assert feedback_leaks(own + "\n" + other, hidden_lines([source])) == []


def _scanners(path: Path) -> list[str]:
    """Functions in ``path`` that look for the hidden-test begin marker in a line and keep lines by a
    length threshold: a hidden-test scanner."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        marker = threshold = False
        for node in ast.walk(func):
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In):
                left = node.left
                name = (
                    left.value
                    if isinstance(left, ast.Constant) and isinstance(left.value, str)
                    else getattr(left, "id", None) or getattr(left, "attr", None) or ""
                )
                marker |= "HIDDEN TESTS" in name or "begin" in name.lower()
            if (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Call)
                and getattr(node.left.func, "id", None) == "len"
                and isinstance(node.ops[0], (ast.GtE, ast.Gt))
            ):
                threshold = True
        if marker and threshold:
            found.append(f"{path.relative_to(ROOT)}:{func.lineno} {func.name}")
    return found


def test_there_is_one_hidden_test_scanner():
    files = [p for folder in ("txcourse", "labs", "benchmarks", "tests") for p in (ROOT / folder).rglob("*.py")]
    scanners = [s for p in sorted(files) for s in _scanners(p)]
    assert scanners == [
        f"txcourse/course/grading/hidden.py:{hidden.hidden_lines.__code__.co_firstlineno} hidden_lines"
    ], "a second hidden-test scanner: use txcourse.course.grading.hidden.hidden_lines instead"


def test_the_scanner_check_finds_a_copy(tmp_path, monkeypatch):
    """The check above can fail: the two copies this package once had are both found."""
    copy = tmp_path / "copy.py"
    copy.write_text(
        """
class HideHiddenTestOutput:
    begin = "### BEGIN HIDDEN TESTS"
    def hidden_lines(self, source):
        inside, hidden = False, set()
        for line in source.splitlines():
            if self.begin in line:
                inside = True
            elif inside and len(line.strip()) >= 6:
                hidden.add(line.strip())
        return hidden

def hidden_test_lines(nb):
    for line in nb:
        if HIDDEN_BEGIN in line:
            pass
        elif len(line) >= 12:
            pass
""",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert sorted(s.split()[1] for s in _scanners(copy)) == ["hidden_lines", "hidden_test_lines"]


def test_leak_check_and_scrubber_find_encoded_hidden_lines_in_any_cell():
    """A hook can print a test cell's source in a later, non-test cell, base64 or hex encoded, ROT13 or
    reversed: the leak check reports it and the scrubber blanks it (notebook-wide hidden lines, one decoder)."""
    import base64

    pytest.importorskip("nbgrader")
    import nbformat
    from traitlets.config import Config

    source = _cell("x  =  f(1)", "assert x == 99")
    found = hidden_lines([source])
    raw = source.encode()
    prints = [
        source,
        base64.b64encode(raw).decode(),
        base64.encodebytes(raw * 3).decode(),
        base64.urlsafe_b64encode(b".." + raw).decode(),
        raw.hex(" "),
        __import__("codecs").encode(source, "rot_13"),  # ROT13 and reversed need no key either
        source[::-1],
    ]
    for text in prints:
        assert feedback_leaks(f"<pre>leaked: {text}</pre>", found), text
    assert feedback_leaks("<pre>" + base64.b64encode(b"nothing hidden here").decode() + "</pre>", found) == []
    config = runpy.run_path(str(ROOT / "labs" / "nbgrader_config.py"), init_globals={"get_config": Config})
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(source),
            nbformat.v4.new_code_cell(
                "print(leaked)",
                outputs=[nbformat.v4.new_output("stream", name="stdout", text=t + "\nfine\n") for t in prints],
            ),
        ]
    )
    nb, _ = config["HideHiddenTestOutput"]().preprocess(nb, {})
    shown = "".join(o["text"] for o in nb.cells[1].outputs)
    assert (
        feedback_leaks(shown, found) == [] and "[hidden test code, encoded]" in shown
    )  # a run may take a neighbouring word with it
