"""The Explore page's chunk table as it is sent (issue 38, point 3: cheaper reruns).

``pages.chunk_tables.chunk_table_view`` is the chunk table as one shared Arrow table,
made once per document and configuration, so that a rerun neither unpickles a copy
nor converts it again. These tests hold it to the table the page showed before
(:func:`pages.chunk_tables.chunk_table_for`, built from the core's chunks), to each
document's own text, and to the byte bound of its cache.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chunking
from chunking import Config
from chunking.runtime.lru import approx_bytes
from pages import cached, chunk_tables

CONFIGS = (
    Config.from_dict({"strategy": "recursive", "params": {"size": 120, "unit": "chars"}}),
    Config.from_dict({"strategy": "sentence", "params": {"size": 30, "unit": "words"}}),
)
TEXT = "\n\n".join(
    f"Paragraph {i}. A heron waits by the weir; the miller counts {i} sacks of grain."
    for i in range(40)
)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.strategy)
def test_the_view_is_the_chunk_table_row_for_row(config: Config) -> None:
    source = cached.Source.from_text(TEXT, "notes.txt", "paste")
    view = chunk_tables.chunk_table_view(source, config)
    table = chunk_tables.chunk_table_for(source, config)
    assert isinstance(view, pa.Table)
    assert view.column_names == list(table.columns)
    assert view.to_pydict() == {c: table[c].tolist() for c in table.columns}
    expected = chunking.run(TEXT, config)
    assert view.column("start").to_pylist() == [c.start for c in expected]
    assert view.column("end").to_pylist() == [c.end for c in expected]


def test_the_view_is_made_once_and_shared() -> None:
    source = cached.Source.from_text(TEXT + "\n\nOnce.", "notes.txt", "paste")
    first = chunk_tables.chunk_table_view(source, CONFIGS[0])
    assert chunk_tables.chunk_table_view(source, CONFIGS[0]) is first
    assert chunk_tables.chunk_table_view(source, CONFIGS[1]) is not first


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.text(alphabet="abc xyz.\n", min_size=1, max_size=60), min_size=1, max_size=6).map(
        "\n\n".join
    )
)
def test_each_text_gets_its_own_view(text: str) -> None:
    """Two documents, one the other's prefix: each view has its own text's chunks."""
    config = CONFIGS[0]
    longer = text + "\n\nAnd one more paragraph at the end."
    for body in (text, longer, text):
        source = cached.Source.from_text(body, "same-name.txt", "paste")
        view = chunk_tables.chunk_table_view(source, config)
        assert view.column("end").to_pylist() == [c.end for c in chunking.run(body, config)]


def test_an_arrow_table_counts_its_buffers_against_the_cache_bound() -> None:
    table = pa.table({"text": ["x" * 1000] * 500, "start": list(range(500))})
    assert approx_bytes(table) >= table.nbytes > 500_000
