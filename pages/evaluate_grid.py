"""The Evaluate page's sweep: the form for the grid of configurations, the models and
the retrieval technique (:func:`grid_controls`, :func:`technique_controls`), and the
sweep run once with a progress bar, its results cached with their lenses
(:func:`run_sweep`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

from chunking import UNITS, Chunk, Config, strategies
from chunking.embedding.models import EmbeddingError, Wait, get_embedder
from chunking.embedding.registry import named_models
from chunking.evaluation import (
    REPORT_RECURSIVE,
    Settings,
)
from chunking.evaluation.lens import (
    Lens,
    lenses,
)
from chunking.evaluation.sweep import (
    Digest,
    Grid,
    digest,
    merge_results,
    parse_values,
    sweep,
)
from chunking.evaluation.techniques import (
    AXES,
    CONTEXTS,
    EMBEDDINGS,
    RETRIEVERS,
    WINDOW,
    Technique,
)
from chunking.units import DEFAULT_MODEL
from pages import endpoint_box, model_choice, sidebar, state
from pages.cached import bounded
from pages.evaluate_questions import P, QuestionSet

MODELS = {
    DEFAULT_MODEL: f"{DEFAULT_MODEL} (bundled, real)",
    **{m.name: f"{m.name} ({m.note or m.backend})" for m in named_models()[1:]},
    "hash": "hash (instant fake, for trying the page)",
}
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
            persist_state=state.PERSIST,
            key=f"{P}strategies",
        )
        sizes = cols[1].text_input(
            "Sizes",
            "200, 400",
            persist_state=state.PERSIST,
            key=f"{P}sizes",
            help="Comma-separated.",
        )
        overlaps = cols[2].text_input(
            "Overlaps",
            "0",
            persist_state=state.PERSIST,
            key=f"{P}overlaps",
            help="Absolute, or 0<x<1 for a share of the size.",
        )
        units = cols[3].multiselect(
            "Units",
            list(UNITS),
            default=["tokens"],
            persist_state=state.PERSIST,
            key=f"{P}units",
        )
        cols = st.columns([3, 2, 2, 2])
        with cols[0]:
            models = models_select(f"{P}models")
        top_k = cols[1].number_input(
            "Top k", 1, 50, 5, persist_state=state.PERSIST, key=f"{P}top_k"
        )
        thresholds = cols[2].text_input(
            "Thresholds",
            "",
            persist_state=state.PERSIST,
            key=f"{P}thresholds",
            help="semantic only; empty = its default.",
        )
        technique = technique_controls()
        langchain = st.toggle(
            "Recursive with the report's LangChain settings",
            True,
            persist_state=state.PERSIST,
            key=f"{P}langchain",
            help="Separators [\\n\\n, \\n, ., ?, !, space, ''] with keep_separator='start', "
            "as in the Chroma report.",
        )
        mine = sidebar.current_config()
        own = st.toggle(
            "Include the sidebar's configuration",
            True,
            persist_state=state.PERSIST,
            key=f"{P}include_sidebar",
            help="Evaluates the sidebar's configuration too"
            + (f" ({mine.label()})" if mine is not None else "")
            + ", so that Explore can show its retrieval traffic.",
        )
        compat = st.toggle(
            "Score spans as the report's code did",
            False,
            persist_state=state.PERSIST,
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
        if isinstance(technique, str):
            raise ValueError(technique)
        if own and mine is not None and technique_fits(technique, mine):
            data["include"] = [mine.to_dict()]
        grid = Grid.from_dict(data)
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


def technique_fits(technique: Technique, config: Config) -> bool:
    """Whether ``technique`` can run on ``config`` (else the sidebar's is left out)."""
    try:
        technique.check(config)
    except ValueError:
        return False
    return True


def technique_controls() -> Technique | str:
    """Retriever, chunk embedding, context and returned unit: a technique, or what is
    wrong with the choice."""
    cols = st.columns([2, 2, 2, 2, 1])
    retriever = cols[0].selectbox(
        "Retriever",
        RETRIEVERS,
        persist_state=state.PERSIST,
        key=f"{P}retriever",
        help=AXIS["retriever"].help + ".",
    )
    embedding = cols[1].selectbox(
        "Chunk embedding",
        EMBEDDINGS,
        persist_state=state.PERSIST,
        key=f"{P}embedding",
        help=AXIS["embedding"].help + ". " + LATE_NOTE,
    )
    context = cols[2].selectbox(
        "Context",
        PAGE_CONTEXTS,
        persist_state=state.PERSIST,
        key=f"{P}context",
        help=AXIS["context"].help + "; the llm context runs from the command line (--context llm).",
    )
    returned = cols[3].selectbox(
        "Return",
        list(RETURNED),
        format_func=RETURNED.__getitem__,
        persist_state=state.PERSIST,
        key=f"{P}returned",
        help=AXIS["returned"].help + ".",
    )
    neighbours = cols[4].number_input(
        "N",
        0,
        20,
        1,
        persist_state=state.PERSIST,
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


@bounded("sweeps")
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
        sweep(
            _qs.documents,
            _qs.questions,
            model_grid(grid, m),
            embedders[m],
            settings,
            None,
            technique,
        )
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


def model_grid(grid: Grid, model: str) -> Grid:
    """``grid`` with its unit ``model`` counting ``model``'s own tokens
    (:func:`chunking.embedding.unit.resolve_units`, as ``evaluate --model`` does), so that
    each model's configurations are sized in what that model reads; unchanged without
    that unit. ``ValueError`` when the model's tokens cannot be read."""
    if "model" not in grid.units:
        return grid
    from chunking.embedding.unit import resolve_units

    return Grid.from_dict({**grid.to_dict(), "unit": resolve_units(grid.units, model)})


def unit_notes(grid: Grid, models: list[str]) -> None:
    """Under a grid with unit ``model``: whose tokens each model's sizes count, a warning
    for a model whose own tokens cannot be counted here (or whose window is guessed)."""
    if "model" not in grid.units:
        return
    from chunking.embedding.unit import model_unit

    counts = []
    for model in models:
        try:
            resolved = model_unit(model)
        except ValueError:
            continue  # the sweep says what is wrong with it
        if resolved.warning:
            st.warning(f"{resolved.warning[0].upper()}{resolved.warning[1:]}.")
        else:
            counts.append(f"{model}: {resolved.counts} (reads {resolved.window:,})")
    if counts:
        st.caption("Sizes in unit model count " + "; ".join(counts) + ".")


def warm_up(texts: Sequence[str], model: str, run_key: str) -> None:
    """Embed every text the sweep needs (the questions and every chunk,
    :func:`chunking.evaluation.waits.estimate_sweep_wait`), with a progress bar.

    The vectors land in the embedder's cache, so the cached sweep that follows finds
    them all and does not embed anything itself. Records (texts requested, texts the
    model embedded) under ``run_key``. Late chunking reads whole documents instead: its
    progress is the spinner's.
    """
    warmed: dict[str, tuple[int, int]] = st.session_state.setdefault(f"{P}warmed", {})
    embedder = get_embedder(model)
    before = embedder.encoded
    model_choice.embed_with_progress(
        embedder, texts, f"Embedding the questions and every chunk ({model})"
    )
    warmed[run_key] = (len(texts), embedder.encoded - before)


def announce_wait(wait: Wait) -> None:
    """The sweep's whole wait, as the core estimates it, before it starts."""
    st.caption(f"This evaluation takes {wait.describe()} on this machine now.")


def run_sweep(
    qs: QuestionSet, grid: Grid, settings: Settings, models: list[str], technique: Technique
) -> tuple[Lensed, tuple[int, int]] | None:
    """The sweep's results with their lenses (cached) and (texts requested, texts
    embedded), after embedding what it needs with a progress bar (the whole wait
    announced first)."""
    from chunking.evaluation.waits import estimate_sweep_wait

    settings_json = json.dumps(asdict(settings), sort_keys=True)
    technique_json = json.dumps(asdict(technique), sort_keys=True)
    key = (qs.key, grid_json(grid), settings_json, technique_json, tuple(models))
    counts = [0, 0]
    if not all(endpoint_box.endpoint_allowed(m) for m in models):
        return None
    unit_notes(grid, models)
    warmed = st.session_state.setdefault(f"{P}warmed", {})
    run_keys = {m: "|".join([*key[:4], m]) for m in models}
    try:
        todo = {m: model_grid(grid, m).configs()[0] for m in models if run_keys[m] not in warmed}
        if todo:
            with st.spinner("Chunking…"):
                planned = estimate_sweep_wait(qs.documents, qs.questions, todo, technique)
            announce_wait(planned.wait)
            for model, texts in planned.texts.items():
                warm_up(texts, model, run_keys[model])
        for model in models:
            requested, embedded = warmed[run_keys[model]]
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


def models_select(key: str) -> list[str]:
    """The embedding models to compare: the bundled one, the fast fake, and any other
    names typed in (named models such as ``minilm-static``, or local model folders)."""
    options = list(dict.fromkeys([*MODELS, *endpoint_box.endpoint_models()]))
    options += [m for m in st.session_state.get(key) or () if m not in options]
    chosen = st.multiselect(
        "Embedding models",
        options,
        default=[DEFAULT_MODEL],
        format_func=lambda m: MODELS.get(m) or model_choice.model_label(m),
        persist_state=state.PERSIST,
        key=key,
    )
    endpoint = endpoint_box.endpoint_box(key, in_form=True)
    extra = st.text_input(
        "Other models",
        "",
        persist_state=state.PERSIST,
        key=f"{key}_extra",
        help="Comma-separated model names or local folders, compared side by side.",
    )
    typed = [m.strip() for m in extra.split(",") if m.strip()]
    return list(dict.fromkeys([*chosen, *typed, *([endpoint] if endpoint else [])]))
