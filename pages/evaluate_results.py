"""The Evaluate page's results: the scores table with its lens columns and downloads
(:func:`results_view`), the advice (:func:`advice_view`) and one question inspected, its
hits and misses (:func:`question_view`, :func:`hit_table`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from chunking import Config
from chunking.evaluation import (
    METRIC_LABELS,
    METRICS,
    as_spans,
    overlap,
)
from chunking.evaluation.advice import report
from chunking.evaluation.lens import (
    SUMMARY_COLUMNS,
    Lens,
    display_columns,
    with_lens_columns,
)
from chunking.evaluation.stats import RESAMPLES
from chunking.evaluation.sweep import (
    COLUMN_LABELS,
    INTERVAL_METRICS,
    SHARE_COLUMNS,
    Digest,
    Snapshot,
    labelled_table,
    models_side_by_side,
)
from chunking.viz.evaluation import (
    metrics_vs_size,
    question_scores,
)
from chunking.viz.evidence import EVIDENCE_CSS, LEGEND_HTML, evidence_html
from pages import config_controls, exports, handover, state
from pages.evaluate_questions import P, QuestionSet, question_select


def show_table(table: pd.DataFrame, key: str, shares: Sequence[str] = ()) -> None:
    """A table with every row and column visible (the height fits the rows, the width
    the page); ``shares`` (columns in [0, 1]) shown as percentages."""
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=38 + 35 * len(table),
        column_config={c: st.column_config.NumberColumn(format="percent") for c in shares},
        key=key,
    )


def select_table(table: pd.DataFrame, key: str, shares: Sequence[str] = ()) -> int | None:
    """:func:`show_table` with one row selectable: the selected row's position."""
    event = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=38 + 35 * len(table),
        column_config={c: st.column_config.NumberColumn(format="percent") for c in shares},
        key=key,
        on_select="rerun",
        selection_mode="single-row",
    )
    rows = list(event.selection.rows) if event is not None else []
    return int(rows[0]) if rows else None


def row_configs(result: Digest) -> list[Config | None]:
    """The configuration of each results row (the table's rows are the snapshots'),
    None for one evaluated without a configuration."""
    return [Config.from_json(s.config_json) if s.config_json else None for s in result.snapshots]


def share_labels(table: pd.DataFrame) -> list[str]:
    """The labelled results table's columns that hold shares."""
    return [c for c in labelled_table(table[list(SHARE_COLUMNS)]).columns]


#: The labels of the interval columns (``Recall 95 % low``, ...).
INTERVAL_LABELS = tuple(
    COLUMN_LABELS[f"{m}_ci_{s}"] for m in INTERVAL_METRICS for s in ("low", "high")
)

#: The results table's leading columns: what names a configuration, then its recall;
#: the lens's miss reasons follow them, so that they are in view without scrolling.
LEADING_COLUMNS = tuple(
    COLUMN_LABELS[c] for c in ("strategy", "size", "overlap", "unit", "threshold", "recall_mean")
)


def lens_first(shown: pd.DataFrame, lens_columns: Sequence[str]) -> pd.DataFrame:
    """``shown`` (the labelled results table) with the configuration's name and recall
    first, then ``lens_columns``, then the rest in their order."""
    leading = [c for c in LEADING_COLUMNS if c in shown]
    first = [*leading, *(c for c in lens_columns if c not in leading)]
    return shown[[*first, *(c for c in shown.columns if c not in first)]]


def results_view(
    result: Digest,
    counts: tuple[int, int],
    seen: Sequence[Lens] = (),
    documents: Mapping[str, str] | None = None,
) -> None:
    """The results table (a row selected opens in Explore or Compare with one of
    ``documents``), its notes, downloads and chart."""
    table = with_lens_columns(result.table, seen) if seen else result.table
    shown = labelled_table(table.drop(columns=list(SUMMARY_COLUMNS), errors="ignore"))
    lens_columns = display_columns(table)
    for column, values in lens_columns.items():
        shown[column] = values
    shown = readable_units(shown)
    selected = select_table(
        lens_first(shown, list(lens_columns)), f"{P}results", share_labels(table)
    )
    handover.row_actions(row_configs(result), selected, f"{P}row", documents)
    if any(c in shown for c in INTERVAL_LABELS):
        st.caption(
            "**95 % low / high**: the 95 % bootstrap interval of the mean over the questions "
            f"({RESAMPLES:,} resamples of the questions). Two rows whose intervals overlap "
            "may not really differ on these questions; the Tune page tests such differences."
        )
    if display_columns(table):
        st.caption(
            "Missed gold spans by reason: **cut by a boundary** (no chunk holds the answer "
            "whole), **truncated** (it lies past the model's window inside its chunk), "
            "**out-ranked** (a chunk holds it but ranked below k); **never retrieved %**: "
            "chunks no question retrieved. The Map, Explore and Compare pages show this lens."
        )
    if table["model"].nunique(dropna=False) > 1:
        st.markdown("**Per model**: what a faster model costs in recall.")
        wide = readable_configurations(models_side_by_side(table), table)
        show_table(wide, f"{P}per_model", list(wide.columns[2:]))
    st.download_button(
        "Download results (CSV)",
        table.to_csv(index=False),
        file_name="chunk-evaluation.csv",
        mime="text/csv",
        on_click="ignore",
        key=f"{P}download",
    )
    if seen:
        st.download_button(
            "Download per-chunk traffic (CSV)",
            exports.deferred(per_chunk_csv, seen),
            file_name="chunk-traffic.csv",
            mime="text/csv",
            on_click="ignore",
            key=f"{P}download_per_chunk",
            help="One row per chunk and configuration: how many questions retrieved it "
            "(retrieved), how many have gold text in it (gold), how many did both (hits); "
            "the same file as chunk-explorer evaluate --per-chunk.",
        )
    requested, embedded = counts
    if requested:
        st.caption(
            f"Embedded {embedded:,} of {requested:,} texts requested (questions and chunks of "
            "every configuration); the rest came from the embedding cache."
        )
    if result.skipped:
        st.warning("Skipped:\n\n- " + "\n- ".join(result.skipped))
    st.plotly_chart(metrics_vs_size(table), key=f"{P}chart")


def per_chunk_csv(seen: Sequence[Lens]) -> str:
    """Every lens's per-chunk traffic as one CSV."""
    return pd.concat([one.per_chunk() for one in seen], ignore_index=True).to_csv(index=False)


def advice_view(result: Digest) -> None:
    retrieved = result.table["recall_mean"].notna().any()
    options = list(METRICS) if retrieved else ["precision_omega"]
    metric = st.selectbox(
        "Best configuration for",
        options,
        format_func=METRIC_LABELS.__getitem__,
        persist_state=state.PERSIST,
        key=f"{P}metric",
    )
    st.markdown(report(result.table, metric or options[0]).markdown())


def readable_units(shown: pd.DataFrame) -> pd.DataFrame:
    """``shown`` (the labelled results table) with its units said as labels say them
    (:func:`pages.config_controls.unit_name`: a model folder's word pieces, not the path
    of its tokenizer file)."""
    column = COLUMN_LABELS["unit"]
    if column not in shown:
        return shown
    names = [config_controls.unit_name(u) if isinstance(u, str) else u for u in shown[column]]
    return shown.assign(**{column: names})


def readable_configurations(wide: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The per-model table ``wide`` with each configuration named as
    :func:`pages.config_controls.config_label` names it (``table`` holds their JSON)."""
    configs = [Config.from_json(c) for c in table["config"] if isinstance(c, str)]
    names = {c.label(): config_controls.config_label(c) for c in configs}
    return wide.assign(configuration=[names.get(n, n) for n in wide["configuration"]])


def snapshot_label(snap: Snapshot) -> str:
    """The configuration (its unit said readably, :func:`pages.config_controls.config_label`),
    and the model where a sweep compares several."""
    model = snap.summary.get("model")
    label = snap.label
    if snap.config_json:
        config = Config.from_json(snap.config_json)
        if label == config.label():
            label = config_controls.config_label(config)
    return f"{label} · {model}" if model else label


def question_view(result: Digest, qs: QuestionSet, seen: Sequence[Lens] = ()) -> None:
    labels = [snapshot_label(s) for s in result.snapshots]
    chosen = st.selectbox(
        "Configuration",
        range(len(labels)),
        format_func=labels.__getitem__,
        persist_state=state.PERSIST,
        key=f"{P}inspect_config",
    )
    at = min(chosen or 0, len(labels) - 1)
    snap = result.snapshots[at]
    frame = snap.per_question
    one = seen[at] if seen else None
    if one is not None and one.retrieval:
        misses_table(frame, qs, one)
    index = question_select(qs, f"{P}question")
    row = frame.iloc[index]
    cols = st.columns(5)
    for col, metric in zip(cols, METRICS, strict=False):
        value = row[metric]
        col.metric(METRIC_LABELS[metric], "—" if pd.isna(value) else f"{value:.1%}")
    cols[4].metric("Split gold spans", f"{row['split_references']} / {row['references']}")
    question = qs.questions[index]
    text = qs.documents[question.corpus_id]
    hits = snap.hits[index]
    if one is not None and one.retrieval:
        misses = one.question_misses(index)
        if misses:
            st.markdown("**Why it missed**\n\n- " + "\n- ".join(m.describe() for m in misses))
        else:
            st.success("Every gold span of this question was retrieved in the top k.")
    st.html(f"<style>{EVIDENCE_CSS}</style>{LEGEND_HTML}")
    st.html(evidence_html(text, question.spans, hits))
    if hits:
        st.dataframe(hit_table(text, hits, question.spans), hide_index=True)
    st.plotly_chart(question_scores(frame, "recall" if hits else "precision_omega"), key=f"{P}hist")


def misses_table(frame: pd.DataFrame, qs: QuestionSet, one: Lens) -> None:
    """Every question with its recall and why it missed (the first reason, and what
    each missed gold span says)."""
    reasons = one.per_question()
    table = pd.DataFrame(
        {
            "question": [q.text for q in qs.questions],
            "document": [q.corpus_id for q in qs.questions],
            "recall": frame["recall"].to_numpy(),
            "reason": reasons["miss_reason"].to_numpy(),
            "why": reasons["miss_detail"].to_numpy(),
        }
    )
    missed = int((table["reason"] != "").sum())
    st.caption(
        f"{missed} of {len(table)} questions missed some gold text in the top {one.top_k}: "
        + ", ".join(f"{n} {r}" for r, n in one.counts.items())
        + " (gold spans)."
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * len(table), 320),
        column_config={"recall": st.column_config.NumberColumn(format="percent")},
        key=f"{P}misses",
    )


def hit_table(
    text: str,
    hits: Sequence[tuple[int, int, int, float]],
    gold: np.ndarray | None = None,
    chunk_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """The retrieved chunks of one question: rank, score, the chunk's number (when
    given), offsets, gold characters (when there are gold spans) and the text."""
    table = pd.DataFrame({"rank": [h[2] for h in hits], "score": [round(h[3], 4) for h in hits]})
    if chunk_ids is not None:
        table["chunk"] = [int(i) for i in chunk_ids]
    table["start"], table["end"] = [h[0] for h in hits], [h[1] for h in hits]
    if gold is not None:
        table["gold chars"] = [overlap(as_spans([(h[0], h[1])]), gold) for h in hits]
    table["text"] = [" ".join(text[h[0] : h[1]].split())[:120] for h in hits]
    return table
