"""Explore: one configuration on the document — boundaries, statistics, warnings, chunks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from chunking import Chunk, Config
from chunking.analysis.report import Report
from chunking.documents.corpus import doc_id
from chunking.evaluation.lens import chunk_colours, question_marks
from chunking.llm import LLMError, make_llm
from chunking.llm.enrich import written_notes
from chunking.output.export import chunk_records, to_csv, to_jsonl, to_parquet
from chunking.output.html_report import document_report
from chunking.viz.figures import size_histogram
from chunking.viz.render import Page, context_html, page_of_chunk, render_window
from pages import (
    boundary_editor,
    cached,
    chunk_tables,
    config_controls,
    exports,
    model_choice,
    param_widgets,
    pdf_view,
    sidebar,
    state,
    text_view,
    vector_db,
)

PAGE_KEY = "explore.page"
CHUNK_KEY = "explore.chunk"
TABLE_KEY = "explore_table"
LENS_COLOUR_KEY = "explore.lens_colour"
LENS_CONFIG_KEY = "explore.lens_config"
LENS_QUESTION_KEY = "explore.lens_question"
VECTOR_DB_KEY = "explore.vector_db"
#: Explore's tabs (``state.EXPLORE_TABS``). Only the open tab is drawn: a size change
#: redraws the counts and one section, which cut what each browser spends on it from
#: 0.63 to 0.25 CPU seconds (``bench/bench_render.py``).
BOUNDARIES, SIZES, CHUNKS, EDITOR, DOWNLOAD = state.EXPLORE_TABS
#: How the boundary view colours chunks: by position (even/odd) or by retrieval traffic.
COLOURINGS = {"position": "even / odd chunk", "retrieved": "retrieval traffic (heat)"}
#: The size summary's columns as the table shows them.
SUMMARY_COLUMNS = {
    "unit": "Unit",
    "count": "Chunks",
    "mean": "Mean",
    "std": "Std. dev.",
    "min": "Smallest",
    "max": "Largest",
}


def _go_to_chunk(pages: Sequence[Page], index: int) -> None:
    """Select chunk ``index`` and show the page of the boundary view that holds it."""
    st.session_state[CHUNK_KEY] = index
    st.session_state[PAGE_KEY] = page_of_chunk(pages, index)


def _on_table_select(pages: Sequence[Page]) -> None:
    rows = st.session_state[TABLE_KEY].selection.rows
    if rows:
        _go_to_chunk(pages, int(rows[0]))


def _on_chunk_input(pages: Sequence[Page]) -> None:
    st.session_state[PAGE_KEY] = page_of_chunk(pages, int(st.session_state[CHUNK_KEY]))


def _show_question(pages: Sequence[Page], golden: Mapping[int, Sequence[int]]) -> None:
    """Turn to the page holding the selected question's first gold chunk."""
    first = golden.get(st.session_state.get(LENS_QUESTION_KEY, -1), ())
    if first:
        st.session_state[PAGE_KEY] = page_of_chunk(pages, first[0])


def lens_section(
    source: cached.Source, chunks: Sequence[Chunk], pages: Sequence[Page]
) -> tuple[list[int] | None, list[tuple[int, int]]]:
    """The retrieval lens on the text, when the last evaluation cut this document at
    these very boundaries: the chunks' heat (how many questions retrieved each) and the
    selected question's gold spans to underline."""
    shared = state.shared_lens()
    if shared is None:
        state.no_lens_notice("Colouring the chunks by retrieval traffic")
        return None, []
    found = shared.matching(source.document.text, [(c.start, c.end) for c in chunks])
    if not found:
        st.info(
            "The last evaluation did not cut this document at these boundaries. To see its "
            "retrieval traffic here, evaluate this configuration on the **Evaluate** page "
            "(My document, with a question file or typed questions)."
        )
        return None, []
    cols = st.columns([2, 2, 3])
    colour = cols[0].radio(
        "Colour chunks by",
        list(COLOURINGS),
        format_func=COLOURINGS.__getitem__,
        persist_state=state.PERSIST,
        key=LENS_COLOUR_KEY,
    )
    pick = cols[1].selectbox(
        "Evaluated as",
        range(len(found)),
        format_func=lambda i: shared.labels[found[i][0]],
        persist_state=state.PERSIST,
        key=LENS_CONFIG_KEY,
    )
    at, cid = found[min(pick or 0, len(found) - 1)]
    lens = shared.lenses[at]
    asked = [q for q, question in enumerate(shared.questions) if question.corpus_id == cid]
    golden = {q: question_marks(lens, q).gold_chunks for q in asked}
    question = cols[2].selectbox(
        "Underline the gold text of",
        [None, *asked],
        format_func=lambda q: "no question" if q is None else shared.questions[q].text,
        persist_state=state.PERSIST,
        key=LENS_QUESTION_KEY,
        on_change=_show_question,
        args=(pages, golden),
    )
    heat = None
    if colour == "retrieved":
        if lens.retrieval:
            heat = [int(n) for n in chunk_colours(lens, cid, "retrieved")]
        else:
            st.caption("This evaluation retrieved nothing (no embedding model): no traffic.")
    gold: list[tuple[int, int]] = []
    if question is not None:
        gold = [(r.start, r.end) for r in shared.questions[question].references]
        misses = lens.question_misses(question)
        st.caption(
            "; ".join(m.describe() for m in misses)
            if misses
            else f"All of its gold text was retrieved in the top {lens.top_k}."
        )
    return heat, gold


def summary_section(config: Config, analysis: Report) -> None:
    """Counts and sizes in the configuration's unit, and the warnings."""
    unit = config.unit
    summary = analysis.summary[unit]
    cols = st.columns(6)
    cols[0].metric("Chunks", f"{summary.count:,}")
    cols[1].metric(f"Mean ({unit})", f"{summary.mean:,.1f}")
    cols[2].metric(f"Std ({unit})", f"{summary.std:,.1f}")
    cols[3].metric(f"Min ({unit})", f"{summary.min:,}")
    cols[4].metric(f"Max ({unit})", f"{summary.max:,}")
    cols[5].metric("Warnings", analysis.warning_count)
    for warning in analysis.warnings:
        st.warning(f"**{warning.title}.** {warning.message}", icon=":material/warning:")


def sizes_section(config: Config, analysis: Report) -> None:
    """The histogram in the configuration's unit and the sizes in every unit."""
    unit = config.unit
    left, right = st.columns([3, 2])
    with left:
        figure = size_histogram(analysis.sizes[unit], limit=config.limit, unit=unit)
        st.plotly_chart(figure, key="explore_histogram", config={"displaylogo": False})
    with right:
        st.markdown("**Sizes in every unit**")
        stats = pd.DataFrame([analysis.summary[u].to_dict() for u in analysis.summary])
        stats["unit"] = [param_widgets.option_label(u) for u in stats["unit"]]
        stats = stats.rename(columns=SUMMARY_COLUMNS).set_index("Unit").round(1)
        st.dataframe(stats, key="explore_stats", width="stretch")


def llm_notes(document: str, chunk: Chunk) -> dict[str, str]:
    """What the model chosen on the LLM tools page already wrote for ``chunk`` (from the
    answer cache: the model is never called here)."""
    url = str(st.session_state.get(state.LLM_URL_KEY) or "").strip()
    model = str(st.session_state.get(state.LLM_MODEL_KEY) or "").strip()
    try:
        llm = make_llm(url or None, model or None)
    except LLMError:
        return {}  # the LLM page says what is wrong with its settings
    return written_notes(llm, document, chunk)


def chunk_section(
    source: cached.Source,
    config: Config,
    chunks: Sequence[Chunk],
    analysis: Report,
    pages: Sequence[Page],
) -> None:
    """The chunk table and one chunk on its own, with its sizes and metadata."""
    text, unit = source.document.text, config.unit
    table_col, detail_col = st.columns([3, 2])
    with table_col:
        st.dataframe(
            chunk_tables.chunk_table_view(source, config),
            key=TABLE_KEY,
            on_select=partial(_on_table_select, pages),
            selection_mode="single-row",
            hide_index=True,
            height=420,
        )
        st.caption("Select a row to show that chunk on its own.")
    with detail_col:
        state.clamp_state(CHUNK_KEY, 0, len(chunks) - 1)
        index = int(
            st.number_input(
                "Chunk",
                min_value=0,
                max_value=len(chunks) - 1,
                step=1,
                persist_state=state.PERSIST,
                key=CHUNK_KEY,
                on_change=_on_chunk_input,
                args=(pages,),
            )
        )
        chunk = chunks[index]
        carried = context_html(chunk)  # e.g. a table's header: read with it, not in it
        if carried:
            st.html(carried)
        st.html(render_window(text, [chunk], chunk.start, chunk.end, unit=unit))
        details: dict[str, Any] = {
            "index": chunk.index,
            "start": chunk.start,
            "end": chunk.end,
            f"size ({unit})": chunk.size,
            **{u: analysis.sizes[u][index] for u in analysis.sizes},
        }
        if analysis.pages[index] is not None:
            details["pages"] = analysis.pages[index]
        details["metadata"] = dict(chunk.metadata)
        notes = llm_notes(text, chunk)
        if notes:  # written on the LLM tools page; the chunk's text and offsets are unchanged
            details["written by the language model"] = notes
        st.json(details, expanded=True)


def download_section(
    source: cached.Source, config: Config, chunks: Sequence[Chunk], analysis: Report
) -> None:
    """The chunks in every export format (the same records as ``chunk-explorer split``)
    and the configuration."""

    def export(write: Callable[[list[dict[str, Any]]], str | bytes]) -> Callable[[], str | bytes]:
        return exports.deferred(lambda: write(chunk_records(chunks, analysis.pages)))

    stem = f"{source.document.name.rsplit('.', 1)[0]}-{config.strategy}"
    downloads: list[exports.Download] = [
        ("JSONL", export(to_jsonl), "jsonl", "application/jsonl"),
        ("CSV", export(to_csv), "csv", "text/csv"),
        ("Parquet", export(to_parquet), "parquet", "application/octet-stream"),
        ("Config (JSON)", config.to_json(), "config.json", "application/json"),
    ]
    exports.download_buttons(downloads, stem, key="dl_")
    # built on click only: the report inlines plotly's script and the whole document
    report = exports.deferred(
        partial(
            document_report,
            report=analysis,
            pdf=sidebar.source_bytes(source) if pdf_view.has_pages(source) else None,
        ),
        source.document,
        config,
        chunks,
    )
    exports.download_buttons(
        [("Download the report (HTML)", report, "report.html", "text/html")], stem, key="dl_"
    )
    st.caption(
        "One self-contained file (no network request): the boundary view, the size "
        "histogram, the statistics with the warnings, the configuration and its code."
    )


def vector_database_section(
    source: cached.Source, config: Config, chunks: Sequence[Chunk], analysis: Report
) -> None:
    """These chunks and their vectors into a vector database, and searched back."""

    def documents() -> list[vector_db.SinkDocument]:
        identity = doc_id(sidebar.source_bytes(source))
        return [vector_db.SinkDocument(identity, source.document.name, chunks, analysis.pages)]

    vector_db.vector_database_box("explore", config, documents, len(chunks))


def boundaries_section(
    source: cached.Source, config: Config, chunks: Sequence[Chunk], pages: Sequence[Page]
) -> None:
    """The document with the chunk boundaries (and the lens), a PDF's page beside it."""
    heat, gold = lens_section(source, chunks, pages)
    selected = int(st.session_state.get(CHUNK_KEY) or 0)  # outlined, as on the PDF page
    paged = pdf_view.has_pages(source)  # a PDF: its page view beside the text
    text_col, page_col = st.columns(2) if paged else (st.container(), None)
    with text_col:
        shown = text_view.paged_text(
            source.document.text,
            chunks,
            PAGE_KEY,
            unit=config.unit,
            pages=pages,
            cache_key=f"{source.key}|{config.to_json()}",
            heat=heat,
            gold=gold,
            selected=selected,
        )
    if page_col is not None:
        with page_col:
            pdf_view.page_view(
                source,
                sidebar.source_bytes(source),
                chunks,
                shown,
                unit=config.unit,
                selected=selected,  # the Chunk input's
                heat=heat,
                gold=gold,
                on_select=partial(_go_to_chunk, pages),  # a click on a rectangle
            )


def main() -> None:
    # The title comes first: a missing document or an invalid configuration stops the
    # page below it, with the reason in place, rather than blanking the page.
    st.title("Explore")
    source = sidebar.require_source()
    config = sidebar.require_config()
    embeds = "model" in config.spec.param_names  # named next to the figures
    model = f" · model {model_choice.model_label(str(config.params['model']))}" if embeds else ""
    label = config_controls.config_label(config, title=True)
    st.caption(f"{source.document.describe()} — {label}{model}")
    # A strategy that embeds (semantic) loads its model and embeds here, with the wait
    # estimated and progress shown, rather than under the chunking's bare spinner.
    model_key = state.param_key(config.strategy, "model")
    if not model_choice.embed_for_chunking(source.document.text, source.key, config, model_key):
        st.stop()
    chunks = cached.safe_chunks(source, config)
    if isinstance(chunks, str):
        st.error(chunks)
        st.stop()
    if not chunks:
        st.warning("This configuration produced no chunks. Try another strategy.")
        st.stop()
    analysis = cached.analysis(source, config)
    pages = cached.boundary_pages(source, config)
    summary_section(config, analysis)
    tabs = state.lazy_tabs(state.EXPLORE_TABS, state.EXPLORE_TAB_KEY)
    if tabs[BOUNDARIES].open:
        with tabs[BOUNDARIES]:
            boundaries_section(source, config, chunks, pages)
    if tabs[SIZES].open:
        with tabs[SIZES]:
            sizes_section(config, analysis)
    if tabs[CHUNKS].open:
        with tabs[CHUNKS]:
            chunk_section(source, config, chunks, analysis, pages)
    if tabs[EDITOR].open:
        with tabs[EDITOR]:
            boundary_editor.explore_section(source, config, chunks)
    if tabs[DOWNLOAD].open:
        with tabs[DOWNLOAD]:
            download_section(source, config, chunks, analysis)
            st.subheader("Export as code")
            exports.code_export(config, key="explore.code")
            # Drawn only while open: the box (its model, endpoint and folder widgets)
            # was a third of every rerun of this page, for a feature used once in a while.
            box = state.lazy_expander("Write to a vector database", VECTOR_DB_KEY)
            if box.open:
                with box:
                    vector_database_section(source, config, chunks, analysis)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
