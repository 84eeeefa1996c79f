"""``chunk-explorer tune``: search chunking configurations, show the quality–cost front
and whether the winner is real.

::

    chunk-explorer tune --dataset chroma-eval --corpus-id state_of_the_union \\
        --strategy recursive token --size 100 200 400 --overlap 0 50 --unit tokens \\
        --sampler grid --model minilm-static
    chunk-explorer tune --dataset chroma-eval --space space.json --sampler tpe --trials 12
    chunk-explorer tune --document notes.md --questions notes_questions.csv --size 200 400
    chunk-explorer tune --dataset chroma-eval --size 200 400 --dry-run
    chunk-explorer tune --document essay.txt --gold essay.gold.json --objective boundary_f1 \\
        --strategy recursive paragraph --size 100 200 400 --sampler grid --tolerance 20

The inputs are ``evaluate``'s (:func:`~chunking.cli.evaluate.add_source_arguments`), or
``--document FILE`` with ``--questions`` for the user's own document. With
``--objective boundary_f1`` or ``boundary_b``, ``--document FILE --gold GOLD.json``
instead: the chunk starts are scored against the gold segmentation, no question is
asked and no model is loaded, and there is no interval (the JSON's ``statistics`` says
why). Progress goes to stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, TextIO

from ..config import Config
from ..evaluation.boundaries import parse_tolerance
from ..evaluation.gold import gold_from_marked, parse_marked, read_gold
from ..evaluation.questions import Question, read_questions
from ..evaluation.techniques import AXES as TECHNIQUE_AXES
from ..tuning.holdout import DEFAULT_HOLDOUT, split_questions
from ..tuning.objectives import (
    ALL_OBJECTIVES,
    BOUNDARY_COSTS,
    COST_LABELS,
    COSTS,
    OBJECTIVE_LABELS,
    is_boundary,
)
from ..tuning.samplers import SAMPLERS
from ..tuning.search import TuneOptions, TuneResult, plan, tune
from ..tuning.space import Space, load_space
from ..units import DEFAULT_MODEL
from .evaluate import NO_MODEL, Source, add_source_arguments, load_source
from .options import (
    add_embed_arguments,
    embed_model_from_args,
    endpoint_embedder,
    follow_model_units,
    load_config,
    output,
    parse_param,
    show_embedding_cost,
    terminal_progress,
)

#: The flags that declare the space by lists.
LIST_FLAGS = (
    "strategy",
    "size",
    "overlap",
    "unit",
    "retriever",
    "embedding",
    "context",
    "returned",
)


def add_tune_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``tune`` subcommand; its handler raises ``ValueError`` for bad input."""
    parser = subparsers.add_parser(
        "tune",
        help="search configurations: the quality-cost front and whether the winner is real",
        description="Search a space of chunking configurations on questions with gold "
        "spans; report every trial with its 95 % interval, the quality-cost front, the "
        "winner against the runner-up and a baseline, and its score on held-out questions.",
    )
    return configure_parser(parser)


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    add_source_arguments(parser)
    parser.add_argument(
        "--document",
        metavar="FILE",
        help="your own document (with --questions about it, or --gold for a boundary objective)",
    )
    parser.add_argument(
        "--gold",
        metavar="GOLD.json",
        help="a gold segmentation of --document (saved by the app, or a text file with a "
        "marker line between segments): the reference of --objective boundary_f1|boundary_b",
    )
    parser.add_argument(
        "--tolerance",
        default="0",
        metavar="N[chars|sentences]",
        help="how far a chunk start may be from a gold boundary for boundary_f1 (default 0)",
    )
    space = parser.add_argument_group("the space (lists, or --space)")
    space.add_argument("--space", metavar="SPACE.json", help="read the space from a JSON file")
    space.add_argument("--strategy", nargs="+", metavar="NAME", help="default: recursive")
    space.add_argument("--size", nargs="+", type=int, metavar="N", help="size limits")
    space.add_argument(
        "--overlap", nargs="+", type=float, metavar="N", help="overlaps; 0<N<1 = share of size"
    )
    space.add_argument("--unit", nargs="+", choices=("chars", "words", "tokens", "model"))
    space.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="fixed parameter"
    )
    for axis in TECHNIQUE_AXES:
        flag = "--return" if axis.name == "returned" else f"--{axis.name}"
        choices = tuple(c for c in axis.choices or () if c != "llm")
        space.add_argument(
            flag,
            dest=axis.name,
            nargs="+",
            metavar="|".join(choices) + ("|window:N" if axis.pattern else ""),
            help=f"values searched (default {axis.default})",
        )
    space.add_argument(
        "--top-k", nargs="+", type=int, metavar="K", help="units returned per question (default 5)"
    )
    search = parser.add_argument_group("the search")
    search.add_argument("--sampler", choices=SAMPLERS, default="tpe")
    search.add_argument(
        "--trials", type=int, metavar="N", help="trials to run (default: all for grid, a third)"
    )
    search.add_argument("--seed", type=int, default=0)
    search.add_argument("--objective", choices=ALL_OBJECTIVES, default="recall")
    search.add_argument(
        "--cost",
        choices=COSTS,
        help="default tokens_sent; chunks with a boundary objective (nothing is retrieved)",
    )
    search.add_argument(
        "--holdout",
        type=float,
        default=DEFAULT_HOLDOUT,
        metavar="SHARE",
        help="share of each document's questions held out (default 0.3; 0: none)",
    )
    search.add_argument(
        "--baseline",
        metavar="CONFIG.json",
        help="the configuration to beat (default recursive, 400 tokens, overlap 0)",
    )
    parser.add_argument(
        "--model",
        nargs="+",
        metavar="NAME",
        help="embedding model (default the bundled all-MiniLM-L6-v2; minilm-static is fast; "
        "'none' with --retriever bm25 or --objective precision_omega); or an endpoint with "
        "--embed-url; several names search over them (the space's model axis)",
    )
    add_embed_arguments(parser)
    parser.add_argument("--dry-run", action="store_true", help="count and estimate, run nothing")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--out", metavar="DIR", help="write tune.json, trials.parquet, per_question.parquet"
    )
    parser.add_argument("--html", metavar="REPORT.html", help="also write an HTML report")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=run_tune, given_chunks=False)
    return parser


# --------------------------------------------------------------------------- inputs


def _gold_source(args: argparse.Namespace) -> tuple[Source, dict[str, tuple[int, ...]]]:
    """``--document FILE`` and its gold segmentation ``--gold`` (a boundary objective)."""
    if args.document is None or args.gold is None:
        raise ValueError(
            f"--objective {args.objective} scores chunk starts against a gold segmentation: "
            "give --document FILE --gold GOLD.json"
        )
    if args.dataset or args.corpus or args.questions:
        raise ValueError(
            f"--objective {args.objective} needs no questions: drop --dataset, --corpus "
            "and --questions"
        )
    from ..documents.io import read_path

    document = read_path(args.document)
    name = Path(args.document).stem
    if args.gold.lower().endswith(".json"):
        text, gold = document.text, read_gold(args.gold, document.text, name)
    else:  # a marked text: FILE may be the marked file itself
        marked = read_path(args.gold)
        source = f"gold file {Path(args.gold).name}"
        _, gold = gold_from_marked(marked.text, name, source=source)
        text, _ = parse_marked(document.text)
        gold.check(text, name)
    return Source({name: text}, [], None, None), {name: gold.boundaries}


def _source(args: argparse.Namespace) -> Source:
    """``evaluate``'s inputs, or ``--document FILE`` with ``--questions``."""
    if args.gold is not None:
        raise ValueError("--gold is the reference of --objective boundary_f1 or boundary_b")
    if args.document is None:
        return load_source(args)
    if args.dataset or args.corpus:
        raise ValueError("give --document FILE with --questions, or --dataset/--corpus; not both")
    if not args.questions:
        raise ValueError("--document needs --questions FILE (CSV or JSONL about that document)")
    from ..documents.io import read_path

    document = read_path(args.document)
    name = Path(args.document).stem
    documents = {name: document.text}
    questions = read_questions(args.questions, documents, document_id=name)
    return Source(documents, questions, None, None)


def chosen_model(args: argparse.Namespace) -> str:
    """The model searched with: ``--model``, or the endpoint of ``--embed-url`` (not
    both), else the bundled model."""
    endpoint = embed_model_from_args(args)
    if endpoint is not None:
        if args.model is not None:
            raise ValueError("--model and --embed-url both name the embedding model; give one")
        return endpoint
    return args.model[0] if args.model else DEFAULT_MODEL


def _with_models(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The space's ``model`` axis: ``--model`` with several names (or the space's own,
    not both); a ``model`` unit needs one model (it counts that model's tokens)."""
    if args.model and len(args.model) > 1:
        if "model" in data:
            raise ValueError('give the models searched in --space ("model") or --model, not both')
        data = {**data, "model": list(args.model)}
    elif args.model and "model" in data:
        raise ValueError('give the models searched in --space ("model") or --model, not both')
    models = data.get("model")
    units = data.get("unit") or ()
    if models is not None and "model" in units:
        if isinstance(models, list) and len(models) > 1:
            raise ValueError(
                "the unit 'model' counts one model's tokens; with several models searched "
                "give tokens, words or chars"
            )
        name = models[0] if isinstance(models, list) else str(models)
        if name.lower() != NO_MODEL:
            data = {**data, "unit": follow_model_units(units, name)}
    return data


def build_space(args: argparse.Namespace, model: str | None = None) -> Space:
    """The space of ``--space`` or of the list flags (not both); a ``model`` unit counts
    ``model``'s own tokens (:func:`~chunking.cli.options.follow_model_units`)."""
    given = [f for f in LIST_FLAGS if getattr(args, f) is not None]
    if args.space:
        flags = [("--return" if f == "returned" else f"--{f}") for f in given]
        flags += ["--param"] * bool(args.param) + ["--top-k"] * bool(args.top_k)
        if flags:
            raise ValueError(f"give either --space or the list flags, not both (drop {flags[0]})")
        space = load_space(args.space)
        declared = space.to_dict()
        if (args.model and len(args.model) > 1) or "model" in declared:
            return Space.from_dict(_with_models(declared, args))
        units = space.axes.get("unit", ())
        if "model" in units and model is not None and model.lower() != NO_MODEL:
            return Space.from_dict({**space.to_dict(), "unit": follow_model_units(units, model)})
        return space
    data: dict[str, Any] = {"strategy": args.strategy or ["recursive"]}
    for name in ("size", "overlap", "unit", "retriever", "embedding", "context"):
        if getattr(args, name):
            data[name] = getattr(args, name)
    if args.model and len(args.model) > 1:
        data = _with_models(data, args)
    elif data.get("unit") and model is not None and model.lower() != NO_MODEL:
        data["unit"] = follow_model_units(data["unit"], model)
    if args.returned:
        data["return"] = args.returned
    if args.top_k:
        data["top_k"] = args.top_k
    if args.param:
        data["params"] = dict(parse_param(p) for p in args.param)
    return Space.from_dict(data)


def _embedder(name: str, args: argparse.Namespace, source: Source):  # -> Embedder | None
    """The model ``name`` loaded (None for ``none``); an endpoint's cost is shown first."""
    if name.lower() == NO_MODEL:
        return None
    from ..embedding.endpoint import EndpointEmbedder, estimate_documents_cost, is_endpoint
    from ..embedding.models import get_embedder

    if not is_endpoint(name):
        return get_embedder(name)
    embedder = endpoint_embedder(args, name)
    if isinstance(embedder, EndpointEmbedder):
        show_embedding_cost(
            estimate_documents_cost(
                embedder,
                list(source.documents.values()),
                copies=args.trials or 1,
                questions=[q.text for q in source.questions],
                price=args.embed_price,
            )
        )
    return embedder


def _model_name(name: str) -> str | None:
    if name.lower() == NO_MODEL:
        return None
    from ..embedding.models import canonical_model_name

    return canonical_model_name(name)


# ------------------------------------------------------------------------- running


def run_tune(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The ``tune`` handler: load, plan, search, print and write."""
    out = out or sys.stdout
    boundary = is_boundary(args.objective)
    model_name = chosen_model(args)
    space = build_space(args, None if boundary else model_name)
    tolerance, tolerance_unit = parse_tolerance(args.tolerance)
    gold: dict[str, tuple[int, ...]] | None = None
    if boundary:
        source, gold = _gold_source(args)
    else:
        source = _source(args)
    options = TuneOptions(
        sampler=args.sampler,
        trials=args.trials,
        seed=args.seed,
        objective=args.objective,
        cost=args.cost or (BOUNDARY_COSTS[0] if boundary else COSTS[0]),
        holdout=args.holdout,
        scope=source.scope,
        tolerance=tolerance,
        tolerance_unit=tolerance_unit,
    )
    baseline: Config | None = load_config(args.baseline) if args.baseline else None
    models = space.retrieval.get("model")  # a model axis: each point carries its model
    if args.dry_run:
        tuning, held_out = split_questions(source.questions, options.holdout, options.seed)
        model = None if boundary or models else _model_name(model_name)
        the_plan = plan(source.documents, tuning, space, options, model)
        _write_plan(the_plan.to_dict(), the_plan.describe(), tuning, held_out, args.format, out)
        return 0
    show = not args.quiet and sys.stderr.isatty()
    # no model for chunk starts
    embedder = None if boundary or models else _embedder(model_name, args, source)
    result = tune(
        source.documents,
        source.questions,
        space,
        embedder,
        options,
        baseline,
        terminal_progress("tune", sys.stderr, enabled=show),
        gold=gold,
        load_model=lambda name: _embedder(name, args, source),
    )
    if show:
        sys.stderr.write("\n")
    if args.format == "json":
        out.write(json.dumps(_json_ready(result.to_dict()), indent=2, ensure_ascii=False) + "\n")
    else:
        write_text(result, out)
    if args.out:
        write_outputs(result, Path(args.out))
    if args.html:
        from ..tuning.report import tune_report

        with output(args.html) as handle:
            handle.write(tune_report(result))
    return 0


def _json_ready(value: Any) -> Any:
    """NaN as null (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    return value


def _write_plan(
    data: dict[str, Any],
    text: str,
    tuning: list[Question],
    held_out: list[Question],
    fmt: str,
    out: TextIO,
) -> None:
    if fmt == "json":
        data = {**data, "questions": {"tuning": len(tuning), "held_out": len(held_out)}}
        out.write(json.dumps({"dry_run": True, **data}, indent=2, ensure_ascii=False) + "\n")
        return
    out.write(text + "\n")
    for reason in data["skipped"]:
        out.write(f"- skipped {reason}\n")


def write_text(result: TuneResult, out: TextIO) -> None:
    """The trials, the front and the verdict as people read them."""
    options = result.options
    objective, cost = OBJECTIVE_LABELS[options.objective], COST_LABELS[options.cost]
    out.write(result.plan.describe() + "\n\n")
    width = max(len(t.label) for t in result.trials)
    boundary = is_boundary(options.objective)
    heading = objective + (" (no interval)" if boundary else " [95 % interval]")
    column = max(24, len(heading))
    out.write(f"{'trial':<{width}}  {heading:<{column}}  {cost}\n")
    for t in result.trials:
        marks = " front" if t.on_front else ""
        marks += f" (same chunks as {t.duplicate_of})" if t.duplicate_of else ""
        interval = (
            f"{t.interval.mean:.3f}"
            if boundary
            else f"{t.interval.mean:.3f} [{t.interval.low:.3f}, {t.interval.high:.3f}]"
        )
        out.write(
            f"{t.label:<{width}}  {interval:<{column}}  {t.costs[options.cost]:,.1f}{marks}\n"
        )
    out.write("\nFront: " + "; ".join(result.front) + "\n\nIs the winner real?\n")
    for line in result.verdict():
        out.write(f"- {line}\n")
    for warning in result.warnings:
        out.write(f"warning: {warning}\n")
    if result.texts_requested:
        out.write(
            f"\nEmbedded {result.texts_embedded:,} of {result.texts_requested:,} texts "
            f"requested (the rest came from the cache); {result.seconds:.1f} s.\n"
        )


def write_outputs(result: TuneResult, folder: Path) -> None:
    """``tune.json``, ``trials.parquet`` and ``per_question.parquet`` into ``folder``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create {folder}: {exc.strerror or exc}") from None
    data = json.dumps(_json_ready(result.to_dict()), indent=2, ensure_ascii=False)
    (folder / "tune.json").write_text(data + "\n", encoding="utf-8")
    result.trials_frame().to_parquet(folder / "trials.parquet", index=False)
    result.per_question().to_parquet(folder / "per_question.parquet", index=False)
