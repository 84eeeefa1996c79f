"""The commands on one document and the registry: ``split``, ``stats``, ``strategies``,
``export`` and ``app``.

::

    chunk-explorer split notes.md                      # auto: recommended strategy
    chunk-explorer split notes.md --strategy recursive --size 800 --overlap 100
    chunk-explorer split report.pdf --format parquet --output chunks.parquet
    chunk-explorer stats notes.md --strategy sliding --param window=300 --param stride=200
    chunk-explorer export --config recursive.config.json --to langchain
    chunk-explorer app --port 8502                     # the explorer (needs the app extra)

``split`` writes the same records as the app's downloads (:mod:`chunking.output.export`)
and ``stats`` shows the same summary and warnings as the app
(:mod:`chunking.analysis.report`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from ..analysis.report import ChunkWarning, Report, make_report
from ..config import strategies
from ..core import run
from ..documents.io import Document
from ..output.export import TEXT_WRITERS, chunk_pages, iter_records, to_parquet
from ..output.snippets import TARGETS, seed_tiktoken_cache, snippet
from ..params import Param, Strategy
from .options import PROG, binary_output, chosen_config, output, parse_param, prepare

_KIND_WORDS = {
    int: "integer",
    float: "number",
    str: "string",
    bool: "true/false",
    list: "list of strings",
}


def add_chunk_parsers(commands: Any, options: argparse.ArgumentParser) -> None:
    """Add ``split``, ``stats``, ``strategies`` and ``export`` to an ``add_subparsers()``
    object; ``options`` is the parent parser of the document and strategy flags."""
    split = commands.add_parser(
        "split",
        parents=[options],
        help="cut a file into chunks and print them",
        description="Cut FILE into chunks; every chunk has exact start/end offsets.",
    )
    split.add_argument(
        "--format",
        choices=(*TEXT_WRITERS, "parquet"),
        default="jsonl",
        help="jsonl: one chunk per line (default); json: one array; csv and parquet: "
        "metadata as JSON text (parquet needs --output and pyarrow). A PDF's chunks list "
        "their page numbers in metadata.pages",
    )
    split.add_argument("--output", "-o", metavar="PATH", help="write here instead of stdout")
    split.set_defaults(handler=_cmd_split)

    stats = commands.add_parser(
        "stats",
        parents=[options],
        help="chunk count, size statistics and warnings",
        description="Count the chunks of FILE, summarise their sizes in the unit and say "
        "what looks wrong (the warnings the app shows).",
    )
    stats.add_argument("--format", choices=("text", "json"), default="text")
    stats.set_defaults(handler=_cmd_stats)

    listing = commands.add_parser(
        "strategies",
        help="list strategies and their parameters",
        description="Every registered strategy with its description and parameters.",
    )
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.set_defaults(handler=_cmd_strategies)

    export = commands.add_parser(
        "export",
        help="the configuration as code for LangChain, LlamaIndex, chonkie, semchunk, ...",
        description="Write a short snippet that builds the same splitter in another library "
        "(or with this package's API or command line). Python snippets define "
        "split(text) -> list[str]. Whether the snippet gives the same chunks (exact), the "
        "closest settings (approximate) or has no equivalent is printed on stderr.",
    )
    export.add_argument(
        "--config", metavar="CONFIG.json", help="a configuration exported by the app"
    )
    export.add_argument("--strategy", "-s", metavar="NAME", help="a strategy (without --config)")
    export.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a strategy parameter, as for split (repeatable)",
    )
    export.add_argument("--to", required=True, choices=TARGETS, help="the target library")
    export.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(handler=_cmd_export)


def add_app_parser(commands: Any) -> None:
    """Add ``app``: serve the explorer installed with this package."""
    app = commands.add_parser(
        "app",
        help="open the explorer in a browser (needs the app extra)",
        description="Start the Streamlit app installed with this package "
        "(pip install 'chunk-explorer[app]').",
    )
    app.add_argument("--port", type=int, default=8501, metavar="N", help="default 8501")
    app.set_defaults(handler=_cmd_app)


# ------------------------------------------------------------------------ commands


def _cmd_split(args: argparse.Namespace) -> int:
    if args.format == "parquet" and args.output is None:
        raise ValueError("--format parquet writes a binary file; give it one with --output PATH")
    config, document = prepare(args)
    chunks = run(document.text, config)
    pages = chunk_pages(document, chunks)
    del document  # chunks hold their own text
    records = iter_records(chunks, pages)
    if args.format == "parquet":
        data = to_parquet(records)  # before the file is opened: pyarrow may be missing
        with binary_output(args.output) as binary:
            binary.write(data)
        return 0
    with output(args.output) as out:
        TEXT_WRITERS[args.format](records, out)
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    config, document = prepare(args)
    report = make_report(document, config, run(document.text, config))
    if args.format == "json":
        payload = {**report.to_dict(), "document": document_info(document)}
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(f"{'document':<11}{document.describe(', ')}")
        print(stats_text(report))
    return 0


def document_info(document: Document) -> dict[str, Any]:
    """What was read: name, kind, and for text how it was decoded and how sure that is."""
    return {
        "name": document.name,
        "kind": document.kind,
        "characters": len(document.text),
        "encoding": document.encoding,
        "encoding_confidence": document.encoding_confidence,
        "encoding_warning": document.encoding_warning,
    }


def _cmd_export(args: argparse.Namespace) -> int:
    overrides = {name: (f"--param {name}", value) for name, value in map(parse_param, args.param)}
    config = chosen_config(args, overrides)
    if config is None:
        raise ValueError("export needs --config CONFIG.json or --strategy NAME")
    made = snippet(config, args.to)
    if made.fidelity == "unavailable":
        raise ValueError(made.note)
    if args.to in ("langchain", "llamaindex", "chonkie") and "cl100k_base" in made.code:
        seed_tiktoken_cache()  # the standard name then loads offline on this machine too
    note = f": {made.note}" if made.note else ""
    print(f"{PROG}: {args.to} snippet, {made.fidelity}{note}", file=sys.stderr)
    if made.not_exact_on:
        rows = "; ".join(made.not_exact_on)
        print(f"{PROG}: not exact on (docs/unicode_matrix.md): {rows}", file=sys.stderr)
    with output(args.output) as out:
        out.write(made.code)
    return 0


def _cmd_strategies(args: argparse.Namespace) -> int:
    registry = strategies()
    if args.format == "json":
        payload = [spec.to_dict() for spec in registry.values()]
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print("\n\n".join(describe_strategy(spec) for spec in registry.values()))
    return 0


#: What ``chunk-explorer app`` needs besides the core: the ``app`` extra.
APP_MODULES = ("streamlit", "plotly", "pandas")


def app_script() -> Path:
    """The app's ``app.py``: the installed ``chunk_explorer_app`` package's, or the checkout's."""
    spec = importlib.util.find_spec("chunk_explorer_app")
    folders = list(spec.submodule_search_locations or []) if spec else []
    folders.append(str(Path(__file__).resolve().parents[2]))  # a checkout that is not installed
    for folder in folders:
        script = Path(folder) / "app.py"
        if script.is_file():
            return script
    raise ValueError(f"the app is not installed (no app.py in {', '.join(folders)})")


def app_command(port: int) -> list[str]:
    """The command that serves the app on ``port``."""
    if not 1 <= port <= 65535:
        raise ValueError(f"--port must be between 1 and 65535, not {port}")
    missing = [name for name in APP_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        needs = ", ".join(missing)
        raise ValueError(f"the app needs {needs}; install them: pip install 'chunk-explorer[app]'")
    script = str(app_script())
    # ``python app.py`` rather than ``streamlit run app.py``: app.py starts Streamlit
    # itself so that a bookmarked page opens without a "Page not found" (see app.py).
    return [sys.executable, script, "--server.port", str(port)]


def _cmd_app(args: argparse.Namespace) -> int:
    command = app_command(args.port)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)  # Streamlit becomes this process: Ctrl+C, exit status


# --------------------------------------------------------------------------- stats


def stats_text(report: Report) -> str:
    """The report as aligned ``name value`` lines, then every warning with what to do."""
    unit = report.unit
    summary = report.summary[unit]
    rows = [
        ("strategy", report.strategy),
        ("unit", unit),
        ("limit", "none" if report.limit is None else f"{report.limit} {unit}"),
        ("chunks", summary.count),
        ("mean", f"{summary.mean:.1f} {unit}"),
        ("std", f"{summary.std:.1f} {unit}"),
        ("min", f"{summary.min} {unit}"),
        ("max", f"{summary.max} {unit}"),
        ("over limit", _over_limit_text(report.flagged_over_limit)),
        ("warnings", report.warning_count or "none"),
    ]
    lines = [f"{name:<11}{value}" for name, value in rows]
    for warning in report.warnings:
        lines += _warning_lines(warning)
    return "\n".join(lines)


def _warning_lines(warning: ChunkWarning) -> list[str]:
    """``  - Title.`` then the message, wrapped and indented under it."""
    return [
        f"  - {warning.title}.",
        *textwrap.wrap(warning.message, 84, initial_indent="    ", subsequent_indent="    "),
    ]


def _over_limit_text(count: int) -> str:
    if not count:
        return "0 chunks"
    noun = "chunk" if count == 1 else "chunks"
    return f"{count} {noun} (documented exceptions, the reason is in metadata.flags)"


# ---------------------------------------------------------------------- strategies


def describe_strategy(spec: Strategy) -> str:
    """A strategy's name, label, description and parameters as indented text."""
    lines = [f"{spec.name} - {spec.label}"]
    lines += textwrap.wrap(spec.description, 84, initial_indent="  ", subsequent_indent="  ")
    lines.append("  parameters:" if spec.params else "  parameters: none")
    for param in spec.params:
        lines.append(f"    {param.name}: {describe_param(param)}")
        lines += textwrap.wrap(param.help, 80, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines)


def describe_param(param: Param) -> str:
    """``"integer, default 1000, 1 to 1000000"`` and the like."""
    parts = [
        _KIND_WORDS.get(param.kind, param.kind.__name__),
        f"default {json.dumps(param.default, ensure_ascii=False)}",
    ]
    if param.choices is not None:
        parts.append("one of " + ", ".join(map(str, param.choices)))
    if param.minimum is not None and param.maximum is not None:
        parts.append(f"{_number(param.minimum)} to {_number(param.maximum)}")
    elif param.minimum is not None:
        parts.append(f"at least {_number(param.minimum)}")
    elif param.maximum is not None:
        parts.append(f"at most {_number(param.maximum)}")
    return ", ".join(parts)


def _number(value: float) -> str:
    """``1000000`` rather than ``1e+06``; fractions as they are."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
