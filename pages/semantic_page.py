"""Semantic breakpoints: where the meaning of consecutive sentences changes.

The document's sentence windows are embedded once per (text, model, buffer size) and
the analysis is kept with ``st.cache_resource``; the method, threshold and size bounds
re-chunk from it (``SemanticAnalysis.chunk``) without embedding again. The page has its
own semantic settings (keys ``sem.*``, kept for the whole session); other pages can
hand settings over through :data:`REQUEST_KEY`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from chunking import Config, strategies
from chunking.embedding.models import Embedder, EmbeddingError, get_embedder
from chunking.engine.spans import sentence_spans
from chunking.splitters.semantic.analysis import (
    SemanticAnalysis,
    SemanticResult,
    analyze,
    window_texts,
)
from chunking.splitters.semantic.methods import (
    DEFAULT_THRESHOLDS,
    METHOD_DEFAULT,
    METHODS,
    default_count,
)
from chunking.viz.render import LEGEND_HTML, paginate, render_page
from chunking.viz.semantic import distance_curve, distance_histogram
from pages import common

P = "sem."
METHOD_KEY = P + "method"
BUFFER_KEY = P + "buffer_size"
UNIT_KEY = P + "unit"
MAX_KEY = P + "max_size"
MIN_KEY = P + "min_size"
MODEL_KEY = P + "model"
PAGE_KEY = P + "page"
#: A dict of semantic parameters (registry names) for this page to apply once.
REQUEST_KEY = "_sem_request"
#: The text key of the document the user agreed to analyse only the start of.
TRUNCATE_KEY = "_sem_truncate"
MAX_SENTENCES_ENV = "CHUNK_EXPLORER_MAX_SENTENCES"
DEFAULT_MAX_SENTENCES = 5_000
DEFAULT_MODEL = "all-MiniLM-L6-v2"
UNITS = ("tokens", "words", "chars")
#: Slider range and step of each method's threshold (count: 1 to the sentence count).
SLIDERS: Mapping[str, tuple[float, float, float]] = {
    "percentile": (0.0, 100.0, 0.5),
    "similarity": (0.0, 1.0, 0.01),
    "std": (0.0, 5.0, 0.05),
    "iqr": (0.0, 5.0, 0.05),
    "gradient": (0.0, 100.0, 0.5),
}
THRESHOLD_LABELS: Mapping[str, str] = {
    "percentile": "Percentile of the distances",
    "similarity": "Lowest similarity kept inside a chunk",
    "std": "k in mean + k·std",
    "iqr": "k in mean + k·IQR",
    "gradient": "Percentile of the distances' gradient",
    "count": "Number of chunks",
}


def threshold_key(method: str) -> str:
    """Session-state key of a method's threshold slider (each method keeps its own)."""
    return f"{P}threshold.{method}"


# --------------------------------------------------------------------- settings


def max_sentences() -> tuple[int, str | None]:
    """The sentence limit from ``CHUNK_EXPLORER_MAX_SENTENCES`` and any problem with it."""
    raw = os.environ.get(MAX_SENTENCES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_SENTENCES, None
    if raw.isdigit() and int(raw) >= 3:
        return int(raw), None
    return DEFAULT_MAX_SENTENCES, (
        f"{MAX_SENTENCES_ENV}={raw!r} is not a whole number of at least 3; "
        f"using {DEFAULT_MAX_SENTENCES:,}"
    )


def _apply(params: Mapping[str, Any]) -> None:
    """Set this page's widgets from semantic parameters (registry names and values)."""
    keys = {
        "method": METHOD_KEY,
        "buffer_size": BUFFER_KEY,
        "unit": UNIT_KEY,
        "max_size": MAX_KEY,
        "min_size": MIN_KEY,
        "model": MODEL_KEY,
    }
    for name, key in keys.items():
        if name in params:
            st.session_state[key] = params[name]
    method, threshold = params.get("method"), params.get("threshold")
    wanted = threshold is not None and threshold != METHOD_DEFAULT
    if wanted and (method in SLIDERS or method == "count"):
        st.session_state[threshold_key(method)] = (
            int(threshold) if method == "count" else float(threshold)
        )


def _initial_settings() -> None:
    """Apply a hand-over from another page, or on a first visit the sidebar's semantic
    settings; then fill in the defaults."""
    request = st.session_state.pop(REQUEST_KEY, None)
    if isinstance(request, Mapping):
        _apply(request)
    elif METHOD_KEY not in st.session_state and st.session_state.get(common.STRATEGY_KEY) == (
        "semantic"
    ):
        spec = strategies().get("semantic")
        if spec is not None:
            _apply(common.read_params(spec))
    st.session_state.setdefault(METHOD_KEY, "percentile")
    st.session_state.setdefault(BUFFER_KEY, 1)
    st.session_state.setdefault(UNIT_KEY, "tokens")
    st.session_state.setdefault(MAX_KEY, 512)
    st.session_state.setdefault(MIN_KEY, 0)
    st.session_state.setdefault(MODEL_KEY, DEFAULT_MODEL)


def _use_bundled_model() -> None:
    st.session_state[MODEL_KEY] = DEFAULT_MODEL


def _truncate(key: str | None) -> None:
    st.session_state[TRUNCATE_KEY] = key


# --------------------------------------------------------------- cached analysis


@st.cache_resource(show_spinner=False, max_entries=16)
def _spans(key: str, _text: str) -> tuple[tuple[int, int], ...]:
    return tuple(sentence_spans(_text) or [(0, len(_text))])


@st.cache_resource(show_spinner=False, max_entries=6)
def _analysis(
    key: str, model: str, buffer_size: int, _text: str, _embedder: Embedder
) -> SemanticAnalysis:
    return analyze(_text, embedder=_embedder, buffer_size=buffer_size)


@st.cache_resource(show_spinner=False)
def _analysed() -> set[tuple[str, str, int]]:
    """Analyses made in this process, so that cached ones skip the progress pass."""
    return set()


@st.cache_resource(show_spinner=False, max_entries=6)
def _histogram(key: str, _analysis: SemanticAnalysis) -> go.Figure:
    """The distances with each method's default cutoff. It does not change with the
    threshold, so the browser keeps it as it is while the threshold moves."""
    cutoffs = {m: v for m, v in _analysis.thresholds().items() if m != "gradient"}
    return distance_histogram(_analysis.distances, cutoffs=cutoffs)


@st.cache_resource(show_spinner=False, max_entries=64)
def _rechunk(
    key: str,
    method: str,
    threshold: float | None,
    unit: str,
    max_size: int,
    min_size: int,
    _analysis: SemanticAnalysis,
) -> SemanticResult:
    return _analysis.chunk(
        method=method, threshold=threshold, unit=unit, max_size=max_size, min_size=min_size
    )


def embed_with_progress(embedder: Embedder, texts: Sequence[str], label: str) -> None:
    """Embed ``texts`` into the embedder's cache with a progress bar (none if cached)."""
    holder = st.empty()

    def update(done: int, total: int) -> None:
        if total and done < total:
            holder.progress(done / total, text=f"{label}: {done:,} of {total:,}")

    embedder.embed(texts, progress=update)
    holder.empty()


def load_analysis(
    text: str, key: str, embedder: Embedder, buffer_size: int, spans: Sequence[tuple[int, int]]
) -> SemanticAnalysis:
    """The cached analysis; the first time, the windows are embedded with progress shown."""
    marker = (key, embedder.name, buffer_size)
    if marker not in _analysed():
        texts = window_texts(text, spans, buffer_size)
        label = f"Embedding {len(texts):,} sentence windows with {embedder.name} (first time only)"
        embed_with_progress(embedder, texts, label)
    analysis = _analysis(key, embedder.name, buffer_size, text, embedder)
    _analysed().add(marker)
    return analysis


def load_embedder(model: str) -> Embedder | None:
    """The embedder, or None after showing what to do when it cannot be loaded."""
    try:
        with st.spinner("Loading the embedding model…"):
            return get_embedder(model)
    except EmbeddingError as exc:
        st.error(
            f"The embedding model could not be loaded: {exc}\n\nUse the bundled "
            f"{DEFAULT_MODEL} (the button below), enter the path of a local "
            "sentence-transformers model, or enter 'hash' for a fast fake model."
        )
        st.button("Use the bundled model", on_click=_use_bundled_model, key="sem_use_bundled")
        return None


# ------------------------------------------------------------------ controls


def threshold_control(method: str, sentences: int) -> float | None:
    """The threshold slider of ``method`` (None for auto, which chooses its own)."""
    if method == "auto":
        st.caption("**auto** picks the method and threshold from the distances' shape.")
        return None
    key = threshold_key(method)
    if method == "count":
        top = max(2, sentences)
        st.session_state.setdefault(key, min(default_count(sentences), top))
        common.clamp_state(key, 1, top)
        value = st.slider(
            THRESHOLD_LABELS[method],
            1,
            top,
            step=1,
            key=key,
            persist_state=common.PERSIST,
            help="Cut at the count - 1 largest distances.",
        )
        return float(value)
    lo, hi, step = SLIDERS[method]
    st.session_state.setdefault(key, DEFAULT_THRESHOLDS[method])
    st.session_state[key] = min(max(lo, float(st.session_state[key])), hi)
    value = st.slider(
        THRESHOLD_LABELS[method],
        lo,
        hi,
        step=step,
        key=key,
        persist_state=common.PERSIST,
        help=f"The default is {DEFAULT_THRESHOLDS[method]:g}. The dashed line on the curve "
        "moves with it; nothing is embedded again.",
    )
    return float(value)


def window_controls() -> tuple[int, str]:
    """Buffer size and model: the settings that need new embeddings."""
    left, right = st.columns(2)
    buffer_size = left.number_input(
        "Buffer size (sentences on each side)",
        min_value=0,
        max_value=10,
        step=1,
        key=BUFFER_KEY,
        persist_state=common.PERSIST,
        help="Each sentence is embedded with this many neighbours on each side "
        "(1: windows of 3 sentences). Changing it embeds again, once.",
    )
    model = right.text_input(
        "Model",
        key=MODEL_KEY,
        persist_state=common.PERSIST,
        help=f"{DEFAULT_MODEL} (bundled, offline), the path of a local "
        "sentence-transformers model, or 'hash' (a fast fake for trying the page).",
    )
    return int(buffer_size), model


def size_controls() -> tuple[str, int, int]:
    """Unit and size bounds: applied after the method's cut."""
    cols = st.columns(3)
    unit = cols[0].selectbox("Unit", UNITS, key=UNIT_KEY, persist_state=common.PERSIST)
    max_size = cols[1].number_input(
        "Max size",
        min_value=1,
        max_value=1_000_000,
        step=16,
        key=MAX_KEY,
        persist_state=common.PERSIST,
        help="Larger chunks are cut again at their weakest similarity.",
    )
    min_size = cols[2].number_input(
        "Min size",
        min_value=0,
        max_value=1_000_000,
        step=8,
        key=MIN_KEY,
        persist_state=common.PERSIST,
        help="Smaller chunks are merged into their more similar neighbour (0: off).",
    )
    return unit, int(max_size), int(min_size)


def sidebar_config(result: SemanticResult, buffer_size: int, model: str) -> Config | None:
    """These settings as the sidebar's semantic configuration, when the strategy exists."""
    if "semantic" not in strategies():
        return None
    threshold = METHOD_DEFAULT if st.session_state[METHOD_KEY] == "auto" else result.parameter
    try:
        return Config.create(
            "semantic",
            method=st.session_state[METHOD_KEY],
            threshold=float(threshold),
            buffer_size=buffer_size,
            unit=result.unit,
            max_size=result.max_size,
            min_size=result.min_size,
            model=model,
        )
    except ValueError:
        return None


# ------------------------------------------------------------------- figures


def sentence_pairs(
    text: str, sentences: Sequence[tuple[int, int]], result: SemanticResult
) -> dict[int, tuple[str, str]]:
    """The sentence before and after every breakpoint (and every merged boundary)."""
    pairs: dict[int, tuple[str, str]] = {}
    last = len(sentences) - 1
    for i, _, _ in (*result.breakpoints, *result.merged):
        a, b = sentences[i]
        after = text[sentences[i + 1][0] : sentences[i + 1][1]] if i < last else ""
        pairs[i] = (text[a:b], after)
    return pairs


def chunk_frame(result: SemanticResult) -> pd.DataFrame:
    """One row per chunk: sentences, size, why it ends, the distance there, a preview."""
    rows = []
    for c in result.chunks:
        a, b = c.metadata.get("sentences", (None, None))
        distance = c.metadata.get("distance")
        merged = c.metadata.get("merged") or {}
        rows.append(
            {
                "chunk": c.index,
                "sentences": f"{a}–{b - 1}" if a is not None and b is not None else "",
                f"size ({result.unit})": c.size,
                "ends by": str(c.metadata.get("boundary", "")),
                "distance": None if distance is None else round(float(distance), 3),
                "merged": int(merged.get("count", 0)) if isinstance(merged, Mapping) else 0,
                "text": common.preview(c.text),
            }
        )
    return pd.DataFrame(rows)


def describe_cutoffs(result: SemanticResult) -> str:
    """The caption under the histogram: each method's default cutoff and the current one."""
    parts = []
    for method, value in result.thresholds.items():
        shown = f"{value:.3f}" if math.isfinite(value) else ("none" if value > 0 else "all")
        parts.append(f"{method} {shown}")
    return (
        f"Default cutoffs: {' · '.join(parts)}. The current cutoff, {result.method} "
        f"{result.parameter:g} → {result.threshold:.3f}, is the dashed line on the curve. "
        "The gradient's cutoff applies to the gradient of the distances, not to the "
        "distances, so it is not drawn here."
    )


def show_metrics(result: SemanticResult, sentences: int) -> None:
    reasons = [r for _, _, r in result.breakpoints]
    cols = st.columns(6)
    cols[0].metric("Sentences", f"{sentences:,}")
    cols[1].metric("Breakpoints", f"{len(result.breakpoints):,}")
    cols[2].metric("Chunks", f"{len(result.chunks):,}")
    cols[3].metric("Similarity cuts", f"{reasons.count('similarity'):,}")
    cols[4].metric("Max-size splits", f"{reasons.count('max-size split'):,}")
    cols[5].metric("Merged (min size)", f"{len(result.merged):,}")


def show_text(text: str, result: SemanticResult) -> None:
    """The chunks drawn on the document, a page at a time (as on the Explore page)."""
    st.subheader("The chunks on the text")
    pages = paginate(result.chunks)
    common.clamp_state(PAGE_KEY, 1, len(pages))
    nav, info = st.columns([1, 4], vertical_alignment="bottom")
    number = nav.number_input(
        f"Page (of {len(pages)})", min_value=1, max_value=len(pages), step=1, key=PAGE_KEY
    )
    page = pages[int(number) - 1]
    info.caption(
        f"Chunks {page.first}–{page.last - 1} of {len(result.chunks):,}, characters "
        f"{page.start:,}–{page.end:,}. Hover over the text to see each chunk's offsets and size."
    )
    st.html(LEGEND_HTML)
    st.html(render_page(text, result.chunks, page, unit=result.unit))


# ---------------------------------------------------------------------- page


def main() -> None:
    source = common.require_source()
    _initial_settings()
    st.title("Semantic breakpoints")
    st.caption(
        f"{common.describe_document(source.document)} — each sentence is embedded with its "
        "neighbours; a chunk ends where consecutive windows are least similar."
    )
    text, key, spans = sentences_to_analyse(source.document.text, source.key)
    with st.expander("Window and model (changing these embeds the document again)"):
        buffer_size, model = window_controls()
    embedder = load_embedder(model)
    if embedder is None:
        st.stop()
    try:
        analysis = load_analysis(text, key, embedder, buffer_size, spans)
    except EmbeddingError as exc:
        st.error(
            f"The model could not embed this document: {exc}\n\nTry the bundled "
            f"{DEFAULT_MODEL} or another model."
        )
        st.button("Use the bundled model", on_click=_use_bundled_model, key="sem_use_bundled")
        st.stop()
    explore(Loaded(text, analysis, f"{key}|{embedder.name}|{buffer_size}", buffer_size, model))


def sentences_to_analyse(text: str, key: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """The text (whole, or its start within the sentence limit), its key and sentences;
    too few sentences, or too many without the user's consent, stop the page."""
    spans = _spans(key, text)
    limit, problem = max_sentences()
    if problem:
        st.warning(problem)
    if len(spans) < 3:
        st.info(
            f"This document has {len(spans)} sentence{'s' if len(spans) != 1 else ''}. "
            "Semantic chunking compares each sentence with the next, so it needs at least "
            "three sentences to draw a curve of distances. Pick a longer sample or paste "
            "more text."
        )
        st.stop()
    if len(spans) > limit:
        return _limit_sentences(text, key, spans, limit)
    return text, key, spans


@dataclass(frozen=True)
class Loaded:
    """What the threshold controls work on: the analysed text and how it was embedded."""

    text: str
    analysis: SemanticAnalysis
    key: str  # text hash | model | buffer size: the cache key of the analysis
    buffer_size: int
    model: str


@st.fragment
def explore(loaded: Loaded) -> None:
    """The method, threshold and size controls with everything they change.

    A fragment: moving the threshold reruns only this part of the page, from the cached
    analysis, without the sidebar or the embedding step.
    """
    top = st.columns([1, 3])
    with top[0]:
        method = st.selectbox("Method", METHODS, key=METHOD_KEY, persist_state=common.PERSIST)
    with top[1]:
        threshold = threshold_control(method, len(loaded.analysis.sentences))
    with st.expander("Size bounds"):
        unit, max_size, min_size = size_controls()
    try:
        result = _rechunk(loaded.key, method, threshold, unit, max_size, min_size, loaded.analysis)
    except ValueError as exc:
        st.error(f"These settings cannot cut the document: {exc}.")
        return
    show_result(loaded, result)


def _limit_sentences(
    text: str, key: str, spans: Sequence[tuple[int, int]], limit: int
) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """Offer to analyse the first ``limit`` sentences; stop until the user agrees."""
    end = spans[limit - 1][1]
    if st.session_state.get(TRUNCATE_KEY) != key:
        st.warning(
            f"This document has {len(spans):,} sentences, more than the {limit:,} this page "
            "embeds (every sentence window is run through the model on this machine's CPU). "
            f"Analyse the first {limit:,} sentences (characters 0–{end:,}), or raise the limit "
            f"with the environment variable {MAX_SENTENCES_ENV}."
        )
        st.button(
            f"Analyse the first {limit:,} sentences",
            key="sem_truncate",
            on_click=_truncate,
            args=(key,),
            type="primary",
        )
        st.stop()
    st.info(
        f"Showing the first {limit:,} of {len(spans):,} sentences ({end / len(text):.0%} of "
        "the document)."
    )
    st.button("Back to the whole document", key="sem_untruncate", on_click=_truncate, args=(None,))
    head = text[:end]
    head_key = common.text_key(head)
    return head, head_key, _spans(head_key, head)


def show_result(loaded: Loaded, result: SemanticResult) -> None:
    """Metrics, the distance curve, the histogram, the chunk table and the text."""
    text, analysis, buffer_size = loaded.text, loaded.analysis, loaded.buffer_size
    if result.auto_reason:
        st.info(f"**auto** chose **{result.method} {result.parameter:g}**: {result.auto_reason}.")
    show_metrics(result, len(analysis.sentences))
    series = "gradient of the distance" if result.method == "gradient" else "distance"
    curve = distance_curve(
        result.scores,
        threshold=result.threshold,
        breakpoints=result.breakpoints,
        merged=result.merged,
        pairs=sentence_pairs(text, analysis.sentences, result),
        series=series,
    )
    st.plotly_chart(curve, key="sem_curve", config={"displaylogo": False})
    st.caption(
        f"Each point compares the window around sentence i with the one around sentence i + 1 "
        f"({buffer_size} sentence(s) on each side): distance = 1 − cosine similarity. A chunk "
        f"ends after sentence i where the {series} is above the dashed cutoff "
        f"({result.method} {result.parameter:g} → {result.threshold:.3f}). Hover over a "
        "breakpoint to read the sentences on either side."
    )
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            _histogram(loaded.key, analysis),
            key="sem_histogram",
            config={"displaylogo": False},
        )
        st.caption(describe_cutoffs(result))
    with right:
        st.markdown("**Chunks**")
        st.dataframe(chunk_frame(result), hide_index=True, height=300, key="sem_table")
        config = sidebar_config(result, buffer_size, loaded.model)
        if config is not None and st.button(
            "Use these settings in the sidebar",
            key="sem_to_sidebar",
            on_click=common.apply_config,
            args=(config,),
            help="Sets the sidebar to the semantic strategy with these settings, so the "
            "Explore and Compare pages show the same chunks.",
        ):
            st.rerun()  # the whole app, so that the sidebar shows them
    show_text(text, result)


main()
