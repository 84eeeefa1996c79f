"""Boundaries drawn by hand: the "Edit boundaries" editor and the scores against the gold
on Explore, the ranking on Compare.

The editor is a bidirectional Streamlit component written as one static HTML file
(``pages/components/boundary_editor/index.html``: no build step, no network); it puts the
document on the page as text nodes only. The gold segmentation of each document lives in
the session (keyed by the text's hash), so Explore, Compare and the tour share it; it is
saved and loaded as a gold file (:mod:`chunking.evaluation.gold`) and scored with
:mod:`chunking.evaluation.boundaries`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from chunking import Chunk, Config
from chunking.engine.spans import document_sentences
from chunking.evaluation.agreement import human_band
from chunking.evaluation.boundaries import BoundaryScores, chunk_starts, score_boundaries
from chunking.evaluation.gold import DEFAULT_MARKER, Gold, GoldError, gold_from_marked, load_gold
from chunking.viz.boundaries import METRIC_NAMES, agreement_ranking, marked_text_html
from pages import cached, config_controls, state
from pages.upload_limits import app_uploader_mb

ROOT = Path(__file__).resolve().parent.parent
COMPONENT_DIR = Path(__file__).resolve().parent / "components" / "boundary_editor"
#: Hand-made gold segmentations of the sample documents: ``<sample stem>.gold.json``.
SAMPLE_GOLD_DIR = ROOT / "sample_gold"
#: The editor draws every character; beyond this the text is too long to click through.
EDITOR_MAX_CHARS = 400_000
MARKED_VIEW_MAX_CHARS = 400_000

GOLD_KEY = "boundaries.gold"
SEED_KEY = "boundaries.seed"
EDITOR_KEY = "boundaries.editor"
SNAP_KEY = "boundaries.snap"
NOTE_KEY = "boundaries.note"
UPLOAD_KEY = "boundaries.upload"
LOADED_KEY = "boundaries.loaded_upload"
TOLERANCE_KEY = "boundaries.tolerance"
TOLERANCE_UNIT_KEY = "boundaries.tolerance_unit"
K_KEY = "boundaries.k"
RANK_KEY = "boundaries.rank_by"
#: The page name tour stops hand settings to (:func:`pages.state.hand_over`).
HANDOVER = "boundaries"
SNAPS = {"word": "word", "sentence": "sentence", "line": "line"}
TOLERANCE_UNITS = {"chars": "characters", "sentences": "sentences"}
RANKINGS = ("b", "f1", "pk", "windowdiff")

_editor = components.declare_component("boundary_editor", path=str(COMPONENT_DIR))


@dataclass(frozen=True)
class Drawn:
    """The gold segmentation of one document in the session."""

    boundaries: tuple[int, ...]
    note: str
    origin: str  # "drawn", "chunks", "sample", or the file it was loaded from


# ---------------------------------------------------------------- session state


def _golds() -> dict[str, Drawn]:
    return st.session_state.setdefault(GOLD_KEY, {})


def drawn(source: cached.Source) -> Drawn | None:
    """The gold segmentation drawn or loaded for this document, if any."""
    return _golds().get(source.key)


def set_drawn(source: cached.Source, boundaries: Sequence[int], note: str, origin: str) -> None:
    """Make ``boundaries`` the document's gold and restart the editor from them."""
    clean = tuple(sorted({int(b) for b in boundaries if 0 < int(b) < len(source.document.text)}))
    _golds()[source.key] = Drawn(clean, note, origin)
    st.session_state[NOTE_KEY] = note
    seeds = st.session_state.setdefault(SEED_KEY, {})
    seeds[source.key] = int(seeds.get(source.key, 0)) + 1


def _seed(source: cached.Source) -> int:
    return int(st.session_state.setdefault(SEED_KEY, {}).get(source.key, 0))


def gold_of(source: cached.Source) -> Gold | None:
    """The document's gold segmentation as a gold file would hold it."""
    found = drawn(source)
    if found is None:
        return None
    return Gold.create(
        source.document.text, source.document.name, found.boundaries, note=found.note
    )


def sample_gold_path(name: str) -> Path:
    return SAMPLE_GOLD_DIR / f"{Path(name).stem}.gold.json"


def sample_gold(source: cached.Source) -> Gold | None:
    """The bundled hand-made gold of this sample document, when there is one."""
    path = sample_gold_path(source.document.name)
    if not path.is_file():
        return None
    try:
        return load_gold(path.read_bytes(), source.document.text, source=path.name)
    except GoldError:
        return None  # not this text (an edited or other document of the same name)


def load_sample_gold(source: cached.Source) -> None:
    """Button callback: the bundled gold of this sample becomes the document's gold."""
    gold = sample_gold(source)
    if gold is not None:
        set_drawn(source, gold.boundaries, gold.note, "sample")


def start_from_chunks(source: cached.Source, chunks: Sequence[Chunk]) -> None:
    """Button callback: the chunk starts become the boundaries to edit."""
    set_drawn(source, chunk_starts(chunks, len(source.document.text)), "", "chunks")


def start_from_none(source: cached.Source) -> None:
    """Button callback: no boundary at all."""
    set_drawn(source, [], "", "drawn")


def take_tour_request(source: cached.Source) -> None:
    """A tour stop's request (load the sample gold), applied once."""
    request = state.take_over(HANDOVER)
    if request and request.get("load") == "sample":
        load_sample_gold(source)


# ----------------------------------------------------------------- the editor


def _load_upload(source: cached.Source) -> None:
    """A gold file (JSON) or a marked text file from the uploader, once per file."""
    upload = st.session_state.get(UPLOAD_KEY)
    if upload is None or st.session_state.get(LOADED_KEY) == upload.file_id:
        return
    st.session_state[LOADED_KEY] = upload.file_id
    data = upload.getvalue()
    text = source.document.text
    try:
        if upload.name.lower().endswith(".json"):
            gold = load_gold(data, text, source=upload.name, name=source.document.name)
        else:
            marked = data.decode("utf-8-sig")
            _, gold = gold_from_marked(
                marked, source.document.name, marker=DEFAULT_MARKER, source=upload.name
            )
            gold.check(text, source.document.name)
    except (GoldError, UnicodeDecodeError) as exc:
        st.session_state[f"{LOADED_KEY}.error"] = f"{upload.name}: {exc}"
        return
    st.session_state.pop(f"{LOADED_KEY}.error", None)
    set_drawn(source, gold.boundaries, gold.note, upload.name)


@cached.bounded("sentence_starts")
def _sentence_starts(key: str, _text: str) -> list[int]:
    return [start for start, _ in document_sentences(_text)]


def segment_sizes(length: int, boundaries: Sequence[int]) -> list[int]:
    """The length in characters of each segment the boundaries make."""
    return [b - a for a, b in pairwise([0, *boundaries, length])]


def editor_section(source: cached.Source, chunks: Sequence[Chunk]) -> Drawn | None:
    """Start from the chunks or from none, click to add and remove boundaries, snap,
    undo; save and load the gold file. Returns the document's gold after the edit."""
    text = source.document.text
    sample = sample_gold(source)
    buttons = st.columns(3 if sample is not None else 2)
    buttons[0].button(
        "Start from these chunks",
        key="boundaries.from_chunks",
        on_click=start_from_chunks,
        args=(source, chunks),
        help="One boundary where each chunk of the current configuration starts.",
        icon=":material/content_cut:",
    )
    buttons[1].button(
        "Start from none",
        key="boundaries.from_none",
        on_click=start_from_none,
        args=(source,),
        help="An empty text: add every boundary yourself.",
        icon=":material/edit:",
    )
    if sample is not None:
        buttons[2].button(
            "Use the sample gold",
            key="boundaries.from_sample",
            on_click=load_sample_gold,
            args=(source,),
            help=f"The hand-made gold segmentation bundled with {source.document.name}.",
            icon=":material/star:",
        )
    found = drawn(source)
    if found is None:
        st.caption("Choose where to start: the editor then shows the text with its boundaries.")
        return None
    snap = st.radio(
        "Snap a click to the nearest",
        list(SNAPS),
        format_func=lambda s: f"{SNAPS[s]} start",
        horizontal=True,
        persist_state=state.PERSIST,
        key=SNAP_KEY,
    )
    st.caption(
        "Click between two words to add a boundary (✂); click a ✂ to remove it. Undo takes "
        "back the last change. The count and the segment sizes follow every click."
    )
    if len(text) > EDITOR_MAX_CHARS:
        st.info(
            f"The editor shows documents of up to {EDITOR_MAX_CHARS:,} characters; this one "
            f"has {len(text):,}. Load a gold file instead (a marked text works too)."
        )
    else:
        value = _editor(
            text=text,
            boundaries=list(found.boundaries),
            seed=f"{source.key}:{_seed(source)}",
            snap=snap or "word",
            sentence_starts=_sentence_starts(source.key, text),
            height=460,
            key=f"{EDITOR_KEY}.{source.key}",
            default=None,
        )
        if isinstance(value, Mapping) and value.get("seed") == f"{source.key}:{_seed(source)}":
            edited = tuple(int(b) for b in value.get("boundaries", ()))
            if edited != found.boundaries:
                found = Drawn(edited, found.note, "drawn")
                _golds()[source.key] = found
    sizes = segment_sizes(len(text), found.boundaries)
    ordered = sorted(sizes)
    st.markdown(
        f"**{len(found.boundaries):,} boundaries**, {len(sizes):,} segments of "
        f"{ordered[0]:,}–{ordered[-1]:,} characters (median {ordered[(len(ordered) - 1) // 2]:,})"
        + (f" · from {found.origin}" if found.origin not in ("drawn",) else "")
    )
    save_load_section(source, found)
    return drawn(source)


def save_load_section(source: cached.Source, found: Drawn) -> None:
    """The note, the download of the gold file and the uploader of one."""
    st.session_state.setdefault(NOTE_KEY, found.note)
    cols = st.columns([3, 2])
    note = cols[0].text_input(
        "Note saved with the boundaries",
        persist_state=state.PERSIST,
        key=NOTE_KEY,
        placeholder="who drew them, and by what rule",
    )
    gold = Gold.create(
        source.document.text, source.document.name, found.boundaries, note=note or ""
    )
    stem = source.document.name.rsplit(".", 1)[0]
    cols[1].download_button(
        "Save the gold (JSON)",
        data=gold.to_json(),
        file_name=f"{stem}.gold.json",
        mime="application/json",
        key="boundaries.save",
        icon=":material/download:",
    )
    st.file_uploader(
        "Load a gold file (JSON) or a text with a <<<BOUNDARY>>> line between segments",
        type=["json", "txt", "md"],
        key=UPLOAD_KEY,
        max_upload_size=app_uploader_mb(),
        help="A gold file is refused when it was drawn on another text (its sha256 differs).",
    )


# ------------------------------------------------------------------- the scores


def tolerance_controls() -> tuple[int, str, int | None]:
    """Tolerance, its unit and the window k (None: half the mean gold segment)."""
    st.session_state.setdefault(TOLERANCE_KEY, 0)
    st.session_state.setdefault(K_KEY, 0)
    cols = st.columns([1, 1, 1])
    tolerance = cols[0].number_input(
        "Tolerance",
        min_value=0,
        max_value=10_000,
        step=1,
        persist_state=state.PERSIST,
        key=TOLERANCE_KEY,
        help="How far a chunk start may be from a gold boundary and still match "
        "(precision, recall, F1).",
    )
    unit = cols[1].radio(
        "in",
        list(TOLERANCE_UNITS),
        format_func=TOLERANCE_UNITS.__getitem__,
        horizontal=True,
        persist_state=state.PERSIST,
        key=TOLERANCE_UNIT_KEY,
    )
    k = cols[2].number_input(
        "Window k for Pk and WindowDiff (0: automatic)",
        min_value=0,
        max_value=1_000_000,
        step=10,
        persist_state=state.PERSIST,
        key=K_KEY,
        help="0 uses half the mean gold segment length, rounded.",
    )
    return int(tolerance), str(unit or "chars"), int(k) or None


def _settings() -> tuple[int, str, int | None]:
    """The tolerance settings Explore set, for Compare (no widgets drawn)."""
    tolerance = int(st.session_state.get(TOLERANCE_KEY, 0) or 0)
    unit = str(st.session_state.get(TOLERANCE_UNIT_KEY, "chars") or "chars")
    k = int(st.session_state.get(K_KEY, 0) or 0) or None
    return tolerance, unit, k


def score(
    source: cached.Source,
    found: Drawn,
    chunks: Sequence[Chunk],
    settings: tuple[int, str, int | None],
) -> BoundaryScores:
    text = source.document.text
    tolerance, unit, k = settings
    return score_boundaries(
        text,
        found.boundaries,
        chunk_starts(chunks, len(text)),
        k=k,
        tolerance=tolerance,
        tolerance_unit="sentences" if unit == "sentences" else "chars",
    )


def band_caption() -> str:
    band = human_band()
    return (
        f"People agree with each other at B {band.b[0]:.2f}–{band.b[1]:.2f} and Pk "
        f"{band.pk[0]:.2f}–{band.pk[1]:.2f} (mean pairwise agreement of the coders of "
        "segeval's samples, in paragraphs): read a chunker's scores against that."
    )


def scores_section(source: cached.Source, config: Config, chunks: Sequence[Chunk]) -> None:
    """The configuration's scores against the document's gold, and the text with the
    matched, missed and extra boundaries marked."""
    found = drawn(source)
    if found is None:
        return
    settings = tolerance_controls()
    scores = score(source, found, chunks, settings)
    cols = st.columns(6)
    cols[0].metric("Pk", f"{scores.pk:.3f}", help="0 is perfect")
    cols[1].metric("WindowDiff", f"{scores.windowdiff:.3f}", help="0 is perfect")
    cols[2].metric("B", f"{scores.b:.3f}", help="boundary similarity; 1 is perfect")
    cols[3].metric("Precision", f"{scores.precision:.3f}")
    cols[4].metric("Recall", f"{scores.recall:.3f}")
    cols[5].metric("F1", f"{scores.f1:.3f}")
    matching = scores.matching
    st.caption(
        f"{config_controls.config_label(config, title=True)} against "
        f"{len(found.boundaries):,} gold boundaries: "
        f"{len(matching.matched):,} matched, {len(matching.missed):,} missed, "
        f"{len(matching.extra):,} extra; k = {scores.k:,} characters, tolerance "
        f"{scores.tolerance} {TOLERANCE_UNITS[scores.tolerance_unit]}. " + band_caption()
    )
    text = source.document.text
    shown = text[:MARKED_VIEW_MAX_CHARS]
    inside = len(shown)
    st.html(
        marked_text_html(
            shown,
            [g for g, _ in matching.matched if g < inside],
            [g for g in matching.missed if g < inside],
            [h for h in matching.extra if h < inside],
        )
    )
    if inside < len(text):
        st.caption(f"The first {inside:,} characters of {len(text):,}.")


def explore_section(source: cached.Source, config: Config, chunks: Sequence[Chunk]) -> None:
    """Explore's "Where would you cut?": the editor, then the scores."""
    take_tour_request(source)
    _load_upload(source)
    error = st.session_state.get(f"{LOADED_KEY}.error")
    with st.expander("Edit boundaries", expanded=drawn(source) is not None):
        if error:
            st.error(error)
        editor_section(source, chunks)
    scores_section(source, config, chunks)


# --------------------------------------------------------------------- Compare


def ranking_table(
    scored: Mapping[str, BoundaryScores], counts: Mapping[str, int], by: str
) -> pd.DataFrame:
    """One row per configuration, best first by ``by`` (lowest first for Pk, WindowDiff)."""
    rows: list[dict[str, Any]] = [
        {
            "configuration": name,
            "B": s.b,
            "F1": s.f1,
            "precision": s.precision,
            "recall": s.recall,
            "Pk": s.pk,
            "WindowDiff": s.windowdiff,
            "cuts": s.boundaries,
            "chunks": counts[name],
        }
        for name, s in scored.items()
    ]
    column = {"b": "B", "f1": "F1", "pk": "Pk", "windowdiff": "WindowDiff"}[by]
    frame = pd.DataFrame(rows).sort_values(
        column, ascending=by in ("pk", "windowdiff"), kind="stable"
    )
    return frame.reset_index(drop=True)


def compare_section(
    source: cached.Source,
    configs: Mapping[str, Config],
    chunked: Mapping[str, Sequence[Chunk]],
    names: Mapping[str, str],
) -> None:
    """Rank the configurations by agreement with the document's gold, against the band."""
    found = drawn(source)
    if found is None:
        st.info(
            'Draw or load a gold segmentation of this document in Explore ("Edit '
            'boundaries") to rank these configurations by how close they cut to it.'
        )
        return
    settings = _settings()
    scored = {names[x]: score(source, found, chunked[x], settings) for x in chunked}
    counts = {names[x]: len(chunked[x]) for x in chunked}
    by = (
        st.radio(
            "Rank by",
            RANKINGS,
            format_func=lambda m: METRIC_NAMES[m],
            horizontal=True,
            persist_state=state.PERSIST,
            key=RANK_KEY,
        )
        or "b"
    )
    band = human_band()
    bands = {"b": band.b, "pk": band.pk, "windowdiff": band.windowdiff}
    st.plotly_chart(
        agreement_ranking({n: getattr(s, by) for n, s in scored.items()}, by, bands.get(by)),
        key="cmp_gold_ranking",
        config={"displaylogo": False},
    )
    st.dataframe(
        ranking_table(scored, counts, by).style.format(
            {c: "{:.3f}" for c in ("B", "F1", "precision", "recall", "Pk", "WindowDiff")}
        ),
        key="cmp_gold_table",
        hide_index=True,
        width="stretch",
    )
    tolerance, unit, _ = settings
    first = next(iter(scored.values()))
    st.caption(
        f"Against {len(found.boundaries):,} gold boundaries ({found.origin}); k = "
        f"{first.k:,} characters, tolerance {tolerance} {TOLERANCE_UNITS.get(unit, unit)} "
        "(set both in Explore). " + band_caption()
    )
