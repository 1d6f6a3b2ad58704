"""Atomic file writes, shared by the checkpoint and history writers; framework-free.

A checkpoint or a history file is written to a temporary file in the same
folder and renamed into place, so a reader (or a crash) never sees half a
file. :func:`remove_stale_temporaries` deletes what a killed process left.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "remove_stale_temporaries"]


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Delete the temporary files :func:`atomic_write` left next to ``path`` when its process was killed.

    ``atomic_write`` removes its temporary file itself on any Python error;
    only SIGKILL (or a power cut) leaves one (``.model.npz.<random>.tmp``)
    behind. Call this before writing ``path`` again. Returns the files removed.
    """
    path = Path(path)
    stale = sorted(path.parent.glob(f".{glob.escape(path.name)}.*.tmp")) if path.parent.is_dir() else []
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


def atomic_write(path: str | os.PathLike, write: Callable[[Any], None]) -> None:
    """Write ``path`` through a temporary file in the same folder, then rename it into place.

    A reader (or a crash) never sees half a file: either the old one or the new one.
    ``write`` receives a binary file object.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual permissions
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
