"""``chunk-explorer run``: a corpus to Parquet, errors, resumption and exit codes."""

from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from chunking import Config
from chunking.cli import main
from chunking.documents.corpus import doc_id, list_sources
from chunking.documents.io import read_bytes
from chunking.embedding.models import get_embedder
from chunking.pipeline import Job, RunSettings, documents, run_corpus
from tests.conftest import SAMPLE_DOCS, make_zip, write

PREFIX = "chunk-explorer: error:"
RECURSIVE = ("--strategy", "recursive", "--size", "60", "--unit", "words")


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def generated_corpus(folder: Path, count: int = 6) -> Path:
    """Documents with repeated and unusual text: CRLF, emoji, accents, one long line."""
    for i in range(count):
        paragraphs = [
            f"Document {i}, paragraph {p}: chunking decides what a retriever can find. "
            + "Émoji 🙂 and CJK 漢字 keep their offsets. " * (p + i % 3)
            for p in range(8)
        ]
        write(folder / f"sub{i % 2}" / f"doc{i}.md", "\r\n\r\n".join(paragraphs))
    write(folder / "long_line.txt", "word " * 3000)
    return folder


def table(out: Path) -> pa.Table:
    return ds.dataset(out / "parts", format="parquet").to_table()


def rows(out: Path) -> list[tuple[str, str, int, int, str]]:
    t = table(out).select(["doc_id", "path", "start", "end", "text"])
    return sorted(zip(*(t.column(i).to_pylist() for i in range(5)), strict=True))


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def errors(out: Path) -> list[dict[str, Any]]:
    lines = (out / "errors.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def check_slices(out: Path, files: dict[str, Path]) -> None:
    """Every row's text is the exact slice of its document at its offsets."""
    texts = {name: read_bytes(path.read_bytes(), path.name).text for name, path in files.items()}
    for identity, name, start, end, text in rows(out):
        assert texts[name][start:end] == text
        assert identity == doc_id(files[name].read_bytes())
        assert text.strip()


def corpus_files(folder: Path) -> dict[str, Path]:
    return {
        f"{folder.name}/{p.relative_to(folder).as_posix()}": p
        for p in folder.rglob("*")
        if p.is_file()
    }


# ------------------------------------------------------------------------ good runs


def test_run_writes_every_chunk_with_exact_offsets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = generated_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    code, stdout, err = cli(capsys, "run", corpus, "--out", out, *RECURSIVE, "--part-rows", 20)
    assert code == 0, err
    assert "7 documents chunked" in stdout and "0 failed" in stdout
    assert err == ""  # no progress bar when stderr is not a terminal
    check_slices(out, corpus_files(corpus))
    t = table(out)
    assert t.schema.names == [*documents.COLUMNS]
    assert len(list((out / "parts").glob("*.parquet"))) > 1  # written in parts
    metadata = [json.loads(m) for m in t.column("metadata").to_pylist()]
    assert all(isinstance(m, dict) for m in metadata)
    assert max(t.column("size").to_pylist()) <= 60
    info = manifest(out)
    assert info["status"] == "complete"
    assert info["configuration"]["params"]["size"] == 60
    assert info["counts"]["documents"] == 7 and info["counts"]["chunks"] == t.num_rows
    assert info["counts"]["failed"] == 0 and "pyarrow" in info["versions"]
    assert errors(out) == []


def test_run_with_a_config_file_over_samples_and_a_zip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path / "c.json", json.dumps({"strategy": "token", "params": {"size": 80}}))
    zipped = write(
        tmp_path / "pack.zip", make_zip({"inner/note.txt": "A note inside a zip. " * 40})
    )
    out = tmp_path / "out"
    code, _, err = cli(
        capsys, "run", SAMPLE_DOCS, zipped, "--config", config, "--out", out, "--workers", 2
    )
    assert code == 0, err
    paths = set(table(out).column("path").to_pylist())
    assert "pack.zip/inner/note.txt" in paths
    assert "sample_docs/long_essay.txt" in paths
    assert not any("__pycache__" in p for p in paths)
    assert manifest(out)["configuration"]["strategy"] == "token"


# ----------------------------------------------------------------------- bad inputs


def test_zip_with_parent_paths_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ok.txt", "fine text")
        archive.writestr("../../escaped.txt", "evil text")
    zipped = write(tmp_path / "deep" / "evil.zip", buffer.getvalue())
    code, _, err = cli(capsys, "run", zipped, "--out", tmp_path / "out", *RECURSIVE)
    assert code == 2
    assert err.startswith(PREFIX) and "leaves the archive" in err and err.count("\n") == 1
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "out").exists()


def unreadable_file(tmp_path: Path) -> str:
    """A file that opens but cannot be read: permissions, or /proc/self/mem for root."""
    if os.geteuid() == 0:
        return "/proc/self/mem"
    path = write(tmp_path / "locked.txt", "secret")
    path.chmod(0)
    return str(path)


def test_unreadable_and_binary_files_among_good_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = generated_corpus(tmp_path / "corpus", count=2)
    write(corpus / "image.txt", bytes(range(256)) * 8)
    write(corpus / "photo.png", b"\x89PNG\r\n\x1a\n" + os.urandom(64))
    locked = unreadable_file(tmp_path)
    out = tmp_path / "out"
    code, stdout, _ = cli(capsys, "run", corpus, locked, "--out", out, *RECURSIVE)
    assert code == 1
    assert "3 failed" in stdout and "errors.jsonl" in stdout
    failed = {e["path"]: e for e in errors(out)}
    assert set(failed) == {"corpus/image.txt", "corpus/photo.png", Path(locked).name}
    assert "binary" in failed["corpus/image.txt"]["reason"]
    assert failed["corpus/image.txt"]["doc_id"] == doc_id((corpus / "image.txt").read_bytes())
    assert "unsupported extension" in failed["corpus/photo.png"]["reason"]
    assert "cannot be read" in failed[Path(locked).name]["reason"]
    assert failed[Path(locked).name]["doc_id"] is None
    good = {k: v for k, v in corpus_files(corpus).items() if k not in failed}
    check_slices(out, good)
    assert {r[1] for r in rows(out)} == set(good)
    assert manifest(out)["counts"]["failed"] == 3


def test_empty_folder_missing_input_and_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    code, _, err = cli(capsys, "run", tmp_path / "empty", "--out", out, *RECURSIVE)
    assert code == 2 and "no files" in err
    code, _, err = cli(capsys, "run", tmp_path / "missing.txt", "--out", out, *RECURSIVE)
    assert code == 2 and "was not found" in err
    good = write(tmp_path / "a.txt", "Some text to cut.")
    code, _, err = cli(capsys, "run", good, "--out", out)
    assert code == 2 and "--config CONFIG.json or --strategy" in err
    code, _, err = cli(capsys, "run", good, "--out", out, *RECURSIVE, "--workers", 0)
    assert code == 2 and "--workers must be at least 1" in err
    code, _, err = cli(capsys, "run", good, "--out", out, *RECURSIVE, "--model", "hash")
    assert code == 2 and "add --embed" in err
    code, _, err = cli(capsys, "run", good, "--out", good, *RECURSIVE)
    assert code == 2 and "is a file" in err
    code, _, _ = cli(capsys, "run", good, *RECURSIVE)  # --out is required
    assert code == 2


def test_missing_ray_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    good = write(tmp_path / "a.txt", "Some text to cut.")
    code, _, err = cli(
        capsys, "run", good, "--out", tmp_path / "out", *RECURSIVE, "--engine", "ray"
    )
    assert code == 2
    assert "pip install 'chunk-explorer[corpus]'" in err and err.count("\n") == 1


# ----------------------------------------------------------------------- resumption


def test_second_run_skips_documents_already_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = generated_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    assert cli(capsys, "run", corpus, "--out", out, *RECURSIVE)[0] == 0
    first = rows(out)
    write(corpus / "new.txt", "A document added after the first run. " * 20)
    code, stdout, _ = cli(capsys, "run", corpus, "--out", out, *RECURSIVE)
    assert code == 0
    assert "1 documents chunked" in stdout and "7 already done" in stdout
    second = rows(out)
    assert set(first) < set(second) and len(second) == len(set(second))
    assert manifest(out)["counts"]["documents"] == 8


def test_interrupted_run_finishes_without_duplicates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = generated_corpus(tmp_path / "corpus")
    clean = tmp_path / "clean"
    assert cli(capsys, "run", corpus, "--out", clean, *RECURSIVE)[0] == 0

    out = tmp_path / "out"
    real_chunk = documents.Job.chunk
    calls = {"n": 0}

    def interrupted(self: documents.Job, name: str, data: bytes) -> documents.Outcome:
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # what Ctrl+C does in the middle of a document
        return real_chunk(self, name, data)

    monkeypatch.setattr(documents.Job, "chunk", interrupted)
    code, _, err = cli(capsys, "run", corpus, "--out", out, *RECURSIVE, "--part-rows", 1)
    assert code == 130 and "interrupted" in err
    partial = rows(out)
    assert 0 < len({r[:2] for r in partial}) < 7  # some documents committed, not all
    # what a crash could also leave: a half-written part and a Ray staging folder
    write(out / "parts" / "part-x-00009.parquet.tmp", b"half a file")
    (out / ".staging-old").mkdir()
    monkeypatch.setattr(documents.Job, "chunk", real_chunk)

    code, stdout, _ = cli(capsys, "run", corpus, "--out", out, *RECURSIVE)
    assert code == 0 and "3 already done" in stdout
    assert rows(out) == rows(clean)  # the same rows, none twice
    assert not list(out.rglob("*.tmp")) and not (out / ".staging-old").exists()


def test_another_configuration_is_refused_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = generated_corpus(tmp_path / "corpus", count=2)
    out = tmp_path / "out"
    assert cli(capsys, "run", corpus, "--out", out, *RECURSIVE)[0] == 0
    other = ("--strategy", "recursive", "--size", "30", "--unit", "words")
    code, _, err = cli(capsys, "run", corpus, "--out", out, *other)
    assert code == 2 and "size: 60 there, 30 now" in err and "--force" in err
    code, _, _ = cli(capsys, "run", corpus, "--out", out, *other, "--force")
    assert code == 0
    assert max(table(out).column("size").to_pylist()) <= 30
    assert manifest(out)["configuration"]["params"]["size"] == 30
    assert len(rows(out)) == len(set(rows(out)))
    stranger = write(tmp_path / "stranger" / "notes.txt", "not an output")
    code, _, err = cli(capsys, "run", corpus, "--out", stranger.parent, *RECURSIVE)
    assert code == 2 and "not empty" in err


# ------------------------------------------------------------------------ embedding


@pytest.mark.slow
def test_embed_with_the_bundled_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = generated_corpus(tmp_path / "corpus", count=2)
    out = tmp_path / "out"
    code, _, err = cli(capsys, "run", corpus, "--out", out, *RECURSIVE, "--embed")
    assert code == 0, err
    t = table(out)
    vectors = np.array(t.column("embedding").to_pylist(), dtype=np.float32)
    assert vectors.shape == (t.num_rows, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    texts = t.column("text").to_pylist()
    direct = get_embedder().embed([texts[0], texts[-1]])
    assert np.allclose(vectors[[0, -1]], direct, atol=1e-5)  # each row its own text's vector
    info = manifest(out)
    assert info["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert info["embedding_dimension"] == 384
    code, _, err = cli(capsys, "run", corpus, "--out", out, *RECURSIVE)  # no --embed now
    assert code == 2 and "embedding_model" in err


def test_progress_on_a_terminal_counts_documents_mb_chunks_and_eta(tmp_path: Path) -> None:
    corpus = generated_corpus(tmp_path / "corpus", count=3)
    sources = list_sources([str(corpus)])
    job = Job(Config.create("recursive", size=60, unit="words").to_dict(), 2**20)
    settings = RunSettings(out=str(tmp_path / "out"), progress=True)
    stderr = io.StringIO()
    summary = run_corpus(sources, job, settings, stderr=stderr)
    last = stderr.getvalue().rstrip("\n").split("\r")[-1]
    assert "4/4 documents" in last and f"{summary.chunks:,} chunks" in last
    assert " MB" in last and "ETA 0:00" in last and last.startswith("[100%]")
    assert summary.exit_code == 0 and summary.processed == 4


def test_html_rows_are_embedded_by_their_visible_text() -> None:
    from chunking.pipeline.output import embedding_texts

    columns = {
        "text": ["<p>A &amp; B</p>", "plain"],
        "metadata": [json.dumps({"visible_text": "A & B"}), json.dumps({"boundary": "end"})],
    }
    assert embedding_texts(columns) == ["A & B", "plain"]


def test_table_rows_are_embedded_after_their_header_as_chunks_are() -> None:
    from chunking import chunk
    from chunking.pipeline.output import embedding_texts

    header = "| name | value |\n|---|---|\n"
    table = header + "".join(f"| row {i} | {i * 7} |\n" for i in range(60))
    chunks = [
        c for c in chunk(table, "markdown", size=60, unit="tokens") if c.metadata.get("context")
    ]
    assert chunks, "the table should be cut into groups that carry its header"
    columns = {
        "text": [c.text for c in chunks],
        "metadata": [json.dumps(dict(c.metadata)) for c in chunks],
    }
    assert embedding_texts(columns) == [c.embedding_text for c in chunks]
    assert all(t.startswith("| name | value |") for t in embedding_texts(columns))
