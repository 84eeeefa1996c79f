"""One sentence segmentation per document, shared, and word pieces counted per chunk:
the shared and per-chunk paths give exactly what the direct computations give, and a
changed text never gets the sentences of the text it was before."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chunking
from chunking import Config
from chunking.analysis import report as report_module
from chunking.analysis.report import (
    Report,
    make_report,
    model_max_tokens,
    truncated_by_counts,
    truncated_chunks,
    wordpiece_starts,
)
from chunking.documents.io import Document, read_path
from chunking.embedding.models import Embedder, get_embedder
from chunking.engine import spans
from chunking.engine.segments import pack_spans
from chunking.engine.spans import SHARED_MIN_CHARS, document_sentences, sentence_spans
from chunking.model import build_chunks
from chunking.output import html_report
from chunking.splitters.semantic import analysis as semantic_analysis
from chunking.splitters.semantic.analysis import SemanticAnalysis, analyze
from chunking.units import get_sizer
from tests.conftest import SAMPLE_DOCS, chroma_corpora, sample_paths

#: Chinese and Japanese with full-width ends and closers, numbered headings, a list.
MULTI_SCRIPT = (
    "第一章　总则\n\n本协议适用于全部用户。用户须遵守以下规定！是否同意？「同意。」他说。\n\n"
    "日本語の文です。次の文！？それから（括弧）。数字は３．１４です｡終わり。\n\n"
    "1. Source Code.\nThe source is open. It is kept on a server.\n\n"
    "IV.\nA numbered part follows. Dr. Smith arrived at 10 a.m. and left.\n\n"
    "- one item; it ends here.\n- another item! Really?\n"
)


def _long(text: str) -> str:
    """``text`` repeated past :data:`SHARED_MIN_CHARS`, so that it is shared."""
    return "\n\n".join([text] * (SHARED_MIN_CHARS // max(1, len(text)) + 2))


def _texts() -> dict[str, str]:
    texts = {p.name: read_path(p).text for p in sample_paths()}
    texts["all samples"] = "\n\n".join(texts.values())
    texts["multi-script"] = _long(MULTI_SCRIPT)
    for path in chroma_corpora()[:3]:
        texts[path.name] = path.read_text(encoding="utf-8")[:120_000]
    return texts


TEXTS = _texts()


def test_the_texts_reach_the_shared_path() -> None:
    long = [name for name, text in TEXTS.items() if len(text) >= SHARED_MIN_CHARS]
    assert len(long) >= 5, long
    assert any(len(t) < SHARED_MIN_CHARS for t in TEXTS.values())  # and the direct one


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_shared_sentences_are_the_direct_ones(name: str) -> None:
    text = TEXTS[name]
    shared = document_sentences(text)
    assert shared == tuple(sentence_spans(text))
    assert isinstance(shared, tuple) and all(isinstance(s, tuple) for s in shared)
    assert document_sentences(text) == shared  # asked again


def test_a_long_text_is_segmented_once_and_shared_by_content() -> None:
    text = TEXTS["all samples"]
    first = document_sentences(text)
    copy = "".join(list(text))  # an equal text in another string object
    assert copy is not text
    assert document_sentences(copy) is first
    with mock.patch.object(spans, "sentence_spans", side_effect=AssertionError("segmented")):
        assert document_sentences(text) is first


def test_a_changed_text_gets_its_own_sentences() -> None:
    text = TEXTS["all samples"]
    before = document_sentences(text)
    end = before[3][1]  # the fourth sentence's end: a word after it, before the next
    changed = text[:end] + " And so it ends." + text[end:]
    after = document_sentences(changed)
    assert after == tuple(sentence_spans(changed))
    assert after != before
    assert document_sentences(text) == before  # the old text keeps its own


def test_the_cache_is_bounded() -> None:
    base = TEXTS["all samples"]
    for i in range(spans.SHARED_TEXTS + 2):
        variant = f"Variant {i}.\n\n{base}"
        assert document_sentences(variant) == tuple(sentence_spans(variant))
    info = spans._shared_sentences.cache_info()
    assert info.currsize <= spans.SHARED_TEXTS


@given(
    st.lists(
        st.sampled_from(
            ["Hello world. ", "Dr. Who? ", "是的。", "「好！」", "\n\n", "1. ", "IV.\n", "x", " "]
        ),
        max_size=40,
    ).map("".join)
)
def test_shared_sentences_of_generated_texts(text: str) -> None:
    with mock.patch.object(spans, "SHARED_MIN_CHARS", 0):  # every text through the cache
        assert document_sentences(text) == tuple(sentence_spans(text))
        edited = text + "Tail. "
        assert document_sentences(edited) == tuple(sentence_spans(edited))


# ------------------------------------------------------------- the sentence strategy


def _direct_sentence_chunks(text: str, config: Config) -> list[chunking.Chunk]:
    """The sentence strategy as it was: the text segmented for this call alone."""
    sizer = get_sizer(config.unit)
    pieces = pack_spans(
        text,
        sentence_spans(text),
        sizer,
        config.params["size"],
        kind="sentence",
        overlap_segments=config.params["overlap"],
    )
    return build_chunks(text, pieces, sizer)


@pytest.mark.parametrize("name", ["all samples", "multi-script", "long_essay.txt", "pubmed.md"])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"size": 800, "overlap": 2},
        {"size": 120, "unit": "tokens"},
        {"size": 60, "unit": "model"},
    ],
)
def test_the_sentence_strategy_on_shared_sentences_is_unchanged(name: str, params: dict) -> None:
    text = TEXTS[name]
    config = Config.create("sentence", **params)
    assert chunking.run(text, config) == _direct_sentence_chunks(text, config)


def test_the_sentence_strategy_follows_a_changed_text() -> None:
    text = TEXTS["all samples"]
    config = Config.create("sentence", size=300)
    before = chunking.run(text, config)
    changed = text.replace(". ", ".\n\n", 5)
    after = chunking.run(changed, config)
    assert after == _direct_sentence_chunks(changed, config)
    assert after != before
    assert all(changed[c.start : c.end] == c.text for c in after)


# ------------------------------------------------------------------------ the report


def _document(name: str) -> Document:
    path = SAMPLE_DOCS / name
    if path.is_file():
        return read_path(path)
    return Document(text=TEXTS[name], name=f"{name}.txt", kind="text", encoding="utf-8")


def _direct_report(document: Document, config: Config, chunks: list[chunking.Chunk]) -> Report:
    """The report as it was made: this document's own sentences and one word-piece pass
    over the whole of it."""
    text = document.text
    starts = wordpiece_starts(text)
    return make_report(
        document, config, chunks, sentences=sentence_spans(text), piece_starts=starts
    )


#: Documents and configurations: long windows the model truncates, the model unit itself,
#: HTML measured on its visible text, tables carrying their header, parents not embedded.
REPORTED = [
    ("all samples", Config.create("recursive", size=2000)),
    ("all samples", Config.create("fixed", size=1800, overlap=200)),
    ("multi-script", Config.create("sentence", size=300)),
    ("long_essay.txt", Config.create("recursive", size=300, unit="model")),
    ("long_essay.txt", Config.create("hierarchy", size=2000)),
    ("product_page.html", Config.create("html", size=400)),
    ("technical_guide.md", Config.create("table", size=60)),
    ("technical_guide.md", Config.create("markdown", size=400)),
    ("pubmed.md", Config.create("token", size=400, overlap=40)),
    ("finance.md", Config.create("sliding", window=1500, stride=700)),
]


@pytest.mark.parametrize(
    ("name", "config"), REPORTED, ids=[f"{n}-{c.label()}" for n, c in REPORTED]
)
def test_the_report_counting_per_chunk_equals_the_whole_document_pass(
    name: str, config: Config
) -> None:
    document = _document(name)
    text = document.text
    chunks = chunking.run(text, config)
    report = make_report(document, config, chunks)
    assert report == _direct_report(document, config, chunks)
    # and the truncated chunks are those the model's own tokenizer finds, chunk by chunk
    truncated = next((w.chunks for w in report.warnings if w.kind == "truncated"), ())
    assert list(truncated) == truncated_chunks(text, chunks, model_max_tokens())


def test_the_reports_name_truncated_chunks_at_all() -> None:
    found = set()
    for name, config in REPORTED:
        document = _document(name)
        report = make_report(document, config, chunking.run(document.text, config))
        found.update(name for w in report.warnings if w.kind == "truncated")
    assert len(found) >= 3, found


def test_truncated_by_counts_is_the_tokenizers_count_at_any_window() -> None:
    text = TEXTS["long_essay.txt"]
    chunks = chunking.run(text, Config.create("recursive", size=400))
    pieces = get_sizer("model").sizes([c.embedding_text for c in chunks])  # type: ignore[attr-defined]
    for window in (24, 48, 64, 72):
        expected = truncated_chunks(text, chunks, window)
        assert truncated_by_counts(chunks, pieces, window) == expected
        assert 0 < len(expected) < len(chunks)


def test_the_report_of_a_changed_text_is_its_own() -> None:
    text = TEXTS["all samples"]
    config = Config.create("sentence", size=400)
    original = Document(text=text, name="a.txt", kind="text", encoding="utf-8")
    make_report(original, config, chunking.run(text, config))  # shares its sentences
    # one long sentence now: cuts inside it are mid-sentence for the new text only
    changed_text = text.replace(". ", ", ")
    changed = Document(text=changed_text, name="a.txt", kind="text", encoding="utf-8")
    chunks = chunking.run(changed_text, Config.create("fixed", size=400, overlap=0))
    assert make_report(changed, config, chunks) == _direct_report(changed, config, chunks)


def test_the_app_reports_what_the_core_reports() -> None:
    from pages import cached

    for name in ("all samples", "technical_guide.md"):
        document = _document(name)
        source = cached.Source.of(document, "upload")
        for config in (Config.create("sentence", size=500), Config.create("recursive", size=2000)):
            chunks = chunking.run(document.text, config)
            assert cached.analysis(source, config) == _direct_report(document, config, chunks)


# ------------------------------------------------ the semantic analysis and the HTML report


def _direct_analysis(text: str, embedder: Embedder, buffer_size: int) -> SemanticAnalysis:
    """The semantic analysis as it was made: this text segmented for this call alone."""
    direct = mock.Mock(side_effect=lambda t: tuple(sentence_spans(t)))
    with mock.patch.object(semantic_analysis, "document_sentences", direct):
        analysis = analyze(text, embedder=embedder, buffer_size=buffer_size)
    direct.assert_called_once_with(text)  # the whole text, not a part of it
    return analysis


#: (text, model): the bundled model on the shortest long text, the fast hash model (the
#: test is about the sentences, not the vectors) on the others.
ANALYSED = [
    ("technical_guide.md", "minilm"),
    ("multi-script", "hash"),
    ("all samples", "hash"),
    ("pubmed.md", "hash"),
]


@pytest.mark.parametrize(("name", "model"), ANALYSED)
@pytest.mark.parametrize("buffer_size", [0, 1, 3])
def test_the_semantic_analysis_on_shared_sentences_is_unchanged(
    name: str, model: str, buffer_size: int
) -> None:
    text = TEXTS[name]
    embedder = get_embedder(model)
    shared = analyze(text, embedder=embedder, buffer_size=buffer_size)
    direct = _direct_analysis(text, embedder, buffer_size)
    assert shared.sentences == direct.sentences == tuple(sentence_spans(text))
    assert np.array_equal(shared.embeddings, direct.embeddings)
    assert np.array_equal(shared.distances, direct.distances)
    for method, unit, max_size in [("percentile", "chars", 1000), ("auto", "tokens", 200)]:
        ours = shared.chunk(method=method, unit=unit, max_size=max_size)
        theirs = direct.chunk(method=method, unit=unit, max_size=max_size)
        assert ours.chunks == theirs.chunks
        assert ours.breakpoints == theirs.breakpoints


def test_the_semantic_analysis_takes_the_shared_sentences() -> None:
    text = TEXTS["all samples"]
    shared = document_sentences(text)
    segmented = AssertionError("segmented again")
    with (
        mock.patch.object(spans, "sentence_spans", side_effect=segmented),
        mock.patch.object(semantic_analysis, "sentence_spans", side_effect=segmented),
    ):
        analysis = analyze(text, embedder="hash")
    assert analysis.sentences is shared


def _direct_html(document: Document, config: Config, compare: list[Config]) -> str:
    """The HTML report as it was made: the document segmented for each call alone."""
    direct = mock.Mock(side_effect=sentence_spans)
    with (
        mock.patch.object(report_module, "document_sentences", direct),
        mock.patch.object(html_report, "document_sentences", direct),
    ):
        html = html_report.document_report(document, config, compare=compare)
    # the report of A and the comparison's, each of the whole text
    assert [c.args for c in direct.call_args_list] == [(document.text,)] * 2
    return html


#: A document, a configuration and the others drawn next to it: cuts inside sentences.
HTML_REPORTED = [
    ("technical_guide.md", Config.create("fixed", size=500, overlap=50), ["sentence", "token"]),
    ("all samples", Config.create("recursive", size=300), ["fixed"]),
    ("multi-script", Config.create("sentence", size=200), ["fixed", "recursive"]),
]


@pytest.mark.parametrize(("name", "config", "others"), HTML_REPORTED)
def test_the_html_report_on_shared_sentences_is_unchanged(
    name: str, config: Config, others: list[str]
) -> None:
    document = _document(name)
    compare = [Config.create(other, size=250) for other in others]
    html = html_report.document_report(document, config, compare=compare)
    assert html == _direct_html(document, config, compare)
    # the sentences matter to it: without them no cut is inside a sentence
    reports = [make_report(document, c, chunking.run(document.text, c)) for c in compare]
    assert any(w.kind == "mid_sentence" for r in reports for w in r.warnings)
    with mock.patch.object(html_report, "document_sentences", return_value=()):
        assert html_report.document_report(document, config, compare=compare) != html
