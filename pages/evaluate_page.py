"""Evaluate: how well do chunks answer questions? Gold-span retrieval scores, sweeps,
advice, and a query playground for documents without gold data.

The document is the sidebar's (:func:`pages.common.current_source`), nothing else;
strategies, their parameters and the default model come from the registry. Every piece
of document text shown as HTML is escaped first (:mod:`chunking.viz.evidence`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from chunking import UNITS, Config, get_strategy, strategies
from chunking.embedding.models import EmbeddingError, get_embedder
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
from chunking.evaluation.sweep import Digest, Grid, config_label, digest, parse_values, sweep
from chunking.viz.evaluation import metrics_vs_size, question_scores
from chunking.viz.evidence import EVIDENCE_CSS, LEGEND_HTML, evidence_html
from pages import common, kit

#: Prefix of this page's widget keys (the question file uploader: ``eval_upload.``).
P = "eval."
OWN_ID = "document"
CHROMA_CORPORA = ("state_of_the_union", "chatlogs", "wikitexts", "pubmed", "finance")
DEFAULT_CORPORA = ["state_of_the_union", "chatlogs"]
MODELS = {
    kit.default_model(): f"{kit.default_model()} (bundled, real)",
    "hash": "hash (instant fake, for trying the page)",
}
BUNDLED = "chroma-eval (bundled questions)"
OWN = "My document + question file"


# ------------------------------------------------------------------------- documents


def sidebar_document() -> tuple[str, str] | None:
    """``(name, text)`` of the sidebar's document, shown in a caption; or None after
    saying where to choose one."""
    source = common.current_source()
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
        persist_state=common.PERSIST,
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
    )
    return QuestionSet("chroma:" + ",".join(sorted(chosen)), documents, questions)


def own_questions() -> QuestionSet | None:
    document = sidebar_document()
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
        st.info("Upload a question file with gold reference spans to evaluate on this document.")
        return None
    documents = {OWN_ID: document[1]}
    try:
        questions = questions_from_bytes(
            upload.getvalue(), upload.name, documents, document_id=OWN_ID
        )
    except QuestionFileError as exc:
        st.error(f"The question file cannot be used: {exc}")
        return None
    st.caption(f"{len(questions)} questions on {document[0]}.")
    questions_key = kit.text_key(upload.getvalue().decode("utf-8", "replace"))
    key = f"own:{kit.text_key(document[1])}:{questions_key}"
    return QuestionSet(key, documents, questions)


# --------------------------------------------------------------------- configurations


def grid_controls() -> tuple[Grid, Settings, str] | None:
    """The sweep form; ``None`` until it is submitted with valid values."""
    names = list(strategies())
    with st.form(f"{P}form"):
        cols = st.columns([3, 2, 2, 2])
        chosen = cols[0].multiselect(
            "Strategies",
            names,
            default=["recursive", "token"],
            persist_state=common.PERSIST,
            key=f"{P}strategies",
        )
        sizes = cols[1].text_input(
            "Sizes",
            "200, 400",
            persist_state=common.PERSIST,
            key=f"{P}sizes",
            help="Comma-separated.",
        )
        overlaps = cols[2].text_input(
            "Overlaps",
            "0",
            persist_state=common.PERSIST,
            key=f"{P}overlaps",
            help="Absolute, or 0<x<1 for a share of the size.",
        )
        units = cols[3].multiselect(
            "Units",
            list(UNITS),
            default=["tokens"],
            persist_state=common.PERSIST,
            key=f"{P}units",
        )
        cols = st.columns([3, 2, 2, 2])
        with cols[0]:
            model = model_select(f"{P}model")
        top_k = cols[1].number_input(
            "Top k", 1, 50, 5, persist_state=common.PERSIST, key=f"{P}top_k"
        )
        thresholds = cols[2].text_input(
            "Thresholds",
            "",
            persist_state=common.PERSIST,
            key=f"{P}thresholds",
            help="semantic only; empty = its default.",
        )
        langchain = st.toggle(
            "Recursive with the report's LangChain settings",
            True,
            persist_state=common.PERSIST,
            key=f"{P}langchain",
            help="Separators [\\n\\n, \\n, ., ?, !, space, ''] with keep_separator='start', "
            "as in the Chroma report.",
        )
        compat = st.toggle(
            "Score spans as the report's code did",
            False,
            persist_state=common.PERSIST,
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
    except ValueError as exc:
        st.error(str(exc))
        return None
    st.session_state[f"{P}last"] = True
    settings = Settings.chroma(top_k=int(top_k)) if compat else Settings(top_k=int(top_k))
    return grid, settings, model


# ------------------------------------------------------------------------ evaluation


@st.cache_data(show_spinner=False, max_entries=16)
def _sweep(
    set_key: str, grid_json: str, settings_json: str, model: str, _qs: QuestionSet
) -> Digest:
    # No Streamlit call in here: a cached function's elements are replayed on a cache
    # hit, and a progress bar created outside cannot be. warm_up() shows the progress.
    grid = Grid.from_dict(json.loads(grid_json))
    settings = Settings(**json.loads(settings_json))
    return digest(sweep(_qs.documents, _qs.questions, grid, get_embedder(model), settings))


def grid_json(grid: Grid) -> str:
    return json.dumps(grid.to_dict(), sort_keys=True)


def warm_up(qs: QuestionSet, grid: Grid, model: str, run_key: str) -> None:
    """Embed every text the sweep needs, with a progress bar (once per sweep).

    The vectors land in the embedder's cache, so the cached sweep that follows finds
    them all and does not embed anything itself. Records (texts requested, texts the
    model embedded) under ``run_key``.
    """
    warmed: dict[str, tuple[int, int]] = st.session_state.setdefault(f"{P}warmed", {})
    if run_key in warmed:
        return
    embedder = get_embedder(model)
    before = embedder.encoded
    configs, _ = grid.configs()
    ids = list(dict.fromkeys(q.corpus_id for q in qs.questions))
    texts = [q.text for q in qs.questions]
    for config in configs:  # each shows "Chunking…" the first time
        for i in ids:
            texts.extend(c.text for c in kit.chunks(qs.documents[i], config))
    kit.embed_with_progress(embedder, texts, "Embedding the questions and every chunk")
    warmed[run_key] = (len(texts), embedder.encoded - before)


def run_sweep(
    qs: QuestionSet, grid: Grid, settings: Settings, model: str
) -> tuple[Digest, tuple[int, int]] | None:
    """The sweep's results (cached) and (texts requested, texts embedded), after embedding
    what it needs with a progress bar."""
    settings_json = json.dumps(asdict(settings), sort_keys=True)
    key = (qs.key, grid_json(grid), settings_json, model)
    run_key = "|".join(key)
    try:
        warm_up(qs, grid, model, run_key)
        with st.spinner("Scoring…"):
            result = _sweep(*key, qs)
    except EmbeddingError as exc:
        st.error(f"The embedding model cannot be used: {exc}")
        return None
    except ValueError as exc:
        st.error(f"The evaluation failed: {exc}")
        return None
    return result, st.session_state[f"{P}warmed"][run_key]


def results_view(result: Digest, counts: tuple[int, int]) -> None:
    table = result.table
    shown = table.drop(columns=["config", "questions"])
    shown = shown[[c for c in shown.columns if shown[c].notna().any()]]
    st.dataframe(
        shown,
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(format="percent")
            for c in shown.columns
            if c.endswith(("_mean", "_std")) or c == "split_share"
        },
    )
    st.download_button(
        "Download results (CSV)",
        table.to_csv(index=False),
        file_name="chunk-evaluation.csv",
        mime="text/csv",
        on_click="ignore",
        key=f"{P}download",
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


def advice_view(result: Digest) -> None:
    retrieved = result.table["recall_mean"].notna().any()
    options = list(METRICS) if retrieved else ["precision_omega"]
    metric = st.selectbox(
        "Best configuration for",
        options,
        format_func=METRIC_LABELS.get,
        persist_state=common.PERSIST,
        key=f"{P}metric",
    )
    st.markdown(report(result.table, metric).markdown())


def question_view(result: Digest, qs: QuestionSet) -> None:
    labels = [s.label for s in result.snapshots]
    chosen = st.selectbox(
        "Configuration",
        range(len(labels)),
        format_func=labels.__getitem__,
        persist_state=common.PERSIST,
        key=f"{P}inspect_config",
    )
    snap = result.snapshots[min(chosen, len(labels) - 1)]
    frame = snap.per_question
    index = st.selectbox(
        "Question",
        range(len(qs.questions)),
        format_func=lambda i: f"[{qs.questions[i].corpus_id}] {qs.questions[i].text}",
        persist_state=common.PERSIST,
        key=f"{P}question",
    )
    index = min(index, len(qs.questions) - 1)
    row = frame.iloc[index]
    cols = st.columns(5)
    for col, metric in zip(cols, METRICS, strict=False):
        value = row[metric]
        col.metric(METRIC_LABELS[metric], "—" if pd.isna(value) else f"{value:.1%}")
    cols[4].metric("Split gold spans", f"{row['split_references']} / {row['references']}")
    question = qs.questions[index]
    text = qs.documents[question.corpus_id]
    hits = snap.hits[index]
    st.html(f"<style>{EVIDENCE_CSS}</style>{LEGEND_HTML}")
    st.html(evidence_html(text, question.spans, hits))
    if hits:
        st.dataframe(hit_table(text, hits, question.spans), hide_index=True)
    st.plotly_chart(question_scores(frame, "recall" if hits else "precision_omega"), key=f"{P}hist")


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


def model_select(key: str) -> str:
    """The embedding model: the registry's default (bundled) or the fast fake."""
    return str(
        st.selectbox(
            "Embedding model",
            list(MODELS),
            format_func=MODELS.get,
            persist_state=common.PERSIST,
            key=key,
        )
    )


def evaluation_section() -> None:
    origin = st.radio(
        "Questions", [BUNDLED, OWN], horizontal=True, persist_state=common.PERSIST, key=f"{P}origin"
    )
    qs = bundled_questions() if origin == BUNDLED else own_questions()
    if qs is None:
        return
    controls = grid_controls()
    if controls is None:
        return
    grid, settings, model = controls
    outcome = run_sweep(qs, grid, settings, model)
    if outcome is None:
        return
    result, counts = outcome
    st.subheader("Results")
    results_view(result, counts)
    st.subheader("Advice")
    advice_view(result)
    st.subheader("Inspect a question")
    question_view(result, qs)


# ------------------------------------------------------------------------ playground


def playground_config() -> tuple[Config, int] | None:
    """A strategy with its size, overlap and unit (the registry's widgets), and top k."""
    names = [n for n, s in strategies().items() if s.limit_param]
    cols = st.columns([2, 5, 1])
    name = cols[0].selectbox("Strategy", names, persist_state=common.PERSIST, key=f"{P}pg_strategy")
    spec = get_strategy(name)
    shown = [n for n in (spec.limit_param, "overlap", "unit") if n in spec.param_names]
    with cols[1]:
        values = kit.param_controls(
            name, shown, lambda p: kit.param_key(name, p, f"{P}pg."), columns=len(shown)
        )
    top_k = int(
        cols[2].number_input("Top k", 1, 50, 5, persist_state=common.PERSIST, key=f"{P}pg_k")
    )
    built = common.build_config(name, values)
    if isinstance(built, str):
        st.error(built)
        return None
    return built, top_k


def playground_section() -> None:
    st.caption(
        "For a document without gold answers: type a question and see which chunks a "
        "retriever would return, highlighted in the document with their cosine scores."
    )
    document = sidebar_document()
    if document is None:
        return
    name, text = document
    chosen = playground_config()
    model = model_select(f"{P}pg_model")
    query = st.text_input(
        "Query",
        persist_state=common.PERSIST,
        key=f"{P}pg_query",
        placeholder="Ask something the document answers",
    )
    if chosen is None or not query.strip():
        return
    config, top_k = chosen
    chunks = kit.safe_chunks(text, config)
    if isinstance(chunks, str):
        st.error(chunks)
        return
    embedder = kit.load_embedder(model)
    if embedder is None:
        return
    try:
        vectors = kit.embed_with_progress(
            embedder, [c.text for c in chunks], f"Embedding {len(chunks):,} chunks"
        )
        asked = embedder.embed([query])[0]
    except EmbeddingError as exc:
        kit.model_error(f"The model could not embed the chunks: {exc}")
        return
    scores = vectors @ asked
    top = np.argsort(-scores, kind="stable")[:top_k]
    hits = [
        (chunks[i].start, chunks[i].end, rank, float(scores[i])) for rank, i in enumerate(top, 1)
    ]
    st.caption(f"{config_label(config)} · {len(chunks):,} chunks of {name}")
    st.html(f"<style>{EVIDENCE_CSS}</style>")
    st.html(evidence_html(text, np.zeros((0, 2), dtype=np.int64), hits))
    st.dataframe(hit_table(text, hits, chunk_ids=top), hide_index=True)


# ---------------------------------------------------------------------------- page

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
