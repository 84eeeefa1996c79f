"""The command-line commands that call a language model: ``questions`` and ``enrich``.

::

    chunk-explorer questions docs/guide.md docs/faq.md --n 20 --out questions.csv
    chunk-explorer questions guide.md --n 5 --out q.csv --llm-url http://localhost:11434/v1 \\
        --llm-model qwen2.5:3b --yes
    chunk-explorer enrich guide.md --strategy recursive --size 800 --context --summary \\
        --keywords yake --format jsonl --output enriched.jsonl

Both show the cost (calls, tokens, time) before the first call and ask to go on
(``--yes`` skips the question); answers are cached, so a stopped run continues where it
was. Wire them into a parser with :func:`add_llm_parsers`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core import run as cut
from ..evaluation.questions import CORPUS_SUFFIXES
from ..llm.answers import annotate
from ..llm.client import LLM
from ..llm.cost import estimate, run_requests
from ..llm.enrich import annotate_answers, enrichment_requests, yake_keywords
from ..llm.questions import collect_questions, passages, question_requests, to_csv
from ..model import Chunk
from ..output.export import TEXT_WRITERS, iter_records
from .options import (
    add_llm_arguments,
    client_from_args,
    confirm,
    output,
    prepare,
    terminal_progress,
)


def add_llm_parsers(commands: Any, options: argparse.ArgumentParser) -> None:
    """Add ``questions`` and ``enrich`` to an ``add_subparsers()`` object; ``options``
    is the parent parser of ``split``/``stats`` (the document and strategy flags)."""
    add_questions_parser(commands)
    enrich = commands.add_parser(
        "enrich",
        parents=[options],
        help="chunks with an LLM context sentence, a summary and keywords in their metadata",
        description="Cut FILE into chunks and add metadata.context (contextual retrieval), "
        "metadata.summary and metadata.keywords; written like 'split'.",
    )
    enrich.add_argument("--context", action="store_true", help="a situating sentence (LLM)")
    enrich.add_argument("--summary", action="store_true", help="a one-sentence summary (LLM)")
    enrich.add_argument(
        "--keywords",
        choices=("yake", "llm", "none"),
        default="yake",
        help="keywords by YAKE (no model, default), by the model, or none",
    )
    enrich.add_argument("--format", choices=tuple(TEXT_WRITERS), default="jsonl")
    enrich.add_argument("--output", "-o", metavar="PATH", help="write here instead of stdout")
    add_llm_arguments(enrich)
    enrich.set_defaults(handler=_cmd_enrich)


def add_questions_parser(commands: Any) -> argparse.ArgumentParser:
    """``questions DOC... --n N --out FILE``."""
    parser = commands.add_parser(
        "questions",
        help="write evaluation questions with gold spans for your documents (LLM)",
        description="A model proposes a question per passage and quotes the excerpts that "
        "answer it; each excerpt is located in the document (verbatim or a reported near "
        "match), questions whose excerpts cannot be located are dropped and counted. The "
        "file is what 'evaluate --questions' reads (with --corpus the documents' folder).",
    )
    parser.add_argument("documents", nargs="+", metavar="DOC", help=".md or .txt documents")
    parser.add_argument("--n", type=int, default=10, metavar="N", help="questions to ask for")
    parser.add_argument("--out", "-o", metavar="FILE", help="the CSV file (default: stdout)")
    add_llm_arguments(parser)
    parser.set_defaults(handler=_cmd_questions)
    return parser


# ------------------------------------------------------------------------- questions


def read_documents(paths: Sequence[str]) -> dict[str, str]:
    """Documents by id (file name without suffix), read as ``evaluate --corpus`` reads
    them, so that the offsets written agree."""
    documents: dict[str, str] = {}
    for name in paths:
        path = Path(name)
        if path.suffix.lower() not in CORPUS_SUFFIXES:
            raise ValueError(f"{path}: questions reads .md or .txt documents, as evaluate does")
        if path.stem in documents:
            raise ValueError(f"{path}: two documents are called {path.stem!r}; rename one")
        try:
            documents[path.stem] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    return documents


def _cmd_questions(args: argparse.Namespace) -> int:
    documents = read_documents(args.documents)
    llm = client_from_args(args)
    picked = passages(documents, args.n)
    requests = question_requests(documents, picked)
    confirm(estimate(llm, requests), llm, args.yes)
    run = run_requests(llm, requests, terminal_progress("questions"))
    found = collect_questions(documents, picked, run.answers, run)
    print(f"questions: {found.describe()}", file=sys.stderr)
    print(f"time: {run.describe()}", file=sys.stderr)
    if not found.questions:
        raise ValueError(
            "no question could be kept, so no file was written"
            + (f" ({run.error})" if run.error else "")
        )
    text = to_csv(found.questions)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    if run.error:
        print(f"questions: stopped early: {run.error}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------- enrich


def enrich_chunks(
    document: str, chunks: Sequence[Chunk], args: argparse.Namespace, llm: LLM
) -> list[Chunk]:
    """The chunks with the metadata asked for; the cost is confirmed first."""
    wanted = enrichment_requests(
        document,
        chunks,
        context=args.context,
        summary=args.summary,
        model_keywords=args.keywords == "llm",
    )
    enriched = list(chunks)
    if wanted:
        confirm(estimate(llm, [r for rs in wanted.values() for r in rs]), llm, args.yes)
    for key, requests in wanted.items():
        run = run_requests(llm, requests, terminal_progress(key))
        print(f"{key}: {run.describe()}", file=sys.stderr)
        enriched = annotate_answers(enriched, key, run.check())
    if args.keywords == "yake":
        enriched = annotate(enriched, "keywords", yake_keywords(c.text for c in chunks))
    return enriched


def _cmd_enrich(args: argparse.Namespace) -> int:
    config, document = prepare(args)
    chunks = cut(document.text, config)
    llm = client_from_args(args)
    enriched = enrich_chunks(document.text, chunks, args, llm)
    with output(args.output) as out:
        TEXT_WRITERS[args.format](iter_records(enriched), out)
    return 0
