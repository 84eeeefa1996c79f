"""``chunk-explorer evaluate``: score chunking configurations on a question set.

::

    chunk-explorer evaluate --questions questions_df.csv --corpus corpora/ \\
        --strategy recursive token --size 200 400 --overlap 0 --unit tokens
    chunk-explorer evaluate --questions q.jsonl --corpus docs/ --sweep grid.json --format csv
    chunk-explorer evaluate --questions q.csv --corpus docs/ --model none   # precision_Ω only
    chunk-explorer evaluate --questions q.csv --corpus docs/ --retriever hybrid --return window:1
    chunk-explorer evaluate --questions q.csv --corpus docs/ --size 250 --techniques
    chunk-explorer evaluate --questions q.csv --corpus docs/ --model all-MiniLM-L6-v2,hash

The table goes to stdout; with ``--format table`` the best configuration for
``--metric`` and the tuning advice follow it. Progress goes to stderr when it is a
terminal. Wire it into a command line with :func:`add_evaluate_parser`, or run
:func:`evaluate_main` directly.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..evaluation.advice import report
from ..evaluation.core import METRIC_LABELS, METRICS, Settings, chunk_documents
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
from ..evaluation.techniques import CONTEXTS, EMBEDDINGS, RETRIEVERS, Technique
from ..llm.contextual import context_requests
from ..llm.cost import estimate
from .options import EXIT_USAGE, add_llm_arguments, client_from_args, confirm, parse_param

if TYPE_CHECKING:
    import pandas as pd

PROG = "chunk-explorer evaluate"
NO_MODEL = "none"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the evaluate options to ``parser``."""
    parser.add_argument("--questions", required=True, metavar="FILE", help="CSV or JSONL")
    parser.add_argument(
        "--corpus", required=True, metavar="DIR", help="folder of <corpus_id>.md/.txt files"
    )
    parser.add_argument(
        "--corpus-id",
        action="append",
        metavar="ID",
        help="evaluate only questions about this document (repeatable)",
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
        help="model: the bundled embedding model's word pieces",
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
    parser.add_argument("--top-k", type=int, default=5, help="chunks retrieved per question")
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
    technique.add_argument("--retriever", choices=RETRIEVERS, default="dense")
    technique.add_argument(
        "--embedding",
        choices=EMBEDDINGS,
        default="naive",
        help="late: pool token vectors of the whole document over each chunk's span",
    )
    technique.add_argument(
        "--context",
        choices=CONTEXTS,
        default="none",
        help="text put before each chunk when it is embedded or indexed",
    )
    technique.add_argument(
        "--return",
        dest="returned",
        default="chunk",
        metavar="chunk|parent|window:N",
        help="what a retrieved chunk returns: itself, its parent (parent-child "
        "configurations) or itself with N neighbours on each side",
    )
    technique.add_argument(
        "--techniques",
        action="store_true",
        help="compare every technique on one configuration (dense, bm25, hybrid, late, "
        "headers, late + headers, parent, window:1) instead of a sweep",
    )
    add_llm_arguments(parser)
    parser.add_argument(
        "--scope",
        choices=("document", "all"),
        default="document",
        help="retrieve among the question's document's chunks, or all documents' chunks",
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


def _progress(enabled: bool, out: TextIO):  # -> Progress | None
    if not enabled:
        return None

    def show(fraction: float, message: str) -> None:
        out.write(f"\r[{fraction:4.0%}] {message[:100]:<100}")
        out.flush()

    return show


def model_names(values: Sequence[str] | None) -> list[str]:
    """``--model`` values as a list of names: repeated flags and comma lists, in order,
    without duplicates; the bundled model when none is given."""
    names = [n.strip() for v in values or [] for n in v.split(",") if n.strip()]
    return list(dict.fromkeys(names)) or [DEFAULT_MODEL_NAME]


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


def _technique(args: argparse.Namespace, grid: Grid) -> Technique:
    """The technique of the flags, checked against every configuration of the grid."""
    technique = Technique.parse(args.retriever, args.embedding, args.context, args.returned)
    if not args.techniques:
        for config in grid.configs()[0]:
            technique.check(config)
    return technique


def _llm(
    args: argparse.Namespace,
    technique: Technique,
    grid: Grid,
    documents: dict[str, str],
    questions: Sequence[Question],
) -> Any:
    """The language model of ``--context llm``, once the user accepted its cost."""
    if technique.context != "llm":
        return None
    llm = client_from_args(args)
    ids = list(dict.fromkeys(q.corpus_id for q in questions))
    configs, _ = grid.configs()
    requests = [
        request
        for config in configs
        for i, chunks in chunk_documents(documents, config, ids).items()
        for request in context_requests(documents[i], chunks, i)
    ]
    confirm(estimate(llm, requests), llm, bool(getattr(args, "yes", False)))
    return llm


def _embedder(name: str):  # -> Embedder | None
    if name.lower() == NO_MODEL:
        return None
    from ..embedding.models import get_embedder

    return get_embedder(name)


def run_evaluate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The ``evaluate`` handler: load, sweep (per model) or compare techniques, print."""
    out = out or sys.stdout
    if args.top_k < 1:
        raise ValueError(f"--top-k must be at least 1; got {args.top_k}")
    grid = build_grid(args)
    technique = _technique(args, grid)
    models = model_names(args.model)
    documents = read_corpus(args.corpus)
    questions = _questions(args, documents)
    make = Settings.chroma if args.chroma_compat else Settings
    settings = make(top_k=args.top_k, scope=args.scope)
    show = not args.quiet and sys.stderr.isatty()
    if args.techniques:
        _run_techniques(args, grid, models, documents, questions, settings, out)
        return 0
    llm = _llm(args, technique, grid, documents, questions)
    results = []
    for name in models:
        embedder = _embedder(name)
        progress = _progress(show, sys.stderr)
        results.append(
            sweep(documents, questions, grid, embedder, settings, progress, technique, llm)
        )
    if show:
        sys.stderr.write("\n")
    write_result(merge_results(results), args.format, args.metric, out)
    return 0


def _run_techniques(
    args: argparse.Namespace,
    grid: Grid,
    models: list[str],
    documents: dict[str, str],
    questions: list[Question],
    settings: Settings,
    out: TextIO,
) -> None:
    """Print the techniques table of the grid's one configuration."""
    configs, _ = grid.configs()
    if len(configs) != 1:
        raise ValueError(
            f"--techniques compares techniques on one configuration; the flags give "
            f"{len(configs)} (give one strategy, size, overlap and unit)"
        )
    if len(models) != 1:
        raise ValueError("--techniques takes one --model")
    show = not args.quiet and sys.stderr.isatty()
    runs = compare_techniques(
        documents,
        questions,
        configs[0],
        _embedder(models[0]),
        settings,
        _progress(show, sys.stderr),
    )
    if show:
        sys.stderr.write("\n")
    write_techniques(techniques_table(runs), args.format, out)


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
    return shown


def _advice_lines(table: pd.DataFrame, metric: str) -> list[str]:
    if table[f"{metric}_mean"].isna().all():
        metric = "precision_omega"
    return report(table, metric).lines()


def write_result(result: SweepResult, fmt: str, metric: str, out: TextIO) -> None:
    """Print the results table (and, for ``table``/``json``, the best row and advice)."""
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
