"""``chunk-explorer boundaries``: score configurations against boundaries a person drew.

::

    chunk-explorer boundaries essay.txt --gold essay.gold.json --strategy sentences --size 600
    chunk-explorer boundaries essay.txt --gold essay.gold.json --config a.json b.json
    chunk-explorer boundaries lesson.txt --gold lesson.txt --tolerance 1sentence --format json

``--gold`` is a gold file saved by the app (``.json``, :mod:`chunking.evaluation.gold`)
or any other text file in which a marker line stands between segments; with a marked
file, the document is FILE with its marker lines removed, so a teacher's one marked file
can be both. The metrics are :mod:`chunking.evaluation.boundaries`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..config import Config
from ..core import run
from ..documents.io import Document, read_path
from ..evaluation.agreement import human_band
from ..evaluation.boundaries import BoundaryScores, chunk_starts, parse_tolerance, score_boundaries
from ..evaluation.gold import DEFAULT_MARKER, Gold, gold_from_marked, parse_marked, read_gold
from .options import chosen_config, max_bytes, overrides, prepare, strategy_options

#: The columns of the text table: (key, heading, width).
_COLUMNS = (
    ("chunks", "chunks", 7),
    ("boundaries", "cuts", 6),
    ("pk", "pk", 7),
    ("windowdiff", "windowdiff", 11),
    ("b", "b", 7),
    ("precision", "precision", 10),
    ("recall", "recall", 7),
    ("f1", "f1", 7),
)


def add_boundaries_parser(commands: Any) -> None:
    """Add ``boundaries`` to an ``add_subparsers()`` object."""
    # A parent of its own: ``--config`` takes several files here, and resolving that
    # conflict must not touch the parent the other commands share.
    parser = commands.add_parser(
        "boundaries",
        parents=[strategy_options()],
        conflict_handler="resolve",
        help="score configurations against a gold segmentation drawn by hand",
        description="Cut FILE with each configuration and compare the chunk starts with "
        "the boundaries of a gold segmentation: Pk, WindowDiff, boundary similarity B and "
        "boundary precision, recall and F1 within a tolerance.",
    )
    parser.add_argument(
        "--gold",
        required=True,
        metavar="GOLD",
        help="a gold file saved by the app (.json) or a text file with a marker line "
        "between segments",
    )
    parser.add_argument(
        "--config",
        nargs="+",
        action="extend",
        default=[],
        metavar="CONFIG.json",
        help="configurations exported by the app, each scored; other flags override them",
    )
    parser.add_argument(
        "--tolerance",
        default="0",
        metavar="N[chars|sentences]",
        help="how far a cut may be from a gold boundary and still match, for precision, "
        "recall and F1: characters (20, 20chars) or sentences (1sentence); default 0",
    )
    parser.add_argument(
        "--k",
        type=int,
        metavar="N",
        help="the window of Pk and WindowDiff in characters (default: half the mean gold "
        "segment length, rounded)",
    )
    parser.add_argument(
        "--marker",
        default=DEFAULT_MARKER,
        metavar="TEXT",
        help=f"the line between segments in a marked gold file (default {DEFAULT_MARKER})",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run_boundaries)


def run_boundaries(args: argparse.Namespace) -> int:
    """The ``boundaries`` handler: settle the configurations, read the gold, score, print."""
    tolerance, unit = parse_tolerance(args.tolerance)
    if args.k is not None and args.k < 1:
        raise ValueError(f"--k must be a window of at least 1 character; got {args.k}")
    configs, document = _configs_and_document(args)
    text, gold = _gold(args, document)
    results = []
    for config in configs:
        chunks = run(text, config)
        scores = score_boundaries(
            text,
            gold.boundaries,
            chunk_starts(chunks, len(text)),
            k=args.k,
            tolerance=tolerance,
            tolerance_unit=unit,
        )
        results.append((config, len(chunks), scores))
    if args.format == "json":
        print(json.dumps(_payload(args, document, text, gold, results), indent=2))
    else:
        print(_table(args, document, text, gold, results))
    return 0


def _configs_and_document(args: argparse.Namespace) -> tuple[list[Config], Document]:
    """Every configuration asked for (typos fail before the file is read) and FILE, read
    as ``split`` reads it; no configuration and no strategy means the recommended one."""
    chosen = overrides(args)
    paths = args.config or [None]
    others: list[Config] = []
    for path in paths[1:]:
        named = chosen_config(argparse.Namespace(**{**vars(args), "config": path}), chosen)
        assert named is not None  # a path names one
        others.append(named)
    first, document = prepare(argparse.Namespace(**{**vars(args), "config": paths[0]}))
    return [first, *others], document


def _gold(args: argparse.Namespace, document: Document) -> tuple[str, Gold]:
    """The text to cut and its gold segmentation, checked against each other."""
    source = f"gold file {Path(args.gold).name}"
    if args.gold.lower().endswith(".json"):
        return document.text, read_gold(args.gold, document.text, document.name)
    marked = read_path(args.gold, max_bytes=max_bytes(args), encoding=args.encoding)
    _, gold = gold_from_marked(marked.text, document.name, marker=args.marker, source=source)
    text, _ = parse_marked(document.text, args.marker)
    gold.check(text, document.name)
    return text, gold


def _payload(
    args: argparse.Namespace,
    document: Document,
    text: str,
    gold: Gold,
    results: list[tuple[Config, int, BoundaryScores]],
) -> dict[str, Any]:
    band = human_band()
    return {
        "document": {"name": document.name, "characters": len(text), "sha256": gold.sha256},
        "gold": {
            "file": args.gold,
            "document": gold.document,
            "boundaries": len(gold.boundaries),
            "note": gold.note,
            "created": gold.created,
        },
        "human_band": {"b": list(band.b), "pk": list(band.pk), "windowdiff": list(band.windowdiff)},
        "results": [
            {"label": config.label(), "config": config.to_dict(), "chunks": count, **s.to_dict()}
            for config, count, s in results
        ],
    }


def _amount(value: int, unit: str) -> str:
    """``1 sentence``, ``0 characters``."""
    word = {"chars": "character", "sentences": "sentence"}[unit]
    return f"{value} {word}{'' if value == 1 else 's'}"


def _table(
    args: argparse.Namespace,
    document: Document,
    text: str,
    gold: Gold,
    results: list[tuple[Config, int, BoundaryScores]],
) -> str:
    first = results[0][2]
    band = human_band()
    short = gold.note if len(gold.note) <= 60 else gold.note[:59].rstrip() + "…"
    note = f" ({short})" if gold.note else ""
    lines = [
        f"{'document':<11}{document.name} · {len(text):,} characters",
        f"{'gold':<11}{Path(args.gold).name}: {first.gold_boundaries} boundaries{note}",
        f"{'window':<11}k = {first.k} characters"
        f"{'' if args.k else ' (half the mean gold segment)'}, for pk and windowdiff",
        f"{'tolerance':<11}{_amount(first.tolerance, first.tolerance_unit)}, for precision, "
        f"recall and f1; b takes cuts under {_amount(first.n_t, 'chars')} apart as near misses",
        f"{'people':<11}agree with each other at b {band.b[0]:.2f}–{band.b[1]:.2f}, "
        f"pk {band.pk[0]:.2f}–{band.pk[1]:.2f} (segeval's samples, in paragraphs)",
        "",
    ]
    width = max(len("configuration"), *(len(c.label()) for c, _, _ in results))
    header = f"{'configuration':<{width}}" + "".join(f"{h:>{w}}" for _, h, w in _COLUMNS)
    lines.append(header)
    for config, count, scores in results:
        values = {**scores.to_dict(), "chunks": count}
        cells = "".join(
            f"{values[key]:>{w}}" if isinstance(values[key], int) else f"{values[key]:>{w}.3f}"
            for key, _, w in _COLUMNS
        )
        lines.append(f"{config.label():<{width}}{cells}")
    lines.append("")
    lines.append("pk and windowdiff: 0 is perfect; b, precision, recall, f1: 1 is perfect")
    if sys.stdout.isatty():
        lines.append("(--format json lists the matched, missed and extra boundaries)")
    return "\n".join(lines)
