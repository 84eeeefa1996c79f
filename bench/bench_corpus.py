"""``chunk-explorer run`` over a large corpus: throughput, peak memory, Ray and Spark
overhead, and with ``--embed`` chunks embedded per second and where the time goes.

    .venv/bin/python bench/bench_corpus.py              # 100 MB corpus
    .venv/bin/python bench/bench_corpus.py --size 1000  # 1 GB corpus
    .venv/bin/python bench/bench_corpus.py --quick      # 10 MB, a smoke run
    .venv/bin/python bench/bench_corpus.py --quick --embed --no-ray
    .venv/bin/python bench/bench_corpus.py --quick --no-ray --tiktoken  # the backends
    .venv/bin/python bench/bench_corpus.py --size 20 --no-ray   # local against Spark

The corpus is assembled in a temporary folder from the chroma-eval corpora and the
sample documents, each copy given its own first line (so every file has its own
content hash) until it reaches ``--size`` MB. Every run is the installed command as a
subprocess (recursive, 400 tokens, no embedding unless ``--embed``); its wall time
gives MB/s and its peak RSS is the largest sum of the resident memory of the command
and all its child processes (workers, Ray's raylets and workers) seen while polling.
With ``--embed``, a separate ``--embed-size`` MB corpus is embedded by the local engine
with the fastest model that loads (:data:`FAST_MODELS`), and the run's manifest says
how its time splits between chunking, embedding and writing.
The Ray and Spark engines' overhead is their wall time over the local engine's with the
same number of workers. The Spark engine's start-up (its session, JVM and Python workers, from its
manifest) is printed apart, with the throughput after it; its peak memory is split into
the driver (the command and its JVM, which in ``local[N]`` also runs the executor) and
the Python workers (every other process of the tree); the other engines' likewise.
With ``--tiktoken`` the local engine runs again with tiktoken
counting cl100k (``CHUNK_EXPLORER_TOKEN_BACKEND=tiktoken``) instead of the fast
backend, and the ratio of the two is printed. A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
SAMPLES = ROOT / "sample_docs"
COMMAND = Path(sys.executable).parent / "chunk-explorer"
CONFIG = ("--strategy", "recursive", "--size", "400", "--unit", "tokens")
#: Named fast embedding models to try first for --embed, fastest first; the bundled
#: all-MiniLM-L6-v2 is the fallback.
FAST_MODELS = ("minilm-static", "minilm-onnx-int8", "minilm-onnx", "all-MiniLM-L6-v2")
POLL_SECONDS = 0.1


def seeds() -> list[Path]:
    found = sorted(CORPORA.glob("*.md")) + sorted(
        p for p in SAMPLES.iterdir() if p.is_file() and p.suffix != ".py" and p.name != "README.md"
    )
    if not found:
        sys.exit(f"no seed documents under {CORPORA} or {SAMPLES}")
    return found


def assemble(folder: Path, megabytes: float) -> int:
    """Write copies of the seeds into ``folder`` until it holds ``megabytes``; its bytes."""
    target = int(megabytes * 2**20)
    texts = [(p.suffix, p.read_bytes()) for p in seeds()]
    written = copy = 0
    while written < target:
        for suffix, data in texts:
            if suffix == ".json":  # a first line would make it invalid JSON: vary its end
                body = data + f"\n\n copy {copy}\n".encode()
            else:
                body = f"copy {copy} of this document\n\n".encode() + data
            path = folder / f"shard{copy % 100:02d}" / f"doc{copy:06d}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
            written += len(body)
            copy += 1
            if written >= target:
                break
    return written


def tree_rss(process: psutil.Process) -> tuple[int, int]:
    """Resident bytes of the driver (``process`` and any JVM it started) and of every
    other descendant still alive (the workers)."""
    driver = workers = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            rss = member.memory_info().rss
            is_driver = member.pid == process.pid or member.name() == "java"
        except psutil.Error:
            continue
        if is_driver:
            driver += rss
        else:
            workers += rss
    return driver, workers


def measure(
    args: list[str], env: dict[str, str] | None = None
) -> tuple[float, int, dict[str, object], tuple[int, int]]:
    """Run the command (with ``env`` added to the environment); (wall seconds, peak RSS
    of its process tree, its manifest, peak RSS of its driver and of its workers)."""
    out = Path(args[args.index("--out") + 1])
    started = time.perf_counter()
    child = subprocess.Popen(
        [str(COMMAND), *args, "--quiet"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    process = psutil.Process(child.pid)
    peak = driver = workers = 0
    while child.poll() is None:
        now = tree_rss(process)
        peak, driver, workers = max(peak, sum(now)), max(driver, now[0]), max(workers, now[1])
        time.sleep(POLL_SECONDS)
    seconds = time.perf_counter() - started
    summary = child.stdout.read() if child.stdout else ""
    if child.returncode not in (0, 1):
        sys.exit(f"run failed ({child.returncode}): {' '.join(args)}\n{summary}")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return seconds, peak, manifest, (driver, workers)


def fastest_model() -> str:
    from chunking.embedding.models import EmbeddingError, get_embedder

    for name in FAST_MODELS:
        try:
            get_embedder(name)
        except (EmbeddingError, ValueError, OSError):
            continue
        return name
    sys.exit("no embedding model is available offline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, default=100, help="corpus size in MB")
    parser.add_argument("--quick", action="store_true", help="a 10 MB corpus")
    parser.add_argument("--embed", action="store_true", help="also embed, fastest model")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray engine")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark engine")
    parser.add_argument(
        "--tiktoken", action="store_true", help="also count with tiktoken, for the ratio"
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        help="local engine runs, by worker count (default: 1 2)",
    )
    parser.add_argument(
        "--embed-size", type=float, default=10, help="MB embedded with --embed (--quick: 1)"
    )
    options = parser.parse_args()
    megabytes = 10 if options.quick else options.size
    work = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        corpus = work / "corpus"
        size = assemble(corpus, megabytes)
        files = sum(1 for p in corpus.rglob("*") if p.is_file())
        print(f"corpus: {files:,} files, {size / 2**20:,.1f} MB (recursive, 400 tokens)")
        report(corpus, work, size, options)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(corpus: Path, work: Path, size: int, options: argparse.Namespace) -> None:
    mb = size / 2**20
    walls: dict[str, float] = {}
    runs = [("local", n, "") for n in options.workers]
    runs += [] if options.no_ray else [("ray", 2, "")]
    runs += [] if options.no_spark else [("spark", 2, "")]
    runs += [("local", 1, "tiktoken")] if options.tiktoken else []
    for engine, workers, backend in runs:
        out = work / f"out-{engine}-{workers}"
        args = ["run", str(corpus), "--out", str(out), *CONFIG]
        args += ["--engine", engine, "--workers", str(workers)]
        env = {"CHUNK_EXPLORER_TOKEN_BACKEND": backend} if backend else None
        seconds, peak, manifest, (driver, workers_rss) = measure(args, env)
        walls[f"{engine}-{workers}{'-' + backend if backend else ''}"] = seconds
        counts, timings = manifest["counts"], manifest["timings"]
        assert isinstance(counts, dict) and isinstance(timings, dict)
        print(
            f"{engine:<5} {workers} worker(s){' (tiktoken)' if backend else ''}: "
            f"{seconds:7.1f} s  {mb / seconds:6.2f} MB/s  "
            f"peak RSS {peak / 2**20:7.0f} MB (driver {driver / 2**20:,.0f}, workers "
            f"{workers_rss / 2**20:,.0f})  {counts['chunks']:,} chunks"
        )
        if "startup_seconds" in timings:
            startup = float(timings["startup_seconds"])
            print(
                f"      start-up {startup:.1f} s (session, JVM, Python workers); after it "
                f"{mb / max(seconds - startup, 1e-9):6.2f} MB/s"
            )
        shutil.rmtree(out)
    if "local-1-tiktoken" in walls and "local-1" in walls:
        ratio = walls["local-1-tiktoken"] / walls["local-1"]
        print(f"fast backend: {ratio:.2f}x the throughput of tiktoken (local, 1 worker)")
    if "ray-2" in walls and "local-2" in walls:
        print(f"ray overhead: {walls['ray-2'] / walls['local-2']:.2f}x the local engine's time")
    if "spark-2" in walls and "local-2" in walls:
        ratio = walls["spark-2"] / walls["local-2"]
        print(f"spark overhead: {ratio:.2f}x the local engine's time")
    if options.embed:
        embedded = work / "embed-corpus"
        assemble(embedded, 1 if options.quick else options.embed_size)
        embed_report(embedded, work)


def embed_report(corpus: Path, work: Path) -> None:
    model = fastest_model()
    out = work / "out-embed"
    args = ["run", str(corpus), "--out", str(out), *CONFIG, "--embed", "--model", model]
    seconds, peak, manifest, _ = measure(args)
    counts, timings = manifest["counts"], manifest["timings"]
    assert isinstance(counts, dict) and isinstance(timings, dict)
    chunks = counts["chunks"]
    print(
        f"embed ({model}), local 1 worker: {seconds:.1f} s, {chunks / seconds:,.0f} chunks/s "
        f"end to end, {chunks / max(timings['embed_seconds'], 1e-9):,.0f} chunks/s embedding "
        f"alone, peak RSS {peak / 2**20:,.0f} MB"
    )
    known = sum(timings[k] for k in ("chunk_seconds", "embed_seconds", "write_seconds"))
    shares = {
        "read + chunk": timings["chunk_seconds"],
        "embed": timings["embed_seconds"],
        "write parquet": timings["write_seconds"],
        "start-up, model load, reading files": max(seconds - known, 0.0),
    }
    print("where the time goes: " + ", ".join(f"{k} {v / seconds:.0%}" for k, v in shares.items()))


if __name__ == "__main__":
    main()
