"""Evaluate: how well do chunks answer questions? Gold-span retrieval scores, sweeps,
retrieval techniques side by side, advice, and a query playground (on the sidebar's
configuration) for documents without gold data.

The document is the sidebar's (:func:`pages.sidebar.current_source`), nothing else;
strategies, their parameters and the default model come from the registry. Every piece
of document text shown as HTML is escaped first (:mod:`chunking.viz.evidence`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from chunking import UNITS, Chunk, Config, strategies
from chunking.embedding.models import EmbeddingError, get_embedder
from chunking.embedding.registry import named_models
from chunking.evaluation import (
    METRIC_LABELS,
    METRICS,
    REPORT_RECURSIVE,
    Question,
    QuestionFileError,
    Settings,
    as_spans,
    load_chroma_eval,
    overlap,
    question_counts,
    questions_from_bytes,
)
from chunking.evaluation.advice import report
from chunking.evaluation.context import header_contexts
from chunking.evaluation.core import embedded_chunk_texts, retrieve, searched_texts
from chunking.evaluation.datasets import (
    ATTRIBUTION,
    CHROMA,
    CODE,
    Dataset,
    DatasetError,
    Layout,
    evaluate_given,
    find_dataset,
    load_dataset,
)
from chunking.evaluation.lens import (
    SUMMARY_COLUMNS,
    Lens,
    display_columns,
    lenses,
    with_lens_columns,
)
from chunking.evaluation.passk import FOUND_AT, check_ks, with_k_columns
from chunking.evaluation.sweep import (
    COLUMN_LABELS,
    SHARE_COLUMNS,
    Digest,
    Grid,
    Snapshot,
    compare_techniques,
    digest,
    labelled_table,
    merge_results,
    models_side_by_side,
    parse_values,
    sweep,
    technique_snapshots,
    techniques_table,
)
from chunking.evaluation.techniques import (
    AXES,
    CONTEXTS,
    DENSE,
    EMBEDDINGS,
    RETRIEVERS,
    WINDOW,
    Technique,
)
from chunking.evaluation.typed import SEPARATOR, parse_typed_questions
from chunking.output.html_report import evaluation_display, evaluation_report
from chunking.units import DEFAULT_MODEL
from chunking.viz.evaluation import (
    metrics_vs_size,
    pass_at_k_chart,
    question_scores,
    technique_deltas,
)
from chunking.viz.evidence import EVIDENCE_CSS, LEGEND_HTML, evidence_html
from pages import cached, sidebar, widgets

#: Prefix of this page's widget keys (the question file uploader: ``eval_upload.``).
P = "eval."
CHROMA_CORPORA = ("state_of_the_union", "chatlogs", "wikitexts", "pubmed", "finance")
DEFAULT_CORPORA = ["state_of_the_union", "chatlogs"]
MODELS = {
    DEFAULT_MODEL: f"{DEFAULT_MODEL} (bundled, real)",
    **{m.name: f"{m.name} ({m.note or m.backend})" for m in named_models()[1:]},
    "hash": "hash (instant fake, for trying the page)",
}
BUNDLED = "chroma-eval (bundled questions)"
OWN = "My document"
TYPED = "questions typed here"
QUESTION_FILE = "a question file"
#: Typed questions first: they need nothing but the document.
OWN_SOURCES = (TYPED, QUESTION_FILE)
#: Where questions are generated from the document (a question file to upload here).
LLM_PAGE = "pages/llm_page.py"
#: Returned units offered in the form (``window`` takes its N from a number box).
RETURNED = {"chunk": "the chunk", "parent": "its parent (parent-child)", "window": "a window"}
#: Contexts the page offers: the ``llm`` one runs a language model per chunk, which is
#: for the command line (its cost is shown and confirmed there).
PAGE_CONTEXTS = tuple(c for c in CONTEXTS if c != "llm")
#: The technique axes as the core declares them (defaults, choices, help).
AXIS = {axis.name: axis for axis in AXES}
LATE_NOTE = (
    "Late chunking reads the document in windows of the model's length: the bundled "
    "all-MiniLM-L6-v2 reads 256 word pieces (its BERT base up to 512), so a token sees a "
    "few paragraphs around it and gains are smaller than with long-context models."
)
#: Technique tables kept per session.
KEPT_TECHNIQUE_TABLES = 4


# ------------------------------------------------------------------------- documents


def sidebar_document() -> tuple[str, str] | None:
    """``(name, text)`` of the sidebar's document, shown in a caption; or None after
    saying where to choose one."""
    source = sidebar.current_source()
    if source is None or not source.document.text.strip():
        st.info("Choose a document in the sidebar: pick a sample, paste text or upload a file.")
        return None
    name, text = source.document.name, source.document.text
    st.caption(f"Document: **{name}** ({len(text):,} characters), from the sidebar.")
    return name, text


@st.cache_resource(show_spinner="Loading chroma-eval…", max_entries=8)
def _chroma(corpora: tuple[str, ...]) -> tuple[dict[str, str], list[Question]]:
    return load_chroma_eval(list(corpora))


# ------------------------------------------------------------------------ questions


@dataclass(frozen=True)
class QuestionSet:
    """Documents and questions to evaluate on, with the key that identifies them."""

    key: str
    documents: Mapping[str, str]
    questions: Sequence[Question]


def bundled_questions() -> QuestionSet | None:
    chosen = st.multiselect(
        "Corpora",
        CHROMA_CORPORA,
        default=DEFAULT_CORPORA,
        persist_state=widgets.PERSIST,
        key=f"{P}corpora",
        help="finance and pubmed are large (500k-740k characters): embedding them takes minutes.",
    )
    if not chosen:
        st.info("Pick at least one corpus.")
        return None
    try:
        documents, questions = _chroma(tuple(sorted(chosen)))
    except (QuestionFileError, OSError) as exc:
        st.error(str(exc))
        return None
    counts = question_counts(questions)
    st.caption(
        " · ".join(
            f"{k}: {counts.get(k, 0)} questions, {len(v):,} chars" for k, v in documents.items()
        )
        + f" · data: {ATTRIBUTION[CHROMA]}"
    )
    return QuestionSet("chroma:" + ",".join(sorted(chosen)), documents, questions)


def own_questions() -> QuestionSet | None:
    """Questions on the sidebar's document: typed here (the default, nothing else needed)
    or a question file, such as the one the LLM tools page generates from the document."""
    document = sidebar_document()
    st.markdown(
        f"Type questions about this document below, each with an excerpt as its answer; or "
        f"generate them on the **LLM tools** page (tab *Evaluation questions*), download the "
        f"question file there and choose *{QUESTION_FILE}* here."
    )
    st.page_link(
        LLM_PAGE,
        label="Generate questions on the LLM tools page",
        icon=":material/smart_toy:",
    )
    how = st.radio(
        "Questions from",
        OWN_SOURCES,
        horizontal=True,
        persist_state=widgets.PERSIST,
        key=f"{P}own_from",
        help="Questions generated on the LLM tools page come as a question file: download "
        "it there and upload it here.",
    )
    if how == TYPED:
        return typed_questions(document)
    upload = st.file_uploader(
        "Question file (.csv or .jsonl)",
        type=["csv", "jsonl", "json", "ndjson"],
        key="eval_upload.questions",
        help="Columns question, references (JSON list of {content, start_index, end_index}) "
        "and optionally corpus_id (ignored: every question is about this document).",
    )
    if document is None:
        return None
    if upload is None:
        st.info(
            "Upload a question file with gold reference spans to evaluate on this document "
            f"(the LLM tools page generates one), or choose *{TYPED}*."
        )
        return None
    # the document's name is its id: the header context's title
    documents = {document[0]: document[1]}
    try:
        questions = questions_from_bytes(
            upload.getvalue(), upload.name, documents, document_id=document[0]
        )
    except QuestionFileError as exc:
        st.error(f"The question file cannot be used: {exc}")
        return None
    st.caption(f"{len(questions)} questions on {document[0]}.")
    questions_key = cached.text_key(upload.getvalue().decode("utf-8", "replace"))
    key = f"own:{cached.text_key(document[1])}:{questions_key}"
    return QuestionSet(key, documents, questions)


def typed_questions(document: tuple[str, str] | None) -> QuestionSet | None:
    """Questions typed one per line, each with an optional answer excerpt located in the
    document (its gold span); what became of every line is shown, none is dropped."""
    typed = st.text_area(
        "Questions, one per line",
        "",
        height=140,
        persist_state=widgets.PERSIST,
        key=f"{P}typed",
        placeholder=f"What does the document say about X? {SEPARATOR} an excerpt copied "
        "from the document\nAnother question",
        help=f"Write `question {SEPARATOR} excerpt`. The excerpt is located in the document, "
        "exactly or as a near match, and becomes the question's gold span; a question whose "
        "excerpt is not found (or that has none) is listed but not evaluated.",
    )
    if document is None:
        return None
    if not typed.strip():
        st.info(f"Type questions, one per line, as `question {SEPARATOR} excerpt`.")
        return None
    documents = {document[0]: document[1]}
    try:
        parsed = parse_typed_questions(typed, documents)
    except ValueError as exc:
        st.error(f"The typed questions cannot be used: {exc}")
        return None
    st.caption(parsed.describe())
    st.dataframe(
        pd.DataFrame(
            {
                "line": [t.line for t in parsed.lines],
                "question": [t.question for t in parsed.lines],
                "status": [t.status for t in parsed.lines],
                "where": [t.describe() for t in parsed.lines],
            }
        ),
        hide_index=True,
        width="stretch",
        key=f"{P}typed_lines",
    )
    if parsed.unevaluated:
        st.warning(
            "Not evaluated (no gold span):\n\n- "
            + "\n- ".join(f"{t.describe()} — {t.question}" for t in parsed.unevaluated)
        )
    if not parsed.questions:
        st.error("No typed question has an excerpt found in the document: nothing to evaluate.")
        return None
    key = f"typed:{cached.text_key(document[1])}:{cached.text_key(typed)}"
    return QuestionSet(key, documents, parsed.questions)


# --------------------------------------------------------------------- configurations


def grid_controls() -> tuple[Grid, Settings, list[str], Technique] | None:
    """The sweep form; ``None`` until it is submitted with valid values."""
    names = list(strategies())
    with st.form(f"{P}form"):
        cols = st.columns([3, 2, 2, 2])
        chosen = cols[0].multiselect(
            "Strategies",
            names,
            default=["recursive", "token"],
            persist_state=widgets.PERSIST,
            key=f"{P}strategies",
        )
        sizes = cols[1].text_input(
            "Sizes",
            "200, 400",
            persist_state=widgets.PERSIST,
            key=f"{P}sizes",
            help="Comma-separated.",
        )
        overlaps = cols[2].text_input(
            "Overlaps",
            "0",
            persist_state=widgets.PERSIST,
            key=f"{P}overlaps",
            help="Absolute, or 0<x<1 for a share of the size.",
        )
        units = cols[3].multiselect(
            "Units",
            list(UNITS),
            default=["tokens"],
            persist_state=widgets.PERSIST,
            key=f"{P}units",
        )
        cols = st.columns([3, 2, 2, 2])
        with cols[0]:
            models = models_select(f"{P}models")
        top_k = cols[1].number_input(
            "Top k", 1, 50, 5, persist_state=widgets.PERSIST, key=f"{P}top_k"
        )
        thresholds = cols[2].text_input(
            "Thresholds",
            "",
            persist_state=widgets.PERSIST,
            key=f"{P}thresholds",
            help="semantic only; empty = its default.",
        )
        technique = technique_controls()
        langchain = st.toggle(
            "Recursive with the report's LangChain settings",
            True,
            persist_state=widgets.PERSIST,
            key=f"{P}langchain",
            help="Separators [\\n\\n, \\n, ., ?, !, space, ''] with keep_separator='start', "
            "as in the Chroma report.",
        )
        compat = st.toggle(
            "Score spans as the report's code did",
            False,
            persist_state=widgets.PERSIST,
            key=f"{P}compat",
            help="Count chunks that only touch a gold span, and locate chunks by their text "
            "(first occurrence). Needed to reproduce the published precision Ω exactly.",
        )
        submitted = st.form_submit_button("Run evaluation", type="primary")
    if not submitted and f"{P}last" not in st.session_state:
        st.info("Choose configurations and press **Run evaluation**.")
        return None
    try:
        data: dict[str, Any] = {
            "strategy": chosen or ["recursive"],
            "size": parse_values(sizes, int, "Sizes"),
            "overlap": parse_values(overlaps, float, "Overlaps"),
            "unit": units or ["tokens"],
        }
        if thresholds.strip():
            data["threshold"] = parse_values(thresholds, float, "Thresholds")
        if langchain and "recursive" in data["strategy"]:
            data["params"] = dict(REPORT_RECURSIVE)
        grid = Grid.from_dict(data)
        if isinstance(technique, str):
            raise ValueError(technique)
        for config in grid.configs()[0]:
            technique.check(config)
    except ValueError as exc:
        st.error(str(exc))
        return None
    if not models:
        st.error("Choose at least one embedding model.")
        return None
    st.session_state[f"{P}last"] = True
    settings = Settings.chroma(top_k=int(top_k)) if compat else Settings(top_k=int(top_k))
    return grid, settings, models, technique


def technique_controls() -> Technique | str:
    """Retriever, chunk embedding, context and returned unit: a technique, or what is
    wrong with the choice."""
    cols = st.columns([2, 2, 2, 2, 1])
    retriever = cols[0].selectbox(
        "Retriever",
        RETRIEVERS,
        persist_state=widgets.PERSIST,
        key=f"{P}retriever",
        help=AXIS["retriever"].help + ".",
    )
    embedding = cols[1].selectbox(
        "Chunk embedding",
        EMBEDDINGS,
        persist_state=widgets.PERSIST,
        key=f"{P}embedding",
        help=AXIS["embedding"].help + ". " + LATE_NOTE,
    )
    context = cols[2].selectbox(
        "Context",
        PAGE_CONTEXTS,
        persist_state=widgets.PERSIST,
        key=f"{P}context",
        help=AXIS["context"].help + "; the llm context runs from the command line (--context llm).",
    )
    returned = cols[3].selectbox(
        "Return",
        list(RETURNED),
        format_func=RETURNED.__getitem__,
        persist_state=widgets.PERSIST,
        key=f"{P}returned",
        help=AXIS["returned"].help + ".",
    )
    neighbours = cols[4].number_input(
        "N",
        0,
        20,
        1,
        persist_state=widgets.PERSIST,
        key=f"{P}window",
        help="window: N chunks on each side",
    )
    unit = f"{WINDOW}{int(neighbours)}" if returned == "window" else str(returned)
    try:
        return Technique.parse(str(retriever), str(embedding), str(context), unit)
    except ValueError as exc:
        return str(exc)


# ------------------------------------------------------------------------ evaluation


@dataclass(frozen=True, eq=False)
class Lensed:
    """A sweep's digest with the retrieval lens of every evaluation (in the table's
    order), the chunks it evaluated per document and the model name that loads its
    embedder. Kept with ``st.cache_resource`` (shared, never mutated: every part is
    frozen), as chunks carry read-only metadata, which pickle cannot copy."""

    digest: Digest
    lenses: tuple[Lens, ...]
    chunks: tuple[Mapping[str, tuple[Chunk, ...]], ...]
    models: tuple[str | None, ...]


@st.cache_resource(show_spinner=False, max_entries=16)
def _sweep(
    set_key: str,
    grid_json: str,
    settings_json: str,
    technique_json: str,
    models: tuple[str, ...],
    _qs: QuestionSet,
) -> Lensed:
    # No Streamlit call in here: a cached function's elements are replayed on a cache
    # hit, and a progress bar created outside cannot be. warm_up() shows the progress.
    grid = Grid.from_dict(json.loads(grid_json))
    settings = Settings(**json.loads(settings_json))
    technique = Technique(**json.loads(technique_json))
    embedders = {m: get_embedder(m) for m in models}
    results = [
        sweep(_qs.documents, _qs.questions, grid, embedders[m], settings, None, technique)
        for m in models
    ]
    merged = merge_results(results)
    loads = {e.name: m for m, e in embedders.items()}
    return Lensed(
        digest(merged),
        tuple(lenses(merged.evaluations, {e.name: e for e in embedders.values()})),
        tuple(dict(e.chunks) for e in merged.evaluations),
        tuple(loads.get(e.model or "") for e in merged.evaluations),
    )


def grid_json(grid: Grid) -> str:
    return json.dumps(grid.to_dict(), sort_keys=True)


def warm_up(qs: QuestionSet, grid: Grid, model: str, technique: Technique, run_key: str) -> None:
    """Embed every text the sweep needs, with a progress bar (once per sweep).

    The vectors land in the embedder's cache, so the cached sweep that follows finds
    them all and does not embed anything itself. Records (texts requested, texts the
    model embedded) under ``run_key``. Late chunking reads whole documents instead: its
    progress is the spinner's.
    """
    warmed: dict[str, tuple[int, int]] = st.session_state.setdefault(f"{P}warmed", {})
    if run_key in warmed:
        return
    embedder = get_embedder(model)
    before = embedder.encoded
    texts = [q.text for q in qs.questions]
    ids = list(dict.fromkeys(q.corpus_id for q in qs.questions))
    with st.spinner("Chunking…"):
        for config in grid.configs()[0]:
            texts += embedded_chunk_texts(qs.documents, config, technique, ids)
    widgets.embed_with_progress(
        embedder, texts, f"Embedding the questions and every chunk ({model})"
    )
    warmed[run_key] = (len(texts), embedder.encoded - before)


def run_sweep(
    qs: QuestionSet, grid: Grid, settings: Settings, models: list[str], technique: Technique
) -> tuple[Lensed, tuple[int, int]] | None:
    """The sweep's results with their lenses (cached) and (texts requested, texts
    embedded), after embedding what it needs with a progress bar."""
    settings_json = json.dumps(asdict(settings), sort_keys=True)
    technique_json = json.dumps(asdict(technique), sort_keys=True)
    key = (qs.key, grid_json(grid), settings_json, technique_json, tuple(models))
    counts = [0, 0]
    try:
        for model in models:
            run_key = "|".join([*key[:4], model])
            warm_up(qs, grid, model, technique, run_key)
            requested, embedded = st.session_state[f"{P}warmed"][run_key]
            counts = [counts[0] + requested, counts[1] + embedded]
        with st.spinner("Scoring…" if technique.embedding == "naive" else "Late embedding…"):
            result = _sweep(*key, qs)
    except EmbeddingError as exc:
        st.error(f"The embedding model cannot be used: {exc}")
        return None
    except ValueError as exc:
        st.error(f"The evaluation failed: {exc}")
        return None
    return result, (counts[0], counts[1])


def show_table(table: pd.DataFrame, key: str, shares: Sequence[str] = ()) -> None:
    """A table with every row and column visible (the height fits the rows, the width
    the page); ``shares`` (columns in [0, 1]) shown as percentages."""
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=38 + 35 * len(table),
        column_config={c: st.column_config.NumberColumn(format="percent") for c in shares},
        key=key,
    )


def share_labels(table: pd.DataFrame) -> list[str]:
    """The labelled results table's columns that hold shares."""
    return [c for c in labelled_table(table[list(SHARE_COLUMNS)]).columns]


#: The results table's leading columns: what names a configuration, then its recall;
#: the lens's miss reasons follow them, so that they are in view without scrolling.
LEADING_COLUMNS = tuple(
    COLUMN_LABELS[c] for c in ("strategy", "size", "overlap", "unit", "threshold", "recall_mean")
)


def lens_first(shown: pd.DataFrame, lens_columns: Sequence[str]) -> pd.DataFrame:
    """``shown`` (the labelled results table) with the configuration's name and recall
    first, then ``lens_columns``, then the rest in their order."""
    leading = [c for c in LEADING_COLUMNS if c in shown]
    first = [*leading, *(c for c in lens_columns if c not in leading)]
    return shown[[*first, *(c for c in shown.columns if c not in first)]]


def results_view(result: Digest, counts: tuple[int, int], seen: Sequence[Lens] = ()) -> None:
    table = with_lens_columns(result.table, seen) if seen else result.table
    shown = labelled_table(table.drop(columns=list(SUMMARY_COLUMNS), errors="ignore"))
    lens_columns = display_columns(table)
    for column, values in lens_columns.items():
        shown[column] = values
    show_table(lens_first(shown, list(lens_columns)), f"{P}results", share_labels(table))
    if display_columns(table):
        st.caption(
            "Missed gold spans by reason: **cut by a boundary** (no chunk holds the answer "
            "whole), **truncated** (it lies past the model's window inside its chunk), "
            "**out-ranked** (a chunk holds it but ranked below k); **never retrieved %**: "
            "chunks no question retrieved. The Map, Explore and Compare pages show this lens."
        )
    if table["model"].nunique(dropna=False) > 1:
        st.markdown("**Per model**: what a faster model costs in recall.")
        wide = models_side_by_side(table)
        show_table(wide, f"{P}per_model", list(wide.columns[2:]))
    st.download_button(
        "Download results (CSV)",
        table.to_csv(index=False),
        file_name="chunk-evaluation.csv",
        mime="text/csv",
        on_click="ignore",
        key=f"{P}download",
    )
    if seen:
        st.download_button(
            "Download per-chunk traffic (CSV)",
            widgets.deferred(per_chunk_csv, seen),
            file_name="chunk-traffic.csv",
            mime="text/csv",
            on_click="ignore",
            key=f"{P}download_per_chunk",
            help="One row per chunk and configuration: how many questions retrieved it "
            "(retrieved), how many have gold text in it (gold), how many did both (hits); "
            "the same file as chunk-explorer evaluate --per-chunk.",
        )
    requested, embedded = counts
    if requested:
        st.caption(
            f"Embedded {embedded:,} of {requested:,} texts requested (questions and chunks of "
            "every configuration); the rest came from the embedding cache."
        )
    if result.skipped:
        st.warning("Skipped:\n\n- " + "\n- ".join(result.skipped))
    st.plotly_chart(metrics_vs_size(table), key=f"{P}chart")


def per_chunk_csv(seen: Sequence[Lens]) -> str:
    """Every lens's per-chunk traffic as one CSV."""
    return pd.concat([one.per_chunk() for one in seen], ignore_index=True).to_csv(index=False)


def advice_view(result: Digest) -> None:
    retrieved = result.table["recall_mean"].notna().any()
    options = list(METRICS) if retrieved else ["precision_omega"]
    metric = st.selectbox(
        "Best configuration for",
        options,
        format_func=METRIC_LABELS.__getitem__,
        persist_state=widgets.PERSIST,
        key=f"{P}metric",
    )
    st.markdown(report(result.table, metric or options[0]).markdown())


def snapshot_label(snap: Snapshot) -> str:
    """The configuration, and the model where a sweep compares several."""
    model = snap.summary.get("model")
    return f"{snap.label} · {model}" if model else snap.label


def question_view(result: Digest, qs: QuestionSet, seen: Sequence[Lens] = ()) -> None:
    labels = [snapshot_label(s) for s in result.snapshots]
    chosen = st.selectbox(
        "Configuration",
        range(len(labels)),
        format_func=labels.__getitem__,
        persist_state=widgets.PERSIST,
        key=f"{P}inspect_config",
    )
    at = min(chosen or 0, len(labels) - 1)
    snap = result.snapshots[at]
    frame = snap.per_question
    one = seen[at] if seen else None
    if one is not None and one.retrieval:
        misses_table(frame, qs, one)
    index = question_select(qs, f"{P}question")
    row = frame.iloc[index]
    cols = st.columns(5)
    for col, metric in zip(cols, METRICS, strict=False):
        value = row[metric]
        col.metric(METRIC_LABELS[metric], "—" if pd.isna(value) else f"{value:.1%}")
    cols[4].metric("Split gold spans", f"{row['split_references']} / {row['references']}")
    question = qs.questions[index]
    text = qs.documents[question.corpus_id]
    hits = snap.hits[index]
    if one is not None and one.retrieval:
        misses = one.question_misses(index)
        if misses:
            st.markdown("**Why it missed**\n\n- " + "\n- ".join(m.describe() for m in misses))
        else:
            st.success("Every gold span of this question was retrieved in the top k.")
    st.html(f"<style>{EVIDENCE_CSS}</style>{LEGEND_HTML}")
    st.html(evidence_html(text, question.spans, hits))
    if hits:
        st.dataframe(hit_table(text, hits, question.spans), hide_index=True)
    st.plotly_chart(question_scores(frame, "recall" if hits else "precision_omega"), key=f"{P}hist")


def misses_table(frame: pd.DataFrame, qs: QuestionSet, one: Lens) -> None:
    """Every question with its recall and why it missed (the first reason, and what
    each missed gold span says)."""
    reasons = one.per_question()
    table = pd.DataFrame(
        {
            "question": [q.text for q in qs.questions],
            "document": [q.corpus_id for q in qs.questions],
            "recall": frame["recall"].to_numpy(),
            "reason": reasons["miss_reason"].to_numpy(),
            "why": reasons["miss_detail"].to_numpy(),
        }
    )
    missed = int((table["reason"] != "").sum())
    st.caption(
        f"{missed} of {len(table)} questions missed some gold text in the top {one.top_k}: "
        + ", ".join(f"{n} {r}" for r, n in one.counts.items())
        + " (gold spans)."
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * len(table), 320),
        column_config={"recall": st.column_config.NumberColumn(format="percent")},
        key=f"{P}misses",
    )


def question_select(qs: QuestionSet, key: str) -> int:
    """A question of the set, by its document and text."""
    index = st.selectbox(
        "Question",
        range(len(qs.questions)),
        format_func=lambda i: f"[{qs.questions[i].corpus_id}] {qs.questions[i].text}",
        persist_state=widgets.PERSIST,
        key=key,
    )
    return min(index or 0, len(qs.questions) - 1)


def hit_table(
    text: str,
    hits: Sequence[tuple[int, int, int, float]],
    gold: np.ndarray | None = None,
    chunk_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """The retrieved chunks of one question: rank, score, the chunk's number (when
    given), offsets, gold characters (when there are gold spans) and the text."""
    table = pd.DataFrame({"rank": [h[2] for h in hits], "score": [round(h[3], 4) for h in hits]})
    if chunk_ids is not None:
        table["chunk"] = [int(i) for i in chunk_ids]
    table["start"], table["end"] = [h[0] for h in hits], [h[1] for h in hits]
    if gold is not None:
        table["gold chars"] = [overlap(as_spans([(h[0], h[1])]), gold) for h in hits]
    table["text"] = [" ".join(text[h[0] : h[1]].split())[:120] for h in hits]
    return table


def models_select(key: str) -> list[str]:
    """The embedding models to compare: the bundled one, the fast fake, and any other
    names typed in (named models such as ``minilm-static``, or local model folders)."""
    chosen = st.multiselect(
        "Embedding models",
        list(MODELS),
        default=[DEFAULT_MODEL],
        format_func=MODELS.__getitem__,
        persist_state=widgets.PERSIST,
        key=key,
    )
    extra = st.text_input(
        "Other models",
        "",
        persist_state=widgets.PERSIST,
        key=f"{key}_extra",
        help="Comma-separated model names or local folders, compared side by side.",
    )
    typed = [m.strip() for m in extra.split(",") if m.strip()]
    return list(dict.fromkeys([*chosen, *typed]))


def evaluation_section() -> None:
    origin = st.radio(
        "Questions",
        [BUNDLED, CODE_SET, OWN],
        horizontal=True,
        persist_state=widgets.PERSIST,
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
    widgets.share_lens(
        widgets.SharedLens(
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
    results_view(result, counts, lensed.lenses)
    st.subheader("Advice")
    advice_view(result)
    st.subheader("Inspect a question")
    question_view(result, qs, lensed.lenses)
    st.subheader("Techniques side by side")
    techniques_section(result, qs, settings, models)


# ------------------------------------------------------------------------ techniques


@dataclass(frozen=True)
class TechniqueResult:
    """A techniques table and what each technique returned per question."""

    table: pd.DataFrame
    snapshots: tuple[Snapshot, ...]


def techniques_section(
    result: Digest, qs: QuestionSet, settings: Settings, models: Sequence[str]
) -> None:
    """Every technique on one configuration of the sweep: the table, the differences
    from dense retrieval, and what each returned for one question."""
    st.caption(
        "One configuration, every technique: BM25, hybrid (reciprocal-rank fusion, k = 60), "
        "late chunking, header context, late + headers, parent (parent-child configurations "
        "only), window:1 — and the cluster chunker when it is installed. Times include "
        "embedding what earlier rows had not embedded. " + LATE_NOTE
    )
    labels = [snapshot_label(s) for s in result.snapshots]
    chosen = st.selectbox(
        "Base configuration",
        range(len(labels)),
        format_func=labels.__getitem__,
        persist_state=widgets.PERSIST,
        key=f"{P}tech_config",
    )
    snap = result.snapshots[min(chosen or 0, len(labels) - 1)]
    # the summary names the loaded embedder ("hash-64"); find the name that loads it
    loaded = {get_embedder(m).name: m for m in models}
    model = loaded.get(str(snap.summary.get("model")))
    if model is None:
        st.info("Techniques need an embedding model; choose one and run the evaluation.")
        return
    key = "|".join((qs.key, snap.config_json, json.dumps(asdict(settings)), str(model)))
    kept: dict[str, TechniqueResult] = st.session_state.setdefault(f"{P}techniques", {})
    if key not in kept:
        if not st.button("Compare techniques", key=f"{P}tech_run"):
            return
        outcome = run_techniques(qs, Config.from_json(snap.config_json), str(model), settings)
        if outcome is None:
            return
        kept[key] = outcome
        while len(kept) > KEPT_TECHNIQUE_TABLES:
            del kept[next(iter(kept))]
    techniques_view(kept[key], qs)


def run_techniques(
    qs: QuestionSet, config: Config, model: str, settings: Settings
) -> TechniqueResult | None:
    """Evaluate every technique with a progress bar; None after showing why it failed."""
    holder = st.empty()
    holder.progress(0.0, text="Comparing techniques")
    try:
        embedder = get_embedder(model)
        progress = widgets.progress_bar(holder, "Comparing techniques")
        runs = compare_techniques(qs.documents, qs.questions, config, embedder, settings, progress)
    except (EmbeddingError, ValueError) as exc:
        st.error(f"The techniques could not be compared: {exc}")
        return None
    finally:
        holder.empty()
    return TechniqueResult(techniques_table(runs), technique_snapshots(runs))


TECHNIQUE_LABELS = {
    "technique": "Technique",
    "configuration": "Configuration",
    **{m: METRIC_LABELS[m] for m in METRICS},
    **{f"{m}_delta": f"Δ {METRIC_LABELS[m]}" for m in METRICS},
    "seconds": "Seconds",
}


def techniques_view(outcome: TechniqueResult, qs: QuestionSet) -> None:
    table = outcome.table
    shown = table.rename(columns=TECHNIQUE_LABELS)
    shares = [TECHNIQUE_LABELS[c] for c in table.columns if c in METRICS or c.endswith("_delta")]
    show_table(shown, f"{P}tech_table", shares)
    st.plotly_chart(technique_deltas(table), key=f"{P}tech_chart")
    st.markdown("**What each technique returned for one question**")
    index = question_select(qs, f"{P}tech_question")
    question = qs.questions[index]
    text = qs.documents[question.corpus_id]
    st.html(f"<style>{EVIDENCE_CSS}</style>{LEGEND_HTML}")
    tabs = st.tabs([s.label for s in outcome.snapshots])
    for tab, snap in zip(tabs, outcome.snapshots, strict=True):
        with tab:
            row = snap.per_question.iloc[index]
            st.caption(
                " · ".join(
                    f"{METRIC_LABELS[m]} {row[m]:.1%}" for m in METRICS if not pd.isna(row[m])
                )
            )
            st.html(evidence_html(text, question.spans, snap.hits[index]))
            if "headers" in snap.label:
                context_table(snap, question.corpus_id, text, snap.hits[index])


def context_table(
    snap: Snapshot, corpus_id: str, text: str, hits: Sequence[tuple[int, int, int, float]]
) -> None:
    """The header context each returned chunk was embedded with (its metadata)."""
    config = Config.from_json(snap.config_json)
    chunks = cached.chunks(cached.Source.from_text(text, corpus_id, "corpus"), config)
    contexts = dict(
        zip(
            [(c.start, c.end) for c in chunks],
            header_contexts(text, chunks, corpus_id),
            strict=True,
        )
    )
    st.dataframe(
        pd.DataFrame(
            {
                "rank": [h[2] for h in hits],
                "context (embedded before the chunk)": [contexts.get(h[:2], "") for h in hits],
                "chunk": [" ".join(text[h[0] : h[1]].split())[:100] for h in hits],
            }
        ),
        hide_index=True,
        width="stretch",
    )


# ------------------------------------------------------------------------- the code set

CODE_SET = "anthropic-code-eval (code retrieval)"
GIVEN = "the set's own chunks"
CUT = "cut by strategies"
#: Runs on the code set kept per session.
KEPT_CODE_RUNS = 4


@st.cache_resource(show_spinner="Loading the code set…", max_entries=2)
def _dataset(layout: Layout) -> Dataset:
    return load_dataset(find_dataset(layout))


def code_set() -> Dataset | None:
    """The anthropic-code-eval set (its source, files and chunks shown), with only the
    questions about the files chosen; None after saying why it cannot be read."""
    try:
        dataset = _dataset(CODE)
    except (DatasetError, OSError) as exc:
        st.error(str(exc))
        return None
    given = dataset.given_chunks()
    st.caption(
        f"Data: {dataset.attribution}. {len(dataset.documents)} source files, "
        f"{sum(len(c) for c in given.values()):,} chunks, {len(dataset.questions)} "
        "questions with golden chunks; every question searches the whole code base."
    )
    asked = question_counts(dataset.questions)
    with st.expander("Documents"):
        st.dataframe(
            pd.DataFrame(
                {
                    "document": [dataset.titles.get(d, d) for d in dataset.documents],
                    "characters": [len(t) for t in dataset.documents.values()],
                    "chunks": [len(given[d]) for d in dataset.documents],
                    "questions": [asked.get(d, 0) for d in dataset.documents],
                }
            ),
            hide_index=True,
            width="stretch",
            key=f"{P}code_documents",
        )
    about = st.multiselect(
        "Questions about",
        list(dataset.documents),
        format_func=lambda d: dataset.titles.get(d, d),
        persist_state=widgets.PERSIST,
        key=f"{P}code_about",
        help="Empty: every question. Retrieval still searches every file's chunks.",
    )
    if not about:
        return dataset
    try:
        return dataset.about(about)
    except DatasetError as exc:
        st.error(str(exc))
        return None


@dataclass(frozen=True)
class CodeRun:
    """What the code-set form asks for: the set's own chunks (``grid`` None) or a grid,
    the k values and the embedding model."""

    grid: Grid | None
    ks: tuple[int, ...]
    model: str

    def key(self, dataset: Dataset) -> str:
        asked = ",".join(str(q.index) + q.corpus_id for q in dataset.questions)
        grid = grid_json(self.grid) if self.grid is not None else "given"
        return "|".join((cached.text_key(asked), grid, ",".join(map(str, self.ks))))

    @property
    def found_at(self) -> float | None:
        """The exact rule on the set's own chunks, the coverage rule on any other."""
        return None if self.grid is None else FOUND_AT


def code_controls() -> CodeRun | None:
    """The code-set form; ``None`` until it is submitted with valid values."""
    with st.form(f"{P}code_form"):
        cols = st.columns([2, 2, 3])
        chunks = cols[0].radio(
            "Chunks",
            [GIVEN, CUT],
            persist_state=widgets.PERSIST,
            key=f"{P}code_chunks",
            help="The set's own chunks are evaluated as they are (the guide's setting); "
            "or the files are cut by the strategies below.",
        )
        ks = cols[1].text_input(
            "k values",
            "5, 10, 20",
            persist_state=widgets.PERSIST,
            key=f"{P}code_ks",
            help="Pass@k and the other metrics at every k (comma-separated).",
        )
        model = cols[2].selectbox(
            "Embedding model",
            list(MODELS),
            format_func=MODELS.__getitem__,
            persist_state=widgets.PERSIST,
            key=f"{P}code_model",
            help="The bundled model in torch by default, here as on the command line, so "
            "that the recall stays comparable with published rows (the other pages start at "
            "minilm-onnx-int8 once it is built: the same model, about twice as fast, "
            "cosine at least 0.98 to it).",
        )
        cols = st.columns([3, 2, 2])
        chosen = cols[0].multiselect(
            "Strategies (when cut)",
            list(strategies()),
            default=["code", "recursive"],
            persist_state=widgets.PERSIST,
            key=f"{P}code_strategies",
        )
        sizes = cols[1].text_input(
            "Sizes (when cut)", "400", persist_state=widgets.PERSIST, key=f"{P}code_sizes"
        )
        units = cols[2].multiselect(
            "Units (when cut)",
            list(UNITS),
            default=["tokens"],
            persist_state=widgets.PERSIST,
            key=f"{P}code_units",
        )
        submitted = st.form_submit_button("Run on the code set", type="primary")
    if not submitted and f"{P}code_last" not in st.session_state:
        st.info("Choose the chunks and a model, and press **Run on the code set**.")
        return None
    try:
        k_values = tuple(check_ks(parse_values(ks, int, "k values")))
        grid = None
        if chunks == CUT:
            data = {
                "strategy": chosen or ["code"],
                "size": parse_values(sizes, int, "Sizes"),
                "overlap": [0],
                "unit": units or ["tokens"],
            }
            grid = Grid.from_dict(data)
    except ValueError as exc:
        st.error(str(exc))
        return None
    st.session_state[f"{P}code_last"] = True
    return CodeRun(grid, k_values, str(model or DEFAULT_MODEL))


@st.cache_data(show_spinner="Cutting the files…", max_entries=8)
def _code_texts(set_key: str, grid_json: str, _data: Dataset) -> list[str]:
    """Every text a dense run embeds: the questions, then the chunks of every file."""
    texts = [q.text for q in _data.questions]
    if grid_json == "given":
        for chunks in _data.given_chunks().values():
            texts += searched_texts(chunks, DENSE)
        return texts
    for config in Grid.from_dict(json.loads(grid_json)).configs()[0]:
        texts += embedded_chunk_texts(_data.documents, config, DENSE)
    return texts


def code_model(run: CodeRun, dataset: Dataset, run_key: str, texts: Sequence[str]) -> str:
    """The model to run with: the static one for a quick first look when the chosen
    model would take long (with the button for it); the wait said either way, as the
    core estimates it (:func:`chunking.embedding.models.estimate_wait`)."""
    from chunking.embedding.models import estimate_wait

    count = f"{len(texts) - len(dataset.questions):,} chunks and {len(dataset.questions)} questions"

    def marker(name: str) -> tuple[str, ...]:
        return ("eval-code", run_key, name)

    model, wait = widgets.first_view_model(run.model, run_key, texts, count, marker)
    if wait is not None:
        widgets.preview_notice(run.model, run_key, wait, f"{P}code_full_model")
        return model
    wait = estimate_wait(model, texts, count, disk_cache=True)
    if wait.seconds >= 1:
        st.caption(
            f"{widgets.model_label(model)} embeds {count}: {wait.describe()} on this "
            "machine now, the first time (then from the disk cache); minilm-static gives a "
            "fast first look."
        )
    return model


@dataclass(frozen=True)
class CodeResult:
    """A run on the code set: its table with the per-k columns, and the model's name."""

    table: pd.DataFrame
    model: str


def run_code(run: CodeRun, dataset: Dataset, model: str, texts: Sequence[str]) -> CodeResult | None:
    """Embed what the run needs (with a progress bar), then evaluate; None after saying
    why it failed."""
    embedder = widgets.load_embedder(model)
    if embedder is None:
        return None
    settings = Settings(top_k=max(run.ks), scope=dataset.scope)
    holder = st.empty()
    try:
        widgets.embed_once(
            ("eval-code", run.key(dataset), embedder.name),  # as code_model's marker
            embedder,
            lambda: texts,
            f"Embedding {len(texts):,} questions and chunks ({model})",
        )
        progress = widgets.progress_bar(holder, "Evaluating")
        result = (
            evaluate_given(dataset, embedder, settings, progress, DENSE)
            if run.grid is None
            else sweep(dataset.documents, dataset.questions, run.grid, embedder, settings, progress)
        )
        table = with_k_columns(
            result.table, result.evaluations, dataset.documents, run.ks, run.found_at
        )
    except (EmbeddingError, ValueError) as exc:
        st.error(f"The evaluation failed: {exc}")
        return None
    finally:
        holder.empty()
    return CodeResult(table, model)


def code_report_notes(run: CodeRun, dataset: Dataset) -> tuple[str, list[str]]:
    """The caption and notes of the HTML report and of the page's tables."""
    rule = (
        "a golden chunk counts as found when it is retrieved (the guide's exact rule)"
        if run.found_at is None
        else f"a golden chunk counts as found when the top-k chunks cover {run.found_at:.0%} "
        "of its non-whitespace characters"
    )
    caption = (
        f"{len(dataset.questions):,} questions of the {dataset.name} set "
        f"({dataset.attribution}); retrieval among the chunks of every file."
    )
    return caption, [f"Pass@k in percent: {rule}. The other metrics in percent too."]


def code_table_view(table: pd.DataFrame, run: CodeRun, dataset: Dataset, key: str) -> None:
    """The table with Pass@k and the metrics at every k, the Pass@k chart and the report."""
    caption, notes = code_report_notes(run, dataset)
    shown = evaluation_display(table)
    st.dataframe(shown, hide_index=True, width="stretch", key=f"{P}{key}_table")
    st.caption(" ".join(notes))
    st.plotly_chart(pass_at_k_chart(table), key=f"{P}{key}_chart")
    report = partial(evaluation_report, caption=caption, notes=notes)
    widgets.download_buttons(
        [
            ("Download the report (HTML)", widgets.deferred(report, table), "html", "text/html"),
            ("Download the table (CSV)", table.to_csv(index=False), "csv", "text/csv"),
        ],
        f"{dataset.name}-{key}",
        key=f"{P}{key}_dl_",
    )


def code_set_section() -> None:
    """The code set: its own chunks or the project's strategies, Pass@k at every k,
    then every technique side by side."""
    dataset = code_set()
    if dataset is None:
        return
    run = code_controls()
    if run is None:
        return
    run_key = run.key(dataset)
    texts = _code_texts(run_key, grid_json(run.grid) if run.grid else "given", dataset)
    model = code_model(run, dataset, run_key, texts)
    kept: dict[str, CodeResult] = st.session_state.setdefault(f"{P}code_runs", {})
    result_key = f"{run_key}|{model}"
    if result_key not in kept:
        outcome = run_code(run, dataset, model, texts)
        if outcome is None:
            return
        kept[result_key] = outcome
        while len(kept) > KEPT_CODE_RUNS:
            del kept[next(iter(kept))]
    st.subheader("Results")
    code_table_view(kept[result_key].table, run, dataset, "code")
    st.subheader("Techniques side by side")
    code_techniques(run, dataset, kept[result_key])


def code_techniques(run: CodeRun, dataset: Dataset, result: CodeResult) -> None:
    """Every technique on the set's own chunks, or on one configuration of the run."""
    base: Config | None = None
    if run.grid is not None:
        configs = [Config.from_json(c) for c in result.table["config"]]
        chosen = st.selectbox(
            "Base configuration",
            range(len(configs)),
            format_func=lambda i: configs[i].label(),
            persist_state=widgets.PERSIST,
            key=f"{P}code_tech_config",
        )
        base = configs[min(chosen or 0, len(configs) - 1)]
    st.caption(
        "Dense, BM25, hybrid (reciprocal-rank fusion), late chunking (torch models), header "
        "context and window:1 on the same chunks. A technique that embeds the chunks "
        "differently embeds all of them again: with the bundled model that takes minutes."
    )
    key = "|".join((run.key(dataset), base.to_json() if base else "given", result.model))
    kept: dict[str, pd.DataFrame] = st.session_state.setdefault(f"{P}code_techniques", {})
    if key not in kept:
        if not st.button("Compare techniques", key=f"{P}code_tech_run"):
            return
        holder = st.empty()
        try:
            embedder = get_embedder(result.model)
            runs = compare_techniques(
                dataset.documents,
                dataset.questions,
                base,
                embedder,
                Settings(top_k=max(run.ks), scope=dataset.scope),
                widgets.progress_bar(holder, "Comparing techniques"),
                chunks=dataset.given_chunks() if base is None else None,
            )
            table = with_k_columns(
                techniques_table(runs),
                [r.evaluation for r in runs],
                dataset.documents,
                run.ks,
                run.found_at,
            )
        except (EmbeddingError, ValueError) as exc:
            st.error(f"The techniques could not be compared: {exc}")
            return
        finally:
            holder.empty()
        kept[key] = table
        while len(kept) > KEPT_TECHNIQUE_TABLES:
            del kept[next(iter(kept))]
    code_table_view(kept[key], run, dataset, "code_techniques")


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
            persist_state=widgets.PERSIST,
            key=f"{P}pg_model",
        )
    )
    top_k = int(
        cols[1].number_input("Top k", 1, 50, 5, persist_state=widgets.PERSIST, key=f"{P}pg_k")
    )
    query = st.text_input(
        "Query",
        persist_state=widgets.PERSIST,
        key=f"{P}pg_query",
        placeholder="Ask something the document answers",
    )
    st.caption(f"Chunks of the sidebar's configuration: {config.label()}.")
    if not query.strip():
        return
    assert source is not None  # sidebar_document() found it
    chunks = cached.safe_chunks(source, config)
    if isinstance(chunks, str):
        st.error(chunks)
        return
    embedder = widgets.load_embedder(model)
    if embedder is None:
        return
    try:  # the chunks go to the disk cache first, with a progress bar
        texts = searched_texts(chunks, DENSE)
        widgets.embed_with_progress(embedder, texts, f"Embedding {len(chunks):,} chunks")
        hit = retrieve(text, chunks, query, embedder, top_k)
    except EmbeddingError as exc:
        widgets.model_error(f"The model could not embed the chunks: {exc}")
        return
    ranked = enumerate(zip(hit.spans.tolist(), hit.scores.tolist(), strict=True), start=1)
    hits = [(start, end, rank, score) for rank, ((start, end), score) in ranked]
    st.caption(f"{config.label()} · {len(chunks):,} chunks of {name}")
    st.html(f"<style>{EVIDENCE_CSS}</style>")
    st.html(evidence_html(text, np.zeros((0, 2), dtype=np.int64), hits))
    chunk_ids = hit.chunk_indices.tolist()
    st.dataframe(hit_table(text, hits, chunk_ids=chunk_ids), hide_index=True)


# ---------------------------------------------------------------------------- page


def main() -> None:
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
