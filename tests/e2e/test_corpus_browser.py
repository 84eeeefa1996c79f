"""The Corpus page in headless Chromium: a zip of foreign documents (Python modules of
the standard library, a licence file, an HTML page, a binary file) is uploaded, its table
and histogram are shown, the filter narrows the table, a click on a row opens that
document in Explore, and the corpus is still there on the way back.

Screenshots go to ``harness.screenshot_dir()`` (``corpus_*.png``).
"""

from __future__ import annotations

import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import chunking
from chunking.documents.io import read_bytes
from tests.conftest import make_zip
from tests.e2e.harness import screenshot_dir

pytestmark = pytest.mark.browser
expect.set_options(timeout=120_000)

SCREENSHOTS = screenshot_dir()
STDLIB = Path(sysconfig.get_paths()["stdlib"])
RUST_HTML = Path(
    "/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/"
    "complement-project-faq.html"
)
BINARY = bytes(range(256)) * 64
LATIN1 = "Café crème, naïve façade: déjà vu.\n\nÜber die Brücke.\n".encode("latin-1")


def _licence() -> bytes:
    files = metadata.distribution("blingfire").files or []
    licence = next(f for f in files if f.name.startswith("LICENSE"))
    return Path(str(licence.locate())).read_bytes()


def foreign_documents() -> dict[str, bytes]:
    """Documents this project did not write, by their names in the zip."""
    documents = {
        f"stdlib/{name}": (STDLIB / name).read_bytes()
        for name in ("textwrap.py", "shlex.py", "fnmatch.py", "bisect.py")
    }
    documents["blingfire/LICENSE"] = _licence()
    documents["notes/latin1.txt"] = LATIN1
    documents["data/blob.bin.txt"] = BINARY
    if RUST_HTML.is_file():
        documents["rust/complement-project-faq.html"] = RUST_HTML.read_bytes()
    return documents


def _finished(page: Page) -> None:
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')")


def _metric(page: Page, label: str):
    metric = page.get_by_test_id("stMetric").filter(has_text=label)
    return metric.get_by_test_id("stMetricValue")


def _choose(page: Page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox of widget ``key``; a click that lands while the
    table's fragment is being redrawn can be lost, so it is tried again."""
    box = page.locator(f".st-key-{key}").get_by_role("combobox")
    for _ in range(3):
        _finished(page)
        # While a busy machine redraws the table's fragment, the old box can linger
        # beside the new one for a moment: wait until one is left.
        expect(box).to_have_count(1)
        box.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    expect(box).to_have_value(option)
    _finished(page)


def _click_first_row(page: Page) -> None:
    """Tick the selection box of the table's first row (the grid is a canvas)."""
    _finished(page)
    grid = page.locator('[data-testid="stDataFrame"]').last
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)


def test_a_zip_of_foreign_documents(page: Page, app_url: str) -> None:
    documents = foreign_documents()
    count = len(documents)
    page.goto(f"{app_url}/corpus")
    dropzone = page.locator('.st-key-corpus-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files(
        {"name": "foreign.zip", "mimeType": "application/zip", "buffer": make_zip(documents)}
    )
    expect(page.get_by_text(f"{count} of {count} documents")).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    _finished(page)
    expect(_metric(page, "Not read or cut")).to_have_text("1")
    chunked = {
        name: len(chunking.chunk(read_bytes(data, name).text))
        for name, data in documents.items()
        if data is not BINARY
    }
    expected_chunks = sum(chunked.values())
    expect(_metric(page, "Chunks")).to_have_text(f"{expected_chunks:,}")
    page.screenshot(path=str(SCREENSHOTS / "corpus_table.png"), full_page=True)

    _choose(page, "corpus-show", "Not read or cut")
    expect(page.get_by_text(f"1 of {count} documents")).to_be_visible()
    _finished(page)
    _click_first_row(page)  # the binary file: it cannot be opened, and the page says why
    expect(page.get_by_test_id("stAlert").filter(has_text="cannot be opened")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "corpus_unreadable.png"), full_page=True)
    _choose(page, "corpus-show", "All documents")
    _choose(page, "corpus-sort", "Most chunks first")
    _finished(page)

    # the first row is now the document with the most chunks: open it
    most = max(chunked.values())
    _click_first_row(page)
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    expect(_metric(page, "Chunks")).to_have_text(f"{most:,}")
    page.screenshot(path=str(SCREENSHOTS / "corpus_opened_in_explore.png"), full_page=True)

    page.get_by_test_id("stSidebarNav").get_by_text("Corpus", exact=True).click()
    expect(page.get_by_text(f"{count} of {count} documents")).to_be_visible()
    expect(_metric(page, "Chunks")).to_have_text(f"{expected_chunks:,}")


def test_a_zip_that_escapes_is_refused(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/corpus")
    dropzone = page.locator('.st-key-corpus-upload [data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files(
        {"name": "evil.zip", "mimeType": "application/zip", "buffer": make_zip({"../x.txt": b"x"})}
    )
    expect(page.get_by_test_id("stAlert").filter(has_text="leaves the archive")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "corpus_refused.png"), full_page=True)
