"""Compare: two to four configurations on the same document."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from chunking.analysis.report import agreement_matrix
from chunking.viz.figures import agreement_heatmap, boundary_strip, histogram_panels
from chunking.viz.render import render_window
from pages import common, kit

COUNT_KEY = "cmp.count"
K_KEY = "cmp.k"
WINDOW_START_KEY = "cmp.window_start"
WINDOW_SIZE_KEY = "cmp.window_size"
WINDOW_SIZES = (1_000, 2_000, 5_000, 10_000)

source = common.require_source()
first = common.require_config()
document = source.document
text = document.text

st.title("Compare")
st.caption(
    f"{common.describe_document(document)} — configuration A is the sidebar's; "
    "set up the others below."
)

# --- configurations ------------------------------------------------------------------
configs = common.comparison_configs(first, "cmp.", COUNT_KEY)

chunked: dict[str, tuple] = {}
for letter, config in configs.items():
    result = common.safe_chunks(source, config)
    if isinstance(result, str):
        st.error(f"{letter}: {result}")
    elif not result:
        st.warning(f"{letter}: this configuration produced no chunks.")
    else:
        chunked[letter] = result
if len(chunked) < 2:
    st.info("Two valid configurations are needed for a comparison; fix the settings above.")
    st.stop()

names = {letter: f"{letter} · {common.short_label(configs[letter])}" for letter in chunked}
analyses = {letter: common.analysis_for(source, configs[letter]) for letter in chunked}

# --- boundaries and sizes ------------------------------------------------------------
lanes = {names[letter]: analyses[letter].boundaries for letter in chunked}
st.plotly_chart(boundary_strip(lanes, len(text)), key="cmp_strip", config={"displaylogo": False})

st.plotly_chart(
    histogram_panels(
        {names[letter]: analyses[letter].sizes[configs[letter].unit] for letter in chunked},
        units={names[letter]: kit.option_label(configs[letter].unit) for letter in chunked},
        limits={names[letter]: configs[letter].limit for letter in chunked},
    ),
    key="cmp_histograms",
    config={"displaylogo": False},
)
st.markdown("**Statistics**")
st.caption(
    "Sizes are in each configuration's own unit; the last columns compare all of them in "
    "cl100k tokens and in the embedding model's word pieces."
)
st.dataframe(
    common.comparison_table({letter: (configs[letter], analyses[letter]) for letter in chunked}),
    key="cmp_stats",
    hide_index=True,
    width="stretch",
)

# --- agreement -----------------------------------------------------------------------
st.subheader("Boundary agreement")
st.session_state.setdefault(K_KEY, 20)
k = int(
    st.slider(
        "Tolerance k (characters)",
        min_value=0,
        max_value=500,
        step=5,
        persist_state=common.PERSIST,
        key=K_KEY,
        help="Two boundaries agree when they are at most k characters apart. The score is "
        "the share of both configurations' boundaries that have a partner in the other.",
    )
)
letters = list(chunked)
matrix = agreement_matrix([analyses[x].boundaries for x in letters], k)
agree_left, agree_right = st.columns([2, 3])
with agree_left:
    frame = pd.DataFrame(matrix, index=letters, columns=letters)
    st.dataframe(frame.style.format("{:.0%}"), key="cmp_agreement")
with agree_right:
    st.plotly_chart(
        agreement_heatmap(letters, matrix, k=k), key="cmp_heatmap", config={"displaylogo": False}
    )

# --- linked text panels --------------------------------------------------------------
st.subheader("Side by side")
st.session_state.setdefault(WINDOW_SIZE_KEY, WINDOW_SIZES[1])
controls = st.columns([1, 3])
size = int(
    controls[0].selectbox(
        "Window (characters)",
        WINDOW_SIZES,
        persist_state=common.PERSIST,
        key=WINDOW_SIZE_KEY,
        format_func=lambda n: f"{n:,}",
    )
)
last_start = max(0, len(text) - size)
common.clamp_state(WINDOW_START_KEY, 0, last_start)
start = (
    int(
        controls[1].slider(
            "Window start (character offset)",
            min_value=0,
            max_value=last_start,
            step=max(1, size // 10),
            persist_state=common.PERSIST,
            key=WINDOW_START_KEY,
            help="All panels show the same stretch of the document.",
        )
    )
    if last_start > 0
    else 0
)
end = min(len(text), start + size)
st.caption(f"Characters {start:,}–{end:,} of {len(text):,}, with each configuration's chunks.")
for column, letter in zip(st.columns(len(chunked)), chunked, strict=True):
    with column:
        st.markdown(f"**{names[letter]}**")
        unit = configs[letter].unit
        st.html(render_window(text, chunked[letter], start, end, unit=unit))

# --- export as code ------------------------------------------------------------------
st.subheader("Export as code")
code_columns = st.columns(len(chunked))
for column, letter in zip(code_columns, chunked, strict=True):
    with column:
        st.markdown(f"**{names[letter]}**")
        kit.code_export(configs[letter], key=f"cmp.code.{letter}")
