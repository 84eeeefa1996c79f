"""The page view's geometry and drawing (chunking.viz.pdf_pages): rectangles from each
chunk's exact range, overlaps flagged, furniture struck through, text escaped."""

from __future__ import annotations

import html
import re

import chunking
from chunking.documents.io import Document, read_bytes
from chunking.documents.pdf import Furniture
from chunking.model import Chunk
from chunking.viz.pdf_pages import overlay_html, page_furniture, page_overlay, reading_order
from chunking.viz.render import BOUNDARY_CSS, render_window
from tests.test_pdf import two_columns, with_furniture


def _located(name: str, data: bytes, strategy: str, size: int) -> tuple[Document, list[Chunk]]:
    doc = read_bytes(data, name)
    return doc, doc.with_pages(chunking.chunk(doc.text, strategy, size=size))


def test_one_rectangle_per_line_fragment_of_each_chunk() -> None:
    _, chunks = _located("cols.pdf", two_columns(), strategy="paragraph", size=60)
    overlay = page_overlay(chunks, 1)
    for chunk in chunks:
        mine = [(r.x0, r.top, r.x1, r.bottom) for r in overlay.rects if r.chunk == chunk.index]
        assert mine and sorted(mine) == sorted(tuple(b[1:]) for b in chunk.metadata["boxes"])
    assert not any(r.overlap for r in overlay.rects)
    assert overlay.overlaps == ()
    assert page_overlay(chunks, 2).rects == ()


def test_overlapping_chunks_are_flagged_where_they_share_characters() -> None:
    doc, _ = _located("cols.pdf", two_columns(), strategy="paragraph", size=60)
    text = doc.text
    a_end = text.index("alpha two") + len("alpha two")
    b_start = text.index("alpha two")
    first = Chunk(0, 0, a_end, text[:a_end], 1)
    second = Chunk(1, b_start, b_start + 30, text[b_start : b_start + 30], 1)
    chunks = doc.with_pages([first, second])
    overlay = page_overlay(chunks, 1)
    flagged = {r.chunk for r in overlay.rects if r.overlap}
    assert flagged == {0, 1}
    (shared,) = overlay.overlaps
    (box,) = doc.boxes_of(b_start, a_end)
    assert shared == tuple(box[1:])


def test_the_page_shows_chunks_hover_selection_furniture_and_arrows() -> None:
    doc, chunks = _located("report.pdf", with_furniture(2), strategy="recursive", size=80)
    pdf = doc.pdf
    assert pdf is not None
    layout = pdf.layouts[0]
    furniture = page_furniture(pdf, 1)
    assert [f.kind for f in furniture] == ["header", "page number"]
    arrows = reading_order(pdf, 1)
    svg = overlay_html(
        page_overlay(chunks, 1),
        width=layout.width,
        height=layout.height,
        scale=2,
        image=b"\x89PNG fake",
        unit="chars",
        selected=1,
        furniture=furniture,
        arrows=arrows,
    )
    assert svg.startswith('<div class="ce-pdf-page" data-page="1"') and svg.endswith("</div>")
    on_page = [c for c in chunks if 1 in c.metadata["pages"]]
    assert svg.count('class="ce-pdf-chunk') == sum(
        1 for c in on_page for b in c.metadata["boxes"] if b[0] == 1
    )
    assert svg.count("ce-selected") == sum(1 for b in chunks[1].metadata["boxes"] if b[0] == 1)
    first = chunks[0]
    assert f"Chunk 0: start {first.start}, end {first.end}, size {first.size} chars" in svg
    assert svg.count('class="ce-pdf-furniture"') == 2
    assert svg.count('class="ce-pdf-order"') == len(arrows) - 1
    assert "data:image/png;base64," in svg
    width = re.search(r"max-width:(\d+)px", svg)
    assert width is not None and int(width.group(1)) == round(layout.width * 2)


def test_text_in_the_svg_is_escaped() -> None:
    hostile = Furniture(1, "header", '<script>alert("x")</script>', (1, 2, 30, 12))
    svg = overlay_html(page_overlay([], 1), width=100, height=100, furniture=[hostile])
    assert "<script>" not in svg
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in svg


def test_heat_and_gold_spans() -> None:
    doc, chunks = _located("cols.pdf", two_columns(), strategy="paragraph", size=60)
    gold = doc.boxes_of(0, 10)
    svg = overlay_html(page_overlay(chunks, 1), width=600, height=800, heat={0: 3, 1: 0}, gold=gold)
    assert svg.count('class="ce-pdf-gold"') == len(gold)
    assert "rgba(244, 44, 40, 0.75)" in svg  # the hottest chunk


def selected_text(page_html: str) -> str:
    found = re.findall(r'<span class="[^"]*ce-selected[^"]*"[^>]*>(.*?)</span>', page_html, re.S)
    return html.unescape("".join(found))


def test_the_text_view_outlines_the_selected_chunk_and_only_it() -> None:
    text = "One <b>first</b> part. Two second part. Three third part."
    chunks = chunking.chunk(text, "fixed", size=20, overlap=5)
    for chosen in chunks:
        page_html = render_window(text, chunks, unit="chars", selected=chosen.index)
        assert selected_text(page_html) == chosen.text  # overlap with neighbours included
        assert "<b>" not in page_html
    assert "ce-selected" not in render_window(text, chunks, unit="chars")
    assert "ce-selected" not in render_window(text, chunks, unit="chars", selected=len(chunks))
    assert ".ce-doc .ce-selected" in BOUNDARY_CSS
