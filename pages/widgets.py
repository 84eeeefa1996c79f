"""The widgets the pages share: what is drawn below the sidebar.

- session state: :data:`PERSIST` (every keyed widget passes it), :func:`set_state`,
  :func:`clamp_state`, settings handed from one page to another (:func:`hand_over`,
  :func:`take_over`) and limits read from the environment (:func:`env_limit`);
- parameter controls made from the registry, for any subset of a strategy's parameters
  (:func:`param_controls`, :func:`param_widget`), and the user's tokenizer as a unit
  (:func:`tokenizer_upload`);
- the model box, the embedder loaded with its errors shown, never raised, and
  embedding with the core's estimate and a progress bar (:func:`model_select`,
  :func:`load_embedder`, :func:`embed_once`, :func:`first_view_model`,
  :func:`embed_for_chunking`);
- the boundary view a page at a time (:func:`paged_text`), chunk tables, downloads
  and the configuration as code (:func:`chunk_table_for`, :func:`download_buttons`,
  :func:`code_export`).

Nothing here knows the sidebar (:mod:`pages.sidebar`); what is computed comes from the
core, through :mod:`pages.cached` where it is worth caching.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from chunking import Chunk, Config, Param, get_strategy
from chunking.analysis.report import Report
from chunking.embedding.models import Embedder, EmbeddingError, Wait, get_embedder
from chunking.units import DEFAULT_MODEL
from chunking.viz.render import (
    BOUNDARY_CSS,
    HIERARCHY_LEGEND_HTML,
    LEGEND_HTML,
    Page,
    heat_legend_html,
    is_nested,
    paginate,
    render_page,
)
from pages import cached

if TYPE_CHECKING:
    from chunking.evaluation.lens import Lens
    from chunking.evaluation.questions import Question
    from chunking.sinks import Target

#: Every keyed widget of the app keeps its value for the whole session: while another
#: page is shown, and when a page change reaches the server without the widget (a link
#: clicked while a run is still drawing; Streamlit otherwise drops such widgets' state).
PERSIST: Final = "session"


# ----------------------------------------------------------------- session state


def set_state(key: str, value: Any) -> None:
    """Set a session-state value (a button callback: ``on_click=set_state, args=...``)."""
    st.session_state[key] = value


def clamp_state(key: str, lo: int, hi: int) -> None:
    """Keep a number widget's value within ``[lo, hi]`` before it is drawn.

    The range of page and chunk numbers changes with the configuration; a value left
    over from a previous configuration would otherwise be out of range.
    """
    value = st.session_state.get(key, lo)
    st.session_state[key] = min(max(lo, int(value)), hi)


#: The LLM tools page's endpoint and model; Explore reads them to show what the model
#: wrote for a chunk.
LLM_URL_KEY: Final = "llm.url"
LLM_MODEL_KEY: Final = "llm.model"


def _request_key(page: str) -> str:
    return f"_request.{page}"


def hand_over(page: str, settings: Mapping[str, Any]) -> None:
    """Leave ``settings`` for ``page`` (e.g. ``"semantic"``), applied on its next run."""
    st.session_state[_request_key(page)] = dict(settings)


def take_over(page: str) -> Mapping[str, Any] | None:
    """The settings another page left for ``page``, once (they are removed)."""
    request = st.session_state.pop(_request_key(page), None)
    return request if isinstance(request, Mapping) else None


def env_limit(name: str, default: int, minimum: int) -> int:
    """A whole number from the environment variable ``name`` (``default`` when unset);
    a bad value is shown as a warning and the default used."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw.isdigit() and int(raw) >= minimum:
        return int(raw)
    st.warning(f"{name}={raw!r} is not a whole number of at least {minimum}; using {default:,}")
    return default


# ------------------------------------------------------------------ parameter controls


def param_key(strategy: str, param: str, prefix: str = "") -> str:
    """Session-state key of a parameter's widget, e.g. ``recursive.size``."""
    return f"{prefix}{strategy}.{param}"


def widget_value(param: Param, value: Any) -> Any:
    """A core value in the form its widget holds (lists as JSON text)."""
    if param.kind is list:
        return json.dumps(list(value), ensure_ascii=False)
    if param.kind is float:
        return float(value)
    return value


def option_label(value: Any) -> str:
    """How a choice is shown: a tokenizer unit by its file name."""
    text = str(value)
    if text.startswith("tokenizer:"):
        return f"tokenizer: {Path(text.split(':', 1)[1]).name.split('-', 1)[-1]}"
    return text


def _bound(value: float | None, kind: type) -> Any:
    return None if value is None else kind(value)


def param_widget(param: Param, key: str, label: str | None = None) -> Any:
    """Draw the widget for ``param`` bound to ``key``, initialised to its default, with
    the registry's range and help text; returns the widget's value."""
    if key not in st.session_state:
        st.session_state[key] = widget_value(param, param_start(param))
    label = label or param.name.replace("_", " ")
    kind, help_text = param.kind, param.help
    if kind is bool:
        return st.toggle(label, persist_state=PERSIST, key=key, help=help_text)
    if kind is int:
        lo, hi = _bound(param.minimum, int), _bound(param.maximum, int)
        return st.number_input(
            label, lo, hi, step=1, persist_state=PERSIST, key=key, help=help_text
        )
    if kind is float and param.minimum is not None and param.maximum is not None:
        lo, hi = float(param.minimum), float(param.maximum)
        step = (hi - lo) / 100
        return st.slider(label, lo, hi, step=step, persist_state=PERSIST, key=key, help=help_text)
    if kind is float:
        lo, hi = _bound(param.minimum, float), _bound(param.maximum, float)
        return st.number_input(
            label, lo, hi, step=0.05, persist_state=PERSIST, key=key, help=help_text
        )
    if kind is str and param.choices:
        options = list(param.choices)
        if param.pattern:  # units: the tokenizer files uploaded in this session too
            current = st.session_state.get(key)
            extra = [*st.session_state.get(TOKENIZERS_KEY, ()), current]
            options += [u for u in extra if u not in options and param.matches_pattern(u)]
        return st.selectbox(
            label,
            options,
            format_func=option_label,
            persist_state=PERSIST,
            key=key,
            help=help_text,
        )
    if kind is list:
        help_text = f'{help_text} Write a JSON list of strings, e.g. ["\\n\\n", " "].'
        label = f"{label} (JSON list)"
    return st.text_input(label, persist_state=PERSIST, key=key, help=help_text)


def param_controls(
    strategy: str,
    names: Sequence[str],
    key: Callable[[str], str],
    *,
    labels: Mapping[str, str] | None = None,
    columns: int = 1,
) -> dict[str, Any]:
    """Widgets for the parameters ``names`` of ``strategy``, as the registry declares
    them (type, default, range, help), bound to ``key(name)``; returns their values.

    With ``columns`` > 1 the widgets are laid out side by side, in order.
    """
    spec = get_strategy(strategy)
    places = st.columns(columns) if columns > 1 else [st.container()]
    values = {}
    for i, name in enumerate(names):
        with places[i % len(places)]:
            label = (labels or {}).get(name)
            values[name] = param_widget(spec.param(name), key(name), label)
    return values


def apply_params(strategy: str, values: Mapping[str, Any], key: Callable[[str], str]) -> None:
    """Set the widgets of ``strategy``'s parameters named in ``values`` (core values)."""
    spec = get_strategy(strategy)
    for name, value in values.items():
        if name in spec.param_names:
            st.session_state[key(name)] = widget_value(spec.param(name), value)


#: Units (``tokenizer:PATH``) made from tokenizer files uploaded in this session.
TOKENIZERS_KEY = "_ce_tokenizers"


def tokenizer_upload(unit_key: str) -> None:
    """An uploader for the user's tokenizer (``tokenizer.json`` or ``.tiktoken``); a valid
    one becomes a unit and is selected in the unit box ``unit_key``."""
    upload_key = f"{unit_key}.upload"
    with st.expander("Count in your own tokenizer"):
        st.file_uploader(
            "tokenizer.json or .tiktoken",
            type=["json", "tiktoken"],
            key=upload_key,
            on_change=_use_tokenizer,
            args=(upload_key, unit_key),
            help="Sizes are then counted in your model's tokens. The file is checked and "
            "kept in this machine's cache; it is only read as a tokenizer.",
        )
        problem = st.session_state.get(f"{upload_key}.problem")
        if problem:
            st.error(problem)


def _use_tokenizer(upload_key: str, unit_key: str) -> None:
    from chunking.documents.tokenizers import store_tokenizer

    upload = st.session_state.get(upload_key)
    st.session_state[f"{upload_key}.problem"] = None
    if upload is None:
        return
    try:
        unit = store_tokenizer(upload.getvalue(), upload.name)
    except ValueError as exc:
        st.session_state[f"{upload_key}.problem"] = str(exc)
        return
    known = st.session_state.setdefault(TOKENIZERS_KEY, [])
    if unit not in known:
        known.append(unit)
    st.session_state[unit_key] = unit


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


def param_start(param: Param) -> Any:
    """A parameter's first value in the app: the registry's default, except a strategy's
    embedding model left at the bundled one, which starts at :func:`app_model` as the
    model box does (the command line and the API keep the registry's)."""
    if param.name == "model" and param.kind is str and param.default == DEFAULT_MODEL:
        return app_model()
    return param.fresh_default()


def model_label(name: str) -> str:
    """A model choice as the model box shows it: the name and what to expect."""
    from chunking.embedding.models import DEFAULT_MODEL as DEFAULT_KEY
    from chunking.embedding.models import canonical_model_name
    from chunking.embedding.registry import named_model

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

    current = st.session_state.get(key)
    if not isinstance(current, str) or not current.strip():
        st.session_state[key] = current = app_model()
    options = [DEFAULT_MODEL, *model_names()[1:]]
    if current not in options:
        options.append(current)
    chosen = st.selectbox(
        label,
        options,
        key=key,
        accept_new_options=True,
        format_func=model_label,
        persist_state=PERSIST,
        help="minilm-onnx-int8 is the same model, about twice as fast on this machine "
        "(int8 weights, cosine at least 0.98 to the reference): the default once it is "
        "built (chunk-explorer models --build, or on first use). minilm-static is a fast "
        "preview of lower quality. Type the path of a local sentence-transformers model "
        "to use your own.",
    )
    return str(chosen or app_model())


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
    from chunking.embedding.models import estimate_embedding_seconds
    from chunking.embedding.timing import about

    texts = list(texts)
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


@st.cache_resource(show_spinner=False)
def _embedded() -> set[Hashable]:
    """What :func:`embed_once` embedded in this process."""
    return set()


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
    _embedded().add(marker)


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


# ------------------------------------------------------------------- the boundary view


def chunk_each(
    source: cached.Source, configs: Mapping[str, Config]
) -> dict[str, tuple[Chunk, ...]]:
    """The chunks of every configuration (by name) that cuts the document into some;
    each of the others is left out with its error, or a warning that it made none."""
    chunked = {}
    for name, config in configs.items():
        result = cached.safe_chunks(source, config)
        if isinstance(result, str):
            st.error(f"{name}: {result}")
        elif not result:
            st.warning(f"{name}: this configuration produced no chunks.")
        else:
            chunked[name] = result
    return chunked


def inject_css() -> None:
    """The boundary view's style sheet (a style-only st.html takes no space)."""
    st.html(f"<style>{BOUNDARY_CSS}</style>")


@st.cache_resource(show_spinner=False, max_entries=64)
def _page_html(
    cache_key: str, number: int, unit: str, _text: str, _shown: Sequence[Chunk], _page: Page
) -> str:
    return render_page(_text, _shown, _page, unit=unit)


def paged_text(
    text: str,
    shown: Sequence[Chunk],
    key: str,
    *,
    unit: str,
    pages: Sequence[Page] | None = None,
    cache_key: str | None = None,
    heat: Sequence[int] | None = None,
    gold: Sequence[tuple[int, int]] = (),
) -> Page:
    """The chunks drawn on the document a page at a time, with the page number input
    (bound to ``key``); returns the page shown.

    With ``cache_key`` (what identifies ``text`` and ``shown``, e.g. text hash and
    configuration JSON), each page's HTML is built once per process, not on every rerun.
    ``heat`` and ``gold`` colour it by the retrieval lens
    (:func:`chunking.viz.render.render_window`); such a page is not cached.
    """
    pages = pages if pages is not None else paginate(shown)
    # Another document starts on its first page (clamping the page number left over from
    # the previous one would open a shorter document on its last page). The text itself
    # is kept for the comparison: a reference, not a copy, and no hash on every rerun.
    shown_text = f"_ce_text_of.{key}"
    before = st.session_state.get(shown_text)
    if before is not text and before != text:
        st.session_state[key] = 1
        st.session_state[shown_text] = text
    clamp_state(key, 1, len(pages))
    nav, info = st.columns([1, 4], vertical_alignment="bottom")
    number = nav.number_input(
        f"Page (of {len(pages)})",
        min_value=1,
        max_value=len(pages),
        step=1,
        persist_state=PERSIST,
        key=key,
        help="Large documents are drawn a page at a time so the browser stays responsive.",
    )
    page = pages[int(number) - 1]
    info.caption(
        f"Chunks {page.first}–{page.last - 1} (of {len(shown):,}, numbered from 0), "
        f"characters {page.start:,}–{page.end:,} of {len(text):,}. Hover over the text to "
        "see each chunk's index, offsets and size; a red bar marks where a chunk starts."
    )
    if heat is not None:
        st.html(heat_legend_html(max([1, *heat])))
    else:
        st.html(HIERARCHY_LEGEND_HTML if is_nested(shown) else LEGEND_HTML)
    if heat is not None or gold:
        st.html(render_page(text, shown, page, unit=unit, heat=heat, gold=gold))
    elif cache_key is None:
        st.html(render_page(text, shown, page, unit=unit))
    else:
        st.html(_page_html(cache_key, page.number, unit, text, shown, page))
    return page


# ------------------------------------------------------------------------- tables


def preview(text: str, width: int = 80) -> str:
    """The start of a chunk on one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def chunk_table(chunks: Sequence[Chunk], analysis: Report) -> pd.DataFrame:
    """One row per chunk for display: offsets, sizes in every unit, the page a PDF chunk
    starts on, the table rows a group holds and the header it carries (when some chunk
    has them), flags and a preview."""
    table = pd.DataFrame(
        {
            "chunk": [c.index for c in chunks],
            "start": [c.start for c in chunks],
            "end": [c.end for c in chunks],
            # chars, words, cl100k tokens, the model's word pieces (and the user's unit)
            **{option_label(unit): sizes for unit, sizes in analysis.sizes.items()},
        }
    )
    if any(p is not None for p in analysis.pages):
        table["page"] = [p[0] if p else None for p in analysis.pages]
    table["boundary"] = [str(c.metadata.get("boundary", "")) for c in chunks]
    if any(c.metadata.get("table_rows") for c in chunks):  # rows of a table cut in groups
        table["table_rows"] = [_row_range(c.metadata.get("table_rows")) for c in chunks]
    if any(c.metadata.get("context") for c in chunks):  # e.g. a table header carried
        table["context"] = [preview(str(c.metadata.get("context") or "")) for c in chunks]
    table["flags"] = [", ".join(c.flags) for c in chunks]
    table["text"] = [preview(c.text) for c in chunks]
    return table


def _row_range(rows: Any) -> str:
    """A chunk's ``table_rows`` (first and last row, counted from 1) as "6–10"; "" when
    the chunk is not a group of table rows."""
    if not rows:
        return ""
    first, last = rows
    return str(first) if first == last else f"{first}–{last}"


@st.cache_data(show_spinner=False, max_entries=16)
def _chunk_table(key: str, config_json: str, _source: cached.Source) -> pd.DataFrame:
    config = Config.from_json(config_json)
    return chunk_table(cached.chunks(_source, config), cached.analysis(_source, config))


def chunk_table_for(source: cached.Source, config: Config) -> pd.DataFrame:
    """:func:`chunk_table` of the chunks for ``config``, built once per configuration
    rather than on every rerun (a preview per chunk adds up on large documents)."""
    return _chunk_table(source.key, config.to_json(), source)


def comparison_table(rows: Mapping[str, tuple[Config, Report]]) -> pd.DataFrame:
    """One row per configuration (keyed by its letter) with human column names: sizes in
    the configuration's own unit, then in cl100k tokens and model word pieces for all."""
    records = []
    for letter, (config, analysis) in rows.items():
        own = analysis.summary[config.unit]
        record = {
            "Config": letter,
            "Strategy": config.spec.label,
            "Limit": f"{config.limit} {option_label(config.unit)}" if config.limit else "—",
            "Chunks": own.count,
            "Mean size": round(own.mean, 1),
            "Std. dev.": round(own.std, 1),
            "Smallest": own.min,
            "Largest": own.max,
            "Unit": option_label(config.unit),
            "Mean (tokens)": round(analysis.summary["tokens"].mean, 1),
        }
        if "model" in analysis.summary:
            record["Largest (model word pieces)"] = analysis.summary["model"].max
        record["Warnings"] = analysis.warning_count
        records.append(record)
    return pd.DataFrame(records)


# --------------------------------------------------------------------- downloads


def deferred(make: Callable[..., str | bytes], *args: Any) -> Callable[[], str | bytes]:
    """A no-argument callable for st.download_button: the file is built on click."""
    return lambda: make(*args)


#: One download button: label, data (or what builds it on click), file suffix, MIME type.
Download = tuple[str, "str | bytes | Callable[[], str | bytes]", str, str]


def download_buttons(downloads: Sequence[Download], stem: str, key: str) -> None:
    """One download button per file, side by side: ``stem.suffix``, keys ``key`` + the
    suffix; files built by a callable are only built when clicked."""
    columns = st.columns(len(downloads))
    for column, (label, data, suffix, mime) in zip(columns, downloads, strict=True):
        column.download_button(
            label,
            data=data,
            file_name=f"{stem}.{suffix}",
            mime=mime,
            on_click="ignore",
            key=f"{key}{suffix}",
            icon=":material/download:",
            width="stretch",
        )


# --------------------------------------------------------------------- export as code

_FIDELITY_NOTE = {
    "exact": "gives the same chunks as here",
    "approximate": "the closest settings; the chunks differ",
    "unavailable": "no equivalent",
}


def code_export(config: Config, key: str) -> None:
    """The configuration as code for a chosen library: fidelity, what differs, the
    snippet (with a copy button) and a download."""
    from chunking.output.snippets import TARGETS, snippet

    target = st.selectbox(
        "Library",
        TARGETS,
        key=f"{key}.target",
        persist_state=PERSIST,
        help="Python snippets define split(text) -> list[str]: paste them into a pipeline.",
    )
    made = snippet(config, str(target))
    message = f"**{made.fidelity}**: {_FIDELITY_NOTE[made.fidelity]}"
    if made.note:
        message += f". {made.note[0].upper()}{made.note[1:]}."
    if made.fidelity == "exact":
        st.success(message, icon=":material/check_circle:")
    elif made.fidelity == "approximate":
        st.warning(message, icon=":material/warning:")
    else:
        st.info(message, icon=":material/block:")
        return
    st.code(made.code, language=made.language)
    suffix = "sh" if made.language == "bash" else "py"
    st.download_button(
        f"Download {target} snippet",
        data=made.code,
        file_name=f"{config.strategy}_{target}.{suffix}",
        mime="text/x-python" if suffix == "py" else "text/x-shellscript",
        on_click="ignore",
        key=f"{key}.download",
        icon=":material/download:",
    )


# ----------------------------------------------------------- writing to a vector database


@dataclass(frozen=True)
class SinkDocument:
    """One document to write: its content hash (:func:`chunking.documents.corpus.doc_id`
    of the bytes it was read from, as ``chunk-explorer run`` hashes it), its path, its
    chunks and their PDF pages (:func:`chunking.output.export.chunk_pages`)."""

    doc_id: str
    path: str
    chunks: Sequence[Chunk]
    pages: Sequence[Sequence[int] | None] | None = None

    def records(self) -> list[dict[str, Any]]:
        """The chunks as :func:`chunking.sinks.write_records` takes them."""
        from chunking.output.export import chunk_records

        extra = {"doc_id": self.doc_id, "path": self.path}
        return [{**row, **extra} for row in chunk_records(self.chunks, self.pages)]


#: Session key (after the page's prefix) of the last write: target, collection, counts.
_SINK_WRITTEN = "_sink_written"


def sink_kinds() -> tuple[list[str], list[str]]:
    """The database kinds whose libraries are installed, and those whose are not."""
    from importlib.util import find_spec

    from chunking.sinks.kinds import SINKS

    installed = [k for k, s in SINKS.items() if all(find_spec(m) for m in s.modules)]
    return installed, [k for k in SINKS if k not in installed]


def vector_database_box(
    prefix: str, config: Config, documents: Callable[[], Sequence[SinkDocument]], chunks: int
) -> None:
    """The "Write to a vector database" box: the kind, its folder, the collection, the model and
    the button; then the count written and how to search it back (the command line and
    a search box). ``documents()`` is called on a click only; ``chunks`` is how many it
    will give. Keys are ``prefix`` + ``.sink_*``."""
    from chunking.sinks import INSTALL_HINT, SinkError, Target, collection_name
    from chunking.sinks.kinds import SINKS, check_folder

    installed, missing = sink_kinds()
    if not installed:
        st.info(f"Writing to a vector database needs LanceDB, Chroma or Qdrant: {INSTALL_HINT}")
        return
    left, middle, right = st.columns(3)
    kind = str(
        left.selectbox(
            "Database",
            installed,
            format_func=lambda k: f"{SINKS[k].title} ({k})",
            persist_state=PERSIST,
            key=f"{prefix}.sink_kind",
            help="Each runs in this process on a folder, without a server.",
        )
    )
    st.session_state.setdefault(f"{prefix}.sink_path", "vectors")
    folder = middle.text_input(
        "Folder",
        persist_state=PERSIST,
        key=f"{prefix}.sink_path",
        help="A new or empty folder, or one this kind of database wrote (relative to where "
        "the app was started).",
    ).strip()
    default = collection_name(config.label())
    name = right.text_input(
        "Collection",
        placeholder=default,
        persist_state=PERSIST,
        key=f"{prefix}.sink_collection",
        help="Empty: named after the configuration. Writing the same chunks again replaces "
        "them: every record's id is its document's content hash and the chunk's index.",
    ).strip()
    collection = name or default
    model_key = f"{prefix}.sink_model"
    model = model_select(model_key, "Embedding model")
    st.caption(
        "minilm-static embeds a large corpus in seconds (lower quality); a collection "
        "keeps the model it was written with, and a search embeds its question with it."
        + (f" Not installed: {', '.join(missing)} ({INSTALL_HINT})." if missing else "")
    )
    try:
        target = Target.parse(f"{kind}:{folder}")
    except SinkError as exc:
        st.error(str(exc))
        return
    if st.button(
        f"Write {chunks:,} chunks to {target}",
        key=f"{prefix}.sink_write",
        icon=":material/database:",
        disabled=not chunks,
    ):
        try:
            check_folder(target, must_exist=False)
        except SinkError as exc:
            st.error(str(exc))
            return
        _write_to_sink(prefix, target, collection, config, model, model_key, documents())
    written = st.session_state.get(prefix + _SINK_WRITTEN)
    if written is not None and written[:2] == (target.key, collection):
        st.success(
            f"Wrote {written[2]:,} chunks into {target}, collection {collection}: it holds "
            f"{written[3]:,} records.",
            icon=":material/check_circle:",
        )
    _search_box(prefix, target, collection)


def _write_to_sink(
    prefix: str,
    target: Target,
    collection: str,
    config: Config,
    model: str,
    model_key: str,
    documents: Sequence[SinkDocument],
) -> None:
    """Embed every chunk's embedding text and write the records, with progress bars;
    a refusal is one ``st.error`` line."""
    from chunking.sinks import SinkError, write_records

    records = [row for doc in documents for row in doc.records()]
    texts = [chunk.embedding_text for doc in documents for chunk in doc.chunks]
    if not records:
        st.error("There are no chunks to write.")
        return
    embedder = load_embedder(model, model_key=model_key)
    if embedder is None:
        return
    vectors = embed_with_progress(embedder, texts, f"Embedding with {model}")
    holder = st.empty()

    def update(done: int, total: int, what: str) -> None:
        holder.progress(done / max(total, 1), text=f"Writing {done:,} of {total:,} records")

    try:
        count = write_records(
            target,
            records,
            vectors,
            config=config,
            model=model,
            collection=collection,
            progress=update,
        )
    except SinkError as exc:
        st.error(str(exc))
        return
    except OSError as exc:
        st.error(f"{target}: {exc.strerror or exc}")
        return
    finally:
        holder.empty()
    st.session_state[prefix + _SINK_WRITTEN] = (target.key, collection, len(records), count)


def _search_box(prefix: str, target: Target, collection: str) -> None:
    """The command line that searches the collection, and a search box doing the same."""
    import shlex

    from chunking.sinks import SinkError, search

    where = f"{target.kind}:{target.path.resolve()}"
    left, right = st.columns([5, 1])
    question = left.text_input(
        "Search it back",
        placeholder="A question about the documents",
        persist_state=PERSIST,
        key=f"{prefix}.sink_question",
    ).strip()
    k = int(right.number_input("Chunks", 1, 50, 5, persist_state=PERSIST, key=f"{prefix}.sink_k"))
    words = ["chunk-explorer", "search", where, question or "question", "-k", str(k)]
    st.code(shlex.join([*words, "--collection", collection]), language="bash")
    if not st.button("Search", key=f"{prefix}.sink_search", disabled=not question):
        return
    try:
        found = search(target, question, k=k, collection=collection)
    except (SinkError, OSError) as exc:
        st.error(str(exc))
        return
    except EmbeddingError as exc:
        st.error(f"The collection's embedding model could not be loaded: {exc}")
        return
    rows = [
        {
            "score": round(hit.score, 3),
            "path": hit.path,
            "chunk": hit.index,
            "start": hit.start,
            "end": hit.end,
            "text": preview(hit.text, 200),
        }
        for hit in found.hits
    ]
    st.caption(f"{len(rows):,} nearest chunks, the question embedded with {found.model}.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"{prefix}.sink_hits")


# ------------------------------------------------------------------ the retrieval lens

#: Session key of the last evaluation's lens, set by the Evaluate page.
LENS_KEY: Final = "lens.shared"


@dataclass(frozen=True, eq=False)
class SharedLens:
    """The last evaluation's lens, for the Map, Explore and Compare pages.

    ``documents`` and ``questions`` are what was evaluated; per configuration (in the
    results table's order) its ``labels``, ``lenses``, the evaluation's ``chunks`` per
    document (context included) and the model name that loads its embedder.
    """

    key: str
    documents: Mapping[str, str]
    questions: tuple[Question, ...]
    labels: tuple[str, ...]
    lenses: tuple[Lens, ...]
    chunks: tuple[Mapping[str, tuple[Chunk, ...]], ...]
    models: tuple[str | None, ...]

    def matching(self, text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, str]]:
        """``(configuration, document)`` pairs whose document is ``text`` cut at exactly
        these chunk ``spans`` (the lens can colour those chunks)."""
        wanted = [[int(a), int(b)] for a, b in spans]
        found = []
        for i, one in enumerate(self.lenses):
            for cid, document in self.documents.items():
                mine = one.spans.get(cid)
                if document == text and mine is not None and mine.tolist() == wanted:
                    found.append((i, cid))
        return found


def share_lens(shared: SharedLens) -> None:
    """Keep the last evaluation's lens for the other pages."""
    st.session_state[LENS_KEY] = shared


def shared_lens() -> SharedLens | None:
    """The last evaluation's lens (from the Evaluate page), if any."""
    found = st.session_state.get(LENS_KEY)
    return found if isinstance(found, SharedLens) else None


def no_lens_notice(what: str) -> None:
    """Say how to get a lens: ``what`` is what it would show here."""
    st.info(
        f"{what} needs an evaluation: on the **Evaluate** page, run a retrieval evaluation "
        "(chroma-eval, or this document with a question file or typed questions); its "
        "lens shows here until the next one."
    )
