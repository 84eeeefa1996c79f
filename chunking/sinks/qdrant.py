"""Qdrant (``qdrant-client``) in local mode: a folder (``meta.json``, one SQLite file
per collection), no server.

One collection per configuration, cosine distance; a point's id is the UUID that
stands for the record id (Qdrant takes UUIDs or numbers), and its payload holds the id,
the text and the fields, ``metadata`` as an object. How it was written is the
collection's metadata. Local mode locks its folder while a client is open: another
process holding it is reported, not waited for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .base import Batch, Hit, Sink, SinkError, Target, Written, record_uuid

META = "meta.json"


class QdrantSink(Sink):
    kind = "qdrant"
    title = "Qdrant"
    modules = ("qdrant_client",)

    def __init__(self, target: Target, collection: str) -> None:
        super().__init__(target, collection)
        from qdrant_client import QdrantClient

        try:
            self._client = QdrantClient(path=str(target.path))
        except RuntimeError as exc:
            if "already accessed" not in str(exc):
                raise
            raise SinkError(
                f"{target} is open in another process (Qdrant's local mode allows one); "
                "close it there and try again"
            ) from None

    @classmethod
    def looks_like(cls, folder: Path) -> bool:
        try:
            meta = json.loads((folder / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(meta, dict) and isinstance(meta.get("collections"), dict)

    def collections(self) -> list[str]:
        return [c.name for c in self._client.get_collections().collections]

    def exists(self) -> bool:
        return bool(self._client.collection_exists(self.collection))

    def written(self) -> Written | None:
        if not self.exists():
            return None
        return Written.from_metadata(self._client.get_collection(self.collection).config.metadata)

    def create(self, written: Written) -> None:
        from qdrant_client import models

        self._client.create_collection(
            self.collection,
            vectors_config=models.VectorParams(
                size=written.dimension, distance=models.Distance.COSINE
            ),
            metadata=dict(written.metadata()),
        )

    def upsert(self, batch: Batch, label: str) -> None:
        from qdrant_client import models

        points = []
        for record, vector, text, fields in zip(
            batch.ids(), batch.vectors, batch.columns["text"], batch.fields(label), strict=True
        ):
            payload: dict[str, Any] = {"id": record, "text": text, **fields}
            payload["metadata"] = json.loads(fields["metadata"])
            points.append(
                models.PointStruct(id=record_uuid(record), vector=vector.tolist(), payload=payload)
            )
        self._client.upsert(self.collection, points=points)

    def count(self) -> int:
        return int(self._client.count(self.collection, exact=True).count)

    def search(self, vector: np.ndarray, k: int) -> list[Hit]:
        found = self._client.query_points(
            self.collection,
            query=np.asarray(vector, np.float32).tolist(),
            limit=k,
            with_payload=True,
        )
        hits = []
        for point in found.points:
            payload = point.payload or {}
            hits.append(Hit.from_fields(payload["id"], point.score, payload["text"], payload))
        return hits

    def close(self) -> None:
        self._client.close()
