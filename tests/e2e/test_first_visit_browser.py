"""As a new user meets the app (issue 28), in the real browser: a bookmarked page on a
freshly started server, a Markdown specification full of HTML examples, a document
opened from the Corpus page and then replaced by an upload, and a refused upload.

Screenshots go to :func:`tests.e2e.harness.screenshot_dir`.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

import chunking
from chunking.documents.io import read_bytes
from tests.e2e.harness import screenshot_dir, start_server, stop_server

SCREENSHOTS = screenshot_dir()
FENCE = "`" * 32


def spec_like(examples: int = 120) -> str:
    """A document shaped like the CommonMark specification: numbered sections of prose,
    each with examples fenced as ```` ```example ````, Markdown in, HTML out."""
    parts = ["---\ntitle: A Markdown dialect, specified\nversion: 0.1\n...\n\n# Introduction\n"]
    for n in range(examples):
        if n % 10 == 0:
            parts.append(f"\n## {n // 10 + 1}. Blocks of kind {n // 10}\n")
        parts.append(
            f"\nA paragraph of kind {n} is a sequence of lines that cannot be read as any "
            "other block. Its raw content is formed by joining the lines and removing "
            "initial and final whitespace. The following example shows how it renders.\n\n"
            f"{FENCE} example\nline {n} with *emphasis*\n\n> quoted {n}\n.\n"
            f"<p>line {n} with <em>emphasis</em></p>\n<blockquote>\n<p>quoted {n}</p>\n"
            f'</blockquote>\n<div class="note"><a href="#x{n}">x</a></div>\n{FENCE}\n'
        )
    return "".join(parts)


def _sidebar(page: Page):
    return page.get_by_test_id("stSidebar")


def _finished(page: Page) -> None:
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')")


def _metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def _sidebar_upload(page: Page, name: str, data: bytes | Path) -> None:
    _sidebar(page).get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
    dropzone = _sidebar(page).locator('.st-key-upload [data-testid="stFileUploaderDropzoneInput"]')
    if isinstance(data, Path):
        dropzone.set_input_files(data)
    else:
        dropzone.set_input_files({"name": name, "mimeType": "text/plain", "buffer": data})


def _click_first_row(page: Page) -> None:
    """Tick the selection box of the last table's first row (the grid is a canvas)."""
    _finished(page)
    box = page.locator('[data-testid="stDataFrame"]').last.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)


@pytest.mark.parametrize("path, heading", [("explore", "Explore")])
def test_a_bookmarked_page_opens_on_a_fresh_server(
    browser, tmp_path, path: str, heading: str
) -> None:
    """The very first session of a new server asks for /explore: no dialog covers it."""
    process, url = start_server(tmp_path / "server.log")
    try:
        context = browser.new_context(viewport={"width": 1440, "height": 1400})
        page = context.new_page()
        page.goto(f"{url}/{path}")
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=120_000)
        expect(_metric(page, "Chunks")).to_be_visible(timeout=60_000)
        _finished(page)
        page.screenshot(path=str(SCREENSHOTS / f"fresh_{path}.png"))
        assert page.get_by_text("Page not found").count() == 0
        assert page.get_by_role("dialog").count() == 0
        assert urlsplit(page.url).path == f"/{path}"
        context.close()
    finally:
        stop_server(process)


def test_a_markdown_spec_with_html_examples_is_suggested_markdown(page: Page, app_url: str) -> None:
    spec = spec_like()
    page.goto(f"{app_url}/explore")
    _sidebar_upload(page, "spec.md", spec.encode())
    box = _sidebar(page).get_by_text("Suggested for this")
    expect(box).to_be_visible()
    expect(_sidebar(page).get_by_text("Markdown sections").first).to_be_visible()
    _sidebar(page).get_by_role("button", name="Use the suggestion").click()
    _finished(page)
    caption = page.get_by_test_id("stMain").get_by_text("spec.md ·")
    expect(caption).to_contain_text("— Markdown sections")
    page.screenshot(path=str(SCREENSHOTS / "spec_like_markdown.png"))


@pytest.mark.parametrize("upload_before", [False, True])
def test_an_upload_replaces_a_document_opened_from_the_corpus(
    page: Page, app_url: str, upload_before: bool
) -> None:
    first = b"# Corpus note\n\nA short note opened from the corpus table.\n"
    page.goto(f"{app_url}/explore")
    if upload_before:  # the sidebar already holds an upload when the corpus opens one
        _sidebar_upload(page, "earlier.txt", b"An earlier upload, replaced twice.\n")
        expect(page.get_by_test_id("stMain").get_by_text("earlier.txt").first).to_be_visible()
    page.get_by_test_id("stSidebarNav").get_by_text("Corpus", exact=True).click()
    dropzone = page.locator('.st-key-corpus-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files({"name": "corpus_note.md", "mimeType": "text/plain", "buffer": first})
    expect(page.get_by_text("1 of 1 documents")).to_be_visible()
    _click_first_row(page)
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(page.get_by_text("corpus_note.md").first).to_be_visible()

    replacement = ("A different document. " * 40 + "\n\n") * 30
    expected = len(chunking.chunk(read_bytes(replacement.encode(), "mine.txt").text))
    _sidebar_upload(page, "mine.txt", replacement.encode())
    _finished(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("mine.txt").first).to_be_visible()
    expect(_metric(page, "Chunks")).to_have_text(f"{expected:,}")
    expect(_sidebar(page).get_by_text("opened from the Corpus page")).to_have_count(0)
    page.screenshot(path=str(SCREENSHOTS / "corpus_then_upload.png"), full_page=True)


def test_an_upload_over_the_limit_is_refused_in_place(
    page: Page, app_url: str, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"word " * (12 * 1024 * 1024))  # 60 MB, over the default 50 MB
    page.goto(f"{app_url}/explore")
    _sidebar_upload(page, "huge.txt", huge)
    # The uploader holds the app's own limit: the browser refuses the file at once (it
    # never reaches the app), the uploader says the limit and the page says why.
    expect(_sidebar(page).get_by_role("alert")).to_contain_text(
        "50.0MB or smaller", timeout=120_000
    )
    expect(page.get_by_test_id("stMain")).to_contain_text("over the app's limit of 50 MB")
    expect(page.get_by_test_id("stMain")).not_to_contain_text("huge.txt")
    page.screenshot(path=str(SCREENSHOTS / "refused_upload.png"))
