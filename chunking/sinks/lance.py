"""LanceDB (``lancedb``), embedded: a folder of ``NAME.lance`` tables.

One table per collection, with the columns ``id``, ``vector`` (fixed-size float32),
``text``, ``path``, ``doc_id``, ``index``, ``start``, ``end``, ``size``,
``configuration`` and ``metadata`` (JSON); how it was written is the schema's metadata
(key ``chunk_explorer``). Records are upserted with ``merge_insert`` on ``id``; a search
is a cosine-distance vector query (``score = 1 - distance``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .base import Batch, Hit, Sink, Target, Written

#: The schema metadata key that holds :meth:`Written.metadata`.
SCHEMA_KEY = b"chunk_explorer"
_INTEGERS = ("index", "start", "end", "size")
_STRINGS = ("path", "doc_id", "configuration", "metadata")


class LanceSink(Sink):
    kind = "lancedb"
    title = "LanceDB"
    modules = ("lancedb",)
    #: Each merge_insert makes a table version: few, large ones (6x faster to re-upsert).
    batch_size = 4096

    def __init__(self, target: Target, collection: str) -> None:
        super().__init__(target, collection)
        import lancedb

        self._db = lancedb.connect(str(target.path))
        self._table: Any = None

    @classmethod
    def looks_like(cls, folder: Path) -> bool:
        return any(p.is_dir() and p.suffix == ".lance" for p in folder.iterdir())

    def collections(self) -> list[str]:
        names: list[str] = []
        token = None
        while True:
            page = self._db.list_tables(page_token=token)
            names.extend(page.tables)
            token = page.page_token
            if not token:
                return names

    def _opened(self) -> Any:
        if self._table is None:
            self._table = self._db.open_table(self.collection)
        return self._table

    def exists(self) -> bool:
        return self.collection in self.collections()

    def written(self) -> Written | None:
        if not self.exists():
            return None
        metadata = self._opened().schema.metadata or {}
        try:
            return Written.from_metadata(json.loads(metadata.get(SCHEMA_KEY, b"{}")))
        except ValueError:
            return None

    def create(self, written: Written) -> None:
        import pyarrow as pa

        fields = [
            pa.field("id", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), written.dimension)),
            pa.field("text", pa.string()),
            *(pa.field(name, pa.string()) for name in _STRINGS[:2]),
            *(pa.field(name, pa.int64()) for name in _INTEGERS),
            *(pa.field(name, pa.string()) for name in _STRINGS[2:]),
        ]
        metadata = {SCHEMA_KEY: json.dumps(written.metadata()).encode()}
        self._table = self._db.create_table(self.collection, schema=pa.schema(fields, metadata))

    def upsert(self, batch: Batch, label: str) -> None:
        import pyarrow as pa

        table = self._opened()
        rows = batch.fields(label)
        columns: dict[str, Any] = {
            "id": batch.ids(),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(np.ascontiguousarray(batch.vectors, np.float32).reshape(-1)),
                batch.vectors.shape[1],
            ),
            "text": list(batch.columns["text"]),
        }
        for name in (*_STRINGS, *_INTEGERS):
            columns[name] = [row[name] for row in rows]
        data = pa.table(columns).select(table.schema.names).cast(table.schema)
        (
            table.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(data)
        )

    def count(self) -> int:
        return int(self._opened().count_rows())

    def search(self, vector: np.ndarray, k: int) -> list[Hit]:
        query = self._opened().search(np.asarray(vector, np.float32), vector_column_name="vector")
        found = query.distance_type("cosine").limit(k).to_list()
        return [
            Hit.from_fields(row["id"], 1.0 - float(row["_distance"]), row["text"], row)
            for row in found
        ]
