"""Retrieval techniques: BM25 and reciprocal-rank fusion against hand-computed values,
late pooling against the model's token vectors, windows and parents as returned units,
header context, the techniques table, advice that does not contradict itself, and the
command line's flags and one-line errors."""

from __future__ import annotations

import itertools
import json
import math
import uuid
from pathlib import Path

import numpy as np
import pytest

from chunking import Config, chunk
from chunking.cli.evaluate import evaluate_main, model_names
from chunking.embedding.models import get_embedder
from chunking.evaluation import Settings, as_spans, evaluate
from chunking.evaluation.advice import advise
from chunking.evaluation.context import CONTEXT_KEY, embedded_text, header_contexts
from chunking.evaluation.core import embedded_chunk_texts, retrieve, window_spans
from chunking.evaluation.questions import Question, Reference
from chunking.evaluation.retrievers import RRF_K, BM25Index, ranks, reciprocal_rank_fusion
from chunking.evaluation.sweep import (
    compare_techniques,
    models_side_by_side,
    sweep,
    table_rows,
    techniques_table,
)
from chunking.evaluation.techniques import Technique

# ------------------------------------------------------------------------------ BM25


def test_bm25_scores_match_the_lucene_formula_by_hand():
    # After stop words: [cat sat mat], [dogs bark loudly], [cat purrs cat]; avg length 3.
    index = BM25Index(["the cat sat on the mat", "dogs bark loudly", "the cat purrs cat"])
    k1, b, n, df = 1.5, 0.75, 3, 2
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))  # "cat" is in 2 of 3 chunks

    def term(tf: int, length: int) -> float:
        return idf * tf / (tf + k1 * (1 - b + b * length / 3))

    scores = index.scores("a cat and a zebra")  # "zebra" is in no chunk: adds nothing
    assert scores == pytest.approx([term(1, 3), 0.0, term(2, 3)], rel=1e-6)
    assert scores[0] == pytest.approx(0.188, abs=1e-3)  # 0.470 · 1 / 2.5
    assert index.scores("zebra").tolist() == [0.0, 0.0, 0.0]


def test_bm25_on_chunks_without_a_single_word_scores_zero():
    assert BM25Index(["the", "a an"]).scores("the cat").tolist() == [0.0, 0.0]


# ------------------------------------------------------------------------------ RRF


def test_reciprocal_rank_fusion_adds_one_over_k_plus_rank():
    dense = np.array([0.9, 0.5, 0.1])  # ranks 1, 2, 3
    lexical = np.array([0.0, 7.0, 3.0])  # ranks 3, 1, 2
    fused = reciprocal_rank_fusion(dense, lexical)
    assert RRF_K == 60
    assert fused == pytest.approx([1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62])
    assert np.argsort(-fused, kind="stable").tolist() == [1, 0, 2]
    assert reciprocal_rank_fusion(dense, lexical, k=0) == pytest.approx(
        [1 + 1 / 3, 1 / 2 + 1, 1 / 3 + 1 / 2]
    )


def test_ranks_keep_ties_in_order_and_a_negative_constant_is_refused():
    assert ranks(np.array([1.0, 2.0, 1.0])).tolist() == [2, 1, 3]
    with pytest.raises(ValueError, match="must not be negative"):
        reciprocal_rank_fusion(np.ones(2), k=-1)


# ------------------------------------------------------------------------ techniques


def test_technique_names_and_bad_choices():
    assert Technique().name == "dense"
    assert Technique.parse("BM25").name == "bm25"
    assert Technique.parse(embedding="late", context="headers").name == "late + headers"
    assert Technique.parse("hybrid", returned="window:01").returned == "window:1"
    with pytest.raises(ValueError, match="window:N must be a whole number"):
        Technique.parse(returned="window:-1")
    with pytest.raises(ValueError, match="unknown retriever 'sparse'"):
        Technique.parse("sparse")
    with pytest.raises(ValueError, match="unknown returned unit 'page'"):
        Technique.parse(returned="page")
    with pytest.raises(ValueError, match="parent-child configuration"):
        Technique.parse(returned="parent").check(Config.create("recursive"))


# --------------------------------------------------------------------- returned units


def test_window_spans_are_clipped_at_the_document_edges():
    spans = as_spans([(0, 10), (10, 20), (20, 30), (30, 40), (40, 50)])
    assert window_spans(spans, 0).tolist() == spans.tolist()
    assert window_spans(spans, 1).tolist() == [[0, 20], [0, 30], [10, 40], [20, 50], [30, 50]]
    assert window_spans(spans, 10).tolist() == [[0, 50]] * 5
    overlapping = as_spans([(0, 12), (8, 22), (18, 30)])
    assert window_spans(overlapping, 1).tolist() == [[0, 22], [0, 30], [8, 30]]
    with pytest.raises(ValueError, match="0 or more"):
        window_spans(spans, -1)


DOC = " ".join(f"Sentence {i} speaks of topic{i} and nothing else." for i in range(60))


def _question_on(text: str, phrase: str) -> Question:
    start = text.index(phrase)
    return Question(0, phrase, "doc", (Reference(start, start + len(phrase), phrase),))


def test_window_returns_the_neighbours_and_scores_what_is_returned():
    config = Config.create("recursive", size=100, unit="chars")
    chunks = chunk(DOC, "recursive", size=100, unit="chars")
    q = _question_on(DOC, "topic0 and nothing")  # in the first chunk: clipped at the start
    plain = evaluate(
        {"doc": DOC}, [q], config, None, Settings(top_k=1), technique=Technique("bm25")
    )
    windowed = evaluate(
        {"doc": DOC},
        [q],
        config,
        None,
        Settings(top_k=1),
        technique=Technique.parse("bm25", returned="window:2"),
    )
    (hit,) = windowed.retrieved
    assert hit.chunk_indices.tolist() == [0]
    assert hit.spans.tolist() == [[chunks[0].start, chunks[2].end]]
    assert plain.retrieved[0].spans.tolist() == [[chunks[0].start, chunks[0].end]]
    gold = len(q.references[0].content)
    assert windowed.scores["precision"][0] == pytest.approx(
        gold / (chunks[2].end - chunks[0].start)
    )
    assert windowed.scores["recall"][0] == plain.scores["recall"][0] == 1.0
    assert windowed.summary["technique"] == "bm25 + window:2"


def test_parent_returns_the_parent_of_the_retrieved_child_once():
    config = Config.create("hierarchy", size=400, child_sizes="100", unit="chars")
    chunks = chunk(DOC, "hierarchy", size=400, child_sizes="100", unit="chars")
    q = _question_on(DOC, "topic17 and nothing")
    technique = Technique.parse("bm25", returned="parent")
    result = evaluate({"doc": DOC}, [q], config, None, Settings(top_k=3), technique=technique)
    (hit,) = result.retrieved
    child = next(c for c in chunks if c.metadata["children"] == 0 and "topic17 " in c.text)
    parent = chunks[child.metadata["parent"]]
    assert parent.metadata["level"] == 0 and parent.start <= child.start < child.end <= parent.end
    assert hit.chunk_indices[0] == parent.index
    assert hit.spans[0].tolist() == [parent.start, parent.end]
    assert len(set(hit.chunk_indices.tolist())) == 3  # three distinct parents
    assert all(chunks[i].metadata["level"] == 0 for i in hit.chunk_indices)
    assert result.scores["recall"][0] == 1.0


# ---------------------------------------------------------------------------- context

MARKDOWN = (
    "# Guide\n\nIntro text here.\n\n## Install\n\nRun the installer.\n\n### Linux\n\nUse apt.\n"
)


def test_header_context_from_markdown_headings_and_from_header_path():
    chunks = chunk(MARKDOWN, "recursive", size=30, unit="chars")
    contexts = header_contexts(MARKDOWN, chunks, "guide.md")
    by_text = {c.text: ctx for c, ctx in zip(chunks, contexts, strict=True)}
    assert by_text["### Linux\n\nUse apt."] == "guide.md > Guide > Install > Linux"
    assert by_text["Run the installer."] == "guide.md > Guide > Install"
    assert by_text["# Guide\n\nIntro text here."] == "guide.md > Guide"
    structured = chunk(MARKDOWN, "markdown", size=200, unit="chars")
    paths = header_contexts(MARKDOWN, structured, "t")
    assert paths == [" > ".join(["t", *c.metadata["header_path"]]) for c in structured]


def test_header_context_changes_what_is_embedded_never_the_chunk():
    config = Config.create("recursive", size=30, unit="chars")
    q = _question_on(MARKDOWN, "Use apt.")
    result = evaluate(
        {"guide": MARKDOWN},
        [Question(0, q.text, "guide", q.references)],
        config,
        get_embedder("hash"),
        technique=Technique.parse(context="headers"),
    )
    plain = chunk(MARKDOWN, "recursive", size=30, unit="chars")
    for before, after in zip(plain, result.chunks["guide"], strict=True):
        assert (after.start, after.end, after.text) == (before.start, before.end, before.text)
        assert after.metadata[CONTEXT_KEY].startswith("guide")
        assert embedded_text(after) == f"{after.metadata[CONTEXT_KEY]}\n\n{after.text}"


# ------------------------------------------------------------------------------ late


@pytest.fixture(scope="module")
def minilm():
    return get_embedder()


def test_late_pooling_is_the_mean_of_the_token_vectors_inside_each_span(minilm):
    from chunking.evaluation.late import late_vectors, token_vectors

    text = "Cats purr when they are content. Dogs bark at strangers. " * 3
    spans = as_spans([(0, 33), (33, 57), (57, 120), (5, 9)])
    vectors, offsets = token_vectors(minilm, text)
    encoded = minilm.encoded
    pooled = late_vectors(minilm, text, spans)
    assert minilm.encoded == encoded  # no chunk was embedded alone
    for (start, end), got in zip(spans, pooled, strict=True):
        inside = [k for k, (a, b) in enumerate(offsets) if a < end and b > start]
        mean = vectors[inside].mean(axis=0)
        assert got == pytest.approx(mean / np.linalg.norm(mean), abs=1e-5)


def test_late_token_vectors_of_a_short_text_are_the_models_own(minilm):
    from chunking.evaluation.late import token_vectors

    text = "Late chunking keeps the whole document in view."
    vectors, offsets = token_vectors(minilm, text)
    reference = minilm.model.encode(text, output_value="token_embeddings", convert_to_numpy=True)
    assert vectors == pytest.approx(np.asarray(reference)[1:-1], abs=1e-4)  # without CLS, SEP
    assert offsets[0].tolist() == [0, 4]  # "Late": exact characters of the first token


def test_windows_cover_every_token_and_overlap_by_a_quarter():
    from chunking.evaluation.late import windows

    assert windows(10, 4) == [(0, 4), (3, 7), (6, 10)]
    assert windows(3, 254) == [(0, 3)]
    spans = windows(1000, 254)
    assert spans[0] == (0, 254) and spans[-1][1] == 1000
    assert all(b[0] == a[1] - 64 for a, b in itertools.pairwise(spans))


def test_late_needs_a_torch_sentence_transformer():
    from chunking.embedding.models import EmbeddingError
    from chunking.evaluation.late import late_vectors, supports_late

    fake = get_embedder("hash")
    assert not supports_late(fake)
    with pytest.raises(EmbeddingError, match="late chunking needs token vectors"):
        late_vectors(fake, "Some text.", as_spans([(0, 4)]))


# -------------------------------------------------------------- techniques table

LONG = {"doc": DOC}


def test_techniques_table_rows_deltas_and_left_out_rows():
    config = Config.create("recursive", size=100, unit="chars")
    phrases = ["topic3 and nothing", "topic40 and nothing", "topic55 and nothing"]
    qs = [Question(i, p, "doc", _question_on(DOC, p).references) for i, p in enumerate(phrases)]
    labels = [label for label, _, _ in table_rows(config)]
    assert labels[:7] == [
        "dense",
        "bm25",
        "hybrid",
        "late",
        "headers",
        "late + headers",
        "window:1",
    ]
    assert "parent" not in labels
    runs = compare_techniques(LONG, qs, config, get_embedder("hash"), Settings(top_k=2))
    table = techniques_table(runs)
    assert "late" not in table["technique"].tolist()  # the fake model has no token vectors
    by_name = table.set_index("technique")
    dense = by_name.loc["dense"]
    assert table["technique"].iloc[0] == "dense"  # the baseline row comes first
    for name, row in by_name.iterrows():  # every delta is against dense, not the row itself
        assert row["recall_delta"] == pytest.approx(row["recall"] - dense["recall"]), name
        assert row["precision_delta"] == pytest.approx(row["precision"] - dense["precision"])
    others = by_name.drop(index="dense")
    assert (others["precision_delta"] != 0).any()  # a delta of zero everywhere proves nothing
    assert (table["seconds"] >= 0).all()
    hierarchy = Config.create("hierarchy", size=400, child_sizes="100", unit="chars")
    assert "parent" in [label for label, _, _ in table_rows(hierarchy)]
    without_model = techniques_table(compare_techniques(LONG, qs, config, None))
    assert without_model["technique"].tolist() == ["bm25"]


def test_models_side_by_side_has_a_column_per_model_and_metric():
    config = Config.create("recursive", size=100, unit="chars")
    qs = [
        Question(0, "topic3 and nothing", "doc", _question_on(DOC, "topic3 and nothing").references)
    ]
    tables = [sweep(LONG, qs, [config], get_embedder(m)).table for m in ("hash",)]
    table = tables[0]
    other = table.assign(model="other", recall_mean=0.25)
    import pandas as pd

    wide = models_side_by_side(pd.concat([table, other], ignore_index=True))
    assert list(wide.columns) == [
        "configuration",
        "technique",
        "Recall · hash-64",
        "Recall · other",
        "Precision Ω · hash-64",
        "Precision Ω · other",
    ]
    assert wide["Recall · other"].tolist() == [0.25]


# ---------------------------------------------------------------------------- advice


def _row(precision: float, recall: float, **extra) -> dict:
    config = Config.create("recursive", size=400, overlap=0, unit="tokens")
    return {"config": config.to_json(), "precision_mean": precision, "recall_mean": recall, **extra}


def test_advice_never_asks_for_a_precision_it_calls_unreachable():
    text = advise(_row(0.05, 0.9, mean_gold_chars=150, mean_chunk_chars=1600)).text()
    assert "out of reach" in text and "400 → 300" in text
    assert "reduce the chunk size by" not in text  # no order to reach 0.7 ...
    assert "any useful size" not in text  # ... followed by a contradiction
    reachable = advise(_row(0.5, 0.9, mean_gold_chars=900, mean_chunk_chars=1000)).text()
    assert "reduce the chunk size by 25% (400 → 300)" in reachable
    assert "out of reach" not in reachable


def test_advice_says_when_chunks_exceed_the_models_window():
    row = _row(0.9, 0.9, truncated_share=0.6, model_limit=254, model="all-MiniLM-L6-v2")
    text = advise(row).text()
    assert "60% of these chunks are longer than all-MiniLM-L6-v2 reads (254" in text
    assert "only their beginning" in text
    assert "longer than" not in advise(_row(0.9, 0.9, truncated_share=0.0, model_limit=254)).text()


def test_evaluation_counts_chunks_over_the_models_window(minilm):
    config = Config.create("recursive", size=600, unit="tokens")
    text = "word " * 3000  # 600 cl100k tokens are 300 word pieces here
    q = Question(0, "word", "doc", (Reference(0, 4, "word"),))
    result = evaluate({"doc": text}, [q], config, minilm)
    assert result.summary["model_limit"] == 254
    pieces = minilm.count_tokens_batch([c.text for c in result.chunks["doc"]])
    assert min(pieces) > 254
    assert result.summary["truncated_share"] == pytest.approx(1.0)
    late = evaluate({"doc": text}, [q], config, minilm, technique=Technique(embedding="late"))
    assert late.summary["truncated_share"] == 0.0  # the whole document is read in windows
    assert late.summary["model_limit"] is None


# ------------------------------------------------------------------------------- CLI


@pytest.fixture
def corpus(tmp_path: Path) -> list[str]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "doc.md").write_text(DOC, encoding="utf-8")
    phrase = "topic12 and nothing"
    start = DOC.index(phrase)
    refs = [{"content": phrase, "start_index": start, "end_index": start + len(phrase)}]
    questions = tmp_path / "q.jsonl"
    row = {"question": phrase, "corpus_id": "doc", "references": refs}
    questions.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return ["--questions", str(questions), "--corpus", str(folder), "--quiet"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--return", "window:-1"], "window:N must be a whole number"),
        (["--return", "parent"], "parent-child configuration"),
        (["--return", "everything"], "unknown returned unit"),
        (["--size", "100", "200", "--techniques"], "one configuration"),
        (["--retriever", "sparse"], "invalid choice: 'sparse'"),
    ],
)
def test_cli_bad_techniques_are_one_line_errors(corpus, capsys, flags, message):
    code = evaluate_main([*corpus, "--model", "hash", *flags])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1


def test_cli_json_names_the_technique_next_to_the_metrics(corpus, capsys):
    code = evaluate_main(
        [
            *corpus,
            "--model",
            "none",
            "--size",
            "100",
            "--unit",
            "chars",
            "--retriever",
            "bm25",
            "--return",
            "window:1",
            "--format",
            "json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    (row,) = json.loads(out)["results"]
    assert row["technique"] == "bm25 + window:1"
    assert row["recall_mean"] == 1.0  # BM25 needs no model
    for key in ("precision_mean", "iou_mean", "precision_omega_mean"):
        assert 0 <= row[key] <= 1


def test_cli_techniques_table(corpus, capsys):
    code = evaluate_main(
        [*corpus, "--model", "hash", "--size", "100", "--unit", "chars", "--techniques"]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["technique", "configuration"] and "Δ" in lines[0]
    assert any(line.split()[0] == "hybrid" for line in lines[1:] if line.strip())
    code = evaluate_main(
        [
            *corpus,
            "--model",
            "none",
            "--size",
            "100",
            "--unit",
            "chars",
            "--techniques",
            "--format",
            "json",
        ]
    )
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["technique"] for r in rows] == ["bm25"]


def test_model_names_take_repeated_flags_and_comma_lists():
    assert model_names(None) == ["all-MiniLM-L6-v2"]
    assert model_names(["a,b", "b", " c "]) == ["a", "b", "c"]


def test_llm_context_goes_to_the_metadata_and_never_into_the_chunk():
    from llm_fakes import Scripted

    text = "# Pets\n\nCats purr when content.\n\n## Fish\n\nFish swim in clean water."
    config = Config.create("recursive", size=30, unit="chars")
    phrase = "Fish swim"
    start = text.index(phrase)
    q = Question(0, "Where do fish swim?", "pets", (Reference(start, start + 9, phrase),))

    def answer(prompt: str) -> str:
        excerpt = prompt.partition("<chunk>\n")[2].partition("\n</chunk>")[0]
        return "About fish." if "Fish swim" in excerpt else "About cats."

    llm = Scripted(answer)
    technique = Technique.parse(context="llm")
    result = evaluate(
        {"pets": text}, [q], config, get_embedder("hash"), technique=technique, llm=llm
    )
    assert result.summary["technique"] == "llm"
    plain = chunk(text, "recursive", size=30, unit="chars")
    assert len(llm.prompts) == len(plain)  # one situating sentence per chunk
    for before, after in zip(plain, result.chunks["pets"], strict=True):
        assert (after.start, after.end, after.text) == (before.start, before.end, before.text)
        expected = "About fish." if "Fish swim" in after.text else "About cats."
        assert after.metadata[CONTEXT_KEY] == expected
    with pytest.raises(ValueError, match="needs a language model"):
        evaluate({"pets": text}, [q], config, get_embedder("hash"), technique=technique)


# ------------------------------------- what a technique embeds, and a query without gold


@pytest.mark.parametrize(
    ("strategy", "params", "technique"),
    [
        ("recursive", {"size": 100, "unit": "chars"}, Technique()),
        ("recursive", {"size": 100, "unit": "chars"}, Technique.parse(context="headers")),
        (
            "hierarchy",
            {"size": 400, "child_sizes": "100", "unit": "chars"},
            Technique.parse(returned="parent"),
        ),
    ],
)
def test_the_listed_chunk_texts_are_all_that_evaluate_embeds(minilm, strategy, params, technique):
    # A text no other test embedded, so that the cache holds only what is listed here.
    doc = f"# Notes {uuid.uuid4().hex}\n\n{DOC}"
    config = Config.create(strategy, **params)
    texts = embedded_chunk_texts({"doc": doc}, config, technique)
    q = _question_on(doc, "topic17 and nothing")
    minilm.embed([q.text, *texts])
    result = evaluate({"doc": doc}, [q], config, minilm, technique=technique)
    assert result.texts_embedded == 0  # every text it needed was listed
    assert result.embedded_chunks == len(texts)
    leaves = [c for c in result.chunks["doc"] if c.metadata.get("children", 0) == 0]
    assert len(texts) == (
        len(leaves) if technique.returned == "parent" else len(result.chunks["doc"])
    )
    if technique.context == "headers":
        assert all(t.startswith("doc > Notes") for t in texts)


def test_no_chunk_text_is_listed_for_techniques_that_embed_none_alone():
    config = Config.create("recursive", size=100, unit="chars")
    for technique in (Technique.parse("bm25"), Technique.parse(embedding="late")):
        assert embedded_chunk_texts({"doc": DOC}, config, technique) == []


@pytest.mark.parametrize(
    "technique",
    [
        Technique(),
        Technique.parse("bm25"),
        Technique.parse("hybrid", returned="window:1"),
        Technique.parse(context="headers"),
    ],
    ids=lambda t: t.name,
)
def test_a_free_query_is_retrieved_as_evaluate_retrieves_a_question(minilm, technique):
    config = Config.create("recursive", size=100, unit="chars")
    chunks = chunk(DOC, "recursive", size=100, unit="chars")
    q = _question_on(DOC, "topic17 and nothing")
    settings = Settings(top_k=3)
    (expected,) = evaluate(
        {"doc": DOC}, [q], config, minilm, settings, technique=technique
    ).retrieved
    found = retrieve(DOC, chunks, q.text, minilm, top_k=3, technique=technique, corpus_id="doc")
    assert found.chunk_indices.tolist() == expected.chunk_indices.tolist()
    assert found.spans.tolist() == expected.spans.tolist()
    assert found.scores == pytest.approx(expected.scores)
    assert "topic17 " in DOC[found.spans[0][0] : found.spans[0][1]]


def test_a_free_query_needs_a_model_unless_it_is_bm25():
    chunks = chunk(DOC, "recursive", size=100, unit="chars")
    with pytest.raises(ValueError, match="needs an embedding model"):
        retrieve(DOC, chunks, "topic3", None)
    assert len(retrieve(DOC, chunks, "topic3", None, technique=Technique.parse("bm25")).spans) == 5
