"""Time a full chroma-eval evaluation and a six-configuration sweep with all-MiniLM-L6-v2.

1. One configuration on all 472 questions of the five corpora: model load, chunking,
   embedding (chunks + questions) and scoring, each timed.
2. A six-configuration sweep in the same process, after step 1: the question vectors
   come from the embedder's cache, so only new chunk texts reach the model. Prints how
   many texts were requested and how many were really embedded (the embedder's own
   counter).

    .venv/bin/python bench/bench_evaluation.py
    .venv/bin/python bench/bench_evaluation.py --corpora chatlogs state_of_the_union
    .venv/bin/python bench/bench_evaluation.py --skip-sweep --model hash

Not a test: the numbers depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from chunking import Config
from chunking.evaluation import REPORT_RECURSIVE, Settings, evaluate, load_chroma_eval
from chunking.evaluation.core import chunk_documents
from chunking.evaluation.sweep import Grid, sweep

SWEEP = {
    "strategy": ["recursive", "token"],
    "size": [200, 250, 400],  # 250: step 1's configuration, whose chunks are cached too
    "overlap": [0],
    "unit": ["tokens"],
    **REPORT_RECURSIVE,
}


def ticker(every: float = 15.0) -> Callable[[float, str], None]:
    """A progress callback that prints at most every ``every`` seconds."""
    start = last = time.perf_counter()

    def show(fraction: float, message: str) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last >= every or fraction >= 1.0:
            print(f"  {now - start:6.0f}s {fraction:5.0%} {message}", flush=True)
            last = now

    return show


def distinct_texts(
    documents: Mapping[str, str], configs: Sequence[Config], exclude: AbstractSet[str] = frozenset()
) -> set[str]:
    """Distinct chunk texts the configurations produce, minus ``exclude``."""
    texts: set[str] = set()
    for config in configs:
        chunks = chunk_documents(documents, config, list(documents))
        texts |= {c.text for cs in chunks.values() for c in cs}
    return texts - exclude


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", help="default: all five")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--size", type=int, default=250, help="recursive size in tokens")
    parser.add_argument("--skip-sweep", action="store_true")
    args = parser.parse_args()

    from chunking.embedding.models import get_embedder

    print(f"CPUs: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    documents, questions = load_chroma_eval(args.corpora)
    print(
        f"{len(questions)} questions, {len(documents)} corpora, "
        f"{sum(map(len, documents.values())):,} characters"
    )
    embedder = get_embedder(args.model)
    load = time.perf_counter() - t0
    print(f"model {embedder.name} loaded in {load:.1f}s")

    config = Config.create(
        "recursive", size=args.size, overlap=0, unit="tokens", **REPORT_RECURSIVE
    )
    t1, cpu1 = time.perf_counter(), time.process_time()
    result = evaluate(documents, questions, config, embedder, Settings(), ticker())
    total, cpu = time.perf_counter() - t1, time.process_time() - cpu1
    rate = result.texts_embedded / total if total else 0.0
    print(
        f"\n1) recursive {args.size}/0 tokens, {len(questions)} questions: {total:.1f}s "
        f"(+{load:.1f}s model load); {result.n_chunks:,} chunks, "
        f"{result.texts_embedded:,} of {result.texts_requested:,} texts embedded "
        f"({rate:.1f} texts/s overall)\n   CPU time {cpu:.0f}s: with both cores to itself the "
        f"run would take about {cpu / (os.cpu_count() or 1):.0f}s "
        f"(load average now {os.getloadavg()[0]:.1f})"
    )
    for metric in ("recall", "precision", "iou", "precision_omega"):
        print(f"   {metric:16s} {100 * result.mean(metric):5.1f} ± {100 * result.std(metric):4.1f}")
    if args.skip_sweep:
        return

    grid = Grid.from_dict(SWEEP)
    configs, _ = grid.configs()
    t2, cpu2 = time.perf_counter(), time.process_time()
    before = embedder.encoded
    swept = sweep(documents, questions, grid, embedder, Settings(), ticker())
    seen = distinct_texts(documents, [config]) | {q.text for q in questions}
    expected = len(distinct_texts(documents, configs, seen))
    print(
        f"\n2) sweep of {len(configs)} configurations: {time.perf_counter() - t2:.1f}s "
        f"(CPU {time.process_time() - cpu2:.0f}s); "
        f"texts requested {swept.texts_requested:,}, embedded {swept.texts_embedded:,} "
        f"(embedder counter: {embedder.encoded - before:,}); distinct chunk texts not "
        f"embedded in step 1: {expected:,}; questions requested {len(configs) * len(questions):,}"
    )
    columns = [
        "strategy",
        "size",
        "n_chunks",
        "mean_tokens",
        "recall_mean",
        "precision_mean",
        "iou_mean",
        "precision_omega_mean",
    ]
    print(swept.table[columns].round(3).to_string(index=False))


if __name__ == "__main__":
    main()
