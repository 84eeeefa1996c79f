"""Chunks and their tables: every configuration's chunks with its errors shown
(:func:`chunk_each`), one row per chunk (:func:`chunk_table_for`) and one row per
configuration (:func:`comparison_table`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from chunking import Chunk, Config
from chunking.analysis.report import Report
from chunking.output.preview import preview, row_range
from pages import cached
from pages.param_widgets import option_label

if TYPE_CHECKING:
    import pyarrow as pa

# ------------------------------------------------------------------------- chunks


def chunk_each(
    source: cached.Source, configs: Mapping[str, Config]
) -> dict[str, tuple[Chunk, ...]]:
    """The chunks of every configuration (by name) that cuts the document into some;
    each of the others is left out with its error, or a warning that it made none."""
    chunked = {}
    for name, config in configs.items():
        result = cached.safe_chunks(source, config)
        if isinstance(result, str):
            st.error(f"{name}: {result}")
        elif not result:
            st.warning(f"{name}: this configuration produced no chunks.")
        else:
            chunked[name] = result
    return chunked


# ------------------------------------------------------------------------- tables


def chunk_table(chunks: Sequence[Chunk], analysis: Report) -> pd.DataFrame:
    """One row per chunk for display: offsets, sizes in every unit, the page a PDF chunk
    starts on, the table rows a group holds and the header it carries (when some chunk
    has them), flags and a preview."""
    table = pd.DataFrame(
        {
            "chunk": [c.index for c in chunks],
            "start": [c.start for c in chunks],
            "end": [c.end for c in chunks],
            # chars, words, cl100k tokens, the model's word pieces (and the user's unit)
            **{option_label(unit): sizes for unit, sizes in analysis.sizes.items()},
        }
    )
    if any(p is not None for p in analysis.pages):
        table["page"] = [p[0] if p else None for p in analysis.pages]
    table["boundary"] = [str(c.metadata.get("boundary", "")) for c in chunks]
    if any(c.metadata.get("table_rows") for c in chunks):  # rows of a table cut in groups
        table["table_rows"] = [row_range(c.metadata.get("table_rows")) for c in chunks]
    if any(c.metadata.get("context") for c in chunks):  # e.g. a table header carried
        table["context"] = [preview(str(c.metadata.get("context") or "")) for c in chunks]
    table["flags"] = [", ".join(c.flags) for c in chunks]
    table["text"] = [preview(c.text) for c in chunks]
    return table


@cached.bounded("chunk_tables", copy=True)
def _chunk_table(key: str, config_json: str, _source: cached.Source) -> pd.DataFrame:
    config = Config.from_json(config_json)
    return chunk_table(cached.chunks(_source, config), cached.analysis(_source, config))


def chunk_table_for(source: cached.Source, config: Config) -> pd.DataFrame:
    """:func:`chunk_table` of the chunks for ``config``, built once per configuration
    rather than on every rerun (a preview per chunk adds up on large documents)."""
    return _chunk_table(source.key, config.to_json(), source)


@cached.bounded("chunk_tables")
def _chunk_arrow(key: str, config_json: str, _source: cached.Source) -> pa.Table:
    import pyarrow as pa

    table = _chunk_table(key, config_json, _source)
    return pa.Table.from_pandas(table, preserve_index=False)


def chunk_table_view(source: cached.Source, config: Config) -> pa.Table:
    """:func:`chunk_table_for` as the Arrow table ``st.dataframe`` sends, made once per
    configuration and shared (an Arrow table is immutable): a rerun neither unpickles
    a copy of the table nor converts it again, which adds up on a novel's thousands of
    chunks."""
    return _chunk_arrow(source.key, config.to_json(), source)


def comparison_table(rows: Mapping[str, tuple[Config, Report]]) -> pd.DataFrame:
    """One row per configuration (keyed by its letter) with human column names: sizes in
    the configuration's own unit, then in cl100k tokens and model word pieces for all."""
    records = []
    for letter, (config, analysis) in rows.items():
        own = analysis.summary[config.unit]
        record = {
            "Config": letter,
            "Strategy": config.spec.label,
            "Limit": f"{config.limit} {option_label(config.unit)}" if config.limit else "—",
            "Chunks": own.count,
            "Mean size": round(own.mean, 1),
            "Std. dev.": round(own.std, 1),
            "Smallest": own.min,
            "Largest": own.max,
            "Unit": option_label(config.unit),
            "Mean (tokens)": round(analysis.summary["tokens"].mean, 1),
        }
        if "model" in analysis.summary:
            record["Largest (model word pieces)"] = analysis.summary["model"].max
        record["Warnings"] = analysis.warning_count
        records.append(record)
    return pd.DataFrame(records)
