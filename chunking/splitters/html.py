"""HTML sections by heading elements, with offsets into the raw HTML source.

The text a user sees, and that chunk offsets refer to, is the HTML source itself (tags
included): ``source[chunk.start:chunk.end] == chunk.text`` holds for the raw markup.
A section runs from a heading's start tag (``<h1`` ... ``<hN>`` for N up to ``levels``)
to the next such heading, or the end of the document; markup before the first heading
is a section of its own. ``header_path`` holds the heading texts as a reader sees them
(entities decoded, whitespace collapsed).

A section over the size limit is split further, preferring the start tags of deeper
headings, then of block elements (``<p``, ``<div``, ``<section>``, ...), then of items
(``<li``, ``<tr``, ``<td``, ...), then line breaks and whitespace. No cut falls inside
a tag, a comment or a ``<script>``/``<style>`` element that fits the limit on its own.

Positions come from Python's ``html.parser``, which accepts malformed markup and plain
text: a document it cannot make sense of is simply one section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from ..engine.sections import LINES, WORDS, Atomic, FixedCuts, SpanSplitter
from ..model import Piece
from ..params import Strategy, overlap_below_size, overlap_param, size_param, unit_param
from ..units import Sizer
from .markdown import Heading, levels_param, sections

HEADINGS = {f"h{n}": n for n in range(1, 7)}
BLOCK_TAGS = frozenset(
    (
        *("address", "article", "aside", "blockquote", "body", "details", "dialog", "div"),
        *("dl", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup"),
        *("hr", "main", "nav", "ol", "p", "pre", "section", "table", "ul"),
    )
)
ITEM_TAGS = frozenset(("li", "tr", "td", "th", "dt", "dd", "br", "option", "caption", "summary"))
RAW_TEXT_TAGS = frozenset({"script", "style"})


@dataclass
class HtmlLayout:
    """Offsets the splitter needs: headings, block starts and atomic spans."""

    headings: list[Heading] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    items: list[int] = field(default_factory=list)
    atomic: list[Atomic] = field(default_factory=list)


class _Scanner(HTMLParser):
    """Records where tags start and end in the source, and the headings' texts."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        # html.parser counts lines at "\n" only; a "\r" is an ordinary character.
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.layout = HtmlLayout()
        self._heading: tuple[int, int] | None = None  # (offset, level) of an open heading
        self._title: list[str] = []
        self._raw: tuple[int, str] | None = None  # open <script> or <style>

    def source_offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def _close_heading(self) -> None:
        if self._heading is not None:
            offset, level = self._heading
            title = " ".join("".join(self._title).split())
            self.layout.headings.append(Heading(offset, level, title))
            self._heading, self._title = None, []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self.source_offset()
        raw = self.get_starttag_text() or ""
        self.layout.atomic.append(Atomic(start, start + len(raw), "tag"))
        if tag in HEADINGS:
            self._close_heading()
            self._heading = (start, HEADINGS[tag])
        elif tag in BLOCK_TAGS:
            self.layout.blocks.append(start)
        elif tag in ITEM_TAGS:
            self.layout.items.append(start)
        if tag in RAW_TEXT_TAGS:
            self._raw = (start, tag)

    def handle_endtag(self, tag: str) -> None:
        start = self.source_offset()
        close = self.text.find(">", start)
        end = close + 1 if close >= 0 else len(self.text)
        self.layout.atomic.append(Atomic(start, end, "tag"))
        if tag in HEADINGS:
            self._close_heading()
        if self._raw is not None and tag == self._raw[1]:
            self.layout.atomic.append(Atomic(self._raw[0], end, f"<{tag}> element"))
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None and self._raw is None:
            self._title.append(data)

    def handle_comment(self, data: str) -> None:
        self._markup(len(data) + 7, "<!--", "comment")

    def handle_decl(self, decl: str) -> None:
        self._markup(len(decl) + 3, "<!", "declaration")

    def handle_pi(self, data: str) -> None:
        self._markup(len(data) + 3, "<?", "processing instruction")

    def _markup(self, length: int, opening: str, label: str) -> None:
        start = self.source_offset()
        if self.text.startswith(opening, start):
            self.layout.atomic.append(Atomic(start, min(start + length, len(self.text)), label))

    def finish(self) -> HtmlLayout:
        self._close_heading()
        if self._raw is not None:  # an unclosed <script> runs to the end
            self.layout.atomic.append(Atomic(self._raw[0], len(self.text), "tag"))
        return self.layout


def html_layout(text: str) -> HtmlLayout:
    """Parse ``text`` leniently; whatever was found before an error is kept."""
    scanner = _Scanner(text)
    try:
        scanner.feed(text)
        scanner.close()
    except Exception:
        pass
    return scanner.finish()


def html_pieces(
    text: str, sizer: Sizer, size: int, overlap: int, max_level: int
) -> Iterator[Piece]:
    """The ``html`` strategy's pieces (see the module docstring)."""
    layout = html_layout(text)
    deeper = tuple(sorted(h.offset for h in layout.headings if h.level > max_level))
    blocks = FixedCuts("block", tuple(sorted(set(layout.blocks))))
    items = FixedCuts("item", tuple(sorted(set(layout.items))))
    levels = (FixedCuts("heading", deeper), blocks, items, LINES, WORDS)
    splitter = SpanSplitter(
        text, sizer, size, overlap, levels, atomic=layout.atomic, inner_from=3, edge_name="tag"
    )
    found = sections(text, layout.headings, max_level)
    for k, s in enumerate(found):
        boundary = "heading" if k + 1 < len(found) else "end"
        meta = {"header_path": list(s.path), "level": s.level, "boundary": boundary}
        yield from splitter.split(s.start, s.end, meta)


def _html(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return html_pieces(text, sizer, p["size"], p["overlap"], p["levels"])


HTML = Strategy(
    "html",
    label="HTML sections",
    description="One chunk per heading section (<h1> to <h6>) of the raw HTML source, "
    "with the heading texts as header path. Offsets refer to the markup itself. A "
    "section over the size limit is split at block elements, items, lines and words, "
    "never inside a tag or a <script>/<style> element that fits.",
    params=(size_param(800), overlap_param(0), unit_param("tokens"), levels_param("heading")),
    checks=(overlap_below_size,),
    split=_html,
)
