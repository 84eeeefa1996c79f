"""The load benchmark's parts (``python -m bench.bench_load`` is its command).

``common``: what both kinds of client share (the expected counts, the phases' figures, the
CPU accounting); ``browser``: sessions in headless Chromium (Playwright); ``protocol``:
sessions speaking Streamlit's websocket protocol, without a browser.
"""
