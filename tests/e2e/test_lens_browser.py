"""The retrieval lens in headless Chromium: typed questions evaluated on the sample
document (Evaluate), the questions on the map of its chunks (Map), and the chunks
coloured by retrieval traffic with the chosen question's gold text underlined (Explore).
Screenshots of the three go to ``harness.screenshot_dir()``; docs/refresh_screenshots.py
copies them into docs/screenshots/."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from chunking.documents.io import read_path
from tests.e2e.harness import screenshot_dir
from tests.e2e.test_corpus_browser import _choose, _finished  # selectbox, wait for a run

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)

ROOT = Path(__file__).resolve().parents[2]
GUIDE = read_path(ROOT / "sample_docs" / "technical_guide.md").text
WRITES = "Writes go to the leader replica, are appended to the write-ahead log (WAL)"
TYPED = (
    f"What happens to writes? | {WRITES}\n"
    "What do routers do? | Routers accept client requests, authenticate them and send "
    "queries out to the shards that own the relevant data\n"
    "Where do penguins go? | Penguins migrate across the desert every winter\n"
)
#: The sidebar's configuration, evaluated as it is on the Evaluate page.
CONFIG = "strategy=recursive&size=200&unit=tokens"


def _nav(page: Page, name: str) -> None:
    _finished(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name).click()


def _has_trace(page: Page, name: str) -> None:
    page.wait_for_function(
        "name => [...document.querySelectorAll('.js-plotly-plot')].some("
        "p => (p.data || []).some(t => t.name === name))",
        arg=name,
        timeout=120_000,
    )


def test_the_lens_from_evaluate_to_the_map_and_the_text(page: Page, app_url: str) -> None:
    assert WRITES in GUIDE
    shots = screenshot_dir()
    page.goto(f"{app_url}/explore?{CONFIG}")
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(page.get_by_text("needs an evaluation")).to_be_visible()  # no lens yet

    _nav(page, "Evaluate")
    main = page.get_by_test_id("stMain")
    main.get_by_text("My document", exact=True).click()
    _finished(page)
    main.get_by_text("questions typed here", exact=True).click()
    area = page.locator(".st-key-eval-typed textarea")
    area.fill(TYPED)
    area.press("Control+Enter")
    expect(main.get_by_text("3 questions: 1 located, 1 near match, 1 not found")).to_be_visible()
    expect(main.get_by_text("line 3: not found", exact=False)).to_be_visible()
    page.locator(".st-key-eval-langchain label").click()  # the sidebar's separators
    _finished(page)
    main.get_by_role("button", name="Run evaluation").click()
    expect(main.get_by_text("Missed gold spans by reason")).to_be_visible(timeout=600_000)
    _finished(page)
    main.get_by_text("Missed gold spans by reason").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "lens-evaluate.png"))

    _nav(page, "Embedding map")
    page.get_by_test_id("stMain").get_by_text("Questions with the chunks", exact=True).click()
    _has_trace(page, "questions (2)")
    _choose(page, "map-lens_question", "What happens to writes?")
    _has_trace(page, "selected question")
    expect(
        page.get_by_test_id("stMain").get_by_text("What happens to writes?").last
    ).to_be_visible()
    page.screenshot(path=str(shots / "lens-map.png"))

    _nav(page, "Explore")
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    page.get_by_test_id("stMain").get_by_text("retrieval traffic (heat)", exact=True).click()
    expect(page.locator(".ce-doc [data-heat]").first).to_be_visible()
    _choose(page, "explore-lens_question", "What happens to writes?")
    gold = page.locator(".ce-doc:not(.ce-legend) .ce-gold")
    expect(gold.first).to_be_visible()
    assert "".join(gold.all_inner_texts()) == WRITES
    gold.first.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "lens-explore.png"))
