"""A PDF in a real browser: its page drawn beside the text with every chunk's
rectangles, a hover that names the chunk, the selected chunk outlined in both views, and
a click on a rectangle that selects its chunk."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

import chunking
from chunking.documents.io import read_bytes
from tests.e2e.harness import open_explore_tab, screenshot_dir
from tests.test_pdf import two_column_report

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)


def test_a_pdf_page_shows_chunk_rectangles_hover_and_selection(page: Page, app_url: str) -> None:
    data = two_column_report(2)
    doc = read_bytes(data, "report.pdf")
    chunks = doc.with_pages(chunking.chunk(doc.text, size=300))
    on_first = [(c.index, b) for c in chunks for b in c.metadata["boxes"] if b[0] == 1]
    page.goto(f"{app_url}/explore")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
    dropzone = sidebar.locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files({"name": "report.pdf", "mimeType": "application/pdf", "buffer": data})
    expect(sidebar.get_by_text("report.pdf · pdf").first).to_be_visible()
    frame = page.frame_locator('iframe[title*="pdf_pages"]')
    expect(frame.locator("div.ce-pdf-page")).to_be_visible()
    size = sidebar.locator('input[type="number"][aria-label="size"]')
    size.fill("300")
    size.press("Enter")
    view = frame.locator("div.ce-pdf-page")
    # the page redrawn at size 300: the first rectangle names its chunk's range at 300
    # (the count of rectangles alone is the same at 600, one per line either way)
    chunk = chunks[on_first[0][0]]
    said = f"Chunk {chunk.index}: start {chunk.start}, end {chunk.end}"
    first = view.locator(".ce-pdf-chunk").first
    expect(first).to_have_attribute("title", re.compile("^" + re.escape(said)))
    expect(page).to_have_url(re.compile(r"[?&]size=300(&|$)"))
    expect(view.locator(".ce-pdf-chunk")).to_have_count(len(on_first))
    expect(view.locator("img")).to_have_count(1)  # the page image, inlined
    src = view.locator("img").get_attribute("src") or ""
    assert src.startswith("data:image/png;base64,")
    expect(view.locator(".ce-pdf-furniture")).to_have_count(2)

    first.hover()
    assert (first.get_attribute("title") or "").startswith(said)

    # selecting from the Chunk input (the Chunks tab) outlines it on the page and in the
    # text (the Boundaries tab)
    last = max(index for index, _ in on_first)
    open_explore_tab(page, "Chunks")
    field = page.locator('input[type="number"][aria-label="Chunk"]')
    field.fill(str(last))
    field.press("Enter")
    expect(field).to_have_value(str(last))
    open_explore_tab(page, "Boundaries")
    expect(view.locator(f'.ce-selected[data-chunk="{last}"]').first).to_be_visible()
    text_view = page.locator("div.ce-doc:not(.ce-legend)").first
    expect(text_view.locator(f'.ce-selected[data-chunks~="{last}"]').first).to_be_visible()

    # clicking a rectangle selects its chunk
    other = next(index for index, _ in on_first if index != last)
    view.locator(f'.ce-pdf-chunk[data-chunk="{other}"]').first.click()
    expect(view.locator(f'.ce-selected[data-chunk="{other}"]').first).to_be_visible()
    expect(text_view.locator(f'.ce-selected[data-chunks~="{other}"]').first).to_be_visible()
    open_explore_tab(page, "Chunks")
    expect(field).to_have_value(str(other))
    open_explore_tab(page, "Boundaries")
    expect(view.locator(f'.ce-selected[data-chunk="{other}"]').first).to_be_visible()
    page.locator('iframe[title*="pdf_pages"]').screenshot(
        path=str(screenshot_dir() / "pdf_page_view.png")
    )
