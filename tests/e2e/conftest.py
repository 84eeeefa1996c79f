"""Fixtures for the real-browser tests: a Streamlit server on a free port and Chromium.

The server is started from the project root with the same interpreter that runs the
tests, and stopped when the module's tests are done. Chromium is Debian's
(``/usr/bin/chromium``, or ``CHROMIUM_PATH``); Playwright cannot download browsers here.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

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


def start_server(log_path: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``streamlit run app.py`` on a free port; return the process and its URL."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
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
    ]
    log = log_path.open("wb")
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{log_path.read_text(errors='replace')}")
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


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    process, url = start_server(log_path)
    try:
        yield url
    finally:
        stop_server(process)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def dialogs() -> list[str]:
    """Messages of the JavaScript dialogs (alert, confirm, prompt) the page opened."""
    return []


@pytest.fixture
def page(browser, dialogs: list[str]) -> Iterator[object]:
    """A fresh browser page (its own session) that records and dismisses every dialog."""
    context = browser.new_context(viewport={"width": 1440, "height": 2000})
    context.set_default_timeout(60_000)
    tab = context.new_page()

    def on_dialog(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    try:
        yield tab
    finally:
        context.close()
