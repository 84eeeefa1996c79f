"""End-to-end tests of the Guided tour, Semantic and Map pages in headless Chromium.

The server is conftest.py's ``streamlit run app.py`` (the ``app_url`` fixture). Screenshots
(home.png, semantic.png, map.png) go to ``harness.screenshot_dir()``;
``docs/refresh_screenshots.py`` refreshes docs/screenshots/ with them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

import chunking
import chunking.splitters.semantic.analysis as sem
from chunking.documents.io import read_path
from chunking.embedding.models import get_embedder
from tests.e2e.harness import screenshot_dir
from tests.test_app_semantic import DEFAULTS as PAGE_DEFAULTS

pytestmark = pytest.mark.browser
expect.set_options(timeout=180_000)  # a cold server loads the model and compiles UMAP

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = screenshot_dir()  # a temporary folder unless CHUNK_EXPLORER_SCREENSHOTS
ESSAY = read_path(ROOT / "sample_docs" / "long_essay.txt").text
GUIDE = read_path(ROOT / "sample_docs" / "technical_guide.md").text
TEXT = (
    "Bread dough needs flour, water, salt and yeast. Knead the dough for ten minutes. "
    "Let the dough rise until it doubles. Bake the loaf until the crust is brown. "
    "Jupiter is the largest planet in the solar system. Its Great Red Spot is a giant "
    "storm. Dozens of moons circle the planet. The striker scored twice in the second "
    "half. The goalkeeper saved a late penalty. The fans sang until the final whistle. "
    "Income tax returns are due in April. Keep your receipts for six years."
)


# ------------------------------------------------------------------------ helpers


def _sidebar(page: Page):
    return page.get_by_test_id("stSidebar")


def _nav(page: Page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()


def _metric(page: Page, label: str):
    """The value of the metric labelled exactly ``label`` (the first, while a rerun
    briefly shows the old element next to the new one)."""
    name = page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    metric = page.get_by_test_id("stMetric").filter(has=name)
    return metric.get_by_test_id("stMetricValue").first


def _paste(page: Page, text: str) -> None:
    _sidebar(page).get_by_test_id("stRadio").get_by_text("Paste", exact=True).click()
    area = _sidebar(page).locator("textarea")
    area.fill(text)
    area.press("Control+Enter")


#: True once the app's script run has finished (the attribute Streamlit sets for tests).
IDLE_JS = (
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]'); "
    "return !!app && app.dataset.testScriptState === 'notRunning'; }"
)


def _idle(page: Page) -> None:
    """Wait until the script run has finished."""
    page.wait_for_function(IDLE_JS, timeout=180_000)


def _load(page: Page, url: str) -> None:
    """Open the app and wait until its first run has finished.

    Every test waits for the end of a run before it switches pages, so that each step
    sees the finished state of the one before. (Sidebar values lost in a page change
    during a run are covered by ``persist_state=state.PERSIST`` and its AppTests.)
    """
    page.goto(url)
    expect(page.get_by_test_id("stMain").locator("h1").first).to_be_visible()
    _idle(page)


#: Points drawn in the embedding map (plotly's decoded traces: ``data`` keeps numpy
#: arrays in their base64 form).
MAP_POINTS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .filter(p => p._fullData && p._fullData.length && p._fullData.every(t => t.customdata))
    .reduce((n, p) => n + p._fullData.reduce((m, t) => m + t.x.length, 0), 0)"""


FIRST_POINT_JS = """p => {
    const layout = p._fullLayout, trace = p._fullData.find(t => t.customdata);
    return [layout.xaxis.d2p(trace.x[0]) + layout._size.l,
            layout.yaxis.d2p(trace.y[0]) + layout._size.t];
}"""


def _map_points(page: Page) -> int:
    return page.evaluate(MAP_POINTS_JS)


# -------------------------------------------------------------------------- tests


def test_the_threshold_moves_the_breakpoints(page: Page, app_url: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _load(page, app_url)
    _paste(page, TEXT)
    expect(_sidebar(page).get_by_text("pasted text · text")).to_be_visible()
    _idle(page)  # see _load: switch pages only once the run has finished
    _nav(page, "Semantic")
    expect(page.get_by_role("heading", name="Semantic breakpoints")).to_be_visible()
    analysis = sem.analyze(TEXT, embedder=get_embedder(), buffer_size=1)
    settings = dict(PAGE_DEFAULTS)  # the page's defaults: percentile, the model's window
    default = len(analysis.chunk(threshold=95.0, **settings).breakpoints)
    expect(_metric(page, "Breakpoints")).to_have_text(str(default))
    curve = page.locator(".js-plotly-plot").first
    expect(curve).to_be_visible()
    expect(curve.locator(".scatterlayer .trace")).not_to_have_count(0)

    # Home and End move the slider to 0 and 100: every boundary but the closest, none.
    thumb = page.get_by_role("slider", name="Percentile of the distances")
    thumb.focus()
    thumb.press("Home")
    lowest = len(analysis.chunk(threshold=0.0, **settings).breakpoints)
    assert lowest != default
    expect(_metric(page, "Breakpoints")).to_have_text(str(lowest))
    thumb.press("End")
    expect(_metric(page, "Breakpoints")).to_have_text("0")
    thumb.press("Home")
    expect(_metric(page, "Breakpoints")).to_have_text(str(lowest))
    _idle(page)

    cuts = page.locator(".js-plotly-plot").first.locator(".scatterlayer .trace").first
    cuts.locator("path.point").first.hover(force=True)
    hover = page.locator(".hoverlayer").filter(has_text="similarity cut")
    expect(hover).to_contain_text("before:")
    expect(hover).to_contain_text("after:")
    page.screenshot(path=str(SCREENSHOTS / "semantic.png"), full_page=False)


def test_the_map_draws_every_chunk_and_shows_a_selection(page: Page, app_url: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _load(page, app_url)
    _nav(page, "Embedding map")
    expect(page.get_by_role("heading", name="Embedding map")).to_be_visible()
    count = len(chunking.chunk(GUIDE))
    expect(_metric(page, "Points")).to_have_text(str(count))
    expect(_metric(page, "Projection")).to_have_text("UMAP 2D")
    plot = page.locator(".js-plotly-plot").first
    expect(plot).to_be_visible()
    page.wait_for_function(f"n => ({MAP_POINTS_JS})() === n", arg=count)
    assert _map_points(page) == count
    _idle(page)

    # A click on one point selects it (the map opens in zoom mode, where clicks select).
    # Where plotly draws the first point (WebGL: no element per point), from its axes.
    frame = plot.bounding_box()
    assert frame is not None
    x, y = plot.evaluate(FIRST_POINT_JS)
    page.mouse.click(frame["x"] + x, frame["y"] + y)
    expect(page.get_by_role("heading", name="Selected chunks (1)")).to_be_visible()
    _idle(page)

    # Draw a lasso around the whole plotting area: every point is selected.
    plot.hover()
    plot.locator('.modebar-btn[data-title="Lasso Select"]').click()
    box = plot.locator(".nsewdrag").first.bounding_box()
    assert box is not None
    x0, y0, x1, y1 = (
        box["x"] + 3,
        box["y"] + 3,
        box["x"] + box["width"] - 3,
        box["y"] + box["height"] - 3,
    )
    page.mouse.move(x0, y0)
    page.mouse.down()
    for x, y in ((x1, y0), (x1, y1), (x0, y1), (x0, y0 + 1)):
        page.mouse.move(x, y, steps=8)
    page.mouse.up()
    expect(page.get_by_role("heading", name=f"Selected chunks ({count})")).to_be_visible()
    expect(page.locator(".ce-doc").first).to_be_attached()
    page.screenshot(path=str(SCREENSHOTS / "map.png"), full_page=False)


def test_the_tour_opens_a_page_on_a_sample(page: Page, app_url: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _load(page, app_url)
    _nav(page, "Guided tour")
    expect(page.get_by_role("heading", name="A guided tour of chunking")).to_be_visible()
    expect(page.get_by_text("Contextual retrieval goes further", exact=False)).to_be_visible()
    button = page.get_by_role("button", name="Open fixed-size chunks of the essay")
    expect(button).to_be_enabled()
    _idle(page)
    page.screenshot(path=str(SCREENSHOTS / "home.png"), full_page=False)
    button.click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expected = len(chunking.chunk(ESSAY, "fixed", size=500, overlap=50))
    expect(_metric(page, "Chunks")).to_have_text(f"{expected:,}")
    assert "strategy=fixed" in page.url and "sample=long_essay.txt" in page.url
