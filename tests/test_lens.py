"""The retrieval lens: each miss reason pinned on a small hand-made case (a gold span
straddling a boundary, one past the bundled model's window, one out-ranked), exact
per-chunk counts over every retriever and returned unit, an evaluation without misses,
typed questions, the model's window ends, the map's placement of questions (never a
refit) and its saved form, and the command line's ``--per-chunk``."""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Config
from chunking.cli.evaluate import evaluate_main
from chunking.embedding import projection as maps
from chunking.embedding.base import Embedder
from chunking.embedding.models import get_embedder
from chunking.evaluation import Settings, evaluate
from chunking.evaluation.core import chunk_units, searched_mask, unit_spans
from chunking.evaluation.lens import (
    CUT,
    FOUND,
    NO_GOLD,
    OUT_RANKED,
    PER_CHUNK_COLUMNS,
    REASONS,
    TRUNCATED,
    chunk_colours,
    lens,
    lens_map,
    nearest_chunk_similarity,
    question_marks,
    reason_lines,
    reasons_table,
)
from chunking.evaluation.questions import Question, Reference
from chunking.evaluation.techniques import Technique
from chunking.evaluation.typed import (
    LOCATED,
    NEAR_MATCH,
    NO_EXCERPT,
    NOT_FOUND,
    parse_typed_questions,
)


@pytest.fixture(scope="module")
def bundled() -> Embedder:
    return get_embedder()


def question(text: str, document: str, gold: str, corpus_id: str = "doc", index: int = 0):
    start = document.index(gold)
    return Question(index, text, corpus_id, (Reference(start, start + len(gold), gold),))


def cosine_rank(embedder: Embedder, texts: list[str], query: str, target: int) -> int:
    """The rank (1 = best) of ``texts[target]`` for ``query``, computed here."""
    scores = embedder.embed(texts) @ embedder.embed([query])[0]
    return 1 + int((scores > scores[target]).sum())


# ------------------------------------------------------------------ the three reasons


def test_a_gold_span_straddling_a_boundary_is_cut_with_the_best_chunks_share():
    doc = "Cats purr softly at home. Dogs bark loudly at night. Fish swim in the pond."
    config = Config.create("recursive", size=30, unit="chars", overlap=0)
    gold = "home. Dogs bark"  # 5 of its 15 characters in the first chunk, 9 in the second
    q = question("Which animal barks?", doc, gold)
    evaluation = evaluate(
        {"doc": doc}, [q], config, None, Settings(top_k=1), technique=Technique(retriever="bm25")
    )
    spans = [(c.start, c.end) for c in evaluation.chunks["doc"]]
    assert spans[:2] == [(0, 25), (26, 52)]  # the boundary falls between the sentences
    (miss,) = lens(evaluation).misses
    assert miss.reason == CUT
    start = doc.index(gold)
    assert (miss.start, miss.end) == (start, start + len(gold))
    assert miss.chunk == 1
    assert miss.best_share == pytest.approx(len("Dogs bark") / len(gold))
    assert miss.rank is None and "holds 60%" in miss.describe()


def test_a_gold_span_past_the_bundled_models_window_is_truncated(bundled):
    filler = " ".join(
        f"Sentence {i} talks about harbour cranes, tides and the weather near pier {i}."
        for i in range(40)
    )
    answer = "The secret password of the lighthouse keeper is marmalade."
    long_chunk = f"{filler} {answer}"
    distractor = "The lighthouse keeper changes his secret password every week, they say."
    doc = f"{long_chunk}\n\n{distractor}"
    config = Config.create("recursive", size=len(long_chunk) + 5, unit="chars", overlap=0)
    q = question("What is the secret password of the lighthouse keeper?", doc, answer)
    evaluation = evaluate({"doc": doc}, [q], config, bundled, Settings(top_k=1))
    chunks = evaluation.chunks["doc"]
    assert [c.text for c in chunks] == [long_chunk, distractor]
    # the model's own word pieces: the text before the answer already fills its window
    before = long_chunk[: long_chunk.index(answer)]
    assert bundled.count_tokens(before) > bundled.token_limit
    (miss,) = lens(evaluation, bundled).misses
    assert miss.reason == TRUNCATED
    assert miss.chunk == 0 and miss.read_share == 0.0 and miss.best_share == 1.0
    assert miss.rank == cosine_rank(bundled, [c.text for c in chunks], q.text, 0) == 2
    # the same chunk read whole (BM25) is no longer truncated: it is out-ranked or found
    lexical = evaluate(
        {"doc": doc}, [q], config, None, Settings(top_k=1), technique=Technique(retriever="bm25")
    )
    assert all(m.reason != TRUNCATED for m in lens(lexical).misses)


#: Four paragraphs: the answer in the second, the question's own words in the third.
KEEPER = (
    "The lighthouse keeper guards the rocky coast at night.",
    "His code word, known to few, is marmalade.",
    "What is the password of the lighthouse keeper? Nobody here knows the password.",
    "Bakers knead dough every morning before sunrise.",
)


def test_a_gold_span_in_a_lower_ranked_chunk_is_out_ranked_with_its_rank(bundled):
    paragraphs, doc = list(KEEPER), "\n\n".join(KEEPER)
    config = Config.create("recursive", size=85, unit="chars", overlap=0)
    q = question("What is the password of the lighthouse keeper?", doc, "is marmalade")
    evaluation = evaluate({"doc": doc}, [q], config, bundled, Settings(top_k=1))
    assert [c.text for c in evaluation.chunks["doc"]] == paragraphs
    expected = cosine_rank(bundled, paragraphs, q.text, 1)
    assert expected > 1  # the question's own words win the top place
    (miss,) = lens(evaluation, bundled).misses
    assert (miss.reason, miss.chunk, miss.rank) == (OUT_RANKED, 1, expected)
    assert miss.describe() == f"out-ranked: chunk 1 holds it, ranked {expected}"
    # at k = rank the same chunk is returned, and nothing is missed
    wider = evaluate({"doc": doc}, [q], config, bundled, Settings(top_k=expected))
    assert lens(wider, bundled).misses == ()


def test_an_evaluation_with_no_misses(bundled):
    doc = "Cats purr softly.\n\nDogs bark loudly.\n\nFish swim slowly."
    qs = [
        question("Which animal purrs?", doc, "Cats purr softly.", index=0),
        question("Which animal barks?", doc, "Dogs bark loudly.", index=1),
    ]
    config = Config.create("recursive", size=20, unit="chars", overlap=0)
    evaluation = evaluate({"doc": doc}, qs, config, bundled, Settings(top_k=3))
    seen = lens(evaluation, bundled)
    assert seen.misses == () and seen.counts == dict.fromkeys(REASONS, 0)
    assert [seen.question_reason(i) for i in range(2)] == [None, None]
    assert seen.retrieved["doc"].tolist() == [2, 2, 2]  # every chunk, by both questions
    assert seen.gold["doc"].tolist() == seen.hits["doc"].tolist() == [1, 1, 0]
    assert seen.never_retrieved_share == 0.0
    assert seen.summary()["missed_answers"] == 0
    assert chunk_colours(seen, "doc", "reason") == [FOUND, FOUND, NO_GOLD]
    assert reason_lines([seen]) == [f"{r} — {seen.label}: 0 gold spans missed" for r in REASONS]


# --------------------------------------------------------------------- exact counts

WORDS = ("cat", "dog", "fish", "bird", "tree", "rock", "sun", "moon", "rain", "wind")
TECHNIQUES = (
    ("recursive", Technique()),
    ("recursive", Technique(retriever="bm25")),
    ("recursive", Technique(retriever="hybrid")),
    ("recursive", Technique(returned="window:1")),
    ("hierarchy", Technique(returned="parent")),
)


@st.composite
def cases(draw):
    sentences = draw(
        st.lists(
            st.lists(st.sampled_from(WORDS), min_size=2, max_size=8).map(" ".join),
            min_size=3,
            max_size=25,
        )
    )
    doc = ". ".join(sentences) + "."
    spans = draw(
        st.lists(
            st.tuples(st.integers(0, len(doc) - 1), st.integers(1, 60)), min_size=1, max_size=8
        )
    )
    qs = []
    for i, (start, length) in enumerate(spans):
        end = min(len(doc), start + length)
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
        qs.append(Question(i, text, "doc", (Reference(start, end, doc[start:end]),)))
    strategy, technique = draw(st.sampled_from(TECHNIQUES))
    size = draw(st.integers(20, 120))
    if strategy == "hierarchy":
        config = Config.create("hierarchy", size=size * 2, child_sizes=str(size), unit="chars")
    else:
        config = Config.create("recursive", size=size, unit="chars", overlap=0)
    return doc, qs, config, technique, draw(st.integers(1, 4))


@given(cases())
def test_counts_are_exact_for_every_retriever_and_returned_unit(case):
    doc, qs, config, technique, k = case
    embedder = get_embedder("hash")  # counting, not ranking: the fake model will do
    evaluation = evaluate({"doc": doc}, qs, config, embedder, Settings(top_k=k), None, technique)
    seen = lens(evaluation, embedder)
    chunks = evaluation.chunks["doc"]
    spans = evaluation.chunk_spans["doc"]
    units = chunk_units(chunks, technique)
    returnable = sorted(set(units[searched_mask(chunks, technique)].tolist()))
    # retrieved: every question returns min(k, units) distinct units
    assert int(seen.retrieved["doc"].sum()) == len(qs) * min(k, len(returnable))
    assert set(np.flatnonzero(seen.retrieved["doc"])) <= set(returnable)
    # gold: the questions whose gold span shares a character with the chunk, by hand
    for i, (a, b) in enumerate(spans):
        touching = [q for q in qs if any(r.start < b and a < r.end for r in q.references)]
        assert seen.gold["doc"][i] == len(touching)
        got = [q for q in touching if i in evaluation.retrieved[q.index].chunk_indices]
        assert seen.hits["doc"][i] == len(got)
    assert seen.per_chunk()["retrieved"].sum() == seen.retrieved["doc"].sum()
    # misses: a question that got all its gold back has none; each reason holds
    returned = unit_spans(spans, technique)
    for q in qs:
        misses = seen.question_misses(q.index)
        if evaluation.scores["recall"][q.index] == 1.0:
            assert misses == []
        for miss in misses:
            assert evaluation.scores["recall"][q.index] < 1.0
            holders = [
                u for u in returnable if returned[u][0] <= miss.start and miss.end <= returned[u][1]
            ]
            if miss.reason == CUT:
                assert holders == []
            else:
                assert miss.chunk in holders and miss.rank is not None and miss.rank > k
                assert all(evaluation.retrieved[q.index].own_ranks[u] > k for u in holders)
    assert sum(seen.counts.values()) == len(seen.misses)


def test_late_chunking_reads_every_token_and_needs_no_window(bundled):
    doc = "Cats purr softly at home. Dogs bark loudly at night. Fish swim in the pond."
    q = question("Which animal barks?", doc, "home. Dogs bark")
    config = Config.create("recursive", size=30, unit="chars", overlap=0)
    late = Technique(embedding="late")
    evaluation = evaluate({"doc": doc}, [q], config, bundled, Settings(top_k=1), None, late)
    seen = lens(evaluation)  # no embedder needed: nothing is truncated
    assert [m.reason for m in seen.misses] == [CUT]
    assert int(seen.retrieved["doc"].sum()) == 1


def test_the_lens_needs_the_evaluations_own_model_to_tell_truncation(bundled):
    doc = "Cats purr softly.\n\nDogs bark loudly."
    q = question("Which animal barks?", doc, "Dogs bark")
    config = Config.create("recursive", size=20, unit="chars", overlap=0)
    evaluation = evaluate({"doc": doc}, [q], config, get_embedder("hash"), Settings(top_k=1))
    with pytest.raises(ValueError, match="needs the embedding model"):
        lens(evaluation)
    with pytest.raises(ValueError, match="not the embedder given"):
        lens(evaluation, bundled)
    with pytest.raises(ValueError, match="top_k from 1"):
        lens(evaluation, get_embedder("hash"), top_k=2)


def test_without_retrieval_only_gold_is_counted():
    doc = "Cats purr softly.\n\nDogs bark loudly."
    q = question("Which animal barks?", doc, "Dogs bark")
    config = Config.create("recursive", size=20, unit="chars", overlap=0)
    seen = lens(evaluate({"doc": doc}, [q], config, None))
    assert not seen.retrieval and seen.misses == ()
    assert seen.gold["doc"].tolist() == [0, 1]
    frame = seen.per_chunk()
    assert list(frame.columns) == list(PER_CHUNK_COLUMNS) and frame["retrieved"].isna().all()
    assert np.isnan(seen.summary()["never_retrieved_share"])
    assert reason_lines([seen]) == []


# ------------------------------------------------------------- what the pages draw


def test_colours_marks_and_compare_sums(bundled):
    doc = "\n\n".join(KEEPER)
    q = question("What is the password of the lighthouse keeper?", doc, "is marmalade")
    small = Config.create("recursive", size=85, unit="chars", overlap=0)
    evaluation = evaluate({"doc": doc}, [q], small, bundled, Settings(top_k=1))
    seen = lens(evaluation, bundled)
    counts = chunk_colours(seen, "doc", "retrieved")
    assert sum(counts) == 1 and counts[1] == 0
    assert chunk_colours(seen, "doc", "reason")[1] == OUT_RANKED
    marks = question_marks(seen, 0)
    assert marks.gold_chunks == (1,) and len(marks.retrieved) == 1
    assert marks.retrieved[0][2] == 1 and [m.reason for m in marks.misses] == [OUT_RANKED]
    whole = Config.create("recursive", size=400, unit="chars", overlap=0)
    other = lens(evaluate({"doc": doc}, [q], whole, bundled, Settings(top_k=1)), bundled)
    table = reasons_table([seen, other])
    assert table[OUT_RANKED].tolist() == [1, 0]
    lines = reason_lines([seen, other])
    assert lines[2] == f"{OUT_RANKED} — {seen.label}: 1 gold span missed; {other.label}: 0"
    with pytest.raises(ValueError, match="colour chunks by"):
        chunk_colours(seen, "doc", "size")


def test_nearest_chunk_similarity_marks_a_question_far_from_every_chunk():
    chunks = np.eye(3, 4, dtype=np.float32)
    questions = np.array([[1, 0, 0, 0], [0, 0, 0, 1]], dtype=np.float32)
    assert nearest_chunk_similarity(questions, chunks).tolist() == [1.0, 0.0]


# ---------------------------------------------------------------- typed questions

TYPED_DOC = "Cats purr softly at home. Dogs bark loudly at night. Dogs bark again."


def test_typed_questions_located_near_match_not_found_and_no_excerpt():
    typed = parse_typed_questions(
        "Which animal barks? | Dogs bark loudly at night.\n"
        "\n"
        "Where do cats purr? | cats PURR very softly, at home\n"
        "What do fish do? | Fish swim in the pond.\n"
        "Why?\n"
        "Who barks again? | Dogs bark\n",
        {"doc": TYPED_DOC},
    )
    statuses = [line.status for line in typed.lines]
    assert statuses == [LOCATED, NEAR_MATCH, NOT_FOUND, NO_EXCERPT, LOCATED]
    assert [line.line for line in typed.lines] == [1, 3, 4, 5, 6]
    first, near, _, _, repeated = typed.lines
    assert TYPED_DOC[first.start : first.end] == "Dogs bark loudly at night."
    assert TYPED_DOC[near.start : near.end] == "Cats purr softly at home"
    assert 0.8 <= near.similarity < 1.0 and "similarity" in near.describe()
    assert repeated.occurrences == 2 and "first of 2" in repeated.describe()
    # only the located ones become questions, numbered in order, with real gold spans
    assert [q.text for q in typed.questions] == [
        "Which animal barks?",
        "Where do cats purr?",
        "Who barks again?",
    ]
    assert [q.index for q in typed.questions] == [0, 1, 2]
    for q in typed.questions:
        (ref,) = q.references
        assert TYPED_DOC[ref.start : ref.end] == ref.content
    assert [line.status for line in typed.unevaluated] == [NOT_FOUND, NO_EXCERPT]
    assert typed.describe() == "5 questions: 2 located, 1 near match, 1 not found, 1 no excerpt"


def test_typed_questions_are_located_in_the_right_document_and_evaluated(bundled):
    documents = {"pets": TYPED_DOC, "sea": "Fish swim in the pond. Crabs walk sideways."}
    typed = parse_typed_questions("How do crabs walk? | Crabs walk sideways.", documents)
    (q,) = typed.questions
    assert q.corpus_id == "sea"
    config = Config.create("recursive", size=30, unit="chars", overlap=0)
    evaluation = evaluate(documents, typed.questions, config, bundled, Settings(top_k=2))
    assert lens(evaluation, bundled).gold["sea"].sum() == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [("| Dogs bark", "line 1: there is no question"), ("\n  \n", "no question typed")],
)
def test_typed_questions_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        parse_typed_questions(text, {"doc": TYPED_DOC})


# ---------------------------------------------------------------- the model's window


def test_window_ends_stop_after_the_models_last_word_piece(bundled):
    text = "Naïve café owners serve crème brûlée, 東京 tea and ünïcödé scones. " * 40
    (end,) = bundled.window_ends([text])
    assert bundled.count_tokens(text[:end]) == bundled.token_limit
    assert end < len(text) and bundled.window_ends(["short text"]) == [len("short text")]
    fake = get_embedder("hash")
    for ends in (fake.window_ends([text]), Embedder.window_ends(fake, [text])):
        assert fake.count_tokens(text[: ends[0]]) == fake.token_limit


# --------------------------------------------------------------------------- the map


def clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(0).normal(size=(5, 24))
    rows = centres[rng.integers(0, 5, n)] + 0.3 * rng.normal(size=(n, 24))
    return maps.unit_rows(rows.astype(np.float32))


def test_pca_places_new_rows_with_its_own_linear_transform():
    vectors = clustered(6, 1)  # too few for UMAP
    projection = maps.project(vectors, 2)
    assert projection.method == "pca"
    assert np.allclose(maps.place(projection, vectors, vectors), projection.coords, atol=1e-5)


def test_umap_places_questions_without_refitting_the_chunks():
    chunks, asked = clustered(200, 1), clustered(30, 2)
    projection = maps.project(chunks, 2)
    assert projection.method == "umap"
    before = projection.coords.copy()
    placed = maps.place(projection, chunks, asked)
    assert np.array_equal(projection.coords, before)  # the chunks did not move
    assert maps.project(chunks, 2).from_cache  # and the map was not refitted
    assert np.array_equal(maps.place(projection, chunks, asked), placed)  # seeded
    # each chunk's own vector lands near its own point, far closer than a random point
    own = maps.place(projection, chunks, chunks[:40])
    near = np.linalg.norm(own - projection.coords[:40], axis=1)
    shuffled = np.linalg.norm(own - projection.coords[40:80], axis=1)
    assert np.median(near) < 0.25 * np.median(shuffled)


@pytest.mark.slow
def test_umap_places_questions_as_its_own_transform_does():
    umap = maps.load_umap()
    chunks, asked = clustered(200, 1), clustered(30, 2)
    projection = maps.project(chunks, 2)
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=projection.n_neighbors,
        min_dist=projection.min_dist,
        metric="cosine",
        random_state=projection.random_state,
        n_epochs=projection.epochs,
        n_jobs=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = np.asarray(reducer.fit_transform(chunks), dtype=np.float32)
        theirs = reducer.transform(asked)
        # UMAP's own transform moves by this much when the input moves by 1e-6
        jitter = reducer.transform(maps.unit_rows(asked + np.float32(1e-6)))
    ours = maps.place(
        maps.Projection(fitted, "umap", None, 2, projection.n_neighbors, 0.0), chunks, asked
    )
    noise = np.median(np.linalg.norm(jitter - theirs, axis=1))
    apart = np.median(np.linalg.norm(ours - theirs, axis=1))
    extent = float(np.ptp(fitted, axis=0).max())
    assert apart < max(3 * noise, 0.05 * extent)


def test_a_saved_projection_reloads_and_places_the_same(tmp_path):
    for vectors in (clustered(120, 3), clustered(7, 3)):  # UMAP, then PCA
        projection = maps.project(vectors, 2)
        asked = clustered(5, 4)
        path = maps.save_projection(projection, tmp_path / f"map-{len(vectors)}.json")
        saved = json.loads(path.read_text(encoding="utf-8"))
        assert saved["random_state"] == maps.RANDOM_STATE and saved["method"] == projection.method
        loaded = maps.load_projection(path)
        assert np.array_equal(loaded.coords, projection.coords)
        assert np.array_equal(
            maps.place(loaded, vectors, asked), maps.place(projection, vectors, asked)
        )
    with pytest.raises(maps.MapError, match="not the vectors"):
        maps.place(loaded, clustered(7, 9), asked)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "invalid JSON"),
        ('{"format": "x"}', "not a saved projection"),
        (
            '{"format": "chunk-explorer projection", "version": 1, "method": "umap", '
            '"dims": 2, "n_neighbors": 5, "min_dist": 0.1, "random_state": 1, "epochs": 9, '
            '"vectors_key": "", "coords": [[1, 2, 3]]}',
            "coords",
        ),
    ],
)
def test_a_bad_projection_file_is_one_error(text, message):
    with pytest.raises(maps.MapError, match=message):
        maps.projection_from_json(text)


# ------------------------------------------------------------------ the command line


@pytest.fixture
def corpus(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "Cats purr softly at home. Dogs bark loudly at night. Fish swim in the pond."
    (docs / "pets.md").write_text(text, encoding="utf-8")
    gold = "home. Dogs bark"
    start = text.index(gold)
    refs = json.dumps([{"content": gold, "start_index": start, "end_index": start + len(gold)}])
    path = tmp_path / "q.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id"])
        writer.writerow(["Which animal barks?", refs, "pets"])
        writer.writerow(["Who purrs?", refs, "pets"])
    return tmp_path, docs, path


def test_per_chunk_csv_and_the_lens_in_the_json_and_the_table(corpus, capsys):
    folder, docs, questions = corpus
    traffic = folder / "traffic.csv"
    common = ["--questions", str(questions), "--corpus", str(docs), "--model", "hash", "-q"]
    common += ["--size", "30", "60", "--unit", "chars", "--overlap", "0", "--top-k", "1"]
    assert evaluate_main([*common, "--per-chunk", str(traffic), "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    with traffic.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(PER_CHUNK_COLUMNS)
    results = payload["results"]
    assert len(rows) == sum(r["n_chunks"] for r in results)
    for result in results:
        mine = [r for r in rows if r["config"] == Config.from_json(result["config"]).label()]
        assert sum(int(r["retrieved"]) for r in mine) == 2  # 2 questions x top 1
        assert 0 <= result["never_retrieved_share"] <= 1
        assert (
            result["missed_cut"] + result["missed_out_ranked"] + result["missed_truncated"]
            == result["missed_answers"]
        )
    small = results[0]
    assert small["size"] == 30 and small["missed_cut"] == 2  # the span straddles a boundary
    assert {m["reason"] for m in payload["misses"]} >= {CUT}
    assert evaluate_main(common) == 0
    table = capsys.readouterr().out
    assert all(reason in table for reason in REASONS) and "never retrieved %" in table


def test_the_lens_map_places_a_documents_questions_on_its_chunks(bundled, tmp_path):
    doc = "\n\n".join(KEEPER)
    qs = [
        question(KEEPER[3], doc, KEEPER[3], index=0),  # asked in a chunk's own words
        question("What is the password?", doc, "is marmalade", index=1),
    ]
    config = Config.create("recursive", size=85, unit="chars", overlap=0)
    evaluation = evaluate({"doc": doc}, qs, config, bundled, Settings(top_k=1))
    chunks, asked = evaluation.chunks["doc"], [q.text for q in qs]
    drawn = lens_map(chunks, asked, bundled)
    assert drawn.projection.method == "pca"  # four chunks: too few for UMAP
    assert drawn.chunk_coords.shape == (4, 2) and drawn.question_coords.shape == (2, 2)
    assert np.allclose(drawn.question_coords[0], drawn.chunk_coords[3], atol=1e-4)
    assert drawn.nearest[0] == pytest.approx(1.0, abs=1e-5) and drawn.nearest[1] < 1.0
    saved = maps.save_projection(drawn.projection, tmp_path / "map.json")
    again = lens_map(chunks, asked, bundled, projection=maps.load_projection(saved))
    assert np.array_equal(again.question_coords, drawn.question_coords)
