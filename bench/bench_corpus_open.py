"""Measure opening a Corpus row in Explore, in a real browser: the first open of a
session against the opens after it (issue 27: the first took 21 s, the second 1.4 s).

    .venv/bin/python -m bench.bench_corpus_open                    # samples + 300 KB
    .venv/bin/python -m bench.bench_corpus_open --large            # + a 4.6 MB text
    .venv/bin/python -m bench.bench_corpus_open --large --early    # click at once

The corpus: the sample documents plus a 300 KB stretch of real text (pubmed from
chroma-eval in ../shared when present, else the samples repeated), uploaded as files;
with ``--large`` a 4.6 MB text too. The table is ordered "Most chunks first", so its
first row is the largest document. Measured (wall-clock from the Python side of
Playwright, and the server's CPU seconds): from the click on a row until Explore's chunk
count is on screen and the run has finished; then back to Corpus (not timed) and the
next open:

1. the first row (the largest document), the session's first open;
2. the second row, another document;
3. the first row again.

With ``--early``, the first row is clicked before those, as soon as the table is shown,
while the page may still be preparing its first rows for Explore. With ``--cold`` the
server is not left to finish its start-up work (UMAP's background compilation) before
the corpus is uploaded, as when a user starts the app and goes straight to the Corpus
page. This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.e2e.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    cpu_seconds,
    start_server,
    stop_server,
    wait_until_idle,
)

ROOT = Path(__file__).resolve().parents[1]
LONG_SOURCE = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora" / "pubmed.md"
LONG_CHARS = 300_000
LARGE_CHARS = 4_600_000


def corpus_files(large: bool = False) -> list[dict[str, Any]]:
    """The sample documents and ``long.txt`` (about 300 KB), as Playwright file payloads;
    with ``large``, ``large.txt`` too (4.6 million characters: with it the corpus is about
    ``WINDOW_AUTO_CHARS``, over which the Corpus page does not check chunks against the
    model's window until asked)."""
    samples = sorted(p for p in (ROOT / "sample_docs").iterdir() if p.is_file())
    files = [{"name": p.name, "mimeType": "text/plain", "buffer": p.read_bytes()} for p in samples]
    if LONG_SOURCE.is_file():
        text = LONG_SOURCE.read_text(encoding="utf-8")
    else:
        text = "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in samples)
    while len(text) < LONG_CHARS:
        text += "\n\n" + text
    long = text[:LONG_CHARS].encode("utf-8")
    files.append({"name": "long.txt", "mimeType": "text/plain", "buffer": long})
    if large:
        while len(text) < LARGE_CHARS:
            text += "\n\n" + text
        big = text[:LARGE_CHARS].encode("utf-8")
        files.append({"name": "large.txt", "mimeType": "text/plain", "buffer": big})
    return files


def _finished(page) -> None:
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stStatusWidget\"]')",
        polling="raf",
        timeout=600_000,
    )


def _table(page, count: int) -> None:
    page.get_by_text(f"{count} of {count} documents").first.wait_for(timeout=600_000)
    _finished(page)


def _sort_by_chunks(page) -> None:
    page.locator(".st-key-corpus-sort").get_by_role("combobox").click()
    page.get_by_role("option", name="Most chunks first", exact=True).click()
    _finished(page)


def _click_row(page, row: int) -> None:
    """Tick the selection box of the table's row ``row`` (0 first; the grid is a canvas)."""
    grid = page.locator('.st-key-corpus_table [data-testid="stDataFrame"]').first
    if not grid.count():
        grid = page.locator('[data-testid="stDataFrame"]').last
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17 + 35 * row)


def _open(page, pid: int, row: int) -> tuple[str, float, float]:
    """The document opened, and the seconds (wall, server CPU) from the click on ``row``
    until Explore is drawn."""
    before, start = cpu_seconds(pid), time.perf_counter()
    _click_row(page, row)
    page.get_by_role("heading", name="Explore").wait_for(timeout=600_000)
    page.get_by_test_id("stMetric").filter(has_text="Chunks").first.wait_for(timeout=600_000)
    _finished(page)
    seconds, cpu = time.perf_counter() - start, cpu_seconds(pid) - before
    caption = page.get_by_test_id("stMain").get_by_text(" characters").first.inner_text()
    return caption.split(" · ")[0], seconds, cpu


def _back(page, count: int) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text("Corpus", exact=True).click()
    _table(page, count)


def run(url: str, pid: int, cold: bool, large: bool, early: bool) -> list[tuple[str, float, float]]:
    from playwright.sync_api import sync_playwright

    files = corpus_files(large)
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1400})
        page = context.new_page()
        page.goto(f"{url}/corpus")
        dropzone = page.locator('.st-key-corpus-upload [data-testid="stFileUploaderDropzoneInput"]')
        dropzone.wait_for(state="attached", timeout=120_000)
        _finished(page)
        if not cold:
            wait_until_idle(pid)
        dropzone.set_input_files(files)
        if early:  # click as soon as the table is up, the page's run perhaps not done
            caption = f"{len(files)} of {len(files)} documents"
            page.get_by_text(caption).first.wait_for(timeout=600_000)
            name, wall, cpu = _open(page, pid, 0)
            rows.append((f"a click as soon as the table is up ({name})", wall, cpu))
            _back(page, len(files))
        else:
            _table(page, len(files))
        _sort_by_chunks(page)
        for label, row in (("first open", 0), ("another document", 1), ("the first again", 0)):
            name, wall, cpu = _open(page, pid, row)
            rows.append((f"{label} ({name})", wall, cpu))
            _back(page, len(files))
        browser.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cold", action="store_true", help="do not wait for the server's start-up work"
    )
    parser.add_argument(
        "--large", action="store_true", help="add a 4.6 M-character document to the corpus"
    )
    parser.add_argument(
        "--early",
        action="store_true",
        help="first click the first row as soon as the table is shown (before the rest)",
    )
    args = parser.parse_args()
    log = Path(tempfile.gettempdir()) / "bench_corpus_open.log"
    process, url = start_server(log)
    try:
        for k, (label, wall, cpu) in enumerate(
            run(url, process.pid, args.cold, args.large, args.early)
        ):
            print(f"{k + 1}. {label}: {wall:.2f} s (server CPU {cpu:.2f} s)")
    finally:
        stop_server(process)


if __name__ == "__main__":
    main()
