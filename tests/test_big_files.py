"""Big files (issue 37, point 4; issue 38, point 11): the sidebar's uploader states the
app's own limit (not Streamlit's ``server.maxUploadSize``), a file over it is refused
with the limit, the reason and what to do (the server's setting, never a CLI flag),
and a large upload opens with its text view drawn a page at a time.

AppTest for what the app draws; one real-browser check (Chromium) of the text the user
sees in the uploader and under a file the browser refused for its size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from pages import sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 300
BOOK = ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _upload_box() -> AppTest:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    return _ok(at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run())


def _says_limit_reason_and_remedy(text: str, limit: str) -> None:
    assert f"the app's limit of {limit} per file" in text, text
    assert "memory" in text  # why there is a limit
    assert "Split the file" in text and sidebar.MAX_MB_ENV in text  # what to do
    assert "--max-mb" not in text and "CLI" not in text and "200" not in text


@pytest.mark.parametrize(
    ("megabytes", "shown_mb", "limit"),
    [(None, 50, "50 MB"), ("2", 2, "2 MB"), ("0.5", 1, "512 KB")],
)
def test_the_uploader_states_the_apps_limit_and_why(
    monkeypatch: pytest.MonkeyPatch, megabytes: str | None, shown_mb: int, limit: str
) -> None:
    if megabytes is None:
        monkeypatch.delenv(sidebar.MAX_MB_ENV, raising=False)
    else:
        monkeypatch.setenv(sidebar.MAX_MB_ENV, megabytes)
    at = _upload_box()
    uploader = at.file_uploader(key=sidebar.UPLOAD_KEY)
    # what the browser writes as "<N>MB per file" and enforces, not server.maxUploadSize
    assert uploader.proto.max_upload_size_mb == shown_mb
    assert int(st.get_option("server.maxUploadSize")) != shown_mb
    _says_limit_reason_and_remedy(uploader.help, limit)
    hints = [str(i.value) for i in at.sidebar.info if "Upload a file above" in str(i.value)]
    assert len(hints) == 1, [str(i.value) for i in at.sidebar.info]
    _says_limit_reason_and_remedy(hints[0], limit)


def test_a_limit_above_the_servers_own_says_both_must_be_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server_mb = int(st.get_option("server.maxUploadSize"))
    monkeypatch.setenv(sidebar.MAX_MB_ENV, str(server_mb + 100))
    at = _upload_box()
    uploader = at.file_uploader(key=sidebar.UPLOAD_KEY)
    assert uploader.proto.max_upload_size_mb == server_mb  # what a request may carry
    assert f"server.maxUploadSize, {server_mb} MB, caps it" in uploader.help


def test_a_file_over_the_limit_is_refused_with_the_limit_the_reason_and_the_remedy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AppTest hands the file to the server as the browser never would (it refuses
    files over the uploader's limit itself): the app's own check says the same."""
    monkeypatch.setenv(sidebar.MAX_MB_ENV, "1")
    at = _upload_box()
    data = b"A sentence of a long book. " * 60_000  # 1.5 MB
    uploader = at.file_uploader(key=sidebar.UPLOAD_KEY)
    at = _ok(uploader.set_value(("big.txt", data, "text/plain")).run())
    errors = [str(e.value) for e in at.sidebar.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith("big.txt is 1.5 MB, over the app's limit of 1 MB per file")
    _says_limit_reason_and_remedy(errors[0], "1 MB")
    assert "\n" not in errors[0]
    assert at.session_state["_ce_source"] == errors[0]  # no document: nothing is read


def _big_text(megabytes: float) -> bytes:
    book = BOOK.read_bytes()
    return (book * (int(megabytes * 2**20) // len(book) + 1))[: int(megabytes * 2**20)]


@pytest.mark.xdist_group("big_files_apptest")
def test_a_large_upload_opens_and_its_text_view_draws_one_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 5 MB novel opens on Explore without an error and the boundary view holds one
    page of it, not the whole text (20 MB, measured in the browser: the same page size,
    see the closing note)."""
    from chunking.documents.io import read_bytes

    data = _big_text(5)
    text = read_bytes(data, "big.txt").text
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    at = _ok(at.switch_page("pages/explore_page.py").run())
    at = _ok(at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run())
    uploader = at.file_uploader(key=sidebar.UPLOAD_KEY)
    at = _ok(uploader.set_value(("big.txt", data, "text/plain")).run())
    assert not at.error, [str(e.value) for e in at.error]
    source = at.session_state["_ce_source"]
    assert isinstance(source, sidebar.Source) and source.document.text == text
    drawn = sum(len(str(h.proto.body)) for h in at.get("html"))
    drawn += sum(len(str(m.value)) for m in at.markdown)
    assert drawn < len(text) / 10, drawn  # a page, not the 5 MB document
    assert any("page" in str(n.label).lower() for n in at.number_input)  # and a page number


# ------------------------------------------------------------------- in the browser


@pytest.fixture(scope="module")
def limited_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with a 1 MB limit (so that a refused file is small to send)."""
    from tests.e2e.harness import start_server, stop_server

    log = tmp_path_factory.mktemp("big_files") / "server.log"
    process, url = start_server(log, env={sidebar.MAX_MB_ENV: "1"})
    try:
        yield url
    finally:
        stop_server(process)


@pytest.mark.browser
def test_the_browser_shows_the_apps_limit_and_explains_a_refused_file(
    limited_app: str,
) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.harness import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1400})
            page.set_default_timeout(120_000)
            page.goto(limited_app)
            bar = page.get_by_test_id("stSidebar")
            bar.get_by_test_id("stRadio").get_by_text("Upload", exact=True).click()
            box = bar.locator(".st-key-upload")
            instructions = box.get_by_test_id("stFileUploaderDropzoneInstructions")
            instructions.wait_for()
            assert "1MB per file" in instructions.inner_text()
            assert "200MB" not in box.inner_text()
            box.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
                {"name": "big.txt", "mimeType": "text/plain", "buffer": _big_text(1.5)}
            )
            refused = box.get_by_test_id("stFileChip")
            refused.wait_for()
            assert refused.get_attribute("aria-invalid") == "true"
            # the browser's own refusal, in the uploader:
            assert "File must be 1.0MB or smaller" in box.inner_text()
            hint = bar.get_by_test_id("stAlert").filter(has_text="Upload a file above")
            _says_limit_reason_and_remedy(" ".join(hint.inner_text().split()), "1 MB")
            assert not bar.get_by_test_id("stAlertContentError").count()
        finally:
            browser.close()
