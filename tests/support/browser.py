"""What the browser checks of the book and of the slide decks share: a local web
server that logs every request and serves one harness page of the test's own,
headless Chromium that can reach 127.0.0.1 only, and a PNG size reader.

Used by tests/book/test_book_browser.py and tests/book/test_slides_browser.py.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import struct
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest


def logging_handler(harness_path: str, harness_html: str) -> type[http.server.SimpleHTTPRequestHandler]:
    """A request handler class that serves ``harness_html`` at ``harness_path`` and files otherwise.

    Every request is appended to the class's ``requests`` as ``(path, status)``.
    """

    class Handler(http.server.SimpleHTTPRequestHandler):
        requests: list[tuple[str, int]] = []

        def do_GET(self):
            if urlsplit(self.path).path != harness_path:
                return super().do_GET()
            body = harness_html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_request(self, code="-", size="-"):
            self.requests.append((self.path, int(code) if str(code).isdigit() else 0))

        def log_message(self, format, *args):  # keep pytest's output clean
            pass

    return Handler


@contextlib.contextmanager
def serve(directory: Path, handler: type[http.server.SimpleHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def find_chromium(make_target: str) -> str:
    """The Chromium binary ($CHROMIUM, else `chromium` on the PATH); a test failure naming the fix if none."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            f"Chromium not found: `{make_target}` installs it (apt-get install chromium), "
            "or set CHROMIUM=/path/to/chromium"
        )
    return path


def run_chromium(
    binary: str, url: str, *args: str, budget_ms: int = 10000, timeout: int = 120
) -> subprocess.CompletedProcess:
    """Headless Chromium on ``url`` with a fresh profile; any host but 127.0.0.1 fails to resolve.

    ``budget_ms`` of virtual time lets scripts (MathJax, reveal.js) finish
    before ``--dump-dom`` or ``--screenshot``; ``--enable-logging=stderr``
    puts the console (failed loads, uncaught errors) on stderr.
    """
    with tempfile.TemporaryDirectory(prefix="txcourse-chromium-") as profile:
        cmd = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}",
            *args,
            url,
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG file, read from its header."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG file"
    return struct.unpack(">II", data[16:24])
