"""The "Write to a vector database" box as a new user meets it (issue 38, point 4), in
headless Chromium on a server whose data folder is a temporary one: no error before
anything is typed, the folder below the data folder, and Explore and Corpus starting
at the same embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.harness import open_explore_tab, screenshot_dir, start_server, stop_server
from tests.e2e.test_corpus_browser import _finished

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)


def _box(page: Page, prefix: str) -> tuple[str, str]:
    """The box's folder and model as shown, after checking that it shows no error."""
    main = page.get_by_test_id("stMain")
    folder = page.locator(f".st-key-{prefix}-sink_path")
    folder.scroll_into_view_if_needed()
    expect(folder.locator("input")).to_have_value("vectors")
    _finished(page)
    assert main.get_by_test_id("stAlertContentError").count() == 0
    assert main.get_by_text("write KIND:PATH").count() == 0
    label = folder.get_by_test_id("stWidgetLabel").inner_text()
    model = page.locator(f".st-key-{prefix}-sink_model").get_by_role("combobox").input_value()
    return label, model


def test_the_vector_box_starts_clean_below_the_data_folder(browser, tmp_path: Path) -> None:
    data = tmp_path / "data"
    process, url = start_server(tmp_path / "server.log", env={"CHUNK_EXPLORER_DATA_DIR": str(data)})
    try:
        context = browser.new_context(viewport={"width": 1440, "height": 2000})
        page = context.new_page()
        page.goto(url)  # the home page first (a fresh server's first deep link, #9992)
        expect(page.get_by_role("heading", name="A guided tour of chunking")).to_be_visible(
            timeout=120_000
        )
        page.goto(f"{url}/explore")
        expect(page.get_by_role("heading", name="Explore", exact=True)).to_be_visible(
            timeout=120_000
        )
        # the box is drawn once its tab and its expander are opened, and both are open
        # again after another page was shown
        open_explore_tab(page, "Download and code")
        page.get_by_text("Write to a vector database", exact=True).click()
        _box(page, "explore")
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
        expect(page.get_by_role("heading", name="Compare", exact=True)).to_be_visible()
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Explore").click()
        expect(page.get_by_role("heading", name="Explore", exact=True)).to_be_visible()
        explore_label, explore_model = _box(page, "explore")
        page.screenshot(path=str(screenshot_dir() / "explore-vector-box.png"))
        page.goto(f"{url}/corpus")
        main = page.get_by_test_id("stMain")
        main.get_by_role("button", name="Use the bundled samples as a corpus").click()
        _finished(page)
        corpus_label, corpus_model = _box(page, "corpus")
        context.close()
    finally:
        stop_server(process)
    for label in (explore_label, corpus_label):
        assert f"below {data}" in label
        assert str(Path(__file__).resolve().parents[2]) not in label  # not the install
    assert explore_model and explore_model == corpus_model
