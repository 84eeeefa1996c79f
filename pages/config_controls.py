"""Strategy controls made from the registry: a strategy box and its parameter widgets
under a key prefix (:func:`config_controls`), the configuration they hold
(:func:`config_from_state`, :func:`build_config`) or one set into them
(:func:`apply_config`), and configurations B to D compared with the sidebar's A
(:func:`comparison_configs`). The sidebar draws them without a prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from chunking import Config, Strategy, strategies
from chunking.documents.tokenizers import check_app_unit
from pages.param_widgets import param_start, param_widget, tokenizer_upload, widget_value
from pages.state import PERSIST, param_key

STRATEGY_KEY = "strategy"


# ------------------------------------------------------------------- strategy controls


def read_params(spec: Strategy, prefix: str = "") -> dict[str, Any]:
    """The values of a strategy's widgets, as last drawn."""
    return {
        p.name: st.session_state.get(param_key(spec.name, p.name, prefix), p.default)
        for p in spec.params
    }


def build_config(strategy: str, values: Mapping[str, Any]) -> Config | str:
    """A validated Config, or the core's message saying what to change (a tokenizer file
    this app did not store is refused before it is read)."""
    try:
        check_app_unit(str(values.get("unit", "")))
        return Config.create(strategy, **values)
    except ValueError as exc:
        return f"Invalid configuration: {exc}."


def config_controls(prefix: str = "", default: str | None = None) -> Config | str:
    """A strategy selectbox and the selected strategy's parameter widgets."""
    registry = strategies()
    names = list(registry)
    key = f"{prefix}{STRATEGY_KEY}"
    st.session_state.setdefault(key, default if default in registry else names[0])
    name = (
        st.selectbox(
            "Strategy",
            names,
            persist_state=PERSIST,
            key=key,
            format_func=lambda n: registry[n].label,
            help="How the document is cut. Each strategy's parameters appear below. "
            "Switching keeps the unit, the size and an overlap in that unit where the new "
            "strategy takes them.",
            on_change=_keep_size_on_switch,
            args=(prefix,),
        )
        or names[0]
    )
    st.session_state[f"{prefix}{_DRAWN}"] = name
    spec = registry[name]
    st.caption(spec.description)
    kept = st.session_state.get(f"{prefix}{_KEPT}")
    if kept is not None and kept[0] == name:
        st.caption(kept[1])
    for param in spec.params:
        param_widget(param, param_key(name, param.name, prefix))
        if param.name == "unit" and param.pattern and not prefix:
            tokenizer_upload(param_key(name, param.name, prefix))
    return build_config(name, read_params(spec, prefix))


#: Session keys (after the prefix): the strategy the box last drew, and what a switch
#: kept (the new strategy and the sentence saying so).
_DRAWN = "_strategy_drawn"
_KEPT = "_strategy_kept"


def _keep_size_on_switch(prefix: str) -> None:
    """The strategy box's callback: the new strategy keeps the old one's unit, size and
    overlap where it takes them (:func:`chunking.analysis.recommend.carried_over`)."""
    from chunking.analysis.recommend import carried_over

    registry = strategies()
    old = st.session_state.get(f"{prefix}{_DRAWN}")
    new = st.session_state.get(f"{prefix}{STRATEGY_KEY}")
    st.session_state.pop(f"{prefix}{_KEPT}", None)
    if not isinstance(old, str) or not isinstance(new, str):
        return
    if old not in registry or new not in registry:
        return
    before, after = registry[old], registry[new]
    started = {p.name: param_start(p) for p in before.params}
    values, current = read_params(before, prefix), read_params(after, prefix)
    kept = carried_over(before, values, after, current, started)
    for name, value in kept.items():
        st.session_state[param_key(new, name, prefix)] = widget_value(after.param(name), value)
    if kept:
        said = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in kept.items())
        st.session_state[f"{prefix}{_KEPT}"] = (new, f"Kept from {before.label}: {said}.")


#: The names of compared configurations; A is always the sidebar's.
LETTERS = "ABCD"


def comparison_configs(first: Config, prefix: str, count_key: str) -> dict[str, Config]:
    """The configurations to compare, by letter: A is the sidebar's (``first``), B to D
    are set up in columns (how many: a number input under ``count_key``), each with its
    own widgets under ``prefix`` + letter; one that is invalid shows its error in its
    column and is left out."""
    st.session_state.setdefault(count_key, 2)
    count = int(
        st.columns([1, 3])[0].number_input(
            "Configurations",
            min_value=2,
            max_value=len(LETTERS),
            step=1,
            persist_state=PERSIST,
            key=count_key,
        )
    )
    others = [name for name in strategies() if name != first.strategy] or [first.strategy]
    configs = {"A": first}
    columns = st.columns(count)
    with columns[0], st.container(border=True):
        st.markdown(f"**A · {first.label(title=True)}**")
        st.caption("From the sidebar.")
        st.json(first.to_dict()["params"], expanded=False)
    for slot, column in enumerate(columns[1:], start=1):
        letter = LETTERS[slot]
        with column, st.container(border=True):
            st.markdown(f"**{letter}**")
            with st.expander("Settings", expanded=False):
                result = config_controls(
                    prefix=f"{prefix}{letter}.", default=others[(slot - 1) % len(others)]
                )
            if isinstance(result, str):
                st.error(f"{letter}: {result}")
                continue
            st.markdown(result.label(title=True))
            configs[letter] = result
    return configs


def config_from_state(prefix: str = "") -> Config | None:
    """The configuration the widgets under ``prefix`` last held (as drawn by
    :func:`config_controls`), or None when there is none or it is invalid."""
    name = st.session_state.get(f"{prefix}{STRATEGY_KEY}")
    registry = strategies()
    if not isinstance(name, str) or name not in registry:
        return None
    built = build_config(name, read_params(registry[name], prefix))
    return built if isinstance(built, Config) else None


def apply_config(config: Config, prefix: str = "") -> None:
    """Set the strategy and parameter widgets to ``config`` (a button callback)."""
    st.session_state[f"{prefix}{STRATEGY_KEY}"] = config.strategy
    for param in config.spec.params:
        key = param_key(config.strategy, param.name, prefix)
        st.session_state[key] = widget_value(param, config.params[param.name])
