"""Pass@k as the contextual-retrieval guide defines it, pinned on hand-made rankings;
the coverage rule (``--found-at``) against the exact rule; every metric at several k
from one retrieval; given chunks and ``scope="all"`` in the core evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Config
from chunking.core import run
from chunking.evaluation.core import GIVEN, Evaluation, Retrieved, Settings, evaluate
from chunking.evaluation.passk import (
    FOUND_AT,
    check_found_at,
    check_ks,
    k_columns,
    pass_scores,
    scores_at,
)
from chunking.evaluation.questions import Question, Reference
from chunking.evaluation.spans import as_spans
from chunking.evaluation.techniques import Technique
from chunking.model import Chunk
from tests.test_datasets import CODE_EVAL, code_set  # noqa: F401  (a fixture)

BM25 = Technique(retriever="bm25")


def chunks_of(text: str, spans: list[tuple[int, int]]) -> tuple[Chunk, ...]:
    return tuple(Chunk(i, s, e, text[s:e], e - s) for i, (s, e) in enumerate(spans))


def ranked(
    questions: list[Question],
    documents: dict[str, str],
    rankings: list[list[tuple[str, tuple[int, int]]]],
) -> Evaluation:
    """An evaluation whose retrieval returned ``rankings`` (per question: document id
    and span of each unit, best first): the metric alone, without a retriever."""
    hits = tuple(
        Retrieved(
            corpus_ids=tuple(cid for cid, _ in ranking),
            chunk_indices=np.arange(len(ranking)),
            scores=np.arange(len(ranking), 0, -1, dtype=np.float64),
            spans=as_spans([span for _, span in ranking]),
        )
        for ranking in rankings
    )
    n = len(questions)
    return Evaluation(
        config=None,
        questions=tuple(questions),
        chunks={},
        chunk_spans={},
        scores={m: np.zeros(n) for m in ("recall", "precision", "iou", "precision_omega")},
        split_counts=np.zeros(n, dtype=np.int64),
        retrieved=hits,
        settings=Settings(top_k=max(len(r) for r in rankings), scope="all"),
        model=None,
    )


def reference(text: str, start: int, end: int) -> Reference:
    return Reference(start, end, text[start:end])


# ------------------------------------------------------------ hand-made rankings

DOC = "alpha beta\n\ngamma delta\n\nepsilon zeta\n\neta theta"
A, B, C, D = (0, 10), (12, 23), (25, 37), (39, 48)


def test_pass_at_k_is_the_share_of_golden_chunks_in_the_top_k():
    q = Question(0, "q", "d", (reference(DOC, *A), reference(DOC, *C)))
    evaluation = ranked([q], {"d": DOC}, [[("d", A), ("d", B), ("d", C), ("d", D)]])
    for rule in (None, FOUND_AT):
        got = [pass_scores(evaluation, {"d": DOC}, k, rule)[0] for k in (1, 2, 3, 4)]
        assert got == [0.5, 0.5, 1.0, 1.0]


def test_pass_at_k_averages_questions_in_percent():
    docs = {"d": DOC}
    first = Question(0, "q1", "d", (reference(DOC, *A),))
    second = Question(1, "q2", "d", (reference(DOC, *D), reference(DOC, *B), reference(DOC, *C)))
    evaluation = ranked([first, second], docs, [[("d", B), ("d", A)], [("d", B), ("d", C)]])
    row = k_columns(evaluation, docs, [1, 2], None)
    # q1: 0 then 1; q2: 1/3 then 2/3
    assert row["pass@1"] == round(100 * (0 + 1 / 3) / 2, 2) == 16.67
    assert row["pass@2"] == round(100 * (1 + 2 / 3) / 2, 2) == 83.33


def test_exact_rule_counts_the_same_text_in_another_document_as_the_guide_does():
    licence = "/* Apache License */"
    docs = {"a": licence + "\nfn a() {}", "b": licence + "\nfn b() {}"}
    q = Question(0, "q", "a", (reference(docs["a"], 0, len(licence)),))
    evaluation = ranked([q], docs, [[("b", (0, len(licence)))]])
    assert pass_scores(evaluation, docs, 1, None)[0] == 1.0  # stripped contents are equal
    assert pass_scores(evaluation, docs, 1, FOUND_AT)[0] == 0.0  # not its span


def test_exact_rule_counts_a_window_that_holds_the_golden_chunk():
    q = Question(0, "q", "d", (reference(DOC, *B),))
    window = ranked([q], {"d": DOC}, [[("d", (A[0], C[1]))]])
    assert pass_scores(window, {"d": DOC}, 1, None)[0] == 1.0
    part = ranked([q], {"d": DOC}, [[("d", (B[0], B[1] - 1))]])
    assert pass_scores(part, {"d": DOC}, 1, None)[0] == 0.0


def test_coverage_rule_counts_non_whitespace_characters_only():
    text = "ab  cd\n\n\n\nef  gh"  # 8 non-whitespace characters
    q = Question(0, "q", "d", (reference(text, 0, len(text)),))

    def found(span: tuple[int, int], share: float) -> float:
        evaluation = ranked([q], {"d": text}, [[("d", span)]])
        return float(pass_scores(evaluation, {"d": text}, 1, share)[0])

    assert found((0, 6), 0.5) == 1.0  # "ab  cd": 4 of 8 (6 of 16 characters)
    assert found((0, 6), 0.6) == 0.0
    assert found((4, 10), 0.3) == 0.0  # "cd\n\n\n\n": 2 of 8 (6 of 16 characters)
    assert found((2, 4), 0.01) == 0.0  # whitespace alone covers nothing
    assert found((0, len(text)), 1.0) == 1.0


def test_coverage_adds_up_the_top_k_chunks_and_counts_overlap_once():
    text = "aaaa bbbb cccc dddd"
    q = Question(0, "q", "d", (reference(text, 0, len(text)),))  # 16 non-whitespace
    docs = {"d": text}
    two = ranked([q], docs, [[("d", (0, 4)), ("d", (5, 9)), ("d", (0, 9))]])
    assert pass_scores(two, docs, 1, 0.5)[0] == 0.0  # 4 of 16
    assert pass_scores(two, docs, 2, 0.5)[0] == 1.0  # 8 of 16, from two chunks
    same = ranked([q], docs, [[("d", (0, 9)), ("d", (0, 9)), ("d", (5, 9))]])
    assert pass_scores(same, docs, 3, 0.6)[0] == 0.0  # still 8 of 16


def test_a_chunk_of_another_document_covers_nothing():
    docs = {"d": DOC, "e": DOC}
    q = Question(0, "q", "d", (reference(DOC, *A),))
    evaluation = ranked([q], docs, [[("e", A)]])
    assert pass_scores(evaluation, docs, 1, FOUND_AT)[0] == 0.0


def test_bad_k_and_shares_are_refused():
    q = Question(0, "q", "d", (reference(DOC, *A),))
    evaluation = ranked([q], {"d": DOC}, [[("d", A)]])
    with pytest.raises(ValueError, match="more than the 1 units retrieved"):
        k_columns(evaluation, {"d": DOC}, [1, 5])
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"in \(0, 1\]"):
            check_found_at(bad)
    with pytest.raises(ValueError, match="at least 1"):
        check_ks([5, 0])
    assert check_ks([20, 5, 10, 5]) == [5, 10, 20]


# ------------------------------------------------ the coverage rule = the exact rule


@given(
    st.lists(st.integers(1, 6), min_size=2, max_size=8),
    st.data(),
    st.floats(0.01, 1.0),
)
def test_on_non_overlapping_distinct_chunks_found_at_equals_the_exact_rule(lengths, data, share):
    pieces = [f"{'x' * n}{i}" for i, n in enumerate(lengths)]  # distinct texts
    gaps = data.draw(st.lists(st.sampled_from([" ", "\n\n", " \t"]), min_size=len(pieces)))
    text, spans = "", []
    for piece, gap in zip(pieces, gaps, strict=False):
        text += gap
        spans.append((len(text), len(text) + len(piece)))
        text += piece
    golden = data.draw(st.sets(st.sampled_from(range(len(spans))), min_size=1))
    order = data.draw(st.permutations(range(len(spans))))
    q = Question(0, "q", "d", tuple(reference(text, *spans[g]) for g in sorted(golden)))
    evaluation = ranked([q], {"d": text}, [[("d", spans[i]) for i in order]])
    for k in range(1, len(spans) + 1):
        exact = pass_scores(evaluation, {"d": text}, k, None)
        assert np.array_equal(pass_scores(evaluation, {"d": text}, k, share), exact)


def test_on_the_code_set_bm25_the_rules_differ_only_by_copied_licence_headers(code_set):  # noqa: F811
    evaluation = evaluate(
        code_set.documents,
        code_set.questions,
        None,
        None,
        Settings(top_k=20, scope="all"),
        technique=BM25,
        chunks=code_set.given_chunks(),
    )
    counts: dict[str, int] = {}
    for cut in code_set.given_chunks().values():
        for c in cut:
            counts[c.text.strip()] = counts.get(c.text.strip(), 0) + 1
    for k in (5, 10, 20):
        exact = pass_scores(evaluation, code_set.documents, k, None)
        covered = pass_scores(evaluation, code_set.documents, k, 0.5)
        assert (exact >= covered).all()
        for row in np.flatnonzero(exact != covered):
            refs = code_set.questions[row].references
            assert any(counts[r.content.strip()] > 1 for r in refs)


# ------------------------------------------------------------ metrics at every k


def test_recall_at_the_retrieved_k_equals_the_evaluation(code_set):  # noqa: F811
    chosen = code_set.about([f"doc_{i}" for i in range(1, 11)])
    evaluation = evaluate(
        chosen.documents,
        chosen.questions,
        Config.create("recursive", size=200, unit="tokens"),
        None,
        Settings(top_k=10, scope="all"),
        technique=BM25,
    )
    at_ten = scores_at(evaluation, 10)
    for metric in ("recall", "precision", "iou"):
        assert np.allclose(at_ten[metric], evaluation.scores[metric])
    at_two = scores_at(evaluation, 2)
    assert (at_two["recall"] <= at_ten["recall"] + 1e-12).all()
    row = k_columns(evaluation, chosen.documents, [2, 10])
    assert row["recall@10"] == pytest.approx(evaluation.mean("recall"))
    assert row["pass@2"] <= row["pass@10"]


# ------------------------------------------- given chunks and scope "all" in core


def test_given_chunks_score_as_the_configuration_that_cut_them():
    docs = {
        "one": "Cats purr when content.\n\nDogs bark at strangers.\n\nFish swim in schools.",
        "two": "Bread needs yeast.\n\nCheese needs milk.\n\nWine needs grapes.",
    }
    config = Config.create("recursive", size=30, unit="chars")
    questions = [
        Question(0, "Why do dogs bark?", "one", (Reference(25, 48, docs["one"][25:48]),)),
        Question(1, "What does cheese need?", "two", (Reference(20, 38, docs["two"][20:38]),)),
    ]
    settings = Settings(top_k=2, scope="all")
    cut = evaluate(docs, questions, config, None, settings, technique=BM25)
    chunks = {i: tuple(run(text, config)) for i, text in docs.items()}
    as_given = evaluate(docs, questions, None, None, settings, technique=BM25, chunks=chunks)
    assert as_given.summary["strategy"] == GIVEN and as_given.label == GIVEN
    assert as_given.summary["config"] is None
    for metric in ("recall", "precision", "iou", "precision_omega"):
        assert np.array_equal(cut.scores[metric], as_given.scores[metric])
    with pytest.raises(ValueError, match="one of them"):
        evaluate(docs, questions, config, None, settings, technique=BM25, chunks=chunks)
    with pytest.raises(ValueError, match="no given chunks for document 'two'"):
        evaluate(
            docs, questions, None, None, settings, technique=BM25, chunks={"one": chunks["one"]}
        )


def test_scope_all_searches_documents_no_question_is_about():
    docs = {"asked": "Cats purr. Dogs bark.", "other": "Dogs bark loudly at night, dogs bark."}
    questions = [Question(0, "dogs bark", "asked", (Reference(11, 21, "Dogs bark."),))]
    config = Config.create("recursive", size=12, unit="chars")
    wide = evaluate(docs, questions, config, None, Settings(top_k=3, scope="all"), technique=BM25)
    assert set(wide.chunks) == {"asked", "other"}
    assert "other" in wide.retrieved[0].corpus_ids
    narrow = evaluate(docs, questions, config, None, Settings(top_k=3), technique=BM25)
    assert set(narrow.chunks) == {"asked"}
