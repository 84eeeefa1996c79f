"""The Evaluate page's code data set (anthropic-code-eval): its own chunks or files cut
by strategies, scored by pass@k (:func:`code_set_section`), and its techniques side by
side (:func:`code_techniques`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import pandas as pd
import streamlit as st

from chunking import UNITS, Config, strategies
from chunking.embedding.models import EmbeddingError, get_embedder
from chunking.evaluation import (
    Settings,
    question_counts,
)
from chunking.evaluation.core import embedded_chunk_texts, searched_texts
from chunking.evaluation.datasets import (
    CODE,
    Dataset,
    DatasetError,
    Layout,
    evaluate_given,
    find_dataset,
    load_dataset,
)
from chunking.evaluation.passk import FOUND_AT, check_ks, with_k_columns
from chunking.evaluation.sweep import (
    Grid,
    compare_techniques,
    parse_values,
    sweep,
    techniques_table,
)
from chunking.evaluation.techniques import DENSE
from chunking.output.html_report import evaluation_display, evaluation_report
from chunking.runtime.limits import CACHE_BOUNDS
from chunking.units import DEFAULT_MODEL
from chunking.viz.evaluation import pass_at_k_chart
from pages import cached, endpoint_box, exports, model_choice, state
from pages.evaluate_grid import MODELS, grid_json
from pages.evaluate_questions import P
from pages.evaluate_techniques import KEPT_TECHNIQUE_TABLES

# ------------------------------------------------------------------------- the code set

CODE_SET = "anthropic-code-eval (code retrieval)"
GIVEN = "the set's own chunks"
CUT = "cut by strategies"
#: Runs on the code set kept per session.
KEPT_CODE_RUNS = 4


@st.cache_resource(
    show_spinner="Loading the code set…", max_entries=CACHE_BOUNDS["code_sets"].max_entries
)
def _dataset(layout: Layout) -> Dataset:
    return load_dataset(find_dataset(layout))


def code_set() -> Dataset | None:
    """The anthropic-code-eval set (its source, files and chunks shown), with only the
    questions about the files chosen; None after saying why it cannot be read."""
    try:
        dataset = _dataset(CODE)
    except (DatasetError, OSError) as exc:
        st.error(str(exc))
        return None
    given = dataset.given_chunks()
    st.caption(
        f"Data: {dataset.attribution}. {len(dataset.documents)} source files, "
        f"{sum(len(c) for c in given.values()):,} chunks, {len(dataset.questions)} "
        "questions with golden chunks; every question searches the whole code base."
    )
    asked = question_counts(dataset.questions)
    with st.expander("Documents"):
        st.dataframe(
            pd.DataFrame(
                {
                    "document": [dataset.titles.get(d, d) for d in dataset.documents],
                    "characters": [len(t) for t in dataset.documents.values()],
                    "chunks": [len(given[d]) for d in dataset.documents],
                    "questions": [asked.get(d, 0) for d in dataset.documents],
                }
            ),
            hide_index=True,
            width="stretch",
            key=f"{P}code_documents",
        )
    about = st.multiselect(
        "Questions about",
        list(dataset.documents),
        format_func=lambda d: dataset.titles.get(d, d),
        persist_state=state.PERSIST,
        key=f"{P}code_about",
        help="Empty: every question. Retrieval still searches every file's chunks.",
    )
    if not about:
        return dataset
    try:
        return dataset.about(about)
    except DatasetError as exc:
        st.error(str(exc))
        return None


@dataclass(frozen=True)
class CodeRun:
    """What the code-set form asks for: the set's own chunks (``grid`` None) or a grid,
    the k values and the embedding model."""

    grid: Grid | None
    ks: tuple[int, ...]
    model: str

    def key(self, dataset: Dataset) -> str:
        asked = ",".join(str(q.index) + q.corpus_id for q in dataset.questions)
        grid = grid_json(self.grid) if self.grid is not None else "given"
        return "|".join((cached.text_key(asked), grid, ",".join(map(str, self.ks))))

    @property
    def found_at(self) -> float | None:
        """The exact rule on the set's own chunks, the coverage rule on any other."""
        return None if self.grid is None else FOUND_AT


def code_controls() -> CodeRun | None:
    """The code-set form; ``None`` until it is submitted with valid values."""
    model_key = f"{P}code_model"
    with st.form(f"{P}code_form"):
        cols = st.columns([2, 2, 3])
        chunks = cols[0].radio(
            "Chunks",
            [GIVEN, CUT],
            persist_state=state.PERSIST,
            key=f"{P}code_chunks",
            help="The set's own chunks are evaluated as they are (the guide's setting); "
            "or the files are cut by the strategies below.",
        )
        ks = cols[1].text_input(
            "k values",
            "5, 10, 20",
            persist_state=state.PERSIST,
            key=f"{P}code_ks",
            help="Pass@k and the other metrics at every k (comma-separated).",
        )
        model_slot = cols[2].empty()  # drawn after the endpoint box, which may add a choice
        cols = st.columns([3, 2, 2])
        chosen = cols[0].multiselect(
            "Strategies (when cut)",
            list(strategies()),
            default=["code", "recursive"],
            persist_state=state.PERSIST,
            key=f"{P}code_strategies",
        )
        sizes = cols[1].text_input(
            "Sizes (when cut)", "400", persist_state=state.PERSIST, key=f"{P}code_sizes"
        )
        units = cols[2].multiselect(
            "Units (when cut)",
            list(UNITS),
            default=["tokens"],
            persist_state=state.PERSIST,
            key=f"{P}code_units",
        )
        endpoint = endpoint_box.endpoint_box(model_key, in_form=True)
        if endpoint and st.session_state.get(f"{model_key}_endpoint") != endpoint:
            st.session_state[f"{model_key}_endpoint"] = endpoint
            st.session_state[model_key] = endpoint  # a new endpoint filled in: chosen
        options = list(dict.fromkeys([*MODELS, *endpoint_box.endpoint_models()]))
        if st.session_state.get(model_key) not in (None, *options):
            st.session_state[model_key] = DEFAULT_MODEL  # an endpoint of another session
        model = model_slot.selectbox(
            "Embedding model",
            options,
            format_func=lambda m: MODELS.get(m) or model_choice.model_label(m),
            persist_state=state.PERSIST,
            key=model_key,
            help="The bundled model in torch by default, here as on the command line, so "
            "that the recall stays comparable with published rows (the other pages start at "
            "minilm-onnx-int8 once it is built: the same model, loaded in a fraction of a "
            "second and up to 1.5 times as fast, cosine at least 0.98 to it). An embeddings "
            "endpoint added below is chosen here once its URL and model are filled in.",
        )
        submitted = st.form_submit_button("Run on the code set", type="primary")
    if not submitted and f"{P}code_last" not in st.session_state:
        st.info("Choose the chunks and a model, and press **Run on the code set**.")
        return None
    try:
        k_values = tuple(check_ks(parse_values(ks, int, "k values")))
        grid = None
        if chunks == CUT:
            data = {
                "strategy": chosen or ["code"],
                "size": parse_values(sizes, int, "Sizes"),
                "overlap": [0],
                "unit": units or ["tokens"],
            }
            grid = Grid.from_dict(data)
    except ValueError as exc:
        st.error(str(exc))
        return None
    st.session_state[f"{P}code_last"] = True
    return CodeRun(grid, k_values, str(model or DEFAULT_MODEL))


@cached.bounded("code_texts", "Cutting the files…", copy=True)
def _code_texts(set_key: str, grid_json: str, _data: Dataset) -> list[str]:
    """Every text a dense run embeds: the questions, then the chunks of every file."""
    texts = [q.text for q in _data.questions]
    if grid_json == "given":
        for chunks in _data.given_chunks().values():
            texts += searched_texts(chunks, DENSE)
        return texts
    for config in Grid.from_dict(json.loads(grid_json)).configs()[0]:
        texts += embedded_chunk_texts(_data.documents, config, DENSE)
    return texts


def code_model(run: CodeRun, dataset: Dataset, run_key: str, texts: Sequence[str]) -> str:
    """The model to run with: the static one for a quick first look when the chosen
    model would take long (with the button for it); the wait said either way, as the
    core estimates it (:func:`chunking.embedding.models.estimate_wait`)."""
    from chunking.embedding.endpoint import is_endpoint
    from chunking.embedding.models import estimate_wait

    count = f"{len(texts) - len(dataset.questions):,} chunks and {len(dataset.questions)} questions"

    def marker(name: str) -> tuple[str, ...]:
        return ("eval-code", run_key, name)

    model, wait = model_choice.first_view_model(run.model, run_key, texts, count, marker)
    if wait is not None:
        model_choice.preview_notice(run.model, run_key, wait, f"{P}code_full_model")
        return model
    wait = estimate_wait(model, texts, count, disk_cache=True)
    if wait.unknown:  # an endpoint never timed here
        st.caption(
            f"{model_choice.model_label(model)} embeds {count}: {wait.describe()} "
            "(then from the disk cache)."
        )
    elif wait.seconds >= 1:
        where = "at this endpoint, as measured here" if is_endpoint(model) else "on this machine"
        st.caption(
            f"{model_choice.model_label(model)} embeds {count}: {wait.describe()} {where} "
            "now, the first time (then from the disk cache); minilm-static gives a fast "
            "first look."
        )
    return model


@dataclass(frozen=True)
class CodeResult:
    """A run on the code set: its table with the per-k columns, and the model's name."""

    table: pd.DataFrame
    model: str


def run_code(run: CodeRun, dataset: Dataset, model: str, texts: Sequence[str]) -> CodeResult | None:
    """Embed what the run needs (with a progress bar), then evaluate; None after saying
    why it failed."""
    embedder = model_choice.load_embedder(model)
    if embedder is None:
        return None
    settings = Settings(top_k=max(run.ks), scope=dataset.scope)
    holder = st.empty()
    try:
        model_choice.embed_once(
            ("eval-code", run.key(dataset), embedder.name),  # as code_model's marker
            embedder,
            lambda: texts,
            f"Embedding {len(texts):,} questions and chunks ({model})",
        )
        progress = model_choice.progress_bar(holder, "Evaluating")
        result = (
            evaluate_given(dataset, embedder, settings, progress, DENSE)
            if run.grid is None
            else sweep(dataset.documents, dataset.questions, run.grid, embedder, settings, progress)
        )
        table = with_k_columns(
            result.table, result.evaluations, dataset.documents, run.ks, run.found_at
        )
    except (EmbeddingError, ValueError) as exc:
        st.error(f"The evaluation failed: {exc}")
        return None
    finally:
        holder.empty()
    return CodeResult(table, model)


def code_report_notes(run: CodeRun, dataset: Dataset) -> tuple[str, list[str]]:
    """The caption and notes of the HTML report and of the page's tables."""
    rule = (
        "a golden chunk counts as found when it is retrieved (the guide's exact rule)"
        if run.found_at is None
        else f"a golden chunk counts as found when the top-k chunks cover {run.found_at:.0%} "
        "of its non-whitespace characters"
    )
    caption = (
        f"{len(dataset.questions):,} questions of the {dataset.name} set "
        f"({dataset.attribution}); retrieval among the chunks of every file."
    )
    return caption, [f"Pass@k in percent: {rule}. The other metrics in percent too."]


def code_table_view(table: pd.DataFrame, run: CodeRun, dataset: Dataset, key: str) -> None:
    """The table with Pass@k and the metrics at every k, the Pass@k chart and the report."""
    caption, notes = code_report_notes(run, dataset)
    shown = evaluation_display(table)
    st.dataframe(shown, hide_index=True, width="stretch", key=f"{P}{key}_table")
    st.caption(" ".join(notes))
    st.plotly_chart(pass_at_k_chart(table), key=f"{P}{key}_chart")
    report = partial(evaluation_report, caption=caption, notes=notes)
    exports.download_buttons(
        [
            ("Download the report (HTML)", exports.deferred(report, table), "html", "text/html"),
            ("Download the table (CSV)", table.to_csv(index=False), "csv", "text/csv"),
        ],
        f"{dataset.name}-{key}",
        key=f"{P}{key}_dl_",
    )


def code_set_section() -> None:
    """The code set: its own chunks or the project's strategies, Pass@k at every k,
    then every technique side by side."""
    dataset = code_set()
    if dataset is None:
        return
    run = code_controls()
    if run is None:
        return
    run_key = run.key(dataset)
    texts = _code_texts(run_key, grid_json(run.grid) if run.grid else "given", dataset)
    model = code_model(run, dataset, run_key, texts)
    kept: dict[str, CodeResult] = st.session_state.setdefault(f"{P}code_runs", {})
    result_key = f"{run_key}|{model}"
    if result_key not in kept:
        outcome = run_code(run, dataset, model, texts)
        if outcome is None:
            return
        kept[result_key] = outcome
        while len(kept) > KEPT_CODE_RUNS:
            del kept[next(iter(kept))]
    st.subheader("Results")
    code_table_view(kept[result_key].table, run, dataset, "code")
    st.subheader("Techniques side by side")
    code_techniques(run, dataset, kept[result_key])


def code_techniques(run: CodeRun, dataset: Dataset, result: CodeResult) -> None:
    """Every technique on the set's own chunks, or on one configuration of the run."""
    base: Config | None = None
    if run.grid is not None:
        configs = [Config.from_json(c) for c in result.table["config"]]
        chosen = st.selectbox(
            "Base configuration",
            range(len(configs)),
            format_func=lambda i: configs[i].label(),
            persist_state=state.PERSIST,
            key=f"{P}code_tech_config",
        )
        base = configs[min(chosen or 0, len(configs) - 1)]
    st.caption(
        "Dense, BM25, hybrid (reciprocal-rank fusion), late chunking (torch models), header "
        "context and window:1 on the same chunks. A technique that embeds the chunks "
        "differently embeds all of them again: with the bundled model that takes minutes."
    )
    key = "|".join((run.key(dataset), base.to_json() if base else "given", result.model))
    kept: dict[str, pd.DataFrame] = st.session_state.setdefault(f"{P}code_techniques", {})
    if key not in kept:
        if not st.button("Compare techniques", key=f"{P}code_tech_run"):
            return
        holder = st.empty()
        try:
            embedder = get_embedder(result.model)
            runs = compare_techniques(
                dataset.documents,
                dataset.questions,
                base,
                embedder,
                Settings(top_k=max(run.ks), scope=dataset.scope),
                model_choice.progress_bar(holder, "Comparing techniques"),
                chunks=dataset.given_chunks() if base is None else None,
            )
            table = with_k_columns(
                techniques_table(runs),
                [r.evaluation for r in runs],
                dataset.documents,
                run.ks,
                run.found_at,
            )
        except (EmbeddingError, ValueError) as exc:
            st.error(f"The techniques could not be compared: {exc}")
            return
        finally:
            holder.empty()
        kept[key] = table
        while len(kept) > KEPT_TECHNIQUE_TABLES:
            del kept[next(iter(kept))]
    code_table_view(kept[key], run, dataset, "code_techniques")
