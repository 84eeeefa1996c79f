"""Tests for chunking.viz.render: escaped HTML for the boundary view, built from exact offsets."""

from __future__ import annotations

import itertools
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import Chunk
from chunking.viz.render import (
    Page,
    context_html,
    page_of_chunk,
    paginate,
    render_page,
    render_window,
)

HOSTILE = (
    "Intro line.\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n"
    '<a href="javascript:alert(3)">x</a>\n<!-- hidden -->\n& "quotes" \'single\'\n'
)


class _Collector(HTMLParser):
    """Records every tag, its attributes, and the text inside spans."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.segments: list[tuple[dict[str, str | None], str]] = []
        self.comments: list[str] = []
        self.text: list[str] = []
        self._stack: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        self._stack.append(attributes)
        if tag == "span":
            self.segments.append((attributes, ""))

    def handle_endtag(self, tag: str) -> None:
        self._stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.segments and self._stack and self._stack[-1] is self.segments[-1][0]:
            attrs, body = self.segments[-1]
            self.segments[-1] = (attrs, body + data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def _parse(markup: str) -> _Collector:
    collector = _Collector()
    collector.feed(markup)
    collector.close()
    return collector


def _classes(attrs: dict[str, str | None]) -> set[str]:
    return set((attrs.get("class") or "").split())


def _chunks(text: str, spans: list[tuple[int, int]]) -> list[Chunk]:
    return [Chunk(i, a, b, text[a:b], b - a) for i, (a, b) in enumerate(spans)]


def test_document_markup_is_escaped_and_shown_as_text() -> None:
    chunks = chunking.chunk(HOSTILE, "fixed", size=40, overlap=10)
    markup = render_window(HOSTILE, chunks)
    parsed = _parse(markup)
    assert {tag for tag, _ in parsed.tags} <= {"div", "span"}
    assert parsed.comments == []
    for _, attrs in parsed.tags:
        assert set(attrs) <= {"class", "title", "data-i", "data-chunks"}
    assert "".join(parsed.text) == HOSTILE
    assert "<script>" not in markup and "<img" not in markup and "<!--" not in markup
    whole = render_window(HOSTILE, _chunks(HOSTILE, [(0, len(HOSTILE))]))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in whole
    assert "&lt;!-- hidden --&gt;" in whole


def test_a_carried_header_is_escaped_labelled_and_only_drawn_when_there_is_one() -> None:
    header = "| a <b> | c & d |\n|---|---|"
    chunk = Chunk(1, 0, 9, "| 1 | 2 |", 9, {"context": header, "table_rows": [3, 3]})
    parsed = _parse(context_html(chunk))
    assert {tag for tag, _ in parsed.tags} == {"div", "span"}
    label, carried = parsed.text
    assert label == "header carried (not part of the chunk's offsets)"
    assert carried == header
    assert context_html(Chunk(0, 0, 9, "| 1 | 2 |", 9, {"table_rows": [1, 2]})) == ""
    other = context_html(Chunk(0, 0, 3, "abc", 3, {"context": HOSTILE}))
    assert "context carried" in other and "<script>" not in other


@given(st.text(min_size=1, max_size=300), st.integers(5, 60), st.integers(0, 4))
def test_text_content_equals_the_window_for_any_document(
    text: str, size: int, overlap: int
) -> None:
    if text.isspace():
        return
    chunks = chunking.chunk(text, "fixed", size=size, overlap=overlap)
    parsed = _parse(render_window(text, chunks))
    assert "".join(parsed.text) == text
    assert {tag for tag, _ in parsed.tags} <= {"div", "span"}


def test_each_segment_is_coloured_by_its_chunks() -> None:
    text = "aaaa  bbbbbb cccc"
    chunks = _chunks(text, [(0, 4), (6, 12), (10, 17)])
    parsed = _parse(render_window(text, chunks))
    segments = [
        (attrs, body) for attrs, body in parsed.segments if "ce-mark" not in _classes(attrs)
    ]
    assert [body for _, body in segments] == ["aaaa", "  ", "bbbb", "bb", " cccc"]
    assert "ce-c0" in _classes(segments[0][0])
    assert "ce-gap" in _classes(segments[1][0])
    assert "ce-c1" in _classes(segments[2][0])
    assert {"overlap", "ce-overlap"} <= _classes(segments[3][0])
    assert segments[3][0]["data-chunks"] == "1 2"
    assert "ce-c0" in _classes(segments[4][0])  # chunk 2 alone


def test_titles_give_index_offsets_and_size() -> None:
    text = "alpha beta gamma"
    chunks = chunking.chunk(text, "fixed", size=2, overlap=0, unit="words")
    parsed = _parse(render_window(text, chunks, unit="words"))
    titles = [attrs["title"] for attrs, _ in parsed.segments if "ce-chunk" in _classes(attrs)]
    for chunk, title in zip(chunks, titles, strict=True):
        assert f"Chunk {chunk.index}: start {chunk.start}, end {chunk.end}" in title
        assert f"size {chunk.size} words" in title
    overlap_title = _parse(render_window("abcdef", _chunks("abcdef", [(0, 4), (2, 6)])))
    shared = [a["title"] for a, _ in overlap_title.segments if "overlap" in _classes(a)]
    assert shared and shared[0].startswith("Shared by 2 chunks")
    assert "Chunk 0" in shared[0] and "Chunk 1" in shared[0]


def test_a_mark_precedes_every_chunk_start() -> None:
    text = "one two three four five six"
    chunks = chunking.chunk(text, "fixed", size=2, overlap=1, unit="words")
    parsed = _parse(render_window(text, chunks))
    marks = [attrs["data-i"] for _, attrs in parsed.tags if "ce-mark" in _classes(attrs)]
    assert marks == [str(c.index) for c in chunks]


def test_nested_chunks_are_marked_as_overlap() -> None:
    text = "parent text with a child inside"
    chunks = _chunks(text, [(0, len(text)), (19, 24)])  # a parent and one child
    parsed = _parse(render_window(text, chunks))
    shared = [body for attrs, body in parsed.segments if "overlap" in _classes(attrs)]
    assert shared == ["child"]


def test_a_window_draws_only_its_characters() -> None:
    text = "".join(f"sentence number {i}. " for i in range(200))
    chunks = chunking.chunk(text, "recursive", size=100)
    parsed = _parse(render_window(text, chunks, 250, 700))
    assert "".join(parsed.text) == text[250:700]
    clipped = _parse(render_window(text, chunks, 0, 2000, max_chars=300))
    body = "".join(t for t in clipped.text)
    assert body.startswith(text[:300])
    assert "1,700 more characters" in body


def test_paginate_covers_every_chunk_once_within_the_limits() -> None:
    text = "word " * 5000
    chunks = chunking.chunk(text, "fixed", size=120, overlap=20)
    pages = paginate(chunks, max_chunks=30, max_chars=2000)
    assert [p.number for p in pages] == list(range(1, len(pages) + 1))
    assert pages[0].first == 0 and pages[-1].last == len(chunks)
    for page, nxt in itertools.pairwise(pages):
        assert page.last == nxt.first
    for page in pages:
        assert 1 <= page.last - page.first <= 30
        assert page.end - page.start <= 2000
        assert page.start == chunks[page.first].start
        assert page.end == max(c.end for c in chunks[page.first : page.last])
    assert page_of_chunk(pages, 0) == 1
    assert page_of_chunk(pages, len(chunks) - 1) == len(pages)
    with pytest.raises(ValueError):
        page_of_chunk(pages, len(chunks))


def test_a_chunk_larger_than_a_page_gets_a_page_of_its_own() -> None:
    text = "x" * 500 + " y"
    chunks = _chunks(text, [(0, 500), (501, 502)])
    pages = paginate(chunks, max_chunks=10, max_chars=100)
    assert pages == [Page(1, 0, 1, 0, 500), Page(2, 1, 2, 501, 502)]
    parsed = _parse(render_page(text, chunks, pages[0], max_chars=100))
    assert "".join(parsed.text).startswith("x" * 100)
    assert "400 more characters" in "".join(parsed.text)


def test_paginate_rejects_empty_pages() -> None:
    with pytest.raises(ValueError):
        paginate([], max_chunks=0)
    assert paginate([]) == []


def test_parent_child_chunks_are_drawn_as_parents_with_children_not_as_overlap() -> None:
    text = ("1. Scope. The services are listed here.\n\n2. Fees. Paid monthly.\n\n" * 8).strip()
    chunks = chunking.chunk(text, "hierarchy", size=200, unit="chars")
    assert any(c.metadata.get("parent") is not None for c in chunks)
    parsed = _parse(render_window(text, chunks))
    segments = [(a, b) for a, b in parsed.segments if "ce-mark" not in _classes(a)]
    assert "".join(b for _, b in segments) == text
    assert not [a for a, _ in segments if "ce-overlap" in _classes(a)]
    by_index = {c.index: c for c in chunks}
    for attrs, _ in segments:
        ids = [int(i) for i in (attrs.get("data-chunks") or "").split()]
        if len(ids) == 2:  # a parent and its child: child's colour, parent's underline
            parent, child = sorted(ids, key=lambda i: by_index[i].metadata["level"])
            assert by_index[child].metadata["parent"] == parent
            assert {f"ce-c{child % 2}", f"ce-p{parent % 2}"} <= _classes(attrs)
            assert attrs["title"].startswith("Parent and child")
    marks = [a["data-i"] for a, _ in parsed.segments if "ce-mark" in _classes(a)]
    parents = [c.index for c in chunks if c.metadata.get("children")]
    assert [m for m in marks if m.startswith("P")] == [f"P{i}" for i in parents]


def test_chunks_that_only_overlap_are_still_striped() -> None:
    text = "aaaa bbbb cccc"
    nested_looking = [
        Chunk(0, 0, 9, text[0:9], 9, {"level": 0}),
        Chunk(1, 5, 14, text[5:14], 9, {"level": 1, "parent": 7}),
    ]
    parsed = _parse(render_window(text, nested_looking))
    shared = [a for a, _ in parsed.segments if a.get("data-chunks") == "0 1"]
    assert shared and "ce-overlap" in _classes(shared[0])
