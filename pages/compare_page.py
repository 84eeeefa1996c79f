"""Compare: two to four configurations on the same document."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import pandas as pd
import streamlit as st

from chunking import Chunk, Config
from chunking.analysis.report import Report, agreement_matrix
from chunking.evaluation.lens import reason_lines, reasons_table
from chunking.output.html_report import document_report
from chunking.viz.figures import agreement_heatmap, boundary_strip, histogram_panels
from chunking.viz.render import render_window
from pages import (
    boundary_editor,
    cached,
    chunk_tables,
    config_controls,
    exports,
    handover,
    model_choice,
    pdf_view,
    sidebar,
    state,
)

COUNT_KEY = "cmp.count"
K_KEY = "cmp.k"
WINDOW_START_KEY = "cmp.window_start"
WINDOW_SIZE_KEY = "cmp.window_size"
WINDOW_SIZES = (1_000, 2_000, 5_000, 10_000)


def sizes_section(
    text: str,
    configs: Mapping[str, Config],
    analyses: Mapping[str, Report],
    names: Mapping[str, str],
) -> None:
    """Where each configuration cuts, its size histogram and the statistics table."""
    lanes = {names[x]: analyses[x].boundaries for x in analyses}
    st.plotly_chart(
        boundary_strip(lanes, len(text)), key="cmp_strip", config={"displaylogo": False}
    )
    st.plotly_chart(
        histogram_panels(
            {names[x]: analyses[x].sizes[configs[x].unit] for x in analyses},
            units={names[x]: config_controls.unit_name(configs[x].unit) for x in analyses},
            limits={names[x]: configs[x].limit for x in analyses},
        ),
        key="cmp_histograms",
        config={"displaylogo": False},
    )
    st.markdown("**Statistics**")
    st.caption(
        "Sizes are in each configuration's own unit; the last columns compare all of them "
        "in cl100k tokens and in the embedding model's word pieces."
    )
    event = st.dataframe(
        chunk_tables.comparison_table({x: (configs[x], analyses[x]) for x in analyses}),
        key="cmp_stats",
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
    )
    rows = list(event.selection.rows) if event is not None else []
    handover.row_actions(
        [configs[x] for x in analyses], rows[0] if rows else None, "cmp.row", compare=False
    )


def agreement_section(analyses: Mapping[str, Report]) -> None:
    """How many boundaries each pair of configurations shares, within k characters."""
    st.session_state.setdefault(K_KEY, 20)
    k = int(
        st.slider(
            "Tolerance k (characters)",
            min_value=0,
            max_value=500,
            step=5,
            persist_state=state.PERSIST,
            key=K_KEY,
            help="Two boundaries agree when they are at most k characters apart. The score "
            "is the share of both configurations' boundaries that have a partner in the other.",
        )
    )
    letters = list(analyses)
    matrix = agreement_matrix([analyses[x].boundaries for x in letters], k)
    agree_left, agree_right = st.columns([2, 3])
    with agree_left:
        frame = pd.DataFrame(matrix, index=letters, columns=letters)
        st.dataframe(frame.style.format("{:.0%}"), key="cmp_agreement")
    with agree_right:
        st.plotly_chart(
            agreement_heatmap(letters, matrix, k=k),
            key="cmp_heatmap",
            config={"displaylogo": False},
        )


def side_by_side_section(
    text: str,
    configs: Mapping[str, Config],
    chunked: Mapping[str, tuple[Chunk, ...]],
    names: Mapping[str, str],
) -> None:
    """The same stretch of the document with each configuration's chunks."""
    st.session_state.setdefault(WINDOW_SIZE_KEY, WINDOW_SIZES[1])
    controls = st.columns([1, 3])
    size = (
        controls[0].selectbox(
            "Window (characters)",
            WINDOW_SIZES,
            persist_state=state.PERSIST,
            key=WINDOW_SIZE_KEY,
            format_func=lambda n: f"{n:,}",
        )
        or WINDOW_SIZES[1]
    )
    last_start = max(0, len(text) - size)
    state.clamp_state(WINDOW_START_KEY, 0, last_start)
    start = 0
    if last_start > 0:
        start = controls[1].slider(
            "Window start (character offset)",
            min_value=0,
            max_value=last_start,
            step=max(1, size // 10),
            persist_state=state.PERSIST,
            key=WINDOW_START_KEY,
            help="All panels show the same stretch of the document.",
        )
    end = min(len(text), start + size)
    st.caption(f"Characters {start:,}–{end:,} of {len(text):,}, with each configuration's chunks.")
    for column, letter in zip(st.columns(len(chunked)), chunked, strict=True):
        with column:
            st.markdown(f"**{names[letter]}**")
            unit = config_controls.unit_name(configs[letter].unit)
            st.html(render_window(text, chunked[letter], start, end, unit=unit))


def misses_section() -> None:
    """Why retrieval missed, per configuration of the last evaluation, side by side."""
    shared = state.shared_lens()
    if shared is None:
        state.no_lens_notice("Comparing why retrieval misses")
        return
    lines = reason_lines(shared.lenses)
    if not lines:
        st.info("The last evaluation retrieved nothing (no embedding model): no miss to compare.")
        return
    k = shared.lenses[0].top_k
    st.caption(
        f"From the last evaluation on the Evaluate page: {len(shared.questions)} questions, "
        f"top {k}, {len(shared.lenses)} configuration(s). Counts are missed gold spans."
    )
    st.markdown("\n".join(f"- {line}" for line in lines))
    st.dataframe(
        reasons_table(shared.lenses),
        hide_index=True,
        width="stretch",
        column_config={
            "configuration": "Configuration",
            "model": "Model",
            "technique": "Technique",
            "questions": "Questions",
            "never_retrieved_share": st.column_config.NumberColumn(
                "Never retrieved", format="percent"
            ),
        },
        key="cmp_reasons",
    )


def download_section(
    source: cached.Source,
    configs: Mapping[str, Config],
    chunked: Mapping[str, tuple[Chunk, ...]],
    analyses: Mapping[str, Report],
) -> None:
    """The first configuration's report with the others side by side, built on click."""
    first, *others = chunked
    report = exports.deferred(
        partial(
            document_report,
            compare=[configs[x] for x in others],
            report=analyses[first],
            pdf=sidebar.source_bytes(source) if pdf_view.has_pages(source) else None,
        ),
        source.document,
        configs[first],
        chunked[first],
    )
    stem = f"{source.document.name.rsplit('.', 1)[0]}-compare"
    exports.download_buttons(
        [("Download the report (HTML)", report, "report.html", "text/html")], stem, key="cmp_dl_"
    )
    st.caption(
        f"One self-contained file (no network request): {first}'s boundary view, histogram, "
        "statistics and code, with the boundary strip, histograms and statistics of "
        + ", ".join(others)
        + " side by side."
    )


def main() -> None:
    handover.follow()  # a row's "Open in Explore"
    source = sidebar.require_source()
    first = sidebar.require_config()
    st.title("Compare")
    st.caption(
        f"{source.document.describe()} — configuration A is the sidebar's; set up the others below."
    )
    configs = config_controls.comparison_configs(first, "cmp.", COUNT_KEY)
    chunked = chunk_tables.chunk_each(source, model_choice.ready_to_chunk(source, configs))
    if len(chunked) < 2:
        st.info("Two valid configurations are needed for a comparison; fix the settings above.")
        st.stop()
    names = {x: f"{x} · {config_controls.config_label(configs[x], title=True)}" for x in chunked}
    analyses = {x: cached.analysis(source, configs[x]) for x in chunked}
    text = source.document.text
    sizes_section(text, configs, analyses, names)
    st.subheader("Boundary agreement")
    agreement_section(analyses)
    st.subheader("Agreement with the gold")
    boundary_editor.compare_section(source, configs, chunked, names)
    st.subheader("Side by side")
    side_by_side_section(text, configs, chunked, names)
    if pdf_view.has_pages(source):  # a PDF: the same page with each configuration's chunks
        st.subheader("Pages")
        units = {x: config_controls.unit_name(configs[x].unit) for x in chunked}
        pdf_view.compare_pages(source, sidebar.source_bytes(source), chunked, names, units)
    st.subheader("Why retrieval misses")
    misses_section()
    st.subheader("Export as code")
    for column, letter in zip(st.columns(len(chunked)), chunked, strict=True):
        with column:
            st.markdown(f"**{names[letter]}**")
            exports.code_export(configs[letter], key=f"cmp.code.{letter}")
    st.subheader("Download")
    download_section(source, configs, chunked, analyses)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
