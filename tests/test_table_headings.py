"""Tables as a new user meets them: the heading and caption before a table join its first
group of rows (instead of a tiny chunk of their own), and a CSV whose rows are over the
size gets one warning naming them, not two naming the same chunks."""

from __future__ import annotations

import pytest

import chunking
from chunking import Config
from chunking.analysis.report import make_report
from chunking.documents.io import Document, read_path
from tests.conftest import CHROMA
from tests.invariants import check_each_chunk

ROWS = "".join(f"| item {i} | {i * 3} units in the north store |\n" for i in range(120))
HEADING = "## Stock levels"
SPEC = (
    "# Inventory\n\nSome intro text about the stores.\n\n"
    f"{HEADING}\n\nTable 1: Stock levels by item.\n\n| item | stock |\n|---|---|\n{ROWS}"
    "\n## Next\n\nMore text after the table.\n"
)


@pytest.mark.parametrize("unit", ["tokens", "words", "chars", "model"])
def test_the_heading_and_caption_join_the_first_group_of_rows(unit: str) -> None:
    size = {"tokens": 160, "words": 120, "chars": 700, "model": 200}[unit]
    config = Config.create("markdown", unit=unit, size=size)
    chunks = chunking.run(SPEC, config)
    check_each_chunk(SPEC, chunks, config)
    assert all(c.text != HEADING for c in chunks), "the heading is not a chunk of its own"
    groups = [c for c in chunks if "table_group" in c.metadata]
    assert len(groups) > 2
    first = groups[0]
    assert first.metadata["table_group"] == 1
    assert first.start == SPEC.index(HEADING)
    assert first.text.startswith(f"{HEADING}\n\nTable 1: Stock levels by item.\n\n| item |")
    assert all(c.size <= size for c in chunks)
    assert all(g.metadata.get("context", "").startswith("| item | stock |") for g in groups[1:])


def test_a_heading_that_does_not_fit_with_the_first_row_stays_before_it() -> None:
    long_heading = "## " + " ".join(f"word{i}" for i in range(60))
    text = SPEC.replace(HEADING, long_heading)
    config = Config.create("markdown", unit="words", size=70)
    chunks = chunking.run(text, config)
    check_each_chunk(text, chunks, config)
    assert any(c.text == long_heading for c in chunks)
    assert all(c.size <= 70 for c in chunks)


def test_a_csv_with_rows_over_the_size_gets_one_warning_for_them() -> None:
    document = read_path(CHROMA / "questions_df.csv")
    config = Config.create("table")
    chunks = chunking.run(document.text, config)
    report = make_report(document, config, chunks)
    named = [frozenset(w.chunks) for w in report.warnings]
    for i, first in enumerate(named):  # no two warnings about the same chunks
        for second in named[i + 1 :]:
            assert not (first <= second or second <= first)
    over = next(w for w in report.warnings if w.kind == "over_limit")
    assert set(over.chunks) == {c.index for c in chunks if c.size > 160}
    assert "more than 256 word pieces" in over.message
    assert "truncated" not in {w.kind for w in report.warnings}


def test_chunks_too_long_for_the_model_but_within_the_limit_keep_their_warning() -> None:
    text = "\n\n".join("word " * 300 for _ in range(3))
    document = Document(text, "long.txt", "text", "utf-8")
    config = Config.create("paragraph", size=2000, unit="words")
    report = make_report(document, config, chunking.run(text, config))
    assert {w.kind for w in report.warnings} >= {"truncated"}
    assert "over_limit" not in {w.kind for w in report.warnings}


def test_the_text_view_draws_each_later_group_with_its_header_above_it() -> None:
    from html.parser import HTMLParser

    from chunking.viz.render import render_window

    chunks = chunking.run(SPEC, Config.create("markdown", unit="tokens", size=160))
    groups = [c for c in chunks if "table_group" in c.metadata]

    class Spans(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.carried: list[tuple[str, str]] = []  # (chunk of the mark before, header)
            self.text: list[str] = []
            self.last_mark = ""

        def handle_starttag(self, tag: str, attrs: list) -> None:
            found = dict(attrs)
            if "ce-mark" in (found.get("class") or ""):
                self.last_mark = str(found.get("data-i"))
            if found.get("class") == "ce-carried":
                self.carried.append((self.last_mark, str(found["data-header"])))

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    view = Spans()
    view.feed(render_window(SPEC, chunks, 0, len(SPEC), max_chars=len(SPEC)))
    header = "| item | stock |\n|---|---|"
    assert view.carried == [(str(g.index), header) for g in groups[1:]]
    assert "".join(view.text) == SPEC  # drawn from an attribute: the text is the document's
    hostile = SPEC.replace("| item | stock |", '| <b onclick="x">item</b> | stock |')
    marked = render_window(hostile, chunking.run(hostile, Config.create("markdown", size=160)))
    assert "<b onclick" not in marked and "&lt;b onclick=&quot;x&quot;&gt;" in marked
