"""Semantic breakpoints: where the meaning of consecutive sentences changes.

The document's sentence windows are embedded once per (text, model, buffer size) and
the analysis is kept with ``st.cache_resource``; the method, threshold and size bounds
re-chunk from it (``SemanticAnalysis.chunk``) without embedding again. The page has its
own semantic settings (keys ``sem.*``, kept for the whole session), drawn from the
``semantic`` strategy's parameters in the registry (defaults, ranges, help); other pages
hand settings over with ``state.hand_over("semantic", ...)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from chunking import Config, get_strategy, strategies
from chunking.embedding.models import Embedder, EmbeddingError, ModelWindow, model_window
from chunking.output.preview import preview
from chunking.runtime.limits import CACHE_BOUNDS
from chunking.splitters.semantic.analysis import (
    SemanticAnalysis,
    SemanticResult,
    analysis_sentences,
    analyze,
    window_texts,
)
from chunking.splitters.semantic.methods import (
    DEFAULT_THRESHOLDS,
    METHOD_DEFAULT,
    THRESHOLD_RANGES,
    default_count,
)
from chunking.viz.semantic import distance_curve, distance_histogram
from pages import (
    cached,
    config_controls,
    model_choice,
    param_widgets,
    sidebar,
    state,
    text_view,
)

STRATEGY = "semantic"
P = "sem."
METHOD_KEY = P + "method"
MODEL_KEY = P + "model"
PAGE_KEY = P + "page"
#: The text key of the document the user agreed to analyse only the start of.
TRUNCATE_KEY = "_sem_truncate"
MAX_SENTENCES_ENV = "CHUNK_EXPLORER_MAX_SENTENCES"
DEFAULT_MAX_SENTENCES = 5_000
LABELS = {
    "method": "Method",
    "buffer_size": "Buffer size (sentences on each side)",
    "model": "Model",
    "unit": "Unit",
    "max_size": "Max size",
    "min_size": "Min size",
}
#: Steps across a bounded threshold's range (the core's ``THRESHOLD_RANGES``): 0.5 for
#: a percentile, 0.01 for a similarity. std and iqr take any k (a number input); count
#: takes 1 to the number of sentences.
SLIDER_STEPS = 200
THRESHOLD_LABELS: Mapping[str, str] = {
    "percentile": "Percentile of the distances",
    "similarity": "Lowest similarity kept inside a chunk",
    "std": "k in mean + k·std",
    "iqr": "k in mean + k·IQR",
    "gradient": "Percentile of the distances' gradient",
    "count": "Number of chunks",
}


def widget_key(param: str) -> str:
    """Session-state key of this page's widget for a ``semantic`` parameter."""
    return P + param


def threshold_key(method: str) -> str:
    """Session-state key of a method's threshold slider (each method keeps its own)."""
    return f"{P}threshold.{method}"


# --------------------------------------------------------------------- settings


def _apply(params: Mapping[str, Any]) -> None:
    """Set this page's widgets from semantic parameters (registry names and values)."""
    param_widgets.apply_params(
        STRATEGY, {n: v for n, v in params.items() if n != "threshold"}, widget_key
    )
    method, threshold = params.get("method"), params.get("threshold")
    if not isinstance(method, str) or threshold is None or float(threshold) == METHOD_DEFAULT:
        return
    if method == "count":
        st.session_state[threshold_key(method)] = int(threshold)
    elif method in DEFAULT_THRESHOLDS:
        st.session_state[threshold_key(method)] = float(threshold)


def _initial_settings() -> None:
    """Apply a hand-over from another page, or on a first visit the sidebar's semantic
    settings. Unset widgets start at the registry's defaults when drawn."""
    request = state.take_over(STRATEGY)
    if request is not None:
        _apply(request)
    elif METHOD_KEY not in st.session_state and st.session_state.get(
        config_controls.STRATEGY_KEY
    ) == (STRATEGY):
        _apply(config_controls.read_params(get_strategy(STRATEGY)))


# --------------------------------------------------------------- cached analysis


def _spans(text: str) -> tuple[tuple[int, int], ...]:
    """The sentences of ``text``, the analysis's own: segmented once per process and
    shared with it, the report and the sentence strategy (``document_sentences``)."""
    return analysis_sentences(text)


@cached.bounded("semantic_analyses")
def _analysis(
    key: str, model: str, buffer_size: int, _text: str, _embedder: Embedder
) -> SemanticAnalysis:
    return analyze(_text, embedder=_embedder, buffer_size=buffer_size)


@st.cache_resource(show_spinner=False, max_entries=CACHE_BOUNDS["histograms"].max_entries)
def _histogram(key: str, _analysis: SemanticAnalysis) -> go.Figure:
    """The distances with each method's default cutoff. It does not change with the
    threshold, so the browser keeps it as it is while the threshold moves."""
    cutoffs = {m: v for m, v in _analysis.thresholds().items() if m != "gradient"}
    return distance_histogram(_analysis.distances, cutoffs=cutoffs)


@cached.bounded("semantic_results")
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


def load_analysis(
    text: str, key: str, embedder: Embedder, buffer_size: int, spans: Sequence[tuple[int, int]]
) -> SemanticAnalysis:
    """The cached analysis; the first time, the windows are embedded with progress shown."""
    model_choice.embed_once(
        model_choice.semantic_marker(key, embedder.name, buffer_size),
        embedder,
        lambda: window_texts(text, spans, buffer_size),
        f"Embedding {len(spans):,} sentence windows with {embedder.name} (first time only)",
    )
    return _analysis(key, embedder.name, buffer_size, text, embedder)


# ------------------------------------------------------------------ controls


def threshold_control(method: str, sentences: int) -> float | None:
    """The threshold widget of ``method`` (None for auto, which chooses its own)."""
    if method == "auto":
        st.caption("**auto** picks the method and threshold from the distances' shape.")
        return None
    key = threshold_key(method)
    label = THRESHOLD_LABELS[method]
    if method == "count":
        top = max(2, sentences)
        st.session_state.setdefault(key, min(default_count(sentences), top))
        if int(st.session_state[key]) > top:  # the sentence count changes with the document
            st.info(f"This document has {sentences} sentences: at most {top} chunks.")
        state.clamp_state(key, 1, top)
        count = st.slider(
            label,
            1,
            top,
            step=1,
            key=key,
            persist_state=state.PERSIST,
            help="Cut at the count - 1 largest distances.",
        )
        return float(count)
    st.session_state.setdefault(key, DEFAULT_THRESHOLDS[method])
    help_text = (
        f"The default is {DEFAULT_THRESHOLDS[method]:g}. The dashed line on the curve moves "
        "with it; nothing is embedded again."
    )
    if method not in THRESHOLD_RANGES:
        value = st.number_input(
            label, step=0.05, key=key, persist_state=state.PERSIST, help=help_text
        )
        return float(value)
    lo, hi = THRESHOLD_RANGES[method]
    step = (hi - lo) / SLIDER_STEPS
    if not lo <= float(st.session_state[key]) <= hi:
        st.warning(
            f"The {method} threshold {float(st.session_state[key]):g} is outside "
            f"{lo:g}–{hi:g}; it was set back to the default, {DEFAULT_THRESHOLDS[method]:g}."
        )
        st.session_state[key] = DEFAULT_THRESHOLDS[method]
    value = st.slider(
        label, lo, hi, step=step, key=key, persist_state=state.PERSIST, help=help_text
    )
    return float(value)


def window_controls() -> tuple[int, str]:
    """Buffer size and model: the settings that need new embeddings."""
    left, right = st.columns(2)
    with left:
        buffer_size = param_widgets.param_controls(
            STRATEGY, ("buffer_size",), widget_key, labels=LABELS
        )
    with right:
        model = model_choice.model_select(MODEL_KEY, LABELS["model"])
    return int(buffer_size["buffer_size"]), model


def fit_size_defaults(window: ModelWindow) -> None:
    """Start the size bounds at the model's window, unless they were set already (by
    the user, the sidebar or another page): no chunk is then truncated by the model."""
    st.session_state.setdefault(widget_key("unit"), window.unit)
    st.session_state.setdefault(widget_key("max_size"), window.limit)


def size_controls(model: str, window: ModelWindow) -> tuple[str, int, int]:
    """Unit and size bounds: applied after the method's cut."""
    values = param_widgets.param_controls(
        STRATEGY, ("unit", "max_size", "min_size"), widget_key, labels=LABELS, columns=3
    )
    unit, max_size = str(values["unit"]), int(values["max_size"])
    st.caption(
        f"{model} reads the first {window.limit} of its word pieces of a chunk "
        f"(unit {param_widgets.option_label(window.unit)}); the default max size is that "
        "window, so "
        "the model sees every chunk whole."
    )
    if unit == window.unit and max_size > window.limit:
        st.warning(
            f"Chunks may be up to {max_size} word pieces: {model} reads only the "
            f"first {window.limit}, and embeds the rest of a longer chunk as if it were not "
            "there."
        )
    return unit, max_size, int(values["min_size"])


def sidebar_config(result: SemanticResult, buffer_size: int, model: str) -> Config | None:
    """These settings as the sidebar's semantic configuration, when the strategy exists."""
    if STRATEGY not in strategies():
        return None
    threshold = METHOD_DEFAULT if st.session_state[METHOD_KEY] == "auto" else result.parameter
    try:
        return Config.create(
            STRATEGY,
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
                "text": preview(c.text),
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
    text_view.paged_text(text, result.chunks, PAGE_KEY, unit=result.unit)


# ---------------------------------------------------------------------- page


def main() -> None:
    source = sidebar.require_source()
    _initial_settings()
    st.title("Semantic breakpoints")
    st.caption(
        f"{source.document.describe()} — each sentence is embedded with its "
        "neighbours; a chunk ends where consecutive windows are least similar."
    )
    text, key, spans = sentences_to_analyse(source.document.text, source.key)
    with st.expander("Window and model (changing these embeds the document again)"):
        buffer_size, chosen = window_controls()
    model, wait = model_choice.first_view_model(
        chosen,
        key,
        window_texts(text, spans, buffer_size),
        f"{len(spans):,} sentence windows",
        lambda name: model_choice.semantic_marker(key, name, buffer_size),
    )
    if wait is not None:
        model_choice.preview_notice(chosen, key, wait, "sem_full_model")
    embedder = model_choice.load_embedder(model, model_key=MODEL_KEY)
    if embedder is None:
        st.stop()
    try:
        analysis = load_analysis(text, key, embedder, buffer_size, spans)
    except EmbeddingError as exc:
        model_choice.model_error(f"The model could not embed this document: {exc}", MODEL_KEY)
        st.stop()
    window = model_window(chosen, embedder)
    fit_size_defaults(window)
    loaded_key = f"{key}|{embedder.name}|{buffer_size}"
    explore(Loaded(text, analysis, loaded_key, buffer_size, model, chosen, embedder.label, window))


def sentences_to_analyse(text: str, key: str) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """The text (whole, or its start within the sentence limit), its key and sentences;
    too few sentences, or too many without the user's consent, stop the page."""
    spans = _spans(text)
    limit = state.env_limit(MAX_SENTENCES_ENV, DEFAULT_MAX_SENTENCES, minimum=3)
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
    model: str  # the model used, as named
    chosen: str  # the model chosen in the model box (the preview stands in for it)
    label: str  # the model used, as shown next to the figures
    window: ModelWindow  # what the chosen model reads


@st.fragment
def explore(loaded: Loaded) -> None:
    """The method, threshold and size controls with everything they change.

    A fragment: moving the threshold reruns only this part of the page, from the cached
    analysis, without the sidebar or the embedding step.
    """
    top = st.columns([1, 3])
    with top[0]:
        method = param_widgets.param_controls(STRATEGY, ("method",), widget_key, labels=LABELS)[
            "method"
        ]
    with top[1]:
        threshold = threshold_control(method, len(loaded.analysis.sentences))
    with st.expander("Size bounds"):
        unit, max_size, min_size = size_controls(loaded.chosen, loaded.window)
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
            on_click=state.set_state,
            args=(TRUNCATE_KEY, key),
            type="primary",
        )
        st.stop()
    st.info(
        f"Showing the first {limit:,} of {len(spans):,} sentences ({end / len(text):.0%} of "
        "the document)."
    )
    st.button(
        "Back to the whole document",
        key="sem_untruncate",
        on_click=state.set_state,
        args=(TRUNCATE_KEY, None),
    )
    head = text[:end]
    head_key = cached.text_key(head)
    return head, head_key, _spans(head)


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
        f"breakpoint to read the sentences on either side. Model: **{loaded.label}**."
    )
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            _histogram(loaded.key, analysis),
            key="sem_histogram",
            config={"displaylogo": False},
        )
        st.caption(f"{describe_cutoffs(result)} Model: **{loaded.label}**.")
    with right:
        st.markdown("**Chunks**")
        st.dataframe(chunk_frame(result), hide_index=True, height=300, key="sem_table")
        config = sidebar_config(result, buffer_size, loaded.model)
        if config is not None and st.button(
            "Use these settings in the sidebar",
            key="sem_to_sidebar",
            on_click=config_controls.apply_config,
            args=(config,),
            help="Sets the sidebar to the semantic strategy with these settings, so the "
            "Explore and Compare pages show the same chunks.",
        ):
            st.rerun()  # the whole app, so that the sidebar shows them
    show_text(text, result)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
