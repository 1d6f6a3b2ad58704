"""What ``txcourse train`` does when it is stopped: SIGINT or SIGTERM end the run after the current step (it then
saves a checkpoint), and a failed run says which checkpoint is kept."""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Any

from txcourse.errors import TxcourseError

__all__ = ["stop_on_signals", "kept_note"]


@contextlib.contextmanager
def stop_on_signals(trainer: Any):
    """SIGINT and SIGTERM ask the trainer to stop after the current step (it then saves); a second one stops now."""
    received: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if received:
            raise KeyboardInterrupt
        received.append(signum)
        trainer.stop_requested = True

    if threading.current_thread() is not threading.main_thread():  # signal handlers: main thread only
        yield received
        return
    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def kept_note(checkpoint: Path, what: str) -> str:
    """What is on disk after a run that failed: '<what> 'PATH' (step N) is kept' or 'no checkpoint was written'."""
    from txcourse.training.checkpoint import read_checkpoint_meta

    try:
        return f"{what} {str(checkpoint)!r} (step {read_checkpoint_meta(checkpoint)['step']}) is kept"
    except (OSError, TxcourseError):  # absent or unreadable: nothing usable was written
        return "no checkpoint was written"
