"""The endpoint path against a real OpenAI-compatible HTTP server (tests/llm_server.py)
serving the local SmolLM2, through the real ``openai`` client; and the local model
itself. Slow: the model loads once per process (~20 s), each answer takes seconds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import chunking
from chunking.cli import main
from chunking.evaluation.questions import read_corpus, read_questions
from chunking.llm.client import EndpointLLM, LLMError, Request, make_llm
from chunking.llm.contextual import llm_contexts
from chunking.llm.cost import run_requests
from tests.invariants import check_each_chunk
from tests.llm_server import MALFORMED, QUOTING, SLOW, serve

# One worker runs this module (--dist loadgroup): its endpoint loads the model once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm_server")]

TEXT = (
    "# Lodestar\n\nLodestar stores data in shards. Each shard has three replicas.\n\n"
    "When a node fails, the cluster copies its shards to the other nodes."
)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with serve() as url:
        yield url


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_the_openai_client_gets_an_answer_with_its_token_counts(endpoint: str) -> None:
    answer = EndpointLLM(endpoint, "smollm2").complete(Request("Say hello.", max_tokens=8))
    assert answer.text and not answer.cached
    assert answer.input_tokens > 3 and 0 < answer.output_tokens <= 8


def test_a_timeout_and_a_malformed_answer_are_clear_errors(endpoint: str) -> None:
    with pytest.raises(LLMError, match=r"did not answer within 0.5 s"):
        EndpointLLM(endpoint, SLOW, timeout=0.5).complete(Request("Hi", max_tokens=4))
    with pytest.raises(LLMError, match="malformed answer"):
        EndpointLLM(endpoint, MALFORMED).complete(Request("Hi", max_tokens=4))
    with pytest.raises(LLMError, match=r"HTTP 404"):
        EndpointLLM(f"{endpoint}/nowhere", "m").complete(Request("Hi", max_tokens=4))


def test_a_failing_endpoint_keeps_what_was_done(endpoint: str) -> None:
    good = make_llm(endpoint, "smollm2")
    requests = [Request(f"Say the number {i}.", max_tokens=6) for i in range(2)]
    assert run_requests(good, requests[:1]).complete
    broken = make_llm(endpoint.replace("/v1", "/gone/v1"), "smollm2")
    stopped = run_requests(broken, requests)
    assert stopped.error is not None and "HTTP 404" in stopped.error
    assert run_requests(good, requests).asked == 1  # the first answer came from the cache


def test_contexts_through_the_endpoint_are_cached(endpoint: str) -> None:
    chunks = chunking.chunk(TEXT, "paragraph", size=80)
    llm = make_llm(endpoint, "smollm2")
    contexts = llm_contexts(TEXT, chunks, llm)
    assert len(contexts) == len(chunks) and all(isinstance(c, str) for c in contexts)
    assert llm_contexts(TEXT, chunks, llm) == contexts
    done = run_requests(llm, [Request("unrelated", max_tokens=4)])
    assert done.asked == 1  # only the new prompt was asked


def test_the_questions_command_through_the_endpoint(
    endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "lodestar.md").write_text(TEXT, encoding="utf-8")
    out = tmp_path / "q.csv"
    argv = ["questions", str(corpus / "lodestar.md"), "--n", "2", "--out", str(out), "--yes"]
    # A model that quotes well (tests/llm_server.py): whether the weak local model quotes
    # a locatable sentence is not what this tests; the path to the question file is.
    code = main([*argv, "--llm-url", endpoint, "--llm-model", QUOTING])
    err = capsys.readouterr().err
    assert "cost: 1 call to quoting@" in err  # a short document: one passage
    assert "1 question proposed" in err
    assert code == 0, err
    questions = read_questions(out, read_corpus(corpus))
    assert len(questions) == 1 and questions[0].corpus_id == "lodestar"
    (reference,) = questions[0].references
    assert TEXT[reference.start : reference.end] == "Lodestar stores data in shards"


def test_a_model_that_quotes_nothing_locatable_writes_no_file(
    endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "lodestar.md").write_text(TEXT, encoding="utf-8")
    out = tmp_path / "q.csv"
    argv = ["questions", str(corpus / "lodestar.md"), "--n", "2", "--out", str(out), "--yes"]
    code = main([*argv, "--llm-url", endpoint, "--llm-model", MALFORMED])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists(), err


def test_the_local_model_is_deterministic_and_cached() -> None:
    llm = make_llm()
    request = Request("Name one colour.", max_tokens=6)
    first, second = llm.complete(request), llm.complete(request)
    assert first.text and not first.cached and second.cached
    assert second.text == first.text


def test_propositions_from_the_local_model_are_aligned_or_flagged() -> None:
    config = chunking.Config.create("propositions", size=200, budget_seconds=3600)
    chunks = chunking.run(TEXT, config)
    check_each_chunk(TEXT, chunks, config)
    for c in chunks:
        alignment = c.metadata.get("alignment")
        assert alignment in ("verbatim", "near", "none") or c.flags
        if alignment == "none":
            assert c.flags[0].startswith("proposition not aligned")
            assert c.metadata["proposition"]
