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
from pages.state import PERSIST, param_key, set_state

if TYPE_CHECKING:
    from chunking.embedding.endpoint import EndpointSpec
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
        help="minilm-onnx-int8 is the same model, about twice as fast on this machine "
        "(int8 weights, cosine at least 0.98 to the reference): the default once it is "
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
        why = f"{registry.ONNX_INT8} is the same model, about twice as fast as torch"
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


# ------------------------------------------------------------------ embedding endpoints

#: Session keys: the endpoints added as model choices (model names ``URL#MODEL…``,
#: never a key), and the hosts other than this machine the user agreed to send
#: documents to in this session.
ENDPOINTS_KEY = "_ce_endpoints"
HOSTS_KEY = "_ce_endpoint_hosts"
#: Session key: the prices the user gave per endpoint model (``URL#MODEL`` → US$ per
#: million tokens), used by every cost caption; kept for the session, never in a link.
PRICES_KEY = "_ce_endpoint_prices"


def endpoint_models() -> list[str]:
    """The endpoints added in this session, as model names."""
    return list(st.session_state.get(ENDPOINTS_KEY, ()))


def endpoint_box(key: str, *, in_form: bool = False) -> str | None:
    """An expander adding an OpenAI-compatible embeddings endpoint as a choice of the
    model widget ``key``: chosen at once with its button; in a form (no button there),
    returned as a model name once its URL and model are filled in (None otherwise)."""
    from chunking.embedding.endpoint import TOKENIZERS

    with st.expander("Add an embeddings endpoint (OpenAI-compatible)"):
        left, right = st.columns(2)
        left.text_input(
            "Endpoint URL",
            key=f"{key}_embed_url",
            persist_state=PERSIST,
            placeholder="http://localhost:11434/v1",
            help="Ollama, vLLM, Text Embeddings Inference, LM Studio or OpenAI.",
        )
        right.text_input(
            "Model",
            key=f"{key}_embed_model",
            placeholder="nomic-embed-text",
            persist_state=PERSIST,
        )
        left, middle, right = st.columns(3)
        left.text_input(
            "Key variable",
            key=f"{key}_embed_key_env",
            persist_state=PERSIST,
            placeholder="OPENAI_API_KEY",
            help="The environment variable holding the key, on the machine running the app. "
            "The key itself is never typed here, shown or saved.",
        )
        middle.number_input(
            "Window (tokens)",
            min_value=0,
            value=0,
            key=f"{key}_embed_window",
            persist_state=PERSIST,
            help="Tokens of a text the model reads; 0: known for OpenAI's models, else 512.",
        )
        right.text_input(
            "Tokenizer",
            key=f"{key}_embed_tokenizer",
            persist_state=PERSIST,
            placeholder="cl100k",
            help=f"What its tokens are counted with: {', '.join(TOKENIZERS)}. Empty: known "
            "for OpenAI's models, else cl100k.",
        )
        price_box(key, in_form=in_form)
        if not in_form:
            st.button(
                "Use this endpoint", key=f"{key}_embed_use", on_click=_use_endpoint, args=(key,)
            )
        st.caption(
            "A document is sent to a host other than this machine only after you confirm "
            "that host, once per session; the cost is estimated before embedding."
        )
        if in_form:
            if not st.session_state.get(f"{key}_embed_url"):
                return None
            name = _add_endpoint(key, choose=False)
        else:
            name = None
        problem = st.session_state.get(f"{key}_embed_error")
        if problem:
            st.error(problem)
        return name


def _box_spec(key: str) -> EndpointSpec | None:
    """The endpoint the box ``key`` names now (None while its URL or model is missing
    or wrong: adding it says what is wrong)."""
    from chunking.embedding.endpoint import EndpointSpec

    value = st.session_state.get
    url, model = str(value(f"{key}_embed_url") or ""), str(value(f"{key}_embed_model") or "")
    if not url.strip() or not model.strip():
        return None
    try:
        return EndpointSpec(url, model)
    except ValueError:
        return None


def given_price(spec: EndpointSpec) -> float | None:
    """The price the user gave for ``spec``'s model in this session (None: not given)."""
    return st.session_state.get(PRICES_KEY, {}).get(spec.cache_name)


def default_price(spec: EndpointSpec) -> float | None:
    """What the price box starts at for ``spec``: the price given in this session, else
    the known model's dated price, else nothing (unknown)."""
    given = given_price(spec)
    if given is not None:
        return given
    return spec.known.price if spec.known is not None else None


def price_box(key: str, *, in_form: bool = False) -> None:
    """The endpoint box's "Price (US$ per million tokens)": it starts at the model's
    price (:func:`default_price`) and follows the model typed in until the user changes
    it; what the user sets is kept per endpoint model for the session
    (:data:`PRICES_KEY`) and used by every cost caption (:func:`endpoint_cost`), with
    where it comes from. In a form (no callbacks there) it is kept when submitted."""
    from chunking.embedding.endpoint import PRICES_DATE

    price_key, seeded_key = f"{key}_embed_price", f"{key}_embed_price_seeded"
    spec = _box_spec(key)
    if spec is not None:
        seeded = st.session_state.get(seeded_key)
        current = st.session_state.get(price_key)
        stored = spec.cache_name in st.session_state.get(PRICES_KEY, {})
        if seeded is None or seeded[0] != spec.cache_name:
            untouched = seeded is None or current == seeded[1]
            if untouched or (stored and not in_form):
                st.session_state[price_key] = default_price(spec)
        elif stored and not in_form:  # another box may have set it since
            st.session_state[price_key] = given_price(spec)
        st.session_state[seeded_key] = (spec.cache_name, st.session_state.get(price_key))
    known = spec.known if spec is not None else None
    st.number_input(
        "Price (US$ per million tokens)",
        min_value=0.0,
        value=None,
        step=0.01,
        format="%.4f",
        key=price_key,
        persist_state=PERSIST,
        on_change=None if in_form else _keep_price,
        args=None if in_form else (key,),
        placeholder="unknown",
        help="What the provider charges for a million tokens sent, for the cost shown "
        "before embedding. It starts at the known price of OpenAI's models "
        f"({PRICES_DATE}; check the provider's page) and is empty (unknown) for others; "
        "a server on this machine costs nothing. Kept for this session only.",
    )
    if in_form:
        _keep_price(key)
    if spec is not None:
        price = st.session_state.get(price_key)
        if price is not None and given_price(spec) is not None:
            st.caption(f"Price for {spec.model}: ${price:g} per million tokens (given).")
        elif known is not None and known.price is not None:
            st.caption(
                f"Price for {spec.model}: ${known.price:g} per million tokens "
                f"({known.what}'s price of {PRICES_DATE})."
            )


def _keep_price(key: str) -> None:
    """Keep the price box's value for the box's endpoint model: a price that differs
    from the known one is "given"; the known one, or none, is not."""
    spec = _box_spec(key)
    if spec is None:
        return
    price = st.session_state.get(f"{key}_embed_price")
    prices = dict(st.session_state.get(PRICES_KEY, {}))
    known = spec.known.price if spec.known is not None else None
    if price is None or price == known:
        prices.pop(spec.cache_name, None)
    else:
        prices[spec.cache_name] = float(price)
    st.session_state[PRICES_KEY] = prices
    st.session_state[f"{key}_embed_price_seeded"] = (spec.cache_name, price)


def _use_endpoint(key: str) -> None:
    _keep_price(key)
    _add_endpoint(key)


def _add_endpoint(key: str, choose: bool = True) -> str | None:
    """The endpoint of the box's fields, added to the choices (and chosen in the model
    widget ``key`` with ``choose``); None after keeping what is wrong for the box."""
    from chunking.embedding.endpoint import endpoint_spec

    value = st.session_state.get
    try:
        spec = endpoint_spec(
            str(value(f"{key}_embed_url") or ""),
            str(value(f"{key}_embed_model") or ""),
            key_env=str(value(f"{key}_embed_key_env") or "").strip() or None,
            window=int(value(f"{key}_embed_window") or 0) or None,
            tokenizer=str(value(f"{key}_embed_tokenizer") or "").strip() or None,
        )
    except ValueError as exc:
        st.session_state[f"{key}_embed_error"] = str(exc)
        return None
    st.session_state[f"{key}_embed_error"] = ""
    st.session_state[ENDPOINTS_KEY] = list(dict.fromkeys([*endpoint_models(), spec.name]))
    if choose:
        st.session_state[key] = spec.name
    return spec.name


def endpoint_allowed(model: str) -> bool:
    """Whether ``model`` may be sent documents now: any model but an endpoint on another
    host than this machine, which needs the user to confirm that host once per session
    (asked here, with a button; nothing is sent until then)."""
    from chunking.embedding.endpoint import EndpointSpec, is_endpoint

    if not is_endpoint(model):
        return True
    try:
        spec = EndpointSpec.parse(model)
    except ValueError:
        return True  # loading it says what is wrong
    if spec.is_local or spec.host in st.session_state.get(HOSTS_KEY, ()):
        return True
    st.warning(
        f"**{model_label(model)}** would receive this document's text: {spec.host} is not "
        "this machine. Nothing is sent until you agree, once for this host in this session.",
        icon=":material/public:",
    )
    st.button(
        f"Send documents to {spec.host}",
        key=f"_ce_send_to_{spec.host}",
        on_click=_confirm_host,
        args=(spec.host,),
        type="primary",
    )
    return False


def _confirm_host(host: str) -> None:
    st.session_state[HOSTS_KEY] = {*st.session_state.get(HOSTS_KEY, ()), host}


def endpoint_cost(embedder: Embedder, texts: Sequence[str]) -> None:
    """For an endpoint, the estimated cost of embedding ``texts`` (what is not cached),
    at the price given in the endpoint box (:func:`given_price`), else the known one."""
    from chunking.embedding.endpoint import EndpointEmbedder, estimate_cost

    if isinstance(embedder, EndpointEmbedder):
        cost = estimate_cost(embedder, texts, given_price(embedder.spec))
        give = "in the endpoint box (Price, US$ per million tokens)"
        st.caption(f"Embedding cost: {cost.describe(give)}")


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
