"""Tests for chunking.analysis.report: size summaries, warnings and boundary agreement."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import Chunk
from chunking.analysis.report import (
    SPECIAL_TOKENS,
    Report,
    agreement,
    agreement_matrix,
    all_sizes,
    boundaries,
    clean_edge,
    could_exceed,
    describe,
    find_warnings,
    inside_sentence,
    make_report,
    mid_sentence_cuts,
    mid_word_cuts,
    model_max_tokens,
    over_limit,
    sizes_in,
    splits_word,
    summarize,
    tiny_chunks,
    tiny_threshold,
    truncated_chunks,
    wordpiece_counts,
    wordpiece_starts,
)
from chunking.documents.io import Document, read_path
from chunking.engine.spans import sentence_spans
from chunking.units import get_sizer

SAMPLES = Path(__file__).resolve().parents[1] / "sample_docs"


def _chunks(text: str, spans: list[tuple[int, int]], flags: dict[int, list[str]] | None = None):
    """Chunks over ``text`` measured in characters, with optional flags by index."""
    flags = flags or {}
    return [
        Chunk(i, a, b, text[a:b], b - a, {"flags": flags[i]} if i in flags else {})
        for i, (a, b) in enumerate(spans)
    ]


# --------------------------------------------------------------------------- sizes


@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=60))
def test_describe_matches_the_statistics_module(sizes: list[int]) -> None:
    summary = describe(sizes, "chars")
    assert summary.count == len(sizes)
    assert summary.mean == pytest.approx(statistics.fmean(sizes))
    assert summary.std == pytest.approx(statistics.pstdev(sizes), abs=1e-6)
    assert (summary.min, summary.max) == (min(sizes), max(sizes))


def test_describe_of_nothing_is_zero() -> None:
    summary = describe([], "words")
    assert (summary.count, summary.mean, summary.std, summary.min, summary.max) == (0, 0, 0, 0, 0)
    assert summary.unit == "words"


def test_sizes_in_every_unit_are_measured_on_the_chunk_text() -> None:
    text = "Ünïcode words here. And a second sentence, with commas!\n\nThird paragraph 😀."
    chunks = chunking.chunk(text, "recursive", size=30)
    assert sizes_in(chunks, "chars") == [len(c.text) for c in chunks]
    assert sizes_in(chunks, "words") == [len(c.text.split()) for c in chunks]
    tokens = get_sizer("tokens")
    assert sizes_in(chunks, "tokens") == [tokens.size(c.text) for c in chunks]
    from tokenizers import Tokenizer

    from chunking.units import model_tokenizer_path

    pieces = Tokenizer.from_file(str(model_tokenizer_path()))
    pieces.no_truncation()
    pieces.no_padding()
    expected = [len(pieces.encode(c.text, add_special_tokens=False).ids) for c in chunks]
    assert sizes_in(chunks, "model") == expected


def test_sizes_in_reuses_the_configured_unit() -> None:
    text = "one two three four five six seven eight nine ten"
    chunks = chunking.chunk(text, "recursive", size=3, unit="words")
    assert sizes_in(chunks, "words", configured_unit="words") == [c.size for c in chunks]
    summary = summarize(chunks, configured_unit="words")
    assert set(summary) == {"chars", "words", "tokens", "model"}
    assert summary["words"].max <= 3
    assert summary["chars"].count == len(chunks)


# ------------------------------------------------------------------------ warnings


def test_over_limit_lists_big_chunks_and_counts_flagged_exceptions() -> None:
    text = "a" * 50
    chunks = _chunks(text, [(0, 10), (10, 30), (30, 50)], flags={2: [chunking.UNSPLITTABLE]})
    warning = over_limit(chunks, 15, "chars")
    assert warning is not None
    assert warning.chunks == (1, 2)
    assert "1 of them are flagged" in warning.message
    assert chunking.UNSPLITTABLE in warning.message
    assert over_limit(chunks, 20, "chars") is None
    assert over_limit(chunks, None, "chars") is None


def test_tiny_chunks_are_under_a_tenth_of_the_limit() -> None:
    text = "x" * 300
    chunks = _chunks(text, [(0, 9), (9, 10), (10, 200), (200, 300)])
    threshold, unit = tiny_threshold(100, "chars")
    assert (threshold, unit) == (10, "chars")
    warning = tiny_chunks(chunks, 100, "chars")
    assert warning is not None and warning.chunks == (0, 1)
    assert tiny_chunks(chunks, 10, "chars") is None


def test_tiny_chunks_without_a_limit_are_counted_in_characters() -> None:
    text = "short " + "y" * 200
    chunks = _chunks(text, [(0, 5), (6, len(text))])
    warning = tiny_chunks(chunks, None, "chars")
    assert warning is not None and warning.chunks == (0,)


def test_splits_word_only_inside_words() -> None:
    text = "hello world_x, yes"
    assert splits_word(text, 2)  # he|llo
    assert not splits_word(text, 5)  # hello| world
    assert not splits_word(text, 6)  # hello |world
    assert splits_word(text, 11)  # world|_x
    assert not splits_word(text, 13)  # world_x|,
    assert not splits_word(text, 0) and not splits_word(text, len(text))


def test_mid_word_cuts_catch_fixed_windows_but_not_word_windows() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda"
    fixed = chunking.chunk(text, "fixed", size=7, overlap=0)
    warning = mid_word_cuts(text, fixed)
    expected = [c.index for c in fixed if splits_word(text, c.start) or splits_word(text, c.end)]
    assert warning is not None and list(warning.chunks) == expected and expected
    by_words = chunking.chunk(text, "fixed", size=2, overlap=0, unit="words")
    assert mid_word_cuts(text, by_words) is None


def test_inside_sentence_is_strict() -> None:
    spans = [(0, 10), (12, 30)]
    assert inside_sentence(spans, 5)
    assert not inside_sentence(spans, 0) and not inside_sentence(spans, 10)
    assert not inside_sentence(spans, 11)
    assert inside_sentence(spans, 13) and not inside_sentence(spans, 30)
    assert not inside_sentence(spans, 99)


def test_mid_sentence_cuts_find_chunks_ending_inside_a_sentence() -> None:
    text = "The first sentence is here. The second one is longer than the first."
    sentences = sentence_spans(text)
    assert len(sentences) == 2
    whole = _chunks(text, [sentences[0], sentences[1]])
    assert mid_sentence_cuts(whole, sentences) is None
    cut = _chunks(text, [(0, 40), (40, len(text))])
    warning = mid_sentence_cuts(cut, sentences)
    assert warning is not None and warning.chunks == (0,)


def test_wordpiece_counts_include_the_special_tokens() -> None:
    assert model_max_tokens() == 256
    assert wordpiece_counts(["hello world"]) == [2 + SPECIAL_TOKENS]
    long_text = " ".join(["word"] * 300)
    assert wordpiece_counts([long_text]) == [300 + SPECIAL_TOKENS]


@given(
    st.lists(
        st.sampled_from(["tokenization", "x", "ü", "語", "!!", "hello", "🙂", "a.b"]),
        min_size=1,
        max_size=120,
    )
)
def test_could_exceed_never_skips_a_text_that_is_too_long(words: list[str]) -> None:
    text = " ".join(words)
    limit = 40
    if not could_exceed(text, limit):
        assert wordpiece_counts([text])[0] <= limit


def _exactly_truncated(chunks: list[Chunk], max_tokens: int) -> list[int]:
    counts = wordpiece_counts([c.text for c in chunks])
    return [c.index for c, n in zip(chunks, counts, strict=True) if n > max_tokens]


def test_wordpiece_starts_are_character_offsets() -> None:
    text = "Grüße 😀 tokenization"
    starts = wordpiece_starts(text)
    assert starts is not None
    assert starts[0] == 0
    assert text.index("😀") in starts and text.index("tokenization") in starts
    assert len(starts) == wordpiece_counts([text])[0] - SPECIAL_TOKENS


@pytest.mark.parametrize("name", ["technical_guide.md", "german_article.txt", "inventory.py"])
@pytest.mark.parametrize(
    ("strategy", "size"), [("fixed", 700), ("fixed", 1500), ("recursive", 1200)]
)
def test_truncated_chunks_equal_a_full_count(name: str, strategy: str, size: int) -> None:
    text = read_path(SAMPLES / name).text
    chunks = chunking.chunk(text, strategy, size=size)
    expected = _exactly_truncated(chunks, 256)
    assert truncated_chunks(text, chunks, 256) == expected
    assert truncated_chunks(text, chunks, 256, wordpiece_starts(text)) == expected


@given(
    st.lists(
        st.sampled_from(["tokenization", "x", "Grüße", "語語", "!!", "hello", "🙂", "a.b", "\n"]),
        min_size=20,
        max_size=400,
    ),
    st.integers(40, 300),
)
def test_the_estimate_decides_like_a_full_count(words: list[str], size: int) -> None:
    text = " ".join(words)
    chunks = chunking.chunk(text, "fixed", size=size, overlap=0)
    expected = _exactly_truncated(chunks, 48)
    assert truncated_chunks(text, chunks, 48, wordpiece_starts(text)) == expected


@given(
    st.lists(
        st.sampled_from(["Straße", "x", "語", "!", "hello", "🙂", "a.b", "\n", "--", "née"]),
        min_size=1,
        max_size=200,
    ),
    st.data(),
)
def test_a_span_with_clean_edges_has_exactly_the_pieces_starting_in_it(
    words: list[str], data: st.DataObject
) -> None:
    text = " ".join(words)
    starts = wordpiece_starts(text)
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    if not (clean_edge(text, a) and clean_edge(text, b)) or text[a:b].isspace():
        return
    inside = int(((starts >= a) & (starts < b)).sum())
    assert wordpiece_counts([text[a:b]])[0] == inside + SPECIAL_TOKENS


def test_clean_edges_are_between_words() -> None:
    text = "Hello, wörld 語x"
    assert clean_edge(text, 0) and clean_edge(text, len(text))
    assert clean_edge(text, 5) and clean_edge(text, 6) and clean_edge(text, 7)
    assert not clean_edge(text, 2)  # He|llo
    assert not clean_edge(text, 9)  # wö|rld
    assert not clean_edge(text, 14)  # 語|x: kept conservative


def test_find_warnings_combines_every_check() -> None:
    text = "A sentence that goes on. " * 40
    chunks = chunking.chunk(text, "fixed", size=97, overlap=0)
    warnings = find_warnings(
        text,
        chunks,
        limit=97,
        unit="chars",
        sentences=sentence_spans(text),
        truncated=[0],
        max_tokens=256,
    )
    kinds = {w.kind for w in warnings}
    assert {"mid_word", "mid_sentence", "truncated"} <= kinds
    assert "over_limit" not in kinds
    assert next(w for w in warnings if w.kind == "truncated").chunks == (0,)
    without_optional = find_warnings(text, chunks, limit=97, unit="chars")
    assert {w.kind for w in without_optional} == kinds - {"mid_sentence", "truncated"}


# --------------------------------------------------------------------------- report


def test_the_report_gathers_sizes_warnings_and_boundaries() -> None:
    document = read_path(SAMPLES / "technical_guide.md")
    config = chunking.Config.create("fixed", size=1800, overlap=0)
    chunks = chunking.run(document.text, config)
    report = make_report(document, config, chunks)
    assert report.sizes == all_sizes(chunks)
    assert report.summary == summarize(chunks)
    assert report.count == len(chunks) and report.strategy == "fixed"
    assert (report.unit, report.limit) == ("chars", 1800)
    assert report.boundaries == boundaries(chunks)
    assert report.pages == [None] * len(chunks)
    truncated = _exactly_truncated(chunks, 256)
    assert truncated, "1800-character windows of the guide should be too long for MiniLM"
    expected = find_warnings(
        document.text,
        chunks,
        limit=1800,
        unit="chars",
        sentences=sentence_spans(document.text),
        truncated=truncated,
        max_tokens=256,
    )
    assert report.warnings == expected
    assert {"mid_word", "mid_sentence", "truncated"} <= {w.kind for w in report.warnings}


def test_the_report_takes_the_text_analyses_precomputed() -> None:
    text = read_path(SAMPLES / "german_article.txt").text
    document = Document(text=text, name="a.txt", kind="text", encoding="utf-8")
    config = chunking.Config.create("recursive", size=300, unit="tokens")
    chunks = chunking.run(text, config)
    given_parts = make_report(
        document,
        config,
        chunks,
        sentences=sentence_spans(text),
        piece_starts=wordpiece_starts(text),
    )
    assert given_parts == make_report(document, config, chunks)
    assert given_parts.sizes["tokens"] == [c.size for c in chunks]


def test_the_report_is_plain_data() -> None:
    """The app caches reports with st.cache_data; the CLI prints them as JSON."""
    import streamlit

    text = "A sentence that goes on. " * 40
    document = Document(text=text, name="a.txt", kind="text", encoding="utf-8")
    config = chunking.Config.create("fixed", size=97, overlap=0)
    report = make_report(document, config, chunking.run(text, config))

    @streamlit.cache_data(show_spinner=False)
    def cached(key: str) -> Report:
        return report

    assert cached("a") == report
    assert cached("a") == report and cached("a") is not report  # a stored copy
    data = json.loads(json.dumps(report.to_dict()))
    assert data["config"] == config.to_dict()
    assert data["count"] == report.count and data["unit"] == "chars"
    assert data["sizes"]["words"] == report.summary["words"].to_dict()
    assert data["warnings"] == [
        {"kind": w.kind, "title": w.title, "message": w.message, "chunks": list(w.chunks)}
        for w in report.warnings
    ]
    assert data["warnings"], "fixed windows of 97 characters cut words"


def test_the_report_of_a_pdf_lists_every_chunk_s_pages() -> None:
    pages = ((0, 10), (12, 30), (32, 40))
    text = "\n\n".join("x" * (end - start) for start, end in pages)
    document = Document(text=text, name="a.pdf", kind="pdf", encoding=None, pages=pages)
    config = chunking.Config.create("fixed", size=15, overlap=0)
    chunks = chunking.run(text, config)
    report = make_report(document, config, chunks)
    assert [(c.start, c.end) for c in chunks] == [(0, 15), (15, 30), (30, 40)]
    assert report.pages == [[1, 2], [2], [2, 3]]


def test_flagged_exceptions_are_counted() -> None:
    text = "🙂 " * 10
    document = Document(text=text, name="a.txt", kind="text", encoding="utf-8")
    config = chunking.Config.create("recursive", size=1, unit="tokens")
    chunks = chunking.run(text, config)
    flagged = [c for c in chunks if chunking.UNSPLITTABLE in c.flags]
    assert flagged
    assert make_report(document, config, chunks).flagged_over_limit == len(flagged)


# ------------------------------------------------------------------------- agreement


def test_boundaries_are_distinct_chunk_ends_without_the_last() -> None:
    text = "abcdefghij" * 3
    chunks = _chunks(text, [(0, 10), (5, 10), (10, 20), (20, 30)])
    assert boundaries(chunks) == [10, 20]
    assert boundaries([]) == []


def test_agreement_by_hand() -> None:
    a, b = [100, 200], [105, 400]
    assert agreement(a, b, 10) == 0.5  # 100~105 on both sides; 200 and 400 alone
    assert agreement(a, b, 4) == 0.0
    assert agreement(a, b, 200) == 1.0
    assert agreement([], [], 0) == 1.0
    assert agreement([1], [], 5) == 0.0
    with pytest.raises(ValueError, match="k must be"):
        agreement(a, b, -1)


@given(
    st.lists(st.integers(0, 5000), max_size=40),
    st.lists(st.integers(0, 5000), max_size=40),
    st.integers(0, 300),
)
def test_agreement_is_symmetric_bounded_and_monotonic(a: list[int], b: list[int], k: int) -> None:
    score = agreement(a, b, k)
    assert 0.0 <= score <= 1.0
    assert score == agreement(b, a, k)
    assert agreement(a, b, k + 10) >= score
    if a:
        assert agreement(a, a, 0) == 1.0


def test_agreement_matrix_has_ones_on_the_diagonal() -> None:
    lanes = [[10, 20, 30], [12, 40], [100]]
    matrix = agreement_matrix(lanes, 5)
    assert [matrix[i][i] for i in range(3)] == [1.0, 1.0, 1.0]
    assert matrix[0][1] == matrix[1][0] == agreement(lanes[0], lanes[1], 5)


def test_flags_other_than_over_limit_are_reported_by_kind() -> None:
    from chunking.analysis.report import flagged

    text = "alpha beta gamma delta"
    chunks = [
        Chunk(
            0, 0, 5, "alpha", 1, {"flags": ["library offset wrong: reported 9, text found at 0"]}
        ),
        Chunk(1, 6, 10, "beta", 1, {"flags": ["over limit: unsplittable"]}),
        Chunk(2, 11, 16, "gamma", 1, {"flags": ["text altered: whitespace collapsed"]}),
        Chunk(3, 17, 22, "delta", 1),
    ]
    assert text[6:10] == "beta"
    warning = flagged(chunks)
    assert warning is not None and warning.chunks == (0, 2)
    assert "library offset wrong: 1 chunk" in warning.message
    assert "text altered: 1 chunk" in warning.message
    assert flagged(chunks[1:2] + chunks[3:]) is None


# ------------------------------------------------------------- advice never contradicts


def _report_warnings(text: str, config: chunking.Config) -> dict[str, str]:
    document = Document(text=text, name="t.txt", kind="text", encoding=None)
    report = make_report(document, config, chunking.run(text, config))
    return {w.kind: w.message for w in report.warnings}


def test_with_the_token_unit_the_advice_does_not_suggest_a_token_unit() -> None:
    text = "Unbelievably extraordinary circumstances necessitated reconsideration. " * 30
    messages = _report_warnings(
        text, chunking.Config.create("fixed", size=7, overlap=0, unit="tokens")
    )
    assert "mid_word" in messages, messages
    assert "token unit" not in messages["mid_word"]
    assert "words or tokens" not in messages["mid_word"]
    assert "recursive or sentence" in messages["mid_word"]
    in_chars = _report_warnings(text, chunking.Config.create("fixed", size=37, overlap=0))
    assert "words or tokens" in in_chars["mid_word"]


def test_on_sentence_packing_the_advice_does_not_suggest_the_sentence_strategy() -> None:
    text = ("This sentence is long enough that a small limit has to cut it inside. " * 2) * 20
    messages = _report_warnings(text, chunking.Config.create("sentence", size=30, overlap=0))
    assert "mid_sentence" in messages, messages
    assert "sentence strategy" not in messages["mid_sentence"]
    assert "raise the size" in messages["mid_sentence"]
    if "mid_word" in messages:
        assert "(recursive)" in messages["mid_word"]


def test_the_truncation_advice_is_in_the_models_word_pieces() -> None:
    text = "Chunking decides what a retriever can find, and how well. " * 200
    in_tokens = _report_warnings(text, chunking.Config.create("recursive", size=800, unit="tokens"))
    assert "unit 'model', at most 254" in in_tokens["truncated"]
    in_pieces = _report_warnings(text, chunking.Config.create("recursive", size=400, unit="model"))
    assert "Lower the size to at most 254" in in_pieces["truncated"]


def test_a_cut_between_html_elements_is_not_mid_sentence() -> None:
    text = "<p>The first paragraph has no full stop</p>\n<p>The second one neither</p>"
    sentences = [(0, len(text))]  # the splitter sees one sentence across the markup
    between = _chunks(text, [(0, 44), (44, len(text))])
    assert mid_sentence_cuts(between, sentences) is not None  # without the text
    assert mid_sentence_cuts(between, sentences, text=text) is None
    inside = _chunks(text, [(0, 20), (20, len(text))])
    assert mid_sentence_cuts(inside, sentences, text=text) is not None


def test_html_chunks_are_checked_on_the_visible_text_the_model_reads() -> None:
    markup = "<div class='x'>" * 300 + "Short visible text." + "</div>" * 300
    chunk = Chunk(0, 0, len(markup), markup, 4, {"visible_text": "Short visible text."})
    assert wordpiece_counts([markup])[0] > 256
    assert truncated_chunks(markup, [chunk], 256) == []
    plain = Chunk(0, 0, len(markup), markup, len(markup))
    assert truncated_chunks(markup, [plain], 256) == [0]


def test_parents_of_parent_child_are_not_checked_against_the_model() -> None:
    text = "A sentence about retrieval and chunking for tests. " * 120
    config = chunking.Config.create("hierarchy", size=2000, unit="chars")
    chunks = chunking.run(text, config)
    parents = [c.index for c in chunks if c.metadata.get("children")]
    assert parents and wordpiece_counts([chunks[parents[0]].text])[0] > 256
    truncated = truncated_chunks(text, chunks, 256, wordpiece_starts(text))
    assert not set(truncated) & set(parents)


def test_messages_name_the_model_unit_in_words() -> None:
    text = "Word " * 400
    config = chunking.Config.create("recursive", size=100, overlap=0, unit="model")
    chunks = chunking.run(text, config)
    warning = tiny_chunks([*chunks, Chunk(99, 0, 4, "Word", 1)], 100, "model")
    assert warning is not None and "model word pieces" in warning.title


@pytest.mark.parametrize(
    ("strategy", "params"),
    [("recursive", {"size": 300}), ("fixed", {"size": 250, "overlap": 30}), ("sentence", {})],
)
def test_word_pieces_counted_from_the_document_match_the_tokenizer(strategy, params) -> None:
    from chunking.analysis.report import wordpieces_in

    text = read_path(SAMPLES / "long_essay.txt").text + "\nNaïve café — 語 résumé_x, ok."
    chunks = chunking.chunk(text, strategy, **params)
    expected = get_sizer("model").sizes([c.text for c in chunks])
    assert wordpieces_in(text, chunks, wordpiece_starts(text)) == expected


def test_word_piece_starts_of_a_long_document_match_one_pass_of_the_tokenizer() -> None:
    from chunking.analysis.report import wordpiece_tokenizer

    text = (read_path(SAMPLES / "long_essay.txt").text + " naïve 語x ") * 6
    assert len(text) > 100_000  # more than one slice
    tokenizer = wordpiece_tokenizer()
    one_pass = [a for a, _ in tokenizer.encode(text, add_special_tokens=False).offsets]
    assert wordpiece_starts(text).tolist() == one_pass
    assert wordpiece_starts("").tolist() == []
