"""Announced waits against what happens: model loads (and builds) and first embeddings.

    .venv/bin/python -m bench.bench_estimates              # priors, then calibrated
    .venv/bin/python -m bench.bench_estimates --fit        # also print idle priors
    .venv/bin/python -m bench.bench_estimates --build      # also time the derived builds
    .venv/bin/python -m bench.bench_estimates --models minilm-onnx-int8 --rounds 3
    .venv/bin/python -m bench.bench_estimates --contention 0 1 2 4 6   # slowdown by load
    .venv/bin/python -m bench.bench_estimates --waits          # issue 38's four waits
    .venv/bin/python -m bench.bench_estimates --waits --busy 3 --place apart --settle 60
    .venv/bin/python -m bench.bench_estimates --waits --root /tmp/old  # an older commit's

Every step runs in a fresh Python process, so a load is a real first load (torch's
import included) and an embedding a first embedding (nothing cached). Before each step
the child asks the core for its estimate (``estimate_load_seconds``,
``estimate_embedding_seconds``), then measures it. Records go to a timings file of the
benchmark's own (``CHUNK_EXPLORER_TIMINGS``), empty at the start: round 1 shows the
priors (scaled by the machine's load), the later rounds the estimates calibrated by
the rounds before, on other texts than the ones they were calibrated on.

Texts: the Semantic page's sentence windows (three sentences) of a document, and
chunks of at most 254 model word pieces of another (a map's or Explore's texts).
``--build`` builds the derived models into a temporary cache (the real ones stay) and
compares their build with its estimate.

``--contention LOOPS...`` measures the slowdown of an embedding (wall seconds over
its idle prior) with that many busy loops running, against what
``chunking.embedding.timing.contention`` predicted. ``--waits`` times issue 38's four
waits whole in fresh processes (a LanceDB write from Explore, a Corpus write, a fresh
map, an own-document evaluation) from their announcement to their end: announced,
actual, their ratio. ``--root DIR`` runs them with another checkout's code (an export of
an older commit: what was announced before); ``--busy N`` with N busy loops running
(``--place apart``: each in a session of its own, ``together``: all in one, ``own``: in
the benchmark's session), started ``--settle`` seconds before; ``--only`` some of them;
``--out FILE`` writes the rows as JSON. Wrap every run in the shared lock
(``flock /tmp/bench.lock ...``) on a shared machine.

Printed: one row per step with estimate, measured seconds and their ratio (measured /
estimate; the target is 0.67 to 1.5), the machine's load before the step, and with
``--fit`` the idle priors (seconds divided by the contention) to declare in
``chunking/embedding/registry.py``. A benchmark: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
MODELS = ("minilm", "minilm-onnx-int8", "minilm-static")
#: (name, document, kind, how many texts): each round uses the next pair, in turn.
TEXT_SETS = (
    ("essay windows", ROOT / "sample_docs" / "long_essay.txt", "windows", 300),
    ("finance chunks", CORPORA / "finance.md", "chunks", 491),
    ("pubmed windows", CORPORA / "pubmed.md", "windows", 400),
    ("wikitexts chunks", CORPORA / "wikitexts.md", "chunks", 491),
)

CHILD = r"""
import json, sys, time
from chunking.embedding.timing import contention
load_before = contention()
from chunking.embedding.models import (
    estimate_embedding_seconds, estimate_load_seconds, get_embedder,
)
model, path = sys.argv[1], sys.argv[2]
texts = json.loads(open(path, encoding="utf-8").read())
out = {"load_estimate": estimate_load_seconds(model), "contention": load_before}
started = time.perf_counter()
embedder = get_embedder(model)
out["load"] = time.perf_counter() - started
out["embed_estimate"] = estimate_embedding_seconds(model, texts)
out["embed_contention"] = contention()
started = time.perf_counter()
embedder.embed(texts)
out["embed"] = time.perf_counter() - started
out["texts"] = len(texts)
out["chars"] = sum(len(t) for t in texts)
window = embedder.speed.window_pieces
out["pieces"] = sum(min(n, window) for n in embedder.count_tokens_batch(texts))
print(json.dumps(out))
"""


CONTENTION_CHILD = r"""
import json, os, sys, time
from chunking.embedding.models import get_embedder
from chunking.embedding.timing import contention
model, path = sys.argv[1], sys.argv[2]
texts = json.loads(open(path, encoding="utf-8").read())
embedder = get_embedder(model)
embedder.embed(["warm up the model", "and its threads"], disk_cache=False)
window = embedder.speed.window_pieces
idle = embedder.speed.embedding_seconds(embedder.count_tokens_batch(texts))
print("go", flush=True)
sys.stdin.readline()
load, predicted = os.getloadavg()[0], contention()
before, started = os.times(), time.perf_counter()
embedder.embed(texts, disk_cache=False)
wall, after = time.perf_counter() - started, os.times()
cpu = (after.user - before.user) + (after.system - before.system)
print(json.dumps({"idle": idle, "wall": wall, "cpu": cpu, "load": load, "predicted": predicted}))
"""


def runnable() -> int:
    """Tasks running or waiting for a CPU now (``/proc/loadavg``'s fourth field), this
    sampler left out."""
    return int(Path("/proc/loadavg").read_text().split()[3].split("/")[0]) - 1


def measure_contention(
    model: str,
    texts_file: Path,
    loops: list[int],
    settle: float,
    env: dict[str, str],
    same_group: bool = False,
) -> list[dict[str, float]]:
    """For each count of busy loops: start them, let the load average follow for
    ``settle`` seconds, then embed the texts in a child that has loaded the model (so
    only the embedding is timed) while sampling the runnable tasks. The loops run in
    sessions of their own, as other people's work does (Linux shares the CPUs between
    sessions first, "autogroup"); with ``same_group`` in the child's. Prints one row each:
    busy loops, 1-minute load average at the start, mean runnable tasks during the run
    (the child's own threads included), idle prior, wall seconds, CPU seconds of the
    child, slowdown (wall over idle prior), and what contention() predicted."""
    import threading
    import time

    rows = []
    print(
        f"{'loops':>5}{'load1':>7}{'runnable':>9}{'idle':>7}{'wall':>8}{'cpu':>7}"
        f"{'slowdown':>9}{'predicted':>10}"
    )
    for k in loops:
        busy = [
            subprocess.Popen(
                [sys.executable, "-c", "while True: pass"], start_new_session=not same_group
            )
            for _ in range(k)
        ]
        try:
            child = subprocess.Popen(
                [sys.executable, "-c", CONTENTION_CHILD, model, str(texts_file)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            assert child.stdout is not None and child.stdin is not None
            ready = time.perf_counter()
            while child.stdout.readline().strip() != "go":
                if child.poll() is not None:
                    raise SystemExit(f"{model}: the child failed")
            time.sleep(max(0.0, settle - (time.perf_counter() - ready)))
            samples: list[int] = []
            stop = threading.Event()

            def sample(out: list[int] = samples, done: threading.Event = stop) -> None:
                while not done.wait(0.1):
                    out.append(runnable())

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            child.stdin.write("\n")
            child.stdin.flush()
            r = json.loads(child.stdout.readline())
            stop.set()
            sampler.join()
            child.wait()
        finally:
            for p in busy:
                p.kill()
                p.wait()
        r["loops"] = k
        r["runnable"] = sum(samples) / len(samples) if samples else float("nan")
        r["slowdown"] = r["wall"] / r["idle"]
        rows.append(r)
        print(
            f"{k:>5}{r['load']:7.2f}{r['runnable']:9.2f}{r['idle']:7.2f}{r['wall']:8.2f}"
            f"{r['cpu']:7.2f}{r['slowdown']:9.2f}{r['predicted']:10.2f}",
            flush=True,
        )
    return rows


WAITS_CHILD = r"""
import json, os, sys, tempfile, time
import chunking
from chunking.documents.io import read_path
from chunking.embedding.timing import contention
from chunking.embedding.models import (
    estimate_embedding_seconds, estimate_load_seconds, get_embedder,
)
case, model, path, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
from pathlib import Path
out = {"load1": os.getloadavg()[0], "embed_factor": contention()}
if case == "evaluate":  # the Evaluate page's own-document sweep: typed questions, its grid
    from chunking.evaluation import REPORT_RECURSIVE, Settings, load_chroma_eval
    from chunking.evaluation.core import embedded_chunk_texts
    from chunking.evaluation.sweep import Grid, sweep
    documents, questions = load_chroma_eval([Path(path).stem], Path(path).parents[1])
    grid = Grid.from_dict({
        "strategy": ["recursive", "token"], "size": [200, 400], "overlap": [0.0],
        "unit": ["tokens"], "params": dict(REPORT_RECURSIVE),
        "include": [{"strategy": "recursive", "params": {"size": 800, "unit": "chars"}}],
    })
    configs = grid.configs()[0]
    started = time.perf_counter()
    try:  # the whole wait, announced since issue 38
        from chunking.evaluation.waits import estimate_sweep_wait
        planned = estimate_sweep_wait(documents, questions, {model: configs})
        texts, announced = list(planned.texts[model]), planned.wait.seconds
        out["embedding_part"] = planned.wait.load_seconds + planned.wait.embed_seconds
    except ImportError:  # before: the progress bar's embedding estimate, the load unsaid
        texts = [q.text for q in questions]
        for config in configs:
            texts += embedded_chunk_texts(documents, config)
        announced = estimate_embedding_seconds(model, texts, disk_cache=False)
        out["embedding_part"] = announced
    out["chunking"] = time.perf_counter() - started
    out["texts"] = len(texts)
    started = time.perf_counter()
    embedder = get_embedder(model)
    embedder.embed(texts, disk_cache=False)
    out["embedded"] = time.perf_counter() - started
    sweep(documents, questions, configs, embedder, Settings(top_k=5))
else:
    files = sorted(Path(path).glob("*.md")) if Path(path).is_dir() else [Path(path)]
    chunks = []
    for file in files:  # a folder: its documents' chunks, as the Corpus page writes them
        chunks += chunking.chunk(read_path(file).text, "recursive", size=254, unit="model")
    chunks = chunks[:count]
    texts = [c.embedding_text for c in chunks]
    out["texts"] = len(texts)
    # what the page announces: the model's load and the embedding, then its own work
    announced = estimate_load_seconds(model) + estimate_embedding_seconds(
        model, texts, disk_cache=False
    )
    out["embedding_part"] = announced
    from chunking.embedding.models import estimate_map_seconds, estimate_write_seconds
    announced += estimate_map_seconds(len(texts)) if case == "map" else 0.0
    announced += estimate_write_seconds(len(texts)) if case == "write" else 0.0
    started = time.perf_counter()
    embedder = get_embedder(model)
    vectors = embedder.embed(texts, disk_cache=False)
    out["embedded"] = time.perf_counter() - started
    if case == "write":
        from chunking.config import Config
        from chunking.output.export import chunk_records
        from chunking.sinks import write_records
        records = [{**r, "doc_id": "d", "path": path} for r in chunk_records(chunks)]
        folder = tempfile.mkdtemp(prefix="bench-waits-")
        config = Config.create("recursive", size=254, unit="model")
        write_records(f"lancedb:{folder}/vectors", records, vectors, config=config, model=model)
    elif case == "map":
        from chunking.embedding.projection import project
        project(vectors)
out["announced"], out["then"] = announced, announced - out["embedding_part"]
out["actual"] = time.perf_counter() - started
out["load1_end"] = os.getloadavg()[0]
print(json.dumps(out))
"""

#: Issue 38's waits: (what, case, model, document, chunks).
WAITS = (
    ("LanceDB write (Explore)", "write", "minilm", CORPORA / "finance.md", 359),
    ("Corpus write", "write", "minilm-onnx-int8", CORPORA, 1243),
    ("fresh map", "map", "minilm", CORPORA / "pubmed.md", 400),
    ("own-document evaluation", "evaluate", "minilm-onnx-int8", CORPORA / "wikitexts.md", 0),
)


def busy_loops(count: int, place: str) -> list[subprocess.Popen[bytes]]:
    """``count`` busy loops: each in a session of its own (``apart``: other people's
    work, as Linux's autogroups see it), all in one session of their own (``together``:
    a test suite's workers), or in the benchmark's own session (``own``)."""
    if place == "together" and count:
        shell = " & ".join(f"{sys.executable} -c 'while True: pass'" for _ in range(count))
        return [subprocess.Popen(["sh", "-c", f"{shell}; wait"], start_new_session=True)]
    return [
        subprocess.Popen(
            [sys.executable, "-c", "while True: pass"], start_new_session=place == "apart"
        )
        for _ in range(count)
    ]


def stop(loops: list[subprocess.Popen[bytes]]) -> None:
    """End the busy loops (a shell's loops with it: its whole process group)."""
    import contextlib
    import signal

    for p in loops:
        with contextlib.suppress(ProcessLookupError):
            if isinstance(p.args, list) and p.args[0] == "sh":
                os.killpg(p.pid, signal.SIGKILL)
            else:
                p.kill()
        p.wait()


def measure_waits(
    env: dict[str, str],
    root: Path,
    busy: int,
    place: str,
    settle: float,
    only: list[str] | None = None,
) -> list[dict[str, object]]:
    """Each of issue 38's waits in a fresh process (the model loaded there, no text
    cached), with the code of ``root`` and ``busy`` busy loops running (started
    ``settle`` seconds before, for the load average to follow): announced, actual,
    actual over announced, the 1-minute load average at the start."""
    import time

    loops = busy_loops(busy, place)
    rows: list[dict[str, object]] = []
    try:
        time.sleep(settle if busy else 0.0)
        print(
            f"{'wait':<25}{'model':<18}{'texts':>6}{'announced':>10}{'actual':>8}"
            f"{'ratio':>7}{'load1':>7}{'slowdown':>9}"
        )
        for what, case, model, path, count in WAITS:
            if only and case not in only:
                continue
            done = subprocess.run(
                [sys.executable, "-c", WAITS_CHILD, case, model, str(path), str(count)],
                capture_output=True,
                text=True,
                env={**env, "PYTHONPATH": str(root)},
                cwd=root,
                check=False,
            )
            if done.returncode != 0:
                print(f"{what}: failed: {done.stderr[-800:]}", flush=True)
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            r.update(wait=what, model=model, busy=busy, place=place, root=str(root))
            rows.append(r)
            print(
                f"{what:<25}{model:<18}{r['texts']:>6}{r['announced']:9.1f}s{r['actual']:7.1f}s"
                f"{ratio(r['actual'], r['announced']):>7}{r['load1']:7.2f}{r['embed_factor']:9.2f}",
                flush=True,
            )
    finally:
        stop(loops)
    return rows


def texts_of(path: Path, kind: str, count: int) -> list[str]:
    """Sentence windows (as the Semantic page embeds) or window-sized chunks."""
    import chunking
    from chunking.documents.io import read_path
    from chunking.engine.spans import sentence_spans

    text = read_path(path).text
    if kind == "chunks":
        return [c.text for c in chunking.chunk(text, "recursive", size=254, unit="model")][:count]
    sentences = [text[a:b] for a, b in sentence_spans(text)]
    windows = [" ".join(sentences[max(0, i - 1) : i + 2]) for i in range(len(sentences))]
    return windows[:count]


def run_child(model: str, texts_file: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, model, str(texts_file)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{model}: the child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ratio(measured: float, estimated: float) -> str:
    return f"{measured / estimated:5.2f}" if estimated > 0 else "  n/a"


def fit(rows: list[dict[str, float]], model: str) -> str:
    """Idle priors from every run, each divided by the contention when it started: the
    median load, and seconds per word piece and per text (least squares)."""
    load = float(np.median([r["load"] / r["contention"] for r in rows]))
    a = np.array([[r["pieces"], r["texts"]] for r in rows], dtype=float)
    b = np.array([r["embed"] / r["embed_contention"] for r in rows], dtype=float)
    (per_piece, per_text), *_ = np.linalg.lstsq(a, b, rcond=None)
    fitted = a @ np.array([per_piece, per_text])
    spread = b / fitted
    return (
        f"{model}: load {load:.2f} s, seconds_per_piece {per_piece:.3g}, text_pieces "
        f"{per_text / per_piece:.0f} (runs from {spread.min():.2f} to {spread.max():.2f} "
        f"of the fit; {len(rows)} runs)"
    )


def time_builds(models: list[str], env: dict[str, str]) -> None:
    """Build the derived models into a temporary cache: estimate against measured."""
    code = (
        "import json, sys, time\n"
        "from chunking.embedding.timing import contention\n"
        "from chunking.embedding.registry import named_model, resolve_name\n"
        "from chunking.embedding.models import estimate_load_seconds, get_embedder\n"
        "m = sys.argv[1]; est = estimate_load_seconds(m); c = contention()\n"
        "t = time.perf_counter(); get_embedder(m)\n"
        "print(json.dumps({'estimate': est, 'seconds': time.perf_counter() - t, 'c': c}))\n"
    )
    with tempfile.TemporaryDirectory(prefix="bench-builds-") as cache:
        build_env = {**env, "XDG_CACHE_HOME": cache}
        for model in models:
            if model == "minilm":
                continue
            done = subprocess.run(
                [sys.executable, "-c", code, model],
                capture_output=True,
                text=True,
                env=build_env,
                cwd=ROOT,
                check=False,
            )
            if done.returncode != 0:
                print(f"{model}: build failed: {done.stderr[-500:]}")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"build {model:<18} estimate {r['estimate']:7.1f} s  measured "
                f"{r['seconds']:7.1f} s  ratio {ratio(r['seconds'], r['estimate'])}  "
                f"contention {r['c']:.1f}  (idle {r['seconds'] / r['c']:.1f} s)"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--fit", action="store_true", help="print idle priors")
    parser.add_argument("--build", action="store_true", help="time the derived builds too")
    parser.add_argument(
        "--contention",
        nargs="+",
        type=int,
        metavar="LOOPS",
        help="only measure the slowdown of an embedding with this many busy loops running",
    )
    parser.add_argument("--waits", action="store_true", help="only issue 38's four waits")
    parser.add_argument("--busy", type=int, default=0, help="busy loops during --waits")
    parser.add_argument(
        "--place",
        choices=("apart", "together", "own"),
        default="apart",
        help="--busy loops each in a session of its own, all in one, or in the bench's",
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout whose code --waits times"
    )
    parser.add_argument(
        "--only", nargs="+", choices=("write", "map", "evaluate"), help="--waits: these only"
    )
    parser.add_argument("--out", type=Path, help="--waits: also write the rows as JSON here")
    parser.add_argument("--settle", type=float, default=60.0, help="seconds before each run")
    parser.add_argument("--texts", type=int, default=160, help="texts embedded (--contention)")
    parser.add_argument(
        "--same-group", action="store_true", help="busy loops in the job's own session"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-estimates-") as work:
        folder = Path(work)
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "CHUNK_EXPLORER_TIMINGS": str(folder / "t.json"),
        }
        files: list[tuple[str, Path, int]] = []
        for name, path, kind, count in TEXT_SETS:
            texts = texts_of(path, kind, count)
            file = folder / f"{len(files)}.json"
            file.write_text(json.dumps(texts), encoding="utf-8")
            files.append((name, file, len(texts)))
            if args.contention:
                break
        if args.waits:
            timed = measure_waits(env, args.root, args.busy, args.place, args.settle, args.only)
            if args.out:
                args.out.write_text(json.dumps(timed, indent=1), encoding="utf-8")
            return 0
        if args.contention:
            texts = texts_of(TEXT_SETS[1][1], "chunks", args.texts)
            file = folder / "contention.json"
            file.write_text(json.dumps(texts), encoding="utf-8")
            for model in args.models:
                print(f"{model}: {len(texts)} finance chunks")
                measure_contention(model, file, args.contention, args.settle, env, args.same_group)
            return 0
        if args.build:
            time_builds(args.models, env)
        print(
            f"{'round':<6}{'model':<18}{'step':<34}{'estimate':>9}{'measured':>10}"
            f"{'ratio':>7}{'load':>6}"
        )
        runs: dict[str, list[dict[str, float]]] = {m: [] for m in args.models}
        ratios: list[float] = []
        for round_ in range(1, args.rounds + 1):
            for model in args.models:
                for name, file, count in files[2 * ((round_ - 1) % 2) :][:2]:
                    r = run_child(model, file, env)
                    runs[model].append(r)
                    for step, est, got, load in (
                        ("load", r["load_estimate"], r["load"], r["contention"]),
                        (
                            f"embed {count} {name}",
                            r["embed_estimate"],
                            r["embed"],
                            r["embed_contention"],
                        ),
                    ):
                        if round_ > 1 and got >= 1:
                            ratios.append(got / est if est else float("inf"))
                        print(
                            f"{round_:<6}{model:<18}{step:<34}{est:8.1f}s{got:9.1f}s"
                            f"{ratio(got, est):>7}{load:6.1f}"
                        )
        if ratios:
            inside = sum(1 / 1.5 <= x <= 1.5 for x in ratios)
            print(
                f"\ncalibrated rounds, waits of 1 s or more: {inside}/{len(ratios)} within 1.5x; "
                f"measured/estimate from {min(ratios):.2f} to {max(ratios):.2f}"
            )
        if args.fit:
            print()
            for model, rows in runs.items():
                print(fit(rows, model))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
