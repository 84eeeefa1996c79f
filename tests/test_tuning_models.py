"""The embedding model as an axis of the search: each point carries its model, each
model is loaded once and embeds each text once, two models on the same chunks are two
trials, labels and JSON name the model.

The search mechanics use two hash embedders (memory-only caches, so the counts of
encoded texts are exact); the CLI test runs two real bundled models."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from chunking.cli import main
from chunking.embedding.base import HashEmbedder
from chunking.embedding.cache import clear_cache
from chunking.evaluation.questions import Question, Reference
from chunking.tuning.search import TuneOptions, plan, tune
from chunking.tuning.space import Space
from tests.test_tuning_search import FACTS as ALL_FACTS
from tests.test_tuning_search import QUESTIONS as ALL_QUESTIONS

FACTS, QUESTIONS = ALL_FACTS[:6], ALL_QUESTIONS[:6]

#: Two sizes far above the document's length: the same single chunk (a duplicate).
SPACE = {"strategy": ["recursive"], "size": [2000, 3000, 10, 20], "unit": ["words"]}
MODELS = ("hash-a", "hash-b")


class CountingHash(HashEmbedder):
    """A hash embedder that records every text it encodes (not those from its cache)."""

    def __init__(self, name: str, dimension: int) -> None:
        super().__init__(dimension)
        self.name = name
        self.texts: Counter[str] = Counter()

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.texts.update(texts)
        return super()._encode(texts)


def _corpus() -> tuple[dict[str, str], list[Question]]:
    text = "\n\n".join(FACTS)
    questions = []
    for fact, asked in zip(FACTS, QUESTIONS, strict=True):
        start = text.index(fact)
        questions.append(
            Question(len(questions), asked, "pets", (Reference(start, start + len(fact), fact),))
        )
    return {"pets": text}, questions


def _search(models: tuple[str, ...] = MODELS, seed: int = 0):
    loaded: dict[str, CountingHash] = {}
    loads: Counter[str] = Counter()

    def load(name: str) -> CountingHash:
        loads[name] += 1
        loaded[name] = CountingHash(name, 32 if name.endswith("a") else 48)
        return loaded[name]

    clear_cache()  # vectors are kept per model name in this process: start empty
    documents, questions = _corpus()
    space = Space.from_dict({**SPACE, "model": list(models)})
    options = TuneOptions(sampler="grid", seed=seed, holdout=0.3)
    result = tune(documents, questions, space, None, options, load_model=load)
    return result, loaded, loads


#: What differs between two runs of the same search: wall times.
TIMINGS = {"seconds", "estimate_seconds"}


def _comparable(value):
    """``value`` without its timings, at any depth."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def test_both_models_are_trials_and_duplicates_stay_within_a_model() -> None:
    result, _, loads = _search()
    assert set(loads) == set(MODELS) and set(loads.values()) == {1}  # loaded once each
    models = Counter(t.point.model for t in result.trials)
    assert models == {"hash-a": 4, "hash-b": 4}
    for t in result.trials:
        assert t.label.endswith(f" · {t.point.model}")
        if t.duplicate_of is not None:  # the same chunks, the same model only
            original = result.trial(t.duplicate_of)
            assert original.point.model == t.point.model
    duplicates = [t for t in result.trials if t.duplicate_of is not None]
    assert len(duplicates) == 2  # 3000 repeats 2000 for each model, never across models
    assert result.plan.distinct == 6


def test_each_model_embeds_each_text_once() -> None:
    result, loaded, _ = _search()
    for name, embedder in loaded.items():
        assert embedder.texts, name
        assert max(embedder.texts.values()) == 1, name  # no text twice for one model
        assert embedder.encoded == sum(embedder.texts.values())
    # both models embedded the questions of the tuning split (each on its own)
    asked = {q.text for q in result.tuning}
    assert asked <= set(loaded["hash-a"].texts) and asked <= set(loaded["hash-b"].texts)


def test_json_records_the_model_and_the_same_seed_gives_the_same_json() -> None:
    first, _, _ = _search(seed=3)
    data = first.to_dict()
    for trial in data["trials"]:
        assert trial["config"]["model"] in MODELS
        assert trial["label"].endswith(trial["config"]["model"])
    assert data["winner"]["config"]["model"] in MODELS
    assert data["baseline"]["config"]["model"] == MODELS[0]
    assert "model" in first.trials_frame().columns
    second, _, _ = _search(seed=3)
    assert _comparable(second.to_dict()) == _comparable(data)


def test_one_model_on_the_axis_is_not_in_the_label() -> None:
    result, loaded, _ = _search(models=("hash-a",))
    assert set(loaded) == {"hash-a"}
    assert all(not t.label.endswith("hash-a") for t in result.trials)
    assert all(t.to_dict("chunks")["config"]["model"] == "hash-a" for t in result.trials)


def test_the_dry_run_estimates_each_model() -> None:
    documents, questions = _corpus()
    one = Space.from_dict({**SPACE, "model": ["minilm-static"]})
    two = Space.from_dict({**SPACE, "model": ["minilm-static", "minilm-onnx-int8"]})
    options = TuneOptions(sampler="grid")
    single = plan(documents, questions, one, options)
    double = plan(documents, questions, two, options)
    assert double.on_paper == 2 * single.on_paper and double.to_run == 2 * single.to_run
    assert single.estimate_seconds > 0
    assert double.estimate_seconds > single.estimate_seconds


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["tune", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


CLI_BASE = ["--corpus-id", "chatlogs", "--size", "200", "400", "--unit", "tokens"]


def test_cli_searches_two_real_models(capsys, chroma_dir: Path) -> None:
    argv = ["--dataset", str(chroma_dir), *CLI_BASE, "--sampler", "grid", "--format", "json"]
    argv += ["--model", "minilm-static", "minilm-onnx-int8"]
    code, out, _ = _cli(capsys, *argv)
    assert code == 0
    data = json.loads(out)
    assert data["on_paper"] == 4 and data["to_run"] == 4
    labels = [t["label"] for t in data["trials"]]
    assert "recursive · 200 tokens · minilm-static" in labels
    assert "recursive · 200 tokens · minilm-onnx-int8" in labels
    assert {t["config"]["model"] for t in data["trials"]} == {"minilm-static", "minilm-onnx-int8"}
    assert all(t["duplicate_of"] is None for t in data["trials"])
    code, again, _ = _cli(capsys, *argv)
    assert _comparable(json.loads(again)) == _comparable(data)


def test_cli_dry_run_counts_each_model(capsys, chroma_dir: Path) -> None:
    base = ["--dataset", str(chroma_dir), *CLI_BASE, "--dry-run", "--format", "json"]
    _, one, _ = _cli(capsys, *base, "--model", "minilm-static")
    _, two, _ = _cli(capsys, *base, "--model", "minilm-static", "minilm-onnx-int8")
    single, double = json.loads(one), json.loads(two)
    assert double["on_paper"] == 2 * single["on_paper"]
    assert double["to_run"] == 2 * single["to_run"]
    # texts a model has cached on disk cost nothing: at least the single model's wait
    assert double["estimate_seconds"] >= single["estimate_seconds"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--unit", "model", "--model", "minilm-static", "minilm"], "several models"),
        (["--unit", "model", "tokens", "--model", "minilm-static", "hash"], "several models"),
    ],
)
def test_cli_bad_model_input_is_one_line(capsys, chroma_dir: Path, extra, message) -> None:
    argv = ["--dataset", str(chroma_dir), "--corpus-id", "chatlogs", "--dry-run", *extra]
    code, _, err = _cli(capsys, *argv)
    assert code == 2
    assert err.startswith("chunk-explorer: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_space_file_model_axis_and_model_flag_conflict(capsys, chroma_dir, tmp_path) -> None:
    space = tmp_path / "space.json"
    space.write_text(json.dumps({**SPACE, "model": ["minilm-static", "hash"]}), encoding="utf-8")
    base = ["--dataset", str(chroma_dir), "--corpus-id", "chatlogs", "--space", str(space)]
    code, out, _ = _cli(capsys, *base, "--dry-run", "--format", "json")
    assert code == 0 and json.loads(out)["on_paper"] == 8
    code, _, err = _cli(capsys, *base, "--dry-run", "--model", "minilm-static")
    assert code == 2 and "not both" in err
    space.write_text(json.dumps({"unit": ["model"], "model": ["minilm", "hash"]}), "utf-8")
    code, _, err = _cli(capsys, *base, "--dry-run")
    assert code == 2 and "several models" in err
