"""The packing engine (chunking.engine.packing): run sizes and the one greedy loop."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.engine.packing import RunSizes, pack_runs
from chunking.engine.recursive import Occurrences
from chunking.engine.sections import WORDS, SpanSplitter
from chunking.engine.segments import pack_spans
from chunking.units import CharSizer, Sizer, WordSizer, as_sizer, get_sizer


def words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


class CountingChars:
    """Characters, counting how often text is measured; knows nothing but ``size``."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def size(self, text: str) -> int:
        self.calls += 1
        return len(text)


class Square:
    """Not additive: a sum of segment sizes underestimates the joined text."""

    name = "square"

    def size(self, text: str) -> int:
        return len(text) ** 2


# --- sizers -------------------------------------------------------------------------


def test_sizers_answer_what_the_engine_asks() -> None:
    chars, words_, tokens = get_sizer("chars"), get_sizer("words"), get_sizer("tokens")
    assert chars.additive and chars.exact_joins
    assert not words_.additive and words_.exact_joins
    assert not tokens.additive and not tokens.exact_joins
    assert tokens.fits_quickly(10, 40) and not tokens.fits_quickly(11, 40)
    assert chars.fits_quickly(40, 40) and not chars.fits_quickly(41, 40)


def test_a_unit_that_only_answers_size_gets_safe_defaults() -> None:
    plain = as_sizer(Square())
    assert isinstance(plain, Sizer)
    assert plain.name == "square" and plain.size("abc") == 9
    assert not plain.additive and not plain.exact_joins
    assert plain.max_per_char is None and not plain.fits_quickly(1, 10**9)
    assert plain.running("abc", [0, 3]) is None
    assert plain.join("a\nb", 1, 2) == 1  # a newline between segments is measured
    assert plain.join("a b", 1, 2) == 0  # a plain space is not
    assert as_sizer(CharSizer()).__class__ is CharSizer


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .\n\t", max_size=40), st.data())
def test_word_joins_are_exact(text: str, data: st.DataObject) -> None:
    """Words are not additive ("a" + "b" is one word), but their joins are exact."""
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=8))))
    bounds = [0, *cuts, len(text)]
    spans = [(a, b) for a, b in pairwise(bounds) if b > a]
    if not spans:
        return
    runs = RunSizes.of(text, spans, WordSizer())
    assert runs.exact
    for i in range(len(spans)):
        for j in range(i, len(spans)):
            assert runs.estimate(i, j) == len(text[spans[i][0] : spans[j][1]].split())


def test_additive_run_sizes_come_from_offsets() -> None:
    text = "aa bbb c dddd"
    runs = RunSizes.of(text, words(text), CharSizer())
    assert runs.exact
    assert [runs.measure(0, j) for j in range(4)] == [2, 6, 8, 13]
    assert runs.estimate(1, 2) == len("bbb c")


def test_measured_sizes_are_cached() -> None:
    text = "one two three four"
    sizer = CountingChars()
    runs = RunSizes.of(text, words(text), sizer)
    assert not runs.exact  # nothing says this unit is additive
    after_segments = sizer.calls
    assert runs.measure(0, 2) == len("one two three")
    assert runs.measure(0, 2) == len("one two three")
    assert runs.measure(1, 1) == 3  # segment sizes are remembered from the start
    assert sizer.calls == after_segments + 1


# --- the loop -------------------------------------------------------------------------


def chunks_of(text: str, runs: RunSizes, found: list[tuple[int, int, int]]) -> list[str]:
    return [text[runs.starts[i] : runs.ends[j]] for i, j, _ in found]


def test_greedy_loop_without_overlap() -> None:
    text = "aa bb cc dd ee"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 8))
    assert chunks_of(text, runs, found) == ["aa bb cc", "dd ee"]
    assert [n for _, _, n in found] == [8, 5]


def test_overlap_by_size() -> None:
    text = "aa bb cc dd ee ff"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 8, overlap_size=4))
    # "bb cc" (5) is over the overlap size: only "cc" is repeated
    assert chunks_of(text, runs, found) == ["aa bb cc", "cc dd ee", "ee ff"]
    five = list(pack_runs(runs, 8, overlap_size=5))
    assert chunks_of(text, runs, five) == ["aa bb cc", "bb cc dd", "cc dd ee", "dd ee ff"]
    # the overlap also leaves room for the next segment: "cc dd" + " eeeee" is too long
    text = "aa bb cc dd eeeee"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 10, overlap_size=5))
    assert chunks_of(text, runs, found) == ["aa bb cc", "bb cc dd", "dd eeeee"]


def test_overlap_by_count() -> None:
    text = "a b c d e f"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 5, overlap_size=None, overlap_count=1))
    assert chunks_of(text, runs, found) == ["a b c", "c d e", "e f"]
    two = list(pack_runs(runs, 7, overlap_size=None, overlap_count=2))
    assert chunks_of(text, runs, list(pack_runs(runs, 7))) == ["a b c d", "e f"]
    assert chunks_of(text, runs, two) == ["a b c d", "c d e f"]


def test_every_chunk_brings_a_new_segment() -> None:
    """Unbounded overlap still moves on: starts strictly increase."""
    text = "a b c d e"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 3, overlap_size=None, overlap_count=None))
    assert chunks_of(text, runs, found) == ["a b", "b c", "c d", "d e"]
    starts = [i for i, _, _ in found]
    assert starts == sorted(set(starts))


def test_joinable_keeps_segments_apart() -> None:
    text = "a b c d"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 100, joinable=lambda first, k: k != 2))
    assert chunks_of(text, runs, found) == ["a b", "c d"]


def test_verify_mode_holds_the_limit_on_the_real_text() -> None:
    """The estimate (sum of squares) is far below the real size (square of the sum);
    verify mode measures, trust mode believes the estimate."""
    text = "ab cd ef gh"
    runs = RunSizes.of(text, words(text), Square())
    verified = list(pack_runs(runs, 25))
    assert chunks_of(text, runs, verified) == ["ab cd", "ef gh"]
    assert all(
        n == len(c) ** 2 <= 25
        for (_, _, n), c in zip(verified, chunks_of(text, runs, verified), strict=True)
    )
    trusted = list(pack_runs(runs, 25, verify=False))
    assert chunks_of(text, runs, trusted) == ["ab cd ef gh"]  # 4 * 4 + 3 joins of 0
    assert trusted[0][2] == 16


def test_verify_mode_grows_past_a_high_estimate() -> None:
    """Tokens: a newline join is estimated as its own token, the real text may merge;
    whatever the estimate, a chunk is the largest run that really fits."""
    sizer = get_sizer("tokens")
    text = "\n".join(["hello world"] * 30)
    spans = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)]
    runs = RunSizes.of(text, spans, sizer)
    for limit in (5, 8, 17, 40):
        found = list(pack_runs(runs, limit))
        for i, j, n in found:
            assert n == sizer.size(text[spans[i][0] : spans[j][1]]) <= limit
            if j + 1 < len(spans):
                assert sizer.size(text[spans[i][0] : spans[j + 1][1]]) > limit


def test_langchain_mode_trusts_sizes_and_separator_joins() -> None:
    """LangChain's merge: sizes are summed with one separator length per join."""
    spans = [(0, 3), (4, 7), (8, 11), (12, 15)]
    runs = RunSizes.from_sizes(spans, [3, 3, 3, 3], joins=1)
    assert runs.exact and runs.estimate(0, 1) == 7
    found = list(pack_runs(runs, 7, verify=False, overlap_size=3))
    assert [(i, j) for i, j, _ in found] == [(0, 1), (1, 2), (2, 3)]
    assert [n for _, _, n in found] == [7, 7, 7]


def test_pack_spans_with_a_unit_that_only_answers_size() -> None:
    text = "ab cd ef gh ij"
    pieces = list(pack_spans(text, words(text), Square(), 25, kind="word"))
    assert [text[p.start : p.end] for p in pieces] == ["ab cd", "ef gh", "ij"]
    assert [p.metadata["words"] for p in pieces] == [2, 2, 1]


def test_additive_units_never_measure_text_while_packing() -> None:
    class Chars(CharSizer):
        calls = 0

        def size(self, text: str) -> int:
            Chars.calls += 1
            return len(text)

    text = " ".join(["word"] * 200)
    list(pack_spans(text, words(text), Chars(), 50, kind="word", overlap_segments=2))
    assert Chars.calls == 0  # running counts are the offsets


def test_alone_segments_stand_alone_and_stop_overlap() -> None:
    text = "a b LONG c d"
    runs = RunSizes.of(text, words(text), CharSizer())
    found = list(pack_runs(runs, 3, overlap_size=None, overlap_count=None, alone=[2]))
    assert chunks_of(text, runs, found) == ["a b", "LONG", "c d"]
    assert found[1] == (2, 2, 4)  # over the limit, on its own, with its size


def test_sections_fill_token_chunks_whatever_the_estimate() -> None:
    """Regression: the section splitter estimated one token per join and only backed
    off, so with words (a space merges into the next token) its token chunks were half
    full. Verify mode grows on real sizes: no chunk could take the next word."""
    sizer = get_sizer("tokens")
    text = " ".join(["alpha", "beta", "gamma", "delta"] * 30)
    splitter = SpanSplitter(text, sizer, 20, 0, levels=(WORDS,))
    pieces = list(splitter.split(0, len(text), {}))
    word_ends = [end for _, end in words(text)]
    assert len(pieces) == 6
    for p in pieces[:-1]:
        assert sizer.size(text[p.start : p.end]) <= 20
        next_end = min(e for e in word_ends if e > p.end)
        assert sizer.size(text[p.start : next_end]) > 20


def test_grouping_keeps_oversized_spans_apart() -> None:
    text = "aa bb " + "x" * 30 + " cc dd"
    splitter = SpanSplitter(text, CharSizer(), 6, 0)
    spans = [(a, b, b - a) for a, b in words(text)]
    assert splitter.group(spans) == [(0, 1, 5), (2, 2, 30), (3, 4, 5)]
    assert splitter.group(spans, joinable=lambda first, k: k != 1) == [
        (0, 0, 2),
        (1, 1, 2),
        (2, 2, 30),
        (3, 4, 5),
    ]


# --- property ---------------------------------------------------------------------------


@st.composite
def segment_lists(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    parts = draw(st.lists(st.text(alphabet="abc", min_size=1, max_size=6), min_size=1, max_size=25))
    gaps = draw(
        st.lists(
            st.sampled_from([" ", "\n", "  ", "\n\n"]), min_size=len(parts), max_size=len(parts)
        )
    )
    text, spans = "", []
    for part, gap in zip(parts, gaps, strict=True):
        spans.append((len(text), len(text) + len(part)))
        text += part + gap
    return text, spans


@settings(max_examples=300, deadline=None)
@given(
    segment_lists(),
    st.sampled_from(["chars", "words", "tokens", "square"]),
    st.integers(1, 60),
    st.one_of(st.none(), st.integers(0, 30)),
    st.one_of(st.none(), st.integers(0, 4)),
    st.booleans(),
)
def test_engine_properties(
    segments: tuple[str, list[tuple[int, int]]],
    unit: str,
    limit: int,
    overlap_size: int | None,
    overlap_count: int | None,
    verify: bool,
) -> None:
    text, spans = segments
    sizer = Square() if unit == "square" else get_sizer(unit)
    runs = RunSizes.of(text, spans, sizer)
    fitting = [runs.measure(k, k) <= limit for k in range(len(spans))]
    hi = fitting.index(False) if False in fitting else len(spans)
    found = list(
        pack_runs(
            runs,
            limit,
            0,
            hi,
            verify=verify,
            overlap_size=overlap_size,
            overlap_count=overlap_count,
        )
    )
    if hi == 0:
        assert found == []
        return
    size_of = runs.measure if verify else runs.estimate  # what the loop decides on
    assert found[0][0] == 0 and found[-1][1] == hi - 1  # all covered, in order
    for (i, j, _), (i2, j2, _) in pairwise(found):
        assert i2 > i and j2 > j  # strictly increasing starts, at least one new segment
        assert i2 <= j + 1  # no segment skipped
        repeated = j - i2 + 1
        if overlap_count is not None:
            assert repeated <= overlap_count
        if repeated and overlap_size is not None:
            assert size_of(i2, j) <= overlap_size
        if not repeated and j > i:  # no overlap: the bounds or the room forbade one
            assert (
                overlap_count == 0
                or (overlap_size is not None and size_of(j, j) > overlap_size)
                or size_of(j, j + 1) > limit
            )
    for i, j, n in found:
        assert n == size_of(i, j)
        if j + 1 < hi:
            assert size_of(i, j + 1) > limit  # greedy: the next segment did not fit
        if verify or runs.exact:  # the limit holds on the real text
            chunk = text[spans[i][0] : spans[j][1]]
            assert (len(chunk) if unit == "chars" else sizer.size(chunk)) == n <= limit
        else:
            assert n <= limit or i == j


# --- the recursive splitter's fast paths ------------------------------------------------


@given(
    sizes=st.lists(st.integers(0, 12), min_size=1, max_size=60),
    limit=st.integers(1, 30),
    overlap=st.integers(0, 15),
    data=st.data(),
)
def test_growing_by_bisection_packs_as_stepping_does(
    sizes: list[int], limit: int, overlap: int, data: st.DataObject
) -> None:
    spans = [(2 * k, 2 * k + 1) for k in range(len(sizes))]
    alone = sorted(data.draw(st.sets(st.integers(0, len(sizes) - 1))))
    runs = RunSizes.from_sizes(spans, sizes, joins=data.draw(st.integers(0, 2)))
    assert runs.monotone
    stepping = RunSizes(runs.starts, runs.ends, runs.first, runs.last)
    assert not stepping.monotone
    for verify in (False, True):
        leap = list(pack_runs(runs, limit, verify=verify, overlap_size=overlap, alone=alone))
        step = list(pack_runs(stepping, limit, verify=verify, overlap_size=overlap, alone=alone))
        assert leap == step


@given(
    text=st.text(st.sampled_from("ab\n. "), max_size=80),
    separator=st.sampled_from(["\n\n", "\n", ". ", " ", "aa", "aba", "\n\n\n", "aaaaab"]),
    data=st.data(),
)
def test_separators_are_found_where_str_split_finds_them(
    text: str, separator: str, data: st.DataObject
) -> None:
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    region = Occurrences(text, lo, hi)
    a = data.draw(st.integers(lo, hi))
    b = data.draw(st.integers(a, hi))
    found = [m.start() + a for m in re.finditer(re.escape(separator), text[a:b])]
    assert region.within(separator, a, b).tolist() == found
    assert len(text[a:b].split(separator)) == len(found) + 1
