"""``chunk-explorer search``: ask a collection that ``run --sink`` wrote.

::

    chunk-explorer search lancedb:vectors/ "How does overlap change recall?" -k 5
    chunk-explorer search qdrant:vectors/ "What is a token?" --collection recursive-400-tokens

The question is embedded with the model recorded in the collection when it was written
(:func:`chunking.sinks.search`); ``--model`` may only name that model. Each hit is
printed with its score, path, offsets and text; ``--format json`` prints them as one
JSON array.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..sinks import KINDS, search
from .options import PROG, add_embed_arguments, embed_model_from_args

#: Characters of a hit's text shown on the terminal.
PREVIEW = 240


def add_search_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``search`` to the subcommands of the ``chunk-explorer`` parser."""
    parser = commands.add_parser(
        "search",
        help="search a vector database written by run --sink",
        description="Embed a question with the model a collection was written with and "
        "print its nearest chunks, with their path and offsets.",
    )
    parser.add_argument(
        "target", metavar="KIND:PATH", help=f"the database ({', '.join(KINDS)}) and its folder"
    )
    parser.add_argument("question", help="what to look for")
    parser.add_argument(
        "-k", type=int, default=5, metavar="N", help="chunks to return (default %(default)s)"
    )
    parser.add_argument(
        "--collection", metavar="NAME", help="the collection (needed when there are several)"
    )
    parser.add_argument(
        "--model",
        metavar="NAME_OR_PATH",
        help="the embedding model; must be the one the collection was written with",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    add_embed_arguments(parser)
    parser.set_defaults(handler=search_command)
    return parser


def search_command(args: argparse.Namespace) -> int:
    endpoint = embed_model_from_args(args)
    if endpoint is not None and args.model is not None:
        raise ValueError("--model and --embed-url both name the model; give one")
    model = endpoint or args.model
    found = search(args.target, args.question, k=args.k, collection=args.collection, model=model)
    if args.format == "json":
        print(json.dumps([hit.to_dict() for hit in found.hits], ensure_ascii=False, indent=2))
        return 0
    print(f"{PROG} search: {args.target} · {found.collection} · {found.model}")
    for rank, hit in enumerate(found.hits, 1):
        text = " ".join(hit.text.split())
        text = text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"
        print(f"{rank}. {hit.score:.3f}  {hit.path} [{hit.start}:{hit.end}]  chunk {hit.index}")
        print(f"   {text}")
    return 0
