"""Semantic chunking: distance series, breakpoint methods, size bounds, the strategy."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chunking
import chunking.splitters.semantic.analysis as sem
import chunking.splitters.semantic.methods as methods
from chunking import Config
from chunking.embedding.models import Embedder, HashEmbedder, embed_chunks, get_embedder
from chunking.engine.spans import sentence_spans
from chunking.units import get_sizer
from tests.conftest import SAMPLE_DOCS
from tests.invariants import check_invariants

TOPICS = [
    [
        "Bread dough needs flour, water, salt and yeast.",
        "Knead the dough for ten minutes until it feels smooth and elastic.",
        "Let the dough rise in a warm kitchen until it doubles in size.",
        "Shape the loaf gently so the gas bubbles stay inside.",
        "Bake the bread in a hot oven until the crust turns deep brown.",
        "Cool the loaf on a rack before slicing it.",
    ],
    [
        "Jupiter is the largest planet in our solar system.",
        "Its Great Red Spot is a storm larger than the Earth.",
        "Astronomers have counted more than ninety moons orbiting the planet.",
        "The moon Europa hides a salty ocean beneath its icy crust.",
        "Telescopes can see the planet's cloud bands from a backyard.",
        "Space probes such as Juno study its magnetic field and gravity.",
    ],
    [
        "The striker scored twice in the second half of the match.",
        "The goalkeeper saved a penalty in the final minute.",
        "Fans in the stadium sang until the referee blew the whistle.",
        "The coach changed the team's formation at half time.",
        "The win moved the club to the top of the league table.",
        "Next week the team plays its rivals in the cup semi-final.",
    ],
    [
        "Income tax returns must be filed by the end of April.",
        "Employees can deduct some work expenses from their taxable income.",
        "The tax office charges interest on late payments.",
        "Keep receipts for at least six years in case of an audit.",
        "Self-employed workers pay their tax in quarterly instalments.",
        "An accountant can help you claim every allowance you are owed.",
    ],
]
TEXT = " ".join(s for topic in TOPICS for s in topic)
#: Sentence indices after which the topic changes.
SWITCHES = [5, 11, 17]
UNBOUNDED = {"unit": "chars", "max_size": 10**9}


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    return get_embedder()


@pytest.fixture(scope="session")
def sentences_alone(minilm: Embedder) -> sem.SemanticAnalysis:
    return sem.analyze(TEXT, embedder=minilm, buffer_size=0)


@pytest.fixture(scope="session")
def windows(minilm: Embedder) -> sem.SemanticAnalysis:
    return sem.analyze(TEXT, embedder=minilm, buffer_size=1)


def manual(text: str, distances: list[float]) -> sem.SemanticAnalysis:
    """An analysis with chosen distances, for exact tests of cutting and merging."""
    spans = tuple(sentence_spans(text))
    assert len(spans) == len(distances) + 1
    return sem.SemanticAnalysis(
        text=text,
        sentences=spans,
        embeddings=np.zeros((len(spans), 4), dtype=np.float32),
        distances=np.asarray(distances, dtype=np.float64),
        buffer_size=0,
        embedder=HashEmbedder(),
    )


# --- sentences and the distance series ---------------------------------------------------


def test_sentences_are_the_segmenter_spans(windows: sem.SemanticAnalysis) -> None:
    assert windows.sentences == tuple(sentence_spans(TEXT))
    assert [TEXT[s:e] for s, e in windows.sentences] == [s for t in TOPICS for s in t]


def test_windows_hold_each_sentence_with_its_neighbours() -> None:
    spans = sentence_spans(TEXT)
    texts = sem.window_texts(TEXT, spans, 1)
    assert texts[0] == TEXT[spans[0][0] : spans[1][1]]
    assert texts[7] == TEXT[spans[6][0] : spans[8][1]]
    assert texts[-1] == TEXT[spans[-2][0] : spans[-1][1]]
    assert sem.window_texts(TEXT, spans, 0) == [TEXT[s:e] for s, e in spans]


def test_distances_are_one_minus_cosine_of_consecutive_windows(
    windows: sem.SemanticAnalysis, minilm: Embedder
) -> None:
    vectors = minilm.embed(sem.window_texts(TEXT, windows.sentences, 1))
    expected = [1 - float(a @ b) for a, b in itertools.pairwise(vectors)]
    np.testing.assert_allclose(windows.distances, expected, atol=1e-6)
    assert len(windows.distances) == len(windows.sentences) - 1


def test_breakpoints_fall_at_the_topic_switches(sentences_alone: sem.SemanticAnalysis) -> None:
    d = sentences_alone.distances
    assert sorted(np.argsort(d)[-3:].tolist()) == SWITCHES
    result = sentences_alone.chunk("count", 4, **UNBOUNDED)
    assert [i for i, _, _ in result.breakpoints] == SWITCHES
    assert [c.text for c in result.chunks] == [" ".join(t) for t in TOPICS]
    percentile = sentences_alone.chunk("percentile", **UNBOUNDED)
    found = [i for i, _, _ in percentile.breakpoints]
    assert found
    assert set(found) <= set(SWITCHES)


def test_windows_blur_a_switch_by_at_most_the_buffer(windows: sem.SemanticAnalysis) -> None:
    result = windows.chunk("percentile", **UNBOUNDED)
    found = [i for i, _, _ in result.breakpoints]
    assert found
    assert all(min(abs(i - s) for s in SWITCHES) <= 1 for i in found)


# --- thresholds equal their formulas ----------------------------------------------------


def formula(method: str, d: np.ndarray, t: float) -> float:
    """Each method's cutoff, written out with numpy."""
    if method == "similarity":
        return 1 - t
    if method == "percentile":
        return float(np.percentile(d, t))
    if method == "std":
        return float(d.mean() + t * d.std())
    if method == "iqr":
        return float(d.mean() + t * (np.percentile(d, 75) - np.percentile(d, 25)))
    if method == "gradient":
        return float(np.percentile(np.gradient(d), t))
    if method == "count":
        return float(sorted(d, reverse=True)[int(t) - 1])
    raise AssertionError(method)


DEFAULTS = {"similarity": 0.8, "percentile": 95, "std": 3, "iqr": 1.5, "gradient": 95}
CHOSEN = {"similarity": 0.7, "percentile": 80, "std": 1, "iqr": 0.5, "gradient": 70, "count": 3}


@pytest.mark.parametrize("method", list(CHOSEN))
@pytest.mark.parametrize("chosen", [False, True])
def test_each_threshold_equals_its_formula(
    windows: sem.SemanticAnalysis, method: str, chosen: bool
) -> None:
    d = windows.distances
    n = len(windows.sentences)
    t = CHOSEN[method] if chosen else DEFAULTS.get(method, math.ceil(n / 10))
    result = windows.chunk(method, t if chosen else None, **UNBOUNDED)
    assert result.method == method
    assert result.parameter == t
    assert result.threshold == pytest.approx(formula(method, d, t), abs=1e-12)
    series = np.gradient(d) if method == "gradient" else d
    np.testing.assert_array_equal(result.scores, series)
    expected = np.flatnonzero(series > result.threshold).tolist()
    assert [i for i, _, _ in result.breakpoints] == expected
    assert all(reason == "similarity" for _, _, reason in result.breakpoints)


def test_every_default_threshold_comes_back(windows: sem.SemanticAnalysis) -> None:
    d = windows.distances
    n = len(windows.sentences)
    thresholds = windows.chunk("percentile", **UNBOUNDED).thresholds
    for method, t in {**DEFAULTS, "count": math.ceil(n / 10)}.items():
        assert thresholds[method] == pytest.approx(formula(method, d, t), abs=1e-12), method


def test_count_gives_that_many_chunks(windows: sem.SemanticAnalysis) -> None:
    for wanted in (1, 2, 5, len(windows.sentences)):
        assert len(windows.chunk("count", wanted, **UNBOUNDED).chunks) == wanted


def test_similarity_splits_below_the_similarity(windows: sem.SemanticAnalysis) -> None:
    result = windows.chunk("similarity", 0.75, **UNBOUNDED)
    similarities = 1 - windows.distances
    assert [i for i, _, _ in result.breakpoints] == np.flatnonzero(similarities < 0.75).tolist()


@pytest.mark.parametrize(
    ("method", "threshold", "message"),
    [
        ("percentile", 120, "percentile from 0 to 100"),
        ("gradient", -5, "percentile from 0 to 100"),
        ("similarity", 1.5, "between -1 and 1"),
        ("count", 2.5, "whole number"),
        ("count", 0, "whole number"),
        ("nonsense", None, "unknown method"),
    ],
)
def test_out_of_range_thresholds_are_refused(
    windows: sem.SemanticAnalysis, method: str, threshold: float | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        windows.chunk(method, threshold)


# --- the automatic choice ---------------------------------------------------------------


def test_auto_reports_its_choice_and_applies_that_formula(windows: sem.SemanticAnalysis) -> None:
    result = windows.chunk("auto", **UNBOUNDED)
    assert result.method in methods.FORMULA_METHODS
    assert result.auto_reason
    assert result.threshold == pytest.approx(
        formula(result.method, windows.distances, result.parameter), abs=1e-12
    )
    assert windows.chunk("percentile", **UNBOUNDED).auto_reason is None


def test_auto_follows_the_shape_of_the_distribution() -> None:
    rng = np.random.default_rng(0)
    assert methods.choose_method(rng.uniform(0, 1, 5), 6).method == "similarity"
    assert (
        methods.choose_method(np.full(50, 0.3) + rng.normal(0, 1e-4, 50), 51).method == "gradient"
    )
    tail = methods.choose_method(rng.exponential(0.1, 400), 401)
    assert tail.method == "iqr"
    assert "skewness" in tail.reason
    two_groups = np.concatenate([rng.normal(0.1, 0.01, 100), rng.normal(0.6, 0.01, 100)])
    assert methods.bimodality(two_groups) > 5 / 9
    assert methods.choose_method(two_groups, 201).method == "iqr"
    assert methods.choose_method(rng.normal(0.3, 0.05, 400), 401).method == "percentile"


def test_sarle_bimodality_coefficient_matches_its_definition() -> None:
    rng = np.random.default_rng(1)
    d = rng.gamma(2.0, 0.1, 60)
    n, m, s = len(d), d.mean(), d.std()
    g = ((d - m) ** 3).mean() / s**3
    k = ((d - m) ** 4).mean() / s**4 - 3
    expected = (g**2 + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    assert methods.bimodality(d) == pytest.approx(expected)


# --- re-chunking without embedding again ----------------------------------------------------


def test_rechunking_never_calls_the_model(windows: sem.SemanticAnalysis, minilm: Embedder) -> None:
    calls = minilm.calls
    for method in methods.METHODS:
        for unit, max_size, min_size in [("chars", 400, 0), ("tokens", 60, 20), ("words", 30, 5)]:
            windows.chunk(method, None, unit, max_size, min_size)
    windows.chunk("percentile", 50)
    sem.analyze(TEXT, embedder=minilm, buffer_size=1)  # the same windows: all cached
    assert minilm.calls == calls


# --- size bounds ---------------------------------------------------------------------------


def test_an_oversized_segment_is_cut_at_its_weakest_similarity(
    windows: sem.SemanticAnalysis,
) -> None:
    d = windows.distances
    result = windows.chunk("count", 1, "chars", max_size=len(TEXT) - 1)
    assert len(result.chunks) == 2
    assert result.breakpoints == ((int(np.argmax(d)), float(d.max()), "max-size split"),)
    assert result.chunks[0].metadata["boundary"] == "max-size split"
    assert result.chunks[1].metadata["boundary"] == "end"


@pytest.mark.parametrize("unit", ["chars", "words", "tokens"])
def test_size_bounds_hold_in_every_unit(windows: sem.SemanticAnalysis, unit: str) -> None:
    max_size = {"chars": 200, "words": 30, "tokens": 40}[unit]
    result = windows.chunk("percentile", None, unit, max_size)
    sizer = get_sizer(unit)
    assert len(result.chunks) > 4
    for c in result.chunks:
        assert c.size == sizer.size(c.text)
        assert c.size <= max_size
    reasons = {r for _, _, r in result.breakpoints}
    assert "max-size split" in reasons
    assert reasons <= {"similarity", "max-size split"}


def test_a_sentence_over_the_limit_is_split_structurally() -> None:
    long = "This sentence just goes on " + "and on " * 40 + "until it ends."
    text = f"Short start. {long} Short end."
    analysis = sem.analyze(text, embedder="hash")
    result = analysis.chunk("count", 3, "chars", max_size=60)
    assert all(c.size <= 60 for c in result.chunks)
    structural = [c for c in result.chunks if c.metadata["boundary"] == "structural"]
    assert len(structural) >= 4
    assert all(c.metadata["sentences"] == [1, 2] for c in structural)
    pieces = [c for c in result.chunks if c.metadata["sentences"] == [1, 2]]
    assert "".join(text[c.start : c.end] + " " for c in pieces).split() == long.split()
    assert all(math.isnan(dist) for _, dist, r in result.breakpoints if r == "structural")


def test_unsplittable_text_is_flagged_not_lost() -> None:
    text = "Tiny. " + "🙂" * 5 + " Tail."
    result = sem.analyze(text, embedder="hash").chunk("count", 3, "tokens", max_size=1)
    check_invariants(text, result.chunks, Config.create("semantic", unit="tokens", max_size=1))
    assert any(chunking.UNSPLITTABLE in c.flags for c in result.chunks)


def test_a_small_chunk_joins_its_more_similar_neighbour() -> None:
    text = "Alpha alpha alpha. Beta. Gamma gamma gamma."
    right = manual(text, [0.9, 0.1]).chunk("count", 3, "chars", max_size=100, min_size=10)
    assert [c.text for c in right.chunks] == ["Alpha alpha alpha.", "Beta. Gamma gamma gamma."]
    assert right.chunks[1].metadata["merged"] == {"count": 1, "reason": "under min_size"}
    assert "merged" not in right.chunks[0].metadata
    assert right.merged == ((1, 0.1, "similarity"),)
    assert right.breakpoints == ((0, 0.9, "similarity"),)
    left = manual(text, [0.1, 0.9]).chunk("count", 3, "chars", max_size=100, min_size=10)
    assert [c.text for c in left.chunks] == ["Alpha alpha alpha. Beta.", "Gamma gamma gamma."]
    assert left.merged == ((0, 0.1, "similarity"),)


def test_a_merge_that_would_break_the_maximum_is_not_made() -> None:
    text = "Alpha alpha alpha. Beta. Gamma gamma gamma."
    result = manual(text, [0.9, 0.1]).chunk("count", 3, "chars", max_size=20, min_size=10)
    # Either merge would make 24 characters: "Beta." (5) stays under min_size.
    assert [c.text for c in result.chunks] == ["Alpha alpha alpha.", "Beta.", "Gamma gamma gamma."]
    assert result.merged == ()
    assert all("merged" not in c.metadata for c in result.chunks)


def test_merging_respects_both_bounds(windows: sem.SemanticAnalysis) -> None:
    every = windows.chunk("count", len(windows.sentences), "words", max_size=40, min_size=25)
    assert len(every.chunks) < len(windows.sentences)
    assert sum(c.metadata.get("merged", {}).get("count", 0) for c in every.chunks) == len(
        every.merged
    )
    sizes = [c.size for c in every.chunks]
    assert max(sizes) <= 40
    for k, c in enumerate(every.chunks):
        if c.size < 25:  # left small only when each neighbour had no room
            for j in (k - 1, k + 1):
                if 0 <= j < len(every.chunks):
                    a, b = sorted((c, every.chunks[j]), key=lambda x: x.start)
                    assert get_sizer("words").size(TEXT[a.start : b.end]) > 40


def test_min_size_must_stay_below_max_size(windows: sem.SemanticAnalysis) -> None:
    with pytest.raises(ValueError, match="min_size"):
        windows.chunk("percentile", None, "chars", max_size=100, min_size=100)
    with pytest.raises(ValueError, match="min_size"):
        Config.create("semantic", max_size=50, min_size=60)


def test_one_sentence_documents() -> None:
    result = sem.analyze("Just one sentence here.", embedder="hash").chunk("percentile")
    assert [c.text for c in result.chunks] == ["Just one sentence here."]
    assert result.distances.shape == (0,)
    assert result.threshold == math.inf
    assert result.breakpoints == ()


# --- the strategy, its invariants and the command line ---------------------------------------


def test_strategy_is_registered_with_its_parameters() -> None:
    spec = chunking.get_strategy("semantic")
    assert spec.limit_param == "max_size"
    assert set(spec.param_names) == {
        "method",
        "threshold",
        "buffer_size",
        "unit",
        "max_size",
        "min_size",
        "model",
    }
    assert spec.param("method").choices == methods.METHODS
    assert spec.param("model").default == "all-MiniLM-L6-v2"
    with pytest.raises(ValueError, match="percentile from 0 to 100"):
        Config.create("semantic", method="percentile", threshold=101)


def test_chunk_api_with_the_real_model(minilm: Embedder) -> None:
    chunks = chunking.chunk(
        TEXT,
        "semantic",
        method="count",
        threshold=4,
        buffer_size=0,
        unit="chars",
        max_size=10**6,
        min_size=0,
        model="all-MiniLM-L6-v2",
    )
    assert [c.text for c in chunks] == [" ".join(t) for t in TOPICS]
    config = Config.create("semantic", method="percentile", threshold=95)
    check_invariants(TEXT, chunking.run(TEXT, config), config)


def test_the_default_threshold_means_the_methods_default() -> None:
    def starts(**params: object) -> list[int]:
        chunks = chunking.chunk(TEXT, "semantic", unit="chars", model="hash", **params)
        return [c.start for c in chunks]

    assert starts(method="percentile") == starts(method="percentile", threshold=95)
    assert starts(method="percentile", threshold=-1) == starts(method="percentile", threshold=95)
    assert len(starts(method="percentile", threshold=50)) > len(starts(method="percentile"))


FRAGMENTS = st.sampled_from(
    [
        "Hello world.",
        "Dr. Smith",
        "e.g.",
        "?",
        "!",
        " ",
        "\n\n",
        "\r\n",
        "\t",
        "😀",
        "👩‍👩‍👧‍👦",
        "日本語の文です。",
        "中文没有空格",
        "e\u0301",
        "שלום עולם.",
        "Ünïcödé ß",
        "\u00a0",
        "x" * 30,
    ]
)
TEXTS = (
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), min_size=1, max_size=30)
    .map("".join)
    .filter(lambda t: t and not t.isspace())
)


@settings(max_examples=60, deadline=None)
@given(
    text=TEXTS,
    method=st.sampled_from(methods.METHODS),
    unit=st.sampled_from(["chars", "words", "tokens"]),
    max_size=st.integers(1, 60),
    min_share=st.floats(0, 0.9),
    buffer_size=st.integers(0, 3),
)
def test_invariants_hold_for_the_strategy(
    text: str, method: str, unit: str, max_size: int, min_share: float, buffer_size: int
) -> None:
    config = Config.create(
        "semantic",
        method=method,
        unit=unit,
        max_size=max_size,
        min_size=int(max_size * min_share),
        buffer_size=buffer_size,
        model="hash",
    )
    chunks = chunking.run(text, config)
    check_invariants(text, chunks, config)
    for c in chunks:
        assert c.metadata["boundary"] in ("similarity", "max-size split", "structural", "end")


def test_cli_split_with_the_semantic_strategy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], minilm: Embedder
) -> None:
    from chunking.cli import main

    path = tmp_path / "topics.txt"
    path.write_text(TEXT, encoding="utf-8")
    code = main(
        [
            "split",
            str(path),
            "--strategy",
            "semantic",
            "--param",
            "method=percentile",
            "--param",
            "threshold=95",
            "--model",
            "all-MiniLM-L6-v2",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) >= 2
    for row in rows:
        assert TEXT[row["start"] : row["end"]] == row["text"]
        assert row["metadata"]["boundary"] in ("similarity", "max-size split", "end")


def test_cli_reports_a_model_that_is_not_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chunking.cli import main

    path = tmp_path / "doc.txt"
    path.write_text(TEXT, encoding="utf-8")
    code = main(["split", str(path), "--strategy", "semantic", "--model", "nobody/nothing-here"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "not available offline" in err


# --- cohesion --------------------------------------------------------------------------------


def test_mean_pairwise_similarity_matches_brute_force() -> None:
    rng = np.random.default_rng(2)
    v = rng.normal(size=(7, 5))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    pairs = [float(v[i] @ v[j]) for i in range(7) for j in range(7) if i != j]
    assert sem.mean_pairwise_similarity(v) == pytest.approx(np.mean(pairs))
    assert math.isnan(sem.mean_pairwise_similarity(v[:1]))


def test_cohesion_is_the_mean_similarity_to_the_centroid() -> None:
    rng = np.random.default_rng(3)
    v = rng.normal(size=(4, 6))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    c = v.mean(axis=0)
    assert sem.cohesion(v) == pytest.approx(float(np.mean(v @ c / np.linalg.norm(c))))
    assert sem.cohesion(v[:1]) == pytest.approx(1.0)


def test_topic_chunks_are_more_cohesive_than_mixed_ones(
    sentences_alone: sem.SemanticAnalysis, minilm: Embedder
) -> None:
    topical = sentences_alone.chunk("count", 4, **UNBOUNDED).chunks
    mixed = [" ".join(t[k] for t in TOPICS) for k in range(6)]  # one sentence per topic
    assert sem.chunk_cohesion(topical, minilm).min() > sem.chunk_cohesion(mixed, minilm).max()
    report = sem.cohesion_report(topical, minilm)
    assert report.per_chunk.shape == (4,)
    assert report.in_band == (0.3 <= report.mean_pairwise <= 0.7)
    assert "target band 0.3-0.7" in report.summary()
    spread = sem.mean_pairwise_similarity(embed_chunks(topical, minilm).vectors)
    assert spread < sem.mean_pairwise_similarity(embed_chunks(mixed, minilm).vectors)


NUMBERED = (
    "Terms and conditions.\n\n"
    "1. Source Code.\n"
    "The source code for a work means the preferred form. 2. Basic Permissions. "
    "All rights are granted.\n\n"
    "Scope.\n"
    "IV. Roman heading. Text follows.\n"
    "a) Lettered item. More text."
)
#: A sentence that is only a heading number or list marker.
MARKER_ALONE = re.compile(r"\(?(?:\d+(?:\.\d+)*|[IVXLCDMivxlcdm]+|[A-Za-z])[.)]")


def test_numbered_headings_stay_with_their_text() -> None:
    # Regression: Bling Fire cut "1. Source Code." into "1." and "Source Code.", and
    # left "IV." at the end of the previous line's sentence.
    found = [NUMBERED[a:b] for a, b in sentence_spans(NUMBERED)]
    for heading in ("1. Source Code.", "2. Basic Permissions.", "IV. Roman heading."):
        assert heading in found
    assert "Scope." in found
    assert "a) Lettered item." in found
    assert not any(MARKER_ALONE.fullmatch(s) for s in found)
    analysis = sem.analyze(NUMBERED, embedder="hash", buffer_size=0)
    assert [NUMBERED[a:b] for a, b in analysis.sentences] == found


def test_a_marker_never_joins_across_a_blank_line() -> None:
    text = "First part ends here. 3.\n\nNext paragraph."
    found = [text[a:b] for a, b in sentence_spans(text)]
    assert found[-1] == "Next paragraph."


def test_the_default_minimum_is_a_tenth_of_the_maximum() -> None:
    assert chunking.get_strategy("semantic").param("min_size").default == sem.AUTO_MIN_SIZE
    assert sem.resolve_min_size(sem.AUTO_MIN_SIZE, 512) == 52
    assert sem.resolve_min_size(sem.AUTO_MIN_SIZE, 1) == 0
    assert sem.resolve_min_size(7, 512) == 7
    # The automatic minimum never conflicts with a small maximum.
    assert Config.create("semantic", max_size=5).params["min_size"] == sem.AUTO_MIN_SIZE


@pytest.mark.slow
def test_the_default_configuration_leaves_no_tiny_chunk(minilm: Embedder) -> None:
    text = (SAMPLE_DOCS / "long_essay.txt").read_text(encoding="utf-8")
    spec = chunking.get_strategy("semantic")
    floor = sem.resolve_min_size(spec.param("min_size").default, spec.defaults()["max_size"])
    without = chunking.chunk(text, "semantic", min_size=0)
    assert min(c.size for c in without) < floor  # the cuts this default guards against
    chunks = chunking.chunk(text, "semantic")
    assert min(c.size for c in chunks) >= floor


@pytest.mark.parametrize("method", sorted(methods.THRESHOLD_RANGES))
@given(value=st.floats(-1e6, 1e6, allow_nan=False))
def test_a_bounded_threshold_is_accepted_exactly_within_its_declared_range(
    method: str, value: float
) -> None:
    # The Semantic page's sliders span these ranges: they offer what the core accepts.
    lo, hi = methods.THRESHOLD_RANGES[method]
    methods.check_threshold(method, lo)
    methods.check_threshold(method, hi)
    if lo <= value <= hi:
        methods.check_threshold(method, value)
    else:
        with pytest.raises(ValueError, match=f"{lo:g}"):
            methods.check_threshold(method, value)
