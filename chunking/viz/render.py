"""HTML for the boundary view: the document with every chunk drawn from its exact offsets.

Every piece of document text goes through :func:`html.escape`, so a document containing
markup (``<script>``, ``<img onerror=...>``, comments) is shown as text, never run.
The only markup in the output is the ``<span>`` and ``<div>`` elements built here.

The text is cut at every chunk start and end. Each resulting segment is covered by
zero chunks (a gap, e.g. whitespace between chunks), one chunk (coloured by the
parity of its index) or several (class ``overlap``: striped, darker). Hovering a
segment shows its chunk(s): index, start, end and size.

Chunks that nest (the parent-child strategy: a child's ``metadata["parent"]`` names the
chunk it lies in) are not overlap: such a segment is coloured by its innermost chunk
and underlined in its parent's colour (``ce-p0``/``ce-p1``), and a parent's start gets
a "P" marker, so each parent reads as a band with its children's boundaries inside.

The retrieval lens can colour the view: with ``heat`` (one count per chunk, e.g. how many
questions retrieved it) each chunk's background follows a heat scale
(:func:`heat_colour`, legend :func:`heat_legend_html`) instead of the even/odd colours,
and ``gold`` spans (a question's answer) are underlined (class ``ce-gold``), so a
boundary cutting through an answer shows at a glance.

The ``selected`` chunk (the one chosen in Explore's chunk input, outlined on a PDF's
page view too) has every segment it covers outlined in red (class ``ce-selected``).

A chunk's ``metadata["context"]`` (the header a group of table rows carries) is not in
the document at the chunk's offsets: :func:`context_html` draws it apart, labelled.

Large documents are shown a page at a time: :func:`paginate` groups chunks into pages
of at most ``max_chunks`` chunks and about ``max_chars`` characters, and
:func:`render_window` draws only one character window.
"""

from __future__ import annotations

import bisect
import html
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Chunk

#: Default number of chunks drawn on one page of the boundary view.
PAGE_CHUNKS = 50
#: Default number of characters drawn on one page of the boundary view (about 50 KB).
PAGE_CHARS = 50_000

#: Style for the classes used below; the app injects it once per page.
BOUNDARY_CSS = """
.ce-doc { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace,
  SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; line-height: 1.55;
  padding: 0.75rem; border: 1px solid rgba(128,128,128,0.35); border-radius: 0.5rem;
  max-height: 640px; overflow-y: auto; }
.ce-doc .ce-chunk { border-radius: 2px; }
.ce-doc .ce-c0 { background: rgba(66, 133, 244, 0.16); }
.ce-doc .ce-c1 { background: rgba(251, 140, 0, 0.20); }
.ce-doc .ce-overlap { background: repeating-linear-gradient(135deg,
  rgba(156, 39, 176, 0.38) 0 6px, rgba(156, 39, 176, 0.18) 6px 12px);
  outline: 1px dashed rgba(156, 39, 176, 0.8); }
.ce-doc .ce-gap { opacity: 0.75; }
.ce-doc .ce-p0 { box-shadow: inset 0 -4px 0 rgba(46, 125, 50, 0.85); }
.ce-doc .ce-p1 { box-shadow: inset 0 -4px 0 rgba(121, 85, 72, 0.85); }
.ce-doc .ce-mark.ce-parent { border-left: 3px solid #2e7d32; }
.ce-doc .ce-mark.ce-parent::before { background: #2e7d32; }
.ce-doc .ce-mark { border-left: 2px solid #d81b60; margin-left: 1px; user-select: none; }
.ce-doc .ce-mark::before { content: attr(data-i); display: inline-block; font-family:
  sans-serif; font-size: 0.62rem; line-height: 1.2; color: #fff; background: #d81b60;
  border-radius: 0 3px 3px 0; padding: 0 3px; margin-right: 2px; vertical-align: 0.35em; }
.ce-doc .ce-more { display: block; color: gray; font-style: italic; margin-top: 0.5rem; }
.ce-legend span { padding: 0 0.4rem; margin-right: 0.5rem; border-radius: 3px; }
.ce-doc .ce-selected { outline: 2px solid rgba(211, 47, 47, 0.95); outline-offset: -1px; }
.ce-doc .ce-gold { text-decoration: underline 3px #00897b; text-underline-offset: 3px; }
.ce-doc.ce-context { max-height: 160px; border-style: dashed; opacity: 0.85; }
.ce-context .ce-context-label { display: block; font-family: sans-serif; font-size: 0.72rem;
  color: gray; margin-bottom: 0.25rem; }
.ce-doc .ce-carried { display: block; user-select: none; }
.ce-doc .ce-carried::before { content: attr(data-header); display: block; white-space: pre-wrap;
  border: 1px dashed #9e9e9e; color: #616161; background: #fafafa; padding: 0 0.3rem;
  margin: 0.15rem 0; }
"""

LEGEND_HTML = (
    '<div class="ce-doc ce-legend" style="max-height:none;padding:0.3rem 0.6rem">'
    '<span class="ce-c0">even chunk</span><span class="ce-c1">odd chunk</span>'
    '<span class="ce-overlap">shared by overlapping chunks</span>'
    '<span class="ce-gap">not in any chunk</span></div>'
)
#: The legend for nested chunks (parent-child).
HIERARCHY_LEGEND_HTML = (
    '<div class="ce-doc ce-legend" style="max-height:none;padding:0.3rem 0.6rem">'
    '<span class="ce-c0 ce-p0">child chunk in a parent (underlined)</span>'
    '<span class="ce-c1 ce-p1">next parent\'s child</span>'
    '<span class="ce-p0">parent text outside its children</span>'
    '<span class="ce-gap">not in any chunk</span></div>'
)


def heat_colour(count: int, top: int) -> str:
    """The background for a chunk ``count`` of ``top`` questions retrieved: pale grey
    for none, then from light yellow to deep red."""
    if count <= 0 or top <= 0:
        return "rgba(158, 158, 158, 0.12)"
    share = min(count / top, 1.0)
    green = round(224 - 180 * share)
    return f"rgba(244, {green}, 40, {0.25 + 0.5 * share:.2f})"


def heat_legend_html(top: int, what: str = "questions retrieved it") -> str:
    """The legend of :func:`heat_colour` up to ``top``, with the gold underline."""
    steps = sorted({0, 1, max(1, top // 2), max(1, top)})
    cells = "".join(f'<span style="background:{heat_colour(n, top)}">{n}</span>' for n in steps)
    return (
        '<div class="ce-doc ce-legend" style="max-height:none;padding:0.3rem 0.6rem">'
        f"{cells} {_escape(what)} "
        '<span class="ce-gold">the selected question\'s gold text</span></div>'
    )


@dataclass(frozen=True)
class Page:
    """One page of the boundary view: chunks ``[first, last)`` and the text window."""

    number: int
    first: int
    last: int
    start: int
    end: int


def paginate(
    chunks: Sequence[Chunk], max_chunks: int = PAGE_CHUNKS, max_chars: int = PAGE_CHARS
) -> list[Page]:
    """Group consecutive chunks into pages of at most ``max_chunks`` chunks.

    A page closes early once its chunks reach ``max_chars`` characters of text. A single
    chunk larger than ``max_chars`` gets a page of its own (its window is clipped by
    :func:`render_window`). Pages are numbered from 1.
    """
    if max_chunks < 1 or max_chars < 1:
        raise ValueError("max_chunks and max_chars must be at least 1")
    pages: list[Page] = []
    first = 0
    while first < len(chunks):
        last = first + 1
        start = chunks[first].start
        end = chunks[first].end
        while last < len(chunks) and last - first < max_chunks:
            nxt = chunks[last]
            if max(end, nxt.end) - start > max_chars:
                break
            end = max(end, nxt.end)
            last += 1
        pages.append(Page(len(pages) + 1, first, last, start, end))
        first = last
    return pages


def page_of_chunk(pages: Sequence[Page], index: int) -> int:
    """The number of the page holding chunk ``index`` (chunks are numbered from 0)."""
    firsts = [p.first for p in pages]
    i = bisect.bisect_right(firsts, index) - 1
    if i < 0 or index >= pages[i].last:
        raise ValueError(f"chunk {index} is not on any page")
    return pages[i].number


def _describe(chunk: Chunk, unit: str) -> str:
    return (
        f"Chunk {chunk.index}: start {chunk.start}, end {chunk.end}, "
        f"size {chunk.size} {unit} ({chunk.end - chunk.start} chars)"
    )


def _title(covering: Sequence[Chunk], unit: str) -> str:
    lines = [_describe(c, unit) for c in covering]
    if len(covering) > 1 and _nesting(covering) is not None:
        lines.insert(0, "Parent and child")
    elif len(covering) > 1:
        lines.insert(0, f"Shared by {len(covering)} chunks")
    return "\n".join(lines)


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def is_nested(chunks: Sequence[Chunk]) -> bool:
    """Whether some chunk names a parent chunk it lies in (the parent-child strategy)."""
    return any(c.metadata.get("parent") is not None for c in chunks)


def _nesting(covering: Sequence[Chunk]) -> list[Chunk] | None:
    """``covering`` from the outermost parent to the innermost child when each chunk is
    the parent of the next; None when they merely overlap."""
    chain = sorted(covering, key=lambda c: int(c.metadata.get("level") or 0))
    for outer, inner in itertools.pairwise(chain):
        if inner.metadata.get("parent") != outer.index:
            return None
    return chain


def _classes(covering: Sequence[Chunk]) -> str:
    if len(covering) == 1:
        only = covering[0]
        if only.metadata.get("children"):  # a parent's text between its children
            return f"ce-chunk ce-p{only.index % 2}"
        return f"ce-chunk ce-c{only.index % 2}"
    chain = _nesting(covering)
    if chain is None:
        return "ce-chunk overlap ce-overlap"
    return f"ce-chunk ce-c{chain[-1].index % 2} ce-p{chain[0].index % 2}"


@dataclass(frozen=True)
class _Heat:
    """Per-chunk counts (by chunk index) and the top of their scale."""

    counts: Sequence[int]
    top: int

    def count(self, covering: Sequence[Chunk]) -> int:
        return max(int(self.counts[c.index]) for c in covering if c.index < len(self.counts))


def _segment(
    text: str,
    covering: Sequence[Chunk],
    unit: str,
    heat: _Heat | None,
    gold: bool,
    selected: int | None = None,
) -> str:
    body = _escape(text)
    if gold:
        body = f'<span class="ce-gold">{body}</span>'
    if not covering:
        return f'<span class="ce-gap" title="Not in any chunk">{body}</span>'
    cls = _classes(covering)
    if selected is not None and any(c.index == selected for c in covering):
        cls += " ce-selected"
    ids = " ".join(str(c.index) for c in covering)
    title = _title(covering, unit)
    style = ""
    if heat is not None and any(c.index < len(heat.counts) for c in covering):
        n = heat.count(covering)
        style = f' style="background:{heat_colour(n, heat.top)}" data-heat="{n}"'
        title += f"\nRetrieved by {n} question{'s' if n != 1 else ''}"
    return f'<span class="{cls}" data-chunks="{ids}" title="{_escape(title)}"{style}>{body}</span>'


def _mark(chunk: Chunk) -> str:
    if chunk.metadata.get("children"):
        title = _escape(f"Parent chunk {chunk.index} starts at {chunk.start}")
        return f'<span class="ce-mark ce-parent" data-i="P{chunk.index}" title="{title}"></span>'
    title = _escape(f"Chunk {chunk.index} starts at {chunk.start}")
    mark = f'<span class="ce-mark" data-i="{chunk.index}" title="{title}"></span>'
    header = str(chunk.metadata.get("context") or "")
    if header and chunk.metadata.get("table_rows"):
        # the header this group of rows carries, drawn above it as a model reads it;
        # an attribute, not text, so the view's text stays the document's
        said = _escape(f"Header carried by chunk {chunk.index}: read with it, not in its offsets")
        mark += f'<span class="ce-carried" data-header="{_escape(header)}" title="{said}"></span>'
    return mark


def render_window(
    text: str,
    chunks: Sequence[Chunk],
    start: int = 0,
    end: int | None = None,
    *,
    unit: str = "chars",
    max_chars: int = PAGE_CHARS,
    heat: Sequence[int] | None = None,
    gold: Sequence[tuple[int, int]] = (),
    selected: int | None = None,
) -> str:
    """HTML of ``text[start:end]`` with the boundaries of every chunk that touches it.

    At most ``max_chars`` characters are drawn; the rest of the window is announced
    with a note. ``chunks`` may overlap or nest in any way. ``heat`` (a count per chunk
    index) colours the chunks on a heat scale up to its largest count; text inside a
    ``gold`` span (``(start, end)`` offsets) is underlined; the segments of chunk
    ``selected`` (an index) are outlined.
    """
    end = len(text) if end is None else end
    start, end = max(0, start), min(len(text), end)
    clipped = end - start > max_chars
    stop = start + max_chars if clipped else end
    visible = [c for c in chunks if c.start < stop and c.end > start]
    cuts = {start, stop}
    for c in visible:
        cuts.update(x for x in (c.start, c.end) if start < x < stop)
    golden = [(int(a), int(b)) for a, b in gold if a < b]
    for a, b in golden:
        cuts.update(x for x in (a, b) if start < x < stop)
    scale = _Heat(heat, max([1, *(int(n) for n in heat)])) if heat is not None else None
    points = sorted(cuts)
    starts_at: dict[int, list[Chunk]] = {}
    for c in visible:
        if start <= c.start < stop:
            starts_at.setdefault(c.start, []).append(c)
    parts = ['<div class="ce-doc">']
    # Visible chunks sorted by start; a sweep keeps the ones covering each segment.
    by_start = sorted(visible, key=lambda c: (c.start, c.index))
    active: list[Chunk] = []
    nxt = 0
    for a, b in itertools.pairwise(points):
        while nxt < len(by_start) and by_start[nxt].start <= a:
            active.append(by_start[nxt])
            nxt += 1
        active = [c for c in active if c.end > a]
        parts.extend(_mark(c) for c in starts_at.get(a, ()))
        covering = sorted(active, key=lambda c: c.index)
        inside = any(g0 <= a and b <= g1 for g0, g1 in golden)
        parts.append(_segment(text[a:b], covering, unit, scale, inside, selected))
    if clipped:
        rest = end - stop
        parts.append(
            f'<span class="ce-more">… {rest:,} more characters in this window are not '
            "drawn; pick a smaller page or chunk.</span>"
        )
    parts.append("</div>")
    return "".join(parts)


def context_html(chunk: Chunk) -> str:
    """The text a model reads before ``chunk`` (``metadata["context"]``, e.g. the header
    a group of table rows carries), escaped and labelled as outside the chunk's offsets;
    "" when it has none."""
    context = str(chunk.metadata.get("context") or "")
    if not context:
        return ""
    what = "header carried" if chunk.metadata.get("table_rows") else "context carried"
    return (
        '<div class="ce-doc ce-context">'
        f'<span class="ce-context-label">{what} (not part of the chunk\'s offsets)</span>'
        f"{_escape(context)}</div>"
    )


def render_page(
    text: str,
    chunks: Sequence[Chunk],
    page: Page,
    *,
    unit: str = "chars",
    max_chars: int = PAGE_CHARS,
    heat: Sequence[int] | None = None,
    gold: Sequence[tuple[int, int]] = (),
    selected: int | None = None,
) -> str:
    """HTML of one page from :func:`paginate` (``heat``, ``gold`` and ``selected`` as
    for :func:`render_window`)."""
    return render_window(
        text,
        chunks,
        page.start,
        page.end,
        unit=unit,
        max_chars=max_chars,
        heat=heat,
        gold=gold,
        selected=selected,
    )
