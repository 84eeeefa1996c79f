"""The Embedding map's questions mode: the last evaluation's questions (from the Evaluate
page, :func:`pages.state.shared_lens`) placed on the map of the chunks they searched,
with what each retrieved and missed (:func:`questions_main`). A projection can be saved
and uploaded again.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from chunking import Chunk
from chunking.embedding.models import Embedder, EmbeddingError
from chunking.embedding.projection import (
    MapError,
    Projection,
    projection_from_json,
    projection_to_json,
)
from chunking.evaluation.lens import (
    LensMap,
    QuestionMarks,
    chunk_colours,
    lens_map,
    question_marks,
)
from chunking.output.preview import preview
from chunking.viz.lens import lens_figure, selected_question
from pages import cached, model_choice, state
from pages.upload_limits import app_uploader_mb

#: The Map page's prefix of widget keys (as in :mod:`pages.map_page`).
P = "map."
LENS_CONFIG_KEY = P + "lens_config"
LENS_DOC_KEY = P + "lens_doc"
LENS_COLOUR_KEY = P + "lens_colour"
LENS_DIMS_KEY = P + "lens_dims"
LENS_QUESTION_KEY = P + "lens_question"
LENS_MISS_KEY = P + "lens_miss"
LENS_CHART_KEY = "map_lens_chart"
LENS_UPLOAD_KEY = "map_upload.projection"
LENS_COLOURS = {"retrieved": "Times retrieved", "reason": "Miss reason"}


# ------------------------------------------------------------ questions on the map


@cached.bounded("lens_maps")
def _lens_map(
    key: str,
    dims: int,
    projection_key: str,
    _chunks: tuple[Chunk, ...],
    _questions: tuple[str, ...],
    _embedder: Embedder,
    _projection: Projection | None,
) -> LensMap:
    return lens_map(_chunks, _questions, _embedder, dims, _projection)


def _keep_option(key: str, options: Sequence[object]) -> None:
    """Forget a choice that is no longer offered (another evaluation, document): the
    widget starts again from its default."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def _on_lens_select(asked: Sequence[int]) -> None:
    """A question clicked on the map becomes the selected question."""
    event = st.session_state.get(LENS_CHART_KEY)
    row = selected_question(event.selection.points) if event else None
    if row is not None and row < len(asked):
        st.session_state[LENS_QUESTION_KEY] = asked[row]


def _on_miss_select() -> None:
    st.session_state[LENS_QUESTION_KEY] = st.session_state.get(LENS_MISS_KEY)


def uploaded_projection() -> tuple[Projection | None, str] | None:
    """A projection saved earlier and uploaded again, with its key; None after saying
    why it cannot be read."""
    upload = st.file_uploader(
        "Reload a saved projection (JSON)",
        type=["json"],
        key=LENS_UPLOAD_KEY,
        max_upload_size=app_uploader_mb(),
        help="A projection downloaded below: the same chunks are drawn at the same places. "
        "Projections are seeded, so the same chunks give the same map anyway.",
    )
    if upload is None:
        return None, ""
    raw = upload.getvalue().decode("utf-8", "replace")
    try:
        return projection_from_json(raw), cached.text_key(raw)
    except MapError as exc:
        st.error(f"The projection cannot be used: {exc}")
        return None


def questions_main() -> None:
    """The last evaluation's questions on the map of the chunks they searched."""
    shared = state.shared_lens()
    if shared is None:
        state.no_lens_notice("Drawing the questions on the map")
        return
    usable = [i for i, one in enumerate(shared.lenses) if one.retrieval and shared.models[i]]
    if not usable:
        st.info(
            "The last evaluation retrieved nothing (no embedding model): run one with a "
            "model on the **Evaluate** page."
        )
        return
    cols = st.columns([3, 2, 1, 2])
    _keep_option(LENS_CONFIG_KEY, usable)
    picked = cols[0].selectbox(
        "Configuration",
        usable,
        format_func=shared.labels.__getitem__,
        persist_state=state.PERSIST,
        key=LENS_CONFIG_KEY,
    )
    at = next((i for i in usable if i == picked), usable[0])
    lens = shared.lenses[at]
    documents = [c for c in lens.spans if any(q.corpus_id == c for q in shared.questions)]
    _keep_option(LENS_DOC_KEY, documents)
    cid = str(
        cols[1].selectbox("Document", documents, persist_state=state.PERSIST, key=LENS_DOC_KEY)
        or documents[0]
    )
    dims = cols[2].radio("Dimensions", ("2D", "3D"), persist_state=state.PERSIST, key=LENS_DIMS_KEY)
    by = str(
        cols[3].radio(
            "Colour chunks by",
            list(LENS_COLOURS),
            format_func=LENS_COLOURS.__getitem__,
            persist_state=state.PERSIST,
            key=LENS_COLOUR_KEY,
        )
    )
    embedder = model_choice.load_embedder(str(shared.models[at]))
    if embedder is None:
        return
    reloaded = uploaded_projection()
    if reloaded is None:
        return
    projection, projection_key = reloaded
    asked = [q for q, question in enumerate(shared.questions) if question.corpus_id == cid]
    chunks = tuple(shared.chunks[at][cid])
    texts = tuple(shared.questions[q].text for q in asked)
    key = "|".join((shared.key, shared.labels[at], cid, embedder.name))
    try:
        with st.spinner(f"Placing {len(chunks):,} chunks and {len(texts):,} questions…"):
            placed = _lens_map(
                key, 3 if dims == "3D" else 2, projection_key, chunks, texts, embedder, projection
            )
    except (MapError, EmbeddingError, ValueError) as exc:
        st.error(f"The questions cannot be mapped: {exc}")
        return
    lens_map_view(shared, at, cid, asked, placed, by)


def lens_map_view(
    shared: state.SharedLens,
    at: int,
    cid: str,
    asked: Sequence[int],
    placed: LensMap,
    by: str,
) -> None:
    """The map with the misses beside it, and the selected question's marks below."""
    lens = shared.lenses[at]
    chunks = shared.chunks[at][cid]
    missed = [q for q in asked if lens.question_misses(q)]
    _keep_option(LENS_QUESTION_KEY, [None, *asked])
    _keep_option(LENS_MISS_KEY, missed)
    left, right = st.columns([3, 1])
    with right:
        st.markdown(f"**Misses: {len(missed)} of {len(asked)} questions**")
        if missed:
            st.radio(
                "Misses",
                missed,
                index=None,
                format_func=lambda q: f"{lens.question_reason(q)} · {shared.questions[q].text}",
                persist_state=state.PERSIST,
                key=LENS_MISS_KEY,
                on_change=_on_miss_select,
                label_visibility="collapsed",
            )
        else:
            st.success(f"Every question got all of its gold text in the top {lens.top_k}.")
    with left:
        question = st.selectbox(
            "Question",
            [None, *asked],
            format_func=lambda q: (
                "none (click a diamond)" if q is None else shared.questions[q].text
            ),
            persist_state=state.PERSIST,
            key=LENS_QUESTION_KEY,
        )
        row = asked.index(question) if question is not None else None
        marks = question_marks(lens, question) if question is not None else None
        figure = lens_figure(
            placed.chunk_coords,
            placed.question_coords,
            chunk_colours(lens, cid, by),
            by,
            [" ".join(c.text.split()[:14]) for c in chunks],
            [shared.questions[q].text for q in asked],
            placed.nearest.tolist(),
            marks,
            row,
            title=f"{shared.labels[at]} · {cid}",
        )
        st.plotly_chart(
            figure,
            key=LENS_CHART_KEY,
            on_select=lambda: _on_lens_select(asked),
            selection_mode=("points",),
            config={"displaylogo": False},
        )
    never = lens.never_retrieved_share
    far = sorted(range(len(asked)), key=lambda j: placed.nearest[j])[:3]
    st.caption(
        f"{never:.0%} of the chunks were never retrieved (pale points). Diamonds are questions, "
        "placed on the chunks' map without refitting it; the paler a diamond, the farther its "
        "nearest chunk. Farthest: "
        + "; ".join(f"{shared.questions[asked[j]].text} ({placed.nearest[j]:.2f})" for j in far)
    )
    st.download_button(
        "Download projection (JSON)",
        projection_to_json(placed.projection),
        file_name=f"projection-{cid}.json",
        mime="application/json",
        on_click="ignore",
        key=f"{P}lens_download",
        help="Upload it above to draw these chunks at the same places again.",
    )
    if marks is not None:
        question_details(shared, at, marks)


def question_details(shared: state.SharedLens, at: int, marks: QuestionMarks) -> None:
    """The selected question: why it missed, its gold chunks and its top k."""
    question = shared.questions[marks.question]
    st.markdown(f"**{question.text}**")
    if marks.misses:
        st.markdown("\n".join(f"- {m.describe()}" for m in marks.misses))
    else:
        st.caption(f"All of its gold text was retrieved in the top {shared.lenses[at].top_k}.")
    chunks = shared.chunks[at][marks.corpus_id]
    gold = set(marks.gold_chunks)
    top_k = shared.lenses[at].top_k
    rows = [
        {
            "rank": str(rank),
            "chunk": index,
            "gold": index in gold and cid == marks.corpus_id,
            "text": preview(shared.chunks[at][cid][index].text, 100),
        }
        for cid, index, rank in marks.retrieved
    ]
    # a gold chunk outside the top k: its rank as the miss above says it ("ranked 56")
    ranks = {m.chunk: m.rank for m in marks.misses if m.chunk is not None and m.rank}
    rows += [
        {
            "rank": f"{ranks[i]} (not in the top {top_k})"
            if i in ranks
            else f"not in the top {top_k}",
            "chunk": i,
            "gold": True,
            "text": preview(chunks[i].text, 100),
        }
        for i in marks.gold_chunks
        if i not in {index for cid, index, _ in marks.retrieved if cid == marks.corpus_id}
    ]
    st.dataframe(rows, hide_index=True, width="stretch", key=f"{P}lens_marks")
