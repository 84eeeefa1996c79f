"""One document to its chunk rows: the work every engine does, in whatever process.

A :class:`Job` is what a worker needs to know (plain, picklable data: the
configuration as a dictionary, since a :class:`~chunking.config.Config` holds a
read-only mapping that cannot be pickled); :meth:`Job.chunk` turns one document's
bytes into an :class:`Outcome`: its rows as columns, or the reason it failed. A
failure never escapes as an exception, so one bad file cannot stop a corpus.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..core import run
from ..documents.corpus import doc_id
from ..documents.io import read_bytes
from ..output.export import chunk_pages, iter_records, metadata_json

if TYPE_CHECKING:
    import pyarrow as pa

#: The chunk columns of the output, in order (``embedding`` follows with ``--embed``).
COLUMNS = ("doc_id", "path", "index", "start", "end", "size", "text", "metadata")
EMBEDDING = "embedding"


def schema(embedded: bool) -> pa.Schema:
    """The Parquet schema of every part file, with or without the embedding column."""
    import pyarrow as pa

    fields = [
        pa.field("doc_id", pa.string()),
        pa.field("path", pa.string()),
        *(pa.field(name, pa.int64()) for name in ("index", "start", "end", "size")),
        pa.field("text", pa.string()),
        pa.field("metadata", pa.string()),
    ]
    if embedded:
        fields.append(pa.field(EMBEDDING, pa.list_(pa.float32())))
    return pa.schema(fields)


@dataclass(frozen=True)
class Outcome:
    """What became of one document: its rows (column name -> values) or its error."""

    path: str
    doc_id: str | None
    bytes: int
    columns: dict[str, list[Any]] | None = field(default=None, repr=False)
    error: str | None = None
    #: Seconds spent reading and chunking it (for the run's timings).
    seconds: float = 0.0
    #: Already in the output from an earlier run: not chunked again.
    skipped: bool = False

    @property
    def chunks(self) -> int:
        return len(self.columns["index"]) if self.columns else 0

    def error_record(self) -> dict[str, Any]:
        """The document's line in ``errors.jsonl``."""
        return {"path": self.path, "doc_id": self.doc_id, "reason": self.error}

    def log_line(self) -> str:
        """The outcome as one JSON line of a worker's log, its rows left out: what the
        driver of a distributed run (Ray, Spark) counts and reports (:meth:`from_log`)."""
        entry = {
            "path": self.path,
            "doc_id": self.doc_id,
            "bytes": self.bytes,
            "chunks": 0 if self.skipped else self.chunks,
            "skipped": self.skipped,
            "error": self.error,
            "seconds": self.seconds,
        }
        return json.dumps(entry, ensure_ascii=False)

    @staticmethod
    def from_log(entry: dict[str, Any]) -> tuple[Outcome, int]:
        """The outcome a :meth:`log_line` (parsed) describes, and its chunk count."""
        outcome = Outcome(
            entry["path"],
            entry["doc_id"],
            entry["bytes"],
            error=entry["error"],
            seconds=entry["seconds"],
            skipped=entry["skipped"],
        )
        return outcome, int(entry["chunks"])


@dataclass(frozen=True)
class Job:
    """How every document of a run is read and cut."""

    config: dict[str, Any]
    max_bytes: int
    encoding: str | None = None

    def chunk(self, name: str, data: bytes) -> Outcome:
        """Read and cut one document; every failure becomes the outcome's ``error``."""
        began = time.perf_counter()
        identity = doc_id(data)
        try:
            columns = self._columns(name, identity, data)
        except Exception as exc:  # a broken or hostile document must not stop the corpus
            reason = " ".join(str(exc).split()) or type(exc).__name__
            return Outcome(name, identity, len(data), error=reason)
        return Outcome(name, identity, len(data), columns, seconds=time.perf_counter() - began)

    def _columns(self, name: str, identity: str, data: bytes) -> dict[str, list[Any]]:
        document = read_bytes(data, name, max_bytes=self.max_bytes, encoding=self.encoding)
        chunks = run(document.text, _config(_frozen(self.config)))
        columns: dict[str, list[Any]] = {column: [] for column in COLUMNS}
        for row in iter_records(chunks, chunk_pages(document, chunks)):
            for column in ("index", "start", "end", "size", "text"):
                columns[column].append(row[column])
            columns["metadata"].append(metadata_json(row))
        columns["doc_id"] = [identity] * len(chunks)
        columns["path"] = [name] * len(chunks)
        return columns


def _frozen(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True)


@lru_cache(maxsize=8)
def _config(frozen: str) -> Config:
    """The configuration, validated once per process (workers rebuild it from JSON)."""
    return Config.from_json(frozen)
