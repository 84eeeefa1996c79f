"""The Tune page in headless Chromium: a small grid search on the sample document with
typed questions, a click on a point of the front, and Explore showing that
configuration. A screenshot of the page goes to ``harness.screenshot_dir()``."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from pages.model_choice import model_label
from tests.e2e.harness import screenshot_dir
from tests.e2e.test_corpus_browser import _choose, _finished

#: Questions about the sample document (sample_docs/technical_guide.md), each with its
#: answer as an excerpt.
TYPED = "\n".join(
    [
        "What is Lodestar? | Lodestar is a fictional vector database used in this guide",
        "Who keeps the shard map? | keeps cluster membership, the shard map and schema versions",
        "What happens to writes? | Writes go to the leader replica, are appended to the "
        "write-ahead log (WAL)",
        "When is a write acknowledged? | acknowledged once a majority of replicas has "
        "persisted them",
        "Can the index type change? | Each collection chooses one index type when it is created",
        "What does int8 storage save? | reduces the raw vector size by a factor of four",
        "What is the default HNSW degree? | is the HNSW graph degree (default 16)",
        "How does query throughput scale? | Query throughput scales roughly linearly with "
        "cores until memory bandwidth saturates",
    ]
)

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)


def _front_points(page: Page) -> list[dict]:
    """The screen position and label of every point of the chart's front trace."""
    return page.evaluate(
        """() => {
        const plot = [...document.querySelectorAll('.js-plotly-plot')]
            .find(p => (p.data || []).some(t => t.name === 'front'));
        const index = plot.data.findIndex(t => t.name === 'front');
        const trace = plot.querySelectorAll('.scatterlayer .trace')[index];
        return [...trace.querySelectorAll('.points path')].map((path, i) => {
            const box = path.getBoundingClientRect();
            return {x: box.x + box.width / 2, y: box.y + box.height / 2,
                    label: plot.data[index].customdata[i][0]};
        });
    }"""
    )


def test_a_search_then_a_front_point_opens_in_explore(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/tune")
    main = page.get_by_test_id("stMain")
    expect(page.get_by_role("heading", name="Tune")).to_be_visible()
    main.get_by_text("My document", exact=True).click()
    _finished(page)
    area = page.locator(".st-key-eval-typed textarea")
    area.fill(TYPED)
    area.press("Control+Enter")
    _finished(page)
    _choose(page, "tune-sampler", "grid")
    _choose(page, "tune-model", model_label("minilm-static"))
    # precision favours small chunks, the chunk count large ones: a front of several
    _choose(page, "tune-objective", "precision")
    _choose(page, "tune-cost", "chunks")
    expect(main.get_by_text("16 on paper, 16 to run", exact=False)).to_be_visible()
    main.get_by_role("button", name="Run search").click()
    expect(main.get_by_text("Is the winner real?")).to_be_visible(timeout=600_000)
    _finished(page)
    page.wait_for_function(
        "[...document.querySelectorAll('.js-plotly-plot')]"
        ".some(p => (p.data || []).some(t => t.name === 'front'))"
    )
    trial = page.locator(".st-key-tune-trial").get_by_role("combobox")
    winner = trial.input_value()
    expect(main.get_by_text("8 questions: 8 located", exact=False)).to_be_visible()
    points = [p for p in _front_points(page) if p["label"] != winner]
    assert points, "the front has a point besides the winner"
    target = points[0]
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    target = next(p for p in _front_points(page) if p["label"] == target["label"])
    page.mouse.click(target["x"], target["y"])
    expect(trial).to_have_value(target["label"], timeout=120_000)
    _finished(page)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir() / "tune.png"))

    main.get_by_role("button", name="Open in Explore").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible(timeout=120_000)
    strategy, size = target["label"].split(" · ")[:2]
    title = {"recursive": "Recursive", "token": "Token"}[strategy]
    expect(page.get_by_test_id("stMain").get_by_text(f"{title}", exact=False).first).to_be_visible()
    caption = page.get_by_test_id("stMain").get_by_test_id("stCaptionContainer").first
    expect(caption).to_contain_text(size)
