"""Parameter controls made from the registry, for any subset of a strategy's parameters
(:func:`param_controls`, :func:`param_widget`), their values as widgets hold them
(:func:`widget_value`, :func:`param_start`) and the user's tokenizer as a unit
(:func:`tokenizer_upload`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from chunking import Param, get_strategy
from chunking.documents.tokenizers import NOT_STORED, is_stored_unit
from chunking.units import DEFAULT_MODEL, TOKENIZER_PREFIX
from pages.model_choice import app_model
from pages.state import PERSIST
from pages.upload_limits import app_uploader_mb


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
    elif param.pattern and not is_app_unit(st.session_state[key]):
        # a link or a loaded configuration named another file: the default unit instead,
        # said until the user chooses a unit
        st.session_state[key] = st.session_state[f"{key}.refused"] = param_start(param)
    refused = st.session_state.get(f"{key}.refused")
    if refused is not None and refused == st.session_state[key]:
        st.error(NOT_STORED)
    elif refused is not None:
        del st.session_state[f"{key}.refused"]
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
            max_upload_size=app_uploader_mb(),
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


def is_app_unit(value: Any) -> bool:
    """Whether the app may use ``value`` as a unit: anything but a ``tokenizer:`` unit,
    or a tokenizer file this app stored from an upload (nothing else is read, so that a
    shared link cannot make the server open its files)."""
    text = str(value)
    return not text.startswith(TOKENIZER_PREFIX) or is_stored_unit(text)


def param_start(param: Param) -> Any:
    """A parameter's first value in the app: the registry's default, except a strategy's
    embedding model left at the bundled one, which starts at :func:`app_model` as the
    model box does (the command line and the API keep the registry's)."""
    if param.name == "model" and param.kind is str and param.default == DEFAULT_MODEL:
        return app_model()
    return param.fresh_default()
