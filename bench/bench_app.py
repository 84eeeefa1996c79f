"""Measure the app's responsiveness in a real browser with a 1 MB document.

    .venv/bin/python -m bench.bench_app            # starts its own server on a free port
    .venv/bin/python -m bench.bench_app --url http://127.0.0.1:8501

Run it from the repository root with ``-m``: that puts the root on the import path, for
the browser harness it shares with the tests (``tests/e2e/harness.py``).

What is measured (wall-clock, from the Python side of Playwright):

- first load: a new browser session (empty browser cache) opens the home page (the
  guided tour, until the sample's chunk count is shown) or ``/explore`` (until the chunk
  count and the histogram are on screen), and the script run has finished. The server
  is warm: one session has been served and the server has gone idle, its UMAP warm-up
  thread done (only known when this script started the server);
- upload: a 1 MB text document is uploaded, until its chunk count is shown;
- re-render: the chunk size (recursive strategy, characters) is changed, until the new
  count is shown ("count") and until the run has finished and the histogram holds the
  new chunks ("settled").

The 1 MB document is built from the chroma-eval corpora in ../shared when present,
otherwise from the sample documents. Expected chunk counts come from the core.
This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import chunking
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, Server, app_server, wait_until_idle

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
DOC_CHARS = 1_000_000
SIZES = (900, 800, 700, 600, 500, 1000, 1200, 400)
FIRST_LOADS = 8


def one_megabyte_document() -> str:
    """About 1 MB of real, mostly non-repeating text."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    parts = [p.read_text(encoding="utf-8") for p in sources]
    text = "\n\n".join(parts)
    while len(text) < DOC_CHARS:
        text += "\n\n" + text
    return text[:DOC_CHARS]


def _metric_is(page, value: str) -> None:
    page.wait_for_function(
        """v => [...document.querySelectorAll('[data-testid="stMetric"]')]
              .some(m => m.innerText.startsWith('Chunks') &&
                         m.querySelector('[data-testid="stMetricValue"]').innerText === v)""",
        arg=value,
        polling="raf",
        timeout=120_000,
    )


def _settled(page, count: int) -> None:
    page.wait_for_function(
        """n => { const p = document.querySelector('.js-plotly-plot');
                  return p && p.data && p.data[0].x.length === n &&
                         !document.querySelector('[data-testid="stStatusWidget"]'); }""",
        arg=count,
        polling="raf",
        timeout=120_000,
    )


def first_load(browser, url: str, explore: bool = True) -> float:
    """Seconds until the page is drawn and its run has finished: Explore's chunk count
    and histogram, or (``explore=False``) the home page's summary of the sample."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    start = time.perf_counter()
    page.goto(f"{url}/explore" if explore else url)
    if explore:
        page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    else:
        page.get_by_text("cuts it into").wait_for(timeout=120_000)
    page.wait_for_function(
        "!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000
    )
    elapsed = time.perf_counter() - start
    context.close()
    return elapsed


def run(server: Server) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    text = one_megabyte_document()
    expected = {size: len(chunking.chunk(text, size=size)) for size in (1000, *SIZES)}
    results: dict[str, object] = {"document_chars": len(text)}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        url = server.url
        first_load(browser, url, explore=False)  # imports, caches, UMAP warm-up started
        if server.pid is not None:
            results["idle_after_s"] = wait_until_idle(server.pid)
        results["home_load_s"] = [first_load(browser, url, False) for _ in range(FIRST_LOADS)]
        results["first_load_s"] = [first_load(browser, url) for _ in range(FIRST_LOADS)]

        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.goto(f"{url}/explore")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
        start = time.perf_counter()
        sidebar.locator(
            '.st-key-upload [data-testid="stFileUploaderDropzoneInput"]'
        ).set_input_files(
            {"name": "one_megabyte.txt", "mimeType": "text/plain", "buffer": text.encode()}
        )
        _metric_is(page, f"{expected[1000]:,}")
        results["upload_1mb_count_s"] = time.perf_counter() - start
        _settled(page, expected[1000])
        results["upload_1mb_settled_s"] = time.perf_counter() - start

        field = sidebar.locator('input[type="number"][aria-label="size"]')
        rerenders = []
        for size in SIZES:
            field.fill(str(size))
            start = time.perf_counter()
            field.press("Enter")
            _metric_is(page, f"{expected[size]:,}")
            count_s = time.perf_counter() - start
            _settled(page, expected[size])
            rerenders.append(
                {
                    "size": size,
                    "chunks": expected[size],
                    "count_s": count_s,
                    "settled_s": time.perf_counter() - start,
                }
            )
        results["rerender"] = rerenders
        context.close()
        browser.close()
    return results


def report(results: dict[str, object]) -> None:
    loads = results["first_load_s"]
    print(f"document: {results['document_chars']:,} characters")
    if "idle_after_s" in results:
        print(f"server idle (warm-up done) {results['idle_after_s']:.1f} s after the first load")
    else:
        print("server given by --url: not waited for its background warm-up")
    for label, values in (("home page (tour)", results["home_load_s"]), ("/explore", loads)):
        print(
            f"first load of {label}, warm server: "
            + ", ".join(f"{s:.2f}" for s in values)
            + f" s; median {statistics.median(values):.2f} s, worst {max(values):.2f} s"
        )
    print(
        f"upload 1 MB: count shown after {results['upload_1mb_count_s']:.2f} s, "
        f"settled after {results['upload_1mb_settled_s']:.2f} s"
    )
    print("re-render after a size change (recursive, chars):")
    for row in results["rerender"]:
        print(
            f"  size {row['size']:>5}: {row['chunks']:>5} chunks, count {row['count_s']:.2f} s, "
            f"settled {row['settled_s']:.2f} s"
        )
    counts = [r["count_s"] for r in results["rerender"]]
    settled = [r["settled_s"] for r in results["rerender"]]
    print(
        f"median re-render: count {statistics.median(counts):.2f} s, "
        f"settled {statistics.median(settled):.2f} s; worst settled {max(settled):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an already running app (default: start one)")
    args = parser.parse_args()
    with app_server(args.url) as server:
        report(run(server))


if __name__ == "__main__":
    main()
