"""Strategy controls made from the registry: a strategy box and its parameter widgets
under a key prefix (:func:`config_controls`), the configuration they hold
(:func:`config_from_state`, :func:`build_config`) or one set into them
(:func:`apply_config`), and configurations B to D compared with the sidebar's A
(:func:`comparison_configs`). The sidebar draws them without a prefix.

A size in unit ``model`` counts the tokens of the chosen model (:func:`follow_chosen_model`):
the strategy's own ``model``, or for a strategy without one the "Sizes counted for" model
box (:func:`sizes_model`). The widgets keep showing ``model`` (links and saved widget
states say ``model``); the configuration returned, which pages compute with, says what
it counts (:func:`chunking.embedding.unit.follow_model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from chunking import Config, Strategy, strategies
from chunking.documents.tokenizers import NOT_STORED, check_app_unit, is_stored_unit
from chunking.units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, TOKENIZER_PREFIX
from pages.cached import READERS_KEY
from pages.model_choice import app_model, endpoint_models, model_select
from pages.param_widgets import (
    option_label,
    param_start,
    param_widget,
    tokenizer_upload,
    widget_value,
)
from pages.state import PERSIST, param_key

if TYPE_CHECKING:
    from chunking.embedding.unit import ModelUnit

STRATEGY_KEY = "strategy"
#: Session key (after the prefix) of the "Sizes counted for" model box: the model whose
#: tokens sizes in unit ``model`` count, for a strategy without a model of its own.
UNIT_MODEL_KEY = "unit_model"


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


def config_controls(
    prefix: str = "", default: str | None = None, *, follow: bool = True
) -> Config | str:
    """A strategy selectbox and the selected strategy's parameter widgets; with
    ``follow``, a unit ``model`` resolved for the chosen model (:func:`follow_chosen_model`,
    which may draw the "Sizes counted for" box: without ``follow`` the caller draws it,
    e.g. outside an expander, since the model box holds one)."""
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
    built = build_config(name, read_params(spec, prefix))
    return follow_chosen_model(built, prefix) if follow else built


# ------------------------------------------------------------- the model unit's model


def sizes_model(config: Config, prefix: str = "") -> str | None:
    """The model whose tokens sizes in unit ``model`` count: the strategy's own ``model``
    parameter, or for a strategy without one the "Sizes counted for" model box (drawn
    here, under ``prefix``); None when the unit is not ``model``."""
    if config.unit != "model":
        return None
    if "model" in config.spec.param_names:
        return str(config.params["model"])
    return model_select(f"{prefix}{UNIT_MODEL_KEY}", "Sizes counted for")


def follow_chosen_model(result: Config | str, prefix: str = "") -> Config | str:
    """``result`` with a unit ``model`` counting the chosen model's own tokens
    (:func:`sizes_model`, :func:`follow_model_unit`), whose tokens said in a caption, or
    in a warning when they cannot be counted here or the window is guessed; a message
    (as :func:`build_config` gives) when the model's tokens cannot be read."""
    remember_reader(prefix, None)
    if isinstance(result, str):
        return result
    model = sizes_model(result, prefix)
    if model is None:
        return result
    followed = follow_model_unit(result, model)
    if isinstance(followed, str):
        return followed
    config, how = followed
    if how is not None and how.warning:
        st.warning(f"{how.warning[0].upper()}{how.warning[1:]}.", icon=":material/straighten:")
    elif how is not None:
        read = f"Sizes count {how.counts} (the model reads {how.window:,} of them)."
        st.caption(f"{read}{_sized_for_bundled(how)}")
    if how is not None and config.unit != "model":
        remember_reader(prefix, (config, reader_name(model), how.window))
    return config


def _sized_for_bundled(how: ModelUnit) -> str:
    """What a caption adds when the chosen model reads another window than the bundled
    one: the strategies' default sizes and the sidebar's suggestion stay sized for the
    bundled model's word pieces (they do not follow the chosen model)."""
    from chunking.embedding.unit import BUNDLED_PIECES

    bundled = DEFAULT_MODEL_WINDOW - SPECIAL_TOKENS
    if how.window == bundled:
        return ""
    return (
        f" Default sizes and the sidebar's suggestion are sized for {bundled:,} "
        f"{BUNDLED_PIECES}, not for this model: a size up to {how.window:,} fits it."
    )


def remember_reader(prefix: str, reader: tuple[Config, str, int] | None) -> None:
    """Record (or with None, forget) that the configuration of the controls under
    ``prefix``, its unit resolved for the model named, is read by that model up to the
    window given in that unit: the report then flags the chunks over it
    (:func:`pages.cached.analysis`). One entry per controls, so nothing stale is kept."""
    readers = st.session_state.setdefault(READERS_KEY, {})
    if reader is None:
        readers.pop(prefix, None)
    else:
        config, name, window = reader
        readers[prefix] = (config.to_json(), name, window)


def state_model(config: Config, prefix: str = "") -> str | None:
    """What :func:`sizes_model` gives, read from the session without drawing the model
    box: the strategy's own ``model``, else the "Sizes counted for" box under ``prefix``
    as last set (its default before it is drawn); None when the unit is not ``model``."""
    if config.unit != "model":
        return None
    if "model" in config.spec.param_names:
        return str(config.params["model"])
    chosen = st.session_state.get(f"{prefix}{UNIT_MODEL_KEY}")
    return chosen if isinstance(chosen, str) and chosen.strip() else app_model()


def unit_name(unit: str) -> str:
    """A unit as a configuration's label says it: a model folder's ``tokenizer.json`` as
    that folder's word pieces, another tokenizer file as the unit box shows it (by its
    name, never its path), any other unit as it is."""
    if unit.startswith(TOKENIZER_PREFIX):
        path = Path(unit.removeprefix(TOKENIZER_PREFIX))
        if path.name == "tokenizer.json" and path.parent.name:
            return f"word pieces of {path.parent.name}"
    return option_label(unit)


def config_label(config: Config, *, title: bool = False) -> str:
    """:meth:`chunking.Config.label` with the unit said readably (:func:`unit_name`):
    ``Recursive · 600 word pieces of my-model``, not a tokenizer file's absolute path."""
    text = config.label(title=title)
    named = unit_name(config.unit)
    if config.limit is None or named == config.unit:
        return text
    return text.replace(f"{config.limit} {config.unit}", f"{config.limit} {named}", 1)


def reader_name(model: str) -> str:
    """A chosen model as a warning names it: an endpoint by its model, a folder by its
    name, any other model as it is called."""
    from chunking.embedding.endpoint import EndpointSpec, is_endpoint

    if is_endpoint(model):
        try:
            return EndpointSpec.parse(model).model
        except ValueError:
            return model
    return Path(model).name if Path(model).is_dir() else model


def follow_model_unit(config: Config, model: str) -> tuple[Config, ModelUnit | None] | str:
    """``config`` with its unit ``model`` resolved for ``model``
    (:func:`chunking.embedding.unit.follow_model`) and the resolution, or what is wrong.

    A tokenizer file is read only as a model folder's own ``tokenizer.json``, a tokenizer
    uploaded here, or one given in this session's endpoint box: an endpoint name in a
    link (a strategy's ``model`` parameter) cannot make the server open another file."""
    from chunking.embedding.unit import follow_model, model_unit

    try:
        unit = model_unit(model).unit
        if unit.startswith(TOKENIZER_PREFIX) and not _may_read(unit, model):
            raise ValueError(NOT_STORED)
        return follow_model(config, model)
    except ValueError as exc:
        return f"Invalid configuration: {exc}."


def _may_read(unit: str, model: str) -> bool:
    from chunking.embedding.endpoint import is_endpoint

    if is_stored_unit(unit):
        return True
    return model in endpoint_models() if is_endpoint(model) else Path(model).is_dir()


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
        st.markdown(f"**A · {config_label(first, title=True)}**")
        st.caption("From the sidebar.")
        st.json(first.to_dict()["params"], expanded=False)
    for slot, column in enumerate(columns[1:], start=1):
        letter = LETTERS[slot]
        with column, st.container(border=True):
            st.markdown(f"**{letter}**")
            with st.expander("Settings", expanded=False):
                result = config_controls(
                    prefix=f"{prefix}{letter}.",
                    default=others[(slot - 1) % len(others)],
                    follow=False,
                )
            result = follow_chosen_model(result, f"{prefix}{letter}.")
            if isinstance(result, str):
                st.error(f"{letter}: {result}")
                continue
            st.markdown(config_label(result, title=True))
            configs[letter] = result
    return configs


def config_from_state(prefix: str = "", *, follow: bool = False) -> Config | None:
    """The configuration the widgets under ``prefix`` last held (as drawn by
    :func:`config_controls`), or None when there is none or it is invalid. With
    ``follow``, a unit ``model`` is resolved for the model chosen for them
    (:func:`state_model`), as :func:`follow_chosen_model` does but without drawing; None
    when that model's tokens cannot be read. Without it the unit stays ``model``, as
    links and widgets say it."""
    name = st.session_state.get(f"{prefix}{STRATEGY_KEY}")
    registry = strategies()
    if not isinstance(name, str) or name not in registry:
        return None
    built = build_config(name, read_params(registry[name], prefix))
    if not isinstance(built, Config):
        return None
    model = state_model(built, prefix) if follow else None
    if model is None:
        return built
    followed = follow_model_unit(built, model)
    return followed[0] if not isinstance(followed, str) else None


def apply_config(config: Config, prefix: str = "") -> None:
    """Set the strategy and parameter widgets to ``config`` (a button callback). A unit
    that is the chosen model's resolution (a configuration computed here, e.g. a row of
    Evaluate's results) is set back to ``model``, which the unit box offers."""
    st.session_state[f"{prefix}{STRATEGY_KEY}"] = config.strategy
    for param in config.spec.params:
        key = param_key(config.strategy, param.name, prefix)
        value = config.params[param.name]
        if param.name == "unit" and _is_resolution(config, prefix):
            value = "model"
        st.session_state[key] = widget_value(param, value)


def _is_resolution(config: Config, prefix: str) -> bool:
    """Whether ``config``'s ``tokenizer:`` unit is what unit ``model`` resolves to for
    the model it would be counted for (its own, or the prefix's "Sizes counted for")."""
    unit = config.unit
    if not unit.startswith(TOKENIZER_PREFIX) or is_stored_unit(unit):
        return False
    if "model" in config.spec.param_names:
        model = config.params.get("model")
    else:
        model = st.session_state.get(f"{prefix}{UNIT_MODEL_KEY}")
    if not isinstance(model, str) or not model.strip():
        return False
    from chunking.embedding.unit import model_unit

    try:
        return model_unit(model).unit == unit
    except ValueError:
        return False
