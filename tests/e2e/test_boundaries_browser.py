"""The boundary editor in the real browser: open the tour's "Where would you cut?" stop,
add a boundary by clicking between two words, remove one by clicking its mark, undo, save
the gold file, load it in a new session and see the scores against it.

Screenshots go to :func:`tests.e2e.harness.screenshot_dir`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Frame, Page, expect

from chunking import Config, run
from chunking.evaluation.boundaries import boundary_scores
from chunking.evaluation.gold import read_gold
from tests.e2e.harness import screenshot_dir

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ESSAY = (ROOT / "sample_docs" / "long_essay.txt").read_text(encoding="utf-8")
SHOTS = screenshot_dir()
#: Where the test clicks: inside "varroa", in the middle of the bees' third paragraph.
WORD = "parasitic"


def _finished(page: Page) -> None:
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')")


def _metric(page: Page, label: str):
    main = page.get_by_test_id("stMain")
    return main.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def _editor(page: Page) -> Frame:
    handle = page.locator('iframe[title*="boundary_editor"]').element_handle(timeout=120_000)
    assert handle is not None
    frame = handle.content_frame()
    assert frame is not None
    frame.wait_for_selector(".seg")
    return frame


def _click_offset(page: Page, frame: Frame, offset: int) -> None:
    """Click the text of the editor at the character ``offset`` (a Python offset; the
    essay is ASCII, so it is the browser's too)."""
    page.locator('iframe[title*="boundary_editor"]').scroll_into_view_if_needed()
    frame.evaluate(
        """(at) => {
            const segs = Array.from(document.querySelectorAll('.seg'));
            const seg = segs.filter(s => Number(s.dataset.start) <= at).pop();
            const range = document.createRange();
            range.setStart(seg.firstChild, at - Number(seg.dataset.start));
            range.setEnd(seg.firstChild, at - Number(seg.dataset.start) + 1);
            const view = document.getElementById('text');
            const box = view.getBoundingClientRect();
            view.scrollTop += range.getBoundingClientRect().top - box.top - box.height / 2;
        }""",
        offset,
    )
    box = frame.evaluate(
        """(at) => {
            const segs = Array.from(document.querySelectorAll('.seg'));
            const seg = segs.filter(s => Number(s.dataset.start) <= at).pop();
            const range = document.createRange();
            range.setStart(seg.firstChild, at - Number(seg.dataset.start));
            range.setEnd(seg.firstChild, at - Number(seg.dataset.start) + 1);
            const r = range.getBoundingClientRect();
            return {x: r.left + r.width / 2, y: r.top + r.height / 2};
        }""",
        offset,
    )
    outer = page.locator('iframe[title*="boundary_editor"]').bounding_box()
    assert outer is not None
    page.mouse.click(outer["x"] + box["x"], outer["y"] + box["y"])


def test_draw_save_reload_and_score(page: Page, app_url: str, tmp_path: Path) -> None:
    gold = read_gold(ROOT / "sample_gold" / "long_essay.gold.json", ESSAY)
    page.goto(app_url)
    page.get_by_role("button", name="Score paragraph chunks against a reader's cuts").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible(timeout=120_000)
    _finished(page)
    frame = _editor(page)
    count = frame.locator("#count")
    expect(count).to_contain_text("40 boundaries · 41 segments")
    expect(frame.locator(".mark")).to_have_count(40)
    expect(_metric(page, "Recall")).to_have_text("1.000")

    # Add: a click inside a word cuts at the nearer word start ("parasitic" itself).
    at = ESSAY.index(WORD) + 2
    _click_offset(page, frame, at)
    expect(count).to_contain_text("41 boundaries · 42 segments")
    _finished(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("41 boundaries", exact=False).first).to_be_visible()
    expect(_metric(page, "Recall")).to_have_text(f"{40 / 41:.3f}")

    # Remove: click the first mark (the end of the introduction); undo brings it back.
    frame.locator(".mark").first.click()
    expect(count).to_contain_text("40 boundaries")
    frame.get_by_role("button", name="Undo").click()
    expect(count).to_contain_text("41 boundaries")
    _finished(page)
    expect(_metric(page, "Recall")).to_have_text(f"{40 / 41:.3f}")
    editor = page.get_by_test_id("stExpander").filter(has_text="Edit boundaries")
    try:
        editor.screenshot(path=str(SHOTS / "boundary_editor.png"))
    except PlaywrightError:  # a late redraw replaced the box while it was taken: again
        _finished(page)
        editor.screenshot(path=str(SHOTS / "boundary_editor.png"))

    # Save the gold file.
    with page.expect_download() as download:
        page.get_by_role("button", name="Save the gold (JSON)").click()
    saved = tmp_path / "long_essay.gold.json"
    download.value.save_as(saved)
    drawn = read_gold(saved, ESSAY)
    assert drawn.boundaries == tuple(sorted({*gold.boundaries, ESSAY.index(WORD)}))

    # Load it in a new session (next week) and see the scores against it.
    fresh = page.context.browser.new_page(viewport={"width": 1440, "height": 2000})
    try:
        fresh.goto(app_url)
        fresh.get_by_role("button", name="Score paragraph chunks against a reader's cuts").click()
        expect(fresh.get_by_role("heading", name="Explore")).to_be_visible(timeout=120_000)
        _finished(fresh)
        drop = (
            fresh.get_by_test_id("stFileUploader")
            .filter(has_text="Load a gold file")
            .locator('[data-testid="stFileUploaderDropzoneInput"]')
        )
        drop.set_input_files(saved)
        _finished(fresh)
        expect(_editor(fresh).locator("#count")).to_contain_text("41 boundaries")
        chunks = run(ESSAY, Config.create("paragraph", size=600, unit="chars"))
        expected = boundary_scores(ESSAY, drawn.boundaries, chunks)
        expect(_metric(fresh, "Recall")).to_have_text(f"{expected['recall']:.3f}")
        expect(_metric(fresh, "B")).to_have_text(f"{expected['b']:.3f}")
        # A gold file for another text is refused in place.
        other = tmp_path / "other.gold.json"
        other.write_text(saved.read_text().replace(drawn.sha256, "0" * 64), encoding="utf-8")
        drop.set_input_files(other)
        _finished(fresh)
        expect(
            fresh.get_by_test_id("stAlert").filter(has_text="drawn on another text")
        ).to_be_visible()
    finally:
        fresh.close()


def test_clicks_snap_to_sentence_and_line_starts(page: Page, app_url: str) -> None:
    from chunking.engine.spans import sentence_spans

    starts = [a for a, _ in sentence_spans(ESSAY)]
    page.goto(app_url)
    page.get_by_role("button", name="Score paragraph chunks against a reader's cuts").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible(timeout=120_000)
    _finished(page)
    page.get_by_role("button", name="Start from none").click()
    _finished(page)
    frame = _editor(page)
    expect(frame.locator("#count")).to_contain_text("0 boundaries · 1 segment ")

    # Sentence: a click in the middle of a sentence cuts at the nearer sentence start.
    page.get_by_test_id("stRadio").filter(has_text="Snap a click").get_by_text(
        "sentence start"
    ).click()
    _finished(page)
    frame = _editor(page)
    inside = ESSAY.index("The mite feeds on developing bees") + 5
    _click_offset(page, frame, inside)
    expect(frame.locator(".mark")).to_have_count(1)
    cut = int(frame.locator(".mark").first.get_attribute("data-at") or -1)
    assert cut in starts and abs(cut - inside) == min(abs(s - inside) for s in starts)

    # Line: a click inside a paragraph cuts at the start of its line (or the next).
    page.get_by_test_id("stRadio").filter(has_text="Snap a click").get_by_text("line start").click()
    _finished(page)
    frame = _editor(page)
    paragraph = ESSAY.index("Autumn is a quiet time")
    _click_offset(page, frame, paragraph + 3)
    expect(frame.locator(".mark")).to_have_count(2)
    cuts = [int(m.get_attribute("data-at") or -1) for m in frame.locator(".mark").all()]
    assert paragraph in cuts
    expect(frame.locator("#count")).to_contain_text("2 boundaries · 3 segments")
    _finished(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("2 boundaries", exact=False).first).to_be_visible()
