"""nbgrader configuration of the course's labs (run nbgrader inside labs/, or use `make labs`).

    labs/source/<lab>/<lab>_torch.ipynb, <lab>_tf.ipynb   instructor versions (from labs/make_sources.py)
    labs/release/<lab>/                                 student versions (`make labs`)

Grading (`make grade`, `make test-labs`) copies this file and labs/source into a temporary course.
"""

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "txcourse"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"

# Student versions: the code between the markers becomes the stub; hidden tests disappear
# (they come back from the gradebook when grading).
c.ClearSolutions.begin_solution_delimeter = "### BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "### END SOLUTION"
c.ClearSolutions.code_stub = {"python": 'raise NotImplementedError("write your code here")'}
c.ClearHiddenTests.begin_test_delimeter = "### BEGIN HIDDEN TESTS"
c.ClearHiddenTests.end_test_delimeter = "### END HIDDEN TESTS"

# Autograding. A cell that runs longer than this is interrupted (an endless loop costs the tests
# that depend on it, nothing else); the training cells of weeks 1 and 6 take about a minute with
# their default (smoke) parameters on a CPU.
c.Execute.timeout = 300
c.Execute.interrupt_on_timeout = True
c.Execute.startup_timeout = 120
# A deleted test cell is put back from the gradebook and run (nbgrader's default leaves it
# ungraded, waiting for a manual grade).
c.OverwriteCells.add_missing_cells = True

# Grading judges the assertions only: nbgrader fails a test cell that wrote anything to stderr,
# so a correct answer that emits a warning (PyTorch's "To copy construct from a tensor ...", a
# DeprecationWarning, a library's log line) would lose the cell without an error message. Right
# after the notebook has run, every stderr output becomes a stdout output with the same text:
# still shown in the feedback, never a failure. Only an exception (a failed assert) fails a cell.
import json  # noqa: E402
import re  # noqa: E402

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, Preprocessor  # noqa: E402
from nbgrader.converters import Autograde  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, Execute, GetGrades  # noqa: E402
from traitlets import Bool  # noqa: E402

from txcourse.course.grading.execute import RestartingExecute  # noqa: E402
from txcourse.course.grading.hidden import (  # noqa: E402
    HIDDEN_BEGIN,
    HIDDEN_END,
    encoded_runs,
    hidden_lines,
    normalise_line,
    plain_views,
)
from txcourse.course.grading.intake_caps import renders_as_markdown  # noqa: E402


class StderrToStdout(Preprocessor):
    """Every ``stream`` output named stderr becomes stdout (same text), so it cannot fail a test cell."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                output["name"] = "stdout"
        return cell, resources


# nbgrader's own list, with its Execute replaced by one that restarts a kernel which ignores the
# interrupt (a hung cell then fails only the tests after it; txcourse/course/grading/execute.py).
_steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
_at = _steps.index(Execute)
c.Autograde.autograde_preprocessors = _steps[:_at] + [RestartingExecute, StderrToStdout] + _steps[_at + 1 :]

# Feedback (`make grade`): students see their autograded notebook with the scores. Every output of
# every cell was made by a kernel that ran student code, so none is trusted:
# - InertOutput keeps plain text and PNG/JPEG images only; HTML, JavaScript, Markdown, SVG, LaTeX,
#   widgets (any other type) are shown as text, so no output can draw a fake score or run a script;
# - InertMarkdown renders Markdown cells to HTML cleaned by bleach and raw cells as escaped text;
# - HideHiddenTestOutput takes the hidden tests' code out of the outputs (ClearHiddenTests takes it
#   out of the source): IPython's traceback of a failing test shows the lines around the failure,
#   hidden ones included, and student code can read a test cell's source (a pre_run_cell hook) and
#   print it in any later cell, plain, base64 or hex. Each traceback frame of a test cell that has
#   hidden tests becomes one line; any output line of any cell that holds a hidden line, and any
#   base64 or hex run that decodes to one, is blanked; the error's type and message stay.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SHOWN_IMAGES = ("image/png", "image/jpeg")
_BASE64_DATA = re.compile(r"[A-Za-z0-9+/=\s]*")
_REPR = re.compile(r"<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>")


class InertOutput(Preprocessor):
    """Outputs the feedback renders as they are: plain text and PNG/JPEG images (base64 data only, no
    metadata but integer width/height, which the template writes unquoted). Any other type (text/html,
    application/javascript, text/markdown, image/svg+xml, widgets...) is dropped; its content is shown
    as plain text, which nbconvert escapes, unless the output has its own text (a DataFrame's), which is
    kept with a note. The notebook's widget state (which would load widget scripts) is dropped too."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") not in ("execute_result", "display_data"):
                continue  # stream and error outputs are text, escaped by nbconvert
            data = output.get("data", {})
            inert = {}
            for mime, value in data.items():
                value = "".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value
                if not isinstance(value, str):
                    continue
                if mime == "text/plain" or (mime in _SHOWN_IMAGES and _BASE64_DATA.fullmatch(value)):
                    inert[mime] = value
            dropped = [mime for mime in data if mime not in inert]
            if dropped:
                plain = inert.get("text/plain", "")
                if not plain.strip() or _REPR.fullmatch(plain.strip()):
                    value = data[dropped[0]]
                    if not isinstance(value, str):
                        value = "".join(value) if isinstance(value, list) else json.dumps(value, indent=1)
                    plain = f"[{dropped[0]} output, shown as text]\n{value}"
                else:
                    plain += f"\n[{', '.join(dropped)} output not rendered in the feedback]"
                inert["text/plain"] = plain
            output["data"] = inert
            meta = output.get("metadata", {})
            output["metadata"] = {
                mime: {
                    k: v
                    for k, v in meta[mime].items()
                    if k in ("width", "height") and isinstance(v, int) and not isinstance(v, bool)
                }
                for mime in _SHOWN_IMAGES
                if mime in inert and isinstance(meta.get(mime), dict)
            }
        return cell, resources


class InertMarkdown(Preprocessor):
    """Markdown and raw cells rendered safe: a student can write any HTML into a Markdown cell (nbconvert's
    Markdown renderer passes ``<script>``, ``onerror=`` and ``javascript:`` links through) or a raw cell (the
    HTML template emits it as it is). Each Markdown cell is rendered here (nbconvert's own renderer), then
    cleaned with bleach (formatting tags only; links http, https and mailto; no scripts, styles, images,
    forms or event attributes) and kept as a raw ``text/html`` cell of that cleaned HTML; each raw cell is
    shown as escaped text. Math stays as text for MathJax."""

    enabled = Bool(True)
    tags = frozenset(
        "a abbr b blockquote br code del div em h1 h2 h3 h4 h5 h6 hr i kbd li ol p pre s span strong sub sup "
        "table tbody td th thead tr ul".split()
    )

    def preprocess_cell(self, cell, resources, index):
        import html as html_lib

        import bleach
        from nbconvert.filters.markdown_mistune import markdown2html_mistune

        kind = cell.get("cell_type")
        if kind == "markdown" and not renders_as_markdown(cell.get("source", "")):
            kind = "raw"  # over MARKDOWN_RENDER_CAP: escaped text (mistune takes seconds on some long patterns)
        if kind == "markdown":
            rendered = markdown2html_mistune(cell.get("source", ""))
            clean = bleach.clean(
                rendered,
                tags=self.tags,
                attributes={"a": ["href", "title"], "td": ["align"], "th": ["align"]},
                protocols={"http", "https", "mailto"},
                strip=False,
            )
            cell["cell_type"] = "raw"
            cell["metadata"] = {"raw_mimetype": "text/html"}
            cell["source"] = f'<div class="jp-RenderedMarkdown">{clean}</div>'
            cell.pop("attachments", None)
        elif kind == "raw":
            cell["metadata"] = {"raw_mimetype": "text/html"}
            cell["source"] = f"<pre>{html_lib.escape(cell.get('source', ''))}</pre>"
        return cell, resources


class HideHiddenTestOutput(Preprocessor):
    """Hidden test code out of the outputs of every cell (before ClearHiddenTests removes it from the source).

    Which lines are hidden is decided by the one scanner the grader's own leak check uses too
    (txcourse.course.grading.hidden.hidden_lines, threshold MIN_HIDDEN_LINE characters, explained there),
    over the whole notebook (:meth:`preprocess`) and over the test cell itself; encoded copies are found
    as the leak check finds them (txcourse.course.grading.hidden.encoded_runs)."""

    enabled = Bool(True)
    begin = HIDDEN_BEGIN
    end = HIDDEN_END
    notebook_hidden = frozenset()  # the hidden lines of the notebook being processed

    def preprocess(self, nb, resources):
        self.notebook_hidden = frozenset(hidden_lines([cell.get("source", "") for cell in nb.cells]))
        return super().preprocess(nb, resources)

    def leaks(self, view, hidden):
        return self.begin in view or self.end in view or any(h in view for h in hidden)

    def scrub(self, text, hidden):
        lines = []
        for line in text.split("\n"):
            plain = _ANSI.sub("", line)
            flats = [normalise_line(v) for v in plain_views(plain)]  # as the scanner keeps them; ROT13, reversed
            if any(self.leaks(v, ()) for v in plain_views(plain)) or any(h in f for h in hidden for f in flats):
                line = "    [a hidden test line]"
            lines.append(line)
        text = "\n".join(lines)
        spans = sorted((a, b) for a, b, views in encoded_runs(text) if any(self.leaks(v, hidden) for v in views))
        merged = []
        for a, b in spans:  # base64 and hex runs overlap (hex digits are base64 characters)
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        for a, b in reversed(merged):
            text = text[:a] + "[hidden test code, encoded]" + text[b:]
        return text

    def preprocess_cell(self, cell, resources, index):
        source = cell.get("source", "")
        if cell.get("cell_type") != "code":
            return cell, resources
        tests = self.begin in source
        hidden = set(self.notebook_hidden) | (hidden_lines([source]) if tests else set())
        if not hidden:
            return cell, resources
        here = re.compile(r"^\s*(Cell In\s*\[\s*%s\s*\]|Input In \[%s\])" % ((cell.get("execution_count"),) * 2))
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "error":
                frames = []
                for frame in output.get("traceback", []):
                    plain = _ANSI.sub("", frame)
                    if tests and here.match(plain):
                        line = re.search(r"line (\d+)", plain.splitlines()[0])
                        frame = (
                            f"Cell In[{cell.get('execution_count')}]"
                            + (f", line {line.group(1)}" if line else "")
                            + ": the test cell (its hidden tests are not shown)"
                        )
                    frames.append(self.scrub(frame, hidden))
                output["traceback"] = frames
                output["evalue"] = self.scrub(output.get("evalue", ""), hidden)
                output["ename"] = self.scrub(output.get("ename", ""), hidden)
            elif kind == "stream":
                output["text"] = self.scrub(output.get("text", ""), hidden)
            elif kind in ("execute_result", "display_data"):
                data = output.get("data", {})
                for mime, value in data.items():
                    if isinstance(value, str):
                        data[mime] = self.scrub(value, hidden)
        return cell, resources


c.GenerateFeedback.preprocessors = [
    GetGrades,
    InertOutput,
    InertMarkdown,
    HideHiddenTestOutput,
    ClearHiddenTests,
    CSSHTMLHeaderPreprocessor,
]
