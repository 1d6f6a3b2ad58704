"""Confining a student's notebook while it is graded: bubblewrap around the Jupyter kernel.

``txcourse grade`` (:func:`txcourse.course.grading.grade_submissions`) grades every submission in a
workspace of its own; nbgrader runs there unconfined (it reads and writes the workspace's
gradebook), and only the kernel, the process that runs the student's code, is started inside
`bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian package
``bubblewrap``) through a kernelspec written for that workspace (:func:`write_kernelspec`). The
sandbox (:meth:`Sandbox.kernel_argv`):

- sees a new, empty root with, read-only, only the system (``/usr`` and the ``/bin``, ``/lib``
  links, a few files of ``/etc``, the CPU list of ``/sys``), the Python installation and virtual
  environment, and the ``txcourse`` package folder; its own working folder (the autograded copy of
  the notebook) and the folder of its connection file are the only writable host folders; ``/tmp``
  is a small private tmpfs. The instructor's course (``labs/source``), the repository and its
  ``.git``, the submissions, the grades, the other workspaces, ``/home`` and ``/root`` do not exist
  inside;
- has no network (new network namespace; the kernel talks to nbgrader over Unix sockets,
  ``KernelManager.transport = "ipc"``), its own PID, IPC and UTS namespaces and a new session, and
  dies with its parent (``--die-with-parent``): every process the notebook forks ends when the
  kernel does;
- runs under ``RLIMIT_AS`` (address space, ``--memory``) and ``RLIMIT_FSIZE`` (largest file), set
  by a ``python -c`` wrapper just before ``bwrap`` is executed, and a clean environment.

:class:`ProcessGroups` keeps track of every process group started for a grading run and of a
marker in their environment, so an interrupted run can end them all (:meth:`ProcessGroups.kill_all`).
Framework-free, standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import txcourse

__all__ = [
    "DEFAULT_MEMORY",
    "DEFAULT_MAX_FILE",
    "MARKER",
    "SandboxUnavailable",
    "parse_size",
    "find_bwrap",
    "Sandbox",
    "write_kernelspec",
    "ProcessGroups",
    "marked_processes",
]

DEFAULT_MEMORY = "8G"  # address space per kernel: week 2 peaks at 1.9 GB (TF), 1.4 GB (torch); 20 GB fails
DEFAULT_MAX_FILE = 1 << 30  # RLIMIT_FSIZE: no single file over 1 GiB
TMP_SIZE = 256 << 20  # the private /tmp (tmpfs, counted in RAM)
MARKER = "TXCOURSE_GRADE_RUN"  # environment variable carried by every process of a grading run

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


def _package_dir() -> Path:
    """The folder of the ``txcourse`` package that is running (the kernel imports the same one)."""
    return Path(txcourse.__file__).resolve().parent


@dataclass(frozen=True)
class Sandbox:
    """How to start a kernel confined: the ``bwrap`` binary and the limits.

    Args:
        bwrap: path of the bwrap binary (:func:`find_bwrap`).
        memory: address-space limit of the kernel in bytes (``RLIMIT_AS``).
        max_file: size limit of any file it writes (``RLIMIT_FSIZE``).
    """

    bwrap: str
    memory: int = parse_size(DEFAULT_MEMORY)
    max_file: int = DEFAULT_MAX_FILE
    extra_ro: tuple[Path, ...] = field(default=())

    def kernel_argv(self, workdir: Path, runtime: Path, env: dict[str, str]) -> list[str]:
        """The kernelspec ``argv`` of a confined IPython kernel that works in ``workdir`` (read-write)
        and finds its connection file and sockets in ``runtime`` (read-write). ``env`` is the
        grader's environment: the variables of ``_PASS_ENV`` are passed on, the rest dropped."""
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
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
        bound = [*_python_dirs(), package, *self.extra_ro]
        for folder in _skeleton_under_tmp([*bound, runtime, workdir]):
            args += ["--perms", "0555", "--dir", str(folder)]
        for d in bound:
            args += ["--ro-bind", str(d), str(d)]
        args += [
            "--bind",
            str(runtime),
            str(runtime),
            "--bind",
            str(workdir),
            str(workdir),
            "--chdir",
            str(workdir),
            "--remount-ro",
            "/",
        ]  # the skeleton bwrap made for the mount points: read-only too
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
        args += ["--", str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        limits = (
            f"import os,resource as r,sys;r.setrlimit(r.RLIMIT_AS,({self.memory},{self.memory}));"
            f"r.setrlimit(r.RLIMIT_FSIZE,({self.max_file},{self.max_file}));os.execv(sys.argv[1],sys.argv[1:])"
        )
        return [sys.executable, "-I", "-S", "-c", limits, *args]


def write_kernelspec(folder: Path, argv: Sequence[str], name: str = "python3") -> Path:
    """Write ``folder/kernels/<name>/kernel.json`` (put ``folder`` first on ``JUPYTER_PATH`` and
    notebooks asking for kernel ``name`` get this one). Interrupts go as messages: a signal sent to
    the bwrap process would not reach the kernel in its own session."""
    spec = folder / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": list(argv),
                "display_name": "Python 3 (sandboxed)",
                "language": "python",
                "interrupt_mode": "message",
                "metadata": {"debugger": False},
            },
            indent=1,
        )
    )
    return spec


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
        return _kill_until_gone(f"{self.run}/")


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
