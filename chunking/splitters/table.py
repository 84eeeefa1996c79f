"""CSV and TSV files as tables: groups of whole rows, each carrying the header.

The ``table`` strategy reads the text as delimited records with the standard library's
:mod:`csv` module, whose :class:`csv.Sniffer` guesses the dialect (delimiter among
``, ; tab |``, quote character) from the start of the text; a quoted cell may hold line
breaks and stays in its row. Record offsets come from the lines the reader consumed for
each record, so a row is exactly its source text.

The first ``header_rows`` records are the header. A table that fits the size is one
chunk; a larger one is cut between rows only
(:class:`~chunking.engine.sections.Table`): every group after the first carries the
header lines, verbatim, in ``metadata["context"]``, and the limit holds for the header
and the rows together (what a model reads, :attr:`~chunking.model.Chunk.embedding_text`).
A row over the limit with its header is a chunk of its own, flagged. Text with fewer
records than a header and a row is cut at lines, then words.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Any

from ..engine.sections import LINES, WORDS, SpanSplitter, Table, line_starts
from ..engine.spans import strip_span
from ..model import Piece
from ..params import Param, Strategy, size_param, unit_param
from ..units import Sizer

#: The delimiters a dialect may have, by the name the ``delimiter`` parameter takes.
DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t", "pipe": "|"}
#: How much of the text the dialect is sniffed from (cut at a line break).
SNIFF_CHARS = 16 * 1024
#: How many records :func:`looks_delimited` reads before deciding, and how many it needs
#: (a few lines of prose may hold as many commas each).
SNIFF_RECORDS = 100
MIN_RECORDS = 5

Dialect = type[csv.Dialect] | csv.Dialect
_LINE_END = re.compile(r"\r\n?")


def _sample(text: str) -> str:
    """The start of ``text`` the dialect is guessed from: whole lines where it can."""
    if len(text) <= SNIFF_CHARS:
        return text
    cut = max(text.rfind("\n", 0, SNIFF_CHARS), text.rfind("\r", 0, SNIFF_CHARS))
    return text[: cut + 1] if cut > 0 else text[:SNIFF_CHARS]


def sniff_dialect(text: str, delimiters: str = "".join(DELIMITERS.values())) -> Dialect | None:
    """The dialect :class:`csv.Sniffer` finds in the start of ``text`` with one of
    ``delimiters``, or None when it finds none. The sniffer looks for line ends as
    ``\n`` alone, so it reads the sample with ``\r\n`` and ``\r`` as ``\n``."""
    sample = _LINE_END.sub("\n", _sample(text))
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=delimiters)
    except csv.Error:
        return None
    return dialect if dialect.delimiter in delimiters else None


def dialect_for(text: str, delimiter: str = "auto") -> Dialect:
    """The dialect to read ``text`` with: the ``delimiter`` named (a key of
    :data:`DELIMITERS`) or, for ``auto``, the sniffed one; when sniffing fails, the
    delimiter the first line holds most of (a comma when it holds none)."""
    if delimiter != "auto":
        return _with_delimiter(DELIMITERS[delimiter])
    sniffed = sniff_dialect(text)
    if sniffed is not None:
        return sniffed
    lines = text[:SNIFF_CHARS].splitlines()
    counts = {d: lines[0].count(d) if lines else 0 for d in DELIMITERS.values()}
    best = max(counts, key=lambda d: counts[d])
    return _with_delimiter(best if counts[best] else ",")


def _with_delimiter(delimiter: str) -> type[csv.Dialect]:
    return type("Delimited", (csv.excel,), {"delimiter": delimiter})


def record_spans(text: str, dialect: Dialect) -> list[tuple[int, int]]:
    """The span of every record of ``text`` (trimmed; blank lines left out), read with
    ``dialect``: a record runs over as many lines as its quoted cells need. After a
    line the reader refuses (a cell over :func:`csv.field_size_limit`), every line is a
    record of its own."""
    starts = line_starts(text)
    bounds = [*starts[1:], len(text)]
    reader = csv.reader((text[a:b] for a, b in zip(starts, bounds, strict=True)), dialect)
    spans: list[tuple[int, int]] = []
    done = 0  # lines read
    try:
        for _ in reader:
            spans.append(strip_span(text, starts[done], bounds[reader.line_num - 1]))
            done = reader.line_num
    except csv.Error:
        spans.extend(
            strip_span(text, a, b) for a, b in zip(starts[done:], bounds[done:], strict=True)
        )
    return [(a, b) for a, b in spans if b > a]


def looks_delimited(text: str) -> bool:
    """Whether ``text`` reads as a CSV or TSV table: the sniffer finds a comma, semicolon
    or tab delimiter, and the first records (at least :data:`MIN_RECORDS`) all have the
    same number of cells, at least three (two when tab-separated). JSON and markup are
    not tables."""
    if text.lstrip()[:1] in ("{", "[", "<"):
        return False
    sample = _sample(text)
    dialect = sniff_dialect(sample, ",;\t")
    if dialect is None:
        return False
    reader = csv.reader(io.StringIO(sample, newline=""), dialect)
    try:
        records = [r for r in islice(reader, SNIFF_RECORDS) if r]
    except csv.Error:
        return False
    if len(sample) < len(text) and len(records) < SNIFF_RECORDS:
        records = records[:-1]  # the sample may end inside the last one
    widths = {len(r) for r in records}
    least = 2 if dialect.delimiter == "\t" else 3
    return len(records) >= MIN_RECORDS and len(widths) == 1 and widths.pop() >= least


def table_of(text: str, header_rows: int = 1, delimiter: str = "auto") -> Table | None:
    """``text`` as one :class:`~chunking.engine.sections.Table`: its records after the
    first ``header_rows`` are the rows, the header records are the context; None when
    there is no row."""
    spans = record_spans(text, dialect_for(text, delimiter))
    if len(spans) <= header_rows:
        return None
    context = text[spans[0][0] : spans[header_rows - 1][1]] if header_rows else ""
    return Table(spans[0][0], spans[-1][1], tuple(a for a, _ in spans[header_rows:]), context)


def table_pieces(
    text: str, sizer: Sizer, size: int, header_rows: int = 1, delimiter: str = "auto"
) -> Iterator[Piece]:
    """The ``table`` strategy's pieces (see the module docstring)."""
    table = table_of(text, header_rows, delimiter)
    tables = () if table is None else (table,)
    splitter = SpanSplitter(text, sizer, size, 0, (LINES, WORDS), tables=tables, edge_name="table")
    yield from splitter.split(0, len(text), {"boundary": "end"})


HEADER_ROWS = Param(
    "header_rows",
    int,
    1,
    "How many records at the top are the header, carried by every group of rows "
    "after the first (0: no header).",
    minimum=0,
    maximum=20,
)
DELIMITER = Param(
    "delimiter",
    str,
    "auto",
    "The character between cells: sniffed from the text (auto), or named.",
    choices=("auto", *DELIMITERS),
)


def _table(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return table_pieces(text, sizer, p["size"], p["header_rows"], p["delimiter"])


TABLE = Strategy(
    "table",
    label="Table rows (CSV, TSV)",
    description="Groups of whole rows of a CSV or TSV file (dialect sniffed; a quoted "
    "line break stays in its row). Every group after the first carries the header "
    "line in its context (metadata context), and the size limit holds for the header "
    "and the rows together; a row is never cut. Suits spreadsheets and exports.",
    params=(size_param(160), unit_param("tokens"), HEADER_ROWS, DELIMITER),
    split=_table,
)
