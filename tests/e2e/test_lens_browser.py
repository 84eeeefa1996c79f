"""The retrieval lens in headless Chromium: typed questions evaluated on the sample
document (Evaluate), the questions on the map of its chunks (Map), the chunks coloured
by retrieval traffic with the chosen question's gold text underlined (Explore), and the
miss reasons of every configuration side by side (Compare). Screenshots of the four go
to ``harness.screenshot_dir()``; docs/refresh_screenshots.py points it at
docs/screenshots/."""

from __future__ import annotations

import re
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
#: The evaluated sizes (tokens) and k: no 20-token chunk holds the routers' answer (23
#: tokens), so unless its pieces all rank in the top k it is cut by a boundary; top 2 of
#: the larger chunks leaves room for misses of the other reasons.
SIZES = (20, 200, 400)
TOP_K = 2
REASONS = ("cut by a boundary", "truncated", "out-ranked")


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


def _type_into(page: Page, selector: str, value: str) -> None:
    box = page.locator(selector)
    box.fill(value)
    box.press("Enter")
    _finished(page)
    expect(box).to_have_value(value)


def _counts(line: str) -> dict[str, int]:
    """``"cut by a boundary — recursive · 20 tokens: 1 gold span missed; token · 20
    tokens: 2"`` as ``{"recursive · 20 tokens": 1, "token · 20 tokens": 2}``."""
    _, sums = line.split(" — ", 1)
    found = [
        re.fullmatch(r"(.+): (\d+)(?: gold spans? missed)?", part.strip())
        for part in sums.split(";")
    ]
    assert all(found), line
    return {m.group(1): int(m.group(2)) for m in found if m}


def test_the_lens_from_evaluate_to_the_map_the_text_and_compare(page: Page, app_url: str) -> None:
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
    _type_into(page, ".st-key-eval-sizes input", ", ".join(map(str, SIZES)))
    _type_into(page, ".st-key-eval-top_k input", str(TOP_K))
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

    _nav(page, "Compare")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("heading", name="Why retrieval misses")).to_be_visible()
    expect(main.get_by_text(f"top {TOP_K}, {2 * len(SIZES)} configuration(s)")).to_be_visible()
    lines = {}
    for reason in REASONS:
        item = main.locator("li").filter(has_text=f"{reason} — ")
        expect(item).to_have_count(1)
        expect(item).to_be_visible()
        lines[reason] = _counts(item.inner_text())
    labels = {f"{s} · {n} tokens" for s in ("recursive", "token") for n in SIZES}
    assert all(set(counts) == labels for counts in lines.values()), lines
    # every missed answer has one reason: at most the two evaluated questions per config
    assert all(sum(lines[r][label] for r in REASONS) <= 2 for label in labels), lines
    assert sum(lines["cut by a boundary"][f"{s} · 20 tokens"] for s in ("recursive", "token")) >= 1
    main.get_by_role("heading", name="Why retrieval misses").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "lens-compare.png"))
