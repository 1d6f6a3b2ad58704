"""nbgrader's Execute, made to survive a cell that ignores the interrupt.

nbgrader interrupts a cell that runs past the cell timeout (SIGINT) and goes on with the next cell:
an endless loop costs the tests that need it, nothing else. A cell can ignore SIGINT, though
(``signal.signal(signal.SIGINT, signal.SIG_IGN)`` then ``time.sleep(3600)``): the kernel stays busy,
nbclient gives up waiting for the cell's last output and raises, and the whole notebook became an
``error`` with 0 points, the tests before that cell included.

:class:`RestartingExecute` waits ``iopub_timeout`` seconds after the interrupt; when the kernel has
still not answered, it restarts the kernel (killing what runs in it and in its sandbox) and records a
``CellTimeoutError`` on that cell. The kernel's runtime folder (connection file and sockets) is read-only
inside the sandbox (the launcher makes the sockets), and starting a kernel writes the connection file there,
unconfined: with ``sandboxed_runtime`` set (the grader's workspaces set it), the folder is still emptied
after the old kernel is dead and before the new one starts, removing without following whatever is there
(should anything of the student's ever get there, a symlink named like the connection file would otherwise be
written through). The cells after it run in the fresh kernel, where what the earlier
cells defined is gone: the tests after the hung cell fail, the tests before it keep their points.
Standard nbgrader otherwise; ``labs/nbgrader_config.py`` puts it in place of nbgrader's Execute.

It also bounds what a kernel can make the grader hold, whatever the student's code does to the kernel-side
cap (:data:`~txcourse.course.grading.sandbox.OUTPUT_CAP`, which it can lift): the client's sockets refuse
any message frame over ``max_message`` bytes (``ZMQ_MAXMSGSIZE``: the connection drops, the frame is never
held), and past ``cell_output_cap`` characters of output in one cell or ``notebook_output_cap`` in the
notebook (streams, results, displays, widget messages) :meth:`RestartingExecute.process_message` keeps one
line saying so and drops the rest. An error is never dropped (it fails the test cell), only shortened to
``ERROR_CHARS`` per field; a cut result stays a result (that line as its text).
"""

from __future__ import annotations

import os
import shutil
import stat
from typing import Any

import zmq
import zmq.asyncio
from nbclient.exceptions import CellTimeoutError
from nbclient.util import ensure_async, run_hook, run_sync
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer

from txcourse.course.grading.sandbox import OUTPUT_CAP

__all__ = ["RESTARTED", "OUTPUT_CUT", "RestartingExecute", "empty_folder", "output_chars"]

OUTPUT_CUT = "[txcourse grade: output cut by the grader: a cell may send {cell} characters, a notebook {notebook}]"
ERROR_CHARS = 4000  # characters kept of an error's name, value and of each of its last ERROR_FRAMES frames
ERROR_FRAMES = 20
_OUTPUTS = ("stream", "display_data", "execute_result", "update_display_data", "error")

RESTARTED = (
    "the cell ran past the cell timeout and did not stop when interrupted; the kernel was restarted, "
    "so the cells after it run without what the cells before it defined"
)


class RestartingExecute(Execute):
    """:class:`nbgrader.preprocessors.Execute` that restarts a kernel which ignores the interrupt."""

    sandboxed_runtime = Bool(
        False, help="The connection file's folder is the kernel's own (sandboxed): empty it before a restart."
    ).tag(config=True)
    cell_output_cap = Integer(
        OUTPUT_CAP + (1 << 16), help="Characters of output one cell may add (the kernel's cap, and its note)"
    ).tag(config=True)
    notebook_output_cap = Integer(4 * OUTPUT_CAP, help="Characters of output the notebook may hold").tag(config=True)
    max_message = Integer(4 * OUTPUT_CAP, help="Bytes of one message frame the client accepts").tag(config=True)
    store_history = Bool(
        True, help="Whether the kernel keeps the cells in its input history (In, _ih, _i, Out): the probe run does not"
    ).tag(config=True)

    def execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        """nbclient's, with ``store_history`` off when the trait is (round D 2026-11-28: a graded function read
        the probe cell's source and its seed from ``In[-1]`` and wrote them into the numbers the feedback quotes)."""
        run = run_sync(self.async_execute_cell)
        return run(
            cell, cell_index, execution_count=execution_count, store_history=store_history and self.store_history
        )

    def reset_execution_trackers(self) -> None:
        super().reset_execution_trackers()
        self._sent = {"cell": None, "in_cell": 0, "in_notebook": 0, "cut": False}

    async def async_start_new_kernel_client(self):
        """nbclient's, with a zmq context whose sockets refuse frames over ``max_message`` bytes."""
        assert self.km is not None
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, int(self.max_message))
        try:
            self.kc = self.km.client(context=context)
            self.kc._created_context = True  # the client terminates it when it stops
            await ensure_async(self.kc.start_channels())
            await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        except Exception as error:
            self.log.error(f"Error occurred while starting new kernel client: {error}")
            await self._async_cleanup_kernel()
            raise
        self.kc.allow_stdin = False
        await run_hook(self.on_notebook_start, notebook=self.nb)
        return self.kc

    def process_message(self, msg, cell, cell_index):
        """nbclient's, after counting the characters of each output and widget message against the caps."""
        kind = msg["msg_type"]
        if kind in _OUTPUTS or kind.startswith("comm"):
            sent = self._sent
            if sent["cell"] != cell_index:
                sent.update(cell=cell_index, in_cell=0, cut=False)
            size = output_chars(msg["content"])
            sent["in_cell"] += size
            if sent["in_cell"] > self.cell_output_cap or sent["in_notebook"] + size > self.notebook_output_cap:
                msg = self._cut(msg)
                if msg is None:
                    return None
                size = output_chars(msg["content"])
            sent["in_notebook"] += size  # what the notebook holds
        return super().process_message(msg, cell, cell_index)

    def _cut(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """What is kept of an output past a cap: an error shortened, a result as the note, one note for
        the rest of the cell's outputs (None: dropped)."""
        note = OUTPUT_CUT.format(cell=self.cell_output_cap, notebook=self.notebook_output_cap)
        kind, content = msg["msg_type"], msg["content"]
        if kind == "error":
            frames = [str(f)[:ERROR_CHARS] for f in list(content.get("traceback") or [])[-ERROR_FRAMES:]]
            content = {
                "ename": str(content.get("ename", ""))[:ERROR_CHARS],
                "evalue": str(content.get("evalue", ""))[:ERROR_CHARS],
                "traceback": [*frames, note],
            }
        elif kind == "execute_result":
            content = {"execution_count": content.get("execution_count"), "data": {"text/plain": note}, "metadata": {}}
        elif kind in _OUTPUTS and not self._sent["cut"]:
            self._sent["cut"] = True
            kind, content = "stream", {"name": "stdout", "text": note + "\n"}
        else:
            return None
        return {**msg, "msg_type": kind, "header": {**msg["header"], "msg_type": kind}, "content": content}

    async def _async_handle_timeout(self, timeout, cell=None):
        self.raise_on_iopub_timeout = self._raise_on_iopub  # the cell timed out: nbgrader's handling
        return await super()._async_handle_timeout(timeout, cell)

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        # A cell that replied in time but whose last IOPub messages were lost (a frame over max_message drops
        # the connection, and what the kernel sends meanwhile) keeps its reply: only a cell that timed out
        # raises on the IOPub timeout (nbgrader's raise_on_iopub_timeout), which restarts its kernel below.
        self._raise_on_iopub, self.raise_on_iopub_timeout = self.raise_on_iopub_timeout, False
        try:
            return await super()._async_poll_for_reply(
                msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive
            )
        except CellTimeoutError as error:
            if "IOPub" not in str(error) or not self.interrupt_on_timeout:
                raise  # not the interrupted cell that never went idle
        finally:
            self.raise_on_iopub_timeout = self._raise_on_iopub
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


_ESCAPED = [chr(c) for c in range(32)] + ['"', "\\"]  # written as \u00XX (or \n, \", \\) in a notebook file


def output_chars(content: Any, depth: int = 0) -> int:
    """Bytes a message's content takes in a notebook file, about: every string in it (keys too) in UTF-8
    with JSON's escapes (a control character 6 bytes), 8 per other value."""
    if isinstance(content, str):
        size = len(content) if content.isascii() else len(content.encode("utf-8", "surrogatepass"))
        return size + 5 * sum(content.count(c) for c in _ESCAPED[:32]) + sum(content.count(c) for c in _ESCAPED[32:])
    if isinstance(content, dict) and depth < 8:
        return sum(len(str(k)) + output_chars(v, depth + 1) for k, v in content.items())
    if isinstance(content, (list, tuple)) and depth < 8:
        return sum(output_chars(v, depth + 1) for v in content)
    return 8 if not isinstance(content, (dict, list, tuple)) else len(str(content))


def _error_reply(msg_id: str, error: dict[str, Any]) -> dict[str, Any]:
    """An execute_reply of status error for the hung cell (nbgrader's Execute records it as an output)."""
    content = {**error, "status": "error", "evalue": RESTARTED}
    content["traceback"] = [*error.get("traceback", []), RESTARTED]
    return {"parent_header": {"msg_id": msg_id}, "header": {}, "metadata": {}, "content": content}
