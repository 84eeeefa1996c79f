"""AppTest tests of what a new user meets first (issue 28): each tour stop's own hint,
a new document on its first page, and one warning count on Explore and Compare.

The browser side (a bookmarked page on a fresh server, an upload after a Corpus
document, a refused upload) is in tests/e2e/test_first_visit_browser.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from chunking.analysis.report import ChunkWarning, warning_count
from pages import sidebar, tour_page

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
PAGE = "explore.page"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _explore() -> AppTest:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    return _ok(at.switch_page("pages/explore_page.py").run())


def _hint(at: AppTest) -> str:
    hints = [i.value for i in at.main.info if "Try it" in i.value]
    assert len(hints) == 1, hints
    return hints[0]


def _paste(at: AppTest, text: str) -> AppTest:
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    return _ok(at.text_area(key=sidebar.PASTE_KEY).set_value(text).run())


def _document(paragraphs: int, word: str) -> str:
    return "".join(
        f"{word} {i}. " + "Some filler words here. " * 12 + "\n\n" for i in range(paragraphs)
    )


# ----------------------------------------------------------------------------- tour


def test_every_stop_of_a_level_has_its_own_hint() -> None:
    for level in tour_page.LEVELS:
        hints = [stop.hint or level.look_for for stop in level.stops]
        assert len(set(hints)) == len(hints), level.title


@pytest.mark.parametrize(
    "button, sample, wrong",
    [
        ("tour_3_1", "product page", "Markdown guide"),
        ("tour_3_2", "Python module", "Markdown guide"),
        ("tour_5_1", "technical guide", "service agreement"),
    ],
)
def test_a_tour_stop_shows_its_own_hint(button: str, sample: str, wrong: str) -> None:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(at.button(key=button).click().run())
    assert [t.value for t in at.title] == ["Explore"]
    hint = _hint(at)
    assert sample in hint and wrong not in hint


# ------------------------------------------------------------------ first page first


def test_a_new_document_starts_on_its_first_page() -> None:
    at = _paste(_explore(), _document(900, "Paragraph"))
    last = at.number_input(key=PAGE).max
    assert last > 3
    _ok(at.number_input(key=PAGE).set_value(last).run())
    assert at.number_input(key=PAGE).value == last
    _paste(at, _document(300, "Another"))
    page = at.number_input(key=PAGE)
    assert page.max > 1 and page.value == 1


def test_the_same_document_keeps_its_page_across_configurations() -> None:
    at = _paste(_explore(), _document(900, "Paragraph"))
    _ok(at.number_input(key=PAGE).set_value(2).run())
    size = at.number_input(key="recursive.size")
    _ok(size.set_value(int(size.value) + 100).run())
    assert at.number_input(key=PAGE).value == 2


# ---------------------------------------------------------------- one warning count


def test_warning_count_sums_the_chunks_each_warning_names() -> None:
    warnings = [
        ChunkWarning("mid_sentence", "t", "m", (3, 15)),
        ChunkWarning("tiny", "t", "m", (4,)),
        ChunkWarning("other", "t", "m"),
    ]
    assert warning_count(warnings) == 4
    assert warning_count([]) == 0


def test_compare_counts_the_warnings_as_explore_does() -> None:
    at = _explore()
    explore = next(m.value for m in at.metric if m.label == "Warnings")
    _ok(at.switch_page("pages/compare_page.py").run())
    table = next(f.value for f in at.dataframe if "Warnings" in f.value.columns)
    row = table[table["Config"] == "A"].iloc[0]
    assert int(explore) > 1  # the default view warns about more than one chunk
    assert int(row["Warnings"]) == int(explore)
