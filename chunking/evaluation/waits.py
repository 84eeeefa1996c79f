"""How long an evaluation sweep takes, said before it starts: the whole wait of the
Evaluate page's "Run evaluation", not only its embedding.

A sweep over a grid of configurations, for each model, cuts the documents with every
configuration, loads the model, embeds the questions and every chunk, then evaluates
each configuration: it cuts the documents again, counts every chunk's word pieces and
tokens, retrieves and scores every question (:func:`.sweep.sweep`). Announcing the
embedding alone said 90 s for a sweep of 140 s.

:func:`estimate_sweep_wait` cuts the documents once (the texts to embed are what the
estimate counts, and what the page embeds next), times that cut, and adds up: each
model's load and embedding (:func:`chunking.embedding.models.estimate_wait`), the
sweep's second cut (as long as the first, measured at the machine's load now), and
its counting and scoring (idle seconds per character of chunk text and per question
and configuration, measured with ``bench/bench_estimates.py --waits``, scaled by the
machine's load as work on one thread).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..config import Config
from ..embedding import timing
from ..embedding.models import Wait, estimate_wait
from .core import embedded_chunk_texts
from .questions import Question
from .techniques import DENSE, Technique

#: Idle seconds of the evaluation after the embedding, per character of chunk text:
#: counting every chunk's word pieces and tokens, locating its span (measured on
#: chroma-eval's corpora: 0.16 s for 250,000 characters and 380 questions times
#: configurations, 0.9 s for 2.5 million and 495).
SCORE_SECONDS_PER_CHAR = 4e-7
#: Idle seconds per question and configuration: retrieval, the metrics, the lens.
SCORE_SECONDS_PER_QUESTION = 2.5e-4
#: Idle seconds of the first evaluation in a process: importing scipy and pandas.
SCORE_IMPORT_SECONDS = 1.0
#: The calibration records' name for the scoring (:func:`chunking.embedding.timing.estimate`).
SCORING = "sweep:scoring"


@dataclass(frozen=True)
class SweepWait:
    """A sweep's texts to embed, per model (the questions first, then every chunk of
    every configuration), and its whole wait from now on."""

    texts: Mapping[str, tuple[str, ...]]
    wait: Wait
    #: Seconds the estimate spent cutting the documents (spent already, not in ``wait``).
    chunking_seconds: float


def estimate_sweep_wait(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    configs: Mapping[str, Sequence[Config]],
    technique: Technique = DENSE,
) -> SweepWait:
    """The wait of a sweep of ``configs`` (each model's configurations, in the order
    of the sweep) on ``questions``: the models' loads and embeddings of what is not
    cached yet, then the evaluation's second cut, counting and scoring."""
    ids = list(dict.fromkeys(q.corpus_id for q in questions))
    texts: dict[str, tuple[str, ...]] = {}
    waits: list[Wait] = []
    chars = units = 0
    started = time.perf_counter()
    for model, model_configs in configs.items():
        found = [q.text for q in questions]
        for config in model_configs:
            found += embedded_chunk_texts(documents, config, technique, ids)
        texts[model] = tuple(found)
        chars += sum(len(t) for t in found)
        units += len(questions) * len(model_configs)
        waits.append(estimate_wait(model, found, f"{len(found):,} chunks and questions"))
    chunking = time.perf_counter() - started
    idle = SCORE_SECONDS_PER_CHAR * chars + SCORE_SECONDS_PER_QUESTION * units
    if "scipy" not in sys.modules:
        idle += SCORE_IMPORT_SECONDS
    scoring = chunking + timing.estimate(SCORING, "score", idle, timing.contention(threads=1))
    whole = Wait(
        " and ".join(w.model for w in waits),
        sum(w.load_seconds for w in waits),
        sum(w.embed_seconds for w in waits),
        " and ".join(w.what for w in waits),
        unknown=any(w.unknown for w in waits),
    )
    return SweepWait(texts, replace(whole, then="scoring", then_seconds=scoring), chunking)
