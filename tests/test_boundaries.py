"""Boundary metrics (chunking.evaluation.boundaries, .agreement) against segeval and by
their properties."""

from __future__ import annotations

from itertools import accumulate, combinations, pairwise, permutations
from statistics import fmean

import numpy as np
import pytest
import segeval
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.metrics.segmentation import pk as nltk_pk
from scipy.optimize import linear_sum_assignment
from segeval.data.samples import (
    HEARST_1997_STARGAZER,
    HYPOTHESIS_STARGAZER,
    KAZANTSEVA2012_G2,
    KAZANTSEVA2012_G5,
)

from chunking import Config, run
from chunking.evaluation.agreement import HUMAN_SEGMENTATIONS, agreement, human_band
from chunking.evaluation.boundaries import (
    as_boundaries,
    boundary_edits,
    boundary_scores,
    boundary_similarity,
    chunk_starts,
    match_boundaries,
    parse_tolerance,
    pk,
    score_boundaries,
    sentence_positions,
    snap_to_words,
    window_size,
    windowdiff,
)
from chunking.evaluation.gold import read_gold
from tests.conftest import ROOT, SAMPLE_DOCS

HUMAN = {
    "kazantseva2012_g5": KAZANTSEVA2012_G5,
    "kazantseva2012_g2": KAZANTSEVA2012_G2,
    "hearst1997": HEARST_1997_STARGAZER,
}


def bounds(masses: tuple[int, ...]) -> list[int]:
    """segeval's segment masses as boundaries (offsets where a segment starts, not 0)."""
    return list(accumulate(masses))[:-1]


def human_pairs():
    """(dataset, item, hypothesis masses, reference masses) for every ordered coder pair."""
    for name, data in HUMAN.items():
        for item, codings in data.items():
            for hyp, ref in permutations(codings, 2):
                yield name, item, codings[hyp], codings[ref]
    for item, codings in HYPOTHESIS_STARGAZER.items():
        for hyp in codings.values():
            for ref in HEARST_1997_STARGAZER[item].values():
                yield "stargazer-hypotheses", item, hyp, ref


PAIRS = list(human_pairs())


# ------------------------------------------------------- segeval's human segmentations


@pytest.mark.parametrize("k", [2, 3, 5, None])
def test_pk_and_windowdiff_match_segeval_on_its_human_segmentations(k):
    assert len(PAIRS) == 48 + 120 + 42 + 14
    for _, _, hyp, ref in PAIRS:
        length = sum(ref)
        window = segeval.compute_window_size(ref) if k is None else k
        assert window == window_size(bounds(ref), length) or k is not None
        if window >= length:
            continue
        expected_pk = float(segeval.pk(hyp, ref, window_size=window))
        expected_wd = float(segeval.window_diff(hyp, ref, window_size=window))
        assert pk(bounds(ref), bounds(hyp), length, window) == pytest.approx(expected_pk)
        assert windowdiff(bounds(ref), bounds(hyp), length, window) == pytest.approx(expected_wd)


@pytest.mark.parametrize("n_t", [2, 3, 5])
def test_boundary_similarity_matches_segeval_on_its_human_segmentations(n_t):
    for _, _, hyp, ref in PAIRS:
        expected = float(segeval.boundary_similarity(hyp, ref, n_t=n_t))
        got = boundary_similarity(bounds(ref), bounds(hyp), sum(ref), n_t)
        assert got == pytest.approx(expected)


def test_near_misses_match_segevals_transpositions():
    for _, _, hyp, ref in PAIRS:
        stats = segeval.boundary_statistics(hyp, ref)
        edits = boundary_edits(bounds(hyp), bounds(ref), sum(ref))
        assert len(edits.near_misses) == len(stats["transpositions"])
        assert edits.full_misses == len(stats["additions"])
        assert edits.matches == len(stats["matches"])


def test_the_bundled_human_data_is_segevals():
    for name, data in HUMAN.items():
        assert HUMAN_SEGMENTATIONS[name] == {item: dict(c) for item, c in data.items()}


@pytest.mark.parametrize("name", list(HUMAN))
def test_human_agreement_is_segevals_mean_pairwise_agreement(name):
    data = HUMAN[name]
    found = agreement(name)
    assert found.b == pytest.approx(float(segeval.summarize(segeval.boundary_similarity(data))[0]))
    assert found.pk == pytest.approx(float(segeval.summarize(segeval.pk(data))[0]))
    expected_wd = float(segeval.summarize(segeval.window_diff(data))[0])
    assert found.windowdiff == pytest.approx(expected_wd)
    assert found.items == len(data)
    assert found.coders == len({c for codings in data.values() for c in codings})


def test_the_human_band_is_the_range_the_issue_quotes():
    band = human_band()
    assert band.b == pytest.approx((0.2309, 0.5337), abs=1e-4)
    assert band.pk == pytest.approx((0.2882, 0.3553), abs=1e-4)
    assert band.windowdiff[0] < band.windowdiff[1]


# ----------------------------------------------------------------- random segmentations


@st.composite
def segmentation_pairs(draw, max_length: int = 80):
    length = draw(st.integers(2, max_length))
    inner = st.integers(1, length - 1)
    a = sorted(draw(st.sets(inner, max_size=length - 1)))
    b = sorted(draw(st.sets(inner, max_size=length - 1)))
    return length, a, b


def masses(boundaries: list[int], length: int) -> tuple[int, ...]:
    points = [0, *boundaries, length]
    return tuple(y - x for x, y in pairwise(points))


@settings(max_examples=120)
@given(segmentation_pairs(), st.integers(1, 40), st.sampled_from([2, 3, 4, 6]))
def test_random_segmentations_match_segeval(pair, k, n_t):
    length, gold, hyp = pair
    ref_m, hyp_m = masses(gold, length), masses(hyp, length)
    if k < length:
        assert pk(gold, hyp, length, k) == pytest.approx(
            float(segeval.pk(hyp_m, ref_m, window_size=k))
        )
        assert windowdiff(gold, hyp, length, k) == pytest.approx(
            float(segeval.window_diff(hyp_m, ref_m, window_size=k))
        )
    assert window_size(gold, length) == segeval.compute_window_size(ref_m)
    if gold or hyp:  # segeval cannot compute B without a single boundary
        expected = float(segeval.boundary_similarity(hyp_m, ref_m, n_t=n_t))
        assert boundary_similarity(gold, hyp, length, n_t) == pytest.approx(expected)


@given(segmentation_pairs(max_length=400), st.integers(1, 60))
def test_metrics_are_bounded_symmetric_and_perfect_on_identical_input(pair, k):
    length, a, b = pair
    for first, second in ((a, b), (b, a)):
        assert 0.0 <= pk(first, second, length, k) <= 1.0
        assert 0.0 <= windowdiff(first, second, length, k) <= 1.0
        assert 0.0 <= boundary_similarity(first, second, length) <= 1.0
    # With the window fixed, neither depends on which one is the reference; B never does.
    assert pk(a, b, length, k) == pk(b, a, length, k)
    assert windowdiff(a, b, length, k) == windowdiff(b, a, length, k)
    assert boundary_similarity(a, b, length) == boundary_similarity(b, a, length)
    # Pk only asks whether a window holds a boundary, WindowDiff how many.
    assert pk(a, b, length, k) <= windowdiff(a, b, length, k)
    same = list(a)
    assert pk(a, same, length) == 0.0 and pk(same, a, length) == 0.0
    assert windowdiff(a, same, length) == 0.0 and windowdiff(same, a, length) == 0.0
    assert boundary_similarity(a, same, length) == 1.0


def test_pk_needs_no_per_character_work():
    """A 50 MB text with a few boundaries: the pieces between boundaries, not 50 million
    windows, are summed (a per-character loop would not finish in a test)."""
    length = 50_000_000
    gold = [10_000_000, 20_000_000, 30_000_000]
    hyp = [10_000_005, 25_000_000]
    k = window_size(gold, length)
    assert k == 6_250_000
    # Gold windows holding a boundary: 3 runs of k; the hypothesis: [b - k, b) each.
    expected = pk(gold, hyp, length)
    assert 0.0 < expected < 1.0
    small = pk([g // 1000 for g in gold], [h // 1000 for h in hyp], length // 1000)
    assert expected == pytest.approx(small, abs=1e-3)


def test_nltk_gives_the_same_pk_with_the_same_window_but_another_default_window():
    length, gold, hyp = 40, [9, 17, 30], [8, 22, 30, 35]

    def nltk_string(boundaries):
        return "".join("1" if gap + 1 in boundaries else "0" for gap in range(length - 1))

    ref, got = nltk_string(gold), nltk_string(hyp)
    for k in (2, 5, 7):
        assert nltk_pk(ref, got, k) == pytest.approx(pk(gold, hyp, length, k))
    # NLTK halves length / boundaries, segeval and this package length / segments.
    assert window_size(gold, length) == 5
    assert round((length - 1) / (2 * len(gold))) == 6
    assert nltk_pk(ref, got) != pytest.approx(pk(gold, hyp, length))


def test_window_rounds_half_to_even_and_is_at_least_two():
    assert window_size([], 10) == 5
    assert window_size([5], 10) == 2  # 2.5 rounds to 2
    assert window_size([3, 6], 21) == 4  # 3.5 rounds to 4
    assert window_size([1, 2, 3], 4) == 2  # 0.5 would be 0: at least 2
    with pytest.raises(ValueError, match="empty"):
        window_size([], 0)
    with pytest.raises(ValueError, match="at least 1"):
        pk([3], [3], 10, 0)


def test_near_miss_costs_half_with_the_default_n_t():
    edits = boundary_edits([10, 20], [11, 20], 30)
    assert edits.matches == 1 and edits.near_misses == (1,) and edits.full_misses == 0
    assert boundary_similarity([10, 20], [11, 20], 30) == pytest.approx(1 - 0.5 / 2)
    # Two characters apart is a full miss on each side with n_t = 2, a near miss with 3.
    assert boundary_similarity([10], [12], 30) == 0.0
    assert boundary_similarity([10], [12], 30, n_t=3) == pytest.approx(1 - 2 / 3)
    assert boundary_similarity([], [], 30) == 1.0


# --------------------------------------------------------- precision, recall, tolerance


@given(segmentation_pairs(max_length=60), st.integers(0, 8))
def test_the_greedy_matching_is_a_maximum_matching(pair, tolerance):
    _, gold, hyp = pair
    found = match_boundaries(gold, hyp, tolerance)
    assert all(abs(g - h) <= tolerance for g, h in found.matched)
    assert sorted([g for g, _ in found.matched] + list(found.missed)) == gold
    assert sorted([h for _, h in found.matched] + list(found.extra)) == hyp
    if gold and hyp:
        close = np.array([[abs(g - h) <= tolerance for h in hyp] for g in gold], dtype=float)
        rows, cols = linear_sum_assignment(-close)
        assert len(found.matched) == int(close[rows, cols].sum())
    # A wider tolerance never matches fewer.
    assert len(match_boundaries(gold, hyp, tolerance + 1).matched) >= len(found.matched)
    assert 0 <= found.f1 <= 1


def test_precision_recall_and_f1_follow_the_usual_definitions():
    found = match_boundaries([10, 20, 30], [11, 29, 40, 50], 1)
    assert found.matched == ((10, 11), (30, 29))
    assert found.missed == (20,) and found.extra == (40, 50)
    assert found.precision == pytest.approx(2 / 4)
    assert found.recall == pytest.approx(2 / 3)
    assert found.f1 == pytest.approx(2 * (1 / 2) * (2 / 3) / (1 / 2 + 2 / 3))
    exact = match_boundaries([10, 20, 30], [11, 29, 40, 50], 0)
    assert exact.matched == () and exact.f1 == 0.0
    nothing = match_boundaries([], [], 0)
    assert (nothing.precision, nothing.recall, nothing.f1) == (1.0, 1.0, 1.0)
    none_drawn = match_boundaries([5], [], 0)
    assert (none_drawn.precision, none_drawn.recall, none_drawn.f1) == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="0 or more"):
        match_boundaries([1], [1], -1)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("0", (0, "chars")),
        ("20", (20, "chars")),
        ("20chars", (20, "chars")),
        (" 20 characters ", (20, "chars")),
        ("1s", (1, "sentences")),
        ("1sentence", (1, "sentences")),
        ("2 sentences", (2, "sentences")),
    ],
)
def test_tolerance_is_read_in_characters_or_sentences(given, expected):
    assert parse_tolerance(given) == expected


@pytest.mark.parametrize("bad", ["", "-1", "1.5", "ten", "3 words"])
def test_a_bad_tolerance_says_what_is_expected(bad):
    with pytest.raises(ValueError, match="--tolerance expects"):
        parse_tolerance(bad)


def test_sentence_tolerance_counts_sentences_not_characters():
    text = "One cat sat. Two dogs ran far away. Three birds flew. Four fish swam."
    second, third = text.index("Two"), text.index("Three")
    mid_second = text.index("ran")
    positions = sentence_positions(text, [second, third, mid_second])
    assert positions[second] == positions[mid_second] == positions[third] - 1
    # A cut inside the sentence before the gold one: off by one sentence, 14 characters.
    scores = score_boundaries(text, [third], [mid_second], tolerance=1, tolerance_unit="sentences")
    assert scores.f1 == 1.0
    assert score_boundaries(text, [third], [mid_second], tolerance=13).f1 == 0.0
    assert (
        score_boundaries(text, [third], [mid_second], tolerance=0, tolerance_unit="sentences").f1
        == 0.0
    )


# ------------------------------------------------------------- texts, chunks and gold


def test_a_cut_anywhere_in_a_gap_is_the_same_cut():
    text = "alpha beta\n\n  gamma delta"
    gamma = text.index("gamma")
    assert snap_to_words(text, [10, 11, 12, 13, gamma, 0, len(text)]) == [gamma]
    assert snap_to_words("tail   ", [4, 5]) == []
    scores = score_boundaries(text, [gamma], [10])
    assert (scores.pk, scores.windowdiff, scores.b, scores.f1) == (0.0, 0.0, 1.0, 1.0)


def test_chunks_are_compared_by_their_starts_overlap_or_not():
    text = "First part here. " * 30 + "Second part now. " * 30
    overlapping = run(text, Config.create("sliding", window=200, stride=150, unit="chars"))
    starts = chunk_starts(overlapping, len(text))
    assert starts == sorted({c.start for c in overlapping} - {0})
    assert boundary_scores(text, [510], overlapping) == boundary_scores(text, [510], starts)
    assert as_boundaries([0, 5, 5, 3, 99], 50).tolist() == [3, 5]


def test_boundary_scores_has_the_keys_tuning_and_the_command_use():
    text = (SAMPLE_DOCS / "long_essay.txt").read_text(encoding="utf-8")
    gold = read_gold(ROOT / "sample_gold" / "long_essay.gold.json", text)
    chunks = run(text, Config.create("paragraph", size=1500, unit="chars"))
    scores = boundary_scores(text, gold.boundaries, chunks)
    for key in ("pk", "windowdiff", "b", "precision", "recall", "f1", "k", "tolerance"):
        assert key in scores
    assert scores["k"] == window_size(gold.boundaries, len(text))
    assert scores["gold_boundaries"] == len(gold.boundaries)
    assert len(scores["matched"]) + len(scores["missed"]) == len(gold.boundaries)
    assert len(scores["matched"]) + len(scores["extra"]) == scores["boundaries"]
    # The gold scored against itself, and a paragraph packer against it: better than
    # cutting at fixed lengths, worse than the gold.
    perfect = boundary_scores(text, gold.boundaries, list(gold.boundaries))
    assert (perfect["pk"], perfect["b"], perfect["f1"]) == (0.0, 1.0, 1.0)
    fixed = boundary_scores(text, gold.boundaries, run(text, Config.create("fixed", size=1500)))
    assert fixed["f1"] < scores["f1"] < 1.0
    assert boundary_scores(text, gold.boundaries, chunks, k=99)["k"] == 99


def test_the_sample_gold_cuts_at_paragraph_starts():
    text = (SAMPLE_DOCS / "long_essay.txt").read_text(encoding="utf-8")
    gold = read_gold(ROOT / "sample_gold" / "long_essay.gold.json", text)
    assert len(gold.boundaries) >= 9  # at least the nine parts of the essay
    for b in gold.boundaries:
        assert text[b - 2 : b] == "\n\n" and not text[b].isspace()
    for opening in ("Anyone who keeps bees", "Before satellite", "A glacier is", "For most of h"):
        assert text.index(f"\n\n{opening}") + 2 in gold.boundaries


def test_combinations_of_coders_are_counted_once_for_b():
    # B is symmetric, so a set's mean over unordered pairs is its mean over ordered ones.
    codings = HUMAN_SEGMENTATIONS["hearst1997"]["stargazer"]
    length = sum(next(iter(codings.values())))
    unordered = [
        boundary_similarity(bounds(codings[a]), bounds(codings[b]), length)
        for a, b in combinations(codings, 2)
    ]
    ordered = [
        boundary_similarity(bounds(codings[a]), bounds(codings[b]), length)
        for a, b in permutations(codings, 2)
    ]
    assert (
        fmean(unordered)
        == pytest.approx(fmean(ordered))
        == pytest.approx(agreement("hearst1997").b)
    )
