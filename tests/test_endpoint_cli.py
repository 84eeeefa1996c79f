"""The ``--embed-*`` flags of ``evaluate``, ``run`` (with a vector-database sink) and
``search``, and an endpoint as the semantic strategy's ``--model``, against the real
embeddings server process (tests/embedding_server.py): the same recall as the local
model, a second run that sends nothing, one clear line for every fault, and the key in
no output, file or database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chunking.cli import main
from chunking.embedding import models
from chunking.embedding.cache import clear_cache
from chunking.evaluation.questions import chroma_eval_dir
from tests.embedding_server import Server, start

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("endpoint")]

KEY = "sk-cli-test-key-5f0c2b9e77aa"
MODEL = "all-MiniLM-L6-v2"
DOC = (
    "# Lodestar\n\nLodestar stores data in shards. Each shard has three replicas.\n\n"
    "When a node fails, the cluster copies its shards to the other nodes. " * 6
)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with start(key=KEY) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(models, "_MODELS", {})
    clear_cache()
    server.reset()


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def flags(server: Server, model: str = MODEL) -> list[str]:
    return ["--embed-url", server.url, "--embed-model", model]


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a new process: no vector in memory, no model loaded (the key read again)."""
    clear_cache()
    monkeypatch.setattr(models, "_MODELS", {})


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_evaluate_puts_the_endpoint_beside_the_local_model_and_reruns_for_free(
    server: Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [
        "evaluate",
        "--dataset",
        chroma_eval_dir(),
        "--corpus-id",
        "chatlogs",
        "--strategy",
        "recursive",
        "--size",
        "200",
        "--unit",
        "tokens",
        "--model",
        "minilm",
        *flags(server),
        "--format",
        "json",
    ]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    rows = {r["model"]: r for r in json.loads(out)["results"]}
    endpoint = next(name for name in rows if name.startswith("http://"))
    assert endpoint == f"{server.url}#{MODEL}"
    assert rows[endpoint]["recall_mean"] == pytest.approx(
        next(r for n, r in rows.items() if n != endpoint)["recall_mean"], abs=0.01
    )
    assert "embedding cost:" in err and "a server on this machine" in err
    assert KEY not in out and KEY not in err
    sent = server.requests()
    assert sent > 0
    new_process(monkeypatch)  # only the disk cache is left
    code, again, err = cli(capsys, *args)
    assert code == 0, err
    assert server.requests() == sent, "the second run sent requests"
    assert json.loads(again)["results"] == json.loads(out)["results"]


def test_run_embeds_into_a_sink_and_search_asks_it_without_the_key_anywhere(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lodestar.md").write_text(DOC, encoding="utf-8")
    (docs / "other.md").write_text("A page about tea, kettles and cups. " * 30, encoding="utf-8")
    out, sink = tmp_path / "out", tmp_path / "vectors"
    run = ["run", docs, "--out", out, "--strategy", "recursive", "--size", "60"]
    code, stdout, err = cli(capsys, *run, "--embed", *flags(server), "--sink", f"lancedb:{sink}")
    assert code == 0, err
    assert "embedding cost:" in err
    code, found, err = cli(
        capsys, "search", f"lancedb:{sink}", "What happens when a node fails?", *flags(server)
    )
    assert code == 0, err
    assert "lodestar.md" in found.splitlines()[1]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["embedding_dimension"] == 384
    for text in (stdout, err, found):
        assert KEY not in text
    assert KEY.encode() not in every_byte(out) + every_byte(sink)
    assert KEY.encode() not in every_byte(tmp_path / "cache")


def test_an_endpoint_is_the_semantic_strategys_model(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(DOC + "\n\nTea is brewed in a kettle. Cups hold the tea. " * 4)
    code, out, err = cli(
        capsys, "split", doc, "--strategy", "semantic", "--model", f"{server.url}#{MODEL}"
    )
    assert code == 0, err
    assert server.requests() > 0 and KEY not in out + err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--embed-url", "ftp://host/v1", "--embed-model", "m"], "must be an http:// or https://"),
        (["--embed-url", "http://me:sk-x@host/v1", "--embed-model", "m"], "must not hold a user"),
        (["--embed-model", "m"], "--embed-model belongs to an endpoint: add --embed-url"),
        (["--embed-url", "http://localhost:1/v1"], "needs the endpoint's model"),
        (["--embed-url", "http://h/v1", "--embed-model", "m", "--embed-window", "0"], "window"),
        (
            ["--embed-url", "http://h/v1", "--embed-model", "m", "--embed-tokenizer", "gpt9"],
            "--embed-tokenizer 'gpt9'",
        ),
        (
            ["--embed-url", "http://h/v1", "--embed-model", "m", "--embed-key-env", "NOPE_KEY"],
            "NOPE_KEY is not set",
        ),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = cli(
        capsys, "evaluate", "--dataset", chroma_eval_dir(), "--corpus-id", "chatlogs", *extra
    )
    assert code == 2 and out == ""
    assert err.startswith("chunk-explorer: error:") and err.count("\n") == 1
    assert message in err and "sk-x" not in err


def test_faults_end_in_one_line_and_leave_nothing_half_written(
    server: Server,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lodestar.md").write_text(DOC, encoding="utf-8")
    out, sink = tmp_path / "out", tmp_path / "vectors"
    run = ["run", docs, "--out", out, "--strategy", "recursive", "--size", "60", "--embed"]
    sinks = ["--sink", f"lancedb:{sink}"]
    code, _, err = cli(capsys, *run, *flags(server, "nomic-embed-text"), *sinks)
    assert code == 2 and err.count("\n") <= 2  # the cost line, then the error
    assert "has no model 'nomic-embed-text'" in err.splitlines()[-1]
    assert not list(out.glob("parts/*.parquet")) and not sink.exists()
    server.faults(*[{"kind": "500"}] * 5)
    code, _, err = cli(capsys, *run, *flags(server), *sinks, "--embed-timeout", "30")
    assert code == 2, err
    assert "answered HTTP 500: internal error, 5 attempts" in err.splitlines()[-1]
    assert not list(out.glob("parts/*.parquet"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-one-123456")
    new_process(monkeypatch)
    code, _, err = cli(capsys, *run, *flags(server), *sinks)
    assert code == 2 and "refused the key (HTTP 401)" in err and "sk-wrong-one" not in err
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    new_process(monkeypatch)
    code, stdout, err = cli(capsys, *run, *flags(server), *sinks)
    assert code == 0, err
    assert "1 documents chunked" in stdout or "1 document" in stdout


def test_tune_searches_with_the_endpoint_counting_its_own_tokens(
    server: Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [
        "tune",
        "--dataset",
        chroma_eval_dir(),
        "--corpus-id",
        "chatlogs",
        "--strategy",
        "recursive",
        "--size",
        "100",
        "200",
        "--unit",
        "model",
        "--sampler",
        "grid",
        "--holdout",
        "0",
        *flags(server),
        "--embed-tokenizer",
        "cl100k",
        "--embed-window",
        "500",
        "--format",
        "json",
    ]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    result = json.loads(out)
    assert "embedding cost:" in err and "a server on this machine" in err
    trials = result["trials"]
    assert len(trials) == 2
    # the model unit counts the endpoint's tokenizer (cl100k), and the trials say so
    assert {t["config"]["params"]["unit"] for t in trials} == {"tokens"}, trials[0]
    assert KEY not in out and KEY not in err
    sent = server.requests()
    assert sent > 0
    new_process(monkeypatch)
    code, again, err = cli(capsys, *args)
    assert code == 0, err
    assert server.requests() == sent, "the second search sent requests"
    assert [t["config"] for t in json.loads(again)["trials"]] == [t["config"] for t in trials]


def test_tune_takes_one_model(server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(
        capsys, "tune", "--dataset", chroma_eval_dir(), "--model", "minilm", *flags(server)
    )
    assert code == 2 and out == ""
    assert err.strip() == (
        "chunk-explorer: error: --model and --embed-url both name the embedding model; give one"
    )
