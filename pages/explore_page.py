"""Explore: one configuration on the document — boundaries, statistics, warnings, chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from chunking.viz.figures import size_histogram
from chunking.viz.render import page_of_chunk, render_window
from pages import common, kit

PAGE_KEY = "explore.page"
CHUNK_KEY = "explore.chunk"
TABLE_KEY = "explore_table"
#: The size summary's columns as the table shows them.
SUMMARY_COLUMNS = {
    "unit": "Unit",
    "count": "Chunks",
    "mean": "Mean",
    "std": "Std. dev.",
    "min": "Smallest",
    "max": "Largest",
}

# The title comes first: a missing document or an invalid configuration stops the page
# below it, with the reason in place, rather than blanking the page.
st.title("Explore")
source = common.require_source()
config = common.require_config()
document = source.document

st.caption(f"{common.describe_document(document)} — {common.short_label(config)}")

result = common.safe_chunks(source, config)
if isinstance(result, str):
    st.error(result)
    st.stop()
chunks = result
if not chunks:
    st.warning("This configuration produced no chunks. Try another strategy.")
    st.stop()
analysis = common.analysis_for(source, config)
pages = common.pages_for(source, config)


def _go_to_chunk(index: int) -> None:
    """Select chunk ``index`` and show the page of the boundary view that holds it."""
    st.session_state[CHUNK_KEY] = index
    st.session_state[PAGE_KEY] = page_of_chunk(pages, index)


def _on_table_select() -> None:
    rows = st.session_state[TABLE_KEY].selection.rows
    if rows:
        _go_to_chunk(int(rows[0]))


def _on_chunk_input() -> None:
    st.session_state[PAGE_KEY] = page_of_chunk(pages, int(st.session_state[CHUNK_KEY]))


# --- summary -------------------------------------------------------------------------
unit = config.unit
summary = analysis.summary[unit]
cols = st.columns(6)
cols[0].metric("Chunks", f"{summary.count:,}")
cols[1].metric(f"Mean ({unit})", f"{summary.mean:,.1f}")
cols[2].metric(f"Std ({unit})", f"{summary.std:,.1f}")
cols[3].metric(f"Min ({unit})", f"{summary.min:,}")
cols[4].metric(f"Max ({unit})", f"{summary.max:,}")
cols[5].metric("Warnings", len(analysis.warnings))

for warning in analysis.warnings:
    st.warning(f"**{warning.title}.** {warning.message}", icon=":material/warning:")

left, right = st.columns([3, 2])
with left:
    figure = size_histogram(analysis.sizes[unit], limit=config.limit, unit=unit)
    st.plotly_chart(figure, key="explore_histogram", config={"displaylogo": False})
with right:
    st.markdown("**Sizes in every unit**")
    stats = pd.DataFrame([analysis.summary[u].to_dict() for u in analysis.summary])
    stats["unit"] = [kit.option_label(u) for u in stats["unit"]]
    stats = stats.rename(columns=SUMMARY_COLUMNS).set_index("Unit").round(1)
    st.dataframe(stats, key="explore_stats", width="stretch")

# --- boundary view -------------------------------------------------------------------
st.subheader("Document with chunk boundaries")
kit.paged_text(
    document.text,
    chunks,
    PAGE_KEY,
    unit=unit,
    pages=pages,
    cache_key=f"{source.key}|{config.to_json()}",
)

# --- chunks --------------------------------------------------------------------------
st.subheader("Chunks")
table_col, detail_col = st.columns([3, 2])
with table_col:
    st.dataframe(
        common.chunk_table_for(source, config),
        key=TABLE_KEY,
        on_select=_on_table_select,
        selection_mode="single-row",
        hide_index=True,
        height=420,
    )
    st.caption("Select a row to show that chunk on its own.")
with detail_col:
    common.clamp_state(CHUNK_KEY, 0, len(chunks) - 1)
    index = int(
        st.number_input(
            "Chunk",
            min_value=0,
            max_value=len(chunks) - 1,
            step=1,
            persist_state=common.PERSIST,
            key=CHUNK_KEY,
            on_change=_on_chunk_input,
        )
    )
    chunk = chunks[index]
    st.html(render_window(document.text, [chunk], chunk.start, chunk.end, unit=unit))
    details = {
        "index": chunk.index,
        "start": chunk.start,
        "end": chunk.end,
        f"size ({unit})": chunk.size,
        **{u: analysis.sizes[u][index] for u in analysis.sizes},
    }
    if analysis.pages[index] is not None:
        details["pages"] = analysis.pages[index]
    details["metadata"] = dict(chunk.metadata)
    notes = kit.llm_notes(document.text, chunk)
    if notes:  # written on the LLM tools page; the chunk's text and offsets are unchanged
        details["written by the language model"] = notes
    st.json(details, expanded=True)

# --- downloads -----------------------------------------------------------------------
st.subheader("Download")
stem = f"{document.name.rsplit('.', 1)[0]}-{config.strategy}"


def _export(write: Callable[[list[dict[str, Any]]], str | bytes]) -> Callable[[], str | bytes]:
    """The file in one format, built only when its button is clicked."""
    return common.deferred(lambda: write(common.chunk_records(chunks, analysis.pages)))


downloads = (
    ("JSONL", _export(common.to_jsonl), "jsonl", "application/jsonl"),
    ("CSV", _export(common.to_csv), "csv", "text/csv"),
    ("Parquet", _export(common.to_parquet), "parquet", "application/octet-stream"),
    ("Config (JSON)", config.to_json(), "config.json", "application/json"),
)
for col, (label, data, ext, mime) in zip(st.columns(len(downloads)), downloads, strict=True):
    col.download_button(
        label,
        data=data,
        file_name=f"{stem}.{ext}",
        mime=mime,
        on_click="ignore",
        key=f"dl_{ext}",
        icon=":material/download:",
        width="stretch",
    )

# --- export as code ------------------------------------------------------------------
st.subheader("Export as code")
kit.code_export(config, key="explore.code")
