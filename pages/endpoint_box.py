"""Embedding endpoints in the app: the box that adds an OpenAI-compatible endpoint as a
model choice (:func:`endpoint_box`), its price (:func:`price_box`, :func:`given_price`),
the once-per-session confirmation of a host other than this machine
(:func:`endpoint_allowed`) and the cost shown before embedding (:func:`endpoint_cost`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st

from chunking.embedding.models import Embedder
from pages.state import PERSIST

if TYPE_CHECKING:
    from chunking.embedding.endpoint import EndpointSpec


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
        f"**{spec.model} at {spec.host}** would receive this document's text: {spec.host} is not "
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
