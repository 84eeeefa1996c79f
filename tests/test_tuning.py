"""The tuning statistics, the front and the held-out split, on fixed or generated data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import bootstrap, permutation_test

from chunking.evaluation.questions import Question
from chunking.evaluation.stats import (
    RESAMPLES,
    detectable_difference,
    mean_interval,
    paired_difference,
    split_half_stability,
)
from chunking.tuning.front import dominates, front_mask
from chunking.tuning.holdout import split_questions
from chunking.tuning.space import Space

# ------------------------------------------------------------------------ the front

values = st.floats(min_value=0, max_value=1, allow_nan=False)
trials = st.lists(st.tuples(values, st.integers(0, 5)), min_size=1, max_size=25)


@given(trials)
def test_the_front_holds_exactly_the_non_dominated_trials(points) -> None:
    quality = [q for q, _ in points]
    cost = [float(c) for _, c in points]
    mask = front_mask(quality, cost)
    for i, on in enumerate(mask):
        beaten = any(
            dominates(quality[j], cost[j], quality[i], cost[i]) for j in range(len(points))
        )
        assert on == (not beaten), (i, points)
    assert any(mask), "a finite set always has a non-dominated trial"


def test_the_front_on_a_known_case() -> None:
    # (quality, cost): b dominates a; c is cheaper; d is better; e ties b exactly
    quality = [0.5, 0.6, 0.4, 0.9, 0.6, math.nan]
    cost = [10, 10, 5, 20, 10, 1]
    assert front_mask(quality, cost) == [False, True, True, True, True, False]


# ---------------------------------------------------------------------- statistics

FIXED_A = np.array([0.9, 0.1, 0.5, 1.0, 0.0, 0.7, 0.3, 0.8, 0.6, 0.4, 1.0, 0.2])
FIXED_B = np.array([0.8, 0.2, 0.4, 0.7, 0.0, 0.5, 0.3, 0.6, 0.7, 0.1, 0.9, 0.1])


def test_the_mean_interval_is_scipys_percentile_bootstrap() -> None:
    interval = mean_interval(FIXED_A, seed=7)
    expected = bootstrap(
        (FIXED_A,),
        np.mean,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert interval.mean == pytest.approx(FIXED_A.mean())
    assert (interval.low, interval.high) == pytest.approx((expected.low, expected.high))
    assert interval.low < interval.mean < interval.high


def test_the_paired_interval_and_p_value_are_scipys() -> None:
    diff = paired_difference(FIXED_A, FIXED_B, seed=3)

    def stat(x, y, axis=-1):
        return np.mean(x - y, axis=axis)

    ci = bootstrap(
        (FIXED_A, FIXED_B),
        stat,
        paired=True,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(3),
    ).confidence_interval
    p = permutation_test(
        (FIXED_A, FIXED_B),
        stat,
        permutation_type="samples",
        n_resamples=RESAMPLES,
        rng=np.random.default_rng(3),
    ).pvalue
    assert diff.mean == pytest.approx(np.mean(FIXED_A - FIXED_B))
    assert (diff.low, diff.high) == pytest.approx((ci.low, ci.high))
    assert diff.p_value == pytest.approx(p)


def test_the_permutation_test_on_a_case_with_a_known_answer() -> None:
    # 10 questions, each one better by 0.1 under a: of the 2**10 equally likely sign
    # patterns only "all +" reaches the observed mean and only "all −" its mirror, so
    # the exact two-sided p-value is 2 / 1024.
    b = np.linspace(0.1, 0.8, 10)
    diff = paired_difference(b + 0.1, b, seed=0)
    assert diff.p_value == pytest.approx(2 / 1024)
    assert diff.mean == pytest.approx(0.1)
    assert diff.distinguishable


def test_a_difference_is_distinguishable_only_with_both_conditions() -> None:
    rng = np.random.default_rng(0)
    a = rng.random(40)
    noise = paired_difference(a, a + rng.normal(0, 0.05, 40), seed=1)
    assert not noise.distinguishable
    assert noise.low < 0 < noise.high
    same = paired_difference(a, a, seed=1)
    assert same.p_value == 1.0 and not same.distinguishable


def test_the_detectable_difference_shrinks_with_more_questions() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(400), rng.random(400)
    few, many = detectable_difference(a[:25], b[:25]), detectable_difference(a, b)
    assert many < few
    # (1.96 + 0.84) · sd / √n
    sd = np.std(a - b, ddof=1)
    assert many == pytest.approx(2.8016 * sd / 20, rel=1e-3)


def test_split_half_stability_counts_the_winner_first() -> None:
    clear = np.array([[1.0] * 20, [0.0] * 20])
    assert split_half_stability(clear, 0, seed=0).first == 200
    assert split_half_stability(clear, 1, seed=0).first == 0
    rng = np.random.default_rng(2)
    close = rng.random((2, 30))
    first = split_half_stability(close, 0, seed=5)
    assert first == split_half_stability(close, 0, seed=5)
    assert 0 < first.first < 200


# ------------------------------------------------------------------- held-out split


def _questions(counts: dict[str, int]) -> list[Question]:
    out = []
    for doc, count in counts.items():
        for _ in range(count):
            out.append(Question(len(out), f"q{len(out)}", doc, ()))
    return out


def test_the_held_out_split_is_disjoint_stratified_and_seeded() -> None:
    questions = _questions({"a": 20, "b": 10, "c": 1, "d": 7})
    tuning, held = split_questions(questions, 0.3, seed=4)
    ids_t, ids_h = {q.index for q in tuning}, {q.index for q in held}
    assert not ids_t & ids_h and len(ids_t | ids_h) == len(questions)
    per_doc = {d: sum(q.corpus_id == d for q in held) for d in "abcd"}
    assert per_doc == {"a": 6, "b": 3, "c": 0, "d": 2}
    assert all(any(q.corpus_id == d for q in tuning) for d in "abcd")
    again = split_questions(questions, 0.3, seed=4)
    assert [q.index for q in again[1]] == [q.index for q in held]
    other = split_questions(questions, 0.3, seed=5)
    assert [q.index for q in other[1]] != [q.index for q in held]
    assert split_questions(questions, 0, seed=4) == (questions, [])
    with pytest.raises(ValueError, match="holdout"):
        split_questions(questions, 1.0, seed=4)


# --------------------------------------------------------------------------- space


def test_the_space_counts_points_on_paper_and_rejects_bad_ones() -> None:
    space = Space.from_dict(
        {
            "strategy": ["recursive", "sentence"],
            "size": {"low": 100, "high": 300, "step": 100},
            "overlap": [0, 150],
            "unit": ["tokens"],
        }
    )
    paper = space.paper()
    assert len(paper) == 2 * 3 * 2
    invalid = [p for p in paper if not space.point(p).valid]
    assert {(p["size"], p["overlap"]) for p in invalid} == {(100, 150)}
    with pytest.raises(ValueError, match="unknown key"):
        Space.from_dict({"strategy": ["recursive"], "sizes": [1]})
    with pytest.raises(ValueError, match="unknown strategy"):
        Space.from_dict({"strategy": ["nope"]})
    with pytest.raises(ValueError, match="llm context"):
        Space.from_dict({"context": ["llm"]})
