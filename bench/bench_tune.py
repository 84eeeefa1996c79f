"""Measure the search of ``chunk-explorer tune`` on one chroma-eval corpus.

    .venv/bin/python -m bench.bench_tune                          # state_of_the_union
    .venv/bin/python -m bench.bench_tune --corpus chatlogs --seeds 10

What is measured (wall-clock, one process, the model loaded first and timed apart):

- ``grid``: the 24-point grid (recursive and token × 100, 200, 300, 400 tokens × overlap
  0, 25, 50) with the default 30 % held out, first with nothing in the embedding cache,
  then again with every vector cached (target: under a minute);
- ``tpe``: for each of 10 seeds, Optuna's TPE with a third of the grid's trials (8), on
  every question (``--holdout 0``, so that the TPE and grid winners are scored on the
  same questions); a run *finds the winner* when its winner is the grid's winner or not
  distinguishable from it (paired bootstrap interval containing 0 or permutation
  p ≥ 0.05, as ``tune`` decides). Target: 8 of 10 or more.

This is a benchmark, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chunking.embedding.cache import clear_cache
from chunking.embedding.models import get_embedder
from chunking.evaluation import load_chroma_eval
from chunking.evaluation.stats import paired_difference
from chunking.tuning.search import TuneOptions, tune
from chunking.tuning.space import Space

SPACE = {
    "strategy": ["recursive", "token"],
    "size": [100, 200, 300, 400],
    "overlap": [0, 25, 50],
    "unit": ["tokens"],
}
TARGET_GRID_SECONDS = 60.0
TARGET_FOUND = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="state_of_the_union")
    parser.add_argument("--model", default="minilm-static")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()

    documents, questions = load_chroma_eval([args.corpus])
    space = Space.from_dict(SPACE)
    began = time.perf_counter()
    embedder = get_embedder(args.model)
    print(
        f"corpus {args.corpus}: {len(questions)} questions; model {args.model} "
        f"loaded in {time.perf_counter() - began:.1f} s"
    )

    # an empty embedding cache, in memory and on disk (the model is loaded already)
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="bench-tune-")
    clear_cache()
    for state in ("nothing cached", "every vector cached"):
        began = time.perf_counter()
        grid = tune(documents, questions, space, embedder, TuneOptions("grid", seed=0))
        seconds = time.perf_counter() - began
        verdict = "under" if seconds < TARGET_GRID_SECONDS else "OVER"
        print(
            f"grid, {len(grid.trials)} points, 30 % held out, {state}: {seconds:.1f} s "
            f"({verdict} the {TARGET_GRID_SECONDS:.0f} s target); winner {grid.winner.label}"
        )

    full = TuneOptions("grid", seed=0, holdout=0)
    began = time.perf_counter()
    reference = tune(documents, questions, space, embedder, full)
    print(
        f"grid on all {len(questions)} questions: {time.perf_counter() - began:.1f} s; "
        f"winner {reference.winner.label} ({reference.winner.tuning.mean:.3f})"
    )
    scores = {t.label: t.scores for t in reference.trials}
    best = reference.trial(reference.winner.label).scores
    budget = len(reference.trials) // 3
    found = 0
    for seed in range(args.seeds):
        began = time.perf_counter()
        run = tune(
            documents, questions, space, embedder, TuneOptions("tpe", budget, seed, holdout=0)
        )
        seconds = time.perf_counter() - began
        label = run.winner.label
        same = label == reference.winner.label
        diff = paired_difference(best, scores[label], seed=seed)
        ok = same or not diff.distinguishable
        found += ok
        print(
            f"tpe seed {seed}: {budget} trials, {seconds:.1f} s; winner {label} "
            f"({run.winner.tuning.mean:.3f}); grid winner minus it {100 * diff.mean:+.1f} "
            f"points [{100 * diff.low:+.1f}, {100 * diff.high:+.1f}], p = {diff.p_value:.3f}: "
            + ("the grid's winner" if same else "not distinguishable" if ok else "WORSE")
        )
    verdict = "meets" if found >= TARGET_FOUND else "MISSES"
    print(
        f"TPE with {budget} of {len(reference.trials)} trials found a winner not "
        f"distinguishable from the grid's in {found} of {args.seeds} seeds "
        f"({verdict} the target of {TARGET_FOUND} of 10)"
    )


if __name__ == "__main__":
    main()
