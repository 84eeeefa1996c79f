"""Pass@5/10/20 on anthropic-code-eval: the set's own chunks per retriever and model, then
the project's chunkers, as the README table.

The set (``../shared/datasets/anthropic-code-eval``, Anthropic cookbook, MIT licence):
90 source files, their 737 chunks, 248 questions with golden chunks, retrieval over the
chunks of every file. Rows:

1. the given chunks, evaluated as they are (the guide's exact rule: a golden chunk is
   found when it is retrieved) with dense retrieval by each named model (MiniLM torch,
   ONNX int8, static), BM25, and hybrid (MiniLM torch + BM25, reciprocal-rank fusion);
   then the guide's published figures, which used other models (Voyage, Claude);
2. the project's chunkers at each ``--sizes`` (cl100k tokens), dense with MiniLM torch,
   a golden chunk found when the top-k chunks cover half of its non-whitespace
   characters (``--found-at 0.5``): ``code``, ``recursive``, ``token`` and, as the
   baseline, recursive with LangChain's default separators (blank line, line, space,
   character), which knows neither Markdown nor code.

    .venv/bin/python bench/bench_code_eval.py --quick      # the given-chunk rows only
    .venv/bin/python bench/bench_code_eval.py              # every row (long on 2 cores)

The same figures come from the command line, one row at a time, e.g.
``chunk-explorer evaluate --dataset ../shared/datasets/anthropic-code-eval --given-chunks
--top-k 5 10 20 --format json``. Not a test: it prints figures and seconds, which depend
on the machine and what else runs on it.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from chunking import Config
from chunking.evaluation.core import Settings, evaluate
from chunking.evaluation.datasets import load_dataset
from chunking.evaluation.passk import FOUND_AT, k_columns
from chunking.evaluation.techniques import DENSE, Technique
from chunking.model import Progress

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT.parent / "shared" / "datasets" / "anthropic-code-eval"
KS = (5, 10, 20)
MODELS = ("minilm", "minilm-onnx-int8", "minilm-static")
#: LangChain's RecursiveCharacterTextSplitter defaults: no Markdown, no code.
BASELINE = {"separators": ["\n\n", "\n", " ", ""], "keep_separator": "start"}
#: The guide's published Pass@5/10/20 on the set's own chunks (its README).
PUBLISHED = (
    ("embeddings (voyage-2)", (80.92, 87.15, 90.06)),
    ("contextual embeddings", (86.37, 92.81, 93.78)),
    ("contextual embeddings + BM25", (86.43, 93.21, 94.99)),
    ("contextual embeddings + BM25 + reranking", (91.24, 94.79, 96.30)),
)


def ticker(every: float = 30.0) -> Progress:
    """A progress callback that prints at most every ``every`` seconds."""
    start = last = time.perf_counter()

    def show(done: int, total: int, what: str) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last >= every:
            print(f"    {now - start:6.0f}s {done / max(total, 1):5.0%} {what[:80]}", flush=True)
            last = now

    return show


def row(label: str, chunks: str, figures: dict[str, float], seconds: float | None) -> str:
    took = f"{seconds:.0f}" if seconds is not None else "—"
    cells = " | ".join(f"{figures[f'pass@{k}']:.2f}" for k in KS)
    return f"| {label} | {chunks} | {cells} | {took} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the given-chunk rows only")
    parser.add_argument("--dataset", default=str(DATASET), metavar="DIR")
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 400], metavar="N")
    parser.add_argument("--models", nargs="+", default=list(MODELS), metavar="NAME")
    args = parser.parse_args()

    from chunking.embedding.models import get_embedder

    print(f"CPUs: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    data = load_dataset(args.dataset)
    given = data.given_chunks()
    print(
        f"{data.layout}: {len(data.questions)} questions, {len(data.documents)} documents, "
        f"{sum(map(len, given.values()))} chunks; retrieval over {data.scope} documents"
    )
    settings = Settings(top_k=max(KS), scope=data.scope)
    lines = [
        "| retrieval | chunks | Pass@5 | Pass@10 | Pass@20 | seconds |",
        "|---|---|---|---|---|---|",
    ]

    def run(
        label: str, chunks: str, config: Config | None, model: str | None, technique: Technique
    ) -> None:
        print(f"  {label} on {chunks} ...", flush=True)
        began = time.perf_counter()
        embedder = get_embedder(model) if model is not None else None
        evaluation = evaluate(
            data.documents,
            data.questions,
            config,
            embedder,
            settings,
            ticker(),
            technique,
            chunks=given if config is None else None,
        )
        rule = None if config is None else FOUND_AT
        figures = k_columns(evaluation, data.documents, KS, rule)
        lines.append(row(label, chunks, figures, time.perf_counter() - began))
        print("  " + lines[-1], flush=True)

    own = "the set's own (737)"
    for model in args.models:
        run(f"dense · {model}", own, None, model, DENSE)
    run("BM25", own, None, None, Technique(retriever="bm25"))
    run(
        f"hybrid · {args.models[0]} + BM25",
        own,
        None,
        args.models[0],
        Technique(retriever="hybrid"),
    )
    for label, figures in PUBLISHED:
        published = {f"pass@{k}": v for k, v in zip(KS, figures, strict=True)}
        lines.append(row(f"guide, other models: {label}", own, published, None))
    if not args.quick:
        for size in args.sizes:
            strategies = (
                ("code", Config.create("code", size=size, unit="tokens")),
                ("recursive", Config.create("recursive", size=size, unit="tokens")),
                ("token", Config.create("token", size=size)),
                (
                    "recursive, LangChain's default separators (baseline)",
                    Config.create("recursive", size=size, unit="tokens", **BASELINE),
                ),
            )
            for name, config in strategies:
                run(
                    f"dense · {args.models[0]}",
                    f"{name} · {size} tokens",
                    config,
                    args.models[0],
                    DENSE,
                )
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
