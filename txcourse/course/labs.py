"""The course's six labs, by name: the one list that labs/, the grading tool, the Makefile and the tests read.

Standard library only (nothing at all is imported), so ``labs/make_sources.py`` and a Makefile recipe can read it
cheaply: ``python -c "from txcourse.course.labs import LABS; print(*LABS)"``.
"""

__all__ = ["LABS", "TRAINING_LABS"]

LABS = ("week1_seq2seq", "week2_positional", "week3_attention", "week4_encoder", "week5_decoder", "week6_training")
TRAINING_LABS = ("week1_seq2seq", "week6_training")  # the labs that train models (a papermill `parameters` cell)
