"""The recursive splitter's path for characters (positions found with ``str.find``)
against its general path (pieces listed level by level, packed by ``pack_runs``): the
same spans, in the same order, for any text, separators, size and overlap."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

import chunking
from chunking.engine.recursive import LANGCHAIN_SEPARATORS, RecursiveSplitter, overlaps_itself
from chunking.units import CharSizer


class ListedChars(CharSizer):
    """Characters, but not recognised as sized by offsets: the splitter takes its
    general path, measuring every piece."""

    def running(self, text: str, offsets: Sequence[int]) -> list[int] | None:
        return list(offsets)


CHARS = CharSizer()
SLOW = ListedChars()
#: Letters, spaces and line breaks, and the pieces of the separators below.
texts = st.text(st.sampled_from("ab \n\n\t.é😀"), min_size=1, max_size=300)
separators = st.lists(
    st.sampled_from(["\n\n", "\n", " ", ". ", "aa", "aba", "\n\n\n", "é", "b", ""]),
    min_size=1,
    max_size=5,
)


def both_paths(text: str, **options: object) -> tuple[tuple, tuple]:
    fast = RecursiveSplitter(text, CHARS, **options)  # type: ignore[arg-type]
    slow = RecursiveSplitter(text, SLOW, **options)  # type: ignore[arg-type]
    assert fast._offsets and not slow._offsets  # the two paths are taken
    return fast.split(), slow.split()


@settings(max_examples=400, deadline=None)
@given(
    text=texts,
    seps=separators,
    size=st.integers(1, 40),
    overlap_share=st.integers(0, 99),
    keep=st.sampled_from(["start", "end"]),
    strip=st.booleans(),
)
def test_the_character_path_cuts_as_the_general_path(
    text: str, seps: list[str], size: int, overlap_share: int, keep: str, strip: bool
) -> None:
    fast, slow = both_paths(
        text,
        size=size,
        overlap=size * overlap_share // 100,
        separators=seps,
        keep_separator=keep,
        strip_whitespace=strip,
    )
    assert fast == slow


@settings(max_examples=100, deadline=None)
@given(text=texts, lo=st.integers(0, 300), length=st.integers(1, 300))
def test_the_character_path_cuts_a_region_as_the_general_path(
    text: str, lo: int, length: int
) -> None:
    lo = min(lo, len(text) - 1)
    hi = min(lo + length, len(text))
    fast = RecursiveSplitter(text, CHARS, 7, 2)
    slow = RecursiveSplitter(text, SLOW, 7, 2)
    assert fast.split(lo, hi) == slow.split(lo, hi)


def test_a_run_of_line_breaks_is_cut_as_str_split_cuts_it() -> None:
    # "\n\n" overlaps itself: in "\n\n\n" str.split finds it at 0 only, not at 1
    text = "ab\n\n\nc\n\n\n\nd"
    assert overlaps_itself("\n\n") and not overlaps_itself(". ")
    fast, slow = both_paths(
        text, size=5, separators=["\n\n"], keep_separator="start", strip_whitespace=False
    )
    assert fast == slow
    assert text.split("\n\n") == ["ab", "\nc", "", "d"]
    # pieces "ab", "\n\n\nc", "\n\n", "\n\nd", packed up to 5 characters
    assert [s[:2] for s in fast[0]] == [(0, 2), (2, 6), (6, 11)]


def test_the_langchain_settings_on_a_corpus_text() -> None:
    text = ("A paragraph of words, " * 30 + "\n\n" + "line\n" * 40) * 5
    options = {"separators": list(LANGCHAIN_SEPARATORS), "keep_separator": "start"}
    fast, slow = both_paths(text, size=100, overlap=20, **options)  # type: ignore[arg-type]
    assert fast == slow
    chunks = chunking.chunk(text, "recursive", size=100, overlap=20, unit="chars", **options)
    assert [(c.start, c.end) for c in chunks] == [s[:2] for s in fast[0]]
    assert max(c.size for c in chunks) <= 100
