"""Refresh the documentation screenshots in docs/screenshots/ from the real-browser tests.

    .venv/bin/python docs/refresh_screenshots.py            # every browser test
    .venv/bin/python docs/refresh_screenshots.py -k compare # extra arguments go to pytest

The browser tests (``tests/e2e/``) take their screenshots while they drive the app in
headless Chromium. A plain test run writes them to a temporary folder, so that running
the tests never changes tracked files; this script runs the same tests with
``CHUNK_EXPLORER_SCREENSHOTS`` pointing at docs/screenshots/. Review the images with
``git diff --stat docs/screenshots`` before committing them. The exit status is pytest's:
screenshots of tests that failed may be missing or show the failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "docs" / "screenshots"
#: Read by ``tests/e2e/harness.py``'s ``screenshot_dir()``.
SCREENSHOTS_ENV = "CHUNK_EXPLORER_SCREENSHOTS"


def main(argv: list[str]) -> int:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    before = {p.name: p.stat().st_mtime_ns for p in SCREENSHOTS.glob("*.png")}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/e2e", *argv]
    env = {**os.environ, SCREENSHOTS_ENV: str(SCREENSHOTS)}
    status = subprocess.call(command, cwd=ROOT, env=env)
    written = sorted(
        p.name for p in SCREENSHOTS.glob("*.png") if before.get(p.name) != p.stat().st_mtime_ns
    )
    print(
        f"refresh_screenshots: wrote {len(written)} file(s) in {SCREENSHOTS}: {', '.join(written)}"
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
