"""The search loop on a small document with the real (fast) minilm-static model:
duplicates collapse, nothing is embedded twice, the same seed gives the same result."""

from __future__ import annotations

import json

import pytest

from chunking.embedding.cache import clear_cache
from chunking.embedding.models import get_embedder
from chunking.evaluation.core import chunk_documents
from chunking.evaluation.questions import Question, Reference
from chunking.tuning.search import TuneOptions, default_baseline, plan, tune
from chunking.tuning.space import Space

MODEL = "minilm-static"
FACTS = [
    "Cats purr when they are content and sleep for most of the day.",
    "Fish swim in clean water and need a filter in their tank.",
    "Parrots can learn words and live for several decades.",
    "Dogs need a walk every day and enjoy playing fetch outside.",
    "Rabbits eat hay, fresh greens and a few pellets each day.",
    "Hamsters run on wheels at night and store food in their cheeks.",
    "Turtles bask under a lamp to keep their shells healthy.",
    "Horses graze for many hours and need their hooves trimmed.",
]
QUESTIONS = [
    "Why do cats purr?",
    "What do fish need in their tank?",
    "How long do parrots live?",
    "What do dogs enjoy?",
    "What do rabbits eat?",
    "When do hamsters run?",
    "Why do turtles bask?",
    "How long do horses graze?",
]


@pytest.fixture(scope="module")
def corpus() -> tuple[dict[str, str], list[Question]]:
    documents = {}
    questions: list[Question] = []
    for name in ("pets", "farm"):
        text = "\n\n".join(FACTS if name == "pets" else list(reversed(FACTS)))
        documents[name] = text
        for fact, asked in zip(FACTS, QUESTIONS, strict=True):
            start = text.index(fact)
            ref = Reference(start, start + len(fact), fact)
            questions.append(Question(len(questions), asked, name, (ref,)))
    return documents, questions


def _comparable(data: dict) -> dict:
    """The JSON without timings."""
    data = json.loads(json.dumps(data))
    data.pop("seconds")
    data.pop("estimate_seconds")
    for trial in data["trials"]:
        trial["costs"].pop("seconds")
    return data


def test_configurations_with_identical_chunks_are_evaluated_once(corpus) -> None:
    documents, questions = corpus
    # Both large sizes hold each whole document in one chunk: identical offsets.
    space = Space.from_dict({"size": [3000, 5000, 120], "overlap": [0, 200], "unit": ["chars"]})
    options = TuneOptions(sampler="grid", holdout=0.25, seed=1)
    the_plan = plan(documents, questions, space, options)
    assert (the_plan.on_paper, len(the_plan.invalid), the_plan.distinct) == (6, 1, 2)
    assert "2 to run" in the_plan.describe() and "6 on paper" in the_plan.describe()
    result = tune(documents, questions, space, get_embedder(MODEL), options)
    by_label = {t.label: t for t in result.trials}
    big = by_label["recursive · 3000 chars"]
    assert big.duplicate_of is None and big.evaluation is not None
    for label in (
        "recursive · 5000 chars",
        "recursive · 3000 chars · overlap 200",
        "recursive · 5000 chars · overlap 200",
    ):
        twin = by_label[label]
        assert twin.duplicate_of == big.label and twin.evaluation is None
        assert twin.interval == big.interval and not twin.on_front
    assert sum(t.evaluation is not None for t in result.trials) == 2  # 3000 and 120
    data = result.to_dict()
    assert data["invalid"] == 1 and data["duplicates"] == 3


def test_no_text_is_embedded_twice_across_trials(corpus, tmp_path, monkeypatch) -> None:
    documents, questions = corpus
    space = Space.from_dict({"size": [80, 120, 160, 400], "overlap": [0], "unit": ["chars"]})
    embedder = get_embedder(MODEL)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # an empty disk cache
    clear_cache()  # and an empty memory cache
    before = embedder.encoded
    result = tune(documents, questions, space, embedder, TuneOptions(sampler="grid"))
    texts = {q.text for q in questions}
    evaluations = [t.evaluation for t in result.trials if t.evaluation is not None]
    for evaluation in evaluations:
        texts |= {c.text for cs in evaluation.chunks.values() for c in cs}
    baseline = chunk_documents(documents, default_baseline(), list(documents))
    texts |= {c.text for cs in baseline.values() for c in cs}  # not in the space: run too
    assert embedder.encoded - before == len(texts)
    assert result.texts_requested > result.texts_embedded  # the finalists came from the cache


def test_the_same_seed_gives_the_same_result(corpus) -> None:
    documents, questions = corpus
    space = Space.from_dict(
        {
            "strategy": ["recursive", "sentence"],
            "size": [60, 90, 120, 200],
            "overlap": [0, 20],
            "unit": ["chars"],
            "top_k": [1, 2],
        }
    )
    embedder = get_embedder(MODEL)
    options = TuneOptions(sampler="tpe", trials=5, seed=11, objective="mrr")
    first = tune(documents, questions, space, embedder, options)
    second = tune(documents, questions, space, embedder, options)
    assert _comparable(first.to_dict()) == _comparable(second.to_dict())
    assert sum(t.duplicate_of is None for t in first.trials) == 5
    other = tune(documents, questions, space, embedder, TuneOptions("random", 5, 12, "mrr"))
    assert [t.label for t in other.trials] != [t.label for t in first.trials]


def test_the_winner_is_checked_on_held_out_questions(corpus) -> None:
    documents, questions = corpus
    space = Space.from_dict({"size": [60, 400], "unit": ["chars"]})
    result = tune(documents, questions, space, get_embedder(MODEL), TuneOptions("grid"))
    data = result.to_dict()
    assert data["questions"] == {"tuning": 12, "held_out": 4}
    for key in ("winner", "runner_up", "baseline"):
        held = data[key]["held_out"]
        assert set(held) == {"quality", "ci_low", "ci_high"}
        assert held["ci_low"] <= held["quality"] <= held["ci_high"]
    frame = result.per_question()
    assert set(frame["split"]) == {"tuning", "held_out"}
    tuning_ids = set(frame.loc[frame["split"] == "tuning", "question_id"])
    held_ids = set(frame.loc[frame["split"] == "held_out", "question_id"])
    assert not tuning_ids & held_ids and len(held_ids) == 4
