"""Every process of a grading run, found and ended: process groups and the run's marker variable."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

from txcourse.course.grading.cgroups import _remove_cgroups

__all__ = ["MARKER", "marked_processes", "ProcessGroups"]

MARKER = "TXCOURSE_GRADE_RUN"  # environment variable carried by every process of a grading run


def marked_processes(marker: str) -> list[int]:
    """The pids (other than ours) whose environment holds ``MARKER=marker...`` (a prefix match:
    ``"run1/"`` finds every task of run1)."""
    needle = f"\0{MARKER}={marker}".encode()
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in b"\0" + f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


class ProcessGroups:
    """The process groups started for one grading run, so that all of them can be ended at once.

    Every command started with :meth:`popen` gets a session (and process group) of its own and
    ``MARKER=<run>/<task>`` in its environment, which its children inherit (the sandboxed kernel
    gets it through ``_PASS_ENV``). :meth:`done` ends what one command left behind (its group and
    its task's marked processes: a kernel's forked children); :meth:`kill_all` ends every group
    still registered and every marked process of the run, until none is left.
    """

    def __init__(self, run: str):
        self.run = run
        self._groups: set[int] = set()
        self._lock = threading.Lock()
        self.closed = False

    def env(self, env: dict[str, str], task: str) -> dict[str, str]:
        """``env`` with the marker of ``task`` (give every command running at the same time its own
        task: :meth:`done` ends all processes of the task)."""
        return {**env, MARKER: f"{self.run}/{task}/"}

    def popen(self, cmd: Sequence[str], env: dict[str, str], task: str = "", **kwargs) -> subprocess.Popen:
        with self._lock:
            if self.closed:
                raise KeyboardInterrupt("grading was interrupted")
            proc = subprocess.Popen(list(cmd), env=self.env(env, task), start_new_session=True, **kwargs)
            self._groups.add(proc.pid)
        return proc

    def done(self, proc: subprocess.Popen, task: str = "") -> None:
        """``proc`` has been waited for: end what its group and its task left behind, forget it."""
        _killpg(proc.pid)
        _kill_until_gone(f"{self.run}/{task}/")
        _remove_cgroups(f"{self.run}/{task}/")
        with self._lock:
            self._groups.discard(proc.pid)

    def kill_all(self) -> list[int]:
        """SIGKILL every registered group and every marked process of the run; returns the pids
        still alive at the end (none, unless they cannot be killed)."""
        with self._lock:
            self.closed = True
            groups = list(self._groups)
        for pgid in groups:
            _killpg(pgid)
        left = _kill_until_gone(f"{self.run}/")
        _remove_cgroups(f"{self.run}/")
        return left


def _kill_until_gone(marker: str, rounds: int = 40) -> list[int]:
    left: list[int] = []
    for _ in range(rounds):
        left = marked_processes(marker)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    return left


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
