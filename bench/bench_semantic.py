"""Benchmark: semantic chunking end to end against LangChain and chonkie, and re-chunking
from cached embeddings.

All use the same bundled all-MiniLM-L6-v2 on the CPU: LangChain's ``SemanticChunker``
through a LangChain ``Embeddings`` wrapper around our embedder (``langchain``) and around
the bare sentence-transformers model with its default batch size, as a LangChain user
would wire it (``langchain-st``); chonkie's ``SemanticChunker`` through its
``SentenceTransformerEmbeddings`` given the same loaded model. The in-memory embedding
cache is cleared before every timed run, so every run embeds from scratch. Runs
alternate between the contenders (rotating who goes first) and the best of
``--repeat`` runs is reported (the machine may be shared).

    .venv/bin/python bench/bench_semantic.py
    .venv/bin/python bench/bench_semantic.py --file path/to/doc.md --repeat 5
    .venv/bin/python bench/bench_semantic.py --rechunk-model all-MiniLM-L6-v2
    .venv/bin/python bench/bench_semantic.py --first            # issue 37 point 5

``--first`` times the first full-quality analysis of a novel, cold: each document in a
fresh process (model load, sentence segmentation and the embedding cache all empty; the
disk cache off), with the app's full-quality model
(:func:`chunking.embedding.registry.full_quality_model`). The novels are
``bench/bench_app.py``'s ``novel_document()`` (about 300 KB) and Pride and Prejudice
(704 KB, ../shared/datasets/books). Each line gives wall and process CPU seconds (all
threads, ``os.times``) split into sentences, tokenising and batching, the model run and
the distances, and the load average around the run: on a shared machine the CPU seconds
are the steadier figure, the wall time is the one the target is about.

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from chunking.embedding.cache import clear_cache
from chunking.embedding.models import DEFAULT_BATCH_SIZE, Embedder, get_embedder
from chunking.splitters.semantic.analysis import analyze

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
DEFAULT_FILE = CORPORA / "state_of_the_union.md"
RECHUNK_FILES = ("pubmed", "wikitexts", "state_of_the_union", "chatlogs", "finance")
BOOK = ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt"
FIRST_DOCUMENTS = ("novel", "pride_and_prejudice")


def ours(embedder: Embedder, buffer_size: int, batch_size: int) -> Callable[[str], int]:
    def run(text: str) -> int:
        analysis = analyze(text, embedder=embedder, buffer_size=buffer_size, batch_size=batch_size)
        return len(analysis.chunk(method="percentile", unit="chars", max_size=10**9).chunks)

    return run


def langchain(
    embedder: Embedder, buffer_size: int, batch_size: int, raw: bool = False
) -> Callable[[str], int]:
    from langchain_core.embeddings import Embeddings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_experimental.text_splitter import SemanticChunker

    class OurEmbeddings(Embeddings):
        """LangChain's interface over our embedder (same model, same batching)."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed(texts, batch_size=batch_size).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    class ModelEmbeddings(Embeddings):
        """LangChain's interface straight over the sentence-transformers model, as a
        LangChain user would write it (its default batch size, no cache)."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            vectors = embedder.model.encode(texts, normalize_embeddings=True)
            return vectors.tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    wrapper = OurEmbeddings() if not raw else ModelEmbeddings()
    splitter = SemanticChunker(
        wrapper, buffer_size=buffer_size, breakpoint_threshold_type="percentile"
    )
    return lambda text: len(splitter.split_text(text))


def chonkie(embedder: Embedder) -> Callable[[str], int] | None:
    try:
        from chonkie import SemanticChunker
        from chonkie.embeddings import SentenceTransformerEmbeddings
    except ImportError:
        return None
    model = getattr(embedder, "model", None)
    if model is None:
        return None
    chunker = SemanticChunker(embedding_model=SentenceTransformerEmbeddings(model))
    return lambda text: len(chunker.chunk(text))


def best_times(
    contenders: dict[str, Callable[[str], int]], text: str, repeat: int
) -> dict[str, tuple[float, float, int]]:
    """Best wall and CPU time of each contender (runs interleaved), and its chunk count.

    CPU time (all threads of this process) is the steadier figure on a shared machine.
    """
    best: dict[str, tuple[float, float, int]] = {}
    names = list(contenders)
    for round_ in range(repeat):
        shift = round_ % len(names)  # rotate who goes first: no fixed position bias
        for name in names[shift:] + names[:shift]:
            run = contenders[name]
            clear_cache()
            wall, cpu = time.perf_counter(), time.process_time()
            n = run(text)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            old = best.get(name, (math.inf, math.inf, n))
            best[name] = (min(wall, old[0]), min(cpu, old[1]), n)
    return best


def end_to_end(args: argparse.Namespace) -> None:
    text = Path(args.file).read_text(encoding="utf-8")
    embedder = get_embedder(args.model)
    embedder.embed(["warm up the model"])
    contenders: dict[str, Callable[[str], int]] = {
        "ours": ours(embedder, args.buffer_size, args.batch_size),
        "langchain": langchain(embedder, args.buffer_size, args.batch_size),
    }
    if hasattr(embedder, "model"):
        contenders["langchain-st"] = langchain(embedder, args.buffer_size, 32, raw=True)
    peer = chonkie(embedder)
    if peer is not None:
        contenders["chonkie"] = peer
    sentences = len(analyze(text, embedder="hash").sentences)
    theirs = len(re.split(r"(?<=[.?!])\s+", text))  # LangChain's default sentence split
    print(
        f"{Path(args.file).name}: {len(text):,} chars, {sentences} sentences "
        f"(ours, Bling Fire), {theirs} (LangChain's regex)"
    )
    print(
        f"model {embedder.name}, buffer_size {args.buffer_size}, batch size "
        f"{args.batch_size}, best of {args.repeat} (runs interleaved)"
    )
    results = best_times(contenders, text, args.repeat)
    wall, cpu, _ = results["ours"]
    for name, (w, c, n) in results.items():
        ratio = "" if name == "ours" else f"  ours: {w / wall:.2f}x wall, {c / cpu:.2f}x CPU"
        print(f"  {name:12s} wall {w:6.2f} s  CPU {c:6.2f} s  {n:4d} chunks{ratio}")


def rechunk(args: argparse.Namespace) -> None:
    text = "\n\n".join(
        (CORPORA / f"{name}.md").read_text(encoding="utf-8") for name in RECHUNK_FILES
    )
    analysis = analyze(text, embedder="hash")
    end = analysis.sentences[args.sentences - 1][1]
    text = text[:end]
    start = time.perf_counter()
    analysis = analyze(text, embedder=args.rechunk_model, buffer_size=args.buffer_size)
    print(
        f"\nre-chunking a {len(analysis.sentences):,}-sentence document "
        f"({len(text):,} chars; analysis with {analysis.embedder.name} took "
        f"{time.perf_counter() - start:.1f} s)"
    )
    calls = analysis.embedder.calls
    settings = [
        ("percentile", 95, "chars", 2000, 0),
        ("percentile", 90, "chars", 2000, 0),
        ("std", 2, "chars", 2000, 0),
        ("iqr", None, "chars", 2000, 0),
        ("count", 400, "chars", 2000, 0),
        ("auto", None, "chars", 2000, 0),
        ("percentile", 90, "chars", 1000, 200),
        ("percentile", 90, "words", 300, 0),
        ("percentile", 90, "tokens", 512, 0),
        ("percentile", 80, "tokens", 512, 50),
    ]
    for method, threshold, unit, max_size, min_size in settings:
        times = []
        for _ in range(args.rechunk_repeat):
            start = time.perf_counter()
            result = analysis.chunk(method, threshold, unit, max_size, min_size)
            times.append(time.perf_counter() - start)
        label = f"{method} {threshold if threshold is not None else '-'}"
        print(
            f"  {label:15s} {unit:6s} max {max_size:5d} min {min_size:3d}: "
            f"{len(result.chunks):5d} chunks, first {times[0] * 1000:6.1f} ms, "
            f"median {float(np.median(times)) * 1000:6.1f} ms"
        )
    print(f"  model calls during re-chunking: {analysis.embedder.calls - calls}")


def cpu_seconds() -> float:
    """CPU time of this process, every thread, user and system."""
    times = os.times()
    return times.user + times.system


def first_document(name: str) -> str:
    if name == "novel":
        sys.path.insert(0, str(ROOT))
        from bench.bench_app import novel_document

        return novel_document()
    return BOOK.read_text(encoding="utf-8")


def first_analysis(name: str, model: str | None) -> None:
    """One cold first analysis of ``name`` in this (fresh) process, printed as lines."""
    from chunking.embedding.registry import full_quality_model
    from chunking.splitters.semantic.analysis import analysis_sentences

    text = first_document(name)
    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), cpu_seconds()
    embedder = get_embedder(model or full_quality_model())
    steps = {"model load": (time.perf_counter() - wall, cpu_seconds() - cpu)}
    spent = {"tokenising and batching": [0.0, 0.0], "model run": [0.0, 0.0]}

    def timed(step: str, method: Callable[..., object]) -> Callable[..., object]:
        def run(*args: object) -> object:
            wall, cpu = time.perf_counter(), cpu_seconds()
            try:
                return method(*args)
            finally:
                spent[step][0] += time.perf_counter() - wall
                spent[step][1] += cpu_seconds() - cpu

        return run

    # Instance attributes shadow the methods: analyze() below runs the real path.
    embedder.plan_batches = timed("tokenising and batching", embedder.plan_batches)  # type: ignore[method-assign]
    embedder._encode_batch = timed("model run", embedder._encode_batch)  # type: ignore[method-assign]
    wall, cpu = time.perf_counter(), cpu_seconds()
    sentences = analysis_sentences(text)
    steps["sentences"] = (time.perf_counter() - wall, cpu_seconds() - cpu)
    wall, cpu = time.perf_counter(), cpu_seconds()
    analysis = analyze(text, embedder=embedder, disk_cache=False)
    total = (time.perf_counter() - wall, cpu_seconds() - cpu)
    for step, (w, c) in spent.items():
        steps[step] = (w, c)
    steps["distances, rest"] = (
        total[0] - sum(w for w, _ in spent.values()),
        total[1] - sum(c for _, c in spent.values()),
    )
    first = (steps["sentences"][0] + total[0], steps["sentences"][1] + total[1])
    print(
        f"{name}: {len(text):,} chars, {len(sentences):,} sentences, model {embedder.name}, "
        f"{embedder.calls} batches, load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    for step, (w, c) in steps.items():
        print(f"  {step:24s} wall {w:6.2f} s  CPU {c:6.2f} s")
    print(
        f"  first analysis (no load) wall {first[0]:6.2f} s  CPU {first[1]:6.2f} s; "
        f"with the model load wall {first[0] + steps['model load'][0]:6.2f} s"
    )
    assert len(analysis.embeddings) == len(sentences)


def first(args: argparse.Namespace) -> None:
    """Each document's first analysis in a fresh process."""
    for name in args.first_documents:
        command = [sys.executable, __file__, "--first-one", name]
        if args.model:
            command += ["--model", args.model]
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        subprocess.run(command, check=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", default=str(DEFAULT_FILE))
    parser.add_argument(
        "--model",
        default=None,
        help="default: bundled all-MiniLM-L6-v2 (--first: the full-quality model)",
    )
    parser.add_argument("--buffer-size", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=5000)
    parser.add_argument("--rechunk-repeat", type=int, default=7)
    parser.add_argument(
        "--rechunk-model",
        default="hash",
        help="embedder for the 5,000-sentence analysis (default 'hash': re-chunking never "
        "embeds, so the model only changes the distances, not the work)",
    )
    parser.add_argument("--skip-end-to-end", action="store_true")
    parser.add_argument(
        "--first",
        action="store_true",
        help="only the cold first full-quality analysis of the novels (issue 37 point 5)",
    )
    parser.add_argument(
        "--first-documents", nargs="+", choices=FIRST_DOCUMENTS, default=list(FIRST_DOCUMENTS)
    )
    parser.add_argument("--first-one", choices=FIRST_DOCUMENTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_one:
        first_analysis(args.first_one, args.model)
        return
    if args.first:
        first(args)
        return
    if not args.skip_end_to_end:
        end_to_end(args)
    rechunk(args)


if __name__ == "__main__":
    main()
