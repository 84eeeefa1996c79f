"""Test-only entry script: app.py's sidebar and routing with the Guided tour, Semantic and
Map pages added, for testing those pages before app.py lists them.

Once app.py's ``st.navigation`` holds the same pages, the tests run against app.py
instead (see ``tests/test_app_semantic.py``) and this file is no longer needed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from chunking import maps  # noqa: E402
from pages import common  # noqa: E402

PAGES = ROOT / "pages"

st.set_page_config(page_title="Chunk Explorer (test)", layout="wide")
common.keep_page_state()
common.apply_url_once()
common.inject_css()
maps.warm_up()
navigation = st.navigation(
    [
        st.Page(PAGES / "home.py", title="Guided tour", url_path="tour", default=True),
        st.Page(PAGES / "explore_page.py", title="Explore", url_path="explore"),
        st.Page(PAGES / "compare_page.py", title="Compare", url_path="compare"),
        st.Page(PAGES / "semantic_page.py", title="Semantic", url_path="semantic"),
        st.Page(PAGES / "map_page.py", title="Map", url_path="map"),
    ]
)
with st.sidebar:
    source = common.document_input()
    config = common.strategy_controls(source)
common.write_url(source, config)
navigation.run()
