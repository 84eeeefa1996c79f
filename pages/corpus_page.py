"""Corpus: the sidebar's configuration over many documents, and up to four compared.

The corpus (uploaded files, a zip, or the sample documents) is read once and kept in the
session, so it is still there after a visit to another page. Statistics are kept per
(corpus, configuration, window check) in the session too: changing only the view (the
order, the filter, the comparison's layout) recomputes nothing.

A click on a row opens the document in Explore through the sidebar's own widgets: a
sample is selected as a sample, any other document is handed over as pasted text. Once
the page is drawn, what Explore shows of the table's first rows (chunks, report, pages,
chunk table, suggestion) is computed into the shared caches, so that opening one of
them costs what opening it again does (:func:`prepare_for_explore`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from chunking import Config
from chunking.analysis.corpus_stats import (
    Corpus,
    CorpusDocument,
    CorpusStats,
    chunks_per_document,
    comparison_rows,
    corpus_stats,
    most_warnings,
    read_corpus,
)
from chunking.analysis.report import model_max_tokens, wordpiece_starts
from chunking.documents.corpus import CorpusError, CorpusLimits, Member, uploaded_members
from chunking.output.export import chunk_pages
from chunking.viz.figures import size_histogram
from pages import cached, chunk_tables, config_controls, sidebar, state, vector_db

UPLOAD_KEY = "corpus.upload"
SAMPLES_KEY = "corpus.samples"
CLEAR_KEY = "corpus.clear"
WINDOW_KEY = "corpus.window"
SHOW_KEY = "corpus.show"
SORT_KEY = "corpus.sort"
COMPARE_KEY = "corpus.compare"
COUNT_KEY = "corpus.count"
TABLE_KEY = "corpus_table"
#: Corpora up to this many characters have their chunks checked against the model's
#: window from the start; larger ones ask first (it takes about 0.3 s per MB).
WINDOW_AUTO_CHARS = 5_000_000
#: Statistics kept per session, the oldest dropped first.
MAX_RESULTS = 12
#: The table's first rows prepared for Explore once the page is drawn, and at most this
#: many characters of them in all (a first open of a 4.6 MB text costs about 2 s).
PREPARE_ROWS = 5
PREPARE_CHARS = 6_000_000
SHOWN = {
    "all": "All documents",
    "warnings": "With warnings",
    "errors": "Not read or cut",
}
SORTS = {
    "warnings": "Most warnings first",
    "chunks": "Most chunks first",
    "largest": "Largest chunk first",
    "smallest": "Smallest chunk first",
    "name": "Name",
}

#: Characters that Markdown gives a meaning to; document names are shown literally.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$&])")

# The corpus (a chunking.analysis.corpus_stats.Corpus: a class of the core, so that isinstance
# holds across runs of this script), where it came from ("samples": their names are the
# sidebar's sample names; "upload") and how to call it.
_CORPUS_STATE = "_ce_corpus"
_ORIGIN_STATE = "_ce_corpus_origin"
_LABEL_STATE = "_ce_corpus_label"
_RESULTS_STATE = "_ce_corpus_results"
_PROBLEM_STATE = "_ce_corpus_problem"
_SEEN_UPLOAD_STATE = "_ce_corpus_seen_upload"
_OPEN_STATE = "_ce_corpus_open"
_OPEN_PROBLEM_STATE = "_ce_corpus_open_problem"
_TABLE_ROUND_STATE = "_ce_corpus_table_round"
_PREPARED_STATE = "_ce_corpus_prepared"


# ----------------------------------------------------------------------- loading


def literal(text: str) -> str:
    """``text`` escaped for Streamlit's Markdown (captions, progress texts): file names
    are untrusted and must not become links, images or markup."""
    return _MARKDOWN.sub(r"\\\1", text)


def _progress(holder, label: str):
    """A progress callback drawing on ``holder`` (an ``st.empty``)."""

    def update(done: int, total: int, name: str) -> None:
        text = literal(f"{label}: {done:,} of {total:,} · {name}")
        holder.progress(done / max(total, 1), text=text)

    return update


def _read(members: Sequence[Member], origin: str, label: str, max_bytes: int) -> None:
    holder = st.empty()
    corpus = read_corpus(members, max_bytes, _progress(holder, "Reading"), total=len(members))
    holder.empty()
    st.session_state[_CORPUS_STATE] = corpus
    st.session_state[_ORIGIN_STATE] = origin
    st.session_state[_LABEL_STATE] = label
    st.session_state[WINDOW_KEY] = corpus.characters <= WINDOW_AUTO_CHARS
    st.session_state[_PROBLEM_STATE] = None


def _load_uploads(files: Sequence, max_bytes: int) -> None:
    """Read the uploaded files and zips as the new corpus, or say which limit refused
    them (the corpus loaded before stays)."""
    limits = CorpusLimits(max_file_bytes=max_bytes)
    try:
        members = list(uploaded_members(((f.name, f.getvalue()) for f in files), limits))
    except CorpusError as exc:
        st.session_state[_PROBLEM_STATE] = f"The upload was refused: {exc}."
        return
    if not members:
        st.session_state[_PROBLEM_STATE] = "The upload holds no documents."
        return
    names = ", ".join(f.name for f in files[:3]) + (" …" if len(files) > 3 else "")
    _read(members, "upload", names, max_bytes)


def _load_samples() -> None:
    names = sidebar.sample_names()
    if not names:
        st.session_state[_PROBLEM_STATE] = sidebar.no_samples()
        return
    folder = sidebar.sample_dir()
    try:
        members = [Member(name, (folder / name).read_bytes()) for name in names]
    except OSError as exc:
        st.session_state[_PROBLEM_STATE] = f"The samples cannot be read: {exc}"
        return
    _read(members, "samples", f"the samples in {folder.name}/", sidebar.max_upload_bytes()[0])


def _forget() -> None:
    st.session_state[_CORPUS_STATE] = None


def corpus_input() -> Corpus | None:
    """The uploader and the sample button; returns the session's corpus."""
    max_bytes, problem = sidebar.max_upload_bytes()
    if problem:
        st.warning(problem)
    files = st.file_uploader(
        "Documents, or a .zip of them",
        accept_multiple_files=True,
        key=UPLOAD_KEY,
        # a zip may carry the whole corpus; each document in it is held to max_bytes
        max_upload_size=sidebar.uploader_limit_mb(CorpusLimits.max_total_bytes),
        help=f"Up to {CorpusLimits.max_files:,} documents and "
        f"{CorpusLimits.max_total_bytes // 2**20} MB in all; each document up to "
        f"{max_bytes / 2**20:g} MB ({sidebar.MAX_MB_ENV}). A zip may not expand more than "
        f"{CorpusLimits.max_ratio:g} times. Files that cannot be read are listed with the "
        "reason.",
    )
    seen = tuple(f.file_id for f in files or ())
    if seen and seen != st.session_state.get(_SEEN_UPLOAD_STATE):
        _load_uploads(files or [], max_bytes)
    st.session_state[_SEEN_UPLOAD_STATE] = seen
    left, right = st.columns(2)
    left.button(
        "Use the bundled samples as a corpus",
        key=SAMPLES_KEY,
        icon=":material/folder_open:",
        on_click=_load_samples,
    )
    loaded = st.session_state.get(_CORPUS_STATE)
    if isinstance(loaded, Corpus):
        right.button("Forget the corpus", key=CLEAR_KEY, on_click=_forget)
    problem = st.session_state.get(_PROBLEM_STATE)
    if problem:
        st.error(literal(problem))
    return loaded if isinstance(loaded, Corpus) else None


# -------------------------------------------------------------------- statistics


@cached.bounded("piece_starts")
def _starts(key: str, _text: str) -> np.ndarray | None:
    starts = wordpiece_starts(_text)
    # int32 halves the memory; no document within the limits has 2**31 characters
    return None if starts is None else starts.astype(np.int32)


def _piece_starts(doc: CorpusDocument) -> np.ndarray | None:
    """The word-piece starts of a document, shared by every configuration and session."""
    assert doc.document is not None  # only documents that were read are measured
    return _starts(cached.text_key(doc.document.text), doc.document.text)


def stats_for(corpus: Corpus, config: Config, window: bool, label: str) -> CorpusStats:
    """The statistics of ``config`` over the corpus, computed once per session with a
    progress bar per document."""
    key = (corpus.key, config.to_json(), window)
    results: dict = st.session_state.setdefault(_RESULTS_STATE, {})
    if key in results:
        return results[key]
    holder = st.empty()
    stats = corpus_stats(
        corpus,
        config,
        _piece_starts if window else None,
        _progress(holder, label),
    )
    holder.empty()
    results[key] = stats
    while len(results) > MAX_RESULTS:
        results.pop(next(iter(results)))
    return stats


# ------------------------------------------------------------------------- table


def _open(corpus: Corpus, index: int) -> None:
    """Make document ``index`` the sidebar's document (a table callback); the next run
    switches to Explore."""
    # a fresh table (nothing selected) on the next run, here or when the user comes back
    st.session_state[_TABLE_ROUND_STATE] = st.session_state.get(_TABLE_ROUND_STATE, 0) + 1
    doc = corpus.documents[index]
    if doc.document is None:
        st.session_state[_OPEN_PROBLEM_STATE] = f"{doc.name} cannot be opened: {doc.error}"
        return
    if st.session_state.get(_ORIGIN_STATE) == "samples" and doc.name in sidebar.sample_names():
        st.session_state[sidebar.SOURCE_KEY] = "Sample"
        st.session_state[sidebar.SAMPLE_KEY] = doc.name
    else:
        sidebar.open_document(doc.document)
    st.session_state[_OPEN_STATE] = True


def _on_select(corpus: Corpus, table_key: str, order: Sequence[int]) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        _open(corpus, order[rows[0]])


def _order(stats: CorpusStats, shown: str, sort: str) -> list[int]:
    """Indices of the documents to show, in the chosen order."""
    docs = stats.documents
    keep = {
        "all": lambda d: True,
        "warnings": lambda d: d.warnings > 0,
        "errors": lambda d: d.error is not None,
    }[shown]
    key = {
        "warnings": lambda i: (-docs[i].warnings, docs[i].name),
        "chunks": lambda i: (-docs[i].chunks, docs[i].name),
        "largest": lambda i: (-max(docs[i].sizes, default=-1), docs[i].name),
        "smallest": lambda i: (min(docs[i].sizes, default=2**62), docs[i].name),
        "name": lambda i: (docs[i].name,),
    }[sort]
    return sorted((i for i, d in enumerate(docs) if keep(d)), key=key)


@st.fragment
def document_table(corpus: Corpus, stats: CorpusStats) -> None:
    """One row per document, filtered and ordered as chosen; a click opens it.

    A fragment: changing the filter or the order reruns this table alone.
    """
    if st.session_state.pop(_OPEN_STATE, False):  # a row was clicked (see _open)
        st.switch_page("pages/explore_page.py")
    problem = st.session_state.pop(_OPEN_PROBLEM_STATE, None)
    if problem:
        st.error(literal(problem))
    st.session_state.setdefault(SHOW_KEY, "all")
    st.session_state.setdefault(SORT_KEY, "warnings")
    left, right = st.columns(2)
    shown = left.selectbox(
        "Show",
        list(SHOWN),
        format_func=SHOWN.__getitem__,
        persist_state=state.PERSIST,
        key=SHOW_KEY,
    )
    sort = right.selectbox(
        "Order",
        list(SORTS),
        format_func=SORTS.__getitem__,
        persist_state=state.PERSIST,
        key=SORT_KEY,
    )
    order = _order(stats, str(shown), str(sort))
    if not order:
        st.info("No document matches; show all documents.")
        return
    frame = pd.DataFrame([stats.documents[i].to_row() for i in order])
    if stats.window is None:
        frame = frame.drop(columns=["over window"])
    unit = stats.unit
    frame = frame.rename(columns={c: f"{c} ({unit})" for c in ("mean", "min", "max")})
    table_key = f"{TABLE_KEY}.{st.session_state.get(_TABLE_ROUND_STATE, 0)}"
    st.caption(
        f"{len(order):,} of {len(stats.documents):,} documents. Click a row to open the "
        "document in Explore."
    )
    st.dataframe(
        frame,
        key=table_key,
        on_select=partial(_on_select, corpus, table_key, order),
        selection_mode="single-row",
        hide_index=True,
        column_config={
            "warnings": st.column_config.NumberColumn(
                help="Chunks with a warning, summed over the kinds (as Explore lists them)"
            ),
            "over window": st.column_config.NumberColumn(
                help=f"Chunks over the embedding model's {stats.window} word pieces"
            ),
        },
    )


def _to_prepare(corpus: Corpus, stats: CorpusStats) -> list[CorpusDocument]:
    """The documents of the table's first :data:`PREPARE_ROWS` rows (in its current
    filter and order) that were read and cut, within :data:`PREPARE_CHARS` in all."""
    shown = str(st.session_state.get(SHOW_KEY, "all"))
    sort = str(st.session_state.get(SORT_KEY, "warnings"))
    order = _order(stats, shown if shown in SHOWN else "all", sort if sort in SORTS else "warnings")
    chosen: list[CorpusDocument] = []
    budget = PREPARE_CHARS
    for i in order[:PREPARE_ROWS]:
        doc = corpus.documents[i]
        if doc.document is None or stats.documents[i].error is not None:
            continue
        if len(doc.document.text) <= budget:
            chosen.append(doc)
            budget -= len(doc.document.text)
    return chosen


def prepare_for_explore(corpus: Corpus, stats: CorpusStats, config: Config) -> None:
    """Compute what Explore draws for the table's first rows into the shared caches
    (:mod:`pages.cached`), after everything else on the page is drawn: a click on one
    of those rows then costs what a second open of it does. Documents are prepared one
    at a time with a note between them, so a click meanwhile waits for one document at
    most. A strategy that embeds or asks a language model is left alone (Explore
    announces that wait itself)."""
    if any(name in config.spec.param_names for name in ("model", "llm")):
        return
    done: set[tuple[str, str, str]] = st.session_state.setdefault(_PREPARED_STATE, set())
    config_json = config.to_json()
    holder = st.empty()
    for doc in _to_prepare(corpus, stats):
        assert doc.document is not None
        source = cached.Source.of(doc.document, "corpus")
        if (source.key, source.document.name, config_json) in done:
            continue
        holder.caption(literal(f"Preparing {doc.name} for Explore…"))
        chunks = cached.safe_chunks(source, config)
        if not isinstance(chunks, str) and chunks:
            cached.analysis(source, config)
            cached.boundary_pages(source, config)
            chunk_tables.chunk_table_for(source, config)
            cached.recommendation(source)
        done.add((source.key, source.document.name, config_json))
    holder.empty()


# ---------------------------------------------------------------------- sections


def overview(stats: CorpusStats) -> None:
    """Totals, the corpus-wide size histogram and the documents with most warnings."""
    summary, unit = stats.summary, stats.unit
    cols = st.columns(6)
    cols[0].metric("Documents", f"{len(stats.documents) - stats.failed:,}")
    cols[1].metric("Not read or cut", f"{stats.failed:,}")
    cols[2].metric("Chunks", f"{stats.chunks:,}")
    cols[3].metric(f"Mean ({unit})", f"{summary.mean:,.1f}")
    cols[4].metric("Warnings", f"{stats.warnings:,}")
    share = stats.share_over_window
    cols[5].metric("Over the model's window", "—" if share is None else f"{share:.1%}")
    left, right = st.columns([3, 2])
    with left:
        figure = size_histogram(
            stats.sizes.tolist(), limit=stats.limit, unit=unit, title="Chunk sizes, every document"
        )
        st.plotly_chart(figure, key="corpus_histogram", config={"displaylogo": False})
    with right:
        st.markdown("**Most warnings**")
        worst = most_warnings(stats)
        if not worst:
            st.success("No document has a warning.")
        else:
            rows = [
                {"document": d.name, "warnings": d.warnings, "what": "; ".join(d.warning_titles)}
                for d in worst
            ]
            st.dataframe(pd.DataFrame(rows), hide_index=True, key="corpus_worst")


def comparison(corpus: Corpus, first: Config) -> None:
    """Up to four configurations over the whole corpus."""
    st.subheader("Compare configurations over the corpus")
    if not st.toggle(
        "Compare configurations",
        persist_state=state.PERSIST,
        key=COMPARE_KEY,
        help="Chunk the whole corpus with up to four configurations: chunk counts, size "
        "distributions and the share of chunks over the embedding model's window.",
    ):
        return
    configs = config_controls.comparison_configs(first, "corpus.", COUNT_KEY)
    compared = {
        f"{letter} · {config.label(title=True)}": stats_for(
            corpus, config, True, f"Configuration {letter}"
        )
        for letter, config in configs.items()
    }
    st.caption(
        f"Sizes in each configuration's own unit; over window: the share of chunks over the "
        f"embedding model's {model_max_tokens()} word pieces."
    )
    st.dataframe(
        pd.DataFrame(comparison_rows(compared)).set_index("configuration"),
        key="corpus_compare",
        column_config={"over window": st.column_config.NumberColumn(format="%.2f %%")},
    )
    for column, (label, stats) in zip(st.columns(len(compared)), compared.items(), strict=True):
        with column:
            figure = size_histogram(
                stats.sizes.tolist(), limit=stats.limit, unit=stats.unit, title=label
            )
            st.plotly_chart(figure, key=f"corpus_compare_{label[0]}", config={"displaylogo": False})
    with st.expander("Chunks per document"):
        st.dataframe(
            pd.DataFrame(chunks_per_document(compared)), hide_index=True, key="corpus_per_doc"
        )


def vector_database_section(corpus: Corpus, config: Config, stats: CorpusStats) -> None:
    """Every document's chunks and their vectors into a vector database (those that
    could not be read or cut are left out), and searched back."""
    st.subheader("Write to a vector database")

    def documents() -> list[vector_db.SinkDocument]:
        written = []
        for doc in corpus.documents:
            if doc.document is None:
                continue
            chunks = cached.safe_chunks(cached.Source.of(doc.document, "corpus"), config)
            if isinstance(chunks, str) or not chunks:
                continue
            pages = chunk_pages(doc.document, chunks)
            written.append(vector_db.SinkDocument(doc.doc_id, doc.name, chunks, pages))
        return written

    vector_db.vector_database_box("corpus", config, documents, stats.chunks)


# -------------------------------------------------------------------------- page


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size >= 2**20 else f"{size / 1024:,.1f} KB"


def main() -> None:
    st.title("Corpus")
    st.caption(
        "How the sidebar's configuration cuts many documents: which explode into many "
        "chunks, which give tiny fragments, which cannot be read."
    )
    corpus = corpus_input()
    if corpus is None:
        st.info("Upload several documents or a zip, or use the bundled samples as a corpus.")
        st.stop()
    st.caption(
        literal(
            f"{len(corpus.documents):,} documents from {st.session_state.get(_LABEL_STATE)} · "
            f"{_megabytes(corpus.bytes)} · {corpus.characters:,} characters"
            + (f" · {corpus.unreadable:,} could not be read" if corpus.unreadable else "")
        )
    )
    config = sidebar.require_config()
    window = st.toggle(
        "Check every chunk against the embedding model's window",
        persist_state=state.PERSIST,
        key=WINDOW_KEY,
        help="Counts each chunk's word pieces as all-MiniLM-L6-v2 reads them (about 0.3 s "
        "per MB the first time; the counts are kept for every configuration). On from the "
        f"start for corpora up to {WINDOW_AUTO_CHARS / 1e6:g} million characters.",
    )
    stats = stats_for(corpus, config, bool(window), f"Chunking with {config.label(title=True)}")
    overview(stats)
    document_table(corpus, stats)
    vector_database_section(corpus, config, stats)
    comparison(corpus, config)
    prepare_for_explore(corpus, stats, config)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
