"""``chunk-explorer models``: the named embedding models and whether each can be used now.

::

    chunk-explorer models
    chunk-explorer models --format json
    chunk-explorer models --build          # build the derived models now (set-up does)

A model that is not built yet is available (it is built on first use, and the note
says how long that takes); a model whose packages are missing is not, and the note
names the extra to install. Checking loads no model and imports no heavy package.

``--build`` builds every derived model that is not built yet (ONNX int8, static), with
progress on stderr, and skips those already built: run again, it does nothing. Each
build is timed, so later estimates of it are calibrated on this machine. Exit status 1
when a model could not be built (its packages missing), with the reason.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import TYPE_CHECKING, Any

from ..model import Progress
from .options import terminal_progress

if TYPE_CHECKING:
    from ..embedding.registry import NamedModel


def add_models_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``models`` to the subcommands of the ``chunk-explorer`` parser."""
    models = commands.add_parser(
        "models",
        help="list the named embedding models and whether each is available",
        description="The embedding models every --model option accepts by name: backend, "
        "dimension, maximum tokens and whether each can be used now (and why not). Any "
        "other --model value is a local sentence-transformers model directory.",
    )
    models.add_argument("--format", choices=("text", "json"), default="text")
    models.add_argument(
        "--build",
        action="store_true",
        help="build the derived models that are not built yet (once per machine)",
    )
    models.set_defaults(handler=_cmd_models)
    return models


def model_record(model: NamedModel) -> dict[str, Any]:
    """One model as the JSON listing gives it."""
    status = model.availability()
    return {
        "name": model.name,
        "backend": model.backend,
        "dimension": model.dimension,
        "max_tokens": model.max_tokens,
        "available": status.available,
        "note": status.note,
        "description": model.description,
        "aliases": list(model.aliases),
    }


def build_models(models: list[NamedModel]) -> int:
    """Build each of ``models`` that is not built yet, with progress on stderr; 0 when
    every one is built in the end, 1 when one could not be."""
    from ..embedding.base import EmbeddingError

    failed = 0
    for model in models:
        if model.built is None:
            continue
        if model.is_built():
            print(f"models: {model.name}: already built", file=sys.stderr)
            continue
        status = model.availability()
        if not status.available:
            print(f"models: {model.name}: not built: {status.note}", file=sys.stderr)
            failed += 1
            continue
        print(f"models: {model.name}: building ({model.wait()})", file=sys.stderr)
        started = time.perf_counter()
        try:
            model.load(_build_progress(model.name))
        except EmbeddingError as exc:
            print(f"models: {model.name}: not built: {exc}", file=sys.stderr)
            failed += 1
            continue
        seconds = time.perf_counter() - started
        print(f"models: {model.name}: built in {seconds:.1f} s", file=sys.stderr)
    return 1 if failed else 0


def _build_progress(name: str) -> Progress:
    """A progress line on a terminal; otherwise (a log, a set-up script) a line when a
    step starts and at each tenth of it."""
    line = terminal_progress(f"models: {name}")
    if line is not None:
        return line
    shown: list[tuple[str, int]] = []

    def show(done: int, total: int, what: str) -> None:
        mark = (re.sub(r"[\d,]+", "#", what), 10 * done // total if total else 10)
        if not shown or shown[-1] != mark:
            shown.append(mark)
            print(f"models: {name}: {what}", file=sys.stderr, flush=True)

    return show


def _cmd_models(args: argparse.Namespace) -> int:
    from ..embedding.registry import named_models  # here: other commands need no embedding

    if args.build:
        return build_models(list(named_models()))
    records = [model_record(m) for m in named_models()]
    if args.format == "json":
        print(json.dumps(records, indent=2))
        return 0
    header = ("name", "backend", "dim", "max tokens", "available", "note")
    rows = [
        (
            r["name"],
            r["backend"],
            str(r["dimension"]),
            str(r["max_tokens"]),
            "yes" if r["available"] else "no",
            r["note"],
        )
        for r in records
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header) - 1)]
    for row in (header, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())
    print("\nThe first model is the default; any other --model value is a local path.")
    return 0
