"""The page view of a PDF: every chunk drawn on its page from its exact character range.

:func:`page_overlay` is pure geometry: given chunks that carry ``metadata["boxes"]``
(:meth:`chunking.documents.io.Document.with_pages`) and a page number, it gives one
rectangle per line fragment per chunk, and flags every rectangle that another chunk's
rectangle intersects (overlap: the intersection is returned too, to be hatched).
:func:`reading_order` gives the centres of a page's line fragments in text order
(arrows). :func:`overlay_html` draws it all over the page image
(:func:`chunking.documents.pdf.render_page`, inlined as a data URL) as positioned
``<div>`` elements — plain HTML and inline styles, which Streamlit's ``st.html``
sanitiser keeps (it drops SVG): chunks in the text view's colours (even/odd, or the
lens' heat), overlaps hatched, the selected chunk outlined, gold spans underlined,
furniture struck through, reading order as thin lines; hovering a rectangle shows the
chunk's index, offsets and size. Every text goes through :func:`html.escape`.
:func:`document_page` does all of it for one page of a document and its chunks (the
app's page views and the HTML report draw pages with it, :func:`document_page_html`);
its :class:`Element` list is what the clickable page component draws itself.
"""

from __future__ import annotations

import base64
import html
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..documents.io import Document
from ..documents.pdf import Box, Furniture, PdfText
from ..model import Chunk
from .render import heat_colour

#: Fill of even and odd chunks (the text view's colours), overlap and selection.
CHUNK_COLOURS = ("rgba(66, 133, 244, 0.28)", "rgba(251, 140, 0, 0.30)")
OVERLAP_COLOUR = "rgba(156, 39, 176, 0.85)"
SELECTED_COLOUR = "rgba(211, 47, 47, 0.95)"
GOLD_COLOUR = "rgba(255, 193, 7, 0.95)"


@dataclass(frozen=True, slots=True)
class Rect:
    """One line fragment of one chunk on the page, in points from its top-left."""

    chunk: int
    start: int
    end: int
    size: int
    x0: float
    top: float
    x1: float
    bottom: float
    overlap: bool = False


@dataclass(frozen=True)
class PageOverlay:
    """What the page view draws on one page (1-based ``page``)."""

    page: int
    rects: tuple[Rect, ...]
    #: Where two chunks' rectangles intersect (drawn hatched).
    overlaps: tuple[Box, ...]


def _intersection(a: Rect, b: Rect) -> Box | None:
    x0, top = max(a.x0, b.x0), max(a.top, b.top)
    x1, bottom = min(a.x1, b.x1), min(a.bottom, b.bottom)
    if x1 - x0 <= 0.01 or bottom - top <= 0.01:
        return None
    return (x0, top, x1, bottom)


def _corners(box: Sequence[float]) -> Box:
    return float(box[1]), float(box[2]), float(box[3]), float(box[4])


def page_overlay(chunks: Sequence[Chunk], page: int) -> PageOverlay:
    """The rectangles of ``chunks`` (their ``metadata["boxes"]``) on ``page``; a
    rectangle is flagged ``overlap`` when one of another chunk intersects it."""
    rects = [
        Rect(c.index, c.start, c.end, c.size, *_corners(box))
        for c in chunks
        for box in c.metadata.get("boxes", ())
        if int(box[0]) == page
    ]
    rects.sort(key=lambda r: r.top)
    flagged: set[int] = set()
    overlaps: list[Box] = []
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            b = rects[j]
            if b.top >= a.bottom:
                break
            if b.chunk == a.chunk:
                continue
            shared = _intersection(a, b)
            if shared is not None:
                flagged.update((i, j))
                overlaps.append(shared)
    marked = tuple(replace(r, overlap=True) if i in flagged else r for i, r in enumerate(rects))
    return PageOverlay(page, marked, tuple(overlaps))


def reading_order(pdf: PdfText, page: int) -> list[tuple[float, float]]:
    """The centres of ``page``'s line fragments in the order of the text."""
    return [
        ((line.box[0] + line.box[2]) / 2, (line.box[1] + line.box[3]) / 2)
        for line in pdf.lines
        if line.page == page
    ]


def page_furniture(pdf: PdfText, page: int) -> list[Furniture]:
    """The running headers, footers and page numbers found on ``page``."""
    return [f for f in pdf.furniture if f.page == page]


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _place(box: Sequence[float], width: float, height: float, style: str = "") -> str:
    """An absolutely positioned box's style, in percent of the page (it scales with it)."""
    x0, top, x1, bottom = box
    return (
        f"position:absolute;left:{100 * x0 / width:.3f}%;top:{100 * top / height:.3f}%;"
        f"width:{100 * max(x1 - x0, 0.3) / width:.3f}%;"
        f"height:{100 * max(bottom - top, 0.3) / height:.3f}%;{style}"
    )


HATCH = (
    f"background:repeating-linear-gradient(135deg,{OVERLAP_COLOUR} 0 2px,transparent 2px 5px);"
    "pointer-events:none"
)
STRIKE = (
    "border:1px dashed rgba(90,90,90,0.8);background:linear-gradient(transparent "
    "calc(50% - 1px),rgba(60,60,60,0.9) calc(50% - 1px),rgba(60,60,60,0.9) calc(50% + 1px),"
    "transparent calc(50% + 1px));box-sizing:border-box"
)


@dataclass(frozen=True, slots=True)
class Element:
    """One absolutely positioned ``<div>`` of the overlay: its classes, inline style
    (numbers and colours only, never document text), hover text and chunk index."""

    cls: str
    style: str
    title: str = ""
    chunk: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The element as JSON for the clickable page (``pages/components/pdf_pages``)."""
        return {"cls": self.cls, "style": self.style, "title": self.title, "chunk": self.chunk}

    def to_html(self) -> str:
        title = f' title="{_escape(self.title)}"' if self.title else ""
        chunk = f' data-chunk="{self.chunk}"' if self.chunk is not None else ""
        return f'<div class="{self.cls}"{chunk}{title} style="{self.style}"></div>'


def page_style(width: float, height: float, scale: float = 1.0) -> str:
    """The page's own style: as wide as its column, at most ``scale`` pixels per point."""
    return (
        f"position:relative;width:100%;max-width:{width * scale:.0f}px;"
        f"aspect-ratio:{width:.2f}/{height:.2f};background:#fff;"
        "border:1px solid rgba(128,128,128,0.35)"
    )


def overlay_elements(
    overlay: PageOverlay,
    *,
    width: float,
    height: float,
    unit: str = "chars",
    selected: int | None = None,
    furniture: Sequence[Furniture] = (),
    arrows: Sequence[tuple[float, float]] = (),
    heat: Mapping[int, int] | None = None,
    gold: Sequence[Sequence[float]] = (),
) -> list[Element]:
    """What :func:`overlay_html` draws over the page image, element by element."""
    elements: list[Element] = []
    top_heat = max(heat.values(), default=0) if heat else 0
    for rect in overlay.rects:
        fill = (
            heat_colour(heat.get(rect.chunk, 0), top_heat)
            if heat is not None
            else CHUNK_COLOURS[rect.chunk % 2]
        )
        chosen = rect.chunk == selected
        title = (
            f"Chunk {rect.chunk}: start {rect.start}, end {rect.end}, size {rect.size} {unit}"
            + (" (overlaps another chunk)" if rect.overlap else "")
        )
        outline = f"outline:2px solid {SELECTED_COLOUR};z-index:2" if chosen else ""
        place = _place((rect.x0, rect.top, rect.x1, rect.bottom), width, height)
        elements.append(
            Element(
                "ce-pdf-chunk" + (" ce-selected" if chosen else ""),
                f"{place}background:{fill};{outline}",
                title,
                rect.chunk,
            )
        )
    for box in overlay.overlaps:
        elements.append(Element("ce-pdf-overlap", _place(box, width, height, HATCH)))
    for span in gold:
        x0, _, x1, bottom = span[1:5]
        line = (x0, bottom - 1.2, x1, bottom + 1.2)
        style = _place(line, width, height, f"background:{GOLD_COLOUR};pointer-events:none")
        elements.append(Element("ce-pdf-gold", style))
    for item in furniture:
        style = _place(item.box, width, height, STRIKE)
        elements.append(Element("ce-pdf-furniture", style, f"{item.kind}: {item.text}"))
    for (ax, ay), (bx, by) in itertools.pairwise(arrows):
        length = 100 * math.hypot(bx - ax, by - ay) / width
        angle = math.degrees(math.atan2(by - ay, bx - ax))
        style = (
            f"position:absolute;left:{100 * ax / width:.3f}%;top:{100 * ay / height:.3f}%;"
            f"width:{length:.3f}%;height:0;border-top:1.5px solid rgba(0,121,107,0.75);"
            f"transform-origin:0 0;transform:rotate({angle:.2f}deg);pointer-events:none"
        )
        elements.append(Element("ce-pdf-order", style))
    return elements


def image_url(image: bytes) -> str:
    """The PNG ``image`` as a ``data:`` URL (inlined: no request)."""
    return "data:image/png;base64," + base64.b64encode(image).decode("ascii")


def overlay_html(
    overlay: PageOverlay,
    *,
    width: float,
    height: float,
    scale: float = 1.0,
    image: bytes | None = None,
    unit: str = "chars",
    selected: int | None = None,
    furniture: Sequence[Furniture] = (),
    arrows: Sequence[tuple[float, float]] = (),
    heat: Mapping[int, int] | None = None,
    gold: Sequence[Sequence[float]] = (),
) -> str:
    """The page as one ``<div>``: the PNG ``image`` (if any) of the ``width`` ×
    ``height`` page (points), then the overlay (:func:`overlay_elements`); the page is
    at most ``scale`` pixels per point wide and shrinks with its column, the overlay
    with it.

    ``heat`` (chunk index -> count) colours chunks as the text view's lens does;
    ``gold`` boxes (``[page, x0, top, x1, bottom]``, this page's) are underlined;
    ``arrows`` (:func:`reading_order`) join line centres in reading order.
    """
    elements = overlay_elements(
        overlay,
        width=width,
        height=height,
        unit=unit,
        selected=selected,
        furniture=furniture,
        arrows=arrows,
        heat=heat,
        gold=gold,
    )
    return page_markup(overlay.page, width, height, scale, image, elements)


def page_markup(
    page: int,
    width: float,
    height: float,
    scale: float,
    image: bytes | None,
    elements: Sequence[Element],
) -> str:
    """The ``<div>`` of a page: its image, then its elements."""
    parts = [
        f'<div class="ce-pdf-page" data-page="{page}" style="{page_style(width, height, scale)}">'
    ]
    if image is not None:
        parts.append(
            f'<img alt="page {page}" src="{image_url(image)}" '
            'style="position:absolute;left:0;top:0;width:100%;height:100%">'
        )
    parts.extend(e.to_html() for e in elements)
    parts.append("</div>")
    return "".join(parts)


@dataclass(frozen=True)
class DrawnPage:
    """One page of a PDF document with its chunks, ready to draw (points, 1-based)."""

    page: int
    width: float
    height: float
    overlay: PageOverlay
    elements: tuple[Element, ...]


def document_page(
    document: Document,
    chunks: Sequence[Chunk],
    number: int,
    *,
    unit: str = "chars",
    selected: int | None = None,
    arrows: bool = False,
    heat: Sequence[int] | None = None,
    gold: Sequence[tuple[int, int]] = (),
) -> DrawnPage:
    """Page ``number`` (1-based) of the PDF ``document`` with ``chunks`` on it
    (:func:`overlay_elements`: its furniture struck through, ``arrows`` for the reading
    order, ``heat`` a count per chunk index, ``gold`` spans as offsets).
    ``ValueError`` when it is not a PDF's page."""
    pdf = document.pdf
    if pdf is None or not 1 <= number <= len(pdf.layouts):
        raise ValueError(f"{document.name} has no PDF page {number}")
    layout = pdf.layouts[number - 1]
    start, end = pdf.pages[number - 1]
    on_page = document.with_pages([c for c in chunks if c.start < end and c.end > start])
    overlay = page_overlay(on_page, number)
    heat_of = None
    if heat is not None:
        heat_of = {c.index: int(heat[c.index]) for c in on_page if c.index < len(heat)}
    elements = overlay_elements(
        overlay,
        width=layout.width,
        height=layout.height,
        unit=unit,
        selected=selected,
        furniture=page_furniture(pdf, number),
        arrows=reading_order(pdf, number) if arrows else (),
        heat=heat_of,
        gold=[b for s, e in gold for b in document.boxes_of(s, e) if b[0] == number],
    )
    return DrawnPage(number, layout.width, layout.height, overlay, tuple(elements))


def document_page_html(
    document: Document,
    chunks: Sequence[Chunk],
    number: int,
    *,
    image: bytes | None,
    scale: float = 1.0,
    unit: str = "chars",
    selected: int | None = None,
    arrows: bool = False,
    heat: Sequence[int] | None = None,
    gold: Sequence[tuple[int, int]] = (),
) -> tuple[str, PageOverlay]:
    """:func:`document_page` as one ``<div>`` over the PNG ``image`` (as
    :func:`overlay_html` draws it), and the overlay drawn."""
    drawn = document_page(
        document, chunks, number, unit=unit, selected=selected, arrows=arrows, heat=heat, gold=gold
    )
    markup = page_markup(drawn.page, drawn.width, drawn.height, scale, image, drawn.elements)
    return markup, drawn.overlay
