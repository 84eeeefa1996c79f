"""``--engine spark`` on a real local Spark session (not mocked): the local engine's rows,
vectors and sink records, a re-run after an executor died, and the bad inputs."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.dataset as ds
import pytest

import chunking
from chunking import Config
from chunking.cli import main
from chunking.documents.corpus import doc_id
from chunking.documents.io import read_bytes
from chunking.pipeline import RunSettings, spark_engine
from chunking.sinks import collection_name
from tests.conftest import write
from tests.test_run import generated_corpus
from tests.test_run_ray import corpus_inputs, sources

# One worker runs this module (--dist loadgroup), which shares one local session.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]
pytest.importorskip("pyspark")

CONFIG = ("--strategy", "recursive", "--size", "400", "--unit", "tokens")
PREFIX = "chunk-explorer: error:"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """The module's session, started as the engine starts one (the runs then join it)."""
    session, started = spark_engine.connect(RunSettings("unused", engine="spark", workers=2))
    assert started
    yield session
    session.stop()


def run(out: Path, inputs: list[str], *extra: str) -> int:
    return main(["run", *inputs, "--out", str(out), *CONFIG, "-q", *extra])


def row_set(out: Path) -> set[tuple[Any, ...]]:
    """Every row, every column but the embedding; no row twice."""
    t = ds.dataset(out / "parts", format="parquet").to_table()
    names = ("doc_id", "path", "index", "start", "end", "size", "text", "metadata")
    rows = list(zip(*(t.column(c).to_pylist() for c in names), strict=True))
    assert len(rows) == len(set(rows))
    return set(rows)


def vectors(out: Path) -> dict[tuple[str, int], np.ndarray]:
    t = ds.dataset(out / "parts", format="parquet").to_table()
    keys = zip(t.column("path").to_pylist(), t.column("index").to_pylist(), strict=True)
    return dict(zip(keys, np.array(t.column("embedding").to_pylist()), strict=True))


def failures(out: Path) -> dict[str, str]:
    lines = (out / "errors.jsonl").read_text(encoding="utf-8").splitlines()
    return {e["path"]: e["reason"] for e in map(json.loads, lines)}


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def test_spark_gives_the_local_rows(tmp_path: Path, spark: Any) -> None:
    inputs = corpus_inputs(tmp_path)  # samples, generated files, a zip, binary, unreadable
    # Spark's reader drops a file named _x.md unasked; the corpus rules keep it
    generated = Path(inputs[1])
    write(generated / "_drafts" / "_notes.md", "# Draft\n\n" + "Underscored text. " * 200)
    write(generated / ".hidden.md", "skipped by every engine")
    local, on_spark = tmp_path / "local", tmp_path / "spark"
    assert run(local, inputs) == 1  # the binary and the unreadable files fail
    assert run(on_spark, inputs, "--engine", "spark") == 1
    expected = row_set(local)
    assert row_set(on_spark) == expected
    paths = {r[1] for r in expected}
    assert "generated/_drafts/_notes.md" in paths and "pack.zip/zipped/notes.md" in paths
    assert len(paths) >= 16
    data = sources(tmp_path)
    data["generated/_drafts/_notes.md"] = (generated / "_drafts" / "_notes.md").read_bytes()
    for identity, path, _, start, end, _, text, _ in expected:
        assert identity == doc_id(data[path])
        assert read_bytes(data[path], path).text[start:end] == text
    assert failures(on_spark) == failures(local) and len(failures(local)) == 2
    found = manifest(on_spark)
    assert found["engine"] == "spark" and found["counts"]["failed"] == 2
    assert found["counts"]["chunks"] == len(expected)
    assert found["timings"]["startup_seconds"] >= 0
    # the committed layout holds Parquet files only, no staging folder is left
    assert all(p.suffix == ".parquet" for p in (on_spark / "parts").rglob("*") if p.is_file())
    assert not list(on_spark.glob(".staging-*"))

    # a second run skips everything already done and adds nothing
    assert run(on_spark, inputs, "--engine", "spark") == 1
    assert row_set(on_spark) == expected
    again = manifest(on_spark)["counts"]
    assert again["processed"] == 0 and again["skipped"] == len({r[:2] for r in expected})


def test_spark_embeddings_match_local_with_the_bundled_model(tmp_path: Path, spark: Any) -> None:
    # one document: one Python worker loads the model (the sink test embeds in several)
    corpus = [str(generated_corpus(tmp_path / "generated", count=1) / "sub0" / "doc0.md")]
    local, on_spark = tmp_path / "local", tmp_path / "spark"
    assert run(local, corpus, "--embed") == 0
    assert run(on_spark, corpus, "--embed", "--engine", "spark") == 0
    assert row_set(on_spark) == row_set(local)
    expected, got = vectors(local), vectors(on_spark)
    assert set(got) == set(expected) and len(got) >= 2
    assert next(iter(got.values())).shape == (384,)
    assert all(np.allclose(got[k], expected[k], atol=1e-5) for k in expected)
    assert manifest(on_spark)["embedding_dimension"] == 384


def lancedb_records(path: Path) -> dict[str, tuple[str, np.ndarray]]:
    import lancedb

    name = collection_name(Config.create("recursive", size=400, unit="tokens").label())
    rows = lancedb.connect(str(path)).open_table(name).to_arrow().to_pylist()
    return {r["id"]: (r["text"], np.asarray(r["vector"])) for r in rows}


def test_a_dying_executor_then_a_rerun_with_a_sink(
    tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = [str(generated_corpus(tmp_path / "corpus"))]  # 7 documents
    static = ("--embed", "--model", "minilm-static")
    clean, clean_db = tmp_path / "clean", tmp_path / "clean-db"
    assert run(clean, corpus, *static, "--sink", f"lancedb:{clean_db}") == 0

    out, db = tmp_path / "out", tmp_path / "db"
    args = (*static, "--sink", f"lancedb:{db}", "--engine", "spark")
    monkeypatch.setattr(spark_engine, "WAVE_DOCUMENTS", 2)  # one Spark job per 2 documents
    # the Python worker that meets the fifth document exits, as a dying executor would
    monkeypatch.setenv(spark_engine.FAULT_ENV, "corpus/sub1/doc1.md")
    capsys.readouterr()
    assert run(out, corpus, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{PREFIX} the Spark job failed") and err.count("\n") == 1
    assert "run the same command again" in err
    partial = row_set(out)
    assert len({r[:2] for r in partial}) == 4  # two waves committed, the third lost
    assert len(lancedb_records(db)) == len(partial)  # the sink kept in step with them

    monkeypatch.delenv(spark_engine.FAULT_ENV)
    assert run(out, corpus, *args) == 0
    assert "4 already done" in capsys.readouterr().out
    assert row_set(out) == row_set(clean)  # the same rows, none twice
    assert not list(out.glob(".staging-*"))
    got, expected = lancedb_records(db), lancedb_records(clean_db)
    assert set(got) == set(expected)
    assert all(got[i][0] == expected[i][0] for i in got)
    assert all(np.allclose(got[i][1], expected[i][1], atol=1e-5) for i in got)


def test_the_exported_spark_job_gives_the_core_chunks(
    tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``chunk-explorer export --to spark``, shipped to the session as a job's file is."""
    corpus = generated_corpus(tmp_path / "corpus", count=2)
    write(corpus / "image.txt", bytes(range(256)) * 8)  # binary: no rows, the job goes on
    job, out = tmp_path / "jobs" / "chunk_job.py", tmp_path / "rows"
    job.parent.mkdir()
    config = chunking.Config.create("recursive", size=120, unit="tokens", overlap=10)
    saved = write(tmp_path / "c.json", config.to_json())
    assert main(["export", "--config", str(saved), "--to", "spark", "--output", str(job)]) == 0
    spark.sparkContext.addPyFile(str(job))  # what spark-submit does with the job's file
    monkeypatch.syspath_prepend(str(job.parent))
    importlib.import_module("chunk_job").main(str(corpus), str(out))
    t = ds.dataset(out, format="parquet").to_table()
    names = ("path", "index", "start", "end", "size", "text")
    got = sorted(zip(*(t.column(c).to_pylist() for c in names), strict=True))
    expected = []
    for path in (p for p in corpus.rglob("*") if p.is_file() and p.name != "image.txt"):
        text = read_bytes(path.read_bytes(), path.name).text
        uri = "file:" + str(path.resolve())
        expected += [
            (uri, c.index, c.start, c.end, c.size, c.text) for c in chunking.run(text, config)
        ]
    assert got == sorted(expected) and len({r[0] for r in got}) == 3


# ---------------------------------------------------------------------- bad input


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("scheme", ["spark", "sc"])
def test_a_master_that_refuses_the_connection(
    tmp_path: Path, spark: Any, scheme: str, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "a.txt", "Some text to cut.")
    master = f"{scheme}://127.0.0.1:{closed_port()}"
    code = run(tmp_path / "out", [str(good)], "--engine", "spark", "--spark-master", master)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"{PREFIX} cannot reach the Spark master {master}")
    assert "refused" in err.lower()


def test_spark_connect_beside_a_local_session_is_one_line(
    tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """pyspark allows no Connect session in a process that runs a classic one."""
    good = write(tmp_path / "a.txt", "Some text to cut.")
    with socket.socket() as listener:  # it answers, so the reachability check passes
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        master = f"sc://127.0.0.1:{listener.getsockname()[1]}"
        code = run(tmp_path / "out", [str(good)], "--engine", "spark", "--spark-master", master)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"{PREFIX} cannot start a Spark Connect session for {master}")
    assert "SESSION_ALREADY_EXIST" in err
    assert spark_engine.CONNECT_MODE not in os.environ


def test_spark_master_needs_the_spark_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "a.txt", "Some text to cut.")
    assert run(tmp_path / "out", [str(good)], "--spark-master", "spark://h:7077") == 2
    assert "--spark-master needs --engine spark" in capsys.readouterr().err


def test_missing_java_says_how_to_install_it(tmp_path: Path) -> None:
    good = write(tmp_path / "a.txt", "Some text to cut.")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_REMOTE")}
    env["PATH"] = str(Path(sys.executable).parent)  # no java on it
    command = [sys.executable, "-m", "chunking.cli", "run", str(good)]
    command += ["--out", str(tmp_path / "out"), *CONFIG, "--engine", "spark"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"{PREFIX} --engine spark needs Java 17 or newer")
    assert "openjdk-17-jre-headless" in done.stderr and done.stderr.count("\n") == 1


def test_an_old_java_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = write(
        tmp_path / "jdk" / "bin" / "java", "#!/bin/sh\necho 'java version \"1.8.0_392\"' >&2\n"
    )
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    with pytest.raises(ValueError, match=r"Java 17 or newer.*found Java 8"):
        spark_engine.find_java()


def test_paths_as_spark_shows_them() -> None:
    assert spark_engine.spark_path("file:/tmp/a b/é%20.md") == "/tmp/a b/é%20.md"
    assert spark_engine.spark_path("file:///tmp/x.md") == "/tmp/x.md"
    assert spark_engine.spark_path("dbfs:/Volumes/c/s/v/x.md") == "/Volumes/c/s/v/x.md"
    assert spark_engine.master_address("spark://a:7000,b") == [("a", 7000), ("b", 7077)]
    assert spark_engine.master_address("sc://host/;token=x") == [("host", 15002)]
