"""``chunk-explorer models``: the named embedding models and whether each can be used now.

::

    chunk-explorer models
    chunk-explorer models --format json

A model that is not built yet is available (it is built on first use, and the note
says how long that takes); a model whose packages are missing is not, and the note
names the extra to install. Checking loads no model and imports no heavy package.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

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


def _cmd_models(args: argparse.Namespace) -> int:
    from ..embedding.registry import named_models  # here: other commands need no embedding

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
