"""What book pages and lab notebooks import: the figures (:mod:`~txcourse.notebook.plots`) and the checks a
lab cell runs (:mod:`~txcourse.notebook.checks`)."""
