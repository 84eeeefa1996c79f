"""``run --sink KIND:PATH`` and ``search``: the chunks and their vectors in LanceDB, Chroma
and Qdrant (local mode), read back with each database's own client.

Most runs use the static model (fast; these tests are about records, ids and refusals,
not retrieval quality); one asks a real question of the bundled all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.dataset as ds
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Config
from chunking.cli import main
from chunking.core import run as cut
from chunking.documents.corpus import doc_id
from chunking.documents.io import read_bytes
from chunking.embedding.models import get_embedder
from chunking.output.export import chunk_records
from chunking.sinks import KINDS, SinkError, collection_name, record_id, write_records
from chunking.sinks import writer as sink_writer
from chunking.sinks.base import check_collection_name
from chunking.sinks.kinds import SINKS
from tests.conftest import SAMPLE_DOCS, write

# One worker runs this module (--dist loadgroup): its module fixture writes every sink once.
pytestmark = pytest.mark.xdist_group("sinks")

PREFIX = "chunk-explorer: error:"
CONFIG = ("--strategy", "recursive", "--size", "120", "--unit", "tokens")
STATIC = ("--model", "minilm-static")
COLLECTION = collection_name(Config.create("recursive", size=120, unit="tokens").label())
CHROMA_SETTINGS = {"anonymized_telemetry": False, "allow_reset": False}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any connection attempt from this process fails the test (telemetry, downloads)."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("no network in these tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield attempts
    assert attempts == []


def allow_local_connections(monkeypatch: pytest.MonkeyPatch, attempts: list[Any]) -> None:
    """Let this process connect to itself (Unix sockets, loopback, this host's own
    addresses) and still fail the test on any other connection, as :func:`no_network`."""
    import _socket
    import ipaddress

    own = {"localhost", socket.gethostname()}
    with suppress(OSError):
        own |= set(socket.gethostbyname_ex(socket.gethostname())[2])

    def local_only(self: socket.socket, address: Any) -> None:
        host = address if isinstance(address, (str, bytes)) else address[0]
        if isinstance(address, (str, bytes)) or host in own or _loopback(host):
            return _socket.socket.connect(self, address)
        attempts.append(address)
        raise OSError("no network in these tests")

    def _loopback(host: str) -> bool:
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    monkeypatch.setattr(socket.socket, "connect", local_only)


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_args(out: Path, *sinks: str, model: tuple[str, ...] = STATIC) -> list[str]:
    args = ["run", str(SAMPLE_DOCS), *CONFIG, "--out", str(out), "--embed", *model, "-q"]
    for sink in sinks:
        args += ["--sink", sink]
    return args


def sink(kind: str, path: Path) -> str:
    return f"{kind}:{path}"


# -------------------------------------------------------- the database's own clients


@dataclass(frozen=True)
class Stored:
    vector: np.ndarray
    text: str
    fields: dict[str, Any]


@contextmanager
def chroma_collection(path: Path, collection: str) -> Iterator[Any]:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(path), settings=Settings(**CHROMA_SETTINGS))
    try:
        yield client.get_collection(collection, embedding_function=None)
    finally:
        client.close()


@contextmanager
def qdrant_client(path: Path) -> Iterator[Any]:
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(path))
    try:
        yield client
    finally:
        client.close()


def stored(kind: str, path: Path, collection: str = COLLECTION) -> dict[str, Stored]:
    """Every record of the collection, read with the database's own client, by id."""
    if kind == "lancedb":
        import lancedb

        rows = lancedb.connect(str(path)).open_table(collection).to_arrow().to_pylist()
        return {r["id"]: Stored(np.asarray(r["vector"]), r["text"], r) for r in rows}
    if kind == "chroma":
        with chroma_collection(path, collection) as found:
            got = found.get(include=["embeddings", "documents", "metadatas"])
        parts = zip(got["ids"], got["embeddings"], got["documents"], got["metadatas"], strict=True)
        return {i: Stored(np.asarray(v), t, dict(m)) for i, v, t, m in parts}
    with qdrant_client(path) as client:
        points, _ = client.scroll(collection, limit=100_000, with_vectors=True, with_payload=True)
    return {
        p.payload["id"]: Stored(np.asarray(p.vector), p.payload["text"], p.payload) for p in points
    }


def nearest(kind: str, path: Path, vectors: dict[str, np.ndarray]) -> dict[str, str]:
    """The id of the record nearest to each vector, asked with the database's own client."""
    if kind == "lancedb":
        import lancedb

        table = lancedb.connect(str(path)).open_table(COLLECTION)
        return {
            i: table.search(v).distance_type("cosine").limit(1).to_list()[0]["id"]
            for i, v in vectors.items()
        }
    if kind == "chroma":
        with chroma_collection(path, COLLECTION) as found:
            return {
                i: found.query(query_embeddings=[v], n_results=1)["ids"][0][0]
                for i, v in vectors.items()
            }
    with qdrant_client(path) as client:
        return {
            i: client.query_points(COLLECTION, query=v.tolist(), limit=1).points[0].payload["id"]
            for i, v in vectors.items()
        }


def metadata(kind: str, path: Path, collection: str = COLLECTION) -> dict[str, Any]:
    """The collection's own metadata, as the database keeps it."""
    if kind == "lancedb":
        import lancedb

        schema = lancedb.connect(str(path)).open_table(collection).schema
        return json.loads(schema.metadata[b"chunk_explorer"])
    if kind == "chroma":
        with chroma_collection(path, collection) as found:
            return dict(found.metadata)
    with qdrant_client(path) as client:
        return dict(client.get_collection(collection).config.metadata)


def parquet(out: Path) -> dict[str, dict[str, Any]]:
    """The run's own rows, by record id."""
    rows = ds.dataset(out / "parts", format="parquet").to_table().to_pylist()
    return {record_id(r["doc_id"], r["index"]): r for r in rows}


def sample_texts() -> dict[str, str]:
    return {
        f"sample_docs/{p.name}": read_bytes(p.read_bytes(), p.name).text
        for p in SAMPLE_DOCS.iterdir()
        if p.is_file()
    }


# ---------------------------------------------------------------------- fixtures


@dataclass(frozen=True)
class Written:
    kind: str
    out: Path
    db: Path
    rows: dict[str, dict[str, Any]]


def write_samples(capsys: pytest.CaptureFixture[str], kind: str, folder: Path) -> Written:
    out, db = folder / "out", folder / f"{kind}-db"
    code, printed, err = cli(capsys, *run_args(out, sink(kind, db)))
    assert (code, err) == (0, "")
    rows = parquet(out)
    assert f"{sink(kind, db)} collection {COLLECTION} holds {len(rows):,} records" in printed
    return Written(kind, out, db, rows)


@pytest.fixture(scope="module")
def written_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Written]:
    """The samples written once per kind (runs in-process, outside a test's capsys)."""
    found = {}
    for kind in KINDS:
        folder = tmp_path_factory.mktemp(kind)
        out, db = folder / "out", folder / f"{kind}-db"
        assert main(run_args(out, sink(kind, db))) == 0
        found[kind] = Written(kind, out, db, parquet(out))
    return found


@pytest.fixture(params=KINDS)
def written(request: pytest.FixtureRequest, written_dirs: dict[str, Written]) -> Written:
    return written_dirs[request.param]


def snapshot(folder: Path) -> Any:
    """What ``folder`` holds, to show that a refusal changed nothing: every file's bytes;
    for a Chroma database, what its own client sees (every client start adds a row to
    Chroma's own ``acquire_write`` bookkeeping table, so the file's bytes change)."""
    if not folder.exists():
        return None
    if (folder / "chroma.sqlite3").is_file():
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(path=str(folder), settings=Settings(**CHROMA_SETTINGS))
        try:
            collections = {c.name: c.metadata for c in client.list_collections()}
        finally:
            client.close()
        return {
            name: (
                meta,
                {
                    i: (r.text, r.fields, r.vector.tolist())
                    for i, r in stored("chroma", folder, name).items()
                },
            )
            for name, meta in collections.items()
        }
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ------------------------------------------------------------------ written, read back


def test_the_samples_read_back_with_the_databases_own_client(written: Written) -> None:
    records = stored(written.kind, written.db)
    assert len(written.rows) > 50  # several chunks per sample
    assert sorted(records) == sorted(written.rows)  # one record per chunk of the run
    texts = sample_texts()
    for record, row in written.rows.items():
        found = records[record]
        fields = found.fields
        assert found.text == row["text"] == texts[fields["path"]][fields["start"] : fields["end"]]
        assert (fields["path"], fields["doc_id"]) == (row["path"], row["doc_id"])
        assert (fields["start"], fields["end"], fields["size"]) == (
            row["start"],
            row["end"],
            row["size"],
        )
        assert fields["configuration"] == "recursive · 120 tokens"
        own = fields["metadata"]
        assert (json.loads(own) if isinstance(own, str) else own) == json.loads(row["metadata"])
        assert np.allclose(found.vector, row["embedding"], atol=1e-6)
    assert {r["doc_id"] for r in written.rows.values()} == {
        doc_id(p.read_bytes()) for p in SAMPLE_DOCS.iterdir() if p.is_file()
    }


def test_each_chunks_own_vector_finds_that_chunk_first(written: Written) -> None:
    records = stored(written.kind, written.db)
    vectors = {i: r.vector.astype(np.float32) for i, r in records.items()}
    twins: dict[bytes, set[str]] = {}
    for i, v in vectors.items():
        twins.setdefault(np.round(v, 5).tobytes(), set()).add(i)
    first = nearest(written.kind, written.db, vectors)
    for record, top in first.items():
        # a chunk whose text repeats elsewhere has a twin with the very same vector
        assert top in twins[np.round(vectors[record], 5).tobytes()]
    assert sum(top == record for record, top in first.items()) >= 0.95 * len(first)


def test_the_collection_records_how_it_was_written(written: Written) -> None:
    recorded = metadata(written.kind, written.db)
    assert recorded["embedding_model"] == "minilm-static"
    assert recorded["dimension"] == get_embedder("minilm-static").dimension
    assert json.loads(recorded["configuration"]) == json.loads(
        json.dumps(Config.create("recursive", size=120, unit="tokens").to_dict())
    )
    manifest = json.loads((written.out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["sinks"] == [
        f"{sink(written.kind, written.db)} collection {COLLECTION} holds "
        f"{len(written.rows):,} records"
    ]


# ---------------------------------------------------------------- search it back


def test_search_finds_a_chunk_from_its_own_text(
    written: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    row = max(written.rows.values(), key=lambda r: len(r["text"]))
    code, printed, err = cli(
        capsys, "search", sink(written.kind, written.db), row["text"], "-k", 3, "--format", "json"
    )
    assert (code, err) == (0, "")
    hits = json.loads(printed)
    assert len(hits) == 3
    assert (hits[0]["path"], hits[0]["start"], hits[0]["end"]) == (
        row["path"],
        row["start"],
        row["end"],
    )
    assert hits[0]["score"] == pytest.approx(1.0, abs=1e-4)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    texts = sample_texts()
    assert all(texts[h["path"]][h["start"] : h["end"]] == h["text"] for h in hits)


def test_search_prints_path_and_offsets(
    written: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed, err = cli(
        capsys, "search", sink(written.kind, written.db), "How is the dough folded?", "-k", 2
    )
    assert (code, err) == (0, "")
    lines = printed.splitlines()
    assert COLLECTION in lines[0] and "minilm-static" in lines[0]
    assert lines[1].startswith("1. ") and lines[3].startswith("2. ")
    assert len(lines) == 5
    for line in (lines[1], lines[3]):
        path, span = line.split()[2:4]
        start, end = (int(x) for x in span.strip("[]").split(":"))
        assert path in sample_texts() and 0 <= start < end


def test_search_refuses_another_model(written: Written, capsys: pytest.CaptureFixture[str]) -> None:
    code, printed, err = cli(
        capsys, "search", sink(written.kind, written.db), "a question", "--model", "hash"
    )
    assert code == 2 and printed == ""
    assert err.startswith(PREFIX) and err.count("\n") == 1
    assert "written with the model minilm-static" in err and "hash" in err


@pytest.mark.parametrize("kind", KINDS)
def test_a_real_question_with_the_bundled_model(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db"
    assert cli(capsys, *run_args(tmp_path / "out", sink(kind, db), model=()))[0] == 0
    question = "How can a baker tell that the bulk fermentation of a sourdough is finished?"
    code, printed, err = cli(
        capsys, "search", sink(kind, db), question, "-k", 3, "--format", "json"
    )
    assert (code, err) == (0, "")
    top = json.loads(printed)[0]
    assert top["path"] == "sample_docs/long_essay.txt"
    assert "bulk fermentation is finished" in top["text"]
    assert metadata(kind, db)["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"


# ------------------------------------------------------------- re-runs, interruptions


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_command_again_adds_no_duplicates(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write_samples(capsys, kind, tmp_path)
    before = stored(kind, first.db)
    code, printed, err = cli(capsys, *run_args(first.out, sink(kind, first.db)))
    assert (code, err) == (0, "")
    assert "0 documents chunked" in printed
    after = stored(kind, first.db)
    assert sorted(after) == sorted(before) == sorted(first.rows)
    # another output folder, same database: the same chunks, upserted by their ids
    code, _, err = cli(capsys, *run_args(tmp_path / "out2", sink(kind, first.db)))
    assert (code, err) == (0, "")
    assert sorted(stored(kind, first.db)) == sorted(first.rows)


@pytest.mark.parametrize("kind", KINDS)
def test_a_sink_added_on_a_second_run_gets_every_chunk(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, db = tmp_path / "out", tmp_path / "db"
    assert cli(capsys, *run_args(out))[0] == 0
    code, printed, err = cli(capsys, *run_args(out, sink(kind, db)))
    assert (code, err) == (0, "")
    assert "0 documents chunked" in printed
    assert sorted(stored(kind, db)) == sorted(parquet(out))


Interrupt = Callable[..., None]


def interrupting(at_call: int, *, halfway: bool) -> Callable[[Interrupt], Interrupt]:
    """A ``SinkWriter.write`` that stops the run on its ``at_call``-th call: before
    writing anything, or after writing half of the batch."""

    def wrap(original: Interrupt) -> Interrupt:
        calls = [0]

        def write(self: Any, batch: Any, progress: Any = None) -> None:
            calls[0] += 1
            if calls[0] == at_call:
                if halfway:
                    half = next(batch.slices(max(1, len(batch) // 2)))
                    original(self, half, progress)
                raise KeyboardInterrupt
            original(self, batch, progress)

        return write

    return wrap


@pytest.mark.parametrize("halfway", [False, True], ids=["before-upsert", "mid-upsert"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_interrupted_run_run_again_leaves_one_record_per_chunk(
    kind: str,
    halfway: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, db = tmp_path / "out", tmp_path / "db"
    args = [*run_args(out, sink(kind, db)), "--part-rows", "40"]
    original = sink_writer.SinkWriter.write
    monkeypatch.setattr(sink_writer.SinkWriter, "write", interrupting(3, halfway=halfway)(original))
    code, _, err = cli(capsys, *args)
    assert code == 130 and "interrupted" in err
    assert 0 < len(stored(kind, db)) < len(parquet(out))  # parts 1-2 written, not 3
    monkeypatch.setattr(sink_writer.SinkWriter, "write", original)
    code, _, err = cli(capsys, *args)
    assert (code, err) == (0, "")
    rows = parquet(out)
    assert len(rows) == len(ds.dataset(out / "parts", format="parquet").to_table())
    assert sorted(stored(kind, db)) == sorted(rows)


# ------------------------------------------------------------------------ bad input


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *watched: Path) -> str:
    """Run ``args``, expect a one-line refusal that left the watched folders as they were."""
    before = [snapshot(p) for p in watched]
    code, printed, err = cli(capsys, *args)
    assert code == 2 and printed == ""
    assert err.startswith(PREFIX) and err.count("\n") == 1, err
    assert [snapshot(p) for p in watched] == before  # nothing written, not even half
    return err


@pytest.mark.parametrize("kind", KINDS)
def test_a_folder_that_is_not_that_database_is_refused(
    kind: str, written_dirs: dict[str, Written], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    notes = tmp_path / "notes"
    write(notes / "a.txt", "not a database")
    err = refused(capsys, run_args(out, sink(kind, notes)), notes)
    assert "is not a" in err and "new or empty folder" in err
    other = written_dirs[KINDS[(KINDS.index(kind) + 1) % len(KINDS)]]
    err = refused(capsys, run_args(out, sink(kind, other.db)), other.db)
    assert f"database: {other.kind}:{other.db}" in err
    a_file = write(tmp_path / "file.db", "x")
    err = refused(capsys, run_args(out, sink(kind, a_file)))
    assert "is a file" in err
    assert not out.exists()
    err = refused(capsys, ["search", sink(kind, notes), "a question"], notes)
    assert "is not a" in err


def test_a_new_database_is_not_created_when_another_sink_is_refused(
    written_dirs: dict[str, Written], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new, out = tmp_path / "new-db", tmp_path / "out"
    chroma = written_dirs["chroma"].db
    refused(capsys, run_args(out, sink("lancedb", new), sink("qdrant", chroma)), chroma)
    assert not new.exists() and not out.exists()


def test_an_output_folder_refusal_leaves_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, db = tmp_path / "out", tmp_path / "db"
    write(out / "unrelated.txt", "an output folder must be new, empty or a run's")
    err = refused(capsys, run_args(out, sink("chroma", db)), out)
    assert "has no manifest.json" in err
    assert not db.exists()


def test_another_model_is_refused(
    written: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = run_args(tmp_path / "out", sink(written.kind, written.db), model=("--model", "hash"))
    err = refused(capsys, args, written.db)
    assert "written with the model minilm-static, not hash" in err
    assert not (tmp_path / "out").exists()


def test_another_configuration_in_the_same_collection_is_refused(
    written: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = run_args(tmp_path / "out", sink(written.kind, written.db))
    args[args.index("120")] = "300"
    err = refused(capsys, [*args, "--collection", COLLECTION], written.db)
    assert "another configuration" in err and "--collection" in err


@pytest.mark.parametrize("kind", KINDS)
def test_another_dimension_is_refused(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db"
    config = Config.create("recursive", size=120, unit="tokens")
    text = (SAMPLE_DOCS / "support_chat.txt").read_text(encoding="utf-8")
    records = [
        {**r, "doc_id": doc_id(text.encode()), "path": "support_chat.txt"}
        for r in chunk_records(cut(text, config))
    ]
    short = np.random.default_rng(0).normal(size=(len(records), 32))  # the hash model: 64
    assert write_records(sink(kind, db), records, short, config=config, model="hash") == len(
        records
    )
    err = refused(capsys, run_args(tmp_path / "out", sink(kind, db), model=("--model", "hash")), db)
    assert "holds 32-dimensional vectors, not 64" in err


HOLDER = textwrap.dedent(
    """
    import sys
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "qdrant":  # Qdrant's own lock: its local mode allows one client
        from qdrant_client import QdrantClient
        held = QdrantClient(path=path)
    else:  # another chunk-explorer writing the database
        from chunking.sinks import SinkWriter, Written
        held = SinkWriter(kind + ":" + path, "held", Written("hash", 64, {}))
    print("holding", flush=True)
    sys.stdin.read()
    """
)


def test_a_database_held_by_another_process_is_refused(
    written: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, written.kind, str(written.db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        args = run_args(tmp_path / "out", sink(written.kind, written.db))
        err = refused(capsys, args, written.db)
        assert "another process" in err
        assert not (tmp_path / "out").exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    assert sorted(stored(written.kind, written.db)) == sorted(written.rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sink", "lancedb:{x}"], "add --embed"),
        (["--embed", "--sink", "milvus:{x}"], "KIND one of lancedb, chroma, qdrant"),
        (["--embed", "--sink", "chroma:{x}", "--collection", "a b"], "collection name 'a b'"),
        (["--embed", "--sink", "chroma:{x}", "--sink", "chroma:{x}/."], "given twice"),
    ],
)
def test_bad_sink_flags(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["run", str(SAMPLE_DOCS), *CONFIG, "--out", str(tmp_path / "out"), *STATIC]
    code, _, err = cli(capsys, *base, *(a.format(x=tmp_path / "x") for a in args))
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "x").exists()


def test_search_bad_input(
    written: Written, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = sink(written.kind, written.db)
    for args, message in [
        ([sink(written.kind, tmp_path / "none"), "q"], "no "),
        ([target, "   "], "the question is empty"),
        ([target, "q", "-k", "0"], "-k must be at least 1"),
        ([target, "q", "--collection", "missing"], f"(it has: {COLLECTION})"),
    ]:
        code, printed, err = cli(capsys, "search", *args)
        assert (code, printed) == (2, "") and message in err and err.count("\n") == 1


# -------------------------------------------------------------- the app's function


@pytest.mark.parametrize("kind", KINDS)
def test_write_records_reports_progress_and_the_count(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SINKS[kind], "batch_size", 100)
    config = Config.create("recursive", size=60, unit="words")
    records = []
    for path in sorted(SAMPLE_DOCS.glob("*.txt")):
        text = read_bytes(path.read_bytes(), path.name).text
        identity = doc_id(path.read_bytes())
        records += [
            {**r, "doc_id": identity, "path": path.name} for r in chunk_records(cut(text, config))
        ]
    assert len(records) > 200  # several slices
    vectors = get_embedder("hash").embed([r["text"] for r in records])
    heard: list[tuple[int, int, str]] = []
    target = sink(kind, tmp_path / "db")
    count = write_records(
        target,
        records,
        vectors,
        config=config,
        model="hash",
        progress=lambda done, total, what: heard.append((done, total, what)),
    )
    assert count == len({(r["doc_id"], r["index"]) for r in records}) == len(records)
    assert [h[0] for h in heard] == [min(100 * n, count) for n in range(1, len(heard) + 1)]
    assert heard[-1][0] == count
    assert {h[1] for h in heard} == {len(records)}
    assert all(target in h[2] for h in heard)
    with pytest.raises(SinkError, match="no chunks to write"):
        write_records(target, [], vectors[:0], config=config, model="hash")
    again = write_records(target, records, vectors, config=config, model="hash")
    assert again == count == len(stored(kind, tmp_path / "db", collection_name(config.label())))


# ------------------------------------------------------------------ names and ids


def test_the_collection_is_named_after_the_configuration() -> None:
    assert collection_name("recursive · 400 tokens · overlap 40") == (
        "recursive-400-tokens-overlap-40"
    )
    assert collection_name("semantic · threshold 0.95") == "semantic-threshold-0.95"


@given(st.text(max_size=80))
def test_any_label_makes_a_name_every_kind_accepts(label: str) -> None:
    name = collection_name(label)
    assert check_collection_name(name) == name


def test_a_bad_collection_name_is_refused() -> None:
    for name in ("ab", "-start", "end-", "has space", "x" * 513):
        with pytest.raises(SinkError):
            check_collection_name(name)


# ------------------------------------------------------------------------ Ray


@pytest.mark.slow
def test_the_ray_engine_writes_the_same_records(
    written_dirs: dict[str, Written],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_network: list[Any],
) -> None:
    import ray  # the corpus extra, installed with dev

    allow_local_connections(monkeypatch, no_network)  # Ray's driver talks to its processes
    local = written_dirs["lancedb"]
    db = tmp_path / "db"
    args = [*run_args(tmp_path / "out", sink("lancedb", db)), "--engine", "ray", "--workers", "1"]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert main(args) == 0
        first = stored("lancedb", db)
        assert main(args) == 0
    finally:
        ray.shutdown()
    again = stored("lancedb", db)
    assert sorted(again) == sorted(first) == sorted(local.rows)
    assert all(again[i].text == local.rows[i]["text"] for i in again)
    shutil.rmtree(db)
