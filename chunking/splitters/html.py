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

A ``<table>`` that fits stays whole; one over the limit is cut only between its rows
(``<tr>`` of that table, not of a table inside it), into groups of whole rows, and every
group after the first carries the header in ``metadata["context"]``: the ``<thead>``
markup (or the leading rows of ``<th>`` cells, and the rows a header cell's
``rowspan`` reaches), or, in visible-text mode, the header cells' text. The limit holds
for the header and the rows together; a ``<caption>`` goes with the first group only.

Positions come from Python's ``html.parser``, which accepts malformed markup and plain
text: a document it cannot make sense of is simply one section.

**Visible text** (``visible_text=True``, the default): sizes are measured on the text
a reader sees (:func:`visible_text`: tags, comments, ``<script>`` and ``<style>``
elements left out, entities decoded, whitespace collapsed, a line break at each block,
heading and item tag), so that markup neither counts toward the limit nor crowds out
the words. Offsets, and ``chunk.text``, still are the raw source; ``chunk.size`` is the
size of the visible text, which each chunk carries as ``metadata["visible_text"]``.
That text is what to embed, search and check for sentence ends
(:attr:`~chunking.model.Chunk.embedding_text`). With ``visible_text=False`` sizes count
the markup, as they did before the mode existed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from itertools import takewhile
from typing import Any

from ..engine.sections import LINES, WORDS, Atomic, FixedCuts, SpanSplitter, Table
from ..model import Piece, in_context
from ..params import Param, Strategy, overlap_below_size, overlap_param, size_param, unit_param
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
#: Tags that start a new line of visible text (the others, such as ``<a>`` or
#: ``<b>``, sit inside a line).
LINE_TAGS = frozenset((*HEADINGS, *BLOCK_TAGS, *ITEM_TAGS, "html", "head", "title"))
#: Permalink marks that documentation generators (Sphinx, MkDocs) put in headings.
PERMALINK_MARKS = re.compile("[\u00b6]")


@dataclass
class HtmlLayout:
    """Offsets the splitter needs: headings, block starts and atomic spans."""

    headings: list[Heading] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    items: list[int] = field(default_factory=list)
    atomic: list[Atomic] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)


@dataclass
class _Row:
    """A ``<tr>`` of a table being read: where it starts and ends, whether it is in the
    ``<thead>``, and each cell's kind (``<th>`` or not) and ``rowspan``."""

    start: int
    in_head: bool
    end: int | None = None
    cells: list[tuple[bool, int]] = field(default_factory=list)


@dataclass
class _OpenTable:
    """A ``<table>`` being read: its start, its rows and its ``<thead>`` span."""

    start: int
    rows: list[_Row] = field(default_factory=list)
    head: list[int] = field(default_factory=list)  # [start, end] of the <thead>
    in_head: bool = False

    def table(self, text: str, end: int) -> Table | None:
        """The table ending at ``end``, with its header rows; None without a body row."""
        rows = self.rows
        if self.head:
            heads = [r.in_head for r in rows]
        else:
            heads = [bool(r.cells) and all(th for th, _ in r.cells) for r in rows]
        count = sum(1 for _ in takewhile(bool, heads))
        k = 0
        while k < count:  # a header cell spanning rows makes them header rows too
            count = max(count, *(k + span for _, span in rows[k].cells), k + 1)
            k += 1
        count = min(count, len(rows))
        if count == len(rows):
            return None
        if len(self.head) == 2:
            head = (self.head[0], self.head[1])
        elif count:
            last = rows[count - 1]
            head = (rows[0].start, last.end if last.end is not None else rows[count].start)
        else:
            head = (0, 0)
        context = text[head[0] : head[1]].strip()
        return Table(self.start, end, tuple(r.start for r in rows[count:]), context)


def _rowspan(attrs: list[tuple[str, str | None]]) -> int:
    """A cell's ``rowspan`` (1 when missing or not a positive number)."""
    value = dict(attrs).get("rowspan") or ""
    return int(value) if value.strip().isdigit() and int(value) > 0 else 1


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
        self._tables: list[_OpenTable] = []  # open tables, the outermost first

    def source_offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def _close_heading(self) -> None:
        if self._heading is not None:
            offset, level = self._heading
            title = " ".join(PERMALINK_MARKS.sub(" ", "".join(self._title)).split())
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
        if self._raw is None:
            self._table_tag(tag, start, attrs)

    def _table_tag(self, tag: str, start: int, attrs: list[tuple[str, str | None]]) -> None:
        """Follow the rows of the outermost open table."""
        if tag == "table":
            self._tables.append(_OpenTable(start))
        if len(self._tables) != 1:
            return
        table = self._tables[0]
        if tag == "thead":
            table.head[:] = [start]
            table.in_head = True
        elif tag in ("tbody", "tfoot"):
            table.in_head = False
        elif tag == "tr":
            table.rows.append(_Row(start, table.in_head))
        elif tag in ("th", "td") and table.rows:
            table.rows[-1].cells.append((tag == "th", _rowspan(attrs)))

    def handle_endtag(self, tag: str) -> None:
        start = self.source_offset()
        close = self.text.find(">", start)
        end = close + 1 if close >= 0 else len(self.text)
        self.layout.atomic.append(Atomic(start, end, "tag"))
        if tag in HEADINGS:
            self._close_heading()
        if self._tables and self._raw is None:
            self._table_end_tag(tag, end)
        if self._raw is not None and tag == self._raw[1]:
            self.layout.atomic.append(Atomic(self._raw[0], end, f"<{tag}> element"))
            self._raw = None

    def _table_end_tag(self, tag: str, end: int) -> None:
        table = self._tables[0]
        if len(self._tables) == 1:
            if tag == "thead" and table.head:
                table.head[1:] = [end]
                table.in_head = False
            elif tag == "tr" and table.rows:
                table.rows[-1].end = end
        if tag == "table":
            self._tables.pop()
            if not self._tables:
                found = table.table(self.text, end)
                if found is not None:
                    self.layout.tables.append(found)

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


# --- the text a reader sees -----------------------------------------------------------

_MARKUP = re.compile(
    r"<!--.*?(?:-->|\Z)"  # a comment (unclosed: to the end)
    r"|<(script|style)\b.*?(?:</\1\s*>|\Z)"  # a raw text element
    r"|</?([A-Za-z][^\s/>]*)[^>]*(?:>|\Z)"  # a start or end tag
    r"|<[!?][^>]*(?:>|\Z)",  # a declaration or processing instruction
    re.DOTALL | re.IGNORECASE,
)
_SPACE_AROUND_BREAKS = re.compile(r" *\n[\n ]*")
_WHITESPACE = re.compile(r"\s+")


def visible_text(markup: str) -> str:
    """The text of ``markup`` (HTML source, or a slice of it) as a browser shows it.

    Tags are left out, a line break standing for each block, heading or item tag
    (:data:`LINE_TAGS`); comments, declarations and ``<script>``/``<style>`` elements
    are left out entirely; entities are decoded and runs of whitespace become one
    space, as a browser renders them (``<pre>`` included, a simplification). The
    result is stripped; markup alone gives ``""``.
    """
    parts: list[str] = []
    at = 0
    for m in _MARKUP.finditer(markup):
        parts.append(_words(markup[at : m.start()]))
        parts.append("\n" if (m.group(2) or "").lower() in LINE_TAGS else "")
        at = m.end()
    parts.append(_words(markup[at:]))
    return _SPACE_AROUND_BREAKS.sub("\n", "".join(parts)).strip()


def _words(source: str) -> str:
    """Text between markup: entities decoded, each run of whitespace one space."""
    return _WHITESPACE.sub(" ", html.unescape(source))


class VisibleSizer(Sizer):
    """A unit measured on the visible text of HTML source slices (see
    :func:`visible_text`). Not additive: joining two slices can merge or drop
    whitespace, so the engine measures real spans."""

    def __init__(self, unit: Sizer) -> None:
        self.unit = unit
        self.name = unit.name
        # Visible text is never longer than its source, so the unit's bound holds.
        self.max_per_char = unit.max_per_char

    def size(self, text: str) -> int:
        return self.unit.size(visible_text(text))


# --- the strategy ----------------------------------------------------------------------


def html_pieces(
    text: str, sizer: Sizer, size: int, overlap: int, max_level: int, visible: bool = False
) -> Iterator[Piece]:
    """The ``html`` strategy's pieces (see the module docstring); ``visible`` measures
    sizes on the visible text and adds it to each piece's metadata."""
    if visible:
        for p in html_pieces(text, VisibleSizer(sizer), size, overlap, max_level):
            shown = visible_text(text[p.start : p.end])
            meta = {**p.metadata, "visible_text": shown}
            if "context" in meta:  # a table's header, as a reader sees it
                meta["context"] = visible_text(meta["context"])
                p = p._replace(size=sizer.size(in_context(meta["context"], shown)))
                if not meta["context"]:
                    del meta["context"]
            yield p._replace(metadata=meta)
        return
    layout = html_layout(text)
    deeper = tuple(sorted(h.offset for h in layout.headings if h.level > max_level))
    blocks = FixedCuts("block", tuple(sorted(set(layout.blocks))))
    items = FixedCuts("item", tuple(sorted(set(layout.items))))
    levels = (FixedCuts("heading", deeper), blocks, items, LINES, WORDS)
    splitter = SpanSplitter(
        text,
        sizer,
        size,
        overlap,
        levels,
        atomic=layout.atomic,
        inner_from=3,
        edge_name="tag",
        tables=layout.tables,
    )
    found = sections(text, layout.headings, max_level)
    for k, s in enumerate(found):
        boundary = "heading" if k + 1 < len(found) else "end"
        meta = {"header_path": list(s.path), "level": s.level, "boundary": boundary}
        yield from splitter.split(s.start, s.end, meta)


VISIBLE_TEXT = Param(
    "visible_text",
    bool,
    True,
    "Measure sizes on the text a reader sees (no tags, scripts, styles or comments; "
    "entities decoded). Offsets and chunk texts stay the raw HTML; each chunk carries "
    "its visible text (metadata visible_text), which is what to embed. Off: the markup "
    "counts toward the size.",
)


def _html(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return html_pieces(text, sizer, p["size"], p["overlap"], p["levels"], p["visible_text"])


HTML = Strategy(
    "html",
    label="HTML sections",
    description="One chunk per heading section (<h1> to <h6>) of the raw HTML source, "
    "with the heading texts as header path. Offsets refer to the markup itself; sizes "
    "count the visible text (unless visible_text is off). A section over the size "
    "limit is split at block elements, items, lines and words, never inside a tag or "
    "a <script>/<style> element that fits.",
    params=(
        size_param(160),
        overlap_param(0),
        unit_param("tokens"),
        levels_param("heading"),
        VISIBLE_TEXT,
    ),
    checks=(overlap_below_size,),
    split=_html,
)
