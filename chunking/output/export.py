"""Every export format of chunks, shared by the app's downloads and ``chunk-explorer split``.

A *record* is one chunk as a plain dictionary with the columns :data:`COLUMNS`:
``index``, ``start``, ``end``, ``size``, ``text`` and ``metadata``. For a PDF, the
metadata also holds ``"pages"``: the list of 1-based page numbers the chunk spans
(:meth:`chunking.io.Document.pages_of`), the one form of page numbers everywhere, and
``"boxes"``: one ``[page, x0, top, x1, bottom]`` per line fragment of the chunk, in PDF
points from the page's top-left corner (:meth:`chunking.io.Document.boxes_of`).

Formats:

- JSONL: one record per line; JSON: one array of records (both keep the metadata as
  nested JSON);
- CSV and Parquet: one row per record, the metadata as a JSON string column;
- the configuration as JSON (:func:`config_json`), which the CLI reads back with
  ``--config``.

The text writers take a text stream and write record by record, so the CLI never
builds a whole export in memory; the ``to_*`` functions return the whole file for a
download button. Parquet needs pyarrow (the ``app`` extra), imported when it is used.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, BinaryIO, TextIO

from ..config import Config
from ..documents.io import Document
from ..model import Chunk

#: The columns of every export, in order.
COLUMNS = ("index", "start", "end", "size", "text", "metadata")
#: Columns holding integers (CSV gives text back; Parquet stores them as int64).
INT_COLUMNS = ("index", "start", "end", "size")

Record = Mapping[str, Any]


# -------------------------------------------------------------------------- records


class Pages(list[int]):
    """A chunk's page numbers, a list like any other, that also carries the chunk's
    boxes (:meth:`Document.boxes_of`), so that wherever pages travel, boxes do too."""

    def __init__(self, pages: Iterable[int], boxes: list[list[float]]) -> None:
        super().__init__(pages)
        self.boxes = boxes


def chunk_pages(document: Document, chunks: Iterable[Chunk]) -> list[list[int] | None]:
    """Every chunk's PDF page numbers (:meth:`Document.pages_of`), as :class:`Pages`
    with its boxes when the PDF has them; all None without pages."""
    if not document.pages:
        return [None for _ in chunks]
    if document.pdf is None:
        return [document.pages_of(c.start, c.end) for c in chunks]
    return [
        Pages(document.pages_of(c.start, c.end), document.boxes_of(c.start, c.end)) for c in chunks
    ]


def record(chunk: Chunk, pages: Sequence[int] | None = None) -> dict[str, Any]:
    """The chunk's fields; ``pages`` (when given) become ``metadata["pages"]``, and the
    boxes :class:`Pages` carry ``metadata["boxes"]``."""
    row = chunk.to_dict()
    if pages is not None:
        row["metadata"]["pages"] = list(pages)
        boxes = getattr(pages, "boxes", None)
        if boxes is not None:
            row["metadata"]["boxes"] = boxes
    return row


def iter_records(
    chunks: Iterable[Chunk], pages: Iterable[Sequence[int] | None] | None = None
) -> Iterator[dict[str, Any]]:
    """One record per chunk, made as they are asked for (``pages`` from :func:`chunk_pages`)."""
    if pages is None:
        return (record(c) for c in chunks)
    return (record(c, p) for c, p in zip(chunks, pages, strict=True))


def chunk_records(
    chunks: Iterable[Chunk], pages: Iterable[Sequence[int] | None] | None = None
) -> list[dict[str, Any]]:
    """Every chunk's record (``pages`` from :func:`chunk_pages` or ``Report.pages``)."""
    return list(iter_records(chunks, pages))


def metadata_json(row: Record) -> str:
    return json.dumps(row["metadata"], ensure_ascii=False)


# ---------------------------------------------------------------------- text formats


def write_jsonl(records: Iterable[Record], out: TextIO) -> None:
    """One JSON object per line."""
    for row in records:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_json(records: Iterable[Record], out: TextIO) -> None:
    """One JSON array, written element by element (never built as one string)."""
    out.write("[")
    for i, row in enumerate(records):
        out.write(",\n  " if i else "\n  ")
        out.write(json.dumps(row, ensure_ascii=False))
    out.write("\n]\n")


def write_csv(records: Iterable[Record], out: TextIO) -> None:
    """A header row, then one row per record; ``metadata`` is a JSON string.

    RFC 4180: rows end with CRLF, and a text with a comma, a quote or a line break
    (``\\r`` alone included) is quoted. Line breaks inside a text are kept as they
    are, so read the file with ``newline=""``.
    """
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for row in records:
        writer.writerow([*(row[c] for c in COLUMNS[:-1]), metadata_json(row)])


#: The text formats by name (the CLI's ``--format`` choices besides parquet).
TEXT_WRITERS: dict[str, Callable[[Iterable[Record], TextIO], None]] = {
    "jsonl": write_jsonl,
    "json": write_json,
    "csv": write_csv,
}


def _to_text(write: Callable[[Iterable[Record], TextIO], None], records: Iterable[Record]) -> str:
    buffer = io.StringIO(newline="")
    write(records, buffer)
    return buffer.getvalue()


def to_jsonl(records: Iterable[Record]) -> str:
    """The JSONL file as a string."""
    return _to_text(write_jsonl, records)


def to_json(records: Iterable[Record]) -> str:
    """The JSON array file as a string."""
    return _to_text(write_json, records)


def to_csv(records: Iterable[Record]) -> str:
    """The CSV file as a string."""
    return _to_text(write_csv, records)


# --------------------------------------------------------------------------- parquet


def write_parquet(records: Iterable[Record], out: BinaryIO) -> None:
    """A Parquet file: integer columns as int64, ``text`` and JSON ``metadata`` as strings.

    Raises ``ValueError`` with what to install when pyarrow is missing.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(
            "Parquet output needs pyarrow: pip install pyarrow (or the 'app' extra)"
        ) from None
    rows = list(records)
    columns: dict[str, Any] = {
        name: pa.array([row[name] for row in rows], type=pa.int64()) for name in INT_COLUMNS
    }
    columns["text"] = pa.array([row["text"] for row in rows], type=pa.string())
    columns["metadata"] = pa.array([metadata_json(row) for row in rows], type=pa.string())
    pq.write_table(pa.table({name: columns[name] for name in COLUMNS}), out)


def to_parquet(records: Iterable[Record]) -> bytes:
    """The Parquet file as bytes."""
    buffer = io.BytesIO()
    write_parquet(records, buffer)
    return buffer.getvalue()


# --------------------------------------------------------------------- configuration


def config_json(config: Config) -> str:
    """The configuration as the app downloads it and ``--config`` reads it back."""
    return config.to_json()
