"""Statistics of configurations over a corpus (``chunking.corpus_stats``), checked
against the single-document core: the same chunks, the same warnings as Explore's
report, the same sentence verdicts, and errors as rows rather than exceptions."""

from __future__ import annotations

import pytest

import chunking
from chunking.analysis import corpus_stats as cs
from chunking.analysis.report import (
    make_report,
    mid_sentence_cuts,
    model_max_tokens,
    truncated_chunks,
    wordpiece_starts,
)
from chunking.documents.corpus import Member
from chunking.documents.io import read_path
from chunking.engine.spans import sentence_spans
from tests.conftest import chroma_corpora, sample_paths

CONFIGS = [
    chunking.Config.create("recursive"),
    chunking.Config.create("fixed", size=300, overlap=30),
    chunking.Config.create("recursive", size=120, unit="tokens"),
    chunking.Config.create("sentence"),
    chunking.Config.create("fixed", size=77, unit="words"),
]


def _samples() -> cs.Corpus:
    return cs.read_corpus(Member(p.name, p.read_bytes()) for p in sample_paths())


def _starts(doc: cs.CorpusDocument):
    assert doc.document is not None
    return wordpiece_starts(doc.document.text)


def test_every_sample_is_read_with_its_hash_and_size() -> None:
    corpus = _samples()
    paths = sample_paths()
    assert [d.name for d in corpus.documents] == [p.name for p in paths]
    assert all(d.error is None for d in corpus.documents)
    assert [d.bytes for d in corpus.documents] == [p.stat().st_size for p in paths]
    assert corpus.characters == sum(len(read_path(p).text) for p in paths)
    assert corpus.unreadable == 0


def test_unreadable_members_are_documents_with_the_reason() -> None:
    corpus = cs.read_corpus(
        [
            Member("good.txt", b"Plain text.\n"),
            Member("blob.bin.txt", bytes(range(256)) * 20),
            Member("picture.png", b"\x89PNG\r\n\x1a\n"),
        ]
    )
    good, blob, picture = corpus.documents
    assert good.document is not None and good.error is None
    assert blob.document is None and "binary" in (blob.error or "")
    assert picture.document is None and "unsupported extension .png" in (picture.error or "")
    assert corpus.unreadable == 2
    rows = cs.corpus_stats(corpus, CONFIGS[0]).documents
    assert [r.error is None for r in rows] == [True, False, False]
    assert rows[1].error == blob.error and rows[1].chunks == 0


def test_the_corpus_key_follows_names_and_contents() -> None:
    a = cs.read_corpus([Member("a.txt", b"one"), Member("b.txt", b"two")])
    same = cs.read_corpus([Member("a.txt", b"one"), Member("b.txt", b"two")])
    renamed = cs.read_corpus([Member("a.txt", b"one"), Member("c.txt", b"two")])
    edited = cs.read_corpus([Member("a.txt", b"one"), Member("b.txt", b"two!")])
    assert a.key == same.key
    assert len({a.key, renamed.key, edited.key}) == 3


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.strategy}-{c.limit}-{c.unit}")
def test_rows_match_the_core_and_explores_report(config: chunking.Config) -> None:
    corpus = _samples()
    stats = cs.corpus_stats(corpus, config, _starts)
    for doc, row in zip(corpus.documents, stats.documents, strict=True):
        assert doc.document is not None
        chunks = chunking.run(doc.document.text, config)
        report = make_report(doc.document, config, chunks)
        assert row.sizes == tuple(c.size for c in chunks)
        assert row.warnings == sum(w.count for w in report.warnings), doc.name
        assert row.warning_titles == tuple(w.title for w in report.warnings)
        truncated = truncated_chunks(doc.document.text, chunks, model_max_tokens())
        assert row.over_window == len(truncated)
    assert stats.chunks == sum(r.chunks for r in stats.documents)
    assert stats.sizes.tolist() == [s for r in stats.documents for s in r.sizes]
    assert stats.window == model_max_tokens()


def test_without_the_window_check_nothing_is_counted_against_the_model() -> None:
    stats = cs.corpus_stats(_samples(), CONFIGS[0])
    assert stats.window is None and stats.share_over_window is None
    assert all(r.over_window is None for r in stats.documents)
    assert not any("too long for" in t for r in stats.documents for t in r.warning_titles)


@pytest.mark.slow
def test_sentence_verdicts_near_chunk_ends_match_the_whole_documents() -> None:
    texts = [read_path(p).text for p in [*sample_paths(), *chroma_corpora()]]
    for text in texts:
        whole = sentence_spans(text)
        for config in CONFIGS:
            chunks = chunking.run(text, config)
            near = cs.sentences_near(text, [c.end for c in chunks])
            expected, found = mid_sentence_cuts(chunks, whole), mid_sentence_cuts(chunks, near)
            assert (found and found.chunks) == (expected and expected.chunks)


def test_sentences_near_segments_only_around_the_offsets() -> None:
    text = "First sentence here. Second one follows.\n\n" + "Filler words go on. " * 200
    spans = cs.sentences_near(text, [25])
    assert spans == [(0, 20), (21, 40)]
    assert cs.sentences_near(text, [41]) == []  # between paragraphs


def test_a_strategy_failure_is_a_row_not_an_exception(monkeypatch) -> None:
    corpus = cs.read_corpus([Member("ok.txt", b"Fine text."), Member("bad.txt", b"Boom text.")])
    real = cs.run

    def failing(text, config):
        if text.startswith("Boom"):
            raise ValueError("this text cannot be cut")
        return real(text, config)

    monkeypatch.setattr(cs, "run", failing)
    ok, bad = cs.corpus_stats(corpus, CONFIGS[0]).documents
    assert ok.error is None and ok.chunks == 1
    assert bad.error == "Recursive cannot cut it: this text cannot be cut"
    assert bad.kind == "text" and bad.characters == len("Boom text.")


def test_progress_is_reported_after_every_document() -> None:
    corpus = _samples()
    seen: list[tuple[int, int, str]] = []
    cs.corpus_stats(corpus, CONFIGS[0], progress=lambda *a: seen.append(a))
    total = len(corpus.documents)
    assert seen == [(i + 1, total, d.name) for i, d in enumerate(corpus.documents)]


def test_most_warnings_comparison_and_chunk_counts() -> None:
    corpus = _samples()
    a = cs.corpus_stats(corpus, CONFIGS[0], _starts)
    b = cs.corpus_stats(corpus, CONFIGS[1], _starts)
    worst = cs.most_warnings(a, count=3)
    assert [d.warnings for d in worst] == sorted((d.warnings for d in a.documents), reverse=True)[
        :3
    ]
    rows = cs.comparison_rows({"A": a, "B": b})
    assert [r["chunks"] for r in rows] == [a.chunks, b.chunks]
    assert rows[1]["max"] == max(b.sizes.tolist()) and rows[1]["unit"] == "chars"
    over = sum(r.over_window or 0 for r in a.documents)
    assert rows[0]["over window"] == round(100 * over / a.chunks, 2)
    table = cs.chunks_per_document({"A": a, "B": b})
    assert table["document"] == [d.name for d in corpus.documents]
    assert table["B"] == [r.chunks for r in b.documents]


def test_a_table_row_summarises_the_sizes() -> None:
    row = cs.corpus_stats(_samples(), CONFIGS[0]).documents[0]
    shown = row.to_row()
    assert shown["chunks"] == len(row.sizes)
    assert (shown["min"], shown["max"]) == (min(row.sizes), max(row.sizes))
    assert shown["mean"] == round(sum(row.sizes) / len(row.sizes), 1)
    assert shown["error"] == ""
