"""End-to-end tests in headless Chromium against a real ``streamlit run app.py`` server.

What a person would do: load the app, upload a file, change the chunk size, see the
numbers and the histogram change, open every page, and make sure a document full of
markup is shown as text. Screenshots of every page go to ``harness.screenshot_dir()``
(``docs/refresh_screenshots.py`` refreshes docs/screenshots/ with them).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

import chunking
from chunking.documents.io import read_path
from tests.e2e.harness import open_explore_tab, screenshot_dir

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)  # the first run of a cold server imports a lot

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = screenshot_dir()  # a temporary folder unless CHUNK_EXPLORER_SCREENSHOTS
ESSAY = ROOT / "sample_docs" / "long_essay.txt"
HOSTILE = (
    "A document that contains markup.\n\n"
    "<script>alert(1)</script>\n"
    "<img src=x onerror=alert(2)>\n"
    '<a href="javascript:alert(3)">x</a>\n'
    "<!-- hidden -->\n"
    "It must all be shown as text.\n"
)


# ------------------------------------------------------------------------ helpers


def _sidebar(page: Page):
    return page.get_by_test_id("stSidebar")


def _metric(page: Page, label: str):
    metric = page.get_by_test_id("stMetric").filter(has_text=label)
    return metric.get_by_test_id("stMetricValue")


#: The histogram (the page's first chart) as drawn: how many values, where the limit is;
#: null while a rerun has taken it off the page.
_HISTOGRAM = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    if (!plot || !plot.data || !plot.layout || !plot.layout.shapes) return null;
    return [plot.data[0].x.length, plot.layout.shapes[0].x0];
}"""


def _expect_histogram(page: Page, values: int, limit: float) -> None:
    """Wait until the histogram shows ``values`` chunk sizes and the size limit at
    ``limit`` (a rerun redraws it after the metrics above it, and may take it off the
    page meanwhile); fail with what it shows otherwise."""
    with contextlib.suppress(PlaywrightTimeoutError):  # the assertion says what it shows
        page.wait_for_function(
            f"([n, limit]) => {{ const h = ({_HISTOGRAM})(); "
            "return h !== null && h[0] === n && h[1] === limit; }",
            arg=[values, limit],
        )
    assert page.evaluate(_HISTOGRAM) == [values, limit]


def _load(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator(".ce-doc .ce-mark").first).to_be_visible()


def _settled(page: Page) -> None:
    """Wait until the app has finished its run (no "Running" icon in the header): a
    click made while a slow run is still drawing the page can be overtaken by it."""
    expect(page.get_by_test_id("stStatusWidgetRunningIcon")).to_have_count(0)
    expect(page.get_by_test_id("stStatusWidgetRunningManIcon")).to_have_count(0)


def _upload(page: Page, name: str, data: bytes, mime: str = "text/plain") -> None:
    _sidebar(page).get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
    dropzone = _sidebar(page).locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files({"name": name, "mimeType": mime, "buffer": data})


def _set_number(page: Page, label: str, value: int) -> None:
    field = _sidebar(page).locator(f'input[type="number"][aria-label="{label}"]')
    field.fill(str(value))
    field.press("Enter")


# -------------------------------------------------------------------------- tests


def test_upload_then_change_the_size(page: Page, app_url: str) -> None:
    _load(page, f"{app_url}/explore")
    guide = read_path(ROOT / "sample_docs" / "technical_guide.md").text
    expect(_metric(page, "Chunks")).to_have_text(str(len(chunking.chunk(guide))))

    essay = ESSAY.read_text(encoding="utf-8")
    _upload(page, "essay.txt", essay.encode("utf-8"))
    first = len(chunking.chunk(essay))
    expect(_metric(page, "Chunks")).to_have_text(f"{first:,}")
    expect(_sidebar(page).get_by_text("essay.txt · text")).to_be_visible()
    open_explore_tab(page, "Sizes")  # it stays open while the size changes
    _expect_histogram(page, first, chunking.get_strategy("recursive").param("size").default)

    _set_number(page, "size", 400)
    second = len(chunking.chunk(essay, size=400))
    assert second != first
    expect(_metric(page, "Chunks")).to_have_text(f"{second:,}")
    _expect_histogram(page, second, 400)
    assert "size=400" in page.url


def test_every_page_draws_its_charts(page: Page, app_url: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(app_url)  # the home page: the guided tour, the sample already cut
    expect(page.get_by_role("heading", name="A guided tour of chunking")).to_be_visible()
    guide = read_path(ROOT / "sample_docs" / "technical_guide.md").text
    expect(page.get_by_test_id("stMain")).to_contain_text(
        f"cuts it into {len(chunking.chunk(guide))} chunks"
    )
    page.get_by_test_id("stPageLink").get_by_text("See them in Explore").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(page.locator(".ce-doc .ce-mark").first).to_be_visible()
    expect(_metric(page, "Chunks")).to_have_text(str(len(chunking.chunk(guide))))
    _settled(page)
    page.screenshot(path=str(SCREENSHOTS / "explore.png"))
    open_explore_tab(page, "Sizes")
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "explore-sizes.png"))

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Compare")).to_be_visible()
    charts = page.locator(".js-plotly-plot")
    expect(charts).to_have_count(3)
    for i in range(3):
        expect(charts.nth(i)).to_be_visible()
        expect(charts.nth(i).locator(".plot-container")).to_be_visible()
    expect(page.locator(".ce-doc")).to_have_count(2)  # one text panel for A, one for B
    page.screenshot(path=str(SCREENSHOTS / "compare.png"))

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()  # its tab kept open

    # every other page of the navigation: its heading, no error, and the charts it
    # draws on arrival (the Semantic curve and strip, the map); the others draw theirs
    # after a run
    pages = {
        "Corpus": ("Corpus", 0),
        "Semantic": ("Semantic breakpoints", 2),
        "Embedding map": ("Embedding map", 1),
        "Evaluate": ("Evaluate", 0),
        "Tune": ("Tune", 0),
        "LLM tools": ("LLM tools", 0),
    }
    nav = page.get_by_test_id("stSidebarNav")
    assert nav.get_by_role("link").count() == len(pages) + 3  # with the tour, Explore, Compare
    for link, (heading, charts) in pages.items():
        nav.get_by_role("link", name=link).click()
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        drawn = page.get_by_test_id("stMain").locator(".js-plotly-plot")
        if charts:
            expect(drawn).to_have_count(charts, timeout=300_000)  # embedding a document
            for i in range(charts):
                expect(drawn.nth(i).locator(".plot-container")).to_be_visible()
        expect(page.get_by_test_id("stException")).to_have_count(0)
        slug = link.lower().replace(" ", "_")
        page.screenshot(path=str(SCREENSHOTS / f"page_{slug}.png"))


def test_a_link_opens_the_compare_page_with_its_settings(page: Page, app_url: str) -> None:
    _load(page, f"{app_url}/compare?strategy=fixed&size=300&overlap=30&sample=long_essay.txt")
    expect(page.get_by_role("heading", name="Compare")).to_be_visible()
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    essay = ESSAY.read_text(encoding="utf-8")
    count = len(chunking.chunk(essay, "fixed", size=300, overlap=30))
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible()
    expect(page.get_by_text("A · Fixed size · 300 chars · overlap 30").first).to_be_visible()
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Explore").click()
    expect(_metric(page, "Chunks")).to_have_text(f"{count:,}")


def test_markup_in_a_document_is_shown_as_text(
    page: Page, app_url: str, dialogs: list[str]
) -> None:
    _load(page, f"{app_url}/explore")
    _upload(page, "hostile<img src=x onerror=alert(4)>.txt", HOSTILE.encode("utf-8"))
    views = page.locator(".ce-doc").filter(has_text="It must all be shown as text.")
    expect(views).to_have_count(1)  # the boundary view
    for tab in ("Boundaries", "Chunks"):  # then the selected chunk alone
        open_explore_tab(page, tab)
        view = views.first
        expect(view).to_be_visible()
        expect(view).to_contain_text("<script>alert(1)</script>")
        expect(view).to_contain_text("<img src=x onerror=alert(2)>")
        expect(view).to_contain_text('<a href="javascript:alert(3)">x</a>')
        expect(view).to_contain_text("<!-- hidden -->")
    page.wait_for_timeout(500)  # give any injected handler a chance to fire
    assert dialogs == []
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator('a[href^="javascript:"]').count() == 0
    assert page.locator(".ce-doc script").count() == 0
    page.screenshot(path=str(SCREENSHOTS / "markup-as-text.png"))


def test_a_binary_upload_shows_an_error_not_a_traceback(page: Page, app_url: str) -> None:
    _load(page, f"{app_url}/explore")
    _upload(page, "blob.txt", bytes(range(256)) * 16, "application/octet-stream")
    alert = _sidebar(page).get_by_test_id("stAlertContentError")
    expect(alert).to_contain_text("looks like a binary file")
    expect(page.get_by_test_id("stMain")).to_contain_text("Pick a sample")
    assert page.get_by_test_id("stException").count() == 0


def test_downloads_hold_the_chunks(page: Page, app_url: str) -> None:
    _load(page, f"{app_url}/explore")
    guide = read_path(ROOT / "sample_docs" / "technical_guide.md").text
    chunks = chunking.chunk(guide)
    expect(_metric(page, "Chunks")).to_have_text(str(len(chunks)))
    open_explore_tab(page, "Download and code")
    with page.expect_download() as download_info:
        page.get_by_test_id("stDownloadButton").filter(has_text="JSONL").click()
    lines = Path(download_info.value.path()).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(r["start"], r["end"], r["text"]) for r in rows] == [
        (c.start, c.end, c.text) for c in chunks
    ]
    with page.expect_download() as download_info:
        page.get_by_test_id("stDownloadButton").filter(has_text="Config (JSON)").first.click()
    config = json.loads(Path(download_info.value.path()).read_text(encoding="utf-8"))
    assert chunking.Config.from_dict(config) == chunking.Config.create("recursive")


def test_the_tour_keeps_the_upload_and_brings_it_back(page: Page, app_url: str) -> None:
    _load(page, f"{app_url}/explore")
    essay = ESSAY.read_text(encoding="utf-8")
    _upload(page, "my-essay.txt", essay.encode("utf-8"))
    mine = f"{len(chunking.chunk(essay)):,}"
    expect(_metric(page, "Chunks")).to_have_text(mine)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Guided tour").click()
    expect(page.get_by_role("heading", name="A guided tour of chunking")).to_be_visible()
    expect(page.get_by_text("about 25 s the first time").first).to_be_visible()
    main = page.get_by_test_id("stMain")
    loaded = main.get_by_test_id("stMarkdown").filter(has_text="Loaded now:")
    expect(loaded).to_contain_text("my-essay.txt")
    # the tour page drawn to its last stop, and its run over, before the click
    expect(
        page.get_by_role("button", name="Score paragraph chunks against a reader's cuts")
    ).to_be_visible()
    _settled(page)
    page.get_by_role("button", name="Open recursive chunks of the essay").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(page.get_by_test_id("stMain").get_by_text("Try it:")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "tour_hint.png"))
    _sidebar(page).get_by_role("button", name="Back to my uploaded file").click()
    expect(_sidebar(page).get_by_text("my-essay.txt · text")).to_be_visible()
    _settled(page)  # while the run draws, the last run's metrics can stand beside the new
    expect(_metric(page, "Chunks")).to_have_text(mine)
    expect(page.get_by_test_id("stMain").get_by_text("Try it:")).to_have_count(0)
