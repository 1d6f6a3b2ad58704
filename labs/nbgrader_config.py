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
import re  # noqa: E402

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, Preprocessor  # noqa: E402
from nbgrader.converters import Autograde  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, Execute, GetGrades  # noqa: E402
from traitlets import Bool  # noqa: E402

from txcourse.course.grading.hidden import HIDDEN_BEGIN, HIDDEN_END, hidden_lines, normalise_line  # noqa: E402


class StderrToStdout(Preprocessor):
    """Every ``stream`` output named stderr becomes stdout (same text), so it cannot fail a test cell."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                output["name"] = "stdout"
        return cell, resources


_steps = list(Autograde.class_traits()["autograde_preprocessors"].default())  # nbgrader's own list
c.Autograde.autograde_preprocessors = (
    _steps[: _steps.index(Execute) + 1] + [StderrToStdout] + _steps[_steps.index(Execute) + 1 :]
)

# Feedback (`make grade`): students see their autograded notebook with the scores, the hidden
# tests' code taken out (ClearHiddenTests) -- also from the outputs: IPython's traceback of a
# failing test shows the lines around the failure, hidden ones included. HideHiddenTestOutput
# replaces each traceback frame of a test cell that has hidden tests by one line and blanks any
# other output line that holds a hidden line's code; the error's type and message stay.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class HideHiddenTestOutput(Preprocessor):
    """Hidden test code out of the outputs of test cells (before ClearHiddenTests removes it from the source).

    Which lines are hidden is decided by the one scanner the grader's own leak check uses too
    (txcourse.course.grading.hidden.hidden_lines, threshold MIN_HIDDEN_LINE characters, explained there)."""

    enabled = Bool(True)
    begin = HIDDEN_BEGIN
    end = HIDDEN_END

    def scrub(self, text, hidden):
        lines = []
        for line in text.split("\n"):
            plain = _ANSI.sub("", line)
            flat = normalise_line(plain)  # compared as the scanner keeps them: whitespace collapsed
            if self.begin in plain or self.end in plain or any(h in flat for h in hidden):
                line = "    [a hidden test line]"
            lines.append(line)
        return "\n".join(lines)

    def preprocess_cell(self, cell, resources, index):
        source = cell.get("source", "")
        if cell.get("cell_type") != "code" or self.begin not in source:
            return cell, resources
        hidden = hidden_lines([source])
        here = re.compile(r"^\s*(Cell In\s*\[\s*%s\s*\]|Input In \[%s\])" % ((cell.get("execution_count"),) * 2))
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "error":
                frames = []
                for frame in output.get("traceback", []):
                    plain = _ANSI.sub("", frame)
                    if here.match(plain):
                        line = re.search(r"line (\d+)", plain.splitlines()[0])
                        frame = (
                            f"Cell In[{cell.get('execution_count')}]"
                            + (f", line {line.group(1)}" if line else "")
                            + ": the test cell (its hidden tests are not shown)"
                        )
                    frames.append(self.scrub(frame, hidden))
                output["traceback"] = frames
                output["evalue"] = self.scrub(output.get("evalue", ""), hidden)
            elif kind == "stream":
                output["text"] = self.scrub(output.get("text", ""), hidden)
            elif kind in ("execute_result", "display_data") and "text/plain" in output.get("data", {}):
                output["data"]["text/plain"] = self.scrub(output["data"]["text/plain"], hidden)
        return cell, resources


c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTestOutput, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
