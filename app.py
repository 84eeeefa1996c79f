"""Chunk Explorer: see how RAG chunking strategies cut your documents.

Run with ``streamlit run app.py``. This script draws the shared sidebar (document input
and strategy controls, stateful across pages) and routes to the pages with
``st.navigation``.
"""

from __future__ import annotations

import streamlit as st

from chunking.embedding import projection as maps
from pages import sidebar, widgets

st.set_page_config(
    page_title="Chunk Explorer",
    page_icon="✂️",
    layout="wide",
    initial_sidebar_state="expanded",
)
sidebar.apply_url_once()
widgets.inject_css()

# Page files end in "_page" and are served under shorter URL paths on purpose: on a
# server's first run, and in every AppTest run, Streamlit 1.67 still treats a folder
# called pages/ as a legacy multipage folder and would run a page whose file name
# matches the requested URL directly, without this script (no sidebar, no document).
# With names that never match, it falls back to this script, which routes correctly.
# The default page (the tour, served at /) keeps an explicit url_path for the same
# reason: without one, its path would be inferred from the file name.
maps.warm_up()  # compile UMAP's numba code in the background, once per process
navigation = st.navigation(
    [
        st.Page(
            "pages/tour_page.py",
            title="Guided tour",
            icon=":material/school:",
            url_path="tour",
            default=True,
        ),
        st.Page(
            "pages/explore_page.py",
            title="Explore",
            icon=":material/view_agenda:",
            url_path="explore",
        ),
        st.Page(
            "pages/compare_page.py",
            title="Compare",
            icon=":material/compare_arrows:",
            url_path="compare",
        ),
        st.Page(
            "pages/corpus_page.py",
            title="Corpus",
            icon=":material/library_books:",
            url_path="corpus",
        ),
        st.Page(
            "pages/semantic_page.py",
            title="Semantic",
            icon=":material/show_chart:",
            url_path="semantic",
        ),
        st.Page(
            "pages/map_page.py",
            title="Embedding map",
            icon=":material/scatter_plot:",
            url_path="map",
        ),
        st.Page(
            "pages/evaluate_page.py",
            title="Evaluate",
            icon=":material/fact_check:",
            url_path="evaluate",
        ),
        st.Page(
            "pages/llm_page.py",
            title="LLM tools",
            icon=":material/smart_toy:",
            url_path="llm",
        ),
    ]
)
with st.sidebar:
    source = sidebar.document_input()
    config = sidebar.strategy_controls(source)
sidebar.write_url(source, config)
sidebar.tour_hint(navigation.url_path)
navigation.run()
