"""A browser tab closed in the middle of a long run leaves no work running for nobody.

Explore with the semantic strategy embeds the document's sentence windows with a
progress bar, a batch at a time, each vector written to the disk embedding cache as it
is made (the progress counter read here). The tab is closed while it runs: Streamlit
stops the session's script at its next Streamlit call (the progress bar's update), so
once the server is idle again the cache holds fewer vectors than the document has
windows, and no more appear afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chunking.documents.io import read_bytes
from chunking.splitters.semantic.analysis import analysis_sentences
from tests.e2e.harness import start_server, stop_server, wait_until_idle

ROOT = Path(__file__).resolve().parents[2]
NOVEL = ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt"
TIMEOUT_MS = 300_000

pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    """A server of its own, with an empty disk embedding cache under ``tmp_path``."""
    process, url = start_server(tmp_path / "server.log", env={"XDG_CACHE_HOME": str(tmp_path)})
    try:
        yield url, process.pid, tmp_path / "chunk-explorer" / "embeddings"
    finally:
        stop_server(process)


def _vectors(cache: Path) -> int:
    return sum(1 for _ in cache.rglob("*.npy")) if cache.exists() else 0


def test_closing_the_tab_stops_the_embedding(browser, server: tuple[str, int, Path]) -> None:
    url, pid, cache = server
    data = NOVEL.read_bytes()
    windows = len(analysis_sentences(read_bytes(data, NOVEL.name).text))
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(f"{url}/explore?strategy=semantic")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click(timeout=TIMEOUT_MS)
    sidebar.locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        {"name": NOVEL.name, "mimeType": "text/plain", "buffer": data}, timeout=TIMEOUT_MS
    )
    progress = page.get_by_test_id("stProgress").first
    progress.wait_for(timeout=TIMEOUT_MS)
    assert "Embedding" in progress.inner_text()
    deadline = time.monotonic() + 120
    while _vectors(cache) == 0 and time.monotonic() < deadline:  # the first batch is in
        time.sleep(0.5)
    assert _vectors(cache) > 0
    context.close()  # the tab goes away mid-run
    wait_until_idle(pid, quiet=3.0, timeout=300)
    stopped = _vectors(cache)
    assert 0 < stopped < windows, (stopped, windows)
    time.sleep(5)
    assert _vectors(cache) == stopped  # nothing runs on for nobody
