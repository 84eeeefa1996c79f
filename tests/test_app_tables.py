"""AppTest tests for tables in the app: a CSV upload gets the ``table`` strategy suggested,
Explore shows the header each group of rows carries, and the tour's table stop opens the
Markdown guide with its tables cut into groups.

What is shown is checked against the core: the same text chunked with ``chunking``.
"""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path

from streamlit.testing.v1 import AppTest

import chunking
from chunking import Chunk
from chunking.analysis.recommend import recommend
from chunking.documents.io import read_path
from chunking.output.preview import preview
from pages import config_controls, explore_page, sidebar, tour_page
from tests.conftest import show_explore_tab

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120
#: A header with markup in it: it must reach the page escaped.
HEADER = ["id", "city", "price <EUR> & tax", "note"]
CARRIED = "header carried (not part of the chunk's offsets)"


def _csv(rows: int) -> str:
    """A CSV of ``rows`` rows under :data:`HEADER`, one cell with a quoted line break."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for i in range(rows):
        note = "two lines,\nstill one cell" if i == 7 else f"restocked in week {i % 52 + 1}"
        writer.writerow([i, f"Town number {i}", f"{i * 3.25:.2f}", note])
    return out.getvalue()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _chunk_table(at: AppTest):
    for frame in at.dataframe:
        if "table_rows" in frame.value.columns:
            return frame.value
    raise AssertionError("no chunk table with a 'table_rows' column")


def _carried(at: AppTest) -> list[str]:
    """The carried-header boxes drawn above the selected chunk."""
    return [h.value for h in at.html if 'class="ce-doc ce-context"' in h.value]


def _show_chunk(at: AppTest, index: int) -> AppTest:
    return _ok(at.number_input(key=explore_page.CHUNK_KEY).set_value(index).run())


def _rows(chunk: Chunk) -> str:
    rows = chunk.metadata.get("table_rows")
    if not rows:
        return ""
    return str(rows[0]) if rows[0] == rows[1] else f"{rows[0]}–{rows[1]}"


def _check_groups(at: AppTest, chunks: list[Chunk]) -> str:
    """The chunk table and the detail view against the core's chunks, some of them
    groups of table rows; returns the header box drawn above the last group."""
    groups = [c for c in chunks if c.metadata.get("table_groups", 0) > 1]
    carrying = [c for c in groups if c.metadata.get("context")]
    assert carrying and len(groups) > len(carrying)  # a table cut in groups
    table = _chunk_table(at)
    assert list(table["chunk"]) == [c.index for c in chunks]
    assert list(table["table_rows"]) == [_rows(c) for c in chunks]
    contexts = [preview(str(c.metadata.get("context") or "")) for c in chunks]
    assert list(table["context"]) == contexts
    first = next(c for c in groups if c.metadata["table_group"] == 1)
    _show_chunk(at, first.index)  # the first group has the header in its own text
    assert not _carried(at)
    _show_chunk(at, carrying[-1].index)
    (box,) = _carried(at)
    header = str(carrying[-1].metadata["context"])
    assert CARRIED in box and html.escape(header, quote=True) in box
    return box


def test_an_uploaded_csv_gets_the_table_strategy_and_shows_the_header_it_carries() -> None:
    text = _csv(80)
    rec = recommend(text, "prices.csv")
    assert rec.strategy == "table"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/explore_page.py").run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run()
    upload = ("prices.csv", text.encode(), "text/csv")
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value(upload).run()
    _ok(at)
    label = rec.config.spec.label
    assert any(f"Suggested for this csv: {label}" in m.value for m in at.sidebar.markdown)
    _ok(at.button(key="use_recommendation").click().run())
    assert at.selectbox(key=config_controls.STRATEGY_KEY).value == "table"
    chunks = chunking.run(text, rec.config)
    assert all(c.text == text[c.start : c.end] for c in chunks)
    assert all(c.metadata.get("table_rows") for c in chunks)
    box = _check_groups(show_explore_tab(at, "Chunks"), chunks)
    assert "price <EUR>" not in box  # escaped, never markup


def test_the_tour_table_stop_opens_a_table_cut_into_groups_that_carry_the_header() -> None:
    level, k, stop = next(
        (level, k, stop)
        for level in tour_page.LEVELS
        for k, stop in enumerate(level.stops)
        if stop.label.startswith("Tables")
    )
    assert level.title.startswith("Structure-aware")
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(at.button(key=f"tour_{level.number}_{k}").click().run())
    at.switch_page("pages/explore_page.py").run()  # AppTest does not follow st.switch_page
    _ok(at)
    assert at.selectbox(key=config_controls.STRATEGY_KEY).value == stop.strategy
    hint = [i.value for i in at.main.info if "Try it" in i.value]
    assert hint and "every group carries the header" in hint[0]
    assert _chunk_table(at) is not None  # the stop opened the Chunks tab
    text = read_path(ROOT / "sample_docs" / stop.sample).text
    chunks = chunking.run(text, chunking.Config.create(stop.strategy, **stop.params))
    _check_groups(at, chunks)
