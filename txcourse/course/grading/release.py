"""Making the student versions of the labs (``make labs``): nbgrader's ``generate_assignment``.

``labs/source/<lab>/`` (solutions and hidden tests) becomes ``labs/release/<lab>/`` (stubs, no
hidden tests), each notebook then normalised to the committed form
(:func:`~txcourse.course.grading.course.normalise_notebook`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from txcourse.course.grading.course import LABS, normalise_notebook
from txcourse.course.grading.nbgrader_run import run_nbgrader, tool_env

__all__ = ["release"]


def release(labs_dir: str | os.PathLike = "labs", labs: Sequence[str] = LABS, verbose: bool = True) -> list[Path]:
    """Make the student versions: ``nbgrader generate_assignment <lab>`` inside ``labs_dir`` for every
    lab (its gradebook goes to a temporary folder), then normalise ``labs_dir/release/<lab>/*.ipynb``.

    Returns the notebooks written.
    """
    labs_dir = Path(labs_dir).resolve()
    written = []
    with tempfile.TemporaryDirectory(prefix="txcourse-release-") as tmp:
        env = tool_env()
        db = f"sqlite:///{Path(tmp) / 'gradebook.db'}"
        for lab in labs:
            log = Path(tmp) / f"generate_{lab}.log"
            run = run_nbgrader(["generate_assignment", lab, "--force", f"--db={db}"], labs_dir, env, log)
            out_dir = labs_dir / "release" / lab
            if run.returncode != 0 or not out_dir.is_dir():
                raise RuntimeError(f"nbgrader generate_assignment {lab} failed:\n{run.tail()}")
            for path in sorted(out_dir.glob("*.ipynb")):
                path.write_text(normalise_notebook(path.read_text(encoding="utf-8")), encoding="utf-8")
                written.append(path)
                if verbose:
                    print(f"wrote {path.relative_to(labs_dir.parent) if labs_dir.parent in path.parents else path}")
    return written
