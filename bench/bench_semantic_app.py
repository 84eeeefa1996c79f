"""Measure the Semantic and Map pages in a real browser, and numba's disk cache.

    .venv/bin/python -m bench.bench_semantic_app                # bundled all-MiniLM-L6-v2
    .venv/bin/python -m bench.bench_semantic_app --model hash   # fake model: UI costs only
    .venv/bin/python -m bench.bench_semantic_app --url http://127.0.0.1:8501 --skip-numba

Run it from the repository root with ``-m``: that puts the root on the import path, for
the browser harness it shares with the tests (``tests/e2e/harness.py``).

What is measured (wall-clock, from the Python side of Playwright, headless Chromium):

1. Semantic page on a 5,000-sentence document (built from the chroma-eval corpora in
   ../shared when present, else from the sample documents): the first analysis, which
   embeds every sentence window once; then threshold changes, each one a key press on
   the percentile slider, timed until the Breakpoints metric shows the new count
   ("count") and until the curve's dashed line sits at the new cutoff and the run has
   finished ("settled"). Streamlit sends a slider's new value after a short debounce;
   that wait is included.
2. Map page with about 2,000 chunks (the sidebar's recursive strategy with a size chosen
   for that): the first map (embedding the chunks, then UMAP), a new UMAP fit on the
   cached embeddings (another neighbour count), the same map again (from the cache),
   and the 3D map, first and again.
3. numba's disk cache: UMAP's warm-up in a fresh Python process with an empty cache
   directory, then in another fresh process with the directory filled.

This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chunking
from chunking.engine.spans import sentence_spans
from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS, app_server, wait_until_idle

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
SENTENCES = 5_000
MAP_CHUNKS = 2_000
THRESHOLD_STEPS = 8
LONG = 1_800_000  # ms: the first embedding of 5,000 windows on a busy CPU takes minutes

IDLE_JS = (
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]'); "
    "return !!app && app.dataset.testScriptState === 'notRunning'; }"
)
METRIC_JS = """label => { for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
    const l = m.querySelector('[data-testid="stMetricLabel"]');
    if (l && l.innerText.trim() === label)
        return m.querySelector('[data-testid="stMetricValue"]').innerText; }
    return null; }"""
CUTOFF_JS = """() => { const p = document.querySelector('.js-plotly-plot');
    return p && p.layout && p.layout.shapes && p.layout.shapes.length
        ? p.layout.shapes[0].y0 : null; }"""
MAP_JS = """() => { for (const p of document.querySelectorAll('.js-plotly-plot')) {
    const d = p._fullData;
    if (d && d.length && d.every(t => t.customdata))
        return {n: d.reduce((m, t) => m + t.x.length, 0), type: d[0].type, x0: d[0].x[0]}; }
    return null; }"""


# ------------------------------------------------------------------------ inputs


def document(sentences: int = SENTENCES) -> str:
    """A text of exactly ``sentences`` sentences of real prose."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sources)
    while len(sentence_spans(text)) < sentences:
        text += "\n\n" + text
    return text[: sentence_spans(text)[sentences - 1][1]]


def size_for(text: str, chunks: int = MAP_CHUNKS) -> tuple[int, int]:
    """A recursive chunk size (characters) giving about ``chunks`` chunks, and the count."""
    size = max(50, len(text) // chunks)
    for _ in range(8):
        count = len(chunking.chunk(text, size=size))
        if abs(count - chunks) <= chunks // 50:
            break
        size = max(50, round(size * count / chunks))
    return size, len(chunking.chunk(text, size=size))


# ------------------------------------------------------------------------ server


# ------------------------------------------------------------------------ browser


def _idle(page: Any, timeout: int = LONG) -> None:
    page.wait_for_function(IDLE_JS, timeout=timeout)


def _metric(page: Any, label: str, *, delta: bool = False) -> str | None:
    """A metric's value (or its delta line) by its label."""
    if not delta:
        return page.evaluate(METRIC_JS, label)
    return page.evaluate(METRIC_JS.replace("stMetricValue", "stMetricDelta"), label)


def _nav(page: Any, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()


def _set_text(page: Any, label: str, value: str) -> None:
    field = page.get_by_label(label, exact=True)
    field.fill(value)
    field.press("Enter")


def _open_expander(page: Any, title: str) -> None:
    page.get_by_test_id("stExpander").filter(has_text=title).locator("summary").click()


def upload(page: Any, url: str, name: str, text: str) -> None:
    page.goto(url)
    page.get_by_test_id("stMain").locator("h1").first.wait_for(timeout=LONG)
    _idle(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
    sidebar.locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        {"name": name, "mimeType": "text/plain", "buffer": text.encode("utf-8")}
    )
    sidebar.get_by_text(f"{name} · text").wait_for(timeout=LONG)
    _idle(page)


def semantic(page: Any, model: str, server_pid: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    start = time.perf_counter()
    _nav(page, "Semantic")
    page.get_by_role("heading", name="Semantic breakpoints").wait_for(timeout=LONG)
    if model != "all-MiniLM-L6-v2":
        _open_expander(page, "Window and model")
        _set_text(page, "Model", model)
    page.wait_for_function(CUTOFF_JS, timeout=LONG)
    _idle(page)
    out["first_analysis_s"] = time.perf_counter() - start
    out["sentences"] = _metric(page, "Sentences")
    if server_pid is not None:  # measure on a warm server: UMAP's warm-up done
        out["idle_wait_s"] = wait_until_idle(server_pid)
    thumb = page.get_by_role("slider", name="Percentile of the distances")
    thumb.focus()
    steps = []
    for k in range(THRESHOLD_STEPS):
        before_count, before_cut = _metric(page, "Breakpoints"), page.evaluate(CUTOFF_JS)
        start = time.perf_counter()
        thumb.press("ArrowLeft" if k % 4 != 3 else "ArrowRight")
        page.wait_for_function(
            f"b => ({METRIC_JS})('Breakpoints') !== b", arg=before_count, polling="raf"
        )
        count_s = time.perf_counter() - start
        page.wait_for_function(f"c => ({CUTOFF_JS})() !== c", arg=before_cut, polling="raf")
        _idle(page)
        steps.append(
            {
                "breakpoints": _metric(page, "Breakpoints"),
                "count_s": count_s,
                "settled_s": time.perf_counter() - start,
            }
        )
    out["threshold_changes"] = steps
    return out


def _map_state(page: Any) -> dict[str, Any] | None:
    return page.evaluate(MAP_JS)


def _wait_map(page: Any, condition: str, arg: Any) -> None:
    page.wait_for_function(
        f"a => {{ const s = ({MAP_JS})(); return s && ({condition}); }}",
        arg=arg,
        polling="raf",
        timeout=LONG,
    )
    _idle(page)


def embedding_map(page: Any, model: str, size: int, chunks: int) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": chunks, "size": size}
    field = page.get_by_test_id("stSidebar").locator('input[type="number"][aria-label="size"]')
    field.fill(str(size))
    field.press("Enter")
    _idle(page)
    start = time.perf_counter()
    _nav(page, "Embedding map")
    page.get_by_role("heading", name="Embedding map").wait_for(timeout=LONG)
    if model != "all-MiniLM-L6-v2":
        _set_text(page, "Model", model)
    _wait_map(page, "s.n === a", chunks)
    out["first_map_s"] = time.perf_counter() - start
    out["first_projection_s"] = _metric(page, "Computed in")
    out["projection"] = _metric(page, "Projection")
    first_x = _map_state(page)["x0"]

    _open_expander(page, "UMAP settings")
    neighbours = page.get_by_role("slider", name="Neighbours")
    neighbours.focus()
    start = time.perf_counter()
    neighbours.press("ArrowRight")  # 16 neighbours: a new fit on cached embeddings
    _wait_map(page, "s.x0 !== a", first_x)
    out["new_fit_cached_embeddings_s"] = time.perf_counter() - start
    out["new_fit_projection_s"] = _metric(page, "Computed in")

    start = time.perf_counter()
    neighbours.press("ArrowLeft")  # back to 15: the same map as the first
    _wait_map(page, "s.x0 === a", first_x)
    out["same_map_again_s"] = time.perf_counter() - start
    out["same_map_again_source"] = _metric(page, "Computed in", delta=True)

    radio = page.get_by_test_id("stRadio").filter(has_text="Dimensions")
    start = time.perf_counter()
    radio.get_by_text("3D", exact=True).click()
    _wait_map(page, "s.type === a", "scatter3d")
    out["first_3d_s"] = time.perf_counter() - start
    radio.get_by_text("2D", exact=True).click()
    _wait_map(page, "s.type === a", "scattergl")
    start = time.perf_counter()
    radio.get_by_text("3D", exact=True).click()
    _wait_map(page, "s.type === a", "scatter3d")
    out["3d_again_s"] = time.perf_counter() - start
    return out


# ------------------------------------------------------------------------ numba


def _warm_up_seconds(cache_dir: Path) -> float:
    code = (
        "import time; from chunking.embedding import projection as maps; t = time.perf_counter(); "
        "maps.wait_until_warm(); s = maps.warm_status(); "
        "print(time.perf_counter() - t if s['state'] == 'ready' else -1)"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return float(result.stdout.strip().splitlines()[-1])


def numba_cache() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        empty = _warm_up_seconds(Path(folder))
        filled = _warm_up_seconds(Path(folder))
    return {"empty_cache_s": empty, "filled_cache_s": filled}


# ------------------------------------------------------------------------ main


def run(url: str | None, model: str, skip_numba: bool) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {"model": model}
    if not skip_numba:
        results["numba"] = numba_cache()
    text = document()
    size, chunks = size_for(text)
    results["document"] = {"chars": len(text), "sentences": len(sentence_spans(text))}
    with (
        app_server(url, ["--server.maxUploadSize", "200"]) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1100})
        context.set_default_timeout(LONG)
        page = context.new_page()
        upload(page, server.url, "bench_5000_sentences.txt", text)
        results["semantic"] = semantic(page, model, server.pid)
        results["map"] = embedding_map(page, model, size, chunks)
        context.close()
        browser.close()
    return results


def report(results: dict[str, Any]) -> None:
    doc = results["document"]
    print(f"model: {results['model']}")
    print(f"document: {doc['chars']:,} characters, {doc['sentences']:,} sentences")
    if "numba" in results:
        numba = results["numba"]
        print(
            f"UMAP warm-up in a fresh process: {numba['empty_cache_s']:.1f} s with an empty "
            f"numba cache, {numba['filled_cache_s']:.1f} s with it filled"
        )
    sem = results["semantic"]
    print(f"semantic: first analysis (embedding, once) {sem['first_analysis_s']:.1f} s")
    for step in sem["threshold_changes"]:
        print(
            f"  threshold change -> {step['breakpoints']} breakpoints: count shown "
            f"{step['count_s']:.2f} s, settled {step['settled_s']:.2f} s"
        )
    settled = sorted(s["settled_s"] for s in sem["threshold_changes"])
    print(f"  settled: median {settled[len(settled) // 2]:.2f} s, max {settled[-1]:.2f} s")
    m = results["map"]
    print(f"map: {m['chunks']:,} chunks (recursive, size {m['size']}), {m['projection']}")
    print(
        f"  first map {m['first_map_s']:.1f} s (projection alone {m['first_projection_s']}); "
        f"new fit on cached embeddings {m['new_fit_cached_embeddings_s']:.2f} s "
        f"(projection {m['new_fit_projection_s']}); same map again "
        f"{m['same_map_again_s']:.2f} s ({m['same_map_again_source']})"
    )
    print(f"  3D: first {m['first_3d_s']:.2f} s, again {m['3d_again_s']:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server; by default one is started")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="or 'hash' (fake, fast)")
    parser.add_argument("--skip-numba", action="store_true", help="skip the numba cache part")
    args = parser.parse_args()
    report(run(args.url, args.model, args.skip_numba))


if __name__ == "__main__":
    main()
