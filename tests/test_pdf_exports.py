"""Boxes travel with the chunk: ``metadata["boxes"]`` in ``split`` output, ``run``
output and every vector-database sink, read back with each database's own client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from chunking import Config
from chunking.cli import main
from chunking.documents.io import read_bytes
from chunking.sinks import collection_name
from tests.test_pdf import two_columns, with_furniture

RECURSIVE = ("--strategy", "recursive", "--size", "40", "--unit", "words")


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _corpus(folder: Path) -> dict[str, bytes]:
    folder.mkdir()
    files = {"report.pdf": with_furniture(3), "columns.pdf": two_columns()}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "notes.txt").write_text("Plain text has pages of none and boxes of none.\n")
    return files


def _expected(name: str, data: bytes, start: int, end: int) -> list[list[float]]:
    return read_bytes(data, name).boxes_of(start, end)


def test_split_writes_boxes_and_reads_an_encrypted_pdf_with_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.set_encryption(owner_password="owner", user_password="pw")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(72, 100, "Locked words in a box")
    path = tmp_path / "locked.pdf"
    path.write_bytes(bytes(pdf.output()))
    code, out, err = cli(capsys, "split", path, *RECURSIVE)
    assert code == 2
    assert err.startswith("chunk-explorer: error: locked.pdf is password-protected")
    assert "--password" in err and "Traceback" not in err
    code, out, err = cli(capsys, "split", path, *RECURSIVE, "--password", "pw")
    assert code == 0, err
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["text"] == "Locked words in a box"
    assert row["metadata"]["pages"] == [1]
    (box,) = row["metadata"]["boxes"]
    assert box[0] == 1 and box[1] == pytest.approx(72, abs=0.5)


def test_split_order_and_furniture_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(with_furniture(3))
    _, out, _ = cli(capsys, "split", path, *RECURSIVE)
    assert "Annual Report" not in out
    _, kept, _ = cli(capsys, "split", path, *RECURSIVE, "--keep-furniture")
    assert kept.count("Annual Report") == 3
    columns = tmp_path / "columns.pdf"
    columns.write_bytes(two_columns())
    _, layout, _ = cli(capsys, "split", columns, "--strategy", "paragraph", "--size", "500")
    _, stream, _ = cli(
        capsys,
        "split",
        columns,
        "--strategy",
        "paragraph",
        "--size",
        "500",
        "--pdf-order",
        "stream",
    )
    read = "".join(json.loads(line)["text"] for line in layout.splitlines())
    streamed = "".join(json.loads(line)["text"] for line in stream.splitlines())
    assert "Alpha one starts the left column\nalpha two keeps going on\nalpha three" in read
    assert "Alpha one starts the left column Gamma one" in streamed
    assert "Alpha one starts the left column Gamma one" not in read


def test_run_output_carries_boxes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    code, _, err = cli(capsys, "run", tmp_path / "corpus", "--out", out, *RECURSIVE)
    assert code == 0, err
    rows = ds.dataset(out / "parts", format="parquet").to_table().to_pylist()
    seen = set()
    for row in rows:
        name = row["path"].split("/")[-1]
        metadata = json.loads(row["metadata"])
        if name in files:
            assert metadata["boxes"] == _expected(name, files[name], row["start"], row["end"])
            assert metadata["boxes"] and metadata["pages"]
            seen.add(name)
        else:
            assert "boxes" not in metadata
    assert seen == set(files)


def _stored_metadata(kind: str, db: Path) -> list[dict[str, Any]]:
    """Every record's fields as the database's own client gives them back."""
    if kind == "lancedb":
        import lancedb

        name = collection_name(Config.create("recursive", size=40, unit="words").label())
        return lancedb.connect(str(db)).open_table(name).to_arrow().to_pylist()
    if kind == "chroma":
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(
            path=str(db), settings=Settings(anonymized_telemetry=False)
        )
        try:
            (collection,) = client.list_collections()
            return [dict(m) for m in client.get_collection(collection.name).get()["metadatas"]]
        finally:
            client.close()
    from qdrant_client import QdrantClient

    qdrant = QdrantClient(path=str(db))
    try:
        (collection,) = qdrant.get_collections().collections
        points, _ = qdrant.scroll(collection.name, limit=10_000, with_payload=True)
        return [dict(p.payload or {}) for p in points]
    finally:
        qdrant.close()


@pytest.mark.parametrize("kind", ["lancedb", "chroma", "qdrant"])
def test_every_sink_stores_the_boxes(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _corpus(tmp_path / "corpus")
    db = tmp_path / "db"
    args = ["run", tmp_path / "corpus", "--out", tmp_path / "out", *RECURSIVE]
    args += ["--embed", "--model", "minilm-static", "--sink", f"{kind}:{db}", "-q"]
    code, _, err = cli(capsys, *args)
    assert code == 0, err
    records = _stored_metadata(kind, db)
    pdf_rows = [r for r in records if str(r["path"]).split("/")[-1] in files]
    assert pdf_rows
    for r in pdf_rows:
        metadata = r["metadata"] if isinstance(r["metadata"], dict) else json.loads(r["metadata"])
        name = str(r["path"]).split("/")[-1]
        assert metadata["boxes"] == _expected(name, files[name], int(r["start"]), int(r["end"]))
