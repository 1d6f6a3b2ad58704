"""Evaluation, framework-free: translating with a model, the metrics, and counting parameters and FLOPs.

- :mod:`~txcourse.evaluation.translate`: greedy/beam translation in batches, and scores by digit count and phrasing;
- :mod:`~txcourse.evaluation.metrics`: exact match, BLEU, chrF, accuracy by length;
- :mod:`~txcourse.evaluation.accounting`: parameters, FLOPs and memory of a model (the interlude).
"""
