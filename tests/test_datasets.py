"""Data sets by folder: both layouts detected by their files, the code set's chunks
located in order, its golden chunks as gold spans, and ``evaluate --dataset``."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.cli import main
from chunking.evaluation.datasets import (
    CHROMA,
    CODE,
    DATASET_ENV,
    DatasetError,
    detect_layout,
    find_dataset,
    load_dataset,
    locate_in_order,
    read_code_eval,
)
from tests.conftest import ROOT, write

CODE_EVAL = ROOT.parent / "shared" / "datasets" / "anthropic-code-eval"


@pytest.fixture(scope="module")
def code_set():
    if not CODE_EVAL.is_dir():
        pytest.fail(f"the anthropic-code-eval data set is missing at {CODE_EVAL}")
    return read_code_eval(CODE_EVAL)


def code_folder(tmp: Path, documents: list[dict], questions: list[dict]) -> Path:
    """A folder in the anthropic-code-eval layout."""
    write(tmp / "codebase_chunks.json", json.dumps(documents))
    write(tmp / "evaluation_set.jsonl", "\n".join(json.dumps(q) for q in questions) + "\n")
    return tmp


def document(doc_id: str, uuid: str, pieces: list[str], sep: str = "\n") -> dict:
    return {
        "doc_id": doc_id,
        "original_uuid": uuid,
        "content": sep.join(pieces),
        "chunks": [
            {"chunk_id": f"{doc_id}_chunk_{i}", "original_index": i, "content": p}
            for i, p in enumerate(pieces)
        ],
    }


def question(query: str, *golden: tuple[str, int]) -> dict:
    return {
        "query": query,
        "golden_doc_uuids": list(dict.fromkeys(u for u, _ in golden)),
        "golden_chunk_uuids": [list(g) for g in golden],
    }


# ---------------------------------------------------------------------- detection


def test_detect_layout_by_files(chroma_dir, tmp_path):
    assert detect_layout(chroma_dir) == CHROMA
    assert detect_layout(CODE_EVAL) == CODE
    write(tmp_path / "questions_df.csv", "question,references,corpus_id\n")  # no corpora/
    with pytest.raises(DatasetError, match=r"questions_df\.csv.*evaluation_set\.jsonl"):
        detect_layout(tmp_path)
    with pytest.raises(DatasetError, match="not a folder"):
        detect_layout(tmp_path / "missing")


def test_chroma_layout_reads_as_before(chroma_dir):
    dataset = load_dataset(chroma_dir)
    assert dataset.layout == CHROMA and dataset.scope == "document" and dataset.chunks is None
    assert len(dataset.questions) == 472 and len(dataset.documents) == 5
    with pytest.raises(DatasetError, match="no chunks of its own"):
        dataset.given_chunks()


# ----------------------------------------------------------------------- the code set


def test_code_set_chunks_are_exact_slices_in_order(code_set):
    assert code_set.layout == CODE and code_set.scope == "all"
    assert len(code_set.documents) == 90 and len(code_set.questions) == 248
    chunks = code_set.given_chunks()
    assert sum(len(c) for c in chunks.values()) == 737
    for doc_id, cut in chunks.items():
        text = code_set.documents[doc_id]
        assert [c.index for c in cut] == list(range(len(cut)))
        assert all(text[c.start : c.end] == c.text for c in cut)
        assert all(a.end <= b.start for a, b in itertools.pairwise(cut))
        # the set's chunks leave only whitespace between them
        gaps = [text[a.end : b.start] for a, b in itertools.pairwise(cut)]
        assert all(not g.strip() for g in gaps)


def test_code_set_references_are_golden_chunk_spans(code_set):
    raw = [json.loads(line) for line in (CODE_EVAL / "evaluation_set.jsonl").open()]
    chunks = code_set.given_chunks()
    for q, row in zip(code_set.questions, raw, strict=True):
        assert q.text == row["query"]
        golden = {int(i) for _, i in row["golden_chunk_uuids"]}
        spans = {(chunks[q.corpus_id][i].start, chunks[q.corpus_id][i].end) for i in golden}
        assert {(r.start, r.end) for r in q.references} == spans
        text = code_set.documents[q.corpus_id]
        assert all(text[r.start : r.end] == r.content for r in q.references)
    assert code_set.titles["doc_1"].endswith("libafl/src/executors/differential.rs")


def test_repeated_snippet_lands_on_the_occurrence_that_was_cut(tmp_path):
    header = "/* Licensed under the Apache License */"
    pieces = [header, "fn first() {}", header, "fn second() {}"]
    folder = code_folder(
        tmp_path,
        [document("doc_1", "u1", pieces)],
        [question("What is second?", ("u1", 2), ("u1", 3))],
    )
    dataset = load_dataset(folder)
    text = dataset.documents["doc_1"]
    second = dataset.given_chunks()["doc_1"][2]
    assert second.start == text.rindex(header) != text.find(header)
    refs = dataset.questions[0].references
    assert [(r.start, r.end) for r in refs] == [
        (second.start, second.end),
        (text.index("fn second"), len(text)),
    ]


@given(
    st.lists(st.sampled_from(["a", "ab", "b", "abc", "ca"]), min_size=1, max_size=12),
    st.lists(st.sampled_from([" ", "\n", "\n\n", "\t "]), min_size=12, max_size=12),
)
def test_locate_in_order_finds_each_piece_where_it_was_put(pieces, gaps):
    text, starts = "", []
    for piece, gap in zip(pieces, gaps, strict=False):
        text += gap
        starts.append(len(text))
        text += piece
    assert locate_in_order(text, pieces) == starts


def test_locate_in_order_refuses_a_piece_out_of_order():
    with pytest.raises(DatasetError, match="chunk 1 does not occur after the chunk before it"):
        locate_in_order("beta alpha", ["alpha", "beta"])
    with pytest.raises(DatasetError, match="chunk 0 does not occur in the document"):
        locate_in_order("beta alpha", ["gamma"])


@pytest.mark.parametrize(
    ("documents", "questions", "message"),
    [
        ([document("d", "u", ["x"])], [question("q?", ("nope", 0))], "names no document"),
        ([document("d", "u", ["x"])], [question("q?", ("u", 3))], "has no chunk 3"),
        (
            [document("d", "u", ["x"]), document("e", "v", ["y"])],
            [question("q?", ("u", 0), ("v", 0))],
            "golden chunks in 2 documents",
        ),
        ([document("d", "u", ["x"])], [{"query": " ", "golden_chunk_uuids": [["u", 0]]}], "empty"),
    ],
)
def test_bad_code_sets_get_one_line_errors(tmp_path, documents, questions, message):
    with pytest.raises(DatasetError, match=message):
        load_dataset(code_folder(tmp_path, documents, questions))


def test_a_chunk_missing_from_its_document_is_named(tmp_path):
    doc = document("d", "u", ["alpha", "beta"])
    doc["chunks"][1]["content"] = "gamma"
    with pytest.raises(DatasetError, match="d: chunk 1 does not occur in the document"):
        load_dataset(code_folder(tmp_path, [doc], [question("q?", ("u", 0))]))


def test_about_keeps_every_document(code_set):
    chosen = code_set.about(["doc_1"])
    assert len(chosen.documents) == 90
    assert chosen.questions and {q.corpus_id for q in chosen.questions} == {"doc_1"}
    assert [q.index for q in chosen.questions] == list(range(len(chosen.questions)))
    with pytest.raises(DatasetError, match="no document 'doc_999'"):
        code_set.about(["doc_999"])


# ------------------------------------------------------------------------------ CLI


def test_evaluate_dataset_given_chunks_prints_pass_at_k(tmp_path, capsys):
    folder = code_folder(
        tmp_path,
        [
            document("doc_1", "u1", ["def parse(config, path): ...", "def write(log, line): ..."]),
            document("doc_2", "u2", ["class Store: pass", "def evict(oldest, entry): ..."]),
        ],
        [
            question("parse config path", ("u1", 0)),
            question("evict oldest entry", ("u2", 1)),
            question("write log line", ("u1", 1)),
        ],
    )
    argv = ["evaluate", "--dataset", str(folder), "--given-chunks", "--top-k", "1", "2"]
    code = main([*argv, "--retriever", "bm25", "--model", "none", "--format", "json", "-q"])
    assert code == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    assert row["strategy"] == "given chunks" and row["n_chunks"] == 4
    # BM25 ranks each question's golden chunk first: the words only occur there
    assert row["pass@1"] == row["pass@2"] == 100.0
    assert 0 < row["recall@1"] <= row["recall@2"] == row["recall_mean"]


def test_evaluate_dataset_matches_questions_and_corpus(chroma_dir, capsys):
    common = ["--corpus-id", "state_of_the_union", "--model", "none", "--format", "json"]
    assert main(["evaluate", "--dataset", str(chroma_dir), *common, "-q"]) == 0
    by_folder = json.loads(capsys.readouterr().out)["results"]
    files = ["--questions", str(chroma_dir / "questions_df.csv")]
    files += ["--corpus", str(chroma_dir / "corpora")]
    assert main(["evaluate", *files, *common, "-q"]) == 0
    by_files = json.loads(capsys.readouterr().out)["results"]
    assert by_folder == by_files


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give --dataset DIR, or --questions FILE with --corpus DIR"),
        (["--dataset", "CHROMA", "--given-chunks"], "no chunks of its own"),
        (["--dataset", "CODE", "--given-chunks", "--size", "200"], "drop --size"),
        (["--dataset", "CODE", "--questions", "q.csv"], "not both"),
        (["--dataset", "CODE", "--given-chunks", "--found-at", "1.5"], r"in \(0, 1\]"),
        (["--dataset", "CODE", "--given-chunks", "--top-k", "0"], "at least 1"),
        (["--dataset", "CODE", "--given-chunks", "--return", "parent"], "parent-child"),
    ],
)
def test_evaluate_dataset_bad_usage_is_one_line(chroma_dir, capsys, extra, message):
    extra = [{"CHROMA": str(chroma_dir), "CODE": str(CODE_EVAL)}.get(a, a) for a in extra]
    assert main(["evaluate", *extra, "--model", "none", "--retriever", "bm25", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err


def test_find_dataset_looks_where_the_sets_are(monkeypatch, tmp_path, chroma_dir):
    monkeypatch.chdir(ROOT)  # the checkout, next to ../shared
    assert find_dataset(CODE) == ROOT.parent / "shared" / "datasets" / CODE
    assert find_dataset(CHROMA) == ROOT.parent / "shared" / "datasets" / CHROMA
    monkeypatch.setenv(DATASET_ENV[CODE], str(tmp_path))  # a folder of neither layout
    with pytest.raises(DatasetError, match="CHUNK_EXPLORER_CODE_EVAL"):
        find_dataset(CODE)
    monkeypatch.setenv(DATASET_ENV[CODE], str(chroma_dir))  # the other layout
    with pytest.raises(DatasetError, match="was not found"):
        find_dataset(CODE)
