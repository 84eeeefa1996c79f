"""Chroma (``chromadb``), embedded: a persistent client on a folder (``chroma.sqlite3``
and one folder per vector index).

One collection per configuration, cosine space; each record's document is the chunk's
text and its metadata the flat fields (``metadata`` as JSON); how it was written is the
collection's metadata. Chroma is never given an embedding function: every vector comes
from the run, so its default model (an ONNX file it would download) is never loaded,
and telemetry is off.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from .base import Batch, Hit, Sink, Target, Written

DATABASE = "chroma.sqlite3"


class ChromaSink(Sink):
    kind = "chroma"
    title = "Chroma"
    modules = ("chromadb",)
    #: Below Chroma's largest batch (5,461 records here).
    batch_size = 4096

    def __init__(self, target: Target, collection: str) -> None:
        super().__init__(target, collection)
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        # Any: the ClientAPI type lacks close(), which the client it returns has
        self._client: Any = chromadb.PersistentClient(path=str(target.path), settings=settings)
        self._collection: Any = None

    @classmethod
    def looks_like(cls, folder: Path) -> bool:
        """A ``chroma.sqlite3`` that SQLite opens and that has Chroma's tables (read only,
        so that Chroma never migrates some other SQLite file)."""
        path = folder / DATABASE
        if not path.is_file():
            return False
        try:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error:
            return False
        try:
            names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.Error:  # not a database
            return False
        finally:
            db.close()
        return {"collections", "embeddings"} <= names

    def collections(self) -> list[str]:
        return [c.name for c in self._client.list_collections()]

    def _opened(self) -> Any:
        if self._collection is None:
            self._collection = self._client.get_collection(self.collection, embedding_function=None)
        return self._collection

    def exists(self) -> bool:
        return self.collection in self.collections()

    def written(self) -> Written | None:
        return Written.from_metadata(self._opened().metadata) if self.exists() else None

    def create(self, written: Written) -> None:
        self._collection = self._client.create_collection(
            self.collection,
            metadata=written.metadata(),
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def upsert(self, batch: Batch, label: str) -> None:
        self._opened().upsert(
            ids=batch.ids(),
            embeddings=np.ascontiguousarray(batch.vectors, np.float32),
            documents=list(batch.columns["text"]),
            metadatas=batch.fields(label),
        )

    def count(self) -> int:
        return int(self._opened().count())

    def search(self, vector: np.ndarray, k: int) -> list[Hit]:
        found = self._opened().query(
            query_embeddings=[np.asarray(vector, np.float32)],
            n_results=k,
            include=["documents", "metadatas", "distances"],
        )
        rows = zip(
            found["ids"][0],
            found["distances"][0],
            found["documents"][0],
            found["metadatas"][0],
            strict=True,
        )
        return [Hit.from_fields(i, 1.0 - float(d), t, m) for i, d, t, m in rows]

    def close(self) -> None:
        self._client.close()
