"""chunking.output.export: every export format round-trips, and a PDF's pages are given one way,
``metadata["pages"]`` (that the app and ``chunk-explorer split`` agree is in test_cli)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import Config
from chunking.documents.io import Document, read_path
from chunking.output.export import (
    COLUMNS,
    chunk_pages,
    chunk_records,
    config_json,
    iter_records,
    to_csv,
    to_json,
    to_jsonl,
    to_parquet,
)
from tests.test_cli import PAGES, parse, touched_pages
from tests.test_io import _pdf_with_pages

#: Text that CSV and JSON must carry intact: separators, quotes, line breaks of every
#: kind, tabs, and characters outside ASCII (emoji, CJK, combining marks, RTL).
AWKWARD = (
    "Commas, \"quoted\" words, and 'single' quotes; semicolons too.\n"
    "Windows line\r\nendings, a lone\rcarriage return, and\ttabs.\n\n"
    'A "field" with ""doubled"" quotes, then a comma at the end,\n'
    "Emoji 🙂🚀, CJK 漢字かな, combining e\u0301, RTL שלום, NBSP\u00a0here.\n"
    "Backslashes \\n are not line breaks; neither is \\\\ this.\n"
)


@pytest.fixture(scope="module")
def pdf_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pdf") / "four.pdf"
    path.write_bytes(_pdf_with_pages(*PAGES))
    return path


# ---------------------------------------------------------------------- PDF pages


def test_chunk_pages_list_every_page_a_chunk_touches(pdf_path: Path) -> None:
    document = read_path(pdf_path)
    assert len(document.pages) == len(PAGES)
    chunks = chunking.chunk(document.text, "fixed", size=45, overlap=10)
    pages = chunk_pages(document, chunks)
    assert pages == [touched_pages(document, c.start, c.end) for c in chunks]
    assert any(len(p) >= 2 for p in pages if p), "some chunk should span two pages"
    assert pages[0][0] == 1 and pages[-1][-1] == len(PAGES)
    whole = chunking.chunk(document.text, "recursive", size=10_000)
    assert chunk_pages(document, whole) == [[1, 2, 3, 4]]


def test_a_text_document_has_no_pages() -> None:
    document = Document(text=AWKWARD, name="a.txt", kind="text", encoding="utf-8")
    chunks = chunking.chunk(AWKWARD, size=60)
    assert chunk_pages(document, chunks) == [None] * len(chunks)
    assert all("pages" not in r["metadata"] for r in chunk_records(chunks))
    assert all(
        "pages" not in r["metadata"] for r in chunk_records(chunks, chunk_pages(document, chunks))
    )


# -------------------------------------------------------------------- round trips


def _records() -> list[dict[str, Any]]:
    document = Document(text=AWKWARD, name="awkward.txt", kind="text", encoding="utf-8")
    chunks = chunking.chunk(AWKWARD, "fixed", size=40, overlap=7)
    records = chunk_records(chunks, chunk_pages(document, chunks))
    assert len(records) > 5
    return records


def test_jsonl_and_json_read_back_equal_the_records() -> None:
    records = _records()
    text = to_jsonl(records)
    assert text.endswith("\n") and text.count("\n") == len(records)
    assert [json.loads(line) for line in text.split("\n")[:-1]] == records
    assert json.loads(to_json(records)) == records
    assert "🙂" in text and "\\ud83d" not in text  # UTF-8, not escaped


def test_csv_reads_back_equal_the_records() -> None:
    records = _records()
    text = to_csv(records)
    assert text.splitlines()[0] == ",".join(COLUMNS)
    assert parse(text, "csv") == records
    frame = pd.read_csv(io.StringIO(text, newline=""), keep_default_na=False, dtype={"text": str})
    assert list(frame["text"]) == [r["text"] for r in records]
    assert any("\r\n" in r["text"] for r in records) and any('"' in r["text"] for r in records)


def test_parquet_reads_back_equal_the_records() -> None:
    records = _records()
    table = pq.read_table(io.BytesIO(to_parquet(records)))
    assert table.column_names == list(COLUMNS)
    assert str(table.schema.field("start").type) == "int64"
    rows = table.to_pylist()
    for row in rows:
        row["metadata"] = json.loads(row["metadata"])
    assert rows == records


def test_an_empty_export_has_the_columns() -> None:
    assert to_jsonl([]) == ""
    assert json.loads(to_json([])) == []
    assert to_csv([]) == ",".join(COLUMNS) + "\r\n"
    assert pq.read_table(io.BytesIO(to_parquet([]))).column_names == list(COLUMNS)


def test_pdf_pages_survive_every_format(pdf_path: Path) -> None:
    document = read_path(pdf_path)
    chunks = chunking.chunk(document.text, "fixed", size=45, overlap=0)
    records = chunk_records(chunks, chunk_pages(document, chunks))
    pages = [r["metadata"]["pages"] for r in records]
    assert [json.loads(x)["metadata"]["pages"] for x in to_jsonl(records).splitlines()] == pages
    assert [r["metadata"]["pages"] for r in parse(to_csv(records), "csv")] == pages
    parquet = pq.read_table(io.BytesIO(to_parquet(records))).column("metadata").to_pylist()
    assert [json.loads(m)["pages"] for m in parquet] == pages


def test_records_copy_the_metadata() -> None:
    chunks = chunking.chunk("# Title\n\nSome text under it.\n", "markdown", size=100)
    rows = list(iter_records(chunks, [[7]] * len(chunks)))
    assert rows[0]["metadata"]["pages"] == [7]
    assert "pages" not in chunks[0].metadata  # the chunk itself is unchanged


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",))
        | st.sampled_from([",", '"', "\n", "\r", "\t", "'", ";", "\u2028", "\x85"]),
        min_size=1,
        max_size=300,
    ).filter(lambda t: t.strip()),
    st.integers(1, 60),
)
def test_any_text_round_trips_through_every_format(text: str, size: int) -> None:
    chunks = chunking.chunk(text, "fixed", size=size, overlap=0)
    records = chunk_records(chunks)
    assert [json.loads(line) for line in to_jsonl(records).split("\n")[:-1]] == records
    assert parse(to_csv(records), "csv") == records
    rows = pq.read_table(io.BytesIO(to_parquet(records))).to_pylist()
    assert [r["text"] for r in rows] == [c.text for c in chunks]


def test_the_config_json_is_what_the_cli_reads() -> None:
    config = Config.create("recursive", size=321, overlap=12, separators=["\n\n", ", "])
    assert Config.from_dict(json.loads(config_json(config))) == config
