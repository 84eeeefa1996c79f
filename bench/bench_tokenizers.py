"""Counting tokens on the chroma-eval corpora: cl100k (tiktoken) against the embedding
model's word pieces (Hugging Face ``tokenizers``), one text at a time and in batches.

    .venv/bin/python bench/bench_tokenizers.py [--repeat 3] [--size 1000]

The corpora are cut into recursive chunks of ``--size`` characters first (what the
report counts: every chunk, in every unit). Prints MB/s (of UTF-8 text) for each way of
counting, the best of ``--repeat`` runs, and ratios. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import chunking
from chunking.units import get_encoding, get_sizer

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"


def best_of(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    docs = [p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md"))]
    texts: list[str] = [c.text for d in docs for c in chunking.chunk(d, size=args.size)]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts):,} chunks of the chroma corpora, {megabytes:.2f} MB")

    cl100k = get_encoding()
    model = get_sizer("model")  # a fresh count: its memo is empty
    tokenizer_batch = model.sizes

    def one_by_one(count: Callable[[str], object]) -> Callable[[], object]:
        return lambda: [count(t) for t in texts]

    def batched(count: Callable[[Sequence[str]], object]) -> Callable[[], object]:
        return lambda: count(texts)

    rows = {
        "cl100k, one text at a time": one_by_one(cl100k.encode_ordinary),
        "cl100k, batch (threads)": batched(cl100k.encode_ordinary_batch),
        "model word pieces, batch": batched(tokenizer_batch),
    }
    speeds = {name: megabytes / best_of(args.repeat, work) for name, work in rows.items()}
    for name, speed in speeds.items():
        print(f"{name:<32} {speed:7.2f} MB/s")
    base = speeds["cl100k, one text at a time"]
    for name, speed in speeds.items():
        print(f"ratio to cl100k one at a time: {name}: {speed / base:.2f}x")
    total = sum(model.sizes(texts))
    print(f"{total:,} word pieces, {sum(len(cl100k.encode_ordinary(t)) for t in texts):,} cl100k")


if __name__ == "__main__":
    main()
