"""The ``chunk-explorer`` command line.

Strategies, their parameters and the flags that set them all come from the registry
(:func:`chunking.strategies`), so a newly registered strategy is usable here at once.
One module per command group: :mod:`.chunks` (split, stats, strategies, export, app),
:mod:`.run`, :mod:`.search`, :mod:`.evaluate`, :mod:`.models`, :mod:`.llm` (questions,
enrich); the flags and configuration code they share is :mod:`.options`.

Problems with the input (a missing, empty, binary or oversized file, an unknown
strategy or parameter, a bad value) end with one line on stderr,
``chunk-explorer: error: ...``, and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .boundaries import add_boundaries_parser
from .chunks import add_app_parser, add_chunk_parsers
from .evaluate import add_evaluate_parser
from .llm import add_llm_parsers
from .models import add_models_parser
from .options import EXIT_USAGE, PROG, strategy_options
from .report import add_report_parser
from .run import add_run_parser
from .search import add_search_parser
from .tune import add_tune_parser

#: 128 + SIGINT, as a shell reports an interrupted command.
EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE, as a shell reports a command whose reader went away (``| head``).
EXIT_BROKEN_PIPE = 141

__all__ = ["EXIT_USAGE", "build_parser", "main"]


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, commands in the order of use; strategy names in the help
    come from the registry."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="See how RAG chunking strategies cut your documents.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    options = strategy_options()
    add_chunk_parsers(commands, options)
    # Whole corpora, retrieval evaluation, embedding models, language-model techniques.
    add_run_parser(commands)
    add_search_parser(commands)
    add_evaluate_parser(commands)
    add_boundaries_parser(commands)
    add_tune_parser(commands)
    add_models_parser(commands)
    add_llm_parsers(commands, options)
    add_report_parser(commands, options)
    add_app_parser(commands)
    return parser
