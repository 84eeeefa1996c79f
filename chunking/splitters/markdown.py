"""Markdown sections.

The ``markdown`` strategy cuts a document into sections at ATX (``#`` ... ``######``) and
Setext (``===`` / ``---`` underline) headers, as markdown-it-py parses them: a ``#`` line
inside a fenced code block is code, not a header. Each chunk knows its ``header_path``.
A section over the size limit is split further by :class:`~chunking.engine.sections.SpanSplitter`,
preferring deeper headers, then block starts, list items, lines, sentences and words, and
never inside a fenced or indented code block, a table or an HTML block that fits the
limit on its own.
"""

from __future__ import annotations

import re
from bisect import bisect_right
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
    for k, token in enumerate(tokens):
        if token.map is None or token.type == "inline":
            continue
        first, last = token.map
        (blocks if token.level == 0 else nested).add(at(first))
        if token.type == "heading_open" and token.level == 0:
            title = tokens[k + 1].content if k + 1 < len(tokens) else ""
            headings.append(Heading(at(first), int(token.tag[1]), " ".join(title.split())))
        label = _ATOMIC_TOKENS.get(token.type)
        if label:
            atomic.append(Atomic(*strip_span(text, at(first), at(last)), label))
    atomic.extend(_pipe_tables(text, starts, atomic))
    return MarkdownLayout(headings, tuple(sorted(blocks)), tuple(sorted(nested)), atomic)


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
    splitter = SpanSplitter(text, sizer, size, overlap, levels, atomic=layout.atomic, inner_from=2)
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
        size_param(800),
        overlap_param(0),
        unit_param("tokens"),
        levels_param("header"),
        MERGE_SMALL,
    ),
    checks=(overlap_below_size,),
    split=_markdown,
)
