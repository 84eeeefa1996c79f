"""What every vector-database sink shares: the target, the record, the collection's
fingerprint, the lock, and the :class:`Sink` interface that each kind implements.

A record is one chunk: its id, its vector, its text and flat metadata (``path``,
``doc_id``, ``index``, ``start``, ``end``, ``size``, ``configuration`` — the
configuration's label — and ``metadata``, the chunk's own metadata as JSON, or as an
object where the database stores nested values). The id is the document's content hash
and the chunk's index (``3f2a…-7``), so writing the same chunks again replaces them
(upsert) instead of adding copies; two files with the same content share their records.

A collection records how it was written (:class:`Written`: the embedding model, its
dimension and the configuration); a later write with another model, dimension or
configuration is refused, and a search embeds the question with the recorded model.

Nothing here imports a database library: each kind's module does, when it is used.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

#: The database kinds, in the order the help lists them.
KINDS = ("lancedb", "chroma", "qdrant")
#: The optional dependencies every kind needs.
INSTALL_HINT = "pip install 'chunk-explorer[sinks]'"
#: The columns of a batch of chunks (those of ``chunk-explorer run``'s Parquet rows).
FIELDS = ("doc_id", "path", "index", "start", "end", "size", "text", "metadata")
#: Records sent to a database at once.
BATCH = 256
#: Who wrote a collection, in its metadata.
WRITER = "chunk-explorer"


_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{1,510}[A-Za-z0-9])")
#: Namespace of the UUIDs that stand for record ids where a database wants UUIDs.
_ID_NAMESPACE = uuid.UUID("6f1d7a52-8f0e-4c55-9a43-2b1c0d6e5f70")


class SinkError(ValueError):
    """A sink that cannot be used: its one-line message says why and what to do."""


def record_id(doc_id: str, index: int) -> str:
    """The stable id of a chunk: its document's content hash and its index."""
    return f"{doc_id}-{index}"


def record_uuid(record: str) -> str:
    """A UUID that stands for ``record`` (for databases whose ids are UUIDs or numbers)."""
    return str(uuid.uuid5(_ID_NAMESPACE, record))


def check_collection_name(name: str) -> str:
    """``name`` when every kind accepts it as a collection or table name (Chroma's rule,
    the strictest: 3-512 letters, digits, ``.``, ``_``, ``-``, alphanumeric at both ends)."""
    if not _NAME.fullmatch(name):
        raise SinkError(
            f"collection name {name!r}: use 3-512 letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return name


def collection_name(label: str) -> str:
    """A collection name from a configuration's label:
    ``recursive · 400 tokens · overlap 40`` -> ``recursive-400-tokens-overlap-40``."""
    slug = re.sub(r"[^a-z0-9._]+", "-", label.lower()).strip("-._")
    return check_collection_name(slug if len(slug) >= 3 else f"chunks-{slug}".strip("-"))


# ------------------------------------------------------------------------ target


@dataclass(frozen=True)
class Target:
    """Where records go: a database kind and its folder (``lancedb:vectors/``)."""

    kind: str
    path: Path

    @classmethod
    def parse(cls, text: str) -> Target:
        kind, sep, path = text.partition(":")
        if not sep or kind not in KINDS or not path.strip():
            raise SinkError(
                f"sink {text!r}: write KIND:PATH with KIND one of {', '.join(KINDS)} "
                "(e.g. lancedb:vectors/)"
            )
        return cls(kind, Path(path).expanduser())

    def __str__(self) -> str:
        return f"{self.kind}:{self.path}"

    @property
    def key(self) -> str:
        """The target with its absolute path, the same from any working directory."""
        return f"{self.kind}:{self.path.resolve()}"


# ------------------------------------------------------------- what a collection holds


@dataclass(frozen=True)
class Written:
    """How a collection was written: what a later write must match, and what a search
    needs to embed its question the same way."""

    #: The embedding model's name, as :func:`chunking.embedding.models.get_embedder` loads it.
    model: str
    dimension: int
    #: The configuration (:meth:`chunking.config.Config.to_dict`).
    configuration: Mapping[str, Any]
    #: The configuration's label, stored with each record.
    label: str = ""
    #: Set when the collection is created, so that a collection deleted and created
    #: again is told apart from the one a run's ledger remembers.
    uid: str = field(default_factory=lambda: uuid.uuid4().hex, compare=False)

    def metadata(self) -> dict[str, str | int]:
        """Flat values, as every database's collection metadata accepts them."""
        return {
            "written_by": WRITER,
            "embedding_model": self.model,
            "dimension": self.dimension,
            "configuration": _canonical(self.configuration),
            "label": self.label,
            "uid": self.uid,
        }

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> Written | None:
        """What :meth:`metadata` stored, or None for a collection written by another tool."""
        if not metadata or metadata.get("written_by") != WRITER:
            return None
        try:
            return cls(
                model=str(metadata["embedding_model"]),
                dimension=int(metadata["dimension"]),
                configuration=json.loads(metadata["configuration"]),
                label=str(metadata.get("label", "")),
                uid=str(metadata["uid"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def refusal(self, wanted: Written) -> str | None:
        """Why ``wanted`` may not be written where this was, or None."""
        if wanted.model != self.model:
            return f"was written with the model {self.model}, not {wanted.model}"
        if wanted.dimension != self.dimension:
            return f"holds {self.dimension}-dimensional vectors, not {wanted.dimension}"
        if _canonical(wanted.configuration) != _canonical(self.configuration):
            return f"was written with another configuration ({self.label or 'unnamed'})"
        return None


def _canonical(configuration: Mapping[str, Any]) -> str:
    """A configuration as JSON, so that a tuple and the list read back compare equal."""
    return json.dumps(dict(configuration), sort_keys=True)


@dataclass(frozen=True)
class Batch:
    """Chunks to write: one list per field of :data:`FIELDS` and one vector per row."""

    columns: Mapping[str, Sequence[Any]]
    vectors: np.ndarray

    def __post_init__(self) -> None:
        missing = [name for name in FIELDS if name not in self.columns]
        if missing:
            raise SinkError(f"records without {', '.join(missing)}")
        rows = len(self.columns["doc_id"])
        if self.vectors.ndim != 2 or self.vectors.shape[0] != rows:
            raise SinkError(f"{rows} records but vectors of shape {self.vectors.shape}")

    def __len__(self) -> int:
        return len(self.columns["doc_id"])

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]], vectors: Any) -> Batch:
        """Records as :func:`chunking.output.export.chunk_records` makes them, with
        ``doc_id`` and ``path`` added; ``metadata`` an object or its JSON."""
        if not records:
            raise SinkError("no chunks to write")
        columns: dict[str, list[Any]] = {name: [] for name in FIELDS}
        for row in records:
            for name in FIELDS:
                value = row.get(name)
                if name == "metadata" and not isinstance(value, str):
                    value = json.dumps(value or {}, ensure_ascii=False)
                columns[name].append(value)
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(records), -1)
        return cls(columns, matrix)

    def slices(self, size: int = BATCH) -> Iterator[Batch]:
        for begin in range(0, len(self), size):
            end = begin + size
            columns = {name: list(self.columns[name][begin:end]) for name in FIELDS}
            yield Batch(columns, self.vectors[begin:end])

    def ids(self) -> list[str]:
        return [
            record_id(d, int(i))
            for d, i in zip(self.columns["doc_id"], self.columns["index"], strict=True)
        ]

    def fields(self, label: str) -> list[dict[str, Any]]:
        """Every record's flat metadata (``metadata`` as JSON), ``text`` left out."""
        c = self.columns
        return [
            {
                "path": c["path"][row],
                "doc_id": c["doc_id"][row],
                "index": int(c["index"][row]),
                "start": int(c["start"][row]),
                "end": int(c["end"][row]),
                "size": int(c["size"][row]),
                "configuration": label,
                "metadata": c["metadata"][row],
            }
            for row in range(len(self))
        ]


@dataclass(frozen=True)
class Hit:
    """One search result: the chunk, where it sits and how close it is (cosine)."""

    id: str
    score: float
    path: str
    doc_id: str
    index: int
    start: int
    end: int
    size: int
    text: str
    configuration: str
    metadata: dict[str, Any]

    @classmethod
    def from_fields(cls, record: str, score: float, text: str, fields: Mapping[str, Any]) -> Hit:
        meta = fields.get("metadata") or {}
        return cls(
            id=record,
            score=float(score),
            path=str(fields["path"]),
            doc_id=str(fields["doc_id"]),
            index=int(fields["index"]),
            start=int(fields["start"]),
            end=int(fields["end"]),
            size=int(fields["size"]),
            text=text,
            configuration=str(fields.get("configuration", "")),
            metadata=json.loads(meta) if isinstance(meta, str) else dict(meta),
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -------------------------------------------------------------------------- lock


class Lock:
    """An exclusive advisory lock on a database folder while it is written, so that two
    runs never write one database at once (a no-op where ``fcntl`` is missing)."""

    def __init__(self, folder: Path, target: Target) -> None:
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # not POSIX
            return
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SinkError(
                f"{target} is being written by another process; wait for it to finish"
            ) from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None


# ------------------------------------------------------------------------- sinks


class Sink(ABC):
    """One collection of one database, opened to write or to search.

    A kind implements the abstract methods; :func:`chunking.sinks.open_sink` checks the
    folder, takes the lock and matches the collection's :class:`Written` first.
    """

    kind: ClassVar[str]
    #: The database's name for people (``LanceDB``).
    title: ClassVar[str]
    #: The modules the kind needs (for the install hint).
    modules: ClassVar[tuple[str, ...]]
    #: Records sent to the database at once.
    batch_size: ClassVar[int] = BATCH

    def __init__(self, target: Target, collection: str) -> None:
        self.target = target
        self.collection = collection

    # what the folder is
    @classmethod
    @abstractmethod
    def looks_like(cls, folder: Path) -> bool:
        """Whether an existing, non-empty folder holds this kind of database."""

    # the collection
    @abstractmethod
    def collections(self) -> list[str]:
        """Every collection of the database, by name."""

    @abstractmethod
    def written(self) -> Written | None:
        """How the collection was written; None when it does not exist yet or another
        tool wrote it (see :meth:`exists`)."""

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def create(self, written: Written) -> None:
        """Create the collection, recording ``written``."""

    @abstractmethod
    def upsert(self, batch: Batch, label: str) -> None:
        """Write the records of ``batch``, replacing those with the same ids."""

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def search(self, vector: np.ndarray, k: int) -> list[Hit]:
        """The ``k`` records nearest to ``vector`` by cosine similarity, nearest first."""

    def close(self) -> None:  # noqa: B027  (kinds without a client to close keep it)
        """Release the client."""
