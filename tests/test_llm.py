"""The LLM layer without a real model: alignment, caching, cost, runs, questions,
contextual retrieval and enrichment, each with deterministic stand-in models."""

from __future__ import annotations

import argparse
import io
import json
import re
from pathlib import Path

import pytest

import chunking
from chunking.cli import main
from chunking.cli.options import add_llm_arguments, client_from_args, confirm
from chunking.documents.io import read_path
from chunking.evaluation.questions import parse_questions
from chunking.llm.align import locate
from chunking.llm.answers import annotate, first_sentence
from chunking.llm.cache import AnswerCache, answer_key
from chunking.llm.client import CachedLLM, EndpointLLM, LLMError, LocalLLM, Request
from chunking.llm.contextual import contextual_chunks, document_window, llm_contexts
from chunking.llm.cost import estimate, record_speed, run_requests, speed_factor
from chunking.llm.enrich import parse_keywords, yake_keywords
from chunking.llm.questions import generate_questions, parse_answer, to_csv
from chunking.output.export import chunk_records
from chunking.splitters.propositions import parse_propositions, proposition_pieces
from tests.conftest import sample_paths
from tests.invariants import check_each_chunk
from tests.llm_fakes import ECHO, Scripted, passage_of

BEES = (
    "Honey bees live in colonies. Each colony has one queen.\n\n"
    "The workers gather nectar and pollen from flowers. Drones mate with the queen.\n\n"
    "In winter the bees cluster together to keep warm."
)


def cached(llm: Scripted, tmp_path: Path) -> CachedLLM:
    return CachedLLM(llm, AnswerCache(tmp_path / "llm"))


# ------------------------------------------------------------------------ alignment


def test_verbatim_text_is_found_at_or_after_the_preferred_offset() -> None:
    source = "A cat sat. A dog ran. A cat sat."
    first = locate("A cat sat.", source)
    later = locate("A cat sat.", source, prefer=5)
    assert first is not None and (first.start, first.verbatim) == (0, True)
    assert later is not None and later.start == 22 and later.similarity == 1.0
    assert source[later.start : later.end] == "A cat sat."


def test_a_near_match_is_a_real_span_with_its_similarity() -> None:
    match = locate("the workers gather nectar and pollen from flowers", BEES, min_similarity=0.8)
    assert match is not None and not match.verbatim
    assert BEES[match.start : match.end] == "The workers gather nectar and pollen from flowers"
    assert match.similarity == 1.0  # same words, other case
    reworded = locate(
        "Worker bees gather nectar and pollen from the flowers", BEES, min_similarity=0.6
    )
    assert reworded is not None and 0.6 <= reworded.similarity < 1.0
    assert "gather nectar and pollen" in BEES[reworded.start : reworded.end]


def test_text_that_is_nowhere_gets_no_span() -> None:
    assert locate("Quantum chromodynamics explains quarks", BEES) is None
    assert locate("   ", BEES) is None
    # Inside a window only: the sentence exists, but not in [0, 20).
    assert locate("Drones mate with the queen.", BEES, 0, 20, min_similarity=0.9) is None


# ---------------------------------------------------------------------------- cache


def test_answers_are_cached_on_disk_by_model_and_prompt(tmp_path: Path) -> None:
    inner = Scripted(lambda p: f"answer to {p}")
    llm = cached(inner, tmp_path)
    request = Request("What is a queen?", "system")
    assert not llm.is_cached(request)
    first = llm.complete(request)
    again = CachedLLM(Scripted(lambda p: "other"), AnswerCache(tmp_path / "llm")).complete(request)
    assert (first.cached, again.cached) == (False, True)
    assert again.text == first.text == "answer to What is a queen?"
    assert len(inner.prompts) == 1
    key = answer_key("scripted", "system", "What is a queen?")
    assert (tmp_path / "llm" / "answers" / key[:2] / f"{key}.json").is_file()
    other_model = CachedLLM(Scripted(lambda p: "x", name="other"), AnswerCache(tmp_path / "llm"))
    assert not other_model.is_cached(request)
    assert not llm.is_cached(Request("What is a queen?", "another system"))


def test_a_damaged_cache_file_is_asked_again(tmp_path: Path) -> None:
    inner = Scripted(lambda p: "fresh")
    llm = cached(inner, tmp_path)
    request = Request("q")
    key = answer_key("scripted", "", "q")
    path = tmp_path / "llm" / "answers" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert llm.complete(request).text == "fresh"
    assert json.loads(path.read_text(encoding="utf-8"))["text"] == "fresh"


# ------------------------------------------------------------------ cost and runs


def test_the_estimate_counts_calls_tokens_and_only_uncached_time(tmp_path: Path) -> None:
    llm = cached(Scripted(lambda p: "ok"), tmp_path)
    requests = [Request(f"question {i}", expected_tokens=20) for i in range(4)]
    before = estimate(llm, requests)
    assert (before.calls, before.cached, before.output_tokens) == (4, 0, 80)
    assert before.input_tokens > 4 * 2
    # 1 s per call + 20 tokens at 10/s = 3 s per call (plus reading), uncalibrated.
    assert 12 <= before.seconds < 13
    llm.complete(requests[0])
    after = estimate(llm, requests)
    assert after.cached == 1 and after.seconds < before.seconds
    assert "4 calls to scripted (1 cached, free)" in after.describe()


def test_measured_runs_calibrate_the_next_estimate(tmp_path: Path) -> None:
    llm = cached(Scripted(lambda p: "ok", seconds=6.0), tmp_path)
    requests = [Request(f"q{i}", expected_tokens=20) for i in range(3)]
    planned = estimate(llm, requests)
    done = run_requests(llm, requests)
    assert done.complete and done.asked == 3
    # Each answer took 6 s where ~3 s were expected: the factor is about 2.
    assert speed_factor(llm) == pytest.approx(6 * 3 / (planned.seconds), rel=0.01)
    later = estimate(llm, [Request(f"new {i}", expected_tokens=20) for i in range(3)])
    assert later.seconds == pytest.approx(18, rel=0.05)
    assert json.loads((tmp_path / "llm" / "speed.json").read_text())["scripted"]["measured"] == 18


def test_the_calibration_factor_is_bounded(tmp_path: Path) -> None:
    llm = cached(Scripted(lambda p: "ok"), tmp_path)
    record_speed(llm, 1.0, 1000.0)
    assert speed_factor(llm) == 10.0


def test_an_error_stops_the_run_and_keeps_the_answers_before_it(tmp_path: Path) -> None:
    inner = Scripted(lambda p: p.upper(), fail_at=2)
    llm = cached(inner, tmp_path)
    requests = [Request(f"q{i}") for i in range(5)]
    seen: list[tuple[int, int]] = []
    stopped = run_requests(llm, requests, progress=lambda d, t, _what: seen.append((d, t)))
    assert stopped.answers == ["Q0", "Q1", None, None, None]
    assert stopped.error is not None and "cannot reach" in stopped.error
    assert seen == [(1, 5), (2, 5)]
    with pytest.raises(LLMError, match=r"cannot reach.*2 of 5 answers kept"):
        stopped.check()
    inner.fail_at = None  # the endpoint is back: the run continues where it stopped
    resumed = run_requests(llm, requests)
    assert resumed.check() == ["Q0", "Q1", "Q2", "Q3", "Q4"]
    assert resumed.asked == 3
    assert "2 from the cache" in resumed.describe()


def test_cancel_stops_between_calls(tmp_path: Path) -> None:
    llm = cached(Scripted(lambda p: "ok"), tmp_path)
    requests = [Request(f"q{i}") for i in range(4)]
    done = run_requests(llm, requests, should_stop=lambda: len(llm.inner.prompts) >= 1)
    assert done.cancelled and done.done == 1
    assert "cancelled" in done.describe()


# ------------------------------------------------------------------------- options


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    return parser.parse_args(argv)


def test_options_choose_the_local_model_or_an_endpoint() -> None:
    local = client_from_args(_parse())
    assert isinstance(local.inner, LocalLLM) and "weak" in local.note
    endpoint = client_from_args(_parse("--llm-url", "http://localhost:1/v1", "--llm-model", "m"))
    assert isinstance(endpoint.inner, EndpointLLM) and endpoint.name == "m@http://localhost:1/v1"
    with pytest.raises(LLMError, match="--llm-model"):
        client_from_args(_parse("--llm-url", "http://localhost:1/v1"))
    with pytest.raises(LLMError, match="http"):
        client_from_args(_parse("--llm-url", "localhost:1", "--llm-model", "m"))
    with pytest.raises(LLMError, match="needs an endpoint"):
        client_from_args(_parse("--llm-model", "gpt-4o"))


def test_confirm_shows_the_cost_and_needs_yes_without_a_terminal(tmp_path: Path) -> None:
    llm = cached(Scripted(lambda p: "ok"), tmp_path)
    cost = estimate(llm, [Request("q")])
    err = io.StringIO()
    with pytest.raises(ValueError, match="--yes"):
        confirm(cost, llm, False, stdin=io.StringIO(""), stderr=err)
    assert "1 call to scripted" in err.getvalue()
    confirm(cost, llm, True, stdin=io.StringIO(""), stderr=io.StringIO())
    llm.complete(Request("q"))
    confirm(estimate(llm, [Request("q")]), llm, False, stdin=io.StringIO(""), stderr=err)


# -------------------------------------------------------------------- propositions


def test_echoed_sentences_align_verbatim_on_their_source() -> None:
    chunks = chunking.chunk(BEES, "propositions", size=60, llm=ECHO)
    assert chunks and all(c.metadata["alignment"] == "verbatim" for c in chunks)
    assert all(BEES[c.start : c.end] == c.text for c in chunks)
    assert "Drones mate with the queen." in [c.text for c in chunks]


def _config(**params: object) -> dict[str, object]:
    spec = chunking.get_strategy("propositions")
    return {**spec.defaults(), "budget_seconds": 1000, **params}


def test_reworded_statements_are_placed_near_and_unplaceable_ones_are_flagged() -> None:
    def answer(prompt: str) -> str:
        if "winter" in passage_of(prompt):
            return "Bees cluster together in winter to keep warm.\nThe moon is made of cheese."
        return "- honey bees live in colonies\n- nothing\n\nPropositions:"

    sizer = chunking.get_sizer("chars")
    pieces = proposition_pieces(BEES, _config(size=60), sizer, Scripted(answer))
    texts = [(BEES[p.start : p.end], dict(p.metadata)) for p in pieces]
    near = [m for _, m in texts if m.get("alignment") == "near"]
    assert any(m["proposition"] == "honey bees live in colonies" for m in near)
    assert all(0.6 <= m["similarity"] <= 1.0 for m in near)
    flagged = [(t, m) for t, m in texts if m.get("alignment") == "none"]
    cheese = [t for t, m in flagged if m["proposition"] == "The moon is made of cheese."]
    assert cheese == ["In winter the bees cluster together to keep warm."]  # its passage
    assert all(m["flags"][0].startswith("proposition not aligned") for _, m in flagged)
    assert [p.start for p in pieces] == sorted(p.start for p in pieces)


def test_a_passage_without_statements_is_kept_whole_and_flagged() -> None:
    sizer = chunking.get_sizer("chars")
    pieces = proposition_pieces(BEES, _config(size=1000), sizer, Scripted(lambda p: "Sure:\n"))
    assert len(pieces) == 1
    assert (pieces[0].start, pieces[0].end) == (0, len(BEES))
    assert pieces[0].metadata["flags"][0].startswith("no proposition")


def test_a_run_over_the_budget_is_refused_with_its_cost() -> None:
    sizer = chunking.get_sizer("chars")
    model = Scripted(lambda p: "x")
    with pytest.raises(ValueError, match=r"would need 4 calls to scripted.*budget of 5 s"):
        proposition_pieces(BEES, _config(size=60, budget_seconds=5), sizer, model)
    assert model.prompts == []  # refused before any call


def test_the_llm_parameter_is_checked_without_calling_a_model() -> None:
    chunking.Config.create("propositions", llm="http://localhost:11434/v1#qwen")
    for bad, fragment in (("gpt", "unknown model"), ("http://x/v1", "after a '#'")):
        with pytest.raises(ValueError, match=fragment):
            chunking.Config.create("propositions", llm=bad)


def test_proposition_lists_are_parsed_without_marks_headings_or_repeats() -> None:
    answer = "Propositions:\n1. Bees fly.\n- Bees fly.\n* Queens lay eggs.\n\n2) Drones mate."
    assert parse_propositions(answer) == ["Bees fly.", "Queens lay eggs.", "Drones mate."]


# -------------------------------------------------------------------------- questions


def _question_model(prompt: str) -> str:
    passage = passage_of(prompt)
    if "winter" in passage:
        return "Question: What do bees do in winter?\nExcerpt: they cluster together to keep warm"
    if "Drones" in passage:
        return "Question: Who gathers nectar?\nExcerpt: Robots gather nectar on the moon at night"
    return "I do not know."


def test_questions_keep_located_excerpts_and_count_the_rest(tmp_path: Path) -> None:
    documents = {"bees": BEES, "more": BEES.replace("Honey", "Wild")}
    llm = cached(Scripted(_question_model), tmp_path)
    found = generate_questions(documents, 8, llm, passage_size=60)
    assert found.proposed == 8  # every passage of both documents
    assert (found.unlocated, found.malformed, len(found.questions)) == (2, 4, 2)
    assert len(found.questions) + found.unlocated + found.malformed == found.proposed
    assert found.questions, found.describe()
    for q in found.questions:
        for e in q.excerpts:
            assert documents[q.corpus_id][e.start : e.end] == e.content
            assert e.match.verbatim or e.match.similarity >= 0.8
    parsed = parse_questions(to_csv(found.questions), documents, name="q.csv")
    assert [q.text for q in parsed] == [q.question for q in found.questions]


def test_answers_are_parsed_in_the_asked_format() -> None:
    assert parse_answer('Question: Why?\nExcerpt: "because it is so"') == (
        "Why?",
        ["because it is so"],
    )
    assert parse_answer("**Question 1:** Who?\n- Quote: the queen lays eggs") == (
        "Who?",
        ["the queen lays eggs"],
    )
    assert parse_answer("Question: Why?\nExcerpt: yes") is None  # too short to locate
    assert parse_answer("Question: Why?\nAnswer: because it is so") is None  # not a quote
    assert parse_answer("Bees are nice.") is None


def test_the_questions_command_refuses_bad_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF")
    assert main(["questions", str(pdf), "--yes"]) == 2
    assert ".md or .txt" in capsys.readouterr().err


def test_an_unreachable_endpoint_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    doc = tmp_path / "bees.md"
    doc.write_text(BEES, encoding="utf-8")
    argv = ["questions", str(doc), "--n", "2", "--yes", "--out", str(tmp_path / "q.csv")]
    code = main([*argv, "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cost: 1 call to m@http://127.0.0.1:9/v1" in err  # one passage: one question
    assert "cannot reach the endpoint http://127.0.0.1:9/v1" in err
    assert "Traceback" not in err and not (tmp_path / "q.csv").exists()


# -------------------------------------------------------- contexts and enrichment


def test_contexts_go_to_metadata_and_leave_the_chunks_alone(tmp_path: Path) -> None:
    chunks = chunking.chunk(BEES, "paragraph", size=60)
    llm = cached(Scripted(lambda p: "Context: This part is about bees.\nMore text."), tmp_path)
    assert llm_contexts(BEES, chunks, llm) == ["This part is about bees."] * len(chunks)
    enriched = contextual_chunks(BEES, chunks, llm)
    for before, after in zip(chunks, enriched, strict=True):
        assert (after.start, after.end, after.text) == (before.start, before.end, before.text)
        assert after.metadata["context"] == "This part is about bees."
    assert chunk_records(enriched)[0]["metadata"]["context"] == "This part is about bees."


def test_a_long_document_is_shown_by_its_opening_and_the_chunks_surroundings() -> None:
    document = "".join(f"Sentence number {i}. " for i in range(2000))
    chunk = chunking.chunk(document, "recursive", size=100)[300]
    window = document_window(document, chunk, 1200)
    assert window.startswith("Sentence number 0.") and chunk.text in window
    assert len(window) < 1300


def test_yake_keywords_come_from_the_text() -> None:
    [keywords] = yake_keywords([chunking.chunk(BEES, "recursive", size=1000)[0].text])
    assert 1 <= len(keywords) <= 5
    assert all(k.casefold() in BEES.casefold() for k in keywords)


def test_annotations_and_answers_are_cleaned() -> None:
    chunks = chunking.chunk(BEES, "paragraph", size=60)
    marked = annotate(chunks, "summary", ["One.", *[""] * (len(chunks) - 1)])
    assert marked[0].metadata["summary"] == "One." and "summary" not in marked[1].metadata
    with pytest.raises(ValueError, match="values for"):
        annotate(chunks, "summary", ["One."])
    assert first_sentence('\n"Summary: Bees live in hives."\nSecond line') == "Bees live in hives."
    assert first_sentence("<chunk>\nThe queen section.\n</chunk>") == "The queen section."
    assert first_sentence("<chunk>") == ""
    assert parse_keywords("1. bees, Bees\n- queen; nectar.") == ["bees", "queen", "nectar"]


def test_enrich_writes_yake_keywords_without_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "bees.md"
    doc.write_text(BEES, encoding="utf-8")
    out = tmp_path / "enriched.jsonl"
    argv = ["enrich", str(doc), "--strategy", "paragraph", "--size", "60", "--output", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    chunks = chunking.chunk(BEES, "paragraph", size=60)
    assert [(r["start"], r["end"]) for r in records] == [(c.start, c.end) for c in chunks]
    assert all(r["metadata"]["keywords"] for r in records)
    assert "cost:" not in capsys.readouterr().err  # no model asked, no cost shown


def test_enrich_with_an_unreachable_endpoint_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    doc = tmp_path / "bees.md"
    doc.write_text(BEES, encoding="utf-8")
    argv = ["enrich", str(doc), "--strategy", "paragraph", "--context", "--yes"]
    code = main([*argv, "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cost: 1 call to m@" in err and "cannot reach the endpoint" in err
    assert "0 of 1 answers kept" in err


def test_an_answer_is_cut_at_its_first_stop_string() -> None:
    from chunking.llm.client import cut_at_stop

    answer = "Question: Why?\nExcerpt: because\nQuestion: Why?\nExcerpt: because"
    assert cut_at_stop(answer, ("\nQuestion",)) == "Question: Why?\nExcerpt: because"
    assert cut_at_stop("no stop here", ("\n\n",)) == "no stop here"


def _reworded(prompt: str) -> str:
    """Each line of the passage in lower case, without punctuation or its first word."""
    lines = []
    for line in passage_of(prompt).splitlines():
        words = re.sub(r"[^\w\s]", "", line).lower().split()
        lines.append(" ".join(words[1:]))
    return "\n".join(lines)


@pytest.mark.parametrize("path", sample_paths(), ids=lambda p: p.name)
def test_reworded_statements_on_every_sample_keep_exact_offsets(path: Path) -> None:
    text = read_path(path).text[:4000]
    config = chunking.Config.create("propositions", size=400, llm=ECHO)
    sizer = chunking.get_sizer("chars")
    params = {**config.params, "budget_seconds": 1000}
    pieces = proposition_pieces(text, params, sizer, Scripted(_reworded))
    chunks = chunking.build_chunks(text, pieces, sizer)
    check_each_chunk(text, chunks, config)
    kinds = {c.metadata.get("alignment", "whole") for c in chunks}
    assert "near" in kinds, kinds
    for c in chunks:
        if c.metadata.get("alignment") == "near":
            assert c.metadata["similarity"] >= 0.6 and c.metadata["proposition"]
