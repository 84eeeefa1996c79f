"""``chunk-explorer run``: one configuration over files, folders, globs and zips.

::

    chunk-explorer run docs/ more/*.md archive.zip --config recursive.config.json --out chunks/
    chunk-explorer run docs/ --strategy recursive --size 400 --unit tokens --out chunks/ --workers 2
    chunk-explorer run docs/ --config c.json --out chunks/ --embed --model minilm-static
    RAY_ADDRESS=ray://head:10001 chunk-explorer run /shared/docs --config c.json \\
        --out /shared/chunks --engine ray --embed
    chunk-explorer run docs/ --config c.json --out chunks/ --embed --sink lancedb:vectors/
    chunk-explorer run /shared/docs --config c.json --out /shared/chunks --engine spark \\
        --spark-master spark://head:7077

The configuration comes from ``--config`` and/or the same strategy flags as ``split``
(:func:`chunking.cli.options.chosen_config`). Here ``--model`` names the embedding model of
``--embed``; a semantic strategy uses it too. Exit status: 0 when every document is in
the output, 1 when some failed (listed in ``OUT/errors.jsonl``), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..documents.corpus import CorpusLimits, list_sources
from ..pipeline import ENGINES, PART_ROWS, Job, RunSettings, run_corpus
from ..sinks import KINDS
from ..units import DEFAULT_MODEL
from .options import (
    PROG,
    add_embed_arguments,
    build_config,
    chosen_config,
    embed_model_from_args,
    endpoint_embedder,
    follow_model_unit,
    max_bytes,
    overrides,
    show_embedding_cost,
    strategy_model,
    strategy_options,
)

#: A command-line corpus streams: only the per-document size limit applies (--max-mb).
UNLIMITED = 2**62


def add_run_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``run`` to the subcommands of the ``chunk-explorer`` parser."""
    run = commands.add_parser(
        "run",
        parents=[strategy_options()],
        conflict_handler="resolve",  # --model names the embedding model here
        help="apply one configuration to a corpus: Parquet chunks, resumable",
        description="Cut every document of the inputs (files, folders, globs, zips) with one "
        "configuration and write Parquet part files, manifest.json and errors.jsonl to "
        "--out. A second run on the same --out skips the documents already done.",
    )
    run.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="more files, folders, globs or zips"
    )
    run.add_argument("--out", "-o", required=True, metavar="DIR", help="the output folder")
    run.add_argument("--embed", action="store_true", help="add an embedding column")
    run.add_argument(
        "--model",
        metavar="NAME_OR_PATH",
        help="embedding model for --embed (default: the bundled all-MiniLM-L6-v2); "
        "also the semantic strategy's model",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes (local), CPUs (ray) or the cores of a local Spark session (spark)",
    )
    run.add_argument("--engine", choices=ENGINES, default="local", help="default: local")
    run.add_argument(
        "--spark-master",
        metavar="URL",
        help="--engine spark on a cluster: spark://HOST:7077, or sc://HOST:15002 for Spark "
        "Connect (default: SPARK_REMOTE when set, else a local session)",
    )
    run.add_argument(
        "--force",
        action="store_true",
        help="replace an output made with another configuration or model",
    )
    run.add_argument(
        "--part-rows",
        type=int,
        default=PART_ROWS,
        metavar="N",
        help="chunks per Parquet part file (default %(default)s)",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar on stderr")
    run.add_argument(
        "--sink",
        action="append",
        default=[],
        metavar="KIND:PATH",
        help=f"also write each chunk and its vector into a vector database ({', '.join(KINDS)}; "
        "needs --embed); repeatable",
    )
    run.add_argument(
        "--collection",
        metavar="NAME",
        help="the sinks' collection (default: the configuration's label)",
    )
    add_embed_arguments(run)
    run.set_defaults(handler=run_command)
    return run


def run_command(args: argparse.Namespace) -> int:
    """The ``run`` handler: settle the configuration, list the corpus, run it."""
    chosen = overrides(args)
    model = chosen.pop("model", None)
    endpoint = embed_model_from_args(args)
    if endpoint is not None:
        if model is not None:
            raise ValueError("--model and --embed-url both name the embedding model; give one")
        if not args.embed:
            raise ValueError("--embed-url names the embedding model of --embed: add --embed")
        model = ("--embed-url", endpoint)
    config = chosen_config(args, chosen)
    if config is None:
        raise ValueError("run needs a configuration: --config CONFIG.json or --strategy NAME")
    if model is not None and "model" in config.spec.param_names:
        config = build_config(config.strategy, config.params, {"model": model})
    if model is not None and not args.embed and "model" not in config.spec.param_names:
        raise ValueError("--model names the embedding model: add --embed")
    limit = max_bytes(args)
    limits = CorpusLimits(max_files=UNLIMITED, max_total_bytes=UNLIMITED, max_file_bytes=limit)
    sources = list_sources([args.file, *args.inputs], limits)
    embed_model = None
    if args.embed:
        embed_model = model[1] if model is not None else DEFAULT_MODEL
    config = follow_model_unit(config, strategy_model(config) or embed_model)
    if endpoint is not None:
        from ..embedding.endpoint import estimate_bytes_cost

        embedder = endpoint_embedder(args, endpoint)
        size = sum(source.size for source in sources)
        show_embedding_cost(estimate_bytes_cost(embedder, size, args.embed_price))
    settings = RunSettings(
        out=args.out,
        engine=args.engine,
        workers=args.workers,
        embed_model=embed_model,
        force=args.force,
        part_rows=args.part_rows,
        progress=not args.quiet and sys.stderr.isatty(),
        sinks=tuple(args.sink),
        collection=args.collection,
        spark_master=args.spark_master,
    )
    job = Job(config.to_dict(), limit, args.encoding)
    summary = run_corpus(sources, job, settings, limits)
    print(f"{PROG} run: {summary.line()}")
    return summary.exit_code
