"""The instructor's tooling, outside what a student's imports load.

- :mod:`~txcourse.course.grading`: release the student versions, check the labs, grade submissions in a sandbox;
- :mod:`~txcourse.course.errata`: the errata of the source notes, each with the test that guards its fix;
- :mod:`~txcourse.course.artefacts`: the shipped checkpoints and histories the book quotes;
- :mod:`~txcourse.course.figures`: every figure of the book, redrawn by recipe.

Grading needs the ``labs`` extra (nbgrader); ``pip install -e '.[course]'`` installs what all of it needs.
"""
