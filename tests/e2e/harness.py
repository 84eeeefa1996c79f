"""Starting the app and Debian's Chromium for real-browser runs.

Shared by the end-to-end tests (``tests/e2e/conftest.py``) and the browser benchmarks
(``bench/bench_app.py``, ``bench/bench_semantic_app.py``), so that both drive the same
server with the same browser flags. Playwright cannot download browsers here: Chromium is
``/usr/bin/chromium`` (or ``CHROMIUM_PATH``).

Screenshots go to :func:`screenshot_dir`, outside the checkout unless
``CHUNK_EXPLORER_SCREENSHOTS`` says otherwise (``docs/refresh_screenshots.py`` points it
at ``docs/screenshots/``), so that running the tests never changes tracked files.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_SECONDS = 90
#: Environment variable naming the folder the browser tests write their screenshots to.
SCREENSHOTS_ENV = "CHUNK_EXPLORER_SCREENSHOTS"


def screenshot_dir() -> Path:
    """The folder for screenshots (created): ``$CHUNK_EXPLORER_SCREENSHOTS``, else a
    folder in the system's temporary directory, overwritten by every run."""
    configured = os.environ.get(SCREENSHOTS_ENV, "").strip()
    folder = (
        Path(configured)
        if configured
        else Path(tempfile.gettempdir()) / "chunk-explorer-screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def free_port() -> int:
    """A TCP port on localhost that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(
    log_path: Path | None = None,
    env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
    script: Path | None = None,
) -> tuple[subprocess.Popen, str]:
    """Start ``python app.py`` (Streamlit, as README says) on a free port, or
    ``streamlit run script`` when given; return the process and its URL.

    Output goes to ``log_path`` (discarded when None). Raises ``RuntimeError`` if the
    server exits or does not answer its health check within ``STARTUP_SECONDS``.
    """
    port = free_port()
    command = [
        sys.executable,
        *(["-m", "streamlit", "run", str(script)] if script else ["app.py"]),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        *extra_args,
    ]
    log = log_path.open("wb") if log_path else subprocess.DEVNULL
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = log_path.read_text(errors="replace") if log_path else "(output discarded)"
            raise RuntimeError(f"streamlit exited early:\n{output}")
        if _healthy(url):
            return process, url
        time.sleep(0.3)
    stop_server(process)
    raise RuntimeError(f"streamlit did not answer within {STARTUP_SECONDS} s")


def stop_server(process: subprocess.Popen) -> None:
    """Stop the server started by :func:`start_server` (this process only)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time used so far by process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, quiet: float = 2.0, timeout: float = 180.0) -> float:
    """Wait until process ``pid`` has used under 5 % of a core for ``quiet`` seconds.

    A server is only "warm" once its background work (UMAP's numba warm-up) is done.
    Returns the seconds waited; raises ``TimeoutError`` after ``timeout``.
    """
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        before = cpu_seconds(pid)
        time.sleep(quiet)
        if cpu_seconds(pid) - before < 0.05 * quiet:
            return time.monotonic() - start
    raise TimeoutError(f"process {pid} still busy after {timeout:.0f} s")


class Server(NamedTuple):
    """A running app: its URL, and its process id when this process started it."""

    url: str
    pid: int | None


@contextmanager
def app_server(url: str | None = None, extra_args: Sequence[str] = ()) -> Iterator[Server]:
    """Use the server at ``url``, or start one for the duration of the block."""
    if url:
        yield Server(url, None)
        return
    process, started = start_server(extra_args=extra_args)
    try:
        yield Server(started, process.pid)
    finally:
        stop_server(process)


#: True once the app's script run has finished (the attribute Streamlit sets for tests).
IDLE_JS = (
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]'); "
    "return !!app && app.dataset.testScriptState === 'notRunning'; }"
)


def open_explore_tab(page, label: str) -> None:
    """Click Explore's tab ``label`` and wait until its section is drawn (the run it
    asks for has ended)."""
    page.get_by_role("tab", name=label, exact=True).click()
    page.wait_for_function(IDLE_JS)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')")
