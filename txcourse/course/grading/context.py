"""The one object a grading run carries through its phases (:mod:`~txcourse.course.grading.grade`).

:class:`GradingOptions` is what the caller asked for, checked once (the messages name the command-line
option); :class:`GradingRun` adds what the run builds on the way: the students and their notebooks
(intake), the master gradebooks, maximum scores and probes (masters), the sandbox, process groups,
thread pool and temporary folder (dispatch), and the rows (collect, CSV). Each phase takes the run
and fills in its part; a :class:`GradeTask` is one notebook of it.

Standard library only at import time.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from txcourse.course.grading.course import LABS

if TYPE_CHECKING:  # annotations only: the run's parts are built by the phases that need them
    from txcourse.course.grading.sandbox import ProcessGroups, Sandbox
    from txcourse.course.grading.verdict import Probing

__all__ = ["MAX_TMPDIR", "GradingOptions", "GradeTask", "GradingRun"]

MAX_TMPDIR = 60  # characters: <tmp>/txgrade-XXXXXXXX/rt/<n>/k-5 must stay under the 108 bytes of a Unix socket path


@dataclass(frozen=True)
class GradingOptions:
    """What one ``txcourse grade`` run was asked for (the arguments of
    :func:`~txcourse.course.grading.grade.grade_submissions`), paths resolved and limits checked."""

    lab: str
    submissions: Path
    out_csv: Path
    labs_dir: Path
    cell_timeout: int
    notebook_timeout: int
    feedback: bool
    jobs: int
    sandbox: bool
    memory: str | int  # address space per sandboxed kernel ("8G"); bytes once checked
    bwrap_path: Optional[str] = None
    probe_seed: Optional[int] = None
    course_dir: Optional[Path] = None
    verbose: bool = True

    def __post_init__(self) -> None:
        if self.lab not in LABS and not (self.labs_dir / "source" / self.lab).is_dir():
            raise ValueError(f"unknown lab {self.lab!r}; labs are {list(LABS)}")
        if not self.submissions.is_dir():
            raise ValueError(f"submissions folder {str(self.submissions)!r} does not exist")
        if not (self.labs_dir / "source" / self.lab).is_dir():
            raise ValueError(
                f"no lab sources {str(self.labs_dir / 'source' / self.lab)!r}: run from the repository root or "
                f"pass the course folder (labs_dir, --labs-dir)"
            )
        if self.jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {self.jobs}")
        if self.notebook_timeout < 1:
            raise ValueError(f"--notebook-timeout must be at least 1 second, got {self.notebook_timeout}")
        from txcourse.course.grading.sandbox import parse_size

        object.__setattr__(self, "memory", parse_size(self.memory))

    @property
    def source(self) -> Path:
        """The lab's instructor notebooks: ``labs_dir/source/<lab>``."""
        return self.labs_dir / "source" / self.lab

    @property
    def logs(self) -> Path:
        """nbgrader's log of each graded notebook: ``<out_csv stem>-logs`` beside the CSV."""
        return self.out_csv.parent / f"{self.out_csv.stem}-logs"

    @property
    def feedback_root(self) -> Path:
        """The feedback files: ``feedback/<student>/<notebook>.html`` beside the CSV."""
        return self.out_csv.parent / "feedback"


@dataclass
class GradeTask:
    """One notebook of one student, graded in ``workspace``: ``data`` is the notebook as read from
    ``path`` (:func:`~txcourse.course.grading.submissions.read_submission`, its cells in the master's
    order), the only thing of the submission that reaches the workspace."""

    index: int
    student: str
    name: str
    path: Path
    workspace: Path
    log: Path
    note: str = ""
    data: bytes = b""


@dataclass
class GradingRun:
    """One grading run: its options and everything its phases make (see the module docstring)."""

    options: GradingOptions
    notebooks: list[str]  # the lab's notebook ids, <lab>_torch and <lab>_tf
    box: Optional[Sandbox] = None  # None: --no-sandbox
    students: list[Path] = field(default_factory=list)  # every student folder, refused ones included
    refused: dict[str, str] = field(default_factory=dict)  # student folder name -> why (all its notebooks)
    tmp: Path = Path()  # the run's temporary folder (masters, workspaces, runtime folders)
    root: Path = Path()  # the course folder of the masters and workspaces (tmp, or course_dir)
    groups: Optional[ProcessGroups] = None
    env: dict[str, str] = field(default_factory=dict)  # the environment of nbgrader and the tools
    pool: Optional[ThreadPoolExecutor] = None
    master_notebooks: dict[str, Any] = field(default_factory=dict)  # notebook id -> the source notebook (nbformat)
    masters: dict[str, Path] = field(default_factory=dict)  # notebook id -> its master course (gradebook)
    top: dict[str, Any] = field(default_factory=dict)  # notebook id -> max score
    probing: Optional[Probing] = None
    statuses: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (student, id) -> CSV fields
    tasks: list[GradeTask] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def lab(self) -> str:
        return self.options.lab

    @property
    def runtime_root(self) -> Optional[Path]:
        """The folder of the sandboxed kernels' runtime and scratch folders (None unconfined)."""
        return self.tmp / "rt" if self.box is not None else None

    def say(self, message: str) -> None:
        """Print a progress line (with ``verbose``)."""
        if self.options.verbose:
            print(message, flush=True)

    @staticmethod
    def warn(message: str) -> None:
        """One ``txcourse grade: warning:`` line on stderr."""
        print(f"txcourse grade: warning: {message}", file=sys.stderr)

    @staticmethod
    def default_jobs() -> int:
        return os.cpu_count() or 1
