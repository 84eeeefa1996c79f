"""Tune: search configurations on questions with gold spans, see the quality–cost front
and whether the winner is real, and take a configuration to Explore or Compare.

The page lays out what the user sees; the search, its statistics and its chart are the
core's (:mod:`chunking.tuning`, :mod:`chunking.viz.tuning`). The last search is kept in
the session, so it survives page changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from chunking import Config, strategies
from chunking.documents.io import read_bytes
from chunking.evaluation.sweep import parse_values
from chunking.evaluation.techniques import RETRIEVERS
from chunking.tuning.holdout import split_questions
from chunking.tuning.objectives import COST_LABELS, COSTS, OBJECTIVE_LABELS, OBJECTIVES
from chunking.tuning.samplers import SAMPLERS
from chunking.tuning.search import Plan, TuneOptions, TuneResult, plan, tune
from chunking.tuning.space import Space
from chunking.viz.tuning import difference_chart, front_chart, selected_label
from pages import cached, config_controls, evaluate_questions, exports, model_choice, sidebar, state
from pages.evaluate_questions import BUNDLED, OWN, QuestionSet

P = "tune."
RESULT_KEY = f"{P}result"
RUNNING_KEY = f"{P}running"
TRIAL_KEY = f"{P}trial"
CHART_KEY = f"{P}chart"
DOCUMENT_KEY = f"{P}document"
_GO_STATE = f"_{P}go"
UNITS = ("chars", "words", "tokens")
EXPLORE = "pages/explore_page.py"
COMPARE = "pages/compare_page.py"


@dataclass(frozen=True, eq=False)
class TuneRun:
    """The last search: what it ran on and what it found."""

    questions: QuestionSet
    origin: str
    result: TuneResult

    @property
    def data(self) -> dict[str, Any]:
        return self.result.to_dict()


# ---------------------------------------------------------------------- the space


def space_controls() -> Space | str:
    """The space from the registry's strategies, a size range and value lists."""
    sized = [name for name, spec in strategies().items() if spec.limit_param]
    left, middle, right = st.columns(3)
    chosen = left.multiselect(
        "Strategies",
        sized,
        default=[s for s in ("recursive", "token") if s in sized],
        persist_state=state.PERSIST,
        key=f"{P}strategies",
    )
    low = middle.number_input(
        "Size from", 10, 10_000, 100, 10, persist_state=state.PERSIST, key=f"{P}size_low"
    )
    high = middle.number_input(
        "Size to", 10, 10_000, 400, 10, persist_state=state.PERSIST, key=f"{P}size_high"
    )
    step = middle.number_input(
        "Size step", 10, 10_000, 100, 10, persist_state=state.PERSIST, key=f"{P}size_step"
    )
    overlaps = right.text_input(
        "Overlaps",
        "0, 50",
        persist_state=state.PERSIST,
        key=f"{P}overlaps",
        help="Whole numbers of units, or shares of the size between 0 and 1 (0.1).",
    )
    units = right.multiselect(
        "Units", UNITS, default=["tokens"], persist_state=state.PERSIST, key=f"{P}units"
    )
    retrieval_left, retrieval_right = st.columns(2)
    retrievers = retrieval_left.multiselect(
        "Retrievers",
        RETRIEVERS,
        default=["dense"],
        persist_state=state.PERSIST,
        key=f"{P}retrievers",
    )
    top_k = retrieval_right.text_input(
        "Top k",
        "5",
        persist_state=state.PERSIST,
        key=f"{P}top_k",
        help="Units returned per question; several values are searched too.",
    )
    if not chosen or not units or not retrievers:
        return "Choose at least one strategy, one unit and one retriever."
    try:
        return Space.from_dict(
            {
                "strategy": chosen,
                "size": {"low": int(low), "high": int(high), "step": int(step)},
                "overlap": parse_values(overlaps, float, "Overlaps"),
                "unit": units,
                "retriever": retrievers,
                "top_k": parse_values(top_k, int, "Top k"),
            }
        )
    except ValueError as exc:
        return str(exc)


def search_controls() -> tuple[TuneOptions, str] | str:
    """Sampler, budget, seed, objective, cost, held-out share and model."""
    first, second, third = st.columns(3)
    sampler = first.selectbox(
        "Sampler",
        SAMPLERS,
        index=2,
        persist_state=state.PERSIST,
        key=f"{P}sampler",
        help="grid: every point; random: a seeded random order; tpe: Optuna's TPE, which "
        "learns from the trials so far.",
    )
    trials = first.number_input(
        "Trials (0: all for grid, a third otherwise)",
        0,
        500,
        0,
        persist_state=state.PERSIST,
        key=f"{P}trials",
    )
    objective = second.selectbox(
        "Objective",
        OBJECTIVES,
        format_func=OBJECTIVE_LABELS.__getitem__,
        persist_state=state.PERSIST,
        key=f"{P}objective",
        help="Scored on the gold spans, never on similarity to the question.",
    )
    cost = second.selectbox(
        "Cost",
        COSTS,
        format_func=COST_LABELS.__getitem__,
        persist_state=state.PERSIST,
        key=f"{P}cost",
    )
    holdout = third.slider(
        "Held-out share",
        0.0,
        0.5,
        0.3,
        0.05,
        persist_state=state.PERSIST,
        key=f"{P}holdout",
        help="Questions the search never sees; the winner is checked on them (0: none).",
    )
    seed = third.number_input("Seed", 0, 2**31 - 1, 0, persist_state=state.PERSIST, key=f"{P}seed")
    model = model_choice.model_select(f"{P}model", "Embedding model")
    try:
        options = TuneOptions(
            sampler=str(sampler),
            trials=int(trials) or None,
            seed=int(seed),
            objective=str(objective),
            cost=str(cost),
            holdout=float(holdout),
        )
    except ValueError as exc:
        return str(exc)
    return options, model


@cached.bounded("tune_plans", "Counting the points on paper…")
def _plan(key: str, space_json: str, options_json: str, model: str, _qs: QuestionSet) -> Plan:
    options = TuneOptions(**json.loads(options_json))
    tuning, _ = split_questions(_qs.questions, options.holdout, options.seed)
    return plan(_qs.documents, tuning, Space.from_dict(json.loads(space_json)), options, model)


def dry_run(qs: QuestionSet, space: Space, options: TuneOptions, model: str) -> Plan | None:
    """The count and the estimate, before anything is embedded."""
    from chunking.embedding.models import canonical_model_name

    try:
        found = _plan(
            qs.key,
            json.dumps(space.to_dict(), sort_keys=True),
            json.dumps(options.__dict__, sort_keys=True),
            canonical_model_name(model),
            qs,
        )
    except ValueError as exc:
        st.error(str(exc))
        return None
    st.info(f"**Dry run:** {found.describe()}.", icon=":material/calculate:")
    if found.invalid:
        with st.expander(f"{len(found.invalid)} invalid points skipped"):
            st.markdown("\n".join(f"- {reason}" for reason in found.invalid))
    return found


def run_search(
    qs: QuestionSet, origin: str, space: Space, options: TuneOptions, model: str
) -> None:
    """Run with progress; any click (the Cancel button) stops it."""
    embedder = model_choice.load_embedder(model, model_key=f"{P}model")
    if embedder is None:
        return
    holder = st.empty()
    st.button("Cancel", key=f"{P}cancel", help="Stops the search; the last results stay.")
    st.session_state[RUNNING_KEY] = True
    try:
        result = tune(
            qs.documents,
            qs.questions,
            space,
            embedder,
            options,
            progress=model_choice.progress_bar(holder, "Searching"),
        )
    except ValueError as exc:
        st.session_state[RUNNING_KEY] = False
        st.error(str(exc))
        return
    st.session_state[RUNNING_KEY] = False
    holder.empty()
    # plain data: this script's own classes are new on every run
    st.session_state[RESULT_KEY] = {"questions": qs, "origin": origin, "result": result}
    st.session_state[TRIAL_KEY] = result.winner.label


# -------------------------------------------------------------------- the results


def _on_chart_select() -> None:
    chosen = st.session_state.get(CHART_KEY)
    points = getattr(getattr(chosen, "selection", None), "points", None) or []
    label = selected_label(points)
    if label is not None:
        st.session_state[TRIAL_KEY] = label


def _config_of(run: TuneRun, label: str) -> Config:
    return run.result.trial(label).config


def _hand_document(run: TuneRun) -> None:
    """Make the chosen document of the search the sidebar's (not for My document)."""
    if run.origin == OWN:
        return
    name = str(st.session_state.get(DOCUMENT_KEY) or next(iter(run.questions.documents)))
    text = run.questions.documents[name]
    sidebar.open_document(read_bytes(text.encode("utf-8"), f"{name}.md"))


def _use(run: TuneRun, label: str, go: str | None) -> None:
    """Set the sidebar (and for Compare, configuration B) to a trial; then go."""
    config = _config_of(run, label)
    if go == COMPARE:
        config_controls.apply_config(config, prefix="cmp.B.")
    else:
        config_controls.apply_config(config)
    if go is not None:
        _hand_document(run)
        st.session_state[_GO_STATE] = go


def results_section(run: TuneRun) -> None:
    """The chart, the verdict, the chosen trial and the per-question differences."""
    result, data = run.result, run.data
    options = result.options
    st.subheader("Quality against cost")
    st.caption(
        f"{result.plan.describe()} · {len(result.tuning)} tuning and {len(result.held_out)} "
        f"held-out questions · objective {OBJECTIVE_LABELS[options.objective]}, cost "
        f"{COST_LABELS[options.cost]}. Click a point to choose it."
    )
    chart, verdict = st.columns([3, 2])
    with chart:
        figure = front_chart(
            data["trials"],
            OBJECTIVE_LABELS[options.objective],
            COST_LABELS[options.cost],
            winner=result.winner.label,
        )
        st.plotly_chart(
            figure,
            key=CHART_KEY,
            on_select=_on_chart_select,
            selection_mode="points",
            config={"displaylogo": False},
        )
    with verdict:
        st.markdown("**Is the winner real?**")
        st.markdown("\n".join(f"- {line}" for line in result.verdict()))
        for warning in result.warnings:
            st.warning(warning)
    trial_section(run)
    differences_section(run)
    with st.expander("Every trial"):
        frame = result.trials_frame()[
            ["label", "quality", "ci_low", "ci_high", "cost", "on_front", "duplicate_of"]
        ]
        st.dataframe(frame, hide_index=True, width="stretch", key=f"{P}trials_table")


def trial_section(run: TuneRun) -> None:
    labels = [t.label for t in run.result.trials]
    if st.session_state.get(TRIAL_KEY) not in labels:
        st.session_state[TRIAL_KEY] = run.result.winner.label
    st.subheader("A configuration")
    chosen = str(st.selectbox("Trial", labels, persist_state=state.PERSIST, key=TRIAL_KEY))
    trial = run.result.trial(chosen)
    st.caption(
        f"{chosen}: {trial.interval.mean:.3f} [{trial.interval.low:.3f}, "
        f"{trial.interval.high:.3f}]; "
        + ("on the front" if trial.on_front else "dominated")
        + (f"; same chunks as {trial.duplicate_of}" if trial.duplicate_of else "")
    )
    if run.origin != OWN:
        st.selectbox(
            "Document to open",
            list(run.questions.documents),
            persist_state=state.PERSIST,
            key=DOCUMENT_KEY,
        )
    one, two, three = st.columns(3)
    one.button(
        "Use this configuration",
        key=f"{P}use",
        on_click=_use,
        args=(run, chosen, None),
        help="Sets the sidebar's strategy and parameters.",
    )
    two.button(
        "Open in Explore",
        key=f"{P}explore",
        on_click=_use,
        args=(run, chosen, EXPLORE),
    )
    three.button(
        "Add to Compare",
        key=f"{P}compare",
        on_click=_use,
        args=(run, chosen, COMPARE),
        help="Sets the sidebar (A) and configuration B to it, then opens Compare.",
    )
    config = trial.config
    left, right = st.columns(2)
    with left:
        st.markdown("**Config JSON**")
        st.code(config.to_json(), language="json")
        st.download_button(
            "Download config JSON",
            config.to_json(),
            file_name="config.json",
            mime="application/json",
            key=f"{P}config_json",
            on_click="ignore",
        )
    with right:
        st.markdown("**As code**")
        exports.code_export(config, key=f"{P}code")
    if st.toggle(
        "Why answers are missed (the retrieval lens)",
        persist_state=state.PERSIST,
        key=f"{P}lens",
        help="For this trial's tuning questions: each missed gold span with its reason.",
    ):
        lens_view(run, chosen)


def lens_view(run: TuneRun, label: str) -> None:
    """The retrieval lens of a trial (its original's, for a duplicate)."""
    from chunking.evaluation.lens import lens, reason_lines

    trial = run.result.trial(label)
    original = run.result.trial(trial.duplicate_of) if trial.duplicate_of else trial
    evaluation = original.evaluation
    if evaluation is None or evaluation.retrieved is None:
        st.info("This trial retrieved nothing: there is no lens to show.")
        return
    embedder = model_choice.load_embedder(evaluation.model) if evaluation.model else None
    seen = lens(evaluation, embedder)
    st.markdown("\n".join(f"- {line}" for line in reason_lines([seen])))
    st.dataframe(seen.per_question(), hide_index=True, width="stretch", key=f"{P}lens_table")


def differences_section(run: TuneRun) -> None:
    result = run.result
    other = result.runner_up or result.baseline
    if other.label == result.winner.label:
        return
    st.subheader("Per-question differences")
    winner = result.winner.tuning_scores
    diff = winner - other.tuning_scores
    st.plotly_chart(
        difference_chart(list(diff), f"{result.winner.label} minus {other.label}"),
        key=f"{P}differences",
        config={"displaylogo": False},
    )
    frame = pd.DataFrame(
        {
            "question": [q.text for q in result.tuning],
            "document": [q.corpus_id for q in result.tuning],
            "winner": winner,
            other.label: other.tuning_scores,
            "difference": diff,
        }
    )
    frame = frame[frame["difference"] != 0].sort_values("difference", key=abs, ascending=False)
    st.caption(f"{len(frame)} of {len(result.tuning)} questions score differently.")
    st.dataframe(frame, hide_index=True, width="stretch", key=f"{P}difference_table")


# ----------------------------------------------------------------------------- page


def question_set() -> tuple[QuestionSet | None, str]:
    origin = st.radio(
        "Questions",
        (BUNDLED, OWN),
        horizontal=True,
        persist_state=state.PERSIST,
        key=f"{P}origin",
    )
    if origin == BUNDLED:
        return evaluate_questions.bundled_questions(), str(origin)
    return evaluate_questions.own_questions(), str(origin)


def main() -> None:
    st.title("Tune")
    go = st.session_state.pop(_GO_STATE, None)
    if go:
        st.switch_page(go)
    st.caption(
        "Search chunking configurations on questions with gold spans: the quality–cost "
        "front, and whether the winner is real (95 % intervals, a paired test, held-out "
        "questions). The same as `chunk-explorer tune`."
    )
    if st.session_state.pop(RUNNING_KEY, False):
        st.info("The search was cancelled; the results below are the last complete search.")
    qs, origin = question_set()
    st.subheader("The space")
    space = space_controls()
    st.subheader("The search")
    controls = search_controls()
    if isinstance(space, str):
        st.error(space)
    elif isinstance(controls, str):
        st.error(controls)
    elif qs is not None:
        options, model = controls
        found = dry_run(qs, space, options, model)
        if found is not None and st.button("Run search", type="primary", key=f"{P}run"):
            run_search(qs, origin, space, options, model)
    kept = st.session_state.get(RESULT_KEY)
    if isinstance(kept, dict) and isinstance(kept.get("result"), TuneResult):
        results_section(TuneRun(kept["questions"], kept["origin"], kept["result"]))


if __name__ == "__main__":
    main()
