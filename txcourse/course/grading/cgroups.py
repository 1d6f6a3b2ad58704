"""One cgroup per sandboxed kernel, where the grader can make one: --memory, a process limit and a CPU quota
for the whole sandbox (cgroup v1 memory+pids, and cpu where that hierarchy is writable too, or a delegated
cgroup v2 subtree: memory+pids, and cpu where delegated), and their cleanup.

CPU (:func:`cgroup_limits`): each sandbox gets a quota of ``cpus`` cores (v1 ``cpu.cfs_quota_us`` over
``cpu.cfs_period_us``, v2 ``cpu.max``) and the default, equal weight, so no sandbox's processes (200 busy
ones) take a neighbour's cores. Under cgroup v1 the run's folder gets ``cpu.shares`` of ``RUN_SHARES_PER_CPU``
per core: the sandboxes together weigh as much as that many busy processes of the host, which compete with
the group one by one. Where no cpu controller is available (:func:`cpu_controller` is False) the fallback
is an affinity (``sched_setaffinity``, :func:`cpu_set`): each sandbox is pinned to ``cpus`` cores chosen by
its task number, round robin; the student's code can widen its own affinity, so that fallback only keeps
honest neighbours apart, and :func:`confinement` says so.
"""

from __future__ import annotations

import functools
import math
import os
import re
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

__all__ = ["cgroup_parents", "confinement", "cgroup_limits", "cpu_controller", "cpu_set"]


_CGROUP_FS = Path("/sys/fs/cgroup")


_CGROUP_PREFIX = "txcourse-"  # <own cgroup>/txcourse-<run>/<task>: one cgroup per sandboxed kernel


# the limit files of one sandbox's cgroup, by cgroup version: what each is set to (cpu: only where available)
_CGROUP_LIMITS = {
    1: {"memory": ("memory.limit_in_bytes",), "pids": ("pids.max",), "cpu": ("cpu.cfs_quota_us",)},
    2: {"unified": ("memory.max", "pids.max")},
}
CPU_PERIOD = 100_000  # microseconds of the CFS period; the quota is cpus * CPU_PERIOD per period
RUN_SHARES_PER_CPU = 1024  # cgroup v1: cpu.shares of a run's folder per core (1024: one busy process)


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
            if name in ("memory", "pids", "cpu"):
                v1[name] = _CGROUP_FS / name / path.lstrip("/")
    usable = {c: f for c, f in v1.items() if _can_make_child(f, _CGROUP_LIMITS[1][c])}
    if "memory" in usable and "pids" in usable:
        return 1, usable
    unified = _CGROUP_FS if (_CGROUP_FS / "cgroup.controllers").is_file() else _CGROUP_FS / "unified"
    for controllers, path in own:
        if controllers == "":
            folder = unified / path.lstrip("/")
            if _delegated(folder) >= {"memory", "pids"} and _can_make_child(folder, _CGROUP_LIMITS[2]["unified"]):
                return 2, {"unified": folder}
    return 0, {}


def _delegated(folder: Path) -> set[str]:
    """The controllers a cgroup v2 folder hands to its children (``cgroup.subtree_control``)."""
    try:
        return set((folder / "cgroup.subtree_control").read_text().split())
    except OSError:
        return set()


def cpu_controller() -> bool:
    """Whether each sandbox's cgroup gets a CPU quota (v1 ``cpu`` writable, or v2 ``cpu`` delegated)."""
    version, parents = cgroup_parents()
    if version == 1:
        return "cpu" in parents
    return version == 2 and "cpu" in _delegated(parents["unified"])


def cgroup_limits(version: int, controller: str, memory: int, processes: int, cpus: Optional[float]) -> dict[str, str]:
    """The files and values of one sandbox's cgroup in ``controller``'s hierarchy (``"unified"`` for v2):
    ``memory`` bytes, ``processes`` tasks, ``cpus`` cores of CPU time (None: no quota, the equal weight only)."""
    quota = str(max(1000, int(round(cpus * CPU_PERIOD)))) if cpus else None
    if version == 1:
        by_controller = {
            "memory": {"memory.limit_in_bytes": str(memory)},
            "pids": {"pids.max": str(processes)},
            "cpu": {"cpu.cfs_period_us": str(CPU_PERIOD), "cpu.cfs_quota_us": quota or "-1"},
        }
        return by_controller.get(controller, {})
    limits = {"memory.max": str(memory), "pids.max": str(processes)}
    if cpu_controller():
        limits["cpu.max"] = f"{quota or 'max'} {CPU_PERIOD}"
    return limits


def run_limits(version: int, controller: str) -> dict[str, str]:
    """The files and values of a run's folder (``txcourse-<run>``, the parent of its sandboxes' cgroups):
    v1 ``cpu.shares`` (see the module's docstring); v2 the controllers its children get."""
    if version == 1 and controller == "cpu":
        return {"cpu.shares": str(RUN_SHARES_PER_CPU * (os.cpu_count() or 1))}
    if version == 2:
        return {"cgroup.subtree_control": "+memory +pids" + (" +cpu" if cpu_controller() else "")}
    return {}


def cpu_set(task: str, cpus: Optional[float]) -> list[int]:
    """The fallback without a cpu controller: the cores of task ``task`` (a number; others get none),
    ``ceil(cpus)`` of the cores this process may use, round robin by task number. [] means no pinning."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not cpus or not task.isdigit() or not cores:
        return []
    width = min(len(cores), max(1, math.ceil(cpus)))
    if width == len(cores):
        return []
    start = int(task) * width % len(cores)
    return sorted(cores[(start + i) % len(cores)] for i in range(width))


def confinement() -> str:
    """One line: which memory, process and CPU limits hold the sandboxes started from this process."""
    version, _ = cgroup_parents()
    cpu = (
        "; CPU: a quota of an equal share of the cores per sandbox (cgroup cpu)"
        if cpu_controller()
        else "; CPU: no cpu controller, each sandbox pinned to its share of the cores (an affinity its code can undo)"
    )
    if version:
        return f"cgroup v{version}: --memory and the process limit hold for each sandbox as a whole" + cpu
    return (
        "no usable cgroup: --memory holds per process only (RLIMIT_AS), and the process limit is RLIMIT_NPROC"
        + (", which Linux does not enforce for root: no process limit" if os.geteuid() == 0 else "")
        + cpu
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
