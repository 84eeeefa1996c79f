"""The techniques table on chroma-eval: every retrieval technique on one configuration.

Recursive 250/0 cl100k tokens with the report's separators, the bundled
all-MiniLM-L6-v2, all 472 questions of the five corpora (``--quick``: state_of_the_union
only), top 5 in the question's own document. One row per technique (dense, bm25,
hybrid, late, headers, late + headers, window:1; parent on a parent-child
configuration of 1000/250 tokens; cluster when that chunker is registered), with each
metric, its difference from plain dense retrieval and the seconds it took. Each row's
time includes what earlier rows had not embedded yet (dense pays for the questions).

    .venv/bin/python bench/bench_techniques.py --quick
    .venv/bin/python bench/bench_techniques.py            # all 472 questions (minutes)

Not a test: the times depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import os
import time

from chunking import Config
from chunking.cli.evaluate import display_techniques
from chunking.evaluation import REPORT_RECURSIVE, Settings, load_chroma_eval
from chunking.evaluation.sweep import compare_techniques, table_rows, techniques_table
from chunking.evaluation.techniques import Technique

QUICK_CORPUS = "state_of_the_union"
#: Target per technique, from issue 14.
TARGET_SECONDS = 180


def ticker(every: float = 15.0):  # -> Progress
    """A progress callback that prints at most every ``every`` seconds."""
    start = last = time.perf_counter()

    def show(fraction: float, message: str) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last >= every:
            print(f"  {now - start:6.0f}s {fraction:5.0%} {message[:90]}", flush=True)
            last = now

    return show


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CORPUS} only")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--size", type=int, default=250, help="recursive size in tokens")
    parser.add_argument("--top-k", type=int, default=5)
    args = parser.parse_args()

    from chunking.embedding.models import get_embedder

    print(f"CPUs: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    documents, questions = load_chroma_eval([QUICK_CORPUS] if args.quick else None)
    print(
        f"{len(questions)} questions, {len(documents)} corpora, "
        f"{sum(map(len, documents.values())):,} characters"
    )
    began = time.perf_counter()
    embedder = get_embedder(args.model)
    print(f"model {embedder.name} loaded in {time.perf_counter() - began:.1f}s")
    base = Config.create("recursive", size=args.size, overlap=0, unit="tokens", **REPORT_RECURSIVE)
    parents = Config.create(
        "hierarchy", size=4 * args.size, child_sizes=str(args.size), unit="tokens"
    )
    rows = [
        *table_rows(base),
        ("parent (hierarchy 4× size)", Technique(returned="parent"), parents),
    ]
    settings = Settings(top_k=args.top_k)
    runs = compare_techniques(documents, questions, base, embedder, settings, ticker(), rows)
    table = techniques_table(runs)
    print()
    print(display_techniques(table).to_string(index=False))
    print("\nMetrics in percent; Δ: difference from plain dense retrieval.")
    slow = table[table["seconds"] > TARGET_SECONDS]
    verdict = "every technique" if slow.empty else f"{len(slow)} technique(s) over"
    print(f"target < {TARGET_SECONDS}s per technique: {verdict}")


if __name__ == "__main__":
    main()
