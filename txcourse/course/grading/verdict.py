"""Running the probes (:mod:`txcourse.course.grading.probes`) and turning them into the verdict.

- :func:`prepare_probes` (once per grading run, in the grader): draws ``PROBE_SEED``, writes the
  lab's allow-listed copy of ``txcourse`` (:func:`~txcourse.course.grading.allowlist.package_for_lab`)
  and runs every notebook's probes after the course's own solution cells, with that copy first on the
  kernel's ``PYTHONPATH``: the reference outputs.
- :func:`run_student_probes` (in a workspace, :func:`~txcourse.course.grading.workspace.grade_workspace`,
  after nbgrader): executes the probe notebook in the sandboxed kernel ``txprobe``, whose ``txcourse``
  is the allow-listed copy; the executed notebook goes back to the grader as a file.
- :func:`apply_verdict` (in the grader): reads the student's probe outputs, compares them with the
  reference, and takes a test cell's points away when its probe does not match.
"""

from __future__ import annotations

import compileall
import os
import secrets
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from txcourse.course.grading.allowlist import package_for_lab
from txcourse.course.grading.probes import LabProbes, compare, probe_notebook, read_probe_outputs
from txcourse.course.grading.sandbox import write_kernelspec

__all__ = [
    "PROBE_KERNEL",
    "Probing",
    "prepare_probes",
    "execute_notebook",
    "write_unconfined_kernelspec",
    "unconfined_kernel",
    "run_student_probes",
    "apply_verdict",
]

PROBE_KERNEL = "txprobe"  # the sandboxed kernelspec of the probe run (grade_one writes it)
PROBE_IN, PROBE_OUT = "probe-in.ipynb", "probe-out.ipynb"  # in the workspace, never seen by the kernel
MAX_PROBE_OUT = 64 << 20  # bytes of the executed probe notebook the grader reads


@dataclass
class Probing:
    """What a grading run checks outside the students' processes: the lab's probes, the seed of this
    run, the allow-listed package, and the reference outputs of each notebook (grade id -> {key: (tol, array)})."""

    probes: LabProbes
    seed: int
    package_copy: Path
    reference: dict[str, dict[str, Any]] = field(default_factory=dict)


def execute_notebook(nb: Any, km: Any, timeout: int, cwd: Path, sandboxed_runtime: bool = False) -> Any:
    """Execute ``nb`` in place in the kernel of ``km`` (a jupyter_client AsyncKernelManager) with
    :class:`~txcourse.course.grading.execute.RestartingExecute`: cells that raise or time out are
    recorded and the run goes on; a kernel that ignores the interrupt is restarted."""
    from txcourse.course.grading.execute import RestartingExecute

    client = RestartingExecute(
        timeout=timeout,
        startup_timeout=120,
        interrupt_on_timeout=True,
        allow_errors=True,
        sandboxed_runtime=sandboxed_runtime,
        store_history=False,  # no In[-1], _ih, _i: the probe cells' source and seed stay out of the kernel's history
        extra_arguments=["--HistoryManager.hist_file=:memory:"],
    )
    try:
        client.preprocess(nb, {"metadata": {"path": str(cwd)}}, km=km)
    finally:  # nbclient shuts down only the kernels of managers it made itself
        from jupyter_client.utils import run_sync

        if km.has_kernel:
            run_sync(km.shutdown_kernel)(now=True)
    return nb


def write_unconfined_kernelspec(folder: Path, name: str, package_copy: Path) -> Path:
    """The kernelspec ``folder/kernels/<name>`` of an unconfined kernel (this Python) whose ``txcourse`` is
    ``package_copy`` (first on ``PYTHONPATH``). For the course's own notebooks (the reference run) and
    ``--no-sandbox``."""
    return write_kernelspec(
        folder,
        [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        name,
        env={
            "PYTHONPATH": str(package_copy.parent),
            "MPLBACKEND": "Agg",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TF_CPP_MIN_LOG_LEVEL": "2",  # TensorFlow's start-up lines stay off the grader's console
        },
        display_name="Python 3 (txcourse allow-listed, unconfined)",
    )


def unconfined_kernel(folder: Path, name: str, package_copy: Path, runtime: Path) -> Any:
    """An AsyncKernelManager of the kernel of :func:`write_unconfined_kernelspec`, talking over Unix
    sockets in ``runtime``."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    write_unconfined_kernelspec(folder, name, package_copy)
    runtime.mkdir(parents=True, exist_ok=True)
    return AsyncKernelManager(
        kernel_name=name,
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(folder / "kernels")]),
        transport="ipc",  # Unix sockets in runtime, not TCP ports
        ip=str(runtime / "k"),
        connection_file=str(runtime / "kernel.json"),
    )


def prepare_probes(
    probes: LabProbes,
    labs_dir: Path,
    notebooks: list[str],
    tmp: Path,
    timeout: int,
    seed: Optional[int] = None,
    pool: Any = None,
) -> Probing:
    """Draw the run's ``PROBE_SEED`` (or take ``seed``), write the lab's allow-listed ``txcourse`` under ``tmp``
    and compute the reference outputs of each notebook from the course's source notebook (solutions).
    Raises RuntimeError when a reference probe fails (the course's probes are wrong, not the student)."""
    import nbformat

    import txcourse

    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    copy = package_for_lab(Path(txcourse.__file__).resolve().parent, labs_dir, probes.lab, tmp / "redacted")
    compileall.compile_dir(str(copy), quiet=1, workers=1)  # the allow-listed code only: nothing else to find
    probing = Probing(probes, seed, copy)

    def reference(name: str) -> tuple[str, dict[str, Any]]:
        master = nbformat.read(labs_dir / "source" / probes.lab / f"{name}.ipynb", as_version=4)
        forbid = (probes.lab, name.rsplit("_", 1)[-1])  # the same prelude as the students' runs
        nb, positions = probe_notebook(master, master, probes.for_notebook(name), seed, probes.skipped(name), forbid)
        work = Path(tempfile.mkdtemp(prefix="ref-", dir=tmp))
        km = unconfined_kernel(work / "jupyter", "txref", copy, work / "rt")
        execute_notebook(nb, km, timeout, work)
        outputs = read_probe_outputs(nb, positions)
        failed = {g: why for g, why in outputs.items() if isinstance(why, str)}
        if failed:
            errors = [
                o.get("evalue", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
            ]
            raise RuntimeError(f"the reference probes of {name} failed: {failed}; errors: {errors[:3]}")
        return name, outputs

    with_probes = [n for n in notebooks if probes.for_notebook(n)]
    results = pool.map(reference, with_probes) if pool is not None else map(reference, with_probes)
    probing.reference = dict(results)
    return probing


def run_student_probes(workspace: Path, cell_timeout: int) -> None:
    """In a workspace (the grader's ``workspace`` command): execute ``probe-in.ipynb`` in the sandboxed
    kernel :data:`PROBE_KERNEL` over Unix sockets in ``$TXPROBE_RUNTIME`` and write ``probe-out.ipynb``.
    A run that breaks off (the kernel died) writes what it has: the probes that did not run fail."""
    import nbformat
    from jupyter_client.manager import AsyncKernelManager

    runtime = Path(os.environ["TXPROBE_RUNTIME"])
    nb = nbformat.read(workspace / PROBE_IN, as_version=4)
    km = AsyncKernelManager(
        kernel_name=PROBE_KERNEL,
        transport="ipc",
        ip=str(runtime / "k"),
        connection_file=str(runtime / "kernel.json"),
    )
    try:
        execute_notebook(nb, km, cell_timeout, workspace, sandboxed_runtime=True)
    except Exception as error:  # noqa: BLE001 - a dead kernel: keep the cells that ran
        print(f"[txcourse.course.grading] the probe run stopped: {type(error).__name__}: {error}", flush=True)
    nbformat.write(nb, workspace / PROBE_OUT)


def apply_verdict(
    out: dict[str, Any], probing: Probing, name: str, executed: Optional[bytes], positions: dict[str, int]
) -> None:
    """Compare the student's probe outputs (``executed``: the bytes of the workspace's ``probe-out.ipynb``,
    None when it could not be read) with the reference and update ``out`` (the fields
    :func:`~txcourse.course.grading.workspace.grade_one` returns): a test cell whose probe does not match
    scores 0, and ``probe_failures`` says why for each test nbgrader had passed."""
    import nbformat

    reference = probing.reference.get(name)
    if reference is None or "cells" not in out:
        return
    try:
        if executed is None:
            raise OSError("no probe-out.ipynb")
        nb = nbformat.reads(executed.decode("utf-8"), as_version=4)
        student = read_probe_outputs(nb, positions)
    except (OSError, ValueError, UnicodeDecodeError) as error:
        student = {g: f"the probe run left no readable result ({type(error).__name__})" for g in reference}
    verdicts = compare(student, reference)
    cells = dict(out["cells"])
    failures = {}
    for grade_id, why in verdicts.items():
        if why and grade_id in cells and cells[grade_id][0] > 0:  # nbgrader passed it, the check did not
            failures[grade_id] = why
            cells[grade_id] = (0.0, cells[grade_id][1])
    out["cells"] = cells
    out["score"] = sum(score for score, _ in cells.values())
    out["failed_tests"] = ";".join(g for g, (score, top) in cells.items() if score < top)
    out["probe_failures"] = failures
