"""The page view of a PDF: every chunk drawn on its page from its exact character range.

:func:`page_overlay` is pure geometry: given chunks that carry ``metadata["boxes"]``
(:meth:`chunking.documents.io.Document.with_pages`) and a page number, it gives one
rectangle per line fragment per chunk, and flags every rectangle that another chunk's
rectangle intersects (overlap: the intersection is returned too, to be hatched).
:func:`reading_order` gives the centres of a page's line fragments in text order
(arrows). :func:`overlay_svg` draws it all as one SVG over the page image
(:func:`chunking.documents.pdf.render_page`, inlined as a data URL): chunks in the
text view's colours (even/odd, or the lens' heat), overlaps hatched, the selected chunk
outlined, gold spans underlined, furniture struck through; hovering a rectangle shows
the chunk's index, offsets and size. Every text in the SVG goes through
:func:`html.escape`.
"""

from __future__ import annotations

import base64
import html
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

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


def _rect(box: Sequence[float], scale: float, **attributes: str) -> str:
    x0, top, x1, bottom = (v * scale for v in box)
    extra = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{_escape(v)}"' for k, v in attributes.items()
    )
    return (
        f'<rect x="{x0:.1f}" y="{top:.1f}" width="{max(x1 - x0, 0.5):.1f}" '
        f'height="{max(bottom - top, 0.5):.1f}"{extra}/>'
    )


def overlay_svg(
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
    """The page as one SVG: the PNG ``image`` (if any) of the ``width`` × ``height``
    page (points) drawn at ``scale`` pixels per point, then the overlay.

    ``heat`` (chunk index -> count) colours chunks as the text view's lens does;
    ``gold`` boxes (``[page, x0, top, x1, bottom]``, this page's) are underlined;
    ``arrows`` (:func:`reading_order`) join line centres in reading order.
    """
    w, h = width * scale, height * scale
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ce-pdf-page" '
        f'data-page="{overlay.page}" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.1f} {h:.1f}">',
        "<defs>"
        '<pattern id="ce-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{OVERLAP_COLOUR}" stroke-width="3"/>'
        "</pattern>"
        '<marker id="ce-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="5" '
        'markerHeight="5" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" fill="rgba(0,121,107,0.9)"/></marker>'
        "</defs>",
    ]
    if image is not None:
        encoded = base64.b64encode(image).decode("ascii")
        parts.append(
            f'<image href="data:image/png;base64,{encoded}" x="0" y="0" '
            f'width="{w:.1f}" height="{h:.1f}"/>'
        )
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
        parts.append(
            f'<g class="ce-pdf-chunk{" ce-selected" if chosen else ""}" '
            f'data-chunk="{rect.chunk}"><title>{_escape(title)}</title>'
            + _rect(
                (rect.x0, rect.top, rect.x1, rect.bottom),
                scale,
                fill=fill,
                stroke=SELECTED_COLOUR if chosen else "none",
                stroke_width="2" if chosen else "0",
            )
            + "</g>"
        )
    for box in overlay.overlaps:
        parts.append(_rect(box, scale, fill="url(#ce-hatch)", class_="ce-pdf-overlap"))
    for span in gold:
        x0, _, x1, bottom = (v * scale for v in span[1:5])
        parts.append(
            f'<line class="ce-pdf-gold" x1="{x0:.1f}" y1="{bottom:.1f}" x2="{x1:.1f}" '
            f'y2="{bottom:.1f}" stroke="{GOLD_COLOUR}" stroke-width="3"/>'
        )
    for item in furniture:
        x0, top, x1, bottom = (v * scale for v in item.box)
        middle = (top + bottom) / 2
        parts.append(
            f'<g class="ce-pdf-furniture"><title>{_escape(f"{item.kind}: {item.text}")}'
            "</title>"
            + _rect(
                item.box,
                scale,
                fill="rgba(120,120,120,0.12)",
                stroke="rgba(90,90,90,0.8)",
                stroke_dasharray="3 2",
            )
            + f'<line x1="{x0:.1f}" y1="{middle:.1f}" x2="{x1:.1f}" y2="{middle:.1f}" '
            'stroke="rgba(60,60,60,0.9)" stroke-width="1.5"/></g>'
        )
    for (ax, ay), (bx, by) in itertools.pairwise(arrows):
        parts.append(
            f'<line class="ce-pdf-order" x1="{ax * scale:.1f}" y1="{ay * scale:.1f}" '
            f'x2="{bx * scale:.1f}" y2="{by * scale:.1f}" stroke="rgba(0,121,107,0.7)" '
            'stroke-width="1.2" marker-end="url(#ce-arrow)"/>'
        )
    parts.append("</svg>")
    return "".join(parts)
