"""Evaluate: how well do chunks answer questions? Gold-span retrieval scores, sweeps,
retrieval techniques side by side, advice, and a query playground (on the sidebar's
configuration) for documents without gold data.

The document is the sidebar's (:func:`pages.sidebar.current_source`), nothing else;
strategies, their parameters and the default model come from the registry. Every piece
of document text shown as HTML is escaped first (:mod:`chunking.viz.evidence`).

This file lays out the page; its pieces live in modules named for what they hold: the
question sources (:mod:`pages.evaluate_questions`), the grid form and the sweep
(:mod:`pages.evaluate_grid`), the results tables, advice and one question inspected
(:mod:`pages.evaluate_results`), the techniques side by side
(:mod:`pages.evaluate_techniques`) and the code data set (:mod:`pages.evaluate_code_set`).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from chunking.embedding.models import EmbeddingError
from chunking.evaluation.core import retrieve, searched_texts
from chunking.evaluation.techniques import DENSE
from chunking.viz.evidence import EVIDENCE_CSS, evidence_html
from pages import cached, config_controls, handover, model_choice, sidebar, state
from pages.evaluate_code_set import CODE_SET, code_set_section
from pages.evaluate_grid import LATE_NOTE, MODELS, grid_controls, run_sweep
from pages.evaluate_questions import (
    BUNDLED,
    OWN,
    P,
    bundled_questions,
    own_questions,
    sidebar_document,
)
from pages.evaluate_results import (
    advice_view,
    hit_table,
    question_view,
    results_view,
    snapshot_label,
)
from pages.evaluate_techniques import techniques_section


def evaluation_section() -> None:
    origin = st.radio(
        "Questions",
        [BUNDLED, CODE_SET, OWN],
        horizontal=True,
        persist_state=state.PERSIST,
        key=f"{P}origin",
    )
    if origin == CODE_SET:
        code_set_section()
        return
    qs = bundled_questions() if origin == BUNDLED else own_questions()
    if qs is None:
        return
    controls = grid_controls()
    if controls is None:
        return
    grid, settings, models, technique = controls
    if technique.embedding == "late":
        st.caption(LATE_NOTE)
    outcome = run_sweep(qs, grid, settings, models, technique)
    if outcome is None:
        return
    lensed, counts = outcome
    result = lensed.digest
    state.share_lens(
        state.SharedLens(
            qs.key,
            qs.documents,
            tuple(qs.questions),
            tuple(snapshot_label(s) for s in result.snapshots),
            lensed.lenses,
            lensed.chunks,
            lensed.models,
        )
    )
    st.subheader("Results")
    results_view(result, counts, lensed.lenses, qs.documents)
    st.subheader("Advice")
    advice_view(result)
    st.subheader("Inspect a question")
    question_view(result, qs, lensed.lenses)
    st.subheader("Techniques side by side")
    techniques_section(result, qs, settings, models)


# ------------------------------------------------------------------------ playground


def playground_section() -> None:
    st.caption(
        "For a document without gold answers: type a question and see which chunks a "
        "retriever would return, highlighted in the document with their cosine scores."
    )
    document = sidebar_document()
    if document is None:
        return
    name, text = document
    config = sidebar.current_config()
    source = sidebar.current_source()
    if config is None:
        st.error("The sidebar's configuration is not valid; fix it there to query its chunks.")
        return
    cols = st.columns([3, 1])
    model = str(
        cols[0].selectbox(
            "Embedding model",
            list(MODELS),
            format_func=MODELS.__getitem__,
            persist_state=state.PERSIST,
            key=f"{P}pg_model",
        )
    )
    top_k = int(
        cols[1].number_input("Top k", 1, 50, 5, persist_state=state.PERSIST, key=f"{P}pg_k")
    )
    query = st.text_input(
        "Query",
        persist_state=state.PERSIST,
        key=f"{P}pg_query",
        placeholder="Ask something the document answers",
    )
    st.caption(f"Chunks of the sidebar's configuration: {config_controls.config_label(config)}.")
    if not query.strip():
        return
    assert source is not None  # sidebar_document() found it
    chunks = cached.safe_chunks(source, config)
    if isinstance(chunks, str):
        st.error(chunks)
        return
    embedder = model_choice.load_embedder(model)
    if embedder is None:
        return
    try:  # the chunks go to the disk cache first, with a progress bar
        texts = searched_texts(chunks, DENSE)
        model_choice.embed_with_progress(embedder, texts, f"Embedding {len(chunks):,} chunks")
        hit = retrieve(text, chunks, query, embedder, top_k)
    except EmbeddingError as exc:
        model_choice.model_error(f"The model could not embed the chunks: {exc}")
        return
    ranked = enumerate(zip(hit.spans.tolist(), hit.scores.tolist(), strict=True), start=1)
    hits = [(start, end, rank, score) for rank, ((start, end), score) in ranked]
    st.caption(f"{config_controls.config_label(config)} · {len(chunks):,} chunks of {name}")
    st.html(f"<style>{EVIDENCE_CSS}</style>")
    st.html(evidence_html(text, np.zeros((0, 2), dtype=np.int64), hits))
    chunk_ids = hit.chunk_indices.tolist()
    st.dataframe(hit_table(text, hits, chunk_ids=chunk_ids), hide_index=True)


# ---------------------------------------------------------------------------- page


def main() -> None:
    handover.follow()  # a results row's "Open in Explore" / "Add to Compare"
    st.title("Evaluate")
    st.caption(
        "Score chunking configurations on questions with gold answer spans: recall, "
        "precision, IoU and precision Ω (Chroma's character-span metrics), then get advice."
    )
    evaluate_tab, playground_tab = st.tabs(["Retrieval evaluation", "Query playground"])
    with evaluate_tab:
        evaluation_section()
    with playground_tab:
        playground_section()


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
