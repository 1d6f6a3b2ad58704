"""Training, framework-free: what both halves' Trainers share. Book: week 6.

- :mod:`~txcourse.training.config`: :class:`TrainConfig`, how to train (Sec. 5.3-5.4 of Vaswani et al. 2017);
- :mod:`~txcourse.training.schedule`: the learning-rate schedule, Eq. (3);
- :mod:`~txcourse.training.batches`: a deterministic, resumable stream of batches;
- :mod:`~txcourse.training.loop`: the one training loop both Trainers run;
- :mod:`~txcourse.training.history`, :mod:`~txcourse.training.divergence`: what a run records, and when it has failed;
- :mod:`~txcourse.training.checkpoint`, :mod:`~txcourse.training.files`: checkpoints, read and checked in one place,
  written atomically;
- :mod:`~txcourse.training.distributed`: data parallelism (one process per device, or TensorFlow replicas).

The names most code needs are re-exported here.
"""

from txcourse.training.batches import BatchStream
from txcourse.training.config import RESUME_SETTINGS, TrainConfig
from txcourse.training.divergence import DivergenceWatch, diverged
from txcourse.training.history import History, check_valid, read_history, validation_curve
from txcourse.training.schedule import noam_lr, noam_rate, schedule_width

__all__ = [
    "TrainConfig",
    "RESUME_SETTINGS",
    "noam_lr",
    "noam_rate",
    "schedule_width",
    "BatchStream",
    "History",
    "read_history",
    "check_valid",
    "validation_curve",
    "diverged",
    "DivergenceWatch",
]
