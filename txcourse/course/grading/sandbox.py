"""Confining a student's notebook while it is graded: bubblewrap around the Jupyter kernel.

``txcourse grade`` (:func:`txcourse.course.grading.grade_submissions`) grades every submission in a
workspace of its own; nbgrader runs there unconfined (it reads and writes the workspace's
gradebook), and only the kernel, the process that runs the student's code, is started inside
`bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian package
``bubblewrap``) through a kernelspec written for that workspace (:func:`write_kernelspec`). The
sandbox (:meth:`Sandbox.kernel_argv`):

- sees a new, empty root with, read-only, only the system (``/usr`` and the ``/bin``, ``/lib``
  links, a few files of ``/etc``, the CPU list of ``/sys``), the Python installation and virtual
  environment, and the ``txcourse`` package folder; the folder of its connection file is the only
  writable host folder. Its working folder (at the path of the autograded notebook's folder) is a
  private, size-limited tmpfs (``WORK_SIZE``), thrown away with the sandbox: nothing the student's
  code writes or plants there (a symlink, a 5 GB file) reaches the host folder nbgrader writes
  into; ``/tmp`` and ``/dev/shm`` are small private tmpfs too. The instructor's course
  (``labs/source``), the repository and its ``.git``, the submissions, the grades, the other
  workspaces, ``/home`` and ``/root`` do not exist inside;
- has no network (new network namespace; the kernel talks to nbgrader over Unix sockets,
  ``KernelManager.transport = "ipc"``), its own PID, IPC and UTS namespaces and a new session, and
  dies with its parent (``--die-with-parent``): every process the notebook forks ends when the
  kernel does;
- has limits that hold the host, set by a ``python -c`` wrapper just before ``bwrap`` is executed
  (:data:`_LAUNCH`): where this process may make cgroups (:func:`cgroup_parents`: cgroup v1
  ``memory`` and ``pids`` controllers, or a cgroup v2 subtree delegated with both), the whole sandbox
  gets one: ``--memory`` bytes for all its processes together (tmpfs pages included) and at most
  ``processes`` tasks (threads count); always ``RLIMIT_AS`` (``--memory`` per process: a 20 GB
  allocation is a clean ``MemoryError``) and ``RLIMIT_FSIZE`` (largest file). Without a usable
  cgroup the memory limit is per process only and the process count is ``RLIMIT_NPROC``, which
  Linux does not enforce for root (:func:`confinement` says which holds);
- has a clean environment, bwrap's own included: ``bwrap`` is executed with only ``PATH`` and the
  run's marker (inside, ``/proc/1/environ`` is bwrap's), the kernel with the variables of
  ``_PASS_ENV`` (``--clearenv``, ``--setenv``); no grader variable (a token) is visible inside;
- caps what a cell prints (:data:`_KERNEL_BOOT`, run in the kernel before ipykernel starts): past
  ``OUTPUT_CAP`` characters of stdout and stderr in one cell (Python's writes and the file
  descriptors' alike) the rest is dropped with one line saying so, before it is sent to nbgrader,
  so a cell printing 1 GiB cannot grow the grader. A student who rewrites ipykernel's classes can
  lift that cap; it only bounds what the grader holds, never a score.

:class:`ProcessGroups` keeps track of every process group started for a grading run and of a
marker in their environment, so an interrupted run can end them all (:meth:`ProcessGroups.kill_all`).
Framework-free, standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import txcourse
from txcourse.course.grading.cgroups import (  # noqa: F401  (re-exported: sandbox.confinement)
    _CGROUP_FS,
    _CGROUP_LIMITS,
    _task_cgroups,
    cgroup_parents,
    confinement,
)
from txcourse.course.grading.processes import MARKER, ProcessGroups, marked_processes  # noqa: F401

__all__ = [
    "DEFAULT_MEMORY",
    "DEFAULT_MAX_FILE",
    "DEFAULT_PROCESSES",
    "OUTPUT_CAP",
    "MARKER",
    "SandboxUnavailable",
    "parse_size",
    "find_bwrap",
    "Sandbox",
    "write_kernelspec",
    "cgroup_parents",
    "confinement",
    "ProcessGroups",
    "marked_processes",
]

DEFAULT_MEMORY = "8G"  # address space per kernel: week 2 peaks at 1.9 GB (TF), 1.4 GB (torch); 20 GB fails
DEFAULT_MAX_FILE = 1 << 30  # RLIMIT_FSIZE: no single file over 1 GiB
TMP_SIZE = 256 << 20  # the private /tmp and /dev/shm (tmpfs, counted in RAM)
WORK_SIZE = 512 << 20  # the kernel's working folder (tmpfs)
DEFAULT_PROCESSES = 256  # tasks (processes and threads) of one sandbox: a TensorFlow kernel runs ~60 threads
OUTPUT_CAP = 8 << 20  # characters of stdout + stderr one cell may send to nbgrader

# Files of /etc the kernel may need (dynamic linker, users, time zone, fonts); nothing else of /etc.
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "nsswitch.conf",
    "passwd",
    "group",
    "localtime",
    "fonts",
    "mime.types",
    "os-release",
    "hosts",
    "host.conf",
    "gai.conf",
)
# Environment variables passed from the grader to the kernel; all others are dropped.
_PASS_ENV = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_ENABLE_ONEDNN_OPTS",
    "TXCOURSE_PROGRESS",
    "PYDEVD_DISABLE_FILE_VALIDATION",
    "JUPYTER_PLATFORM_DIRS",
    "MPLBACKEND",
    MARKER,
)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


class SandboxUnavailable(RuntimeError):
    """bwrap is missing or cannot create its namespaces here; the message says what to do."""


def parse_size(text: str | int, name: str = "--memory") -> int:
    """``"8G"`` -> 8 GiB in bytes (K, M, G, T are powers of 1024; a plain number is bytes).

    >>> parse_size("512M")
    536870912
    """
    if isinstance(text, int):
        value = text
    else:
        match = _SIZE.match(str(text))
        if not match:
            raise ValueError(f"{name} expects a size such as 8G, 512M or a number of bytes, got {text!r}")
        value = int(float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " "))
    if value < 64 << 20:
        raise ValueError(f"{name} must be at least 64M (a Python kernel needs more), got {text!r}")
    return value


def find_bwrap(path: Optional[str] = None) -> str:
    """The ``bwrap`` on ``path`` (default ``$PATH``), checked by starting an empty sandbox with the
    namespaces the kernel gets. Raises :class:`SandboxUnavailable` with the reason and the fix."""
    bwrap = shutil.which("bwrap", path=path)
    fix = (
        "install bubblewrap (`make sandbox-deps`, or `apt-get install bubblewrap`), or pass --no-sandbox "
        "to grade without isolation (students' code can then read the solutions and other submissions)"
    )
    if bwrap is None:
        raise SandboxUnavailable(f"bwrap (bubblewrap) not found on PATH: {fix}")
    probe = [
        bwrap,
        "--ro-bind",
        "/usr",
        "/usr",
        *_system_links(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--unshare-all",
        "--new-session",
        "--die-with-parent",
        "--",
        shutil.which("true") or "/bin/true",
    ]
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SandboxUnavailable(f"{bwrap} cannot run ({error}): {fix}") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SandboxUnavailable(
            f"{bwrap} cannot create a sandbox here ({reason}; unprivileged user namespaces may be disabled): {fix}"
        )
    return bwrap


def _system_links() -> list[str]:
    """``/bin``, ``/lib``... as on the host: symlinks into /usr are recreated, real folders bound."""
    args = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    return args


def _python_dirs() -> list[Path]:
    """The folders this Python runs from: the virtual environment and the installation behind it."""
    dirs = []
    for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix):
        for q in (Path(p), Path(p).resolve()):
            if q not in dirs and not any(q == d or d in q.parents for d in dirs):
                dirs.append(q)
    return dirs


def _skeleton_under_tmp(targets: Sequence[Path]) -> list[Path]:
    """The folders strictly between /tmp and each target, shallowest first, each once."""
    folders: list[Path] = []
    for target in targets:
        target = Path(target)
        if Path("/tmp") in target.parents:
            for folder in reversed(target.parents):
                if Path("/tmp") in folder.parents and folder not in folders:
                    folders.append(folder)
    return folders


# Run by ``python -I -S -c`` with the settings (JSON) as its first argument and bwrap's argv after:
# join the sandbox's cgroups (made here, limits written), set the rlimits, execute bwrap with a
# minimal environment of its own (inside the sandbox /proc/1/environ is bwrap's).
_LAUNCH = """\
import json, os, resource, sys
c = json.loads(sys.argv[1])
for folder, limits in c["cgroups"]:
    os.makedirs(folder, exist_ok=True)
    for name, value in limits.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(value)
    with open(os.path.join(folder, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
for name, value in c["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
os.execve(sys.argv[2], sys.argv[2:], c["env"])
"""

# Run by the sandboxed Python before ipykernel starts (``python -c``, the kernel's argv after it): each
# cell may send at most {cap} characters of stdout and stderr to nbgrader, and echo as many to the
# kernel's own stdout (the grader's log); the rest is dropped with one line saying so.
_KERNEL_BOOT = """\
import os, sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
from ipykernel import iostream
def _cap(OutStream=iostream.OutStream, write=iostream.OutStream.write, cap={cap}, state={{"cell": None}}):
    def capped_write(self, string):
        if not isinstance(string, str):
            return write(self, string)
        cell = (self.parent_header or {{}}).get("msg_id")
        if cell != state["cell"]:
            state.update(cell=cell, sent=0, cut=False)
        room = cap - state["sent"]
        state["sent"] += len(string)
        if len(string) <= room:
            return write(self, string)
        if not state["cut"]:
            state["cut"] = True
            write(self, string[: max(room, 0)] + "\\n[txcourse grade: output cut: a cell may print {cap} characters]\\n")
        return len(string)
    def capped_watch(self):
        if self._fid is None:
            return
        echoed = 0
        try:
            data = os.read(self._fid, iostream.PIPE_BUFFER_SIZE)
            while data and self._should_watch:
                self.write(data.decode(errors="replace"))
                if echoed < cap:
                    os.write(self._original_stdstream_copy, data[: cap - echoed])
                    echoed += len(data)
                data = os.read(self._fid, iostream.PIPE_BUFFER_SIZE)
        except Exception:
            self._exc = sys.exc_info()
    OutStream.write, OutStream._watch_pipe_fd = capped_write, capped_watch
_cap()
del _cap
from ipykernel.kernelapp import launch_new_instance
launch_new_instance()
"""


def _package_dir() -> Path:
    """The folder of the ``txcourse`` package that is running (the kernel imports the same one)."""
    return Path(txcourse.__file__).resolve().parent


@dataclass(frozen=True)
class Sandbox:
    """How to start a kernel confined: the ``bwrap`` binary and the limits.

    Args:
        bwrap: path of the bwrap binary (:func:`find_bwrap`).
        memory: bytes of memory of the whole sandbox (its cgroup, where there is one) and of address
            space of each of its processes (``RLIMIT_AS``).
        max_file: size limit of any file it writes (``RLIMIT_FSIZE``).
        processes: tasks (processes and threads) the whole sandbox may run at once (its cgroup's
            ``pids.max``; without a cgroup ``RLIMIT_NPROC``, not enforced for root).
        output_cap: characters of stdout and stderr one cell may send to nbgrader.
        work_size: bytes of the tmpfs that is the kernel's working folder.
    """

    bwrap: str
    memory: int = parse_size(DEFAULT_MEMORY)
    max_file: int = DEFAULT_MAX_FILE
    extra_ro: tuple[Path, ...] = field(default=())
    processes: int = DEFAULT_PROCESSES
    output_cap: int = OUTPUT_CAP
    work_size: int = WORK_SIZE

    # long-function: the grading pipeline, restructured together with the red-team issue (issue 31, item 5)
    def kernel_argv(
        self, workdir: Path, runtime: Path, env: dict[str, str], package_copy: Optional[Path] = None
    ) -> list[str]:
        """The kernelspec ``argv`` of a confined IPython kernel that works in ``workdir`` (a tmpfs of
        ``work_size`` bytes at that path; the host folder is not visible inside) and finds its
        connection file and sockets in ``runtime`` (read-write). ``env`` is the grader's environment:
        the variables of ``_PASS_ENV`` are passed on to the kernel, the rest dropped; bwrap itself
        gets only ``PATH`` and ``MARKER``. With ``MARKER`` in ``env`` (:meth:`ProcessGroups.env`) and
        a usable cgroup the sandbox gets its own (removed by :meth:`ProcessGroups.done`). With
        ``package_copy`` (a redacted copy, :func:`~txcourse.course.grading.probes.redacted_package`) that
        folder is bound at the package's path instead of the package: the original is not visible inside."""
        python = Path(sys.prefix) / "bin" / "python"
        package = _package_dir()
        args = [
            self.bwrap,
            "--unshare-all",
            "--new-session",
            "--die-with-parent",
            "--clearenv",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
            *_system_links(),
        ]
        for name in _ETC:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        args += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
        # the private /tmp first: a venv or checkout that lives under /tmp is then bound on top of it, and
        # the folders bwrap makes there to hold those mount points are read-only (0555), like the root's
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMP_SIZE), "--tmpfs", "/dev/shm"]
        args += ["--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
        bound = [*_python_dirs(), package, *self.extra_ro]
        for folder in _skeleton_under_tmp([*bound, runtime, workdir]):
            args += ["--perms", "0555", "--dir", str(folder)]
        for d in bound:
            source = package_copy if (package_copy is not None and d == package) else d
            args += ["--ro-bind", str(source), str(d)]
        args += [
            "--bind",
            str(runtime),
            str(runtime),
            "--size",
            str(self.work_size),
            "--tmpfs",
            str(workdir),
            "--chdir",
            str(workdir),
            "--remount-ro",
            "/",
            "--remount-ro",
            "/dev",
        ]  # the skeleton bwrap made for the mount points, and /dev (a tmpfs of bwrap's): read-only too
        inside = {
            "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "PYTHONPATH": str(package.parent),
            "MPLCONFIGDIR": "/tmp/matplotlib",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TXCOURSE_SANDBOX": "1",
        }
        inside.update({k: env[k] for k in _PASS_ENV if k in env})
        for key, value in inside.items():
            args += ["--setenv", key, value]
        boot = _KERNEL_BOOT.format(cap=int(self.output_cap))
        args += ["--", str(python), "-c", boot, "-f", "{connection_file}"]
        rlimits = {"RLIMIT_AS": self.memory, "RLIMIT_FSIZE": self.max_file}
        version, _ = cgroup_parents()
        cgroups = []
        if version and env.get(MARKER):
            values = {"memory": str(self.memory), "pids": str(self.processes)}
            for folder in _task_cgroups(env[MARKER]):
                controller = folder.relative_to(_CGROUP_FS).parts[0]
                names = _CGROUP_LIMITS[version].get(controller, _CGROUP_LIMITS[version].get("unified"))
                cgroups.append((str(folder), {n: values[n.split(".")[0]] for n in names}))
        else:
            rlimits["RLIMIT_NPROC"] = self.processes
        launch = {
            "cgroups": cgroups,
            "rlimits": rlimits,
            "env": {"PATH": "/usr/bin:/bin", **({MARKER: env[MARKER]} if env.get(MARKER) else {})},
        }
        return [sys.executable, "-I", "-S", "-c", _LAUNCH, json.dumps(launch), *args]


def write_kernelspec(
    folder: Path,
    argv: Sequence[str],
    name: str = "python3",
    env: Optional[dict[str, str]] = None,
    display_name: str = "Python 3 (sandboxed)",
) -> Path:
    """Write ``folder/kernels/<name>/kernel.json`` (put ``folder`` first on ``JUPYTER_PATH`` and
    notebooks asking for kernel ``name`` get this one); ``env``: variables the kernel gets on top of
    its launcher's. Interrupts go as messages: a signal sent to the bwrap process would not reach the
    kernel in its own session."""
    spec = folder / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    data = {
        "argv": list(argv),
        "display_name": display_name,
        "language": "python",
        "interrupt_mode": "message",
        "metadata": {"debugger": False},
    }
    if env:
        data["env"] = dict(env)
    (spec / "kernel.json").write_text(json.dumps(data, indent=1))
    return spec
