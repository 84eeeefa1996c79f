"""Markdown sections.

The ``markdown`` strategy cuts a document into sections at ATX (``#`` ... ``######``) and
Setext (``===`` / ``---`` underline) headers, as markdown-it-py parses them: a ``#`` line
inside a fenced code block is code, not a header. Each chunk knows its ``header_path``.
A section over the size limit is split further by :class:`~chunking.engine.sections.SpanSplitter`,
preferring deeper headers, then block starts, list items, lines, sentences and words, and
never inside a fenced or indented code block, a table or an HTML block that fits the
limit on its own.

A table over the limit is cut only between rows (:class:`~chunking.engine.sections.Table`):
every group of rows after the first carries the header rows and the ``|---|`` line,
verbatim, in ``metadata["context"]``, and the limit holds for the header and the rows
together. Every ``|`` line before the delimiter line is a header row; a table without
one has its first line as header. A caption on the line before the table (``Table 1:
...``, ``**Table 2.** ...``, a line ending with ``:``; a blank line may come between)
goes with the first group only.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from ..engine.sections import (
    LINES,
    SENTENCES,
    WORDS,
    Atomic,
    FixedCuts,
    SpanSplitter,
    Table,
    line_starts,
    union_spans,
)
from ..engine.spans import strip_span
from ..model import Piece
from ..params import Param, Strategy, overlap_below_size, overlap_param, size_param, unit_param
from ..units import Sizer


class Heading(NamedTuple):
    """A header (or an HTML heading): where its line starts, its level and its title."""

    offset: int
    level: int
    title: str


@dataclass(frozen=True)
class MarkdownLayout:
    """What the splitter needs from a parsed Markdown document."""

    headings: list[Heading]
    blocks: tuple[int, ...]
    nested: tuple[int, ...]
    atomic: list[Atomic]
    #: Tables with their rows and header (not among ``atomic``).
    tables: list[Table]


@lru_cache(maxsize=1)
def _parser():  # -> markdown_it.MarkdownIt
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


_ATOMIC_TOKENS = {
    "fence": "code block",
    "code_block": "code block",
    "table_open": "table",
    "html_block": "HTML block",
}
_PIPE_ROW = re.compile(r"[ \t]*\|")
#: A table's delimiter line (``|---|:--:|``), inside a block quote or not.
_DELIMITER_ROW = re.compile(r"[ \t>]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
#: A line that captions the table after it: "Table 1: ...", "**Tab. 2** ...", "... :".
_CAPTION = re.compile(r"(?:[*_]{1,2})?(?:table\b|tab\.).*|[^#|].*:[*_]*|:\s.*", re.I)
#: The longest line read as a caption.
_CAPTION_CHARS = 300


def markdown_layout(text: str) -> MarkdownLayout:
    """Headings, block starts and atomic blocks of ``text``, with absolute offsets."""
    starts = line_starts(text)

    def at(line: int) -> int:
        return starts[line] if line < len(starts) else len(text)

    tokens = _parser().parse(text)
    headings: list[Heading] = []
    blocks: set[int] = set()
    nested: set[int] = set()
    atomic: list[Atomic] = []
    bodies: list[int] = []  # where each table's body rows start
    for k, token in enumerate(tokens):
        if token.map is None or token.type == "inline":
            continue
        first, last = token.map
        if token.type == "tbody_open":
            bodies.append(at(first))
        (blocks if token.level == 0 else nested).add(at(first))
        if token.type == "heading_open" and token.level == 0:
            title = tokens[k + 1].content if k + 1 < len(tokens) else ""
            headings.append(Heading(at(first), int(token.tag[1]), " ".join(title.split())))
        label = _ATOMIC_TOKENS.get(token.type)
        if label:
            atomic.append(Atomic(*strip_span(text, at(first), at(last)), label))
    atomic.extend(_pipe_tables(text, starts, atomic))
    body_starts = set(bodies)
    tables = [_table(text, starts, t, body_starts) for t in union_spans(_of(atomic, "table"))]
    found = [t for t in tables if t is not None]
    if found:  # a table with rows is cut between them, so it is no atomic span any more
        rows = [Atomic(t.start if t.bare is None else t.bare, t.end, "table") for t in found]
        atomic = [a for a in atomic if a.label != "table" or not _covered(a, rows)]
    return MarkdownLayout(headings, tuple(sorted(blocks)), tuple(sorted(nested)), atomic, found)


def _of(atomic: list[Atomic], label: str) -> list[Atomic]:
    return [a for a in atomic if a.label == label]


def _covered(a: Atomic, spans: list[Atomic]) -> bool:
    """Whether ``a`` lies inside one of the sorted, disjoint ``spans``."""
    i = bisect_right([s.start for s in spans], a.start) - 1
    return i >= 0 and spans[i].start <= a.start and a.end <= spans[i].end


def _table(text: str, starts: list[int], table: Atomic, bodies: set[int]) -> Table | None:
    """The rows and header of the table ``table`` spans (see the module docstring), or
    None for a table without a body row."""
    first = bisect_right(starts, table.start) - 1
    last = bisect_left(starts, table.end, first + 1)
    lines = [table.start, *starts[first + 1 : last]]
    body = next((k for k, p in enumerate(lines) if p in bodies), None)
    if body is None:  # no body found by the parser: after a delimiter line, or the first
        ends = [*lines[1:], table.end]
        delimiters = (
            k
            for k, p in enumerate(lines)
            if _DELIMITER_ROW.fullmatch(text, *strip_span(text, p, ends[k]))
        )
        body = next(delimiters, 0) + 1
    if body >= len(lines):
        return None
    rows = tuple(strip_span(text, p, table.end)[0] for p in lines[body:])
    a, b = strip_span(text, table.start, lines[body])
    caption = _caption(text, starts, first)
    if caption is None:
        return Table(table.start, table.end, rows, text[a:b])
    return Table(caption, table.end, rows, text[a:b], bare=table.start)


def _caption(text: str, starts: list[int], line: int) -> int | None:
    """Where the caption of a table starting on line ``line`` starts, if it has one: the
    line before, or the one before a blank line."""
    for above in (line - 1, line - 2):
        if above < 0:
            return None
        a, b = strip_span(text, starts[above], starts[above + 1])
        if b > a:
            fits = b - a <= _CAPTION_CHARS and _CAPTION.fullmatch(text, a, b)
            return a if fits and "|" not in text[a:b] else None
    return None


def _pipe_tables(text: str, starts: list[int], known: list[Atomic]) -> list[Atomic]:
    """Runs of two or more lines starting with ``|`` outside code blocks.

    markdown-it only knows tables with a delimiter row; a run of ``|`` rows without one
    is still a table to a reader.
    """
    code = union_spans([a for a in known if a.label == "code block"])
    code_starts = [a.start for a in code]

    def in_code(p: int) -> bool:
        i = bisect_right(code_starts, p) - 1
        return i >= 0 and code[i].start <= p < code[i].end

    runs: list[Atomic] = []
    run: list[int] = []
    for start in [*starts, len(text)]:
        if start < len(text) and _PIPE_ROW.match(text, start) and not in_code(start):
            run.append(start)
            continue
        if len(run) >= 2:
            runs.append(Atomic(*strip_span(text, run[0], start), "table"))
        run = []
    return runs


@dataclass(frozen=True)
class Section:
    start: int
    end: int
    path: tuple[str, ...]
    level: int


def sections(text: str, headings: Sequence[Heading], max_level: int) -> list[Section]:
    """Sections starting at headings of level ``max_level`` or above (``#`` is 1).

    Text before the first such heading is a section with an empty path and level 0.
    """
    cuts = [h for h in headings if h.level <= max_level]
    out: list[Section] = []
    if not cuts or cuts[0].offset > 0:
        out.append(Section(0, cuts[0].offset if cuts else len(text), (), 0))
    stack: list[Heading] = []
    for k, h in enumerate(cuts):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        end = cuts[k + 1].offset if k + 1 < len(cuts) else len(text)
        out.append(Section(h.offset, end, tuple(s.title for s in stack), h.level))
    return out


def _parent(path: tuple[str, ...]) -> tuple[str, ...]:
    return path[:-1]


def _common_prefix(paths: Sequence[tuple[str, ...]]) -> list[str]:
    prefix = list(paths[0])
    for path in paths[1:]:
        k = 0
        while k < min(len(prefix), len(path)) and prefix[k] == path[k]:
            k += 1
        del prefix[k:]
    return prefix


def markdown_pieces(
    text: str, sizer: Sizer, size: int, overlap: int, max_level: int, merge_small: bool
) -> Iterator[Piece]:
    """The ``markdown`` strategy's pieces (see the module docstring)."""
    layout = markdown_layout(text)
    deeper = FixedCuts("header", tuple(h.offset for h in layout.headings if h.level > max_level))
    blocks = (FixedCuts("block", layout.blocks), FixedCuts("nested block", layout.nested))
    levels = (deeper, *blocks, LINES, SENTENCES, WORDS)
    splitter = SpanSplitter(
        text, sizer, size, overlap, levels, atomic=layout.atomic, inner_from=2, tables=layout.tables
    )
    found, spans = [], []
    for s in sections(text, layout.headings, max_level):
        a, b = strip_span(text, s.start, s.end)
        if b > a:
            found.append(s)
            spans.append((a, b, splitter.measure(a, b)))
    if merge_small:

        def joinable(first: int, k: int) -> bool:
            parent = _parent(found[first].path)
            return found[k].path[: len(parent)] == parent

        groups = splitter.group(spans, joinable)
    else:
        groups = [(k, k, spans[k][2]) for k in range(len(spans))]
    for first, last, total in groups:
        boundary = "header" if found[last].end < len(text) else "end"
        if first != last:
            paths = [found[k].path for k in range(first, last + 1)]
            meta = {
                "header_path": _common_prefix(paths),
                "level": min(found[k].level for k in range(first, last + 1)),
                "merged_sections": [list(p) for p in paths],
                "boundary": boundary,
            }
            yield Piece(spans[first][0], spans[last][1], meta, total)
            continue
        s = found[first]
        meta = {"header_path": list(s.path), "level": s.level, "boundary": boundary}
        yield from splitter.split(s.start, s.end, meta)


def levels_param(what: str) -> Param:
    """The ``levels`` parameter: the deepest header level that starts a section."""
    return Param(
        "levels",
        int,
        3,
        f"Deepest {what} level that starts a new section (1 = only top-level "
        "headers); deeper headers are preferred cut points inside a section.",
        minimum=1,
        maximum=6,
    )


def _markdown(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return markdown_pieces(text, sizer, p["size"], p["overlap"], p["levels"], p["merge_small"])


MERGE_SMALL = Param(
    "merge_small",
    bool,
    False,
    "Merge consecutive small sections under the same parent while they fit the size.",
)


MARKDOWN = Strategy(
    "markdown",
    label="Markdown sections",
    description="One chunk per header section (ATX `#` and Setext underlines), with its "
    "header path in the metadata. Never cuts inside a fenced code block or a table that "
    "fits; a section over the size limit is split at deeper headers, blocks, lines, "
    "sentences, then words. Suits technical documentation.",
    params=(
        size_param(160),
        overlap_param(0),
        unit_param("tokens"),
        levels_param("header"),
        MERGE_SMALL,
    ),
    checks=(overlap_below_size,),
    split=_markdown,
)
