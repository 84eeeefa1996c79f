"""Measure the Corpus page in a real browser with a 200-document, ~50 MB corpus.

    .venv/bin/python -m bench.bench_corpus_app            # the full corpus, 3 rounds
    .venv/bin/python -m bench.bench_corpus_app --quick    # 40 documents (~10 MB), 1 round

Run it from the repository root with ``-m`` (it shares the browser harness of the tests,
``tests/e2e/harness.py``). It starts its own server on a free port.

The corpus is built from the chroma-eval corpora in ../shared when present (otherwise
the sample documents): overlapping 250 KB stretches of their text, as Markdown, text and
HTML files, zipped. What is measured (wall-clock, from the Python side of Playwright),
with the sidebar's default configuration (recursive, 1,000 characters):

- first load: with the server warm and idle (one session served, UMAP's background
  warm-up done), the zip is given to the page's uploader in a new session, until the
  table's caption and the histogram are on screen and the run has finished; the
  embedding model's window is not checked for a corpus this large until asked;
- the server's CPU seconds during the first load (user + system), a figure that does
  not depend on what else the machine runs;
- view change: the table's "Show" filter is switched (all documents / with warnings),
  until the new caption is shown and the run has finished; nothing is recomputed, and
  only the table (a fragment) is redrawn;
- back from Explore: Explore is opened, then the Corpus page again, until its table is
  shown and the run has finished (the corpus and its statistics stay in the session).

This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
import zipfile
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
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
DOC_CHARS = 250_000
SUFFIXES = (".md", ".txt", ".md", ".html")


def build_corpus(documents: int) -> bytes:
    """A zip of ``documents`` files of ``DOC_CHARS`` characters each, every one a
    different stretch of real text."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sources)
    while len(text) < 2 * DOC_CHARS:
        text += "\n\n" + text
    step = max(1, (len(text) - DOC_CHARS) // documents)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(documents):
            body = text[i * step : i * step + DOC_CHARS]
            suffix = SUFFIXES[i % len(SUFFIXES)]
            if suffix == ".html":
                body = f"<html><body><pre>{body.replace('<', '&lt;')}</pre></body></html>"
            archive.writestr(f"corpus/doc_{i:03d}{suffix}", body)
    return buffer.getvalue()


def _finished(page) -> None:
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stStatusWidget\"]')",
        polling="raf",
        timeout=300_000,
    )


def _caption(page, text: str) -> None:
    page.get_by_text(text).first.wait_for(timeout=300_000)


def _show(page, option: str) -> None:
    page.locator(".st-key-corpus-show").get_by_role("combobox").click()
    page.get_by_role("option", name=option, exact=True).click()


def first_load(browser, url: str, data: bytes, documents: int) -> tuple[float, Any]:
    """Seconds from giving the zip to the uploader until table and histogram are
    shown; returns the page (still open) too."""
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    page = context.new_page()
    page.goto(f"{url}/corpus")
    dropzone = page.locator('.st-key-corpus-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.wait_for(state="attached", timeout=120_000)
    _finished(page)
    start = time.perf_counter()
    dropzone.set_input_files({"name": "corpus.zip", "mimeType": "application/zip", "buffer": data})
    _caption(page, f"{documents} of {documents} documents")
    page.locator(".js-plotly-plot").first.wait_for(timeout=300_000)
    _finished(page)
    return time.perf_counter() - start, page


def view_changes(page, documents: int, rounds: int) -> list[float]:
    """Seconds for each switch of the table's filter, there and back."""
    times = []
    for _ in range(rounds):
        for option, caption in (
            ("With warnings", f"of {documents} documents"),
            ("All documents", f"{documents} of {documents} documents"),
        ):
            start = time.perf_counter()
            _show(page, option)
            _caption(page, caption)
            _finished(page)
            times.append(time.perf_counter() - start)
    return times


def back_from_explore(page, url: str, documents: int) -> float:
    page.get_by_test_id("stSidebarNav").get_by_text("Explore", exact=True).click()
    page.get_by_role("heading", name="Explore").wait_for(timeout=120_000)
    _finished(page)
    start = time.perf_counter()
    page.get_by_test_id("stSidebarNav").get_by_text("Corpus", exact=True).click()
    _caption(page, f"{documents} of {documents} documents")
    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    _finished(page)
    return time.perf_counter() - start


def run(url: str, pid: int, documents: int, rounds: int) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    data = build_corpus(documents)
    results: dict[str, object] = {"documents": documents, "zip_mb": len(data) / 2**20}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        warm = browser.new_context()
        warm.new_page().goto(url)  # the server's first session imports everything
        results["idle_after_s"] = wait_until_idle(pid)  # and UMAP's warm-up is done
        warm.close()
        loads, views, backs, cpu = [], [], [], []
        for _ in range(rounds):
            before = cpu_seconds(pid)
            seconds, page = first_load(browser, url, data, documents)
            loads.append(seconds)
            cpu.append(cpu_seconds(pid) - before)
            views += view_changes(page, documents, 2)
            backs.append(back_from_explore(page, url, documents))
            page.context.close()
        results.update(first_load_s=loads, first_load_cpu_s=cpu, view_change_s=views, back_s=backs)
        browser.close()
    return results


def report(results: dict[str, object]) -> None:
    print(f"corpus: {results['documents']} documents, zip {results['zip_mb']:.1f} MB")
    for label, key in (
        ("first load (upload to table and histogram)", "first_load_s"),
        ("  server CPU during the first load", "first_load_cpu_s"),
        ("view change (table filter)", "view_change_s"),
        ("back from Explore", "back_s"),
    ):
        values = results[key]
        assert isinstance(values, list)
        print(
            f"{label}: "
            + ", ".join(f"{s:.2f}" for s in values)
            + f" s; median {statistics.median(values):.2f} s, worst {max(values):.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 documents, one round")
    parser.add_argument("--documents", type=int, help="documents in the corpus (default 200)")
    args = parser.parse_args()
    documents = args.documents or (40 if args.quick else 200)
    log = Path(tempfile.gettempdir()) / "bench_corpus_app.log"
    process, url = start_server(log)
    try:
        report(run(url, process.pid, documents, 1 if args.quick else 3))
    finally:
        stop_server(process)


if __name__ == "__main__":
    main()
