"""From an Evaluate results row to the text in headless Chromium (issue 38, point 2):
a default evaluation (with the fast fake model) evaluates the sidebar's configuration
too; a selected row's "Open in Explore" opens that configuration on the document it was
evaluated on, and Explore colours its chunks by the evaluation's traffic."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.harness import screenshot_dir
from tests.e2e.test_corpus_browser import _finished

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)


def _only_model(page: Page, option: str) -> None:
    """Make ``option`` the only embedding model of the form's multiselect."""
    box = page.locator(".st-key-eval-models input")
    box.click()
    box.press("Backspace")  # removes the default model's tag
    box.type(option)
    box.press("Enter")
    box.press("Escape")
    expect(page.locator(".st-key-eval-models")).to_contain_text(option)


def _select_row(page: Page, row: int) -> None:
    """Tick the selection box of the results table's row ``row`` (a canvas grid)."""
    _finished(page)
    grid = page.locator(".st-key-eval-results [data-testid='stDataFrame']")
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 35 * row + 17)


def test_a_results_row_opens_in_explore_with_its_traffic(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/evaluate")
    main = page.get_by_test_id("stMain")
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible()
    _finished(page)
    _only_model(page, "hash")
    main.get_by_role("button", name="Run evaluation").click()
    expect(main.get_by_role("heading", name="Advice")).to_be_visible(timeout=300_000)
    _finished(page)
    # recursive and token at 200 and 400 tokens, then the sidebar's own configuration
    expect(main.get_by_text("Select a row to open its configuration")).to_be_visible()
    _select_row(page, 3)
    expect(main.get_by_text("Selected: token · 400 tokens")).to_be_visible()
    _finished(page)  # the page as it settles, not mid-run with faded elements
    page.screenshot(path=str(screenshot_dir() / "evaluate-row.png"))
    main.get_by_role("button", name="Open in Explore").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible(timeout=120_000)
    _finished(page)
    caption = main.get_by_test_id("stCaptionContainer").filter(has_text="characters").first
    expect(caption).to_contain_text("Token windows · 400 tokens")
    expect(caption).to_contain_text("chatlogs")
    # the evaluation cut this document at these boundaries: its traffic colours them
    expect(main.get_by_text("Colour chunks by")).to_be_visible()
    expect(main.get_by_text("did not cut this document at these boundaries")).to_have_count(0)
