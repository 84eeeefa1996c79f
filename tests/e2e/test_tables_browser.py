"""Tables in the browser: a Markdown table cut between rows shows, in Explore's text
view, the header each later group carries above it, and its heading and caption start
the first group instead of being a tiny chunk of their own."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

import chunking
from tests.test_table_headings import HEADING, SPEC

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)

HEADER = "| item | stock |\n|---|---|"


def test_a_cut_table_shows_its_carried_header_above_each_group(page: Page, app_url: str) -> None:
    chunks = chunking.chunk(SPEC, "markdown", size=160, unit="tokens")
    groups = [c for c in chunks if "table_group" in c.metadata]
    assert len(groups) > 2 and all(c.text != HEADING for c in chunks)
    page.goto(f"{app_url}/explore?strategy=markdown&size=160&unit=tokens")
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
    dropzone = sidebar.locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files(
        {"name": "stock.md", "mimeType": "text/markdown", "buffer": SPEC.encode()}
    )
    metric = page.get_by_test_id("stMetric").filter(has_text="Chunks")
    expect(metric.get_by_test_id("stMetricValue")).to_have_text(str(len(chunks)))
    view = page.locator(".ce-doc:not(.ce-legend)").first  # the page of the document
    carried = view.locator(".ce-carried")
    expect(carried).to_have_count(len(groups) - 1)
    expect(carried.first).to_be_visible()
    assert carried.first.get_attribute("data-header") == HEADER
    drawn = page.evaluate(
        "el => getComputedStyle(el, '::before').content", carried.first.element_handle()
    )
    assert "item" in drawn and "stock" in drawn  # the header is drawn, not only stored
    # the first group's mark stands right before the heading: no chunk of its own
    first = groups[0]
    mark = view.locator(f'.ce-mark[data-i="{first.index}"]')
    expect(mark).to_have_count(1)
    following = page.evaluate(
        "el => el.nextSibling ? el.nextSibling.textContent : ''", mark.element_handle()
    )
    assert following.startswith("## Stock levels")
