"""nbgrader's Execute, made to survive a cell that ignores the interrupt.

nbgrader interrupts a cell that runs past the cell timeout (SIGINT) and goes on with the next cell:
an endless loop costs the tests that need it, nothing else. A cell can ignore SIGINT, though
(``signal.signal(signal.SIGINT, signal.SIG_IGN)`` then ``time.sleep(3600)``): the kernel stays busy,
nbclient gives up waiting for the cell's last output and raises, and the whole notebook became an
``error`` with 0 points, the tests before that cell included.

:class:`RestartingExecute` waits ``iopub_timeout`` seconds after the interrupt; when the kernel has
still not answered, it restarts the kernel (killing what runs in it and in its sandbox) and records a
``CellTimeoutError`` on that cell. The kernel's runtime folder (connection file and sockets) is the one
folder besides its scratch folder that a sandboxed kernel can write, and starting a kernel writes the
connection file there, unconfined: with ``sandboxed_runtime`` set (the grader's workspaces set it), the
folder is emptied after the old kernel is dead and before the new one starts, removing without following
whatever the student's code left there (a symlink named like the connection file would otherwise be
written through). The cells after it run in the fresh kernel, where what the earlier
cells defined is gone: the tests after the hung cell fail, the tests before it keep their points.
Standard nbgrader otherwise; ``labs/nbgrader_config.py`` puts it in place of nbgrader's Execute.
"""

from __future__ import annotations

import os
import shutil
import stat
from typing import Any

from nbclient.exceptions import CellTimeoutError
from nbclient.util import ensure_async
from nbgrader.preprocessors import Execute
from traitlets import Bool

__all__ = ["RESTARTED", "RestartingExecute", "empty_folder"]

RESTARTED = (
    "the cell ran past the cell timeout and did not stop when interrupted; the kernel was restarted, "
    "so the cells after it run without what the cells before it defined"
)


class RestartingExecute(Execute):
    """:class:`nbgrader.preprocessors.Execute` that restarts a kernel which ignores the interrupt."""

    sandboxed_runtime = Bool(
        False, help="The connection file's folder is the kernel's own (sandboxed): empty it before a restart."
    ).tag(config=True)

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        try:
            return await super()._async_poll_for_reply(
                msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive
            )
        except CellTimeoutError as error:
            if "IOPub" not in str(error) or not self.interrupt_on_timeout:
                raise  # not the interrupted cell that never went idle
        self.log.error("The kernel ignored the interrupt: restarting it")
        task_poll_kernel_alive.cancel()
        task_poll_output_msg.cancel()
        await ensure_async(self.km.shutdown_kernel(now=True, restart=True))  # the sandbox and all in it end
        if self.sandboxed_runtime:
            empty_folder(os.path.dirname(self.km.connection_file))
        await ensure_async(self.km.start_kernel(**self.km._launch_args))  # what restart_kernel() starts
        await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        return _error_reply(msg_id, self.error_on_timeout)


def empty_folder(folder: str) -> None:
    """Remove everything in ``folder`` (not the folder), following no symlink: a link is unlinked, a
    folder removed with what it holds (``shutil.rmtree`` follows no link either)."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _error_reply(msg_id: str, error: dict[str, Any]) -> dict[str, Any]:
    """An execute_reply of status error for the hung cell (nbgrader's Execute records it as an output)."""
    content = {**error, "status": "error", "evalue": RESTARTED}
    content["traceback"] = [*error.get("traceback", []), RESTARTED]
    return {"parent_header": {"msg_id": msg_id}, "header": {}, "metadata": {}, "content": content}
