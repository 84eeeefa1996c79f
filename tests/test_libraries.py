"""Other libraries' chunkers as strategies: alignment, invariants, bad input."""

from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import chunking
from chunking import Config
from chunking.libraries import LIBRARIES
from chunking.libraries.align import LibraryChunk, align, flag_kind
from chunking.model import build_chunks
from chunking.units import get_sizer
from tests.conftest import ROOT, chroma_corpora, sample_paths
from tests.invariants import check_library_invariants, uncovered
from tests.test_invariants import texts

CHARS = get_sizer("chars")
NAMES = [s.name for s in LIBRARIES]
#: Strategies that cannot run on this machine (explained by a one-line message).
OFFLINE_IMPOSSIBLE = {"chonkie.code"}
RUNNABLE = [n for n in NAMES if n not in OFFLINE_IMPOSSIBLE]
#: What a library itself refuses on some inputs (its own message, passed on in one line).
#: Anything else a library raises fails the tests.
KNOWN_REFUSALS = {
    # A single character worth more tokens than chunk_size (e.g. chunk_size=1 token).
    "llamaindex.sentence": "Single token exceeded chunk size",
    "llamaindex.hierarchical": "Single token exceeded chunk size",
    # semchunk recurses without end on some texts with a token overlap.
    "semchunk": "maximum recursion depth exceeded",
}


@pytest.fixture(autouse=True, scope="module")
def quiet_llamaindex_token_warning() -> Any:
    # LlamaIndex's TokenTextSplitter logs "Got a split of size ..." with a malformed
    # call (two f-strings, no placeholder). Outside tests nothing formats it (LlamaIndex
    # logs to a NullHandler), but pytest's log capture does, and raises. The chunks are
    # fine, so this one logger is silenced while these tests run.
    logger = logging.getLogger("llama_index.core.node_parser.text.token")
    logger.disabled = True
    yield
    logger.disabled = False


def small_params(name: str) -> dict[str, Any]:
    """Parameters that make several chunks out of a sample document, fast."""
    spec = chunking.get_strategy(name)
    params: dict[str, Any] = {}
    if "model" in spec.param_names:
        params["model"] = "hash"
    if spec.limit_param:
        unit = spec.param("unit").default if "unit" in spec.param_names else "chars"
        params[spec.limit_param] = 120 if unit == "tokens" else 500
    for overlap in ("chunk_overlap", "overlap"):
        if overlap in spec.param_names and spec.limit_param:
            params[overlap] = 10
    if name == "llamaindex.hierarchical":
        params["chunk_sizes"] = "400,120,40"
    return params


def spans(pieces: list[Any]) -> list[tuple[int, int]]:
    return [(p.start, p.end) for p in pieces]


def flags(piece: Any) -> list[str]:
    return list(piece.metadata.get("flags", ()))


# --- alignment ------------------------------------------------------------------------


def test_exact_offsets_are_kept_without_flags() -> None:
    source = "One two. Three four. Five."
    found = [LibraryChunk("One two.", 0), LibraryChunk("Three four.", 9), LibraryChunk("Five.", 21)]
    pieces = align(source, found, CHARS)
    assert spans(pieces) == [(0, 8), (9, 20), (21, 26)]
    assert all(dict(p.metadata) == {} for p in pieces)


def test_a_wrong_offset_is_corrected_and_flagged_with_both_positions() -> None:
    source = "x" * 1300 + " alpha beta. gamma delta."
    right = source.index("gamma")
    found = [LibraryChunk(source[: right - 1].rstrip(), 0), LibraryChunk("gamma delta.", 1204)]
    second = align(source, found, CHARS)[1]
    assert (second.start, second.end) == (right, right + len("gamma delta."))
    assert flags(second) == [f"library offset wrong: reported 1,204, text found at {right:,}"]
    assert second.metadata["library_start"] == 1204


def test_a_missing_offset_is_flagged() -> None:
    source = "alpha beta gamma"
    pieces = align(source, [LibraryChunk("alpha", 0), LibraryChunk("beta gamma", -1)], CHARS)
    assert spans(pieces) == [(0, 5), (6, 16)]
    assert flags(pieces[1]) == ["library offset missing: reported -1, text found at 6"]


def test_repeated_text_goes_to_the_next_occurrence_not_the_first() -> None:
    # str.find would put all three on the first "ab cd."
    source = "ab cd. ab cd. ab cd."
    found = [LibraryChunk("ab cd.") for _ in range(3)]
    pieces = align(source, found, CHARS, reports_offsets=False)
    assert spans(pieces) == [(0, 6), (7, 13), (14, 20)]
    assert all(flags(p) == [] for p in pieces)
    # ... and when the library itself reported the first occurrence every time:
    reported = [LibraryChunk("ab cd.", 0) for _ in range(3)]
    pieces = align(source, reported, CHARS)
    assert spans(pieces) == [(0, 6), (7, 13), (14, 20)]
    assert flags(pieces[2]) == ["library offset wrong: reported 0, text found at 14"]


def test_an_exact_but_skipping_offset_is_moved_back_to_continue_the_sequence() -> None:
    # LangChain's TokenTextSplitter on repeated text: the slice at 26 matches, but the
    # chunk continues the first one at 5 (26 would leave "ld 日本" uncovered).
    source = "héllo wörld 日本語の文です。 " * 3
    found = [
        LibraryChunk("héllo wör", 0),
        LibraryChunk(" wörld 日本", 26),
        LibraryChunk(source[12:], 12),
    ]
    pieces = align(source, found, CHARS)
    assert spans(pieces) == [(0, 9), (5, 14), (12, 63)]
    assert flags(pieces[1])[0] == "library offset wrong: reported 26, text found at 5"
    assert not any(f.startswith("text left out") for p in pieces for f in flags(p))


def test_a_chunk_may_start_where_the_previous_one_starts() -> None:
    # LlamaIndex's hierarchical levels: the last child of one parent and the first child
    # of the next (overlapping) parent can start at the same offset.
    source = "alpha beta gamma. delta."
    found = [LibraryChunk("alpha beta", 0), LibraryChunk("alpha beta gamma. delta.", 0)]
    pieces = align(source, found, CHARS)
    assert spans(pieces) == [(0, 10), (0, 24)]
    assert not any(f.startswith("library offset") for p in pieces for f in flags(p))


def test_the_same_chunk_twice_is_the_same_span_when_there_is_no_other() -> None:
    pieces = align("alpha", [LibraryChunk("alpha", 0), LibraryChunk("alpha", 0)], CHARS)
    assert spans(pieces) == [(0, 5), (0, 5)]
    assert all(not flags(p) for p in pieces)


def test_collapsed_whitespace_is_aligned_to_the_source_and_flagged() -> None:
    source = "Intro.\n\nOne  two\nthree.\n\nEnd."
    pieces = align(source, [LibraryChunk("One two three.", 8)], CHARS)
    (piece,) = [p for p in pieces]
    assert source[piece.start : piece.end] == "One  two\nthree."
    assert "text altered: whitespace collapsed" in flags(piece)
    assert piece.metadata["library_text"] == "One two three."
    assert any(f.startswith("text left out: 6 characters before") for f in flags(piece))
    assert any(f.startswith("text left out: 4 characters after") for f in flags(piece))


def test_changed_whitespace_is_flagged_as_changed() -> None:
    source = "first line\n\nsecond line"
    (piece,) = align(
        source, [LibraryChunk("first line  \nsecond line")], CHARS, reports_offsets=False
    )
    assert (piece.start, piece.end) == (0, len(source))
    assert flags(piece) == ["text altered: whitespace changed"]


def test_a_character_cut_between_tokens_is_covered_by_both_chunks() -> None:
    source = "abc 日本語 def"
    found = [LibraryChunk("abc 日本\ufffd", 0), LibraryChunk("\ufffd def", -1)]
    pieces = align(source, found, CHARS)
    assert spans(pieces) == [(0, 7), (6, 11)]  # both hold 語
    assert flags(pieces[0])[0].startswith("text altered: a character cut between tokens")
    assert pieces[1].metadata["library_text"] == "\ufffd def"


def test_text_dropped_by_the_library_is_placed_by_its_ends_and_reported() -> None:
    source = "# Title\n\nFirst para.\n\n## Sub\n\nSecond para here.\n"
    found = [LibraryChunk("First para.\nSecond para here.")]
    (piece,) = align(source, found, CHARS, reports_offsets=False)
    assert source[piece.start : piece.end] == "First para.\n\n## Sub\n\nSecond para here."
    assert "text altered: 5 source characters left out" in flags(piece)
    assert any(
        f.startswith("text left out: 7 characters before this chunk (0-7)") for f in flags(piece)
    )
    assert piece.metadata["left_out"] == [[0, 7]]


def test_a_chunk_found_nowhere_is_kept_and_flagged_not_dropped() -> None:
    source = "alpha beta gamma"
    pieces = align(source, [LibraryChunk("alpha", 0), LibraryChunk("zzzzzz", 6)], CHARS)
    assert len(pieces) == 2
    assert (pieces[1].start, pieces[1].end) == (6, 12)
    assert flags(pieces[1])[0] == "text not found: kept at the reported offset, 6"
    assert pieces[1].metadata["library_text"] == "zzzzzz"


def test_empty_library_chunks_are_reported_on_a_neighbour() -> None:
    pieces = align("alpha beta", [LibraryChunk("alpha", 0), LibraryChunk("", 5)], CHARS)
    assert len(pieces) == 1
    assert flag_kind(flags(pieces[0])[0]) == "library returned empty chunks"


def test_a_library_that_returns_nothing_is_an_error_not_an_empty_result() -> None:
    with pytest.raises(ValueError, match="returned no chunks for this document"):
        align("alpha", [], CHARS)
    # LangChain's Markdown splitter drops a control character, here the whole document.
    with pytest.raises(ValueError, match="returned no chunks for this document"):
        chunking.chunk("\x1b", "langchain.markdown", strip_headers=False)


def test_chunks_over_the_limit_are_flagged() -> None:
    pieces = align("abcdefgh", [LibraryChunk("abcdefgh", 0)], CHARS, limit=5)
    assert flags(pieces[0]) == ["over limit: 8 chars, chunk_size is 5"]


@st.composite
def cut(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A text and consecutive, non-empty spans covering it."""
    source = draw(texts)
    cuts = sorted({0, len(source), *draw(st.lists(st.integers(0, len(source)), max_size=10))})
    return source, list(pairwise(cuts))


@given(cut())
def test_correct_offsets_are_never_moved(case: tuple[str, list[tuple[int, int]]]) -> None:
    source, cuts = case
    pieces = align(source, [LibraryChunk(source[a:b], a) for a, b in cuts], CHARS)
    # A piece of whitespace alone is no chunk: it is dropped, and a neighbour says so.
    assert spans(pieces) == [(a, b) for a, b in cuts if not source[a:b].isspace()]
    dropped = sum(source[a:b].isspace() for a, b in cuts)
    said = [f for p in pieces for f in flags(p)]
    assert len(said) == dropped
    assert all(f.startswith("library chunk dropped: whitespace alone") for f in said)
    assert all(set(p.metadata) <= {"flags"} for p in pieces)


@given(cut())
def test_collapsed_whitespace_is_placed_on_the_same_words(
    case: tuple[str, list[tuple[int, int]]],
) -> None:
    source, cuts = case
    found = [LibraryChunk(" ".join(source[a:b].split()), a) for a, b in cuts]
    pieces = align(source, [f for f in found if f.text], CHARS)
    assert len(pieces) == sum(1 for f in found if f.text)
    for piece, item in zip(pieces, [f for f in found if f.text], strict=True):
        text = source[piece.start : piece.end]
        assert text.split() == item.text.split() or "text not found" in flags(piece)[0]
        if text != item.text:
            assert piece.metadata["library_text"] == item.text
            assert any(f.startswith(("text altered", "text not found")) for f in flags(piece))


# --- placed in order, on repetitive text ----------------------------------------------

#: One 118-character paragraph (with its blank line), as in a contract or a licence.
PARAGRAPH = (
    "The licensee may renew this agreement each year by written notice sent to the "
    "licensor at least ninety days earlier.\n\n"
)
#: Japanese with a ZWJ family emoji, Arabic, combining accents, CRLF line ends.
MULTI_SCRIPT = (
    "日本語の文章です。家族👨\u200d👩\u200d👧\u200d👦と旅行しました。\r\n"
    "مرحبا بالعالم، هذه جملة عربية قصيرة.\r\n"
    "Cafe\u0301 au lait, cre\u0300me bru\u0302le\u0301e et re\u0301sume\u0301.\r\n"
)


def test_a_repeated_paragraph_is_not_said_to_be_left_out_by_llamaindex_sentence() -> None:
    # LlamaIndex reports its second chunk at the first place its text occurs (69 in
    # the issue); placed in order, it ends at the document's end and covers the rest.
    assert len(PARAGRAPH) == 118
    text = PARAGRAPH * 60
    assert len(text) == 7_080
    config = Config.create("llamaindex.sentence")
    chunks = chunking.run(text, config)
    assert len(chunks) >= 2
    assert not [f for c in chunks for f in c.flags if f.startswith("text left out")]
    assert chunks[-1].end == len(text.rstrip())
    check_library_invariants(text, chunks, config)
    assert uncovered(text, chunks) == []
    expected = _library_texts(
        "llamaindex.sentence", text, {"chunk_size": 1024, "chunk_overlap": 200}
    )
    assert [c.metadata.get("library_text", c.text) for c in chunks] == expected


@pytest.mark.parametrize("name", ["llamaindex.token", "llamaindex.hierarchical"])
def test_repeated_multi_script_text_is_not_said_to_be_left_out(name: str) -> None:
    text = MULTI_SCRIPT * 40
    config = Config.create(name)
    chunks = chunking.run(text, config)
    assert len({c.start for c in chunks}) >= 3
    assert not [f for c in chunks for f in c.flags if f.startswith("text left out")]
    check_library_invariants(text, chunks, config)
    assert uncovered(text, chunks) == []
    if name == "llamaindex.hierarchical":  # every child inside its parent
        for c in chunks:
            parent = c.metadata["parent"]
            if parent is not None:
                assert chunks[parent].start <= c.start and c.end <= chunks[parent].end


def least_left_out(source: str, texts: list[str]) -> int:
    """The fewest non-whitespace characters left uncovered by any placement of
    ``texts`` on occurrences of them with starts in order (an exhaustive search over
    (chunk, start, reach) states, to compare with :mod:`chunking.libraries.align`)."""
    solid = [0]
    for ch in source:
        solid.append(solid[-1] + (not ch.isspace()))

    def gap(lo: int, hi: int) -> int:
        return solid[hi] - solid[lo] if hi > lo else 0

    places = [
        [i for i in range(len(source) - len(t) + 1) if source.startswith(t, i)] for t in texts
    ]

    @functools.cache
    def best(k: int, start: int, reach: int) -> int:
        if k == len(texts):
            return gap(reach, len(source))
        return min(
            (
                gap(reach, i) + best(k + 1, i, max(reach, i + len(texts[k])))
                for i in places[k]
                if i >= start
            ),
            default=len(source) + 1,  # no place in order: not a placement
        )

    return best(0, 0, 0)


@st.composite
def repetitive_chunks(draw: st.DrawFn) -> tuple[str, list[LibraryChunk]]:
    """A periodic text (a random unit repeated a random number of times, with or
    without a head and a tail) and chunks of it in order, as a library could return them:
    overlapping, with gaps, with the right offset, the first occurrence's, a wrong one
    or none."""
    # At most 32 characters: within the bounds where the search is exhaustive
    # (chunking.libraries.align: _BEAM placements, _WORK pairs).
    unit = draw(st.text(alphabet="ab é\n", min_size=1, max_size=5))
    head, tail = draw(st.sampled_from(["", "x", " "])), draw(st.sampled_from(["", "y", " "]))
    source = head + unit * draw(st.integers(1, 6)) + tail
    assume(source.strip())
    cuts = sorted(
        draw(
            st.lists(
                st.tuples(st.integers(0, len(source) - 1), st.integers(1, 12)),
                min_size=1,
                max_size=5,
            )
        )
    )
    found = []
    for start, length in cuts:
        text = source[start : start + length]
        offset = draw(
            st.sampled_from([start, source.find(text), None, draw(st.integers(-1, len(source)))])
        )
        found.append(LibraryChunk(text, offset))
    return source, found


@given(repetitive_chunks())
def test_placed_in_order_the_flagged_left_out_text_is_minimal(
    case: tuple[str, list[LibraryChunk]],
) -> None:
    source, found = case
    if all(f.text.isspace() for f in found):
        with pytest.raises(ValueError, match="left all of its text out"):
            align(source, found, CHARS)
        return
    pieces = align(source, found, CHARS)
    chunks = build_chunks(source, pieces, CHARS)
    # In order: no chunk moved, every one the exact slice of its own text.
    assert all(
        "library_index" not in c.metadata and "library_text" not in c.metadata for c in chunks
    )
    missing = uncovered(source, chunks)
    assert len(missing) == least_left_out(source, [f.text for f in found])
    assert not any(f.startswith("placement capped") for c in chunks for f in c.flags)
    flagged = {i for c in chunks for a, b in c.metadata.get("left_out", ()) for i in range(a, b)}
    assert set(missing) <= flagged
    assert all(source[i].isspace() or i in missing for i in flagged)


# --- every engine on every document -----------------------------------------------------


@pytest.mark.parametrize("name", RUNNABLE)
@pytest.mark.parametrize("path", sample_paths(), ids=lambda p: p.name)
def test_every_engine_keeps_its_promises_on_every_sample(name: str, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    config = Config.create(name, **small_params(name))
    chunks = chunking.run(text, config)
    assert chunks
    check_library_invariants(text, chunks, config)


@pytest.mark.parametrize("name", RUNNABLE)
@given(data=st.data(), text=texts)
def test_every_engine_keeps_its_promises_on_awkward_text(
    name: str, data: st.DataObject, text: str
) -> None:
    config = data.draw(library_configs(name))
    try:
        chunks = chunking.run(text, config)
    except ValueError as exc:
        refusal = KNOWN_REFUSALS.get(name)
        # "no chunks" is an answer only for text with nothing to cut
        nothing = "the library returned no chunks" in str(exc) and not text.strip()
        assert nothing or (refusal and refusal in str(exc)), f"{name} failed: {exc}"
        assert "\n" not in str(exc)
        return
    check_library_invariants(text, chunks, config)


@st.composite
def library_configs(draw: st.DrawFn, name: str) -> Config:
    spec = chunking.get_strategy(name)
    values: dict[str, Any] = {}
    if "model" in spec.param_names:
        values["model"] = "hash"
    if "unit" in spec.param_names:
        values["unit"] = draw(st.sampled_from(spec.param("unit").choices))
    if spec.limit_param:
        values[spec.limit_param] = draw(st.integers(1, 80))
        for overlap in ("chunk_overlap", "overlap"):
            if overlap in spec.param_names:
                values[overlap] = draw(st.integers(0, max(0, values[spec.limit_param] // 2)))
    if name == "llamaindex.hierarchical":
        values["chunk_sizes"] = draw(st.sampled_from(["60,20", "80,30,10", "40"]))
        values["chunk_overlap"] = draw(st.integers(0, 5))
    if name == "langchain.markdown":
        values["strip_headers"] = draw(st.booleans())
    try:
        return Config.create(name, **values)
    except ValueError:
        assume(False)
        raise


# --- the library's own chunks, none lost ------------------------------------------------


def _library_texts(name: str, text: str, p: dict[str, Any]) -> list[str]:
    """The chunk texts the library gives when called directly, as a user would."""
    if name == "semchunk":
        import semchunk

        from chunking.libraries.semchunk import token_counter

        return semchunk.chunkerify(token_counter("tokens"), p["chunk_size"])(
            text, overlap=p["overlap"]
        )
    if name == "text-splitter":
        from semantic_text_splitter import TextSplitter

        return TextSplitter(p["capacity"], overlap=p["overlap"]).chunks(text)
    if name == "langchain.recursive":
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(
            chunk_size=p["chunk_size"], chunk_overlap=p["chunk_overlap"]
        )
        return splitter.split_text(text)
    if name == "chonkie.recursive":
        from chonkie import RecursiveChunker

        return [c.text for c in RecursiveChunker(chunk_size=p["chunk_size"]).chunk(text)]
    if name == "llamaindex.sentence":
        from llama_index.core.node_parser import SentenceSplitter

        from chunking.units import get_encoding

        splitter = SentenceSplitter(
            chunk_size=p["chunk_size"],
            chunk_overlap=p["chunk_overlap"],
            tokenizer=get_encoding().encode_ordinary,
        )
        return splitter.split_text(text)
    raise AssertionError(name)


@pytest.mark.parametrize(
    "name",
    [
        "semchunk",
        "text-splitter",
        "langchain.recursive",
        "chonkie.recursive",
        "llamaindex.sentence",
    ],
)
@pytest.mark.parametrize("path", [*sample_paths(), *chroma_corpora()[:1]], ids=lambda p: p.name)
def test_every_library_chunk_is_there_with_the_library_text(name: str, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    params = small_params(name)
    chunks = chunking.chunk(text, name, **params)
    expected = _library_texts(name, text, params)
    assert [c.metadata.get("library_text", c.text) for c in chunks] == expected


def test_langchain_token_offsets_that_langchain_gets_wrong_are_flagged() -> None:
    text = "héllo wörld 日本語の文です。 " * 6
    chunks = chunking.chunk(text, "langchain.token", chunk_size=5, chunk_overlap=2)
    kinds = {flag_kind(f) for c in chunks for f in c.flags}
    assert {"library offset wrong", "library offset missing", "text altered"} <= kinds
    config = Config.create("langchain.token", chunk_size=5, chunk_overlap=2)
    check_library_invariants(text, chunks, config)


def test_langchain_start_index_minus_one_with_token_length_and_overlap_is_flagged() -> None:
    # LangChain counts the overlap in tokens but searches for start_index in characters.
    path = next(p for p in chroma_corpora() if p.name == "state_of_the_union.md")
    text = path.read_text(encoding="utf-8")
    config = Config.create("langchain.recursive", unit="tokens", chunk_size=200, chunk_overlap=20)
    chunks = chunking.run(text, config)
    missing = [c for c in chunks if any(f.startswith("library offset missing") for f in c.flags)]
    assert missing
    assert all(c.metadata["library_start"] == -1 for c in missing)
    check_library_invariants(text, chunks, config)


def test_markdown_headers_left_in_metadata_are_reported_as_left_out() -> None:
    text = "# Title\n\nIntro text.\n\n## Part\n\nBody text.\n"
    chunks = chunking.chunk(text, "langchain.markdown", chunk_size=100, chunk_overlap=0)
    assert [c.text for c in chunks] == ["Intro text.", "Body text."]
    assert chunks[1].metadata["header_path"] == ["Title", "Part"]
    assert "text left out: 7 characters before this chunk (22-29)" in chunks[1].flags


def test_hierarchical_levels_and_parents() -> None:
    text = (ROOT / "sample_docs" / "long_essay.txt").read_text(encoding="utf-8")
    chunks = chunking.chunk(text, "llamaindex.hierarchical", chunk_sizes="400,100")
    levels = {c.metadata["level"] for c in chunks}
    assert levels == {0, 1}
    for c in chunks:
        parent = c.metadata["parent"]
        if c.metadata["level"] == 0:
            assert parent is None
        else:
            assert chunks[parent].metadata["level"] == 0
            assert chunks[parent].start <= c.start and c.end <= chunks[parent].end


# --- side effects -----------------------------------------------------------------------


def test_llamaindex_prints_nothing_on_stdout_and_sets_nothing_global(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import llama_index.core
    from llama_index.core import Settings

    # Start from LlamaIndex's own initial state whatever ran before in this worker.
    monkeypatch.setattr(llama_index.core, "global_tokenizer", None)
    before = dict(os.environ)
    chunks = chunking.chunk(
        "One sentence. " * 40, "llamaindex.sentence", chunk_size=20, chunk_overlap=0
    )
    out, err = capfd.readouterr()
    assert len(chunks) > 1
    assert out == ""
    assert "Metadata length" in err  # LlamaIndex's own warning, moved to stderr
    assert llama_index.core.global_tokenizer is None
    assert Settings._embed_model is None
    assert dict(os.environ) == before


# --- bad input --------------------------------------------------------------------------


def test_an_unknown_library_parameter_is_refused_with_the_library_names() -> None:
    with pytest.raises(ValueError) as info:
        Config.create("langchain.recursive", size=400)
    message = str(info.value)
    assert "\n" not in message
    assert "unknown parameter 'size'" in message
    assert "chunk_size, chunk_overlap" in message


def test_library_checks_refuse_an_overlap_above_the_size() -> None:
    with pytest.raises(ValueError, match=r"chunk_overlap \(500\) must be at most chunk_size"):
        Config.create("langchain.recursive", chunk_size=400, chunk_overlap=500)


MISSING = """
import json, sys
sys.modules[{module!r}] = None
import chunking
try:
    chunking.chunk("One. Two.", {name!r})
except ValueError as exc:
    print(json.dumps(str(exc)))
"""


@pytest.mark.parametrize(
    ("name", "module", "package"),
    [
        ("langchain.recursive", "langchain_text_splitters", "langchain-text-splitters"),
        ("llamaindex.sentence", "llama_index.core.node_parser", "llama-index-core"),
        ("chonkie.token", "chonkie", "chonkie"),
        ("semchunk", "semchunk", "semchunk"),
        ("text-splitter", "semantic_text_splitter", "semantic-text-splitter"),
    ],
)
def test_a_missing_library_gives_one_line_naming_the_extra(
    name: str, module: str, package: str
) -> None:
    code = MISSING.format(module=module, name=name)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    message = json.loads(out.stdout.strip().splitlines()[-1])
    assert "\n" not in message
    assert package in message
    assert "pip install 'chunk-explorer[engines]'" in message


def test_chonkie_code_says_in_one_line_why_it_cannot_run_offline() -> None:
    with pytest.raises(ValueError) as info:
        chunking.chunk("def f():\n    return 1\n", "chonkie.code")
    message = str(info.value)
    assert "\n" not in message
    assert "tree-sitter-language-pack" in message
    assert "offline" in message


def test_the_cli_runs_a_library_engine() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "chunking.cli",
            "split",
            str(ROOT / "sample_docs" / "long_essay.txt"),
            "--strategy",
            "langchain.recursive",
            "--param",
            "chunk_size=400",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) > 100
    assert max(r["size"] for r in rows) <= 400


def test_stdout_comes_back_when_overlapping_library_calls_end_in_any_order() -> None:
    from chunking.libraries.common import prints_to_stderr

    original = sys.stdout
    first, second = prints_to_stderr(), prints_to_stderr()
    first.__enter__()
    second.__enter__()
    assert sys.stdout is sys.stderr
    first.__exit__(None, None, None)  # the first call ends first
    assert sys.stdout is sys.stderr
    second.__exit__(None, None, None)
    assert sys.stdout is original


def test_a_chunk_placed_on_whitespace_alone_passes_its_findings_on() -> None:
    # Regression (found by the repetitive accented text of the property tests): LangChain's
    # Markdown splitter re-joins lines, so one-character chunks of a repeated sentence
    # were placed on spaces; those pieces are dropped (no chunk is whitespace alone) and
    # took their "text left out" flags with them.
    text = "\n\n".join(["Élève à l'école."] * 3)
    config = Config.create("langchain.markdown", chunk_size=1, chunk_overlap=0)
    chunks = chunking.run(text, config)
    check_library_invariants(text, chunks, config)
    assert any(
        f.startswith("library chunk dropped: whitespace alone") for c in chunks for f in c.flags
    )
