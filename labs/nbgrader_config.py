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

# Feedback (`make grade`): students see their autograded notebook with the scores, the hidden
# tests' code taken out again (a failing hidden test still shows its error).
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402

c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
