"""The model box and embedding with the wait shown: the model chosen
(:func:`model_select`, :func:`first_view_model`), the embedder loaded with its errors
shown, never raised (:func:`load_embedder`), and embedding with the core's estimate and
a progress bar (:func:`embed_once`, :func:`embed_for_chunking`, :func:`ready_to_chunk`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from chunking import Config
from chunking.embedding.models import Embedder, EmbeddingError, Wait, get_embedder
from chunking.runtime.lru import BoundedLRU, approx_bytes, shared_cache
from chunking.units import DEFAULT_MODEL
from pages import cached
from pages.endpoint_box import endpoint_allowed, endpoint_box, endpoint_cost, endpoint_models
from pages.state import PERSIST, param_key, set_state

if TYPE_CHECKING:
    from chunking.embedding.registry import NamedModel

# ---------------------------------------------------------------------- the model box

#: Session key: the documents (text keys) on which the user asked for the full model
#: instead of the quick first view with the static model.
FULL_MODEL_KEY = "_ce_full_model"


def app_model() -> str:
    """The model box's default: the model full-quality views use
    (:func:`chunking.embedding.registry.full_quality_model`: minilm-onnx-int8 once it
    is built, otherwise the bundled model in torch)."""
    from chunking.embedding.registry import full_quality_model

    return full_quality_model()


def model_label(name: str) -> str:
    """A model choice as the model box shows it: the name and what to expect (for an
    endpoint: its model, its host and whose tokens its sizes count)."""
    from chunking.embedding.endpoint import EndpointSpec, is_endpoint
    from chunking.embedding.models import DEFAULT_MODEL as DEFAULT_KEY
    from chunking.embedding.models import canonical_model_name
    from chunking.embedding.registry import named_model

    if is_endpoint(name):
        try:
            spec = EndpointSpec.parse(name)
        except ValueError:
            return name
        return f"{spec.model} at {spec.host} (endpoint; counts {spec.tokenizer_label})"
    named = named_model(canonical_model_name(name)) if name.strip() else None
    if named is None:
        return name
    if named.key == DEFAULT_KEY:
        return f"{name} (torch, the reference)"
    return f"{name} ({named.note or named.backend})"


def model_select(key: str, label: str = "Model") -> str:
    """The model box: the bundled model in torch, its ONNX int8 and static versions, or
    a path or name typed in. It starts at :func:`app_model` and never holds an empty
    name: an empty or missing value is that model again (after an upload, a page
    change or a cleared box)."""
    from chunking.embedding.registry import model_names

    switch = st.session_state.pop(f"{SWITCH_KEY}{key}", None)
    if isinstance(switch, str):  # a build below finished: use what it built
        st.session_state[key] = switch
    current = st.session_state.get(key)
    if not isinstance(current, str) or not current.strip():
        st.session_state[key] = current = app_model()
    options = [DEFAULT_MODEL, *model_names()[1:], *endpoint_models()]
    if current not in options:
        options.append(current)
    chosen = st.selectbox(
        label,
        options,
        key=key,
        accept_new_options=True,
        format_func=model_label,
        persist_state=PERSIST,
        help="minilm-onnx-int8 is the same model with int8 weights (cosine at least 0.98 to "
        "the reference), loaded in a fraction of a second instead of about 5 s; on this "
        "machine it embeds window-length chunks about as fast as torch and sentence "
        "windows about 1.5 times as fast, and loses less on a busy machine: the default once it is "
        "built (chunk-explorer models --build, or on first use). minilm-static is a fast "
        "preview of lower quality. use-multilingual and multilingual-e5-small read many "
        "languages (optional packages). Type the path of a local sentence-transformers "
        "model to use your own, or add an embeddings endpoint below.",
    )
    endpoint_box(key)
    build_offer(str(chosen or app_model()), key)
    model_unit_caption(str(chosen or app_model()))
    return str(chosen or app_model())


def model_unit_caption(model: str) -> None:
    """Whose tokens the chosen model reads, and how many (its window), in one caption;
    a model whose tokens cannot be counted here says so."""
    from chunking.embedding.unit import model_unit

    try:
        resolved = model_unit(model)
    except ValueError as exc:
        st.error(str(exc))
        return
    warning = resolved.warning
    st.caption(
        f"{warning[0].upper()}{warning[1:]}."
        if warning
        else f"Reads up to {resolved.window:,} {resolved.counts}."
    )


# ------------------------------------------------------------------ derived models

#: Session key prefix: the model a model box is set to on its next run (after a build).
SWITCH_KEY = "_ce_switch_model."


def missing_derived(chosen: str) -> list[NamedModel]:
    """The derived models (ONNX int8, static) not built on this machine whose build
    would help ``chosen``: both for the bundled model in torch (its faster versions),
    a derived model for itself; none for any other model or when nothing is missing."""
    from chunking.embedding.models import DEFAULT_MODEL as DEFAULT_KEY
    from chunking.embedding.models import canonical_model_name
    from chunking.embedding.registry import named_models

    try:
        key = canonical_model_name(chosen)
    except ValueError:
        return []
    missing = [
        m
        for m in named_models()
        if m.built is not None and not m.is_built() and m.availability().available
    ]
    if key == DEFAULT_KEY:
        return missing
    return [m for m in missing if m.key == key]


def build_offer(chosen: str, key: str) -> None:
    """Under the model box: when a derived model ``chosen`` (or one faster than the
    torch model chosen) is not built, say so with the build's estimated time and a
    button that builds it here with a progress bar; the box then uses what was built."""
    from chunking.embedding import registry
    from chunking.embedding.timing import about

    missing = missing_derived(chosen)
    if not missing:
        return
    names = " and ".join(m.name for m in missing)
    seconds = sum(m.ready_seconds() for m in missing)
    if any(m.key == registry.ONNX_INT8 for m in missing):
        why = (
            f"{registry.ONNX_INT8} is the same model, loaded in a fraction of a second and "
            "slowed down less than torch on a busy machine"
        )
    else:
        why = f"{names} is not there yet"
    st.info(
        f"{names} {'are' if len(missing) > 1 else 'is'} not built on this machine ({why}): "
        f"building takes {about(seconds)} here now, once (the same as "
        "`chunk-explorer models --build`).",
        icon=":material/build:",
    )
    if st.button(f"Build {names} ({about(seconds)})", key=f"{key}_build"):
        build_derived(missing, chosen, key)


def build_derived(models: Sequence[NamedModel], chosen: str, key: str) -> None:
    """Build ``models`` with a progress bar each; then set the model box ``key`` to the
    ONNX int8 model when the torch model was chosen (else to ``chosen``) and rerun."""
    from chunking.embedding import registry

    holder = st.empty()
    try:
        for model in models:
            model.load(progress_bar(holder, f"Building {model.name} (once on this machine)"))
    except EmbeddingError as exc:
        holder.empty()
        st.error(f"The model could not be built: {exc}")
        return
    holder.empty()
    built = {m.key for m in models}
    st.session_state[f"{SWITCH_KEY}{key}"] = (
        registry.ONNX_INT8 if registry.ONNX_INT8 in built and chosen not in built else chosen
    )
    st.rerun()


def first_view_model(
    chosen: str,
    doc_key: str,
    texts: Sequence[str],
    what: str,
    marker: Callable[[str], Hashable],
) -> tuple[str, Wait | None]:
    """The model to draw with, and the wait for ``chosen`` when the static model stands
    in for it (for :func:`preview_notice`; otherwise None).

    The core decides when a first view starts with the static preview
    (:func:`chunking.embedding.registry.first_view_model`: a full model whose wait for
    ``texts`` is long, the static model built), unless the document was embedded by
    ``chosen`` in this process already (``marker(name)``: what :func:`embed_once` would
    have recorded) or the user asked for the full model on this document
    (:func:`preview_notice`). ``what`` counts the texts as the notice says it ("491
    chunks").
    """
    from chunking.embedding import registry
    from chunking.embedding.models import DEFAULT_MODEL as DEFAULT_KEY
    from chunking.embedding.models import canonical_model_name, estimate_wait

    full = canonical_model_name(chosen)
    if full not in (DEFAULT_KEY, registry.ONNX_INT8):
        return chosen, None
    if doc_key in st.session_state.get(FULL_MODEL_KEY, ()) or was_embedded(marker(full)):
        return chosen, None
    wait = estimate_wait(chosen, texts, what, disk_cache=True)
    model = registry.first_view_model(chosen, len(texts), wait.seconds)
    return (model, wait) if model != chosen else (chosen, None)


def preview_notice(chosen: str, doc_key: str, wait: Wait, key: str) -> None:
    """Say that the view is a quick preview, with the button for the full model and
    the core's estimate of its wait (:func:`chunking.embedding.models.estimate_wait`)."""
    from chunking.embedding.timing import about

    st.info(
        f"A quick first view with **minilm-static** (fast preview, lower quality). "
        f"{model_label(chosen)} takes {wait.describe()} for these {wait.what} on this "
        "machine now.",
        icon=":material/bolt:",
    )
    st.button(
        f"Use {chosen} ({about(wait.seconds)})",
        key=key,
        on_click=_want_full_model,
        args=(doc_key,),
        type="primary",
    )


def _want_full_model(doc_key: str) -> None:
    wanted = set(st.session_state.get(FULL_MODEL_KEY, ()))
    st.session_state[FULL_MODEL_KEY] = wanted | {doc_key}


def load_embedder(model: str, *, model_key: str | None = None) -> Embedder | None:
    """The embedder named ``model`` (loaded once per process; the first time with a
    spinner saying which model and how long, a derived model built first with a
    progress bar), or None after showing why it cannot be loaded and what to do; never
    a traceback. An empty name is :func:`app_model`.

    With ``model_key`` (the session key of the page's model widget), a button sets that
    widget back to the bundled model.
    """
    from chunking.embedding.models import estimate_load_seconds
    from chunking.embedding.timing import about

    model = model or app_model()
    if not endpoint_allowed(model):
        return None
    seconds = estimate_load_seconds(model)
    holder = st.empty()
    try:
        if not seconds:  # loaded already
            return get_embedder(model)
        with st.spinner(f"Loading {model_label(model)}: {about(seconds)}…", show_time=True):
            building = progress_bar(holder, f"Preparing {model} (once on this machine)")
            return get_embedder(model, progress=building)
    except EmbeddingError as exc:
        model_error(f"The embedding model could not be loaded: {exc}", model_key)
        return None
    finally:
        holder.empty()


def model_error(message: str, model_key: str | None = None) -> None:
    """Show a model problem with the ways out; with ``model_key``, a button to use the
    bundled model (its key: the page prefix of ``model_key`` + ``_use_bundled``, e.g.
    ``sem_use_bundled`` for ``sem.model``)."""
    st.error(
        f"{message}\n\nUse the bundled {DEFAULT_MODEL} (or its faster versions "
        "minilm-onnx-int8 and minilm-static), enter the path of a local "
        "sentence-transformers model, or enter 'hash' for a fast fake model."
    )
    if model_key is not None:
        st.button(
            "Use the bundled model",
            key=f"{model_key.split('.')[0]}_use_bundled",
            on_click=set_state,
            args=(model_key, DEFAULT_MODEL),
        )


def progress_bar(holder: DeltaGenerator, label: str) -> Callable[[int, int, str], None]:
    """A progress callback ``(done, total, what)`` drawing on ``holder`` (an
    ``st.empty``): ``label: what`` and the share done."""

    def update(done: int, total: int, what: str) -> None:
        share = min(done / total, 1.0) if total else 1.0
        holder.progress(share, text=f"{label}: {what}" if what else label)

    return update


def embed_with_progress(embedder: Embedder, texts: Sequence[str], label: str) -> Any:
    """Embed ``texts`` (into the embedder's cache and the disk cache, so that a restarted
    app does not embed them again) with a progress bar that disappears when done, its
    label followed by the core's estimate of the wait
    (:func:`chunking.embedding.models.estimate_embedding_seconds`); returns the vectors
    (one row per text)."""
    from chunking.embedding.endpoint import UNKNOWN_WAIT, EndpointEmbedder
    from chunking.embedding.models import estimate_embedding_seconds
    from chunking.embedding.timing import about

    texts = list(texts)
    endpoint_cost(embedder, texts)
    if isinstance(embedder, EndpointEmbedder):  # its own throughput, measured here
        measured = embedder.estimate_seconds(texts)
        seconds = 0.0 if measured is None else measured
        label = f"{label}, {UNKNOWN_WAIT}" if measured is None else label
    else:
        seconds = estimate_embedding_seconds(embedder.name, texts, disk_cache=True)
    label = f"{label}, {about(seconds)}" if seconds >= 1 else label
    holder = st.empty()

    def update(done: int, total: int, what: str) -> None:
        if total and done < total:
            holder.progress(done / total, text=f"{label}: {done:,} of {total:,}")

    try:
        return embedder.embed(texts, progress=update, disk_cache=True)
    finally:
        holder.empty()


def _embedded() -> BoundedLRU[Hashable, bool]:
    """What :func:`embed_once` embedded in this process (the most recent markers)."""
    return shared_cache("embedded_markers")


def was_embedded(marker: Hashable) -> bool:
    """Whether :func:`embed_once` embedded ``marker`` in this process."""
    return marker in _embedded()


def embed_once(
    marker: Hashable, embedder: Embedder, texts: Callable[[], Sequence[str]], label: str
) -> None:
    """Embed ``texts()`` with a progress bar, unless ``marker`` (what the texts stand for,
    e.g. a text hash, model and setting) was embedded before in this process: the
    vectors are in the embedder's cache then, and the cached step that follows is quick."""
    if marker in _embedded():
        return
    embed_with_progress(embedder, texts(), label)
    _embedded().put(marker, True, size=approx_bytes(marker))


def semantic_marker(doc_key: str, model: str, buffer_size: int) -> Hashable:
    """What :func:`embed_once` records for a document's sentence windows (the Semantic
    page's and the semantic strategy's: the same texts)."""
    return ("semantic", doc_key, model, buffer_size)


def embed_for_chunking(
    text: str, doc_key: str, config: Config, model_key: str | None = None
) -> bool:
    """Before a strategy that embeds (one with a ``model`` parameter) cuts ``text``: load
    its model and embed what it embeds, each with the core's estimate and a progress
    bar, so that the chunking after it takes the vectors from the cache instead of
    running long under a bare "Chunking…". The semantic strategy's sentence windows
    are embedded here; a library's strategy has its model loaded (what it embeds is
    the library's affair). False after showing why the model cannot be loaded
    (``model_key``: the widget a "Use the bundled model" button sets)."""
    if "model" not in config.spec.param_names:
        return True
    embedder = load_embedder(str(config.params["model"]), model_key=model_key)
    if embedder is None:
        return False
    if config.strategy != "semantic":
        return True
    from chunking.splitters.semantic.analysis import analysis_sentences, window_texts

    buffer_size = int(config.params["buffer_size"])
    marker = semantic_marker(doc_key, embedder.name, buffer_size)
    if not was_embedded(marker):
        windows = window_texts(text, analysis_sentences(text), buffer_size)
        label = f"Embedding {len(windows):,} sentence windows with {embedder.label}"
        try:
            embed_once(marker, embedder, lambda: windows, label)
        except EmbeddingError:
            return True  # the chunking says what went wrong, in its own words
    return True


def ready_to_chunk(source: cached.Source, configs: Mapping[str, Config]) -> dict[str, Config]:
    """The configurations to cut, each that embeds made ready first
    (:func:`embed_for_chunking`: the wait, the model and the progress shown); one whose
    model cannot be loaded shows why and is left out. Only the first, the sidebar's,
    gets the "Use the bundled model" button (the others would share its key; their
    model is set in their own controls)."""
    ready = {}
    for i, (name, config) in enumerate(configs.items()):
        model_key = param_key(config.strategy, "model") if i == 0 else None
        if embed_for_chunking(source.document.text, source.key, config, model_key):
            ready[name] = config
    return ready
