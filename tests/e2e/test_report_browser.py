"""The standalone HTML report in headless Chromium, offline: every network request is
blocked and recorded, the chart must still be drawn, and hostile document text must
stay text (no dialog, no element of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from chunking import Config
from chunking.cli import main
from chunking.core import run
from tests.conftest import write
from tests.e2e.harness import screenshot_dir
from tests.e2e.test_browser import HOSTILE

pytestmark = pytest.mark.browser


@pytest.fixture
def offline(browser) -> Iterator[tuple[Page, list[str], list[str]]]:
    """A page with no network: every request but the report's own file is aborted and
    recorded; JavaScript dialogs are recorded and dismissed."""
    context = browser.new_context(offline=True, viewport={"width": 1300, "height": 1400})
    context.set_default_timeout(60_000)
    requests: list[str] = []
    dialogs: list[str] = []

    def block(route) -> None:
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            requests.append(url)
            route.abort()

    context.route("**/*", block)
    tab = context.new_page()
    tab.on("request", lambda r: None if r.url.startswith("file://") else requests.append(r.url))
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        yield tab, requests, dialogs
    finally:
        context.close()


def _write_report(tmp_path: Path, text: str, *flags: str) -> Path:
    source = write(tmp_path / "hostile.md", text)
    out = tmp_path / "report.html"
    argv = ["report", str(source), "--strategy", "recursive", "--size", "80", *flags]
    assert main([*argv, "--output", str(out)]) == 0
    return out


def test_report_opens_offline_and_draws_its_chart(tmp_path, offline):
    page, requests, dialogs = offline
    text = HOSTILE * 3
    other = write(tmp_path / "fixed.json", Config.create("fixed", size=60, overlap=0).to_json())
    report = _write_report(tmp_path, text, "--compare", str(other))
    page.goto(report.as_uri())
    histogram = page.locator("#ce-histogram")
    expect(histogram.locator(".main-svg").first).to_be_visible()
    chunks = run(text, Config.create("recursive", size=80))
    assert page.evaluate("document.getElementById('ce-histogram').data[0].x.length") == len(chunks)
    bars = page.locator("#ce-histogram .bars path")
    assert bars.count() > 0  # the bars are drawn, not only the axes
    expect(page.locator("#ce-strip .main-svg").first).to_be_visible()
    page.screenshot(path=str(screenshot_dir() / "report-offline.png"), full_page=True)
    assert requests == []
    assert dialogs == []


def test_report_shows_hostile_text_as_text(tmp_path, offline):
    page, requests, dialogs = offline
    page.goto(_write_report(tmp_path, HOSTILE).as_uri())
    view = page.locator(".ce-doc").last
    expect(view).to_contain_text("<script>alert(1)</script>")
    expect(view).to_contain_text("<img src=x onerror=alert(2)>")
    expect(view).to_contain_text('<a href="javascript:alert(3)">x</a>')
    assert view.locator("script, img, a, iframe").count() == 0
    assert page.evaluate("document.images.length") == 0
    assert "hidden" in view.inner_text()  # the comment is text, not a comment
    page.mouse.move(10, 10)
    view.get_by_text("It must all be shown as text.").hover()
    assert requests == []
    assert dialogs == []
