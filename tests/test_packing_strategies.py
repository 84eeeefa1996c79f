"""Packing strategies: sentence, paragraph, conversation and parent-child chunking."""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Chunk, Config, chunk, run
from chunking.engine.segments import pack_spans
from chunking.engine.spans import paragraph_spans, sentence_spans
from chunking.splitters.conversation import NO_CHAT_NOTE, detect_messages
from chunking.splitters.hierarchy import parse_child_sizes
from chunking.units import get_sizer

SAMPLES = Path(__file__).resolve().parent.parent / "sample_docs"
MINE = ("sentence", "paragraph", "conversation", "hierarchy")


def assert_valid(text: str, chunks: list[Chunk], limit: int) -> None:
    """The invariants every strategy promises."""
    assert chunks, "no chunks for a non-empty document"
    covered = bytearray(len(text))
    previous = -1
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert c.end > c.start
        assert c.start >= previous
        previous = c.start
        if c.size > limit:
            assert any(f.startswith("over limit:") for f in c.flags), c
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    missed = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missed, f"characters not covered: {missed[:10]}"


def within(chunk_: Chunk, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [s for s in spans if chunk_.start <= s[0] and s[1] <= chunk_.end]


# --- the packer ----------------------------------------------------------------------


class SquareSizer:
    """Super-additive: a sum of segment sizes underestimates the joined text."""

    name = "square"

    def size(self, text: str) -> int:
        return len(text) ** 2


class DistinctSizer:
    """Sub-additive: a sum of segment sizes overestimates the joined text."""

    name = "distinct"

    def size(self, text: str) -> int:
        return len(set(text))


def segments(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def test_pack_spans_fills_chunks_with_whole_segments() -> None:
    text = "aa bb cc dd ee ff gg"
    spans = segments(text)
    pieces = list(pack_spans(text, spans, get_sizer("chars"), 8, kind="word"))
    assert [text[p.start : p.end] for p in pieces] == ["aa bb cc", "dd ee ff", "gg"]
    assert [p.metadata["words"] for p in pieces] == [3, 3, 1]
    assert all(p.metadata["boundary"] == "word" for p in pieces)


@pytest.mark.parametrize("sizer", [SquareSizer(), DistinctSizer()], ids=lambda s: s.name)
def test_pack_spans_limit_is_exact_and_chunks_maximal_when_sizes_do_not_add_up(sizer) -> None:
    text = "abc abd aec fgh ijk aaa bbb ccc abcdefg hij"
    spans = segments(text)
    limit = 60 if sizer.name == "square" else 7
    pieces = list(pack_spans(text, spans, sizer, limit, kind="word"))
    starts = [s for s, _ in spans]
    assert pieces[0].start == 0
    for p, following in pairwise(pieces):
        assert sizer.size(text[p.start : p.end]) <= limit
        assert p.size == sizer.size(text[p.start : p.end])
        # maximal: the next segment would not have fitted
        nxt = starts.index(following.start)
        assert sizer.size(text[p.start : spans[nxt][1]]) > limit
    assert pieces[-1].end == len(text)


def test_pack_spans_overlap_repeats_last_segments() -> None:
    text = " ".join(f"w{i}" for i in range(10))  # every segment is 2 chars
    spans = segments(text)
    pieces = list(pack_spans(text, spans, get_sizer("chars"), 11, kind="word", overlap_segments=2))
    for a, b in pairwise(pieces):
        previous_words = text[a.start : a.end].split()
        assert text[b.start : b.end].split()[:2] == previous_words[-2:]
        assert b.metadata["repeated"] == 2
    assert pieces[-1].end == len(text)


def test_pack_spans_overlap_never_stalls_or_duplicates() -> None:
    text = " ".join(f"w{i}" for i in range(12))
    spans = segments(text)
    # two segments fit; asking to repeat 5 must still move forward one segment at least
    pieces = list(pack_spans(text, spans, get_sizer("chars"), 5, kind="word", overlap_segments=5))
    assert len({(p.start, p.end) for p in pieces}) == len(pieces)
    assert all(a.start < b.start and a.end < b.end for a, b in pairwise(pieces))
    assert pieces[-1].end == len(text)


def test_pack_spans_overlap_by_size_caps_repeated_text() -> None:
    text = "a bb ccc dddd e ff ggg hhhh"
    spans = segments(text)
    pieces = list(
        pack_spans(
            text, spans, get_sizer("chars"), 12, kind="word", overlap_segments=None, overlap_size=4
        )
    )
    for a, b in pairwise(pieces):
        shared = a.end - b.start
        assert shared <= 4
    assert any(p.metadata["repeated"] > 0 for p in pieces)


def test_pack_spans_splits_an_oversized_segment_and_keeps_all_text() -> None:
    text = "short. " + "x" * 25 + " tail."
    spans = [(0, 6), (7, 32), (33, 38)]
    pieces = list(pack_spans(text, spans, get_sizer("chars"), 10, kind="sentence"))
    assert_valid(
        text,
        [
            Chunk(i, p.start, p.end, text[p.start : p.end], p.end - p.start, p.metadata)
            for i, p in enumerate(pieces)
        ],
        10,
    )
    split = [p for p in pieces if p.metadata.get("split_from") == "sentence"]
    assert len(split) == 3
    assert all(p.metadata["boundary"] == "size" for p in split)
    assert "".join(text[p.start : p.end] for p in split) == "x" * 25


def test_pack_spans_rejects_unordered_segments() -> None:
    with pytest.raises(ValueError, match="in order"):
        list(pack_spans("ab cd", [(3, 5), (0, 2)], get_sizer("chars"), 5, kind="word"))


# --- sentence packing ------------------------------------------------------------------

SENTENCES = (
    "The river rose overnight. Farmers moved their cattle to higher ground! "
    "Did the bridge hold? Engineers inspected it at dawn. "
    "They found cracks in two pillars. Traffic was diverted for a week.\n\n"
    "Rain is expected again on Friday. The council has opened a shelter."
)


@pytest.mark.parametrize(("unit", "size"), [("chars", 90), ("tokens", 20), ("words", 15)])
def test_sentence_chunks_start_and_end_on_sentence_boundaries(unit: str, size: int) -> None:
    chunks = chunk(SENTENCES, "sentence", size=size, unit=unit)
    assert_valid(SENTENCES, chunks, size)
    spans = sentence_spans(SENTENCES)
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    assert len(chunks) > 2
    for c in chunks:
        assert c.start in starts and c.end in ends, c.text
        assert c.metadata["boundary"] == "sentence"
        assert c.metadata["sentences"] == len(within(c, spans))


@pytest.mark.parametrize(("unit", "size"), [("chars", 110), ("tokens", 26)])
@pytest.mark.parametrize("overlap", [1, 2])
def test_sentence_overlap_repeats_the_last_sentences(unit: str, size: int, overlap: int) -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(12))
    spans = sentence_spans(text)
    chunks = chunk(text, "sentence", size=size, unit=unit, overlap=overlap)
    assert_valid(text, chunks, size)
    assert len(chunks) > 2
    for a, b in pairwise(chunks):
        previous = within(a, spans)
        assert len(previous) > overlap  # room for the overlap plus something new
        assert b.start == previous[-overlap][0]
        assert b.end > a.end


def test_sentence_overlap_must_be_below_size() -> None:
    with pytest.raises(ValueError, match="sentences"):
        Config.create("sentence", size=3, overlap=3)


def test_sentence_longer_than_the_limit_is_split_not_dropped() -> None:
    text = "Short one. " + "This sentence goes on and on " * 6 + "until it ends. Last."
    chunks = chunk(text, "sentence", size=40)
    assert_valid(text, chunks, 40)
    split = [c for c in chunks if c.metadata.get("split_from") == "sentence"]
    assert len(split) >= 2
    assert all(c.metadata["boundary"] == "size" for c in split)
    assert chunks[0].text == "Short one."
    assert chunks[-1].text == "Last."


# --- paragraph packing -----------------------------------------------------------------

PARAGRAPHS = "\n\n".join(
    [
        "First paragraph, quite short.",
        "Second paragraph. It has two sentences.",
        "Third paragraph is about the weather.",
        "Fourth. Fifth follows.",
    ]
)


@pytest.mark.parametrize(("unit", "size"), [("chars", 80), ("tokens", 18)])
def test_paragraph_chunks_never_cut_inside_a_paragraph(unit: str, size: int) -> None:
    chunks = chunk(PARAGRAPHS, "paragraph", size=size, unit=unit)
    assert_valid(PARAGRAPHS, chunks, size)
    spans = paragraph_spans(PARAGRAPHS)
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    assert 1 < len(chunks) < len(spans)  # some chunks hold several paragraphs
    for c in chunks:
        assert c.start in starts and c.end in ends
        assert c.metadata["boundary"] == "paragraph"
        assert c.metadata["paragraphs"] == len(within(c, spans))


def test_oversized_paragraph_is_cut_between_sentences_and_flagged() -> None:
    long = " ".join(f"Sentence {i} of the long paragraph." for i in range(8))
    text = f"Intro paragraph.\n\n{long}\n\nOutro paragraph."
    chunks = chunk(text, "paragraph", size=80)
    assert_valid(text, chunks, 80)
    assert chunks[0].text == "Intro paragraph."
    assert chunks[-1].text == "Outro paragraph."
    middle = chunks[1:-1]
    assert len(middle) >= 3
    sentence_ends = {e for _, e in sentence_spans(text)}
    for c in middle:
        assert c.metadata["split_from"] == "paragraph"
        assert c.metadata["boundary"] == "sentence"
        assert c.end in sentence_ends


def test_paragraph_with_an_oversized_sentence_falls_back_to_recursive() -> None:
    words = " ".join(f"word{i}" for i in range(40))
    text = f"Small.\n\nA start. {words} end.\n\nSmall again."
    chunks = chunk(text, "paragraph", size=60, unit="chars")
    assert_valid(text, chunks, 60)
    cut = [c for c in chunks if c.metadata.get("boundary") == "size"]
    assert len(cut) >= 3
    assert all(c.metadata["split_from"] == "sentence" for c in cut)


def test_paragraph_overlap_counts_paragraphs() -> None:
    text = "\n\n".join(f"Paragraph {i} text." for i in range(8))  # 17 chars each
    spans = paragraph_spans(text)
    chunks = chunk(text, "paragraph", size=60, overlap=1)
    assert_valid(text, chunks, 60)
    for a, b in pairwise(chunks):
        assert b.start == within(a, spans)[-1][0]


# --- conversation ------------------------------------------------------------------------

FORMATS = {
    "plain": "{name}: {text}",
    "time": "[10:1{i}] {name}: {text}",
    "date time": "[2024-03-02 10:1{i}] {name}: {text}",
    "whatsapp": "2024-03-02 10:1{i} - {name}: {text}",
    "irc": "<{name}> {text}",
    "bold": "**{name}:** {text}",
    "slack": "{name}  10:1{i} AM\n{text}",
}
TURNS = [
    ("Alice", "Hi, my order has not arrived."),
    ("Bob", "Sorry to hear that. Which order number?"),
    ("Alice", "It is 4471.\n> Your order ships within 2 days\nThat was a week ago."),
    ("Bob", "Thanks, I am checking.\nIt left the warehouse yesterday."),
    ("Carol Smith", "I can confirm, it is with the courier."),
]


def chat(layout: str) -> tuple[str, list[tuple[str, str]]]:
    """A log in ``layout`` and, per message, (speaker, full message text)."""
    line = FORMATS[layout]
    messages = []
    for i, (name, body) in enumerate(TURNS):
        if layout == "irc":
            name = name.replace(" ", "_")  # IRC nicks have no spaces
        messages.append((name, line.format(i=i, name=name, text=body)))
    return "\n".join(m for _, m in messages) + "\n", messages


@pytest.mark.parametrize("layout", list(FORMATS))
def test_conversation_detects_each_layout_with_whole_messages(layout: str) -> None:
    text, expected = chat(layout)
    _, messages = detect_messages(text)
    assert [m.speaker for m in messages] == [name for name, _ in expected]
    assert [text[m.start : m.end] for m in messages] == [body for _, body in expected]


@pytest.mark.parametrize("layout", list(FORMATS))
@pytest.mark.parametrize(("unit", "size"), [("chars", 130), ("tokens", 45)])
def test_conversation_chunks_hold_whole_messages_and_name_speakers(
    layout: str, unit: str, size: int
) -> None:
    text, expected = chat(layout)
    chunks = chunk(text, "conversation", size=size, unit=unit)
    assert_valid(text, chunks, size)
    bounds = []
    position = 0
    for name, body in expected:
        start = text.index(body, position)
        bounds.append((start, start + len(body), name))
        position = start + len(body)
    sizer = get_sizer(unit)
    assert all(sizer.size(body) <= size for _, body in expected)  # none needs splitting
    assert len(chunks) > 1
    for c in chunks:
        inside = [b for b in bounds if c.start <= b[0] and b[1] <= c.end]
        assert inside and c.start == inside[0][0] and c.end == inside[-1][1], c.text
        assert c.metadata["speakers"] == list(dict.fromkeys(name for *_, name in inside))
        assert c.metadata["messages"] == len(inside)
        assert c.metadata["boundary"] == "message"


def test_conversation_overlap_repeats_messages() -> None:
    text, expected = chat("time")
    chunks = chunk(text, "conversation", size=150, unit="chars", overlap=1)
    assert_valid(text, chunks, 150)
    assert len(chunks) > 2
    for a, b in pairwise(chunks):
        last_of_a = [body for _, body in expected if body in a.text][-1]
        assert b.text.startswith(last_of_a)


def test_conversation_splits_an_oversized_message() -> None:
    long = "Alice: " + "very long story " * 20
    text = f"Bob: hi\n{long}\nBob: ok\nAlice: bye"
    chunks = chunk(text, "conversation", size=60, unit="chars")
    assert_valid(text, chunks, 60)
    split = [c for c in chunks if c.metadata.get("split_from") == "message"]
    assert len(split) >= 5
    assert all(c.metadata["speakers"] == ["Alice"] for c in split)


def test_prose_is_not_a_chat_and_falls_back_to_paragraphs() -> None:
    text = (
        "Note: this guide is short.\n\nWarning: do not skip steps.\n\n"
        "Date: 2024-03-02\n\nSummary: it went well."
    )
    assert detect_messages(text) == (None, [])
    chunks = chunk(text, "conversation", size=40, unit="chars")
    assert_valid(text, chunks, 40)
    assert all(c.metadata["note"] == NO_CHAT_NOTE for c in chunks)
    assert {c.metadata["boundary"] for c in chunks} == {"paragraph"}


def test_header_lines_above_a_timestamped_log_are_not_speakers() -> None:
    text = "Channel: support\nTopic: login\n\n[09:00] Ann: hello\n[09:01] Ben: hi there\n"
    _, messages = detect_messages(text)
    assert [m.speaker for m in messages] == [None, "Ann", "Ben"]
    assert text[messages[0].start : messages[0].end] == "Channel: support\nTopic: login"


@pytest.mark.skipif(not (SAMPLES / "support_chat.txt").exists(), reason="sample not present")
def test_support_chat_sample() -> None:
    text = (SAMPLES / "support_chat.txt").read_text(encoding="utf-8")
    chunks = chunk(text, "conversation", size=150, unit="tokens")
    assert_valid(text, chunks, 150)
    speakers = set().union(*(c.metadata["speakers"] for c in chunks))
    assert speakers == {"Dana", "Ravi", "Mei"}
    heads = [m.start() for m in re.finditer(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d\] ", text, re.M)]
    message_ends = {len(text[:h].rstrip()) for h in heads[1:]} | {len(text.rstrip())}
    assert sum(c.metadata["messages"] for c in chunks) == len(heads)  # no overlap asked
    for c in chunks:
        assert "split_from" not in c.metadata  # no message there is over 150 tokens
        assert c.start == 0 or c.start in heads
        assert c.end in message_ends


# --- parent-child --------------------------------------------------------------------------


def check_hierarchy(text: str, chunks: list[Chunk], sizes: list[int]) -> None:
    assert_valid(text, chunks, sizes[0])
    keys = [(c.start, c.metadata["level"]) for c in chunks]
    assert keys == sorted(keys)
    assert len({(c.start, c.end) for c in chunks}) == len(chunks), "a child copies its parent"
    for c in chunks:
        level, parent = c.metadata["level"], c.metadata["parent"]
        if c.size > sizes[level]:
            assert any(f.startswith("over limit:") for f in c.flags)
        if level == 0:
            assert parent is None
            continue
        p = chunks[parent]
        assert p.metadata["level"] < level
        assert p.start <= c.start and c.end <= p.end
        assert parent < c.index
    counts = Counter(k.metadata["parent"] for k in chunks)
    assert all(c.metadata["children"] == counts[c.index] for c in chunks)
    # down to any level, the deepest chunks cover the document (a skipped level included)
    first_child_level: dict[int, int] = {}
    for k in chunks:
        parent = k.metadata["parent"]
        if parent is not None:
            level = k.metadata["level"]
            first_child_level[parent] = min(first_child_level.get(parent, level), level)
    for level in range(len(sizes)):
        frontier = [
            c
            for c in chunks
            if c.metadata["level"] <= level and first_child_level.get(c.index, level + 1) > level
        ]
        assert_valid(text, frontier, sizes[0])
        over = [c for c in frontier if c.size > sizes[level]]
        assert all(any(f.startswith("over limit:") for f in c.flags) for c in over)
    assert {c.metadata["level"] for c in chunks} == set(range(len(sizes)))


@pytest.mark.parametrize(
    ("unit", "sizes"), [("chars", [400, 120]), ("chars", [400, 150, 40]), ("tokens", [90, 30, 8])]
)
def test_hierarchy_children_inside_parents(unit: str, sizes: list[int]) -> None:
    text = PARAGRAPHS + "\n\n" + SENTENCES * 3
    child_sizes = ",".join(map(str, sizes[1:]))
    chunks = chunk(text, "hierarchy", size=sizes[0], child_sizes=child_sizes, unit=unit)
    check_hierarchy(text, chunks, sizes)
    assert all(c.metadata["level_size"] == sizes[c.metadata["level"]] for c in chunks)


def test_hierarchy_skips_a_level_a_chunk_already_fits() -> None:
    short = "A short paragraph, forty-odd characters."  # fits 60, not 25
    text = short + "\n\n" + " ".join(f"word{i}" for i in range(80))
    chunks = chunk(text, "hierarchy", size=200, child_sizes="60,25")
    check_hierarchy(text, chunks, [200, 60, 25])
    top = next(c for c in chunks if c.text == short)
    assert top.metadata["level"] == 0
    kids = [c for c in chunks if c.metadata["parent"] == top.index]
    assert len(kids) >= 2
    assert all(k.metadata["level"] == 2 and k.size <= 25 for k in kids)
    assert [c.text for c in chunk("x", "hierarchy", size=8, child_sizes="4,2")] == ["x"]


@pytest.mark.parametrize("sizes", [[300, 100], [300, 100, 40]])
def test_hierarchy_overlap_applies_to_the_smallest_chunks_only(sizes: list[int]) -> None:
    text = " ".join(f"word{i}" for i in range(200))  # short pieces: room for overlap
    child_sizes = ",".join(map(str, sizes[1:]))
    chunks = chunk(text, "hierarchy", size=sizes[0], child_sizes=child_sizes, overlap=12)
    check_hierarchy(text, chunks, sizes)
    for level in range(len(sizes) - 1):
        larger = [c for c in chunks if c.metadata["level"] == level]
        assert all(a.end <= b.start for a, b in pairwise(larger))
    smallest = [c for c in chunks if c.metadata["level"] == len(sizes) - 1]
    shared = [
        a
        for a, b in pairwise(smallest)
        if a.metadata["parent"] == b.metadata["parent"] and b.start < a.end
    ]
    assert shared
    assert all(a.end - b.start <= 12 for a, b in pairwise(smallest))


def test_child_sizes_json_and_comma_forms_agree() -> None:
    assert parse_child_sizes("[500, 100]", 2000) == [500, 100]
    assert parse_child_sizes(" 500 , 100 ", 2000) == [500, 100]
    a = chunk(SENTENCES, "hierarchy", size=200, child_sizes="[80, 30]")
    b = chunk(SENTENCES, "hierarchy", size=200, child_sizes="80,30")
    assert a == b


def test_child_sizes_auto_is_a_quarter_of_size() -> None:
    text = SENTENCES * 3
    chunks = chunk(text, "hierarchy", size=240)  # child_sizes defaults to "auto"
    check_hierarchy(text, chunks, [240, 60])
    assert {c.metadata["level_size"] for c in chunks} == {240, 60}
    with pytest.raises(ValueError, match="at least 2"):
        Config.create("hierarchy", size=1)


@pytest.mark.parametrize(
    ("child_sizes", "overlap", "message"),
    [
        ("abc", 0, "not a whole number"),
        ("", 0, "empty"),
        ("[500, ", 0, "JSON"),
        ('["x"]', 0, "not a whole number"),
        ("2500", 0, "smaller than"),
        ("500,500", 0, "smaller than"),
        ("500,0", 0, "positive"),
        ("500,-5", 0, "positive"),
        ("1000,500,200,100,50,20", 0, "at most"),
        ("500,100", 100, "overlap"),
    ],
)
def test_hierarchy_rejects_bad_levels(child_sizes: str, overlap: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Config.create("hierarchy", size=2000, child_sizes=child_sizes, overlap=overlap)


# --- every strategy here, on the sample documents and on random text ----------------------


def _text_samples() -> list[Path]:
    """The sample documents that are plain UTF-8 text (binary formats need a reader)."""
    paths = []
    for path in sorted(SAMPLES.glob("*")) if SAMPLES.exists() else []:
        try:
            path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        paths.append(path)
    return paths


SAMPLE_FILES = _text_samples()


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("strategy", MINE)
@pytest.mark.parametrize("unit", ["chars", "tokens"])
def test_samples_keep_the_invariants(path: Path, strategy: str, unit: str) -> None:
    text = path.read_text(encoding="utf-8")
    size = 300 if unit == "chars" else 80
    params = {"size": size, "unit": unit, "overlap": 1}
    if strategy == "hierarchy":
        params["child_sizes"] = "100,30" if unit == "chars" else "30,10"
    config = Config.create(strategy, **params)
    chunks = run(text, config)
    assert_valid(text, chunks, size)
    if strategy == "hierarchy":
        check_hierarchy(text, chunks, [size, *parse_child_sizes(params["child_sizes"], size)])


PARTS = [*"ab .,:!?\n\t", "\r\n", "😀", "中文", "e\u0301", "שלום", "[10:14] Al: ", "\nBo: "]
TEXT = (
    st.lists(st.sampled_from(PARTS), min_size=1, max_size=40)
    .map("".join)
    .filter(lambda t: not t.isspace())
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=TEXT,
    strategy=st.sampled_from(MINE),
    unit=st.sampled_from(["chars", "words", "tokens"]),
    size=st.integers(3, 30),
    overlap=st.integers(0, 2),
)
def test_random_text_keeps_the_invariants(
    text: str, strategy: str, unit: str, size: int, overlap: int
) -> None:
    params = {"size": size, "unit": unit, "overlap": overlap}
    if strategy == "hierarchy":
        params["child_sizes"] = f"{size - 1},{size // 2 + 1}" if size > 4 else str(size - 1)
        params["overlap"] = 0
    chunks = run(text, Config.create(strategy, **params))
    assert_valid(text, chunks, size)
    assert len({(c.start, c.end) for c in chunks if "level" not in c.metadata}) == len(
        [c for c in chunks if "level" not in c.metadata]
    )


def test_sentence_packing_keeps_a_numbered_heading_with_its_number() -> None:
    # Regression: "1." was a sentence of its own, so a chunk could end with it and the
    # heading start the next one: ["Intro. 1.", "Source Code.", ...].
    text = "Intro. 1. Source Code. Body text."
    chunks = chunk(text, "sentence", size=15, unit="chars")
    assert [c.text for c in chunks] == ["Intro.", "1. Source Code.", "Body text."]
