"""The peer of ``bench.bench_render``: a Streamlit page doing Explore's server work for a
size change (the default sample chunked with the sidebar's size, as the core counts it)
but drawing only the count, so that the browser's part of a size change can be told
from Streamlit's own. Run by the bench with ``streamlit run``; not part of the app."""

from __future__ import annotations

import streamlit as st

from bench.load.common import app_default, expected_count, sample_path
from chunking.documents.io import read_path

size = st.sidebar.number_input("size", 1, 100_000, int(app_default().params["size"]))
st.title("Minimal")
st.metric("Chunks", expected_count(read_path(sample_path()).text, int(size)))
