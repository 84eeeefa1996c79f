"""The Evaluate page's question sources: chroma-eval's bundled questions, a question
file or questions typed here on the sidebar's document (:class:`QuestionSet`), and the
box that picks one question to inspect (:func:`question_select`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from chunking.evaluation import (
    Question,
    QuestionFileError,
    load_chroma_eval,
    question_counts,
    questions_from_bytes,
)
from chunking.evaluation.datasets import (
    ATTRIBUTION,
    CHROMA,
)
from chunking.evaluation.typed import SEPARATOR, parse_typed_questions
from chunking.runtime.limits import CACHE_BOUNDS
from pages import cached, sidebar, state
from pages.upload_limits import app_uploader_mb

#: Prefix of this page's widget keys (the question file uploader: ``eval_upload.``).
P = "eval."
CHROMA_CORPORA = ("state_of_the_union", "chatlogs", "wikitexts", "pubmed", "finance")
DEFAULT_CORPORA = ["state_of_the_union", "chatlogs"]
BUNDLED = "chroma-eval (bundled questions)"
OWN = "My document"
TYPED = "questions typed here"
QUESTION_FILE = "a question file"
#: Typed questions first: they need nothing but the document.
OWN_SOURCES = (TYPED, QUESTION_FILE)
#: Where questions are generated from the document (a question file to upload here).
LLM_PAGE = "pages/llm_page.py"


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


@st.cache_resource(
    show_spinner="Loading chroma-eval…", max_entries=CACHE_BOUNDS["question_sets"].max_entries
)
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
        persist_state=state.PERSIST,
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
        persist_state=state.PERSIST,
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
        max_upload_size=app_uploader_mb(),
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
    # the name too: it is the documents' id in the sweep's results
    key = f"own:{cached.text_key(document[0])}:{cached.text_key(document[1])}:{questions_key}"
    return QuestionSet(key, documents, questions)


def typed_questions(document: tuple[str, str] | None) -> QuestionSet | None:
    """Questions typed one per line, each with an optional answer excerpt located in the
    document (its gold span); what became of every line is shown, none is dropped."""
    typed = st.text_area(
        "Questions, one per line",
        "",
        height=140,
        persist_state=state.PERSIST,
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
    name, text = cached.text_key(document[0]), cached.text_key(document[1])
    key = f"typed:{name}:{text}:{cached.text_key(typed)}"
    return QuestionSet(key, documents, parsed.questions)


def question_select(qs: QuestionSet, key: str) -> int:
    """A question of the set, by its document and text."""
    index = st.selectbox(
        "Question",
        range(len(qs.questions)),
        format_func=lambda i: f"[{qs.questions[i].corpus_id}] {qs.questions[i].text}",
        persist_state=state.PERSIST,
        key=key,
    )
    return min(index or 0, len(qs.questions) - 1)
