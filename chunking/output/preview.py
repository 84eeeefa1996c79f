"""Short one-line forms of chunk text and metadata, for tables and search hits.

Used by the app's chunk tables and the vector database box; pure functions, no
dependency beyond the standard library.
"""

from __future__ import annotations

from collections.abc import Sequence


def preview(text: str, width: int = 80) -> str:
    """The start of ``text`` on one line: every run of whitespace becomes one space, and
    a text longer than ``width`` characters is cut to ``width - 1`` and ends with "…"
    (so the result is never longer than ``width``)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def row_range(rows: Sequence[int] | None) -> str:
    """A chunk's ``table_rows`` (first and last row, counted from 1) as "6–10", or "6"
    for one row; "" when the chunk is not a group of table rows."""
    if not rows:
        return ""
    first, last = rows
    return str(first) if first == last else f"{first}–{last}"
