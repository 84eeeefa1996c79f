"""The page view of a PDF in Explore, next to the text view: the page image with every
chunk's exact character range drawn as per-line rectangles, and the sidebar's choices
for reading a PDF (reading order, furniture).

The geometry and the drawing come from the core (:mod:`chunking.viz.pdf_pages`); the
page image from :func:`chunking.documents.pdf.render_page`, cached here per page. On
Explore the page is a small bidirectional component (``pages/components/pdf_pages``:
one static HTML file, no build step, no network) so that clicking a chunk's rectangle
selects that chunk; Compare draws its pages with ``st.html``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

from chunking import Chunk
from chunking.documents.pdf import PdfError, render_page
from chunking.viz.pdf_pages import (
    document_page,
    document_page_html,
    image_url,
    page_furniture,
    page_markup,
    page_style,
)
from chunking.viz.render import Page
from pages import cached
from pages.state import PERSIST, clamp_state

ORDER_KEY = "pdf.order"
FURNITURE_KEY = "pdf.keep_furniture"
PAGE_KEY = "explore.pdf_page"
ARROWS_KEY = "explore.pdf_arrows"
COMPARE_PAGE_KEY = "cmp.pdf_page"
CLICK_KEY = "explore.pdf_click"
_SYNCED = "_ce_pdf_synced"
_CLICKED = "_ce_pdf_clicked"
COMPONENT_DIR = Path(__file__).resolve().parent / "components" / "pdf_pages"
#: Pixels per PDF point of the page image.
SCALE = 1.25
ORDERS = {"layout": "layout (column by column)", "stream": "content stream"}


def reading_controls() -> tuple[str, bool]:
    """The sidebar's choices for reading a PDF: reading order, keep furniture."""
    order = st.radio(
        "Reading order",
        list(ORDERS),
        format_func=ORDERS.__getitem__,
        horizontal=True,
        persist_state=PERSIST,
        key=ORDER_KEY,
        help="Layout: the columns of each page are found and read one after the other. "
        "Content stream: the order in which the PDF draws its text (two columns often "
        "come out line by line across both).",
    )
    keep = st.toggle(
        "Keep headers and footers",
        persist_state=PERSIST,
        key=FURNITURE_KEY,
        help="Running headers, footers and page numbers are left out of the chunked text "
        "by default; the page view shows them struck through either way.",
    )
    return str(order or "layout"), bool(keep)


def has_pages(source: cached.Source) -> bool:
    """Whether the page view can be drawn: a PDF read with its boxes."""
    return source.document.pdf is not None


@cached.bounded("pdf_pages", "Drawing the page…")
def _page_png(key: str, page: int, scale: float, _data: bytes) -> bytes:
    return render_page(_data, page, scale=scale)


def page_image(source: cached.Source, data: bytes, number: int) -> bytes | None:
    """The PNG of page ``number``, cached; None (and a note) when it cannot be drawn."""
    try:
        return _page_png(source.key, number, SCALE, data)
    except PdfError as exc:
        st.info(f"The page image cannot be drawn ({exc}); the rectangles are shown alone.")
        return None


_clickable_page = components.declare_component("pdf_pages", path=str(COMPONENT_DIR))


def clicked_chunk(value: Any, count: int) -> tuple[int, int] | None:
    """The chunk index and page a click on the page component names, when valid."""
    if not isinstance(value, Mapping):
        return None
    chunk, page = value.get("chunk"), value.get("page")
    if type(chunk) is not int or type(page) is not int or not 0 <= chunk < count:
        return None
    return chunk, page


def _on_click(count: int, on_select: Callable[[int], None]) -> None:
    found = clicked_chunk(st.session_state.get(CLICK_KEY), count)
    if found is not None:
        st.session_state[_CLICKED] = found  # the page view stays on the page clicked
        on_select(found[0])


def page_view(
    source: cached.Source,
    data: bytes,
    chunks: Sequence[Chunk],
    shown: Page,
    *,
    unit: str,
    selected: int | None = None,
    heat: Sequence[int] | None = None,
    gold: Sequence[tuple[int, int]] = (),
    on_select: Callable[[int], None] | None = None,
) -> None:
    """The page of the PDF that the text view shows (``shown``), or the one chosen.

    With ``on_select``, a click on a chunk's rectangle calls it with the chunk's index
    (Explore selects that chunk: its Chunk input, the text view's page)."""
    document = source.document
    pdf = document.pdf
    if pdf is None:
        return
    for warning in pdf.warnings:
        st.warning(warning)
    count = len(pdf.layouts)
    # The selected chunk's page when the text view shows it, else its first chunk's.
    index = shown.first
    if selected is not None and shown.first <= selected < shown.last:
        index = selected
    synced = document.page_of(chunks[index].start)
    clicked = st.session_state.get(_CLICKED)
    if clicked is not None and clicked[0] == selected and 1 <= clicked[1] <= count:
        synced = clicked[1]  # a chunk crossing a page break was clicked on its second page
    mark = (source.key, shown.number, selected)
    if st.session_state.get(_SYNCED) != mark and synced is not None:
        st.session_state[_SYNCED] = mark
        st.session_state[PAGE_KEY] = synced  # follow the text view's pager
    clamp_state(PAGE_KEY, 1, count)
    nav, arrows_col = st.columns([1, 1], vertical_alignment="bottom")
    number = int(
        nav.number_input(
            f"PDF page (of {count})",
            min_value=1,
            max_value=count,
            step=1,
            persist_state=PERSIST,
            key=PAGE_KEY,
            help="Follows the text view's page; choose another to look around.",
        )
    )
    arrows = arrows_col.toggle("Reading order arrows", persist_state=PERSIST, key=ARROWS_KEY)
    layout = pdf.layouts[number - 1]
    image = page_image(source, data, number)
    drawn = document_page(
        document,
        chunks,
        number,
        unit=unit,
        selected=selected,
        arrows=bool(arrows),
        heat=heat,
        gold=gold,
    )
    overlay = drawn.overlay
    furniture = page_furniture(pdf, number)
    if on_select is None:
        markup = page_markup(number, drawn.width, drawn.height, SCALE, image, drawn.elements)
        st.html(f'<div class="ce-pdf-view" style="overflow:auto;max-height:900px">{markup}</div>')
    else:
        _clickable_page(
            page=number,
            page_style=page_style(drawn.width, drawn.height, SCALE),
            image=image_url(image) if image is not None else "",
            elements=[e.to_dict() for e in drawn.elements],
            key=CLICK_KEY,
            default=None,
            on_change=partial(_on_click, len(chunks), on_select),
        )
    columns = "no text" if not layout.has_text else f"{layout.columns} column(s)"
    notes = [
        f"Page {number}: {columns}",
        f"{len({r.chunk for r in overlay.rects})} chunks drawn",
    ]
    if overlay.overlaps:
        notes.append(f"{len(overlay.overlaps)} overlaps (hatched)")
    if layout.crossing:
        notes.append(f"{len(layout.crossing)} line(s) cross a gutter")
    if furniture:
        kept = "kept in the text" if pdf.keep_furniture else "left out of the text"
        notes.append(f"{len(furniture)} header/footer line(s), struck through, {kept}")
    click = " Click a rectangle to select its chunk." if on_select is not None else ""
    st.caption(
        " · ".join(notes) + ". Hover over a rectangle for its chunk's index, offsets and "
        "size; the chunk selected in the Chunks tab is outlined in red." + click
    )


def compare_pages(
    source: cached.Source,
    data: bytes,
    chunked: Mapping[str, Sequence[Chunk]],
    names: Mapping[str, str],
    units: Mapping[str, str],
) -> None:
    """One page of the PDF with each configuration's chunks side by side (Compare)."""
    pdf = source.document.pdf
    if pdf is None:
        return
    count = len(pdf.layouts)
    clamp_state(COMPARE_PAGE_KEY, 1, count)
    number = int(
        st.number_input(
            f"PDF page (of {count})",
            min_value=1,
            max_value=count,
            step=1,
            persist_state=PERSIST,
            key=COMPARE_PAGE_KEY,
            help="The same page in every panel, with that configuration's chunks.",
        )
    )
    image = page_image(source, data, number)
    for column, letter in zip(st.columns(len(chunked)), chunked, strict=True):
        with column:
            st.markdown(f"**{names[letter]}**")
            drawn, overlay = document_page_html(
                source.document,
                chunked[letter],
                number,
                image=image,
                scale=SCALE,
                unit=units[letter],
            )
            st.html(f'<div class="ce-pdf-view" style="overflow:auto">{drawn}</div>')
            notes = [f"{len({r.chunk for r in overlay.rects})} chunks drawn"]
            if overlay.overlaps:
                notes.append(f"{len(overlay.overlaps)} overlaps (hatched)")
            st.caption(" · ".join(notes))
