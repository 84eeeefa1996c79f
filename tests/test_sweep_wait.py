"""The whole wait of an evaluation sweep, announced before it starts
(:mod:`chunking.evaluation.waits`): the models' loads and embeddings, then the
evaluation's own cut, counting and scoring.

No test asserts how long anything takes: the machine's load is fixed and the
records file is the test's own, so that estimates are compared with each other.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from chunking import Config
from chunking.embedding import timing
from chunking.embedding.models import estimate_embedding_seconds, estimate_load_seconds
from chunking.evaluation import Question, Reference
from chunking.evaluation.core import embedded_chunk_texts
from chunking.evaluation.waits import SCORING, SweepWait, estimate_sweep_wait

RUN = uuid.uuid4().hex  # texts no earlier run can have embedded
DOC = " ".join(f"Sentence {i} of run {RUN} says something about topic {i % 7}." for i in range(400))
DOCUMENTS = {"doc": DOC}
PHRASE = "Sentence 120 of run"
QUESTIONS = [
    Question(
        0,
        "What does sentence 120 say?",
        "doc",
        (Reference(DOC.index(PHRASE), DOC.index(PHRASE) + len(PHRASE), PHRASE),),
    ),
    Question(1, "Which topic comes last?", "doc", (Reference(0, 10, DOC[:10]),)),
]
CONFIGS = [Config.create("recursive", size=size, unit="chars") for size in (300, 600)]


@pytest.fixture(autouse=True)
def quiet_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(timing.TIMINGS_ENV, str(tmp_path / "timings.json"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(timing, "contention", lambda threads=0: 1.0)


def test_the_texts_are_the_questions_then_every_configurations_chunks() -> None:
    planned = estimate_sweep_wait(DOCUMENTS, QUESTIONS, {"hash": CONFIGS})
    expected = [q.text for q in QUESTIONS]
    for config in CONFIGS:
        expected += embedded_chunk_texts(DOCUMENTS, config)
    assert list(planned.texts["hash"]) == expected
    assert planned.chunking_seconds > 0


def test_the_wait_is_the_load_the_embedding_and_the_scoring_after_it() -> None:
    model = "minilm-onnx-int8"
    planned = estimate_sweep_wait(DOCUMENTS, QUESTIONS, {model: CONFIGS})
    texts = list(planned.texts[model])
    wait = planned.wait
    # what the page announced before issue 38: the progress bar's embedding alone
    before = estimate_embedding_seconds(model, texts)
    assert wait.embed_seconds == pytest.approx(before)
    assert wait.load_seconds == pytest.approx(estimate_load_seconds(model))
    assert wait.then == "scoring" and wait.then_seconds >= planned.chunking_seconds > 0
    assert wait.seconds == pytest.approx(wait.load_seconds + before + wait.then_seconds)
    assert wait.seconds > before
    assert wait.describe().startswith("about") or wait.describe() == "under a second"


def test_the_scoring_grows_with_the_chunks_and_questions_and_follows_its_records() -> None:
    def scoring(planned: SweepWait) -> float:  # the part after the sweep's second cut
        return planned.wait.then_seconds - planned.chunking_seconds

    small = estimate_sweep_wait(DOCUMENTS, QUESTIONS, {"hash": CONFIGS[:1]})
    large = estimate_sweep_wait(DOCUMENTS, QUESTIONS * 50, {"hash": CONFIGS})
    assert small.wait.embed_seconds == large.wait.embed_seconds == 0.0  # the fake model
    assert 0 < scoring(small) < scoring(large)
    timing.record(SCORING, "score", 10.0, 30.0, load=1.0)  # measured three times longer
    again = estimate_sweep_wait(DOCUMENTS, QUESTIONS * 50, {"hash": CONFIGS})
    assert scoring(again) == pytest.approx(3 * scoring(large))


def test_several_models_make_one_wait_with_each_ones_texts() -> None:
    both = {"hash": CONFIGS, "minilm-static": CONFIGS[:1]}
    planned = estimate_sweep_wait(DOCUMENTS, QUESTIONS, both)
    assert set(planned.texts) == set(both)
    assert len(planned.texts["minilm-static"]) < len(planned.texts["hash"])
    alone = estimate_sweep_wait(DOCUMENTS, QUESTIONS, {"minilm-static": CONFIGS[:1]}).wait
    assert planned.wait.embed_seconds == pytest.approx(alone.embed_seconds)
    assert planned.wait.model == "hash and minilm-static"
