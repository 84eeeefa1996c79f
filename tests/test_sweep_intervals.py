"""The sweep table's 95 % intervals: recall and precision Ω per configuration, from the
per-question scores with the tuning statistics (scipy's bootstrap), in the table, its
readable labels and ``chunk-explorer evaluate --format json``; with the real (fast)
minilm-static model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chunking import Config
from chunking.cli.evaluate import evaluate_main
from chunking.embedding.models import get_embedder
from chunking.evaluation import evaluate
from chunking.evaluation.questions import Question, Reference
from chunking.evaluation.stats import mean_interval
from chunking.evaluation.sweep import (
    COLUMN_LABELS,
    INTERVAL_METRICS,
    SHARE_COLUMNS,
    TABLE_COLUMNS,
    labelled_table,
    metric_intervals,
    results_table,
    sweep,
)

MODEL = "minilm-static"
FACTS = [
    "Cats purr when they are content and sleep for most of the day.",
    "Fish swim in clean water and need a filter in their tank.",
    "Parrots can learn words and live for several decades.",
    "Dogs need a walk every day and enjoy playing fetch outside.",
    "Rabbits eat hay, fresh greens and a few pellets each day.",
    "Hamsters run on wheels at night and store food in their cheeks.",
]
QUESTIONS = [
    "Why do cats purr?",
    "What do fish need in their tank?",
    "How long do parrots live?",
    "What do dogs enjoy?",
    "What do rabbits eat?",
    "When do hamsters run?",
]
TEXT = "\n\n".join(FACTS)


def _questions() -> list[Question]:
    out = []
    for number, (fact, asked) in enumerate(zip(FACTS, QUESTIONS, strict=True)):
        start = TEXT.index(fact)
        out.append(Question(number, asked, "pets", (Reference(start, start + len(fact), fact),)))
    return out


@pytest.fixture(scope="module")
def evaluations():
    embedder = get_embedder(MODEL)
    configs = [Config.create("token", size=s, overlap=0) for s in (8, 30)]
    return [evaluate({"pets": TEXT}, _questions(), c, embedder) for c in configs]


def test_the_table_holds_each_metrics_interval_as_the_tuning_statistics_compute_it(evaluations):
    table = results_table(evaluations)
    for metric in INTERVAL_METRICS:
        assert {f"{metric}_ci_low", f"{metric}_ci_high"} <= set(table.columns)
    for row, evaluation in zip(table.to_dict("records"), evaluations, strict=True):
        for metric in INTERVAL_METRICS:
            expected = mean_interval(evaluation.scores[metric], 0)
            assert row[f"{metric}_ci_low"] == pytest.approx(expected.low)
            assert row[f"{metric}_ci_high"] == pytest.approx(expected.high)
            assert row[f"{metric}_ci_low"] <= row[f"{metric}_mean"] <= row[f"{metric}_ci_high"]
    # small chunks miss parts of the facts: recall varies over the questions, and the
    # interval has width
    small = table.iloc[0]
    assert small["recall_ci_low"] < small["recall_ci_high"]


def test_the_interval_is_scipys_percentile_bootstrap_and_the_same_every_time(evaluations):
    from scipy.stats import bootstrap

    scores = np.asarray(evaluations[0].scores["recall"], dtype=np.float64)
    assert np.ptp(scores) > 0
    ours = metric_intervals(evaluations[0], ("recall",))
    theirs = bootstrap(
        (scores,),
        np.mean,
        n_resamples=2000,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    assert ours["recall_ci_low"] == pytest.approx(theirs.low)
    assert ours["recall_ci_high"] == pytest.approx(theirs.high)
    assert metric_intervals(evaluations[0], ("recall",)) == ours  # seeded


def test_without_retrieval_the_retrieval_interval_is_empty_and_precision_omega_has_one():
    evaluation = evaluate({"pets": TEXT}, _questions(), Config.create("token", size=8), None)
    row = results_table([evaluation]).iloc[0]
    assert math.isnan(row["recall_ci_low"]) and math.isnan(row["recall_ci_high"])
    assert row["precision_omega_ci_low"] <= row["precision_omega_mean"]
    assert row["precision_omega_mean"] <= row["precision_omega_ci_high"]
    shown = labelled_table(results_table([evaluation]))
    assert "Recall 95 % low" not in shown.columns  # an empty column is not shown
    assert "Precision Ω 95 % low" in shown.columns


def test_the_columns_have_readable_labels_and_show_as_percentages():
    for metric in INTERVAL_METRICS:
        for side in ("low", "high"):
            column = f"{metric}_ci_{side}"
            assert column in TABLE_COLUMNS and column in SHARE_COLUMNS
            assert COLUMN_LABELS[column].endswith(f"95 % {side}")
    assert COLUMN_LABELS["recall_ci_low"] == "Recall 95 % low"


def test_sweep_rows_carry_the_intervals(evaluations):
    result = sweep(
        {"pets": TEXT},
        _questions(),
        [Config.create("token", size=8, overlap=0)],
        get_embedder(MODEL),
    )
    row = result.table.iloc[0]
    first = results_table(evaluations[:1]).iloc[0]
    assert row["recall_ci_low"] == pytest.approx(first["recall_ci_low"])
    assert row["recall_ci_high"] == pytest.approx(first["recall_ci_high"])


def test_evaluate_json_carries_the_interval_fields(tmp_path, capsys):
    (tmp_path / "pets.txt").write_text(TEXT, encoding="utf-8")
    lines = [
        json.dumps(
            {
                "question": q.text,
                "corpus_id": "pets",
                "references": [
                    {"start_index": r.start, "end_index": r.end, "content": r.content}
                    for r in q.references
                ],
            }
        )
        for q in _questions()
    ]
    (tmp_path / "q.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = evaluate_main(
        [
            "--questions",
            str(tmp_path / "q.jsonl"),
            "--corpus",
            str(tmp_path),
            "--strategy",
            "token",
            "--size",
            "8",
            "30",
            "--overlap",
            "0",
            "--model",
            MODEL,
            "--format",
            "json",
        ]
    )
    assert code == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert len(results) == 2
    for row in results:
        for metric in INTERVAL_METRICS:
            low, high = row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]
            assert low <= row[f"{metric}_mean"] <= high
