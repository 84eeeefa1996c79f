"""The ``chunk-explorer`` command line: split files, list strategies, size statistics.

Strategies, their parameters and the flags that set them all come from the registry
(:func:`chunking.strategies`), so a newly registered strategy is usable here at once::

    chunk-explorer strategies
    chunk-explorer split notes.md                      # auto: recommended strategy
    chunk-explorer split notes.md --strategy recursive --size 800 --overlap 100
    chunk-explorer split notes.md --strategy recursive --param 'separators=["\\n\\n", " "]'
    chunk-explorer split report.pdf --format parquet --output chunks.parquet
    chunk-explorer stats notes.md --strategy sliding --param window=300 --param stride=200
    chunk-explorer app --port 8502                     # the explorer (needs the app extra)

``split`` writes the same records as the app's downloads (:mod:`chunking.export`) and
``stats`` shows the same summary and warnings as the app (:mod:`chunking.report`).

Problems with the input (a missing, empty, binary or oversized file, an unknown
strategy or parameter, a bad value) end with one line on stderr,
``chunk-explorer: error: ...``, and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from .config import Config, get_strategy, strategies
from .core import run
from .evaluation.cli import add_evaluate_parser
from .export import TEXT_WRITERS, chunk_pages, iter_records, to_parquet
from .io import MAX_BYTES_DEFAULT, Document, read_path
from .llm_cli import add_llm_parsers
from .models_cli import add_models_parser
from .params import Param, Strategy
from .recommend import overlap_for, recommend
from .report import ChunkWarning, Report, make_report
from .run_cli import add_run_parser
from .snippets import TARGETS, seed_tiktoken_cache, snippet

PROG = "chunk-explorer"
AUTO = "auto"
EXIT_USAGE = 2
#: 128 + SIGINT, as a shell reports an interrupted command.
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE, as a shell reports a command whose reader went away (``| head``).
EXIT_BROKEN_PIPE = 141

#: Flags that set a strategy parameter of the same name.
PARAM_FLAGS = ("size", "overlap", "unit", "model")

_KIND_WORDS = {
    int: "integer",
    float: "number",
    str: "string",
    bool: "true/false",
    list: "list of strings",
}


# --------------------------------------------------------------------------- entry


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage and the problem
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return args.handler(args)
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, OSError) as exc:
        print(f"{PROG}: error: {_message(exc)}", file=sys.stderr)
        return EXIT_USAGE


def _message(exc: BaseException) -> str:
    """One line describing ``exc`` for the user."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        text = f"{where}{exc.strerror}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _discard_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass


# -------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; strategy names in the help come from the registry."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="See how RAG chunking strategies cut your documents.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    options = _strategy_options()

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

    # Whole corpora, retrieval evaluation, embedding models, language-model techniques.
    add_run_parser(commands)
    add_evaluate_parser(commands)
    add_models_parser(commands)
    add_llm_parsers(commands, options)

    app = commands.add_parser(
        "app",
        help="open the explorer in a browser (needs the app extra)",
        description="Start the Streamlit app installed with this package "
        "(pip install 'chunk-explorer[app]').",
    )
    app.add_argument("--port", type=int, default=8501, metavar="N", help="default 8501")
    app.set_defaults(handler=_cmd_app)
    return parser


def _strategy_options() -> argparse.ArgumentParser:
    """Options shared by ``split`` and ``stats``."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("file", metavar="FILE", help="the document to chunk")
    names = ", ".join(strategies())
    options.add_argument(
        "--strategy",
        "-s",
        metavar="NAME",
        help=f"one of: {names}; or '{AUTO}' (default) to use the recommended strategy",
    )
    options.add_argument("--size", metavar="N", help="maximum chunk size (parameter 'size')")
    options.add_argument(
        "--overlap", metavar="N", help="units shared by consecutive chunks ('overlap')"
    )
    options.add_argument("--unit", metavar="UNIT", help="chars, words or tokens ('unit')")
    options.add_argument(
        "--model", metavar="NAME_OR_PATH", help="embedding model ('model', semantic strategy)"
    )
    options.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set any strategy parameter; VALUE is read as JSON when it parses "
        "(numbers, true/false, lists), else as text. Repeatable.",
    )
    options.add_argument(
        "--config",
        metavar="CONFIG.json",
        help="a configuration exported by the app; other flags override it",
    )
    options.add_argument(
        "--encoding",
        metavar="NAME",
        help="decode a text file with this encoding (e.g. cp1252, latin-1, cp1251) instead "
        "of detecting it; the detected encoding and its confidence are reported",
    )
    options.add_argument(
        "--max-mb",
        type=float,
        default=MAX_BYTES_DEFAULT / 2**20,
        metavar="N",
        help="refuse files larger than N MB (default %(default)g)",
    )
    return options


# ------------------------------------------------------------------- configuration


def parse_param(item: str) -> tuple[str, Any]:
    """``"key=value"`` as ``(key, value)``; the value is JSON when it parses.

    >>> parse_param('separators=["a", "b"]')
    ('separators', ['a', 'b'])
    >>> parse_param("keep_separator=start")
    ('keep_separator', 'start')
    """
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"--param expects KEY=VALUE (for example size=500); got {item!r}")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def _overrides(args: argparse.Namespace) -> dict[str, tuple[str, Any]]:
    """Parameters set on the command line: name -> (the flag that set it, value)."""
    found: dict[str, tuple[str, Any]] = {}
    for item in args.param:
        key, value = parse_param(item)
        found[key] = (f"--param {key}", value)
    for name in PARAM_FLAGS:
        value = getattr(args, name)
        if value is not None:
            found[name] = (f"--{name}", value)
    return found


def load_config(path: str) -> Config:
    """Read a configuration exported as JSON (``Config.to_json``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise ValueError(f"config file {path} was not found; check the path") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"config file {path} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg})"
        ) from None
    except UnicodeDecodeError:
        raise ValueError(f"config file {path} is not UTF-8 text; re-export it") from None
    except OSError as exc:
        raise ValueError(f"config file {path} cannot be read: {exc.strerror or exc}") from None
    try:
        return Config.from_dict(data)
    except ValueError as exc:
        raise ValueError(f"config file {path}: {exc}") from None


def build_config(
    strategy: str,
    base: Mapping[str, Any],
    overrides: Mapping[str, tuple[str, Any]],
    *,
    rescale_overlap: bool = False,
) -> Config:
    """Validate ``base`` parameters updated with command-line ``overrides``.

    With ``rescale_overlap`` (a recommended configuration), changing the size without
    choosing an overlap keeps the overlap at the recommended share of the new size.
    """
    spec = get_strategy(strategy)
    for name, (source, _) in overrides.items():
        if name not in spec.param_names:
            raise ValueError(_no_such_param(spec, name, source))
    params = dict(base)
    params.update({name: value for name, (_, value) in overrides.items()})
    limit = spec.limit_param
    if rescale_overlap and limit is not None and limit in overrides and "overlap" not in overrides:
        overlap = overlap_for(spec, spec.param(limit).coerce(params[limit]))
        if overlap is not None:
            params["overlap"] = overlap
    return Config.create(strategy, **params)


def _no_such_param(spec: Strategy, name: str, source: str) -> str:
    allowed = ", ".join(spec.param_names) or "none"
    return (
        f"strategy {spec.name!r} has no parameter {name!r} (from {source}); "
        f"its parameters are: {allowed} (see '{PROG} strategies')"
    )


def _max_bytes(args: argparse.Namespace) -> int:
    if not math.isfinite(args.max_mb) or args.max_mb <= 0:
        raise ValueError(f"--max-mb must be a positive number of megabytes; got {args.max_mb:g}")
    return max(1, int(args.max_mb * 2**20))


def chosen_config(
    args: argparse.Namespace, overrides: Mapping[str, tuple[str, Any]]
) -> Config | None:
    """The configuration named by ``--config`` and/or ``--strategy`` with ``overrides``;
    None when neither names one (or the strategy is ``auto``)."""
    if args.config is not None:
        loaded = load_config(args.config)
        if args.strategy not in (None, loaded.strategy):
            raise ValueError(
                f"--config {args.config} is for strategy {loaded.strategy!r} but --strategy "
                f"is {args.strategy!r}; drop one of them"
            )
        return build_config(loaded.strategy, loaded.params, overrides)
    if args.strategy not in (None, AUTO):
        return build_config(args.strategy, {}, overrides)
    return None


def prepare(args: argparse.Namespace) -> tuple[Config, Document]:
    """Validate the options, read the file and settle the configuration.

    Explicit options are checked before the file is read, so that a typo fails fast.
    """
    overrides = _overrides(args)
    max_bytes = _max_bytes(args)
    config = chosen_config(args, overrides)
    document = read_path(args.file, max_bytes=max_bytes, encoding=args.encoding)
    _note_encoding(document)
    if config is None:
        advice = recommend(document.text, document.name, language=document.language)
        print(
            f"{PROG}: strategy {AUTO}: using {advice.strategy!r} ({advice.kind} document). "
            f"{advice.reason}",
            file=sys.stderr,
        )
        config = build_config(
            advice.strategy, advice.config.params, overrides, rescale_overlap=True
        )
    return config, document


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
        with _binary_output(args.output) as binary:
            binary.write(data)
        return 0
    with _output(args.output) as out:
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
    with _output(args.output) as out:
        out.write(made.code)
    return 0


def _note_encoding(document: Document) -> None:
    """Say on stderr how a text file was decoded when the detection was unsure."""
    if document.encoding_warning:
        confidence = document.encoding_confidence or 0.0
        print(
            f"{PROG}: {document.name}: {document.encoding_warning} (confidence "
            f"{confidence:.0%}; --encoding NAME to choose)",
            file=sys.stderr,
        )


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
    folders.append(str(Path(__file__).resolve().parents[1]))  # a checkout that is not installed
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
    return [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port)]


def _cmd_app(args: argparse.Namespace) -> int:
    command = app_command(args.port)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)  # Streamlit becomes this process: Ctrl+C, exit status


# -------------------------------------------------------------------------- output


@contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    """The stream chunks are written to: the file at ``path`` or stdout, as UTF-8."""
    if path is None:
        _utf8_stdout()
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle


@contextmanager
def _binary_output(path: str) -> Iterator[BinaryIO]:
    """The binary file at ``path``, with the same message as :func:`_output` on failure."""
    try:
        handle = open(path, "wb")  # noqa: SIM115
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle


def _utf8_stdout() -> None:
    """Chunk data is always written as UTF-8, whatever the locale says."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("_", "-")
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if encoding not in ("utf-8", "utf8") and reconfigure is not None:
        reconfigure(encoding="utf-8")


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
        ("warnings", len(report.warnings) or "none"),
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


if __name__ == "__main__":
    sys.exit(main())
