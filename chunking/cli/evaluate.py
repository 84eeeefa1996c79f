"""``chunk-explorer evaluate``: score chunking configurations on a question set.

::

    chunk-explorer evaluate --questions questions_df.csv --corpus corpora/ \\
        --strategy recursive token --size 200 400 --overlap 0 --unit tokens
    chunk-explorer evaluate --questions q.jsonl --corpus docs/ --sweep grid.json --format csv
    chunk-explorer evaluate --questions q.csv --corpus docs/ --model none   # precision_Ω only
    chunk-explorer evaluate --questions q.csv --corpus docs/ --retriever hybrid --return window:1
    chunk-explorer evaluate --questions q.csv --corpus docs/ --size 250 --techniques
    chunk-explorer evaluate --questions q.csv --corpus docs/ --model all-MiniLM-L6-v2,hash
    chunk-explorer evaluate --questions q.csv --corpus docs/ --per-chunk traffic.csv

The table goes to stdout; with ``--format table`` the best configuration for
``--metric`` and the tuning advice follow it. Progress goes to stderr when it is a
terminal. Wire it into a command line with :func:`add_evaluate_parser`, or run
:func:`evaluate_main` directly.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from ..config import Config
from ..evaluation.advice import report
from ..evaluation.core import METRIC_LABELS, METRICS, Scope, Settings, chunk_documents
from ..evaluation.datasets import Dataset, evaluate_given, load_dataset
from ..evaluation.lens import Lens, lenses, misses_records, with_lens_columns
from ..evaluation.lens import display_columns as lens_display
from ..evaluation.passk import (
    FOUND_AT,
    check_found_at,
    check_ks,
    k_display,
    table_ks,
    with_k_columns,
)
from ..evaluation.questions import Question, read_corpus, read_questions, renumber
from ..evaluation.sweep import (
    AXES,
    KEY_COLUMNS,
    Grid,
    SweepResult,
    compare_techniques,
    load_grid,
    merge_results,
    models_side_by_side,
    sweep,
    techniques_table,
)
from ..evaluation.techniques import AXES as TECHNIQUE_AXES
from ..evaluation.techniques import Technique
from ..llm.contextual import context_requests
from ..llm.cost import estimate
from ..model import Chunk
from ..units import DEFAULT_MODEL
from .options import (
    EXIT_USAGE,
    add_embed_arguments,
    add_llm_arguments,
    client_from_args,
    confirm,
    embed_model_from_args,
    endpoint_embedder,
    follow_model_unit,
    follow_model_units,
    output,
    parse_param,
    show_embedding_cost,
    terminal_progress,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.base import Embedder

PROG = "chunk-explorer evaluate"
NO_MODEL = "none"


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """The question-set flags :func:`load_source` reads (shared with ``tune``)."""
    parser.add_argument(
        "--dataset",
        metavar="DIR",
        help="a data set folder, either layout: chroma-eval (questions_df.csv + corpora/) "
        "or anthropic-code-eval (evaluation_set.jsonl + codebase_chunks.json)",
    )
    parser.add_argument("--questions", metavar="FILE", help="CSV or JSONL (with --corpus)")
    parser.add_argument("--corpus", metavar="DIR", help="folder of <corpus_id>.md/.txt files")
    parser.add_argument(
        "--corpus-id",
        action="append",
        metavar="ID",
        help="evaluate only questions about this document (repeatable)",
    )


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the evaluate options to ``parser``."""
    add_source_arguments(parser)
    parser.add_argument(
        "--given-chunks",
        action="store_true",
        help="evaluate the data set's own chunks as they are instead of cutting the "
        "documents (anthropic-code-eval)",
    )
    grid = parser.add_argument_group("configurations (a grid of every combination)")
    grid.add_argument("--strategy", nargs="+", metavar="NAME", help="default: recursive")
    grid.add_argument("--size", nargs="+", type=int, metavar="N", help="size limits")
    grid.add_argument(
        "--overlap", nargs="+", type=float, metavar="N", help="overlaps; 0<N<1 = share of size"
    )
    grid.add_argument(
        "--unit",
        nargs="+",
        choices=("chars", "words", "tokens", "model"),
        help="model: the chosen model's own tokens (its tokenizer.json, an endpoint's "
        "tokenizer; the bundled all-MiniLM-L6-v2's word pieces otherwise)",
    )
    grid.add_argument("--threshold", nargs="+", type=float, metavar="X", help="semantic only")
    grid.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help='fixed parameter, VALUE as JSON or text (e.g. separators=\'["\\n\\n", " "]\')',
    )
    grid.add_argument("--sweep", metavar="GRID.json", help="read the grid from a JSON file")
    parser.add_argument(
        "--top-k",
        type=int,
        nargs="+",
        default=[5],
        metavar="K",
        help="chunks retrieved per question; several values (--top-k 5 10 20) report every "
        "metric and pass@k at each k",
    )
    parser.add_argument(
        "--found-at",
        type=float,
        metavar="SHARE",
        help="pass@k: a golden span is found when the top-k chunks cover this share of its "
        f"non-whitespace characters (default {FOUND_AT}; with --given-chunks the default is "
        "the exact rule: the chunk itself is retrieved)",
    )
    parser.add_argument(
        "--model",
        action="append",
        metavar="NAME",
        help="embedding model (default: the bundled all-MiniLM-L6-v2), a named model (see "
        "chunk-explorer models), a local model folder, 'hash' (fake) or 'none' (no "
        "retrieval: precision_Ω and split share only). Repeat it or give a comma list to "
        "compare models side by side",
    )
    technique = parser.add_argument_group("retrieval technique (see the README)")
    for axis in TECHNIQUE_AXES:
        flag = "--return" if axis.name == "returned" else f"--{axis.name}"
        choices = axis.choices or ()
        open_ended = f"|{axis.pattern_help}" if axis.pattern else ""
        technique.add_argument(
            flag,
            dest=axis.name,
            default=axis.default,
            choices=None if axis.pattern else choices,
            metavar="|".join(choices) + open_ended if axis.pattern else None,
            help=f"{axis.help} (default {axis.default})",
        )
    technique.add_argument(
        "--techniques",
        action="store_true",
        help="compare every technique on one configuration (dense, bm25, hybrid, late, "
        "headers, late + headers, parent, window:1) instead of a sweep",
    )
    add_llm_arguments(parser)
    add_embed_arguments(parser)
    parser.add_argument(
        "--scope",
        choices=("document", "all"),
        help="retrieve among the question's document's chunks, or all documents' chunks "
        "(default: document; all for anthropic-code-eval, asked against the whole code base)",
    )
    parser.add_argument(
        "--chroma-compat",
        action="store_true",
        help="score chunk spans as the Chroma report's code did (to reproduce its figures)",
    )
    parser.add_argument(
        "--metric", choices=METRICS, default="recall", help="metric that picks the best row"
    )
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    parser.add_argument(
        "--html", metavar="REPORT.html", help="also write the tables and charts to one HTML file"
    )
    parser.add_argument(
        "--per-chunk",
        metavar="FILE.csv",
        help="also write one row per chunk and configuration: how many questions retrieved "
        "it, how many have gold text in it, how many did both (the retrieval lens)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=run_evaluate)
    return parser


def add_evaluate_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``evaluate`` subcommand to an ``add_subparsers()`` object.

    Its handler is ``args.handler(args) -> int``; it raises ``ValueError``/``OSError`` for
    bad input, which the caller turns into an error line and exit status 2.
    """
    parser = subparsers.add_parser(
        "evaluate",
        help="score chunking configurations on questions with gold spans",
        description="Chunk the documents, retrieve the top-k chunks per question and "
        "score recall, precision, IoU and precision_Ω against the gold spans.",
    )
    return configure_parser(parser)


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    """Run ``evaluate`` with ``argv`` (the arguments after ``evaluate``); the exit status."""
    parser = configure_parser(argparse.ArgumentParser(prog=PROG))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return args.handler(args)
    except (ValueError, OSError) as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USAGE


# --------------------------------------------------------------------------- running


def build_grid(args: argparse.Namespace) -> Grid:
    """The grid from ``--sweep`` or from the axis flags (not both)."""
    flags = {axis: getattr(args, axis) for axis in AXES if getattr(args, axis) is not None}
    fixed = dict(parse_param(p) for p in args.param)
    if args.sweep:
        if flags:
            raise ValueError(
                "give either --sweep or --strategy/--size/--overlap/--unit/--threshold, not both"
            )
        grid = load_grid(args.sweep)
        if fixed:
            grid = Grid.from_dict({**grid.to_dict(), **fixed})
        return grid
    return Grid.from_dict({**flags, **fixed})


def model_names(values: Sequence[str] | None) -> list[str]:
    """``--model`` values as a list of names: repeated flags and comma lists, in order,
    without duplicates; the bundled model when none is given."""
    names = [n.strip() for v in values or [] for n in v.split(",") if n.strip()]
    return list(dict.fromkeys(names)) or [DEFAULT_MODEL]


def _questions(args: argparse.Namespace, documents: dict[str, str]) -> list[Question]:
    questions = read_questions(args.questions, documents)
    if not args.corpus_id:
        return questions
    missing = [i for i in args.corpus_id if i not in documents]
    if missing:
        raise ValueError(f"--corpus-id {missing[0]!r}: no such document in {args.corpus}")
    chosen = renumber([q for q in questions if q.corpus_id in args.corpus_id])
    if not chosen:
        raise ValueError("no question is about the documents given with --corpus-id")
    return chosen


def _technique(args: argparse.Namespace, grid: Grid | None) -> Technique:
    """The technique of the flags, checked against every configuration of the grid
    (``None``: the given chunks, checked when they are evaluated)."""
    technique = Technique.parse(args.retriever, args.embedding, args.context, args.returned)
    if not args.techniques and grid is not None:
        for config in grid.configs()[0]:
            technique.check(config)
    return technique


class Source(NamedTuple):
    """What is evaluated: documents and questions, the data set they come from (with
    ``--dataset``) and its own chunks (with ``--given-chunks``)."""

    documents: dict[str, str]
    questions: list[Question]
    dataset: Dataset | None
    given: Mapping[str, tuple[Chunk, ...]] | None

    @property
    def scope(self) -> Scope:
        return self.dataset.scope if self.dataset is not None else "document"


def load_source(args: argparse.Namespace) -> Source:
    """``--dataset DIR`` (either layout) or ``--questions`` with ``--corpus``."""
    if args.dataset is not None:
        if args.questions or args.corpus:
            raise ValueError("give --dataset DIR, or --questions FILE with --corpus DIR; not both")
        dataset = load_dataset(args.dataset)
        if args.corpus_id:
            dataset = dataset.about(args.corpus_id)
        given = dataset.given_chunks() if args.given_chunks else None
        return Source(dict(dataset.documents), list(dataset.questions), dataset, given)
    if not (args.questions and args.corpus):
        raise ValueError("give --dataset DIR, or --questions FILE with --corpus DIR")
    if args.given_chunks:
        raise ValueError("--given-chunks evaluates a data set's own chunks: give --dataset DIR")
    documents = read_corpus(args.corpus)
    return Source(documents, _questions(args, documents), None, None)


def _found_at(args: argparse.Namespace, source: Source) -> float | None:
    """The pass@k rule: the share given, else the exact rule on given chunks and
    :data:`FOUND_AT` on the project's chunks."""
    if args.found_at is not None:
        return check_found_at(args.found_at)
    return None if source.given is not None else FOUND_AT


def _grid(args: argparse.Namespace, source: Source) -> Grid | None:
    """The grid of the flags, or None with ``--given-chunks`` (which takes no grid)."""
    if source.given is None:
        return build_grid(args)
    flags = [f"--{a}" for a in (*AXES, "sweep") if getattr(args, a) is not None]
    flags += ["--param"] if args.param else []
    if flags:
        raise ValueError(f"--given-chunks evaluates the set's own chunks; drop {flags[0]}")
    return None


def _llm(
    args: argparse.Namespace,
    technique: Technique,
    grid: Grid | None,
    documents: dict[str, str],
    questions: Sequence[Question],
    given: Mapping[str, tuple[Chunk, ...]] | None = None,
) -> Any:
    """The language model of ``--context llm``, once the user accepted its cost."""
    if technique.context != "llm":
        return None
    llm = client_from_args(args)
    ids = list(dict.fromkeys(q.corpus_id for q in questions))
    cuts = (
        [chunk_documents(documents, config, ids) for config in grid.configs()[0]]
        if grid is not None
        else [given or {}]
    )
    requests = [
        request
        for cut in cuts
        for i, chunks in cut.items()
        for request in context_requests(documents[i], chunks, i)
    ]
    confirm(estimate(llm, requests), llm, bool(getattr(args, "yes", False)))
    return llm


def evaluated_models(args: argparse.Namespace) -> list[str]:
    """The models to evaluate: ``--model`` (default the bundled one) and the endpoint of
    ``--embed-url``; the endpoint alone when ``--model`` is not given."""
    endpoint = embed_model_from_args(args)
    if endpoint is None:
        return model_names(args.model)
    return [*(model_names(args.model) if args.model else []), endpoint]


def _embedder(name: str, args: argparse.Namespace | None = None, source: Source | None = None):
    """The model ``name`` loaded (None for ``none``); an endpoint's cost is shown first."""
    if name.lower() == NO_MODEL:
        return None
    from ..embedding.endpoint import EndpointEmbedder, estimate_documents_cost, is_endpoint
    from ..embedding.models import get_embedder

    if args is None or not is_endpoint(name):
        return get_embedder(name)
    embedder = endpoint_embedder(args, name)
    if isinstance(embedder, EndpointEmbedder) and source is not None:
        grid = _grid(args, source)
        copies = len(grid.configs()[0]) if grid is not None else 1
        documents = [
            source.documents[i] for i in dict.fromkeys(q.corpus_id for q in source.questions)
        ]
        cost = estimate_documents_cost(
            embedder,
            documents,
            copies=copies,
            questions=[q.text for q in source.questions],
            price=getattr(args, "embed_price", None),
        )
        show_embedding_cost(cost)
    return embedder


def grid_for_model(grid: Grid, model: str) -> Grid:
    """``grid`` with its ``model`` unit counting ``model``'s own tokens (the configurations
    then say what they count); unchanged for ``none`` or without that unit."""
    if model.lower() == NO_MODEL or "model" not in grid.units:
        return grid
    return Grid.from_dict({**grid.to_dict(), "unit": follow_model_units(grid.units, model)})


def run_evaluate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The ``evaluate`` handler: load, sweep (per model) or compare techniques, print."""
    out = out or sys.stdout
    ks = check_ks(args.top_k)
    source = load_source(args)
    documents, questions = source.documents, source.questions
    found_at = _found_at(args, source)
    grid = _grid(args, source)
    technique = _technique(args, grid)
    models = evaluated_models(args)
    make = Settings.chroma if args.chroma_compat else Settings
    settings = make(top_k=max(ks), scope=args.scope or source.scope)
    show = not args.quiet  # a redrawn line on a terminal, else a line per stage
    if args.techniques:
        _run_techniques(args, grid, models, source, settings, out, (ks, found_at))
        return 0
    llm = _llm(args, technique, grid, documents, questions, source.given)
    results = []
    embedders: dict[str, Embedder] = {}
    for name in models:
        embedder = _embedder(name, args, source)
        if embedder is not None:
            embedders[embedder.name] = embedder
        progress = terminal_progress("evaluate", sys.stderr, enabled=show)
        if grid is None:
            assert source.dataset is not None
            results.append(
                evaluate_given(source.dataset, embedder, settings, progress, technique, llm)
            )
        else:
            cut = grid_for_model(grid, name)
            results.append(
                sweep(documents, questions, cut, embedder, settings, progress, technique, llm)
            )
    if show and sys.stderr.isatty():
        sys.stderr.write("\n")
    result = merge_results(results)
    table = with_k_columns(result.table, result.evaluations, documents, ks, found_at)
    seen = lenses(result.evaluations, embedders)
    table = with_lens_columns(table, seen)
    write_per_chunk(args.per_chunk, seen)
    write_result(
        dataclasses.replace(result, table=table), args.format, args.metric, out, lenses=seen
    )
    if args.html:
        _write_html(args.html, table, source, settings, found_at)
    return 0


def _write_html(
    path: str, table: pd.DataFrame, source: Source, settings: Settings, found_at: float | None
) -> None:
    """The results as a standalone HTML report (tables and charts)."""
    from ..output.html_report import evaluation_report

    rule = (
        "a golden chunk counts as found when it is retrieved (the guide's exact rule)"
        if found_at is None
        else f"a gold span counts as found when the top-k chunks cover {found_at:.0%} of its "
        "non-whitespace characters"
    )
    where = (
        f"the {source.dataset.layout} set ({source.dataset.attribution})"
        if source.dataset is not None
        else "the question file"
    )
    searched = "all documents" if settings.scope == "all" else "each question's own document"
    caption = f"{len(source.questions):,} questions of {where}; retrieval among {searched}."
    notes = [f"Pass@k in percent: {rule}. The other metrics in percent too."]
    with output(path) as handle:
        handle.write(evaluation_report(table, caption=caption, notes=notes))


def _run_techniques(
    args: argparse.Namespace,
    grid: Grid | None,
    models: list[str],
    source: Source,
    settings: Settings,
    out: TextIO,
    passk: tuple[list[int], float | None],
) -> None:
    """Print the techniques table of the grid's one configuration (or the given chunks)."""
    configs: list[Config | None] = list(grid.configs()[0]) if grid is not None else [None]
    if len(configs) != 1:
        raise ValueError(
            f"--techniques compares techniques on one configuration; the flags give "
            f"{len(configs)} (give one strategy, size, overlap and unit)"
        )
    if len(models) != 1:
        raise ValueError("--techniques takes one --model")
    show = not args.quiet  # a redrawn line on a terminal, else a line per stage
    embedder = _embedder(models[0], args, source)
    config = configs[0]
    if config is not None and models[0].lower() != NO_MODEL:
        config = follow_model_unit(config, models[0])
    runs = compare_techniques(
        source.documents,
        source.questions,
        config,
        embedder,
        settings,
        terminal_progress("evaluate", sys.stderr, enabled=show),
        chunks=source.given,
    )
    if show and sys.stderr.isatty():
        sys.stderr.write("\n")
    ks, found_at = passk
    evaluations = [r.evaluation for r in runs]
    table = with_k_columns(techniques_table(runs), evaluations, source.documents, ks, found_at)
    if args.per_chunk:
        known = {embedder.name: embedder} if embedder is not None else {}
        write_per_chunk(args.per_chunk, lenses(evaluations, known))
    write_techniques(table, args.format, out)
    if args.html:
        _write_html(args.html, table, source, settings, found_at)


# -------------------------------------------------------------------------- output


def _percent(mean: float, std: float) -> str:
    return "—" if math.isnan(mean) else f"{100 * mean:.1f} ± {100 * std:.1f}"


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as people read it: metrics as ``mean ± std`` in percent."""
    shown = table[[c for c in KEY_COLUMNS if table[c].notna().any()]].copy()
    for metric in METRICS:
        shown[METRIC_LABELS[metric]] = [
            _percent(m, s)
            for m, s in zip(table[f"{metric}_mean"], table[f"{metric}_std"], strict=True)
        ]
    shown["split %"] = [f"{100 * v:.1f}" for v in table["split_share"]]
    for label, values in k_display(table, every_metric=len(table_ks(table)) > 1).items():
        shown[label] = values
    for label, values in lens_display(table).items():
        shown[label] = values
    return shown


def _advice_lines(table: pd.DataFrame, metric: str) -> list[str]:
    if table["config"].isna().all():  # given chunks: no configuration to tune
        return []
    if table[f"{metric}_mean"].isna().all():
        metric = "precision_omega"
    return report(table, metric).lines()


def write_per_chunk(path: str | None, seen: Sequence[Lens]) -> None:
    """Write the per-chunk traffic of every lens to ``path`` as CSV (nothing if None)."""
    if path is None:
        return
    import pandas as pd

    frame = pd.concat([one.per_chunk() for one in seen], ignore_index=True)
    with output(path) as handle:
        frame.to_csv(handle, index=False)


def write_result(
    result: SweepResult,
    fmt: str,
    metric: str,
    out: TextIO,
    lenses: Sequence[Lens] | None = None,
) -> None:
    """Print the results table (and, for ``table``/``json``, the best row and advice);
    the JSON gains every missed gold span of ``lenses`` under ``misses``."""
    table = result.table
    if fmt == "csv":
        table.to_csv(out, index=False)
        return
    if fmt == "json":
        payload = {
            "results": json.loads(table.to_json(orient="records")),
            "advice": _advice_lines(table, metric),
            "skipped": list(result.skipped),
            "texts_requested": result.texts_requested,
            "texts_embedded": result.texts_embedded,
        }
        if lenses is not None:
            payload["misses"] = misses_records(result.evaluations, lenses)
        out.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    out.write(display_table(table).to_string(index=False) + "\n\n")
    if table["model"].nunique(dropna=False) > 1:
        wide = models_side_by_side(table)
        for column in wide.columns[2:]:
            wide[column] = [f"{100 * v:.1f}" for v in wide[column]]
        out.write("Per model (percent):\n" + wide.to_string(index=False) + "\n\n")
    for line in _advice_lines(table, metric):
        out.write(line + "\n")
    if result.skipped:
        out.write("\nSkipped:\n" + "".join(f"- {s}\n" for s in result.skipped))
    if result.texts_requested:
        out.write(
            f"\nEmbedded {result.texts_embedded:,} of {result.texts_requested:,} texts "
            "requested (the rest came from the cache).\n"
        )


def display_techniques(table: pd.DataFrame) -> pd.DataFrame:
    """The techniques table as people read it: percentages and signed differences."""
    shown = table[["technique", "configuration"]].copy()
    for metric in METRICS:
        label = METRIC_LABELS[metric]
        shown[label] = [_point(v) for v in table[metric]]
        shown[f"Δ {label}"] = [_point(v, signed=True) for v in table[f"{metric}_delta"]]
    shown["seconds"] = [f"{v:.1f}" for v in table["seconds"]]
    for label, values in k_display(table, every_metric=len(table_ks(table)) > 1).items():
        shown[label] = values
    return shown


def _point(value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "—"
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def write_techniques(table: pd.DataFrame, fmt: str, out: TextIO) -> None:
    """Print the techniques table (metrics in percent for ``table``)."""
    if fmt == "csv":
        table.to_csv(out, index=False)
    elif fmt == "json":
        out.write(json.dumps(json.loads(table.to_json(orient="records")), indent=2) + "\n")
    else:
        out.write(display_techniques(table).to_string(index=False) + "\n")
        out.write("\nMetrics in percent; Δ: difference from plain dense retrieval.\n")
