"""Benchmark: texts per second of every named embedding model, as ratios to torch.

Every model embeds the same texts from the chroma-eval corpora in one process: chunks
of about 250 cl100k tokens (what the map and the evaluation embed) and single sentences
(what the Semantic page embeds, in windows). Models not built yet are built first, and
each embeds a few texts before it is timed, so that one-time costs are not counted. The
in-memory cache is cleared before each timed run, so every run embeds from scratch; runs
alternate between the models and the best of ``--repeat`` is kept (the machine may be
shared).

    .venv/bin/python bench/bench_embeddings.py
    .venv/bin/python bench/bench_embeddings.py --quick

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import chunking
from chunking.embedding.cache import clear_cache
from chunking.embedding.models import Embedder, get_embedder
from chunking.embedding.registry import model_names
from chunking.engine.spans import sentence_spans

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"


def workloads(per_corpus: int) -> dict[str, list[str]]:
    """The same texts for every model: ~250-token chunks and sentences."""
    chunks: list[str] = []
    sentences: list[str] = []
    for path in sorted(CORPORA.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        chunks += [c.text for c in chunking.chunk(text, "token", size=250)][:per_corpus]
        sentences += [text[a:b] for a, b in sentence_spans(text)][: per_corpus * 4]
    return {"250-token chunks": chunks, "sentences": sentences}


def texts_per_second(embedder: Embedder, texts: list[str]) -> float:
    clear_cache()
    start = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few texts, one run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per model (best kept)")
    args = parser.parse_args()
    per_corpus, repeat = (6, 1) if args.quick else (40, max(1, args.repeat))
    loads = workloads(per_corpus)
    models = {}
    for name in model_names():
        start = time.perf_counter()
        models[name] = get_embedder(name)
        models[name].embed([f"warm-up {i}" for i in range(8)])  # first-call costs, untimed
        print(f"{name}: ready in {time.perf_counter() - start:.1f} s")
    for workload, texts in loads.items():
        best = dict.fromkeys(models, 0.0)
        for run in range(repeat):
            order = list(models)[run % len(models) :] + list(models)[: run % len(models)]
            for name in order:
                best[name] = max(best[name], texts_per_second(models[name], texts))
        reference = best[model_names()[0]]
        print(f"\n{workload} ({len(texts):,} texts, best of {repeat}):")
        for name, speed in best.items():
            print(f"  {name:<18} {speed:>10,.1f} texts/s  {speed / reference:>7.1f}x torch")


if __name__ == "__main__":
    main()
