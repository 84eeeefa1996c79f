"""Embedding map: every chunk as a point, placed by UMAP so that similar chunks sit
close together.

The sidebar's configuration (A) can be mapped together with up to three others (the
Compare page's configurations or presets): one UMAP is fitted on the union of all their
chunk embeddings, so their points share one space. ``random_state`` is fixed, so the
same chunks always give the same map. Selecting points shows their text and where they
sit in the document. Other pages hand settings over with ``state.hand_over("map", ...)``:
``with`` (preset names), ``colour`` and ``dims``. When there are more chunks than the
page maps, an even sample of each configuration's is drawn, at least one point each
(:func:`chunking.embedding.projection.sample_points`).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st

from chunking import Chunk, Config, get_strategy, strategies
from chunking.embedding.models import ChunkEmbeddings, Embedder, EmbeddingError, embed_chunks
from chunking.embedding.projection import (
    DEFAULT_MIN_DIST,
    DEFAULT_NEIGHBORS,
    RANDOM_STATE,
    Projection,
    array_key,
    is_warm,
    project,
    sample_points,
    warm_up,
)
from chunking.runtime.lru import BoundedLRU, approx_bytes, shared_cache
from chunking.viz.figures import PALETTE
from chunking.viz.render import render_window
from chunking.viz.semantic import (
    COLOUR_MODES,
    MapPoints,
    document_positions,
    embedding_map,
    selected_chunks,
)
from pages import cached, chunk_tables, config_controls, model_choice, param_widgets, sidebar, state
from pages.map_questions import questions_main

P = "map."
DIMS_KEY = P + "dims"
COLOUR_KEY = P + "colour"
WITH_KEY = P + "with"
NEIGHBORS_KEY = P + "n_neighbors"
MIN_DIST_KEY = P + "min_dist"
MODEL_KEY = P + "model"
MODE_KEY = P + "mode"
CHUNKS_MODE = "chunks"
QUESTIONS_MODE = "questions"
MODES = {CHUNKS_MODE: "Chunks of configurations", QUESTIONS_MODE: "Questions with the chunks"}
#: The name under which other pages hand settings to this one (:func:`state.hand_over`).
PAGE = "map"
#: The document key whose chunks the user agreed to sample.
SAMPLE_KEY = "_map_sample"
MAX_POINTS_ENV = "CHUNK_EXPLORER_MAX_MAP_POINTS"
DEFAULT_MAX_POINTS = 10_000
MAX_SHOWN = 12
CONTEXT_CHARS = 300


def _default_size(strategy: str) -> int:
    return int(get_strategy(strategy).param("size").default)


#: Configurations that can always be mapped next to the sidebar's (name: strategy, params).
#: Their sizes are the registry's defaults, which the default model reads whole
#: (tests/test_defaults.py); the semantic one embeds with :func:`model_choice.app_model`.
PRESETS: Mapping[str, tuple[str, Mapping[str, object]]] = {
    "Fixed · 500 chars · overlap 50": ("fixed", {"size": 500, "overlap": 50}),
    f"Recursive · {_default_size('recursive')} chars": ("recursive", {}),
    "Sentence packing · 500 chars": ("sentence", {"size": 500}),
    f"Paragraph packing · {_default_size('paragraph')} chars": ("paragraph", {}),
    "Semantic · percentile 95": ("semantic", {"method": "percentile"}),
}
COLOUR_LABELS = {
    "position": "Position in the document",
    "size": "Size (characters)",
    "configuration": "Configuration",
}


@dataclass(frozen=True)
class Mapped:
    """One configuration on the map: its name, chunks and the chunks drawn."""

    name: str
    config: Config
    chunks: tuple[Chunk, ...]
    shown: tuple[int, ...]  # indices of the chunks drawn (all, or an even sample)


# ---------------------------------------------------------------------- settings


def preset_configs() -> dict[str, Config]:
    """The presets whose strategy exists, as validated configurations."""
    registry = strategies()
    out = {}
    for name, (strategy, params) in PRESETS.items():
        if strategy in registry:
            spec = registry[strategy]
            start = {p.name: param_widgets.param_start(p) for p in spec.params if p.name == "model"}
            try:
                out[f"Preset: {name}"] = Config.create(strategy, **{**start, **params})
            except ValueError:
                continue
    return out


def compare_configs() -> dict[str, Config]:
    """The Compare page's configurations B-D, as its widgets last held them."""
    count = int(st.session_state.get("cmp.count", 0) or 0)
    out = {}
    for letter in config_controls.LETTERS[1:count]:
        config = config_controls.config_from_state(prefix=f"cmp.{letter}.", follow=True)
        if config is not None:
            out[f"Compare {letter}: {config_controls.config_label(config, title=True)}"] = config
    return out


def _initial_settings(options: Sequence[str]) -> None:
    request = state.take_over(PAGE)
    if request is not None:
        wanted = [f"Preset: {name}" for name in request.get("with", ())]
        st.session_state[WITH_KEY] = [w for w in wanted if w in options][:3]
        if request.get("colour") in COLOUR_MODES:
            st.session_state[COLOUR_KEY] = request["colour"]
        if request.get("dims") in ("2D", "3D"):
            st.session_state[DIMS_KEY] = request["dims"]
    st.session_state.setdefault(DIMS_KEY, "2D")
    st.session_state.setdefault(COLOUR_KEY, "position")
    st.session_state.setdefault(NEIGHBORS_KEY, DEFAULT_NEIGHBORS)
    st.session_state.setdefault(MIN_DIST_KEY, DEFAULT_MIN_DIST)
    kept = [w for w in st.session_state.get(WITH_KEY, []) if w in options]
    st.session_state[WITH_KEY] = kept[:3]


# ----------------------------------------------------------------- cached steps


@cached.bounded("chunk_embeddings")
def _chunk_embeddings(
    key: str, config_json: str, model: str, _chunks: tuple[Chunk, ...], _embedder: Embedder
) -> ChunkEmbeddings:
    return embed_chunks(_chunks, _embedder)


def _projected() -> BoundedLRU[tuple, int]:
    """How many times each projection was actually computed (or taken from the maps
    module's LRU) in this process, rather than served by :func:`_projection`'s cache."""
    return shared_cache("projection_counts")


@cached.bounded("projections", copy=True)
def _projection(
    key: str, dims: int, n_neighbors: int, min_dist: float, _vectors: np.ndarray
) -> Projection:
    counts, call = _projected(), (key, dims, n_neighbors, min_dist)
    counts.put(call, counts.get(call, 0) + 1, size=approx_bytes(call))
    return project(_vectors, dims, n_neighbors=n_neighbors, min_dist=min_dist)


def embeddings_for(source: cached.Source, mapped: Mapped, embedder: Embedder) -> ChunkEmbeddings:
    """The chunks' embeddings (cached); the first time, embedded with progress shown."""
    config_json = mapped.config.to_json()
    model_choice.embed_once(
        ("map", source.key, config_json, embedder.name),
        embedder,
        lambda: [c.embedding_text for c in mapped.chunks],
        f"Embedding the {len(mapped.chunks):,} chunks of {mapped.name}",
    )
    return _chunk_embeddings(source.key, config_json, embedder.name, mapped.chunks, embedder)


def projection_for(
    vectors: np.ndarray, dims: int, n_neighbors: int, min_dist: float
) -> tuple[Projection, bool]:
    """The map's coordinates, and whether they came from a cache rather than a new fit;
    with a message while UMAP compiles or runs."""
    if is_warm():
        message = f"Placing {len(vectors):,} chunks with UMAP…"
    else:
        message = (
            "Preparing UMAP: its numba code is compiled once per server process (about 20 s "
            "the first time on this machine; later starts load it from the numba cache "
            "instead). The map appears as soon as it is done…"
        )
    call = (array_key(vectors), dims, n_neighbors, min_dist)
    before = _projected().get(call, 0)
    with st.spinner(message, show_time=True):
        projection = _projection(*call, vectors)
    cached = _projected().get(call, 0) == before or projection.from_cache
    return projection, cached


# ---------------------------------------------------------------------- helpers


def choose_configs(
    first: Config, chosen: Sequence[str], options: Mapping[str, Config]
) -> dict[str, Config]:
    """The sidebar's configuration first, then the chosen ones (no repeats), by name."""
    pairs = [(f"A · {config_controls.config_label(first, title=True)}", first)]
    seen = {first.to_json()}
    for label in chosen:
        config = options[label]
        if config.to_json() in seen:
            continue
        seen.add(config.to_json())
        letter = config_controls.LETTERS[len(pairs)]
        pairs.append((f"{letter} · {label.split(': ', 1)[-1]}", config))
    return dict(pairs)


def chunk_all(source: cached.Source, configs: Mapping[str, Config]) -> list[Mapped]:
    """Chunk the document with every configuration; failures are shown, not raised. A
    strategy that embeds has its model loaded and its texts embedded first, with the
    estimate and progress shown (:func:`model_choice.ready_to_chunk`)."""
    chunked = chunk_tables.chunk_each(source, model_choice.ready_to_chunk(source, configs))
    return [Mapped(n, configs[n], c, tuple(range(len(c)))) for n, c in chunked.items()]


def limit_points(source: cached.Source, mapped: list[Mapped], limit: int) -> list[Mapped]:
    """Offer an even sample when there are more chunks than ``limit``; stop until then."""
    total = sum(len(m.chunks) for m in mapped)
    if total <= limit:
        return mapped
    if st.session_state.get(SAMPLE_KEY) != source.key:
        st.warning(
            f"These configurations make {total:,} chunks, more than the {limit:,} points this "
            "page maps (each chunk is embedded on this machine's CPU). Map an even sample "
            f"of {limit:,} chunks, or raise the limit with {MAX_POINTS_ENV}."
        )
        st.button(
            f"Map an even sample of {limit:,} chunks",
            key="map_sample",
            on_click=state.set_state,
            args=(SAMPLE_KEY, source.key),
            type="primary",
        )
        st.stop()
    shown = sample_points([len(m.chunks) for m in mapped], limit)
    sampled = [
        Mapped(m.name, m.config, m.chunks, kept) for m, kept in zip(mapped, shown, strict=True)
    ]
    each = "; ".join(f"{m.name}: {len(m.shown):,} of {len(m.chunks):,}" for m in sampled)
    st.info(
        f"Showing an even sample of about {limit:,} of the {total:,} chunks ({each}); every "
        "configuration keeps at least one point."
    )
    unsample = (SAMPLE_KEY, None)
    st.button("Map every chunk", key="map_unsample", on_click=state.set_state, args=unsample)
    return sampled


def map_points(coords: np.ndarray, mapped: Sequence[Mapped], length: int) -> MapPoints:
    """The figure's points, configuration by configuration, in drawing order."""
    group, chunk, position, size, preview = [], [], [], [], []
    for g, m in enumerate(mapped):
        for i in m.shown:
            c = m.chunks[i]
            group.append(g)
            chunk.append(c.index)
            position.append(c.start / max(1, length))
            size.append(c.end - c.start)
            preview.append(" ".join(c.text.split()[:14]))
    return MapPoints(coords, [m.name for m in mapped], group, chunk, position, size, preview)


# ---------------------------------------------------------------------- sections


def data_controls(options: Sequence[str]) -> tuple[list[str], str]:
    """The configurations mapped with the sidebar's and the model: what gets embedded."""
    left, right = st.columns([3, 1])
    chosen = left.multiselect(
        "Map together with (up to 3)",
        list(options),
        key=WITH_KEY,
        max_selections=3,
        persist_state=state.PERSIST,
        help="The Compare page's configurations and a few presets. All are projected "
        "together: one UMAP fitted on every configuration's chunk embeddings.",
    )
    with right:
        model = model_choice.model_select(MODEL_KEY)
    return chosen, model


def view_controls() -> tuple[int, str, int, float]:
    """Dimensions, colour and UMAP's parameters: what only changes the picture."""
    top = st.columns([1, 3])
    dims = top[0].radio("Dimensions", ("2D", "3D"), key=DIMS_KEY, persist_state=state.PERSIST)
    colour = top[1].radio(
        "Colour by",
        COLOUR_MODES,
        key=COLOUR_KEY,
        format_func=COLOUR_LABELS.get,
        horizontal=True,
        persist_state=state.PERSIST,
    )
    with st.expander("UMAP settings"):
        cols = st.columns(2)
        n_neighbors = cols[0].slider(
            "Neighbours",
            2,
            50,
            key=NEIGHBORS_KEY,
            persist_state=state.PERSIST,
            help="How many neighbours shape each point's place: small values keep local "
            "detail, large ones the overall layout.",
        )
        min_dist = cols[1].slider(
            "Minimum distance",
            0.0,
            0.99,
            step=0.01,
            key=MIN_DIST_KEY,
            persist_state=state.PERSIST,
            help="How tightly UMAP packs similar points together.",
        )
        st.caption(f"UMAP uses cosine distance and a fixed seed ({RANDOM_STATE}).")
    return 3 if dims == "3D" else 2, str(colour), int(n_neighbors), float(min_dist)


def show_selection(text: str, mapped: Sequence[Mapped], chosen: Sequence[tuple[int, int]]) -> None:
    """The selected chunks: where they sit in the document and their text in context."""
    st.subheader(f"Selected chunks ({len(chosen)})")
    if len(chosen) > MAX_SHOWN:
        st.caption(f"Showing the first {MAX_SHOWN} of {len(chosen)}.")
    shown = chosen[:MAX_SHOWN]
    spans = []
    for g, i in shown:
        c = mapped[g].chunks[i]
        spans.append((f"{mapped[g].name.split(' · ')[0]} · chunk {c.index}", c.start, c.end))
    colours = [PALETTE[g % len(PALETTE)] for g, _ in shown]
    st.plotly_chart(
        document_positions(spans, len(text), colours=colours),
        key="map_positions",
        config={"displaylogo": False},
    )
    for k, ((g, i), (label, start, end)) in enumerate(zip(shown, spans, strict=True)):
        chunk = mapped[g].chunks[i]
        share = f"{start / max(1, len(text)):.0%}–{end / max(1, len(text)):.0%}"
        title = f"{label} · characters {start:,}–{end:,} ({share} of the document)"
        with st.expander(title, expanded=k == 0 or len(shown) <= 3):
            lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
            st.html(render_window(text, [chunk], lo, hi))
            st.caption(f"The chunk with {CONTEXT_CHARS} characters of context on each side.")


def main() -> None:
    warm_up()
    st.title("Embedding map")
    mode = st.radio(
        "Show",
        list(MODES),
        format_func=MODES.__getitem__,
        horizontal=True,
        persist_state=state.PERSIST,
        key=MODE_KEY,
        help="Questions with the chunks: the last evaluation's questions (Evaluate page) "
        "placed on its chunks' map, with what each retrieved and missed.",
    )
    if mode == QUESTIONS_MODE:
        questions_main()
        return
    source = sidebar.require_source()
    first = sidebar.require_config()
    st.caption(
        f"{source.document.describe()} — each point is a chunk; chunks with "
        "similar meaning land close together. A is the sidebar's configuration."
    )
    options = {**compare_configs(), **preset_configs()}
    _initial_settings(list(options))
    chosen, model = data_controls(list(options))
    limit = state.env_limit(MAX_POINTS_ENV, DEFAULT_MAX_POINTS, minimum=10)
    started = time.perf_counter()  # the view's time: chunking, model, embedding
    mapped = chunk_all(source, choose_configs(first, chosen, options))
    if not mapped:
        st.warning("No configuration produced chunks to map. Try another strategy.")
        st.stop()
    mapped = limit_points(source, mapped, limit)
    model = first_view(source, mapped, model)
    embedder = model_choice.load_embedder(model, model_key=MODEL_KEY)
    if embedder is None:
        st.stop()
    map_view(embed_all(source, mapped, embedder, started))


def first_view(source: cached.Source, mapped: Sequence[Mapped], chosen: str) -> str:
    """The model to map with: the static preview first for many chunks (see
    :func:`model_choice.first_view_model`), with the button for the full model."""
    texts = [c.embedding_text for m in mapped for c in m.chunks]  # every chunk is embedded
    configs = [m.config.to_json() for m in mapped]

    def marker(name: str) -> tuple:
        return ("map", source.key, configs[0], name)

    model, wait = model_choice.first_view_model(
        chosen, source.key, texts, f"{len(texts):,} chunks", marker
    )
    if wait is not None:
        from dataclasses import replace

        from chunking.embedding.models import estimate_map_seconds

        points = sum(len(m.shown) for m in mapped)  # the map's own work after embedding
        wait = replace(wait, then="the map", then_seconds=estimate_map_seconds(points))
        model_choice.preview_notice(chosen, source.key, wait, "map_full_model")
    return model


def embed_all(
    source: cached.Source, mapped: Sequence[Mapped], embedder: Embedder, started: float
) -> Embedded:
    """Every drawn chunk's vector, configuration by configuration; a model failure stops
    the page with what to do. ``started``: when the view began (its chunking), for the
    seconds it took (:func:`view_seconds`)."""
    vectors, truncated = [], 0
    for m in mapped:
        try:
            embedded = embeddings_for(source, m, embedder)
        except EmbeddingError as exc:
            model_choice.model_error(
                f"The model could not embed the chunks of {m.name}: {exc}", MODEL_KEY
            )
            st.stop()
        vectors.append(embedded.vectors[list(m.shown)])
        truncated += sum(1 for i in m.shown if i in embedded.flags)
    key = (source.key, tuple((m.config.to_json(), m.shown) for m in mapped), embedder.name)
    seconds = view_seconds(key, time.perf_counter() - started)
    return Embedded(
        source.document.text, tuple(mapped), np.vstack(vectors), truncated, embedder, seconds
    )


def view_seconds(key: Hashable, measured: float) -> float:
    """How long the view ``key`` (document, configurations, points, model) took up to
    its vectors when it was first computed in this process: ``measured`` the first
    time, then what was measured then (a later run takes them from the caches)."""
    seen = shared_cache("view_seconds")
    first: float | None = seen.get(key)
    if first is None:
        seen.put(key, measured, size=approx_bytes(key))
        return measured
    return first


@dataclass(frozen=True, eq=False)
class Embedded:
    """What the map is drawn from: the chunks of every configuration and their vectors."""

    text: str
    mapped: tuple[Mapped, ...]
    vectors: np.ndarray  # one row per drawn chunk, configuration by configuration
    truncated: int  # drawn chunks longer than the model reads
    embedder: Embedder
    #: Seconds to the vectors when the view was first computed: chunking, the model's
    #: load, embedding (the projection's are its own).
    seconds: float


@st.fragment
def map_view(data: Embedded) -> None:
    """The projection, the map and the selection. A fragment: changing the view or
    selecting points reruns only this part of the page (no chunking, no embedding)."""
    dims, colour, n_neighbors, min_dist = view_controls()
    projection, cached = projection_for(data.vectors, dims, n_neighbors, min_dist)
    if projection.reason:
        st.info(f"The map uses PCA: {projection.reason}.")
    points = map_points(projection.coords, data.mapped, len(data.text))
    show_map(points, data, projection, cached, colour)


def show_map(
    points: MapPoints, data: Embedded, projection: Projection, cached: bool, colour: str
) -> None:
    mapped, embedder, text = data.mapped, data.embedder, data.text
    cols = st.columns(4)
    cols[0].metric("Points", f"{len(points.coords):,}")
    cols[1].metric("Configurations", len(mapped))
    cols[2].metric("Projection", f"{projection.method.upper()} {projection.dims}D")
    cols[3].metric(
        "Computed in",
        f"{data.seconds + projection.seconds:.2f} s",
        delta="this view: from the cache" if cached else "this view: computed now",
        delta_color="off",
        delta_arrow="off",
        help=f"How long this view took when it was computed: {data.seconds:.2f} s to chunk "
        f"the document, load {embedder.name} and embed the chunks, {projection.seconds:.2f} "
        "s to project them. The same chunks with the same settings are not embedded or "
        "projected again.",
    )
    figure = embedding_map(points, colour_by=colour, title=f"Chunk embeddings ({embedder.label})")
    if projection.dims == 2:
        # Streamlit makes a click select a point only when the chart is not in lasso or
        # box mode; both stay one click away in the chart's toolbar.
        figure.update_layout(dragmode="zoom")
    event = st.plotly_chart(
        figure,
        key="map_chart",
        on_select="rerun",
        selection_mode=("points", "box", "lasso"),
        config={"displaylogo": False},
    )
    notes = [
        f"Model: **{embedder.label}**. Hover a point to read the chunk's first words; "
        "click one (2D) to read its chunk below, or pick Lasso or Box select in the chart's "
        "toolbar to select several."
    ]
    if data.truncated:
        notes.append(
            f"{data.truncated:,} chunks are longer than {embedder.name} reads "
            f"({embedder.token_limit} word pieces): their points stand for their beginning only."
        )
    st.caption(" ".join(notes))
    by_trace = [[m.chunks[i].index for i in m.shown] for m in mapped]
    chosen = selected_chunks(event.selection.points, by_trace) if event else []
    if chosen:
        show_selection(text, mapped, chosen)


if __name__ == "__main__":  # Streamlit runs a page as __main__; importing it draws nothing
    main()
