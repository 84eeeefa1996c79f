"""The boundary view: the chunks drawn on the document a page at a time
(:func:`paged_text`), and its style sheet (:func:`inject_css`).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from chunking import Chunk
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
from pages.cached import bounded
from pages.state import PERSIST, clamp_state


def inject_css() -> None:
    """The boundary view's style sheet (a style-only st.html takes no space)."""
    st.html(f"<style>{BOUNDARY_CSS}</style>")


@bounded("page_html")
def _page_html(
    cache_key: str,
    number: int,
    unit: str,
    selected: int | None,
    _text: str,
    _shown: Sequence[Chunk],
    _page: Page,
) -> str:
    return render_page(_text, _shown, _page, unit=unit, selected=selected)


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
    selected: int | None = None,
) -> Page:
    """The chunks drawn on the document a page at a time, with the page number input
    (bound to ``key``); returns the page shown.

    With ``cache_key`` (what identifies ``text`` and ``shown``, e.g. text hash and
    configuration JSON), each page's HTML is built once per process, not on every rerun.
    ``heat`` and ``gold`` colour it by the retrieval lens
    (:func:`chunking.viz.render.render_window`); such a page is not cached. The
    ``selected`` chunk (an index) is outlined, as on a PDF's page view.
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
    if selected is not None and not page.first <= selected < page.last:
        selected = None  # not drawn here: the cached page stays the plain one
    if heat is not None or gold:
        st.html(render_page(text, shown, page, unit=unit, heat=heat, gold=gold, selected=selected))
    elif cache_key is None:
        st.html(render_page(text, shown, page, unit=unit, selected=selected))
    else:
        st.html(_page_html(cache_key, page.number, unit, selected, text, shown, page))
    return page
