"""Chunk Explorer: see how RAG chunking strategies cut your documents.

Run with ``python app.py`` (Streamlit's options may follow, e.g. ``--server.port 8502``)
or ``chunk-explorer app``. This script draws the shared sidebar (document input and
strategy controls, stateful across pages) and routes to the pages with ``st.navigation``.
"""

from __future__ import annotations

import sys

from streamlit import runtime

if __name__ == "__main__" and not runtime.exists():
    # Started as ``python app.py``: serve this script, in this process. Streamlit 1.67
    # decides once per process, when the first browser session opens, whether the app
    # is a legacy multipage app: it is when a folder named pages/ sits next to the main
    # script (PagesManager.uses_pages_directory). That first run then builds a
    # navigation from the file names in pages/ (tour_page, explore_page, ...), finds no
    # page for a bookmarked /explore, sends "Page not found" and only then runs this
    # script, whose st.navigation below opens the right page under the dialog. Every
    # later run is routed by st.navigation alone, which also clears the flag. Clearing it
    # before the server starts makes the first run like every other; ``streamlit run
    # app.py`` still works, with that dialog on a fresh server's first deep link.
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from chunking.runtime.memory import limit_malloc_arenas

    limit_malloc_arenas()  # sessions' threads share arenas: memory freed is reused
    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", __file__, *sys.argv[1:]]
    sys.exit(cli.main())

import streamlit as st

from chunking.embedding import projection as maps
from pages import sidebar, text_view

st.set_page_config(
    page_title="Chunk Explorer",
    page_icon="✂️",
    layout="wide",
    initial_sidebar_state="expanded",
)
sidebar.apply_url_once()
text_view.inject_css()

# Page files end in "_page" and are served under shorter URL paths on purpose: in every
# AppTest run, and on the first run of a server started with ``streamlit run`` (see the
# top of this file), Streamlit 1.67 treats a folder called pages/ as a legacy multipage
# folder and would run a page whose file name matches the requested URL directly,
# without this script (no sidebar, no document). With names that never match, it falls
# back to this script, which routes correctly.
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
        st.Page("pages/tune_page.py", title="Tune", icon=":material/tune:", url_path="tune"),
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
