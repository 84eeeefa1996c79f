"""Retrieval evaluation: span metrics, question files, evaluation, sweeps, advice, figures,
evidence HTML, the CLI and the Evaluate page (with the fast "hash" embedder)."""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Config, chunk
from chunking.cli.evaluate import evaluate_main
from chunking.embedding.cache import clear_cache
from chunking.embedding.models import get_embedder
from chunking.evaluation import (
    QuestionFileError,
    Settings,
    as_spans,
    evaluate,
    measure,
    overlap,
    parse_questions,
    precision_omega,
    read_corpus,
    retrieval_scores,
    split_references,
    union,
)
from chunking.evaluation.advice import advise, best_row, report
from chunking.evaluation.questions import Question, Reference, renumber
from chunking.evaluation.sweep import Grid, digest, parse_values, results_table, sweep
from chunking.units import get_sizer
from chunking.viz.evaluation import metrics_vs_size, question_scores
from chunking.viz.evidence import evidence_html

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------- span metrics


def chars(pairs) -> set[int]:
    """The character positions a list of spans covers: the brute-force reference."""
    return {i for s, e in pairs for i in range(s, e)}


def test_perfect_retrieval_scores_one():
    gold = as_spans([(10, 20), (30, 35)])
    scores = retrieval_scores(gold.copy(), gold)
    assert scores == (1.0, 1.0, 1.0)
    assert precision_omega(gold.copy(), gold) == 1.0


def test_disjoint_retrieval_scores_zero():
    scores = retrieval_scores(as_spans([(0, 10), (50, 60)]), as_spans([(20, 30)]))
    assert scores == (0.0, 0.0, 0.0)


def test_partial_overlap():
    # chunk [0, 15) against gold [10, 20): 5 shared characters.
    recall, precision, iou = retrieval_scores(as_spans([(0, 15)]), as_spans([(10, 20)]))
    assert recall == pytest.approx(5 / 10)
    assert precision == pytest.approx(5 / 15)
    assert iou == pytest.approx(5 / (15 + 5))  # retrieved length + gold not retrieved


def test_overlapping_retrieved_chunks_are_penalised_in_precision():
    gold = as_spans([(0, 15)])
    disjoint = retrieval_scores(as_spans([(0, 10), (10, 15)]), gold)
    overlapping = retrieval_scores(as_spans([(0, 10), (5, 15)]), gold)
    assert disjoint.recall == overlapping.recall == 1.0
    assert disjoint.precision == 1.0
    assert overlapping.precision == pytest.approx(15 / 20)  # 5 shared characters paid twice
    assert overlapping.iou == pytest.approx(15 / 20)


def test_gold_span_split_across_chunks():
    text = "x" * 40
    chunks = as_spans([(0, 10), (10, 20), (20, 40)])
    refs = as_spans([(5, 15), (12, 18), (19, 21)])
    assert split_references(refs, chunks, text).tolist() == [True, False, True]
    # precision_Ω takes both chunks around the split span: 10 gold of 20 characters.
    assert precision_omega(chunks, refs[:1]) == pytest.approx(10 / 20)


def test_split_ignores_whitespace_at_the_edges_of_a_reference():
    text = "Alpha beta.\nGamma."
    chunks = as_spans([(0, 11), (12, 18)])
    assert not split_references(as_spans([(0, 12)]), chunks, text)[0]


def test_touching_chunks_count_only_when_asked():
    chunks = as_spans([(0, 5), (5, 10)])
    gold = as_spans([(5, 8)])
    assert precision_omega(chunks, gold) == pytest.approx(3 / 5)
    assert precision_omega(chunks, gold, touching=True) == pytest.approx(3 / 10)


def test_foreign_chunks_add_to_the_retrieved_length_only():
    gold = as_spans([(0, 10)])
    own = retrieval_scores(as_spans([(0, 10)]), gold, foreign_length=10)
    assert own.recall == 1.0
    assert own.precision == pytest.approx(0.5)


def test_union_merges_overlapping_and_touching_spans_in_any_order():
    merged = union(as_spans([(8, 12), (0, 3), (2, 5), (5, 6), (20, 20)]))
    assert merged.tolist() == [[0, 6], [8, 12]]


def test_reversed_span_is_rejected():
    with pytest.raises(ValueError, match="ends before it starts"):
        as_spans([(5, 2)])


span_lists = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=8,
)


@given(span_lists, span_lists.filter(lambda s: any(e > b for b, e in s)))
def test_metrics_match_a_brute_force_character_count(retrieved, gold):
    r, g = as_spans(retrieved), as_spans(gold)
    found = chars(retrieved) & chars(gold)
    assert measure(r) == len(chars(retrieved))
    assert overlap(r, g) == len(found)
    lengths = sum(e - s for s, e in retrieved)
    scores = retrieval_scores(r, g)
    assert scores.recall == pytest.approx(len(found) / len(chars(gold)))
    assert scores.precision == pytest.approx(len(found) / lengths if lengths else 0.0)
    missed = len(chars(gold) - chars(retrieved))
    assert scores.iou == pytest.approx(len(found) / (lengths + missed) if lengths + missed else 0.0)
    kept = [(s, e) for s, e in retrieved if chars([(s, e)]) & chars(gold)]
    expected = len(chars(kept) & chars(gold)) / len(chars(kept) | chars(gold))
    assert precision_omega(r, g) == pytest.approx(expected)


# -------------------------------------------------------------------- question files

DOCS = {
    "pets": "Cats purr when they are content. Dogs bark at strangers. Fish swim in schools.",
    "space": "The Moon orbits the Earth. Mars has two moons. Jupiter is the largest planet.",
}


def ref(doc: str, content: str) -> dict:
    start = DOCS[doc].index(content)
    return {"content": content, "start_index": start, "end_index": start + len(content)}


def csv_text(rows: list[dict]) -> str:
    import csv

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if k == "references" else v for k, v in row.items()})
    return out.getvalue()


ROWS = [
    {
        "question": "What do dogs do?",
        "references": [ref("pets", "Dogs bark at strangers.")],
        "corpus_id": "pets",
    },
    {
        "question": "How many moons has Mars?",
        "references": [ref("space", "Mars has two moons.")],
        "corpus_id": "space",
    },
]


def test_csv_and_jsonl_read_the_same_questions():
    from_csv = parse_questions(csv_text(ROWS), DOCS, name="q.csv")
    jsonl = "\n".join(json.dumps(r) for r in ROWS) + "\n"
    from_jsonl = parse_questions(jsonl, DOCS, name="q.jsonl")
    assert from_csv == from_jsonl
    assert [q.corpus_id for q in from_csv] == ["pets", "space"]
    q = from_csv[1]
    assert DOCS["space"][q.references[0].start : q.references[0].end] == "Mars has two moons."


def test_missing_columns_are_named():
    text = "question,corpus_id\nWhat?,pets\n"
    with pytest.raises(QuestionFileError, match=r"missing column.*references"):
        parse_questions(text, DOCS, name="q.csv")


def test_reference_outside_the_document_names_the_row():
    rows = [
        ROWS[0],
        {**ROWS[1], "references": [{"content": "x", "start_index": 5000, "end_index": 5001}]},
    ]
    with pytest.raises(QuestionFileError, match=r"row 2: reference 1 \[5000, 5001\) is outside"):
        parse_questions(csv_text(rows), DOCS, name="q.csv")


def test_offsets_that_do_not_match_the_content_say_where_it_is():
    good = ref("pets", "Fish swim in schools.")
    bad = {**good, "start_index": good["start_index"] - 3, "end_index": good["end_index"] - 3}
    rows = [{**ROWS[0], "references": [bad]}]
    with pytest.raises(QuestionFileError) as info:
        parse_questions("\n".join(json.dumps(r) for r in rows), DOCS, name="q.jsonl")
    message = str(info.value)
    assert "line 1" in message
    assert f"occurs at [{good['start_index']}, {good['end_index']})" in message
    assert info.value.row == 1


def test_unknown_document_id_lists_the_known_ones():
    rows = [ROWS[0], {**ROWS[1], "corpus_id": "oceans"}]
    with pytest.raises(QuestionFileError, match=r"row 2: unknown document id 'oceans'.*pets"):
        parse_questions(csv_text(rows), DOCS, name="q.csv")


@pytest.mark.parametrize(
    ("references", "problem"),
    [("not json", "not valid JSON"), ("[]", "non-empty"), ('[{"content": "x"}]', "needs the keys")],
)
def test_malformed_references_are_errors(references, problem):
    import csv

    out = io.StringIO()
    csv.writer(out).writerows(
        [["question", "references", "corpus_id"], ["What?", references, "pets"]]
    )
    with pytest.raises(QuestionFileError, match=problem):
        parse_questions(out.getvalue(), DOCS, name="q.csv")


def test_question_file_errors_are_value_errors_and_empty_files_fail():
    assert issubclass(QuestionFileError, ValueError)
    with pytest.raises(QuestionFileError, match="no questions"):
        parse_questions("question,references,corpus_id\n", DOCS, name="q.csv")


def test_a_single_document_ignores_corpus_id():
    rows = [{**ROWS[0], "corpus_id": "whatever"}]
    (q,) = parse_questions(csv_text(rows), {"mine": DOCS["pets"]}, name="q.csv", document_id="mine")
    assert q.corpus_id == "mine"


# ------------------------------------------------------------------------- evaluation

LONG = {
    "pets": " ".join(
        f"Sentence {i} is about pets, cats number {i} and dogs number {i * 7}." for i in range(40)
    ),
    "space": " ".join(
        f"Line {i} tells of planets, moon {i} and comet {i * 3} in orbit." for i in range(40)
    ),
}


def questions_for(config: Config, picks: list[tuple[str, int]]) -> list[Question]:
    """Questions whose text is exactly chunk ``i`` of a document; gold = that chunk."""
    out = []
    for doc, i in picks:
        c = chunk(LONG[doc], config.strategy, **config.params)[i]
        out.append(Question(len(out), c.text, doc, (Reference(c.start, c.end, c.text),)))
    return out


CONFIG = Config.create("recursive", size=120, overlap=0, unit="chars")


def test_a_question_equal_to_a_chunk_retrieves_it_first():
    qs = questions_for(CONFIG, [("pets", 3), ("space", 7)])
    result = evaluate(LONG, qs, CONFIG, get_embedder("hash"), Settings(top_k=3))
    for q, hit in zip(qs, result.retrieved, strict=True):
        assert hit.chunk_indices[0] == (3 if q.corpus_id == "pets" else 7)
        assert hit.scores[0] == pytest.approx(1.0, abs=1e-5)
        assert list(hit.scores) == sorted(hit.scores, reverse=True)
    assert result.scores["recall"].tolist() == [1.0, 1.0]
    assert result.scores["precision_omega"].tolist() == [1.0, 1.0]


def test_retrieval_stays_within_the_question_document():
    qs = questions_for(CONFIG, [("pets", 0), ("space", 0)])
    result = evaluate(LONG, qs, CONFIG, get_embedder("hash"), Settings(top_k=50))
    for q, hit in zip(qs, result.retrieved, strict=True):
        assert set(hit.corpus_ids) == {q.corpus_id}
        assert len(hit.chunk_indices) == len(result.chunks[q.corpus_id])  # k > chunks
    everywhere = evaluate(LONG, qs, CONFIG, get_embedder("hash"), Settings(top_k=50, scope="all"))
    assert set(everywhere.retrieved[0].corpus_ids) == {"pets", "space"}
    # other documents' chunks can only lower precision
    assert everywhere.scores["precision"][0] < result.scores["precision"][0]


def test_without_an_embedder_only_gold_scores_are_computed():
    qs = questions_for(CONFIG, [("pets", 2)])
    result = evaluate(LONG, qs, CONFIG)
    assert np.isnan(result.scores["recall"]).all()
    assert result.retrieved is None
    assert result.mean("precision_omega") == 1.0


def test_summary_counts_chunks_tokens_and_splits():
    start = LONG["pets"].index("Sentence 5")
    end = LONG["pets"].index("Sentence 9")
    gold = (Reference(start, end, LONG["pets"][start:end]),)
    qs = [Question(0, "pets five to eight", "pets", gold)]
    result = evaluate(LONG, qs, CONFIG)
    pieces = chunk(LONG["pets"], "recursive", size=120, overlap=0, unit="chars")
    tokens = get_sizer("tokens")
    assert result.n_chunks == len(pieces)
    assert result.mean_tokens == pytest.approx(np.mean([tokens.size(c.text) for c in pieces]))
    whole = any(c.start <= start and end - 1 <= c.end for c in pieces)
    assert result.split_share == (0.0 if whole else 1.0)
    assert result.split_share == 1.0  # 4 sentences of ~65 chars cannot fit in 120


# ------------------------------------------------------------------------------ sweeps


def test_grid_expands_axes_per_strategy():
    grid = Grid.from_dict(
        {
            "strategy": ["recursive", "token"],
            "size": [100, 200],
            "overlap": [0, 0.25],
            "unit": ["chars", "tokens"],
        }
    )
    configs, skipped = grid.configs()
    recursive = [c for c in configs if c.strategy == "recursive"]
    token = [c for c in configs if c.strategy == "token"]
    assert len(recursive) == 2 * 2 * 2
    assert len(token) == 2 * 2  # token windows count tokens only: the unit axis collapses
    assert {c.params["overlap"] for c in recursive if c.params["size"] == 200} == {0, 50}
    assert not skipped


def test_grid_skips_invalid_combinations_and_rejects_unknown_names():
    configs, skipped = Grid.from_dict({"size": [50], "overlap": [0, 60]}).configs()
    assert len(configs) == 1
    assert len(skipped) == 1 and "overlap" in skipped[0]
    with pytest.raises(ValueError, match="unknown strategy"):
        Grid.from_dict({"strategy": ["nope"]})
    with pytest.raises(ValueError, match="neither a whole number"):
        Grid.from_dict({"overlap": [1.5]})
    with pytest.raises(ValueError, match="has a parameter 'colour'"):
        Grid.from_dict({"strategy": ["token"], "colour": "red"})


def test_grid_applies_fixed_params_only_where_they_exist():
    grid = Grid.from_dict(
        {"strategy": ["recursive", "token"], "size": [100], "keep_separator": "start"}
    )
    configs, _ = grid.configs()
    by_name = {c.strategy: c for c in configs}
    assert by_name["recursive"].params["keep_separator"] == "start"
    assert "keep_separator" not in by_name["token"].params


def test_parse_values():
    assert parse_values("200, 400 200", int, "Sizes") == [200, 400]
    with pytest.raises(ValueError, match="Sizes"):
        parse_values("200, big", int, "Sizes")


def test_sweep_embeds_each_text_once():
    clear_cache()
    embedder = get_embedder("hash")
    qs = questions_for(CONFIG, [("pets", 1), ("space", 2), ("pets", 5)])
    grid = Grid.from_dict({"size": [120, 240], "overlap": [0, 40], "unit": ["chars"]})
    configs, _ = grid.configs()
    chunk_texts = {
        c.text for cfg in configs for d in LONG for c in chunk(LONG[d], "recursive", **cfg.params)
    }
    unique = chunk_texts | {q.text for q in qs}
    before_calls, before = embedder.calls, embedder.encoded
    steps: list[float] = []
    result = sweep(LONG, qs, grid, embedder, progress=lambda d, t, _m: steps.append(d / t))
    assert embedder.encoded - before == len(unique) == result.texts_embedded
    assert result.texts_requested == sum(
        sum(len(v) for v in e.chunks.values()) + len(qs) for e in result.evaluations
    )
    assert embedder.calls > before_calls
    again = sweep(LONG, qs, grid, embedder)
    assert again.texts_embedded == 0
    assert steps == sorted(steps) and steps[-1] == pytest.approx(1.0)
    table = result.table
    assert len(table) == len(configs) == 4
    assert table["n_chunks"].tolist() == [e.n_chunks for e in result.evaluations]
    for metric in ("recall", "precision", "iou", "precision_omega"):
        assert table[f"{metric}_mean"].between(0, 1).all()


def test_digest_is_picklable_plain_data():
    import pickle

    qs = questions_for(CONFIG, [("pets", 1)])
    result = sweep(LONG, qs, [CONFIG], get_embedder("hash"))
    copy = pickle.loads(pickle.dumps(digest(result)))  # noqa: S301  (what st.cache_data does)
    (snap,) = copy.snapshots
    assert snap.hits[0][0][2] == 1  # rank 1 first
    assert snap.hits[0][0][:2] == tuple(result.evaluations[0].chunk_spans["pets"][1])
    assert snap.summary["strategy"] == "recursive"
    assert copy.table.equals(result.table)


# ------------------------------------------------------------------------------ advice


def row(config: Config, precision: float, recall: float, **extra) -> dict:
    base = {"config": config.to_json(), "precision_mean": precision, "recall_mean": recall}
    return {**base, **extra}


def test_precision_rule_cuts_the_size_by_a_quarter_and_keeps_the_overlap_ratio():
    config = Config.create("recursive", size=400, overlap=100, unit="tokens")
    advice = advise(row(config, 0.05, 0.9, mean_gold_chars=150, mean_chunk_chars=1600))
    assert [f.rule for f in advice.firings] == ["precision"]
    assert "Precision 0.050 < 0.7" in advice.firings[0].reason
    assert "400 → 300" in advice.firings[0].reason
    assert advice.suggestion.params["size"] == 300
    assert advice.suggestion.params["overlap"] == 75
    assert "150 characters" in advice.text()


def test_recall_rule_adds_ten_points_of_overlap_ratio():
    config = Config.create("recursive", size=400, overlap=0, unit="tokens")
    advice = advise(row(config, 0.8, 0.5))
    assert [f.rule for f in advice.firings] == ["recall"]
    assert "Recall 0.500 < 0.6" in advice.text()
    assert advice.suggestion.params["size"] == 400
    assert advice.suggestion.params["overlap"] == 40


def test_both_rules_and_no_rule():
    config = Config.create("token", size=400, overlap=0)
    both = advise(row(config, 0.1, 0.3))
    assert [f.rule for f in both.firings] == ["precision", "recall"]
    assert (both.suggestion.params["size"], both.suggestion.params["overlap"]) == (300, 30)
    calm = advise(row(config, 0.9, 0.9))
    assert calm.firings == () and calm.suggestion is None
    assert "neither rule fires" in calm.text()


def test_advice_without_retrieval_asks_for_a_model():
    config = Config.create("token", size=400, overlap=0)
    advice = advise(row(config, float("nan"), float("nan")))
    assert not advice.firings
    assert "embedding model" in advice.text()


def test_best_row_and_report_name_the_best_configuration():
    qs = questions_for(CONFIG, [("pets", 1), ("space", 3)])
    result = sweep(
        LONG, qs, Grid.from_dict({"size": [60, 120, 400], "unit": ["chars"]}), get_embedder("hash")
    )
    table = result.table
    best = best_row(table, "precision_omega")
    assert best["precision_omega_mean"] == table["precision_omega_mean"].max()
    text = report(table, "recall").text()
    top = table.sort_values(["recall_mean", "recall_std"], ascending=[False, True]).iloc[0]
    assert f"Best for Recall: recursive · {top['size']} chars" in text
    with pytest.raises(ValueError, match="unknown metric"):
        best_row(table, "speed")


# ------------------------------------------------------------------- figures and HTML


def test_metrics_vs_size_draws_one_line_per_series_and_metric():
    qs = questions_for(CONFIG, [("pets", 1)])
    grid = Grid.from_dict(
        {"strategy": ["recursive", "fixed"], "size": [100, 200], "overlap": [0], "unit": ["chars"]}
    )
    table = sweep(LONG, qs, grid, get_embedder("hash")).table
    fig = metrics_vs_size(table)
    assert len(fig.data) == 2 * 3
    recall_lines = [t for t in fig.data if t.xaxis in ("x", None)]
    by_name = {t.name: t for t in recall_lines}
    rec = table[table["strategy"] == "recursive"].sort_values("size")
    line = next(t for name, t in by_name.items() if name.startswith("recursive"))
    assert list(line.x) == rec["size"].tolist()
    assert list(line.y) == pytest.approx(rec["recall_mean"].tolist())
    assert [a.text for a in fig.layout.annotations] == ["Recall", "Precision", "IoU"]
    hist = question_scores(
        sweep(LONG, qs, grid, get_embedder("hash")).evaluations[0].per_question()
    )
    assert sum(len(t.x) for t in hist.data) == len(qs)


def visible_text(markup: str) -> str:
    without_gaps = re.sub(r'<span class="ev-gap">.*?</span>', "", markup)
    return html.unescape(re.sub(r"<[^>]+>", "", without_gaps))


def test_evidence_html_escapes_text_and_marks_gold_retrieved_and_both():
    text = "Intro <script>alert(1)</script> the answer is 42 & more. " + "filler " * 200
    gold_start = text.index("the answer")
    gold = as_spans([(gold_start, gold_start + len("the answer is 42"))])
    hits = [(text.index("<script>"), gold_start + 10, 1, 0.9), (900, 1000, 2, 0.5)]
    markup = evidence_html(text, gold, hits, context=20)
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert 'class="ev-both"' in markup and 'class="ev-gold"' in markup
    assert 'class="ev-ret"' in markup
    assert 'data-r="#1 · 0.90"' in markup and 'data-r="#2 · 0.50"' in markup
    assert "characters not shown" in markup
    shown = visible_text(markup)
    assert text[hits[0][0] - 5 : gold_start + 16] in shown
    assert text[880:1020] in shown


# --------------------------------------------------------------------------------- CLI


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in LONG.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    qs = questions_for(CONFIG, [("pets", 1), ("space", 3)])
    rows = [
        {
            "question": q.text,
            "corpus_id": q.corpus_id,
            "references": [
                {"content": r.content, "start_index": r.start, "end_index": r.end}
                for r in q.references
            ],
        }
        for q in qs
    ]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder, questions


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = evaluate_main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_prints_a_table_with_advice(corpus, capsys):
    folder, questions = corpus
    code, out, err = run_cli(
        [
            "--questions",
            str(questions),
            "--corpus",
            str(folder),
            "--strategy",
            "recursive",
            "--size",
            "120",
            "240",
            "--unit",
            "chars",
            "--model",
            "hash",
        ],
        capsys,
    )
    assert code == 0, err
    assert "Recall" in out and "Best for Recall" in out
    rows = [line for line in out.splitlines() if re.match(r"\s*recursive\s+\d+\s", line)]
    assert len(rows) == 2


def test_cli_csv_and_json_and_sweep_file(corpus, capsys, tmp_path):
    folder, questions = corpus
    grid = tmp_path / "grid.json"
    grid.write_text(
        json.dumps(
            {
                "strategy": ["recursive", "token"],
                "size": [60, 120],
                "overlap": [0],
                "unit": ["tokens"],
            }
        )
    )
    base = ["--questions", str(questions), "--corpus", str(folder), "--sweep", str(grid)]
    code, out, _ = run_cli([*base, "--model", "none", "--format", "csv"], capsys)
    assert code == 0
    import pandas as pd

    table = pd.read_csv(io.StringIO(out))
    assert len(table) == 4 and table["recall_mean"].isna().all()
    assert table["precision_omega_mean"].between(0, 1).all()
    code, out, _ = run_cli([*base, "--model", "hash", "--format", "json"], capsys)
    payload = json.loads(out)
    assert code == 0 and len(payload["results"]) == 4
    assert payload["texts_embedded"] <= payload["texts_requested"]
    assert any(line.startswith("Best for Recall") for line in payload["advice"])


def test_cli_errors_name_the_problem(corpus, capsys, tmp_path):
    folder, questions = corpus
    bad = tmp_path / "bad.csv"
    bad.write_text('question,references,corpus_id\nWhat?,"[]",pets\n', encoding="utf-8")
    code, _, err = run_cli(["--questions", str(bad), "--corpus", str(folder)], capsys)
    assert code == 2 and "row 1" in err and "non-empty" in err
    grid = tmp_path / "grid.json"
    grid.write_text("{}")
    code, _, err = run_cli(
        [
            "--questions",
            str(questions),
            "--corpus",
            str(folder),
            "--sweep",
            str(grid),
            "--size",
            "100",
        ],
        capsys,
    )
    assert code == 2 and "not both" in err


def test_read_corpus_reports_missing_ids(tmp_path):
    (tmp_path / "a.txt").write_text("alpha", encoding="utf-8")
    assert read_corpus(tmp_path) == {"a": "alpha"}
    with pytest.raises(QuestionFileError, match="no document 'b'"):
        read_corpus(tmp_path, ["b"])


def test_renumber_keeps_order():
    qs = questions_for(CONFIG, [("pets", 1), ("space", 3)])
    assert [q.index for q in renumber(qs[1:])] == [0]


def test_results_table_has_one_row_per_evaluation():
    qs = questions_for(CONFIG, [("pets", 1)])
    evaluations = [evaluate(LONG, qs, CONFIG), evaluate(LONG, qs, Config.create("token", size=50))]
    table = results_table(evaluations)
    assert table["strategy"].tolist() == ["recursive", "token"]
    assert table["size"].tolist() == [120, 50]


# ------------------------------------------------------------------------------- page


@pytest.mark.slow
def test_evaluate_page_runs_a_sweep_with_the_fake_model():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "evaluate_page.py"), default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect(key="eval.models").set_value(["hash"])
    at.multiselect(key="eval.corpora").set_value(["chatlogs"])
    at.text_input(key="eval.sizes").set_value("200, 400")
    next(b for b in at.button if b.label == "Run evaluation").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe if "Recall" in d.value.columns]
    assert len(frames) == 1 and len(frames[0]) == 4  # recursive, token × 200, 400
    evidence = [h.value for h in at.html if 'class="ev-doc"' in h.value]
    assert evidence and "<script" not in evidence[-1]
    assert any("Best for Recall" in m.value for m in at.markdown)
    # A second session with the same settings is served from st.cache_data.
    again = AppTest.from_file(str(ROOT / "pages" / "evaluate_page.py"), default_timeout=120).run()
    again.multiselect(key="eval.models").set_value(["hash"])
    again.multiselect(key="eval.corpora").set_value(["chatlogs"])
    again.text_input(key="eval.sizes").set_value("200, 400")
    next(b for b in again.button if b.label == "Run evaluation").click()
    again.run()
    assert not again.exception, [e.value for e in again.exception]
    table = next(d.value for d in again.dataframe if "Recall" in d.value.columns)
    assert table["Recall"].tolist() == frames[0]["Recall"].tolist()


# The playground on the sidebar's document: tests/test_app.py.


def test_thresholds_apply_to_semantic_only():

    grid = Grid.from_dict(
        {
            "strategy": ["semantic", "recursive"],
            "size": [200],
            "overlap": [0],
            "unit": ["chars"],
            "threshold": [0.5, 0.8],
            "method": "similarity",
            "model": "hash",
        }
    )
    configs, skipped = grid.configs()
    assert not skipped
    semantic = [c for c in configs if c.strategy == "semantic"]
    assert sorted(c.params["threshold"] for c in semantic) == [0.5, 0.8]
    assert all(c.params["max_size"] == 200 for c in semantic)
    assert len([c for c in configs if c.strategy == "recursive"]) == 1
    qs = questions_for(CONFIG, [("pets", 1)])
    table = sweep(LONG, qs, semantic, get_embedder("hash")).table
    assert sorted(table["threshold"]) == [0.5, 0.8]
    assert table["overlap"].isna().all()
    assert table["size"].tolist() == [200, 200]


def test_a_grid_survives_a_round_trip_through_its_dict() -> None:
    grid = Grid.from_dict(
        {
            "strategy": ["recursive", "token"],
            "size": [200, 400],
            "overlap": [0],
            "keep_separator": "start",
        }
    )
    again = Grid.from_dict(grid.to_dict())
    assert again == grid
    assert again.fixed == {"keep_separator": "start"}


def test_cli_sizes_in_the_models_word_pieces(corpus, capsys):
    """The unit the suggestions use (the embedding model's word pieces) can be evaluated."""
    folder, questions = corpus
    base = ["--questions", str(questions), "--corpus", str(folder), "--model", "hash"]
    code, out, err = run_cli([*base, "--size", "60", "--unit", "model", "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)["results"]
    assert row["unit"] == "model" and row["size"] == 60
