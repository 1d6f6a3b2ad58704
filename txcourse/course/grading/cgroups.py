"""One cgroup per sandboxed kernel, where the grader can make one: --memory and a process limit for the
whole sandbox (cgroup v1 memory+pids, or a delegated cgroup v2 subtree), and their cleanup."""

from __future__ import annotations

import functools
import os
import re
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["cgroup_parents", "confinement"]


_CGROUP_FS = Path("/sys/fs/cgroup")


_CGROUP_PREFIX = "txcourse-"  # <own cgroup>/txcourse-<run>/<task>: one cgroup per sandboxed kernel


# the limit files of one sandbox's cgroup, by cgroup version: what each is set to
_CGROUP_LIMITS = {
    1: {"memory": ("memory.limit_in_bytes",), "pids": ("pids.max",)},
    2: {"unified": ("memory.max", "pids.max")},
}


def _own_cgroups() -> list[tuple[str, str]]:
    """``(controllers, path)`` of each line of ``/proc/self/cgroup`` (``""`` controllers: cgroup v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    return [tuple(line.split(":", 2)[1:]) for line in lines if line.count(":") >= 2]  # type: ignore[misc]


def _can_make_child(folder: Path, limit_files: Sequence[str]) -> bool:
    """Whether a cgroup made in ``folder`` gets ``limit_files`` (tried: made, looked at, removed)."""
    probe = folder / f"{_CGROUP_PREFIX}probe-{os.getpid()}-{threading.get_ident()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return all((probe / name).is_file() for name in limit_files)
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


@functools.lru_cache(maxsize=1)
def cgroup_parents() -> tuple[int, dict[str, Path]]:
    """Where each sandbox gets a cgroup of its own: ``(version, {controller: folder})``, the folders
    under this process's own cgroups; ``(0, {})`` when none can be made here.

    cgroup v1: the ``memory`` and ``pids`` hierarchies, both writable (as root in a container whose
    ``/sys/fs/cgroup`` is mounted read-write). cgroup v2: this process's cgroup has ``memory`` and
    ``pids`` in its ``cgroup.subtree_control`` (a delegated subtree, e.g. a systemd unit with
    ``Delegate=yes`` whose processes sit in a leaf below) and is writable. Tried once per process.
    """
    own = _own_cgroups()
    v1 = {}
    for controllers, path in own:
        for name in controllers.split(","):
            if name in ("memory", "pids"):
                v1[name] = _CGROUP_FS / name / path.lstrip("/")
    if len(v1) == 2 and all(_can_make_child(v1[c], _CGROUP_LIMITS[1][c]) for c in v1):
        return 1, v1
    unified = _CGROUP_FS if (_CGROUP_FS / "cgroup.controllers").is_file() else _CGROUP_FS / "unified"
    for controllers, path in own:
        if controllers == "":
            folder = unified / path.lstrip("/")
            try:
                delegated = set((folder / "cgroup.subtree_control").read_text().split())
            except OSError:
                continue
            if {"memory", "pids"} <= delegated and _can_make_child(folder, _CGROUP_LIMITS[2]["unified"]):
                return 2, {"unified": folder}
    return 0, {}


def confinement() -> str:
    """One line: which memory and process limits hold the sandboxes started from this process."""
    version, _ = cgroup_parents()
    if version:
        return f"cgroup v{version}: --memory and the process limit hold for each sandbox as a whole"
    return "no usable cgroup: --memory holds per process only (RLIMIT_AS), and the process limit is RLIMIT_NPROC" + (
        ", which Linux does not enforce for root: no process limit" if os.geteuid() == 0 else ""
    )


def _task_cgroups(marker: str) -> list[Path]:
    """The cgroup folders of the sandbox whose processes carry ``MARKER=marker`` (``"<run>/<task>/"``);
    for a run (``"<run>/"``) its folders. None without a usable cgroup or a marker."""
    parts = [re.sub(r"[^\w.-]", "_", p) for p in marker.strip("/").split("/") if p]
    if not parts:
        return []
    _, parents = cgroup_parents()
    return [folder / (_CGROUP_PREFIX + parts[0]) / Path(*parts[1:]) for folder in parents.values()]


def _remove_cgroups(marker: str) -> None:
    """Kill what is left in the cgroups of ``marker`` and remove them (deepest first)."""
    for top in _task_cgroups(marker):
        # os.walk, deepest first, skips a folder another thread removed meanwhile (a run's kill_all and a
        # task's done() may clean up the same folders at once); Path.rglob would raise FileNotFoundError
        for folder in [Path(root) for root, _, _ in os.walk(top, topdown=False)]:
            for _ in range(40):
                try:
                    pids = [int(x) for x in (folder / "cgroup.procs").read_text().split()]
                except OSError:
                    pids = []
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
