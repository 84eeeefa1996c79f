"""A PDF in a real browser: its page drawn beside the text with every chunk's
rectangles, a hover that names the chunk, and the selected chunk outlined."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

import chunking
from chunking.documents.io import read_bytes
from tests.e2e.harness import screenshot_dir
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
    expect(page.locator("div.ce-pdf-page")).to_be_visible()
    size = sidebar.locator('input[type="number"][aria-label="size"]')
    size.fill("300")
    size.press("Enter")
    view = page.locator("div.ce-pdf-page")
    expect(view).to_be_visible()
    expect(view.locator("img")).to_have_count(1)  # the page image, inlined
    expect(view.locator(".ce-pdf-chunk")).to_have_count(len(on_first))
    expect(view.locator(".ce-pdf-furniture")).to_have_count(2)

    first = view.locator(".ce-pdf-chunk").first
    first.hover()
    title = first.get_attribute("title") or ""
    chunk = chunks[on_first[0][0]]
    assert title.startswith(f"Chunk {chunk.index}: start {chunk.start}, end {chunk.end}")

    last = max(index for index, _ in on_first)
    field = page.locator('input[type="number"][aria-label="Chunk"]')
    field.fill(str(last))
    field.press("Enter")
    selected = page.locator(f'div.ce-pdf-page .ce-selected[data-chunk="{last}"]')
    expect(selected.first).to_be_visible()
    view.screenshot(path=str(screenshot_dir() / "pdf_page_view.png"))
