"""Announced waits against what happens: model loads (and builds) and first embeddings.

    .venv/bin/python -m bench.bench_estimates              # priors, then calibrated
    .venv/bin/python -m bench.bench_estimates --fit        # also print idle priors
    .venv/bin/python -m bench.bench_estimates --build      # also time the derived builds
    .venv/bin/python -m bench.bench_estimates --models minilm-onnx-int8 --rounds 3

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
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-estimates-") as work:
        folder = Path(work)
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "CHUNK_EXPLORER_TIMINGS": str(folder / "t.json"),
        }
        files = []
        for name, path, kind, count in TEXT_SETS:
            texts = texts_of(path, kind, count)
            file = folder / f"{len(files)}.json"
            file.write_text(json.dumps(texts), encoding="utf-8")
            files.append((name, file, len(texts)))
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
