"""The hostile toy notebooks of the grading tests import what a submission may not (socket, signal, ctypes, ...).

Since round E (2026-11-28) the kernel's import guard refuses those imports, so such a cell would stop at its first
line and the tests would no longer show that the *sandbox* confines what the code does. The tests widen the
kernel's list for their own gradings (``TXCOURSE_GRADING_EXTRA_IMPORTS``, read by the grader's process): the
sandbox is tested as the second line of defence, with the first one (the allow-list) opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from txcourse.course.grading.import_guard import EXTRA_IMPORTS_ENV

HOSTILE_IMPORTS = (
    "signal,socket,threading,resource,ctypes,shutil,zlib,tempfile,pathlib,mmap,gc,json,struct,fcntl,errno,select,"
    "multiprocessing,glob,IPython,ipykernel,pickle,atexit,faulthandler,pty,termios"
)


@contextmanager
def hostile_imports_allowed() -> Iterator[None]:
    """Within the block, the graded kernels may import :data:`HOSTILE_IMPORTS` (the source check is unchanged)."""
    old = os.environ.get(EXTRA_IMPORTS_ENV)
    os.environ[EXTRA_IMPORTS_ENV] = HOSTILE_IMPORTS
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(EXTRA_IMPORTS_ENV, None)
        else:
            os.environ[EXTRA_IMPORTS_ENV] = old
