"""LLM tools: contextual retrieval, enrichment and evaluation questions for the sidebar's
document and configuration, with the cost shown before a run and a button to confirm.

Answers are cached on disk, so what a run produced is shown from the cache: a run that
was cancelled (any click stops it) or stopped by an error keeps its answers, and
running again continues where it stopped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from chunking import Chunk, Config, get_sizer
from chunking.llm.answers import annotate
from chunking.llm.client import (
    KEY_ENV,
    LLM,
    LOCAL_MODEL,
    LLMError,
    Request,
    make_llm,
    resolve_llm,
)
from chunking.llm.cost import Estimate, Run, cached_answers, estimate, run_requests
from chunking.llm.enrich import annotate_answers, enrichment_requests, yake_keywords
from chunking.llm.questions import collect_questions, passages, question_requests, to_csv
from chunking.output import export
from chunking.output.preview import preview
from chunking.splitters.propositions import proposition_requests
from pages import cached, exports, sidebar, state

URL_KEY = state.LLM_URL_KEY
MODEL_KEY = state.LLM_MODEL_KEY
API_KEY = "llm.key"
FIELDS_KEY = "llm.fields"
KEYWORDS_KEY = "llm.keywords"
N_KEY = "llm.n"
REVIEW_KEY = "llm.review"
#: Set while a run is going; still set on the next run means it was stopped (cancel).
RUNNING = "_llm_running"
LLM_FIELDS = {"context": "Context (contextual retrieval)", "summary": "One-sentence summary"}
KEYWORD_SOURCES = ("YAKE (no model)", "the model", "none")


# --------------------------------------------------------------------------- settings


def settings() -> LLM:
    """The model chosen in the settings, or stop the page with what is wrong."""
    with st.expander("Model settings", expanded=not st.session_state.get(URL_KEY)):
        url = st.text_input(
            "Endpoint URL",
            key=URL_KEY,
            persist_state=state.PERSIST,
            placeholder="http://localhost:11434/v1",
            help="Any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, "
            f"OpenAI). Empty: the offline {LOCAL_MODEL}.",
        )
        model = st.text_input("Model", key=MODEL_KEY, persist_state=state.PERSIST)
        key = st.text_input(
            "API key",
            key=API_KEY,
            type="password",
            help=f"Empty: {KEY_ENV} from the environment (local servers need none).",
        )
    try:
        llm = make_llm(url.strip() or None, model.strip() or None, key=key or None)
    except LLMError as exc:
        st.error(str(exc))
        st.stop()
    if llm.note:
        st.info(f"**Offline model.** {llm.note}", icon=":material/info:")
    return llm


def cost_line(cost: Estimate) -> None:
    st.markdown(f"**Cost:** {cost.describe()}.")


def run_with_progress(llm: LLM, requests: Sequence[Request], what: str) -> Run:
    """Ask ``requests`` with a progress bar; any click (Cancel) stops the run."""
    st.session_state[RUNNING] = what
    bar = st.progress(0.0, text=f"{what}: starting…")
    st.button("Cancel", key="llm.cancel", icon=":material/stop:")

    def show(done: int, total: int, what: str) -> None:
        bar.progress(done / total, text=f"{what}: {done} of {total}")

    run = run_requests(llm, requests, show)
    st.session_state.pop(RUNNING, None)
    if run.error:
        st.error(f"{run.describe()}. Run again to continue.")
    else:
        st.success(run.describe())
    return run


def stopped_note() -> None:
    """Say so when the previous run was stopped before it ended (a click cancels)."""
    what = st.session_state.pop(RUNNING, None)
    if what:
        st.warning(f"{what} was cancelled; the answers so far are kept (cached).")


# ------------------------------------------------------------------------ enrichment


@cached.bounded("keywords", "Finding keywords…", copy=True)
def _yake(key: str, _texts: tuple[str, ...]) -> list[list[str]]:
    return yake_keywords(_texts)


def enriched_chunks(
    llm: LLM, chunks: Sequence[Chunk], wanted: dict[str, list[Request]], keywords: str
) -> list[Chunk]:
    """The chunks with every annotation known so far (cached answers, YAKE keywords)."""
    out = list(chunks)
    for field, requests in wanted.items():
        out = annotate_answers(out, field, cached_answers(llm, requests))
    if keywords == KEYWORD_SOURCES[0]:
        texts = tuple(c.text for c in chunks)
        key = cached.text_key(json.dumps(texts))  # unambiguous, unlike a join: NUL may occur
        out = annotate(out, "keywords", _yake(key, texts))
    return out


def enrichment_table(chunks: Sequence[Chunk]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "chunk": [c.index for c in chunks],
            "text": [preview(c.text, 60) for c in chunks],
            "context": [c.metadata.get("context", "") for c in chunks],
            "summary": [c.metadata.get("summary", "") for c in chunks],
            "keywords": [", ".join(c.metadata.get("keywords", ())) for c in chunks],
        }
    )


def enrichment(llm: LLM, source: cached.Source, chunks: Sequence[Chunk]) -> None:
    fields = st.multiselect(
        "Ask the model for",
        list(LLM_FIELDS),
        default=["context"],
        format_func=LLM_FIELDS.__getitem__,
        key=FIELDS_KEY,
        persist_state=state.PERSIST,
    )
    keywords = st.radio(
        "Keywords by",
        KEYWORD_SOURCES,
        key=KEYWORDS_KEY,
        horizontal=True,
        persist_state=state.PERSIST,
    )
    text = source.document.text
    wanted = enrichment_requests(
        text,
        chunks,
        context="context" in fields,
        summary="summary" in fields,
        model_keywords=keywords == KEYWORD_SOURCES[1],
    )
    every = [r for rs in wanted.values() for r in rs]
    if every:
        cost = estimate(llm, every)
        cost_line(cost)
        todo = cost.calls - cost.cached
        if todo and st.button(f"Run {todo} calls", key="llm.enrich.run", type="primary"):
            run_with_progress(llm, every, "Enrichment")
    enriched = enriched_chunks(llm, chunks, wanted, str(keywords))
    st.dataframe(enrichment_table(enriched), hide_index=True, key="llm.enrich.table")
    records = export.chunk_records(enriched)
    downloads: list[exports.Download] = [
        (
            "Enriched chunks (JSONL)",
            exports.deferred(export.to_jsonl, records),
            "jsonl",
            "application/jsonl",
        ),
        ("Enriched chunks (CSV)", exports.deferred(export.to_csv, records), "csv", "text/csv"),
    ]
    stem = source.document.name.rsplit(".", 1)[0]
    exports.download_buttons(downloads, f"{stem}-enriched", key="llm.dl_")


# ---------------------------------------------------------------------- propositions


def propositions(config: Config, text: str) -> None:
    """The cost of the sidebar's propositions configuration and a button that runs it
    (the strategy then cuts from the cached answers, whatever its time budget)."""
    st.subheader("Propositions (the sidebar's strategy)")
    try:
        model = resolve_llm(config.params["llm"])
    except LLMError as exc:
        st.error(str(exc))
        return
    _, requests = proposition_requests(text, config.params, get_sizer(config.unit))
    cost = estimate(model, requests)
    cost_line(cost)
    todo = cost.calls - cost.cached
    run = todo and st.button(f"Write propositions ({todo} calls)", key="llm.propositions.run")
    if run and run_with_progress(model, requests, "Propositions").complete:
        st.rerun()  # the strategy now cuts from the cache


# ------------------------------------------------------------------------- questions


def questions(llm: LLM, source: cached.Source) -> None:
    n = int(st.number_input("Questions", 1, 200, 5, key=N_KEY, persist_state=state.PERSIST))
    stem = source.document.name.rsplit(".", 1)[0] or "document"
    documents = {stem: source.document.text}
    picked = passages(documents, n)
    requests = question_requests(documents, picked)
    cost = estimate(llm, requests)
    cost_line(cost)
    todo = cost.calls - cost.cached
    if todo and st.button(f"Generate ({todo} calls)", key="llm.questions.run", type="primary"):
        run_with_progress(llm, requests, "Question generation")
    if all(a is None for a in cached_answers(llm, requests)):
        st.caption("No answers yet: generate to review questions here.")
        return
    found = collect_questions(documents, picked, cached_answers(llm, requests))
    st.caption(found.describe())
    if not found.questions:
        st.warning("No question could be kept; try more questions or a stronger model.")
        return
    table = pd.DataFrame(
        {
            "keep": True,
            "question": [q.question for q in found.questions],
            "excerpt": [" … ".join(e.content for e in q.excerpts) for q in found.questions],
            "match": [", ".join(e.match.describe() for e in q.excerpts) for q in found.questions],
        }
    )
    reviewed = st.data_editor(
        table,
        key=REVIEW_KEY,
        hide_index=True,
        disabled=["question", "excerpt", "match"],
        column_config={"keep": st.column_config.CheckboxColumn("keep", help="untick to discard")},
    )
    kept = [q for q, keep in zip(found.questions, reviewed["keep"], strict=True) if keep]
    st.download_button(
        f"Question file ({len(kept)} questions, CSV)",
        data=to_csv(kept),
        file_name=f"{stem}-questions.csv",
        mime="text/csv",
        key="llm.dl_questions",
        icon=":material/download:",
        disabled=not kept,
        help="Upload it on the Evaluate page (your own question file), or use it with "
        "chunk-explorer evaluate --questions FILE --corpus FOLDER.",
    )


# ------------------------------------------------------------------------------ page


def main() -> None:
    st.title("LLM tools")
    st.caption(
        "Contextual retrieval, summaries and keywords per chunk, and evaluation questions "
        "with gold spans for your document. Every call is cached on disk."
    )
    llm = settings()
    source = sidebar.require_source()
    config = sidebar.require_config()
    st.caption(f"{source.document.describe()} — {config.label(title=True)}")
    stopped_note()
    if config.strategy == "propositions":
        propositions(config, source.document.text)
    chunks = cached.safe_chunks(source, config)
    if isinstance(chunks, str):
        st.error(chunks)
        st.stop()
    enrich_tab, questions_tab = st.tabs(["Contexts and enrichment", "Evaluation questions"])
    with enrich_tab:
        enrichment(llm, source, chunks)
    with questions_tab:
        questions(llm, source)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
