"""The page view of a PDF in Explore (AppTest): chunk rectangles beside the text view,
the reading order and furniture choices in the sidebar, the pager kept in step."""

from __future__ import annotations

import json
import re
from typing import Any

from streamlit.testing.v1 import AppTest

import chunking
from chunking.documents.io import read_bytes
from chunking.viz.pdf_pages import Element
from pages import pdf_view, sidebar
from tests.conftest import show_explore_tab
from tests.test_app import _app, _ok
from tests.test_pdf import two_columns, with_furniture
from tests.test_pdf_pages import selected_text


def _upload(name: str, data: bytes) -> AppTest:
    at = _app()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run()
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value((name, data, "application/pdf")).run()
    return _ok(at)


def _component(at: AppTest) -> list[Any]:
    return [e for e in at.get("component_instance") if e.proto.component_name.endswith("pdf_pages")]


def _svgs(at: AppTest) -> list[str]:
    """Every page drawn: by ``st.html`` (Compare) or the clickable component (Explore),
    whose elements are drawn here as the component draws them (one ``<div>`` each)."""
    drawn = [h.value for h in at.html if "ce-pdf-page" in h.value]
    for element in _component(at):
        args = json.loads(element.proto.json_args)
        inner = "".join(Element(**e).to_html() for e in args["elements"])
        image = f'<img src="{args["image"]}">' if args["image"] else ""
        drawn.append(f'<div class="ce-pdf-page" data-page="{args["page"]}">{image}{inner}</div>')
    return drawn


def _click(at: AppTest, chunk: int, page: int) -> AppTest:
    """What the browser sends when a chunk's rectangle is clicked on the component."""
    (element,) = _component(at)
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = element.proto.id
    state.json_value = json.dumps({"chunk": chunk, "page": page, "clicks": 1, "at": 1})
    return at._run(states)


def test_a_pdf_shows_its_page_with_every_chunks_rectangles() -> None:
    data = with_furniture(3)
    at = _upload("report.pdf", data)
    at.number_input(key="recursive.size").set_value(60).run()
    _ok(at)
    (svg,) = _svgs(at)
    doc = read_bytes(data, "report.pdf")
    size = int(at.number_input(key="recursive.size").value)
    chunks = doc.with_pages(chunking.chunk(doc.text, "recursive", size=size))
    expected = sum(1 for c in chunks for b in c.metadata["boxes"] if b[0] == 1)
    assert expected and svg.count('class="ce-pdf-chunk') == expected
    assert 'data-page="1"' in svg and "data:image/png;base64," in svg
    assert svg.count('class="ce-pdf-furniture"') == 2  # header and page number, struck
    assert "header: Annual Report 2024" in svg
    boundary = "".join(h.value for h in at.html if 'class="ce-doc"' in h.value)
    assert "Body line 0 of page 1" in boundary and "Annual Report" not in boundary
    assert any("1 column(s)" in c.value for c in at.caption)


def test_the_page_view_follows_the_text_pager_and_the_selected_chunk() -> None:
    at = _upload("report.pdf", with_furniture(3))
    at.number_input(key="recursive.size").set_value(30).run()
    doc = read_bytes(with_furniture(3), "report.pdf")
    size = int(at.number_input(key="recursive.size").value)
    chunks = chunking.chunk(doc.text, "recursive", size=size)
    last = len(chunks) - 1
    show_explore_tab(at, "Chunks").number_input(key="explore.chunk").set_value(last).run()
    _ok(show_explore_tab(at, "Boundaries"))
    (svg,) = _svgs(at)
    page = doc.page_of(chunks[last].start)
    assert page == 3
    assert f'data-page="{page}"' in svg
    assert at.number_input(key=pdf_view.PAGE_KEY).value == page
    assert svg.count("ce-selected") == len(
        [b for b in doc.boxes_of(chunks[last].start, chunks[last].end) if b[0] == page]
    )
    # the text view outlines the same chunk
    boundary = "".join(h.value for h in at.html if 'class="ce-doc"' in h.value)
    assert selected_text(boundary) == chunks[last].text
    at.toggle(key=pdf_view.ARROWS_KEY).set_value(True).run()
    (svg,) = _svgs(at)
    assert svg.count('class="ce-pdf-order"') > 0


def test_reading_order_and_furniture_choices_change_the_text() -> None:
    at = _upload("columns.pdf", two_columns())
    caption = next(c.value for c in at.caption if "columns.pdf" in c.value)
    layout_chars = int(re.search(r"([\d,]+) characters", caption).group(1).replace(",", ""))
    assert layout_chars == len(read_bytes(two_columns(), "columns.pdf").text)
    assert any("2 column(s)" in c.value for c in at.caption)
    at.radio(key=pdf_view.ORDER_KEY).set_value("stream").run()
    _ok(at)
    streamed = read_bytes(two_columns(), "columns.pdf", pdf_order="stream").text
    boundary = "".join(h.value for h in at.html if 'class="ce-doc"' in h.value)
    assert "Alpha one starts the left column Gamma one" in boundary
    assert streamed.startswith("A Study of Two Columns")
    report = _upload("report.pdf", with_furniture(2))
    report.toggle(key=pdf_view.FURNITURE_KEY).set_value(True).run()
    _ok(report)
    text = "".join(h.value for h in report.html if 'class="ce-doc"' in h.value)
    assert "Annual Report 2024" in text


def test_a_text_document_has_no_page_view() -> None:
    at = _ok(_app())
    assert _svgs(at) == []


def test_compare_shows_the_same_pdf_page_with_each_configurations_chunks() -> None:
    data = with_furniture(3)
    at = _upload("report.pdf", data)
    at.number_input(key="recursive.size").set_value(60).run()
    at.switch_page("pages/compare_page.py").run()
    _ok(at)
    at.selectbox(key="cmp.B.strategy").set_value("fixed").run()
    at.number_input(key="cmp.B.fixed.size").set_value(90).run()
    at.number_input(key=pdf_view.COMPARE_PAGE_KEY).set_value(2).run()
    _ok(at)
    views = _svgs(at)
    assert len(views) == 2
    doc = read_bytes(data, "report.pdf")
    size = int(at.number_input(key="recursive.size").value)
    b_params = {"size": 90, "overlap": int(at.number_input(key="cmp.B.fixed.overlap").value)}
    expected = [
        doc.with_pages(chunking.chunk(doc.text, "recursive", size=size)),
        doc.with_pages(chunking.chunk(doc.text, "fixed", **b_params)),
    ]
    for view, chunks in zip(views, expected, strict=True):
        assert 'data-page="2"' in view and "data:image/png;base64," in view
        boxes = sum(1 for c in chunks for b in c.metadata["boxes"] if b[0] == 2)
        assert boxes and view.count('class="ce-pdf-chunk') == boxes
    assert views[0] != views[1]


def test_compare_on_a_text_document_has_no_pages() -> None:
    at = _ok(_app())
    at.switch_page("pages/compare_page.py").run()
    _ok(at)
    assert _svgs(at) == [] and "Pages" not in [s.value for s in at.subheader]


def test_clicking_a_rectangle_selects_its_chunk_in_both_views() -> None:
    data = with_furniture(3)
    at = _upload("report.pdf", data)
    at.number_input(key="recursive.size").set_value(30).run()
    doc = read_bytes(data, "report.pdf")
    size = int(at.number_input(key="recursive.size").value)
    chunks = doc.with_pages(chunking.chunk(doc.text, "recursive", size=size))
    assert "explore.chunk" not in at.session_state  # nothing selected yet: the first
    # a chunk of page 2, clicked there
    target = next(c for c in chunks if c.metadata["pages"] == [2])
    at.number_input(key=pdf_view.PAGE_KEY).set_value(2).run()
    (svg,) = _svgs(at)
    assert f'data-chunk="{target.index}"' in svg
    _ok(_click(at, target.index, 2))
    assert at.session_state["explore.chunk"] == target.index
    assert at.number_input(key=pdf_view.PAGE_KEY).value == 2
    (svg,) = _svgs(at)
    boxes = [b for b in target.metadata["boxes"] if b[0] == 2]
    assert svg.count("ce-selected") == len(boxes)
    boundary = "".join(h.value for h in at.html if 'class="ce-doc"' in h.value)
    assert selected_text(boundary) == target.text
    # a click that names no chunk changes nothing
    _ok(_click(at, len(chunks) + 5, 2))
    assert at.session_state["explore.chunk"] == target.index
    chunk_tab = show_explore_tab(at, "Chunks")
    assert chunk_tab.number_input(key="explore.chunk").value == target.index


def test_a_click_names_a_chunk_only_when_valid() -> None:
    assert pdf_view.clicked_chunk({"chunk": 3, "page": 2, "clicks": 1}, 10) == (3, 2)
    for value in (
        None,
        [],
        {"chunk": 10, "page": 1},
        {"chunk": -1, "page": 1},
        {"chunk": True, "page": 1},
        {"chunk": "3", "page": 1},
        {"chunk": 3},
    ):
        assert pdf_view.clicked_chunk(value, 10) is None
