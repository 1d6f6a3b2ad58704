"""Confining a student's notebook while it is graded: bubblewrap around the Jupyter kernel.

``txcourse grade`` (:func:`txcourse.course.grading.grade_submissions`) grades every submission in a
workspace of its own; nbgrader runs there unconfined (it reads and writes the workspace's
gradebook), and only the kernel, the process that runs the student's code, is started inside
`bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian package
``bubblewrap``) through a kernelspec written for that workspace (:func:`write_kernelspec`). The
sandbox (:meth:`Sandbox.kernel_argv`):

- sees a new, empty root with, read-only, only the system (``/usr`` and the ``/bin``, ``/lib``
  links, a few files of ``/etc``, the CPU list of ``/sys``), the Python installation and virtual
  environment, the ``txcourse`` package folder and the folder of its connection file (the runtime
  folder: the launcher makes the kernel's Unix sockets there and passes them in as open file
  descriptors, so no host folder is writable inside: a ``posix_fallocate`` there fails at 0 bytes).
  Its working folder (at the path of the autograded notebook's folder) is a
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
  ``processes`` tasks (threads count), and, where the ``cpu`` controller is there too, a quota of
  ``cpus`` cores (``txcourse grade`` gives each an equal share: cores / ``--jobs``); without it each
  sandbox is pinned to its share of the cores (an affinity, which the student's code can undo:
  :mod:`~txcourse.course.grading.cgroups`). Always ``RLIMIT_AS`` (``--memory`` per process: a 20 GB
  allocation is a clean ``MemoryError``) and ``RLIMIT_FSIZE`` (largest file). Without a usable
  cgroup the memory limit is per process only and the process count is ``RLIMIT_NPROC``, which
  Linux does not enforce for root (:func:`confinement` says which holds). The kernel's own stdout
  and stderr (its file descriptors 1 and 2, which ipykernel keeps a copy of) are a pipe to a drain
  outside the sandbox that passes ``KERNEL_LOG_CAP`` bytes per kernel to the log and discards the rest;
- has a clean environment, bwrap's own included: ``bwrap`` is executed with only ``PATH`` and the
  run's marker (inside, ``/proc/1/environ`` is bwrap's), the kernel with the variables of
  ``_PASS_ENV`` (``--clearenv``, ``--setenv``); no grader variable (a token) is visible inside;
- caps what a cell sends (:data:`_KERNEL_BOOT`, run in the kernel before ipykernel starts): past
  ``OUTPUT_CAP`` characters of output in one cell (stdout and stderr, Python's writes and the file
  descriptors' alike, results and displays) the rest is dropped with one line saying so, before it is
  sent to nbgrader; a result or display over the cap becomes that line. A student who rewrites
  ipykernel's classes can lift that cap; the grader's own caps then hold
  (:class:`~txcourse.course.grading.execute.RestartingExecute`: no message frame over ``max_message``
  bytes, at most ``cell_output_cap`` per cell and ``notebook_output_cap`` per notebook), and the files
  the workspace writes are size-checked before they are loaded
  (:func:`~txcourse.course.grading.nbgrader_run.oversized_outputs`).

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
    cgroup_limits,
    cgroup_parents,
    confinement,
    cpu_controller,
    cpu_set,
    run_limits,
)
from txcourse.course.grading.import_guard import guard_source
from txcourse.course.grading.processes import MARKER, ProcessGroups, marked_processes  # noqa: F401

__all__ = [
    "DEFAULT_MEMORY",
    "DEFAULT_MAX_FILE",
    "DEFAULT_PROCESSES",
    "OUTPUT_CAP",
    "KERNEL_LOG_CAP",
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
OUTPUT_CAP = 8 << 20  # characters of output (streams, results, displays) one cell may send to nbgrader
KERNEL_LOG_CAP = 1 << 20  # bytes of a kernel's own stdout + stderr (its file descriptors) the log receives

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
# 1. stdout and stderr become a pipe to a drain (a grandchild outside the sandbox) that passes at most
#    ``log_cap`` bytes to the log (the kernel's original stdout) and discards the rest;
# 2. the kernel's Unix sockets are made here, in the runtime folder (read-only inside the sandbox), and
#    passed to the kernel as open file descriptors (``TXCOURSE_SOCKET_FDS``; zmq's ZMQ_USE_FD);
# 3. join the sandbox's cgroups (made here, limits written), or pin it to its cores where there is no cpu
#    controller; set the rlimits; execute bwrap with a minimal environment of its own.
_LAUNCH = """\
import json, os, resource, socket, stat, sys
c, argv = json.loads(sys.argv[1]), sys.argv[2:]
r, w = os.pipe()
if os.fork() == 0:
    if os.fork() == 0:
        os.close(w)
        left = c["log_cap"]
        while True:
            data = os.read(r, 1 << 16)
            if not data:
                os._exit(0)
            try:
                if left > 0:
                    os.write(1, data[:left])
                    left -= len(data)
                    if left <= 0:
                        os.write(1, b"\\n[txcourse grade: kernel log cut at %d bytes]\\n" % c["log_cap"])
            except OSError:
                left = 0
    os._exit(0)
os.wait()
os.close(r)
os.dup2(w, 1)
os.dup2(w, 2)
os.close(w)
fds = {}
if "-f" in argv:
    info = json.load(open(argv[argv.index("-f") + 1]))
    if info.get("transport") == "ipc":
        for port in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"):
            path = "%s-%d" % (info["ip"], info[port])
            if os.path.lexists(path) and stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(64)
            s.set_inheritable(True)
            fds[path] = s.detach()
end = argv.index("--")
argv[end:end] = ["--setenv", "TXCOURSE_SOCKET_FDS", json.dumps(fds)]
for folder, limits, join in c["cgroups"]:
    os.makedirs(folder, exist_ok=True)
    for name, value in limits.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(value)
    if join:
        with open(os.path.join(folder, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
if c["affinity"]:
    os.sched_setaffinity(0, c["affinity"])
for name, value in c["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
os.execve(argv[0], argv, c["env"])
"""

# Run by the sandboxed Python before ipykernel starts (``python -c``, the kernel's argv after it):
# - each cell may send at most CAP characters of output to nbgrader, its streams (Python's writes and the file
#   descriptors' alike), results and displays together; the rest is dropped with one line saying so (an
#   oversized result or display becomes that line), and the watch threads echo at most CAP bytes to the
#   kernel's own stdout (the drain of the launcher);
# - code the notebook writes to disk is not imported (import_guard.guard_source(), in place of "# GUARD");
# - zmq binds the kernel's Unix sockets on the file descriptors the launcher made (ZMQ_USE_FD): the runtime
#   folder stays read-only.
_KERNEL_BOOT = """\
import json, os, sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
# GUARD
def _sockets(fds=json.loads(os.environ.pop("TXCOURSE_SOCKET_FDS", "{}"))):
    import zmq
    from zmq.sugar.socket import Socket
    bind = Socket.bind
    def bind_fd(self, addr):
        path = addr[len("ipc://"):] if addr.startswith("ipc://") else None
        if path in fds:
            self.setsockopt(zmq.USE_FD, fds.pop(path))
        return bind(self, addr)
    Socket.bind = bind_fd
_sockets()
from ipykernel import iostream, displayhook, zmqshell
def _cap(cap=CAP, state={"cell": None}):
    NOTE = "[txcourse grade: output cut: a cell may send %d characters]" % cap
    def room(parent, size):
        cell = (parent or {}).get("msg_id")
        if cell != state["cell"]:
            state.update(cell=cell, sent=0, cut=False)
        left = cap - state["sent"]
        state["sent"] += size
        return left
    def size(data):
        return sum(len(v) if isinstance(v, str) else len(json.dumps(v, default=str)) for v in (data or {}).values())
    def cut():
        first = not state["cut"]
        state["cut"] = True
        return first
    write = iostream.OutStream.write
    def capped_write(self, string):
        if not isinstance(string, str):
            return write(self, string)
        left = room(self.parent_header, len(string))
        if len(string) <= left:
            return write(self, string)
        if cut():
            write(self, string[: max(left, 0)] + "\\n" + NOTE + "\\n")
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
    format_data = displayhook.ZMQShellDisplayHook.write_format_data
    def capped_format_data(self, format_dict, md_dict=None):
        if size(format_dict) > room(self.parent_header, size(format_dict)):
            format_dict, md_dict = {"text/plain": NOTE}, {}
        return format_data(self, format_dict, md_dict)
    publish = zmqshell.ZMQDisplayPublisher.publish
    def capped_publish(self, data, metadata=None, **kwargs):
        if size(data) > room(self.parent_header, size(data)):
            if not cut():
                return None
            data, metadata = {"text/plain": NOTE}, {}
        return publish(self, data, metadata, **kwargs)
    iostream.OutStream.write, iostream.OutStream._watch_pipe_fd = capped_write, capped_watch
    displayhook.ZMQShellDisplayHook.write_format_data = capped_format_data
    zmqshell.ZMQDisplayPublisher.publish = capped_publish
_cap()
del _cap, _sockets
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
        output_cap: characters of output (streams, results, displays) one cell may send to nbgrader.
        work_size: bytes of the tmpfs that is the kernel's working folder.
        cpus: cores of CPU time the whole sandbox may use (its cgroup's CPU quota; without a cpu
            controller, the number of cores it is pinned to); None: no quota, an equal weight only.
        log_cap: bytes of the kernel's own stdout and stderr that reach the log, per kernel start.
    """

    bwrap: str
    memory: int = parse_size(DEFAULT_MEMORY)
    max_file: int = DEFAULT_MAX_FILE
    extra_ro: tuple[Path, ...] = field(default=())
    processes: int = DEFAULT_PROCESSES
    output_cap: int = OUTPUT_CAP
    work_size: int = WORK_SIZE
    cpus: Optional[float] = None
    log_cap: int = KERNEL_LOG_CAP

    def kernel_argv(
        self, workdir: Path, runtime: Path, env: dict[str, str], package_copy: Optional[Path] = None
    ) -> list[str]:
        """The kernelspec ``argv`` of a confined IPython kernel that works in ``workdir`` (a tmpfs of
        ``work_size`` bytes at that path; the host folder is not visible inside) and finds its
        connection file in ``runtime`` (read-only inside; the launcher makes the sockets there).
        ``env`` is the grader's environment: the variables of ``_PASS_ENV`` are passed on to the kernel,
        the rest dropped; bwrap itself gets only ``PATH`` and ``MARKER``. With ``MARKER`` in ``env``
        (:meth:`ProcessGroups.env`) and a usable cgroup the sandbox gets its own (removed by
        :meth:`ProcessGroups.done`). With ``package_copy`` (the probe run's copy,
        :func:`~txcourse.course.grading.allowlist.package_for_lab`) that folder is bound at the package's
        path instead of the package: the original is not visible inside."""
        python = Path(sys.prefix) / "bin" / "python"
        args = [*self._system_args(), *self._folder_args(workdir, runtime, package_copy), *_env_args(env, python)]
        boot = _KERNEL_BOOT.replace("cap=CAP", f"cap={int(self.output_cap)}").replace("# GUARD\n", guard_source())
        args += ["--", str(python), "-c", boot, "-f", "{connection_file}"]
        return [sys.executable, "-I", "-S", "-c", _LAUNCH, json.dumps(self._launch_settings(env)), *args]

    def _system_args(self) -> list[str]:
        """bwrap, the namespaces, and the read-only system: ``/usr``, a few files of /etc, the CPU list;
        a new /proc (its ``/proc/sys`` read-only) and /dev, private tmpfs ``/dev/shm`` and ``/tmp``."""
        args = [self.bwrap, "--unshare-all", "--new-session", "--die-with-parent", "--clearenv", "--cap-drop", "ALL"]
        args += ["--ro-bind", "/usr", "/usr", *_system_links()]
        for name in _ETC:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        args += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
        # the private /tmp first: a venv or checkout that lives under /tmp is then bound on top of it, and
        # the folders bwrap makes there to hold those mount points are read-only (0555), like the root's
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMP_SIZE), "--tmpfs", "/dev/shm"]
        # /proc/sys read-only: a grader run as root maps the kernel's uid 0 to the host's, and the host's root may
        # write the machine's sysctls (kernel.core_pattern, vm.drop_caches) with every capability dropped
        args += ["--ro-bind", "/proc/sys", "/proc/sys"]
        return args + ["--size", str(TMP_SIZE), "--tmpfs", "/tmp"]

    def _folder_args(self, workdir: Path, runtime: Path, package_copy: Optional[Path]) -> list[str]:
        """Python, the package (or ``package_copy`` in its place) and ``extra_ro`` read-only, the runtime
        folder read-only, the working folder a tmpfs of ``work_size`` bytes; the rest of / read-only."""
        package = _package_dir()
        bound = [*_python_dirs(), package, *self.extra_ro]
        args = []
        for folder in _skeleton_under_tmp([*bound, runtime, workdir]):
            args += ["--perms", "0555", "--dir", str(folder)]
        for d in bound:
            source = package_copy if (package_copy is not None and d == package) else d
            args += ["--ro-bind", str(source), str(d)]
        args += ["--ro-bind", str(runtime), str(runtime), "--size", str(self.work_size), "--tmpfs", str(workdir)]
        # the skeleton bwrap made for the mount points, and /dev (a tmpfs of bwrap's): read-only too
        return args + ["--chdir", str(workdir), "--remount-ro", "/", "--remount-ro", "/dev"]

    def _launch_settings(self, env: dict[str, str]) -> dict:
        """What the launcher (:data:`_LAUNCH`) sets up before bwrap: the cgroups to make, write and join
        (the run's folder, then the sandbox's), the cores to pin to without a cpu controller, the rlimits,
        bwrap's environment and the log cap."""
        rlimits = {"RLIMIT_AS": self.memory, "RLIMIT_FSIZE": self.max_file}
        version, _ = cgroup_parents()
        marker = env.get(MARKER, "")
        cgroups: list = []
        if version and marker:
            for folder in _task_cgroups(marker):
                controller = "unified" if version == 2 else folder.relative_to(_CGROUP_FS).parts[0]
                cgroups.append((str(folder.parent), run_limits(version, controller), False))
                limits = cgroup_limits(version, controller, self.memory, self.processes, self.cpus)
                cgroups.append((str(folder), limits, True))
        else:
            rlimits["RLIMIT_NPROC"] = self.processes
        task = marker.strip("/").split("/")[-1] if marker else ""
        return {
            "cgroups": cgroups,
            "affinity": [] if cpu_controller() else cpu_set(task, self.cpus),
            "rlimits": rlimits,
            "env": {"PATH": "/usr/bin:/bin", **({MARKER: marker} if marker else {})},
            "log_cap": int(self.log_cap),
        }


def _env_args(env: dict[str, str], python: Path) -> list[str]:
    """``--setenv`` of the kernel's variables: its own, and those of ``_PASS_ENV`` found in ``env``."""
    inside = {
        "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "PYTHONPATH": str(_package_dir().parent),
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TXCOURSE_SANDBOX": "1",
    }
    inside.update({k: env[k] for k in _PASS_ENV if k in env})
    args = []
    for key, value in inside.items():
        args += ["--setenv", key, value]
    return args


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
