"""From a results row to the text: open its configuration in Explore, or add it to
Compare, with the document it was evaluated on (:func:`row_actions`).

The buttons' callback (:func:`send`) sets the sidebar's widgets (or configuration B's)
before they are drawn on the next run and opens the document in the sidebar; the page
then calls :func:`follow` first thing, which switches to the page asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import streamlit as st

from chunking import Config
from chunking.documents.io import read_bytes
from pages import config_controls, sidebar, state

EXPLORE: Final = "pages/explore_page.py"
COMPARE: Final = "pages/compare_page.py"
#: Configuration B's widgets on the Compare page (:func:`config_controls.comparison_configs`).
COMPARE_PREFIX: Final = "cmp.B."
_GO_KEY: Final = "_handover.go"


def send(config: Config, go: str, document: tuple[str, str] | None = None) -> None:
    """A button callback: ``config`` becomes the sidebar's (for Compare: configuration
    B's, A staying the sidebar's), ``document`` (name, text) the sidebar's document when
    given; the next run switches to ``go`` (:func:`follow`)."""
    if go == COMPARE:
        config_controls.apply_config(config, prefix=COMPARE_PREFIX)
    else:
        config_controls.apply_config(config)
    if go == EXPLORE:  # the boundaries first, where an evaluation's traffic is drawn
        state.open_tab(state.EXPLORE_TAB_KEY, state.EXPLORE_TABS[0])
    if document is not None:
        name, text = document
        stem = name if "." in name else f"{name}.md"
        sidebar.open_document(read_bytes(text.encode("utf-8"), stem))
    st.session_state[_GO_KEY] = go


def follow() -> None:
    """Switch to the page a :func:`send` asked for (call it first in a page's run)."""
    go = st.session_state.pop(_GO_KEY, None)
    if isinstance(go, str):
        st.switch_page(go)


def document_to_open(documents: Mapping[str, str], key: str) -> tuple[str, str] | None:
    """The document to hand over with a row: ``None`` when the sidebar's document is
    the only one evaluated; else one chosen in a box when there are several."""
    names = list(documents)
    source = sidebar.current_source()
    if len(names) == 1 and source is not None and source.document.text == documents[names[0]]:
        return None
    if len(names) == 1:
        return names[0], documents[names[0]]
    if st.session_state.get(key) not in names:
        st.session_state[key] = names[0]
    name = str(st.selectbox("Document to open", names, persist_state=state.PERSIST, key=key))
    return name, documents[name]


def row_actions(
    configs: Sequence[Config | None],
    selected: int | None,
    key: str,
    documents: Mapping[str, str] | None = None,
    compare: bool = True,
) -> None:
    """The "Open in Explore" and "Add to Compare" buttons for the row ``selected`` of a
    table whose rows are ``configs`` (disabled until a row with a configuration is
    selected), handing over a document of ``documents`` (none: the sidebar's stays)."""
    chosen = configs[selected] if selected is not None and 0 <= selected < len(configs) else None
    document = document_to_open(documents, f"{key}.document") if documents else None
    if chosen is None:
        what = "in Explore or add it to Compare" if compare else "in Explore"
        st.caption(f"Select a row to open its configuration {what}.")
    else:
        st.caption(f"Selected: {config_controls.config_label(chosen)}")
    left, right, _ = st.columns([1, 1, 3])
    left.button(
        "Open in Explore",
        key=f"{key}.explore",
        disabled=chosen is None,
        on_click=send,
        args=(chosen, EXPLORE, document),
        help="Sets the sidebar to this configuration (and document), then opens Explore.",
    )
    if compare:
        right.button(
            "Add to Compare",
            key=f"{key}.compare",
            disabled=chosen is None,
            on_click=send,
            args=(chosen, COMPARE, document),
            help="Sets configuration B to it (A stays the sidebar's), then opens Compare.",
        )
