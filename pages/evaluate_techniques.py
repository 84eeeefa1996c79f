"""The Evaluate page's techniques side by side: every retrieval technique on one
configuration of the sweep (:func:`techniques_section`), the table, the differences from
dense retrieval and what each returned for one question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import pandas as pd
import streamlit as st

from chunking import Config
from chunking.embedding.models import EmbeddingError, get_embedder
from chunking.evaluation import (
    METRIC_LABELS,
    METRICS,
    Settings,
)
from chunking.evaluation.context import header_contexts
from chunking.evaluation.sweep import (
    Digest,
    Snapshot,
    compare_techniques,
    technique_snapshots,
    techniques_table,
)
from chunking.viz.evaluation import technique_deltas
from chunking.viz.evidence import EVIDENCE_CSS, LEGEND_HTML, evidence_html
from pages import cached, model_choice, state
from pages.evaluate_grid import LATE_NOTE
from pages.evaluate_questions import P, QuestionSet, question_select
from pages.evaluate_results import show_table, snapshot_label

#: Technique tables kept per session.
KEPT_TECHNIQUE_TABLES = 4


# ------------------------------------------------------------------------ techniques


@dataclass(frozen=True)
class TechniqueResult:
    """A techniques table and what each technique returned per question."""

    table: pd.DataFrame
    snapshots: tuple[Snapshot, ...]


def techniques_section(
    result: Digest, qs: QuestionSet, settings: Settings, models: Sequence[str]
) -> None:
    """Every technique on one configuration of the sweep: the table, the differences
    from dense retrieval, and what each returned for one question."""
    st.caption(
        "One configuration, every technique: BM25, hybrid (reciprocal-rank fusion, k = 60), "
        "late chunking, header context, late + headers, parent (parent-child configurations "
        "only), window:1 — and the cluster chunker when it is installed. Times include "
        "embedding what earlier rows had not embedded. " + LATE_NOTE
    )
    labels = [snapshot_label(s) for s in result.snapshots]
    chosen = st.selectbox(
        "Base configuration",
        range(len(labels)),
        format_func=labels.__getitem__,
        persist_state=state.PERSIST,
        key=f"{P}tech_config",
    )
    snap = result.snapshots[min(chosen or 0, len(labels) - 1)]
    # the summary names the loaded embedder ("hash-64"); find the name that loads it
    loaded = {get_embedder(m).name: m for m in models}
    model = loaded.get(str(snap.summary.get("model")))
    if model is None:
        st.info("Techniques need an embedding model; choose one and run the evaluation.")
        return
    key = "|".join((qs.key, snap.config_json, json.dumps(asdict(settings)), str(model)))
    kept: dict[str, TechniqueResult] = st.session_state.setdefault(f"{P}techniques", {})
    if key not in kept:
        if not st.button("Compare techniques", key=f"{P}tech_run"):
            return
        outcome = run_techniques(qs, Config.from_json(snap.config_json), str(model), settings)
        if outcome is None:
            return
        kept[key] = outcome
        while len(kept) > KEPT_TECHNIQUE_TABLES:
            del kept[next(iter(kept))]
    techniques_view(kept[key], qs)


def run_techniques(
    qs: QuestionSet, config: Config, model: str, settings: Settings
) -> TechniqueResult | None:
    """Evaluate every technique with a progress bar; None after showing why it failed."""
    holder = st.empty()
    holder.progress(0.0, text="Comparing techniques")
    try:
        embedder = get_embedder(model)
        progress = model_choice.progress_bar(holder, "Comparing techniques")
        runs = compare_techniques(qs.documents, qs.questions, config, embedder, settings, progress)
    except (EmbeddingError, ValueError) as exc:
        st.error(f"The techniques could not be compared: {exc}")
        return None
    finally:
        holder.empty()
    return TechniqueResult(techniques_table(runs), technique_snapshots(runs))


TECHNIQUE_LABELS = {
    "technique": "Technique",
    "configuration": "Configuration",
    **{m: METRIC_LABELS[m] for m in METRICS},
    **{f"{m}_delta": f"Δ {METRIC_LABELS[m]}" for m in METRICS},
    "seconds": "Seconds",
}


def techniques_view(outcome: TechniqueResult, qs: QuestionSet) -> None:
    table = outcome.table
    shown = table.rename(columns=TECHNIQUE_LABELS)
    shares = [TECHNIQUE_LABELS[c] for c in table.columns if c in METRICS or c.endswith("_delta")]
    show_table(shown, f"{P}tech_table", shares)
    st.plotly_chart(technique_deltas(table), key=f"{P}tech_chart")
    st.markdown("**What each technique returned for one question**")
    index = question_select(qs, f"{P}tech_question")
    question = qs.questions[index]
    text = qs.documents[question.corpus_id]
    st.html(f"<style>{EVIDENCE_CSS}</style>{LEGEND_HTML}")
    tabs = st.tabs([s.label for s in outcome.snapshots])
    for tab, snap in zip(tabs, outcome.snapshots, strict=True):
        with tab:
            row = snap.per_question.iloc[index]
            st.caption(
                " · ".join(
                    f"{METRIC_LABELS[m]} {row[m]:.1%}" for m in METRICS if not pd.isna(row[m])
                )
            )
            st.html(evidence_html(text, question.spans, snap.hits[index]))
            if "headers" in snap.label:
                context_table(snap, question.corpus_id, text, snap.hits[index])


def context_table(
    snap: Snapshot, corpus_id: str, text: str, hits: Sequence[tuple[int, int, int, float]]
) -> None:
    """The header context each returned chunk was embedded with (its metadata)."""
    config = Config.from_json(snap.config_json)
    chunks = cached.chunks(cached.Source.from_text(text, corpus_id, "corpus"), config)
    contexts = dict(
        zip(
            [(c.start, c.end) for c in chunks],
            header_contexts(text, chunks, corpus_id),
            strict=True,
        )
    )
    st.dataframe(
        pd.DataFrame(
            {
                "rank": [h[2] for h in hits],
                "context (embedded before the chunk)": [contexts.get(h[:2], "") for h in hits],
                "chunk": [" ".join(text[h[0] : h[1]].split())[:100] for h in hits],
            }
        ),
        hide_index=True,
        width="stretch",
    )
