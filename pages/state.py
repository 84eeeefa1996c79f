"""Session state the pages share: :data:`PERSIST` (every keyed widget passes it),
:func:`set_state`, :func:`clamp_state`, widget keys (:func:`param_key`), settings handed
from one page to another (:func:`hand_over`, :func:`take_over`), limits read from the
environment (:func:`env_limit`) and the last evaluation's lens (:class:`SharedLens`).

Nothing here draws more than a notice; nothing knows the sidebar.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import streamlit as st

from chunking import Chunk

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_expander_container import ExpanderContainer
    from streamlit.elements.lib.mutable_tab_container import TabContainer

    from chunking.evaluation.lens import Lens
    from chunking.evaluation.questions import Question


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


def _kept(key: str) -> str:
    """Where a lazy expander's or tabs' open state outlives its widget's (page changes)."""
    return f"_ce_open.{key}"


def _asked(key: str) -> str:
    return f"_ce_ask.{key}"


def lazy_expander(label: str, key: str) -> ExpanderContainer:
    """An expander whose content the caller draws only while it is ``.open`` (a closed
    one costs the rerun and the browser nothing), open again when its page is shown
    again: Streamlit drops an expander's state with its page, so it is kept here too."""
    kept = _kept(key)

    def remember() -> None:
        st.session_state[kept] = bool(st.session_state.get(key))

    return st.expander(
        label, expanded=bool(st.session_state.get(kept)), key=key, on_change=remember
    )


def lazy_tabs(labels: Sequence[str], key: str) -> dict[str, TabContainer]:
    """Tabs whose content the caller draws only for the ``.open`` one (a rerun redraws
    that tab alone), by label; the open tab is kept while other pages are shown and can
    be chosen beforehand with :func:`open_tab`."""
    kept = _kept(key)
    asked = st.session_state.pop(_asked(key), None)
    if asked in labels:  # before the widget is drawn, as Streamlit allows
        st.session_state[key] = st.session_state[kept] = asked

    def remember() -> None:
        st.session_state[kept] = st.session_state.get(key)

    if key in st.session_state:  # the widget's own state (a default would be ignored)
        tabs = st.tabs(labels, key=key, on_change=remember)
    else:  # first drawn, or again after another page: the tab last open
        chosen = st.session_state.get(kept)
        default = chosen if chosen in labels else None
        tabs = st.tabs(labels, key=key, on_change=remember, default=default)
    return dict(zip(labels, tabs, strict=True))


def open_tab(key: str, label: str) -> None:
    """Show ``label`` the next time the tabs of :func:`lazy_tabs` ``key`` are drawn."""
    st.session_state[_asked(key)] = label


#: Explore's sections below its counts, one tab each (:func:`lazy_tabs`): only the open
#: one is drawn, so a size change redraws the counts and one section. Other pages (the
#: tour) choose the tab a link opens with :func:`open_tab`.
EXPLORE_TAB_KEY: Final = "explore.tab"
EXPLORE_TABS: Final = ("Boundaries", "Sizes", "Chunks", "Where would you cut?", "Download and code")


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
