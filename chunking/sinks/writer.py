"""Writing chunks into a collection, and searching it back.

::

    count = write_records("lancedb:vectors/", records, vectors, config=config,
                          model="minilm-static", progress=report)
    found = search("lancedb:vectors/", "How is a chunk's size measured?", k=5)

A :class:`SinkWriter` checks everything before it writes anything: that the folder is
new, empty or that kind of database, that no other process is writing it, and that an
existing collection was written with the same model, dimension and configuration. A
refusal leaves the folder as it was (a folder it had just created is removed).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import Progress
from .base import (
    Batch,
    Hit,
    Lock,
    Sink,
    SinkError,
    Target,
    Written,
    check_collection_name,
    collection_name,
)
from .journal import Journal
from .kinds import check_folder, connect

if TYPE_CHECKING:
    from ..config import Config


def target_of(target: str | Target) -> Target:
    return target if isinstance(target, Target) else Target.parse(target)


class SinkWriter:
    """One collection opened to write: checked, locked, created on the first write."""

    def __init__(self, target: str | Target, collection: str, wanted: Written) -> None:
        self.target = target_of(target)
        self.collection = check_collection_name(collection)
        check_folder(self.target, must_exist=False)
        self._created = not self.target.path.exists()
        self._wrote = False
        self._lock: Lock | None = None
        self._sink: Sink | None = None
        try:
            self.target.path.mkdir(parents=True, exist_ok=True)
            self._lock = Lock(self.target.path, self.target)
            self._sink = connect(self.target, self.collection)
            self.written = self._matched(self._sink, wanted)
            self._exists = self._sink.exists()
        except BaseException:
            self.abandon()
            raise

    def _matched(self, sink: Sink, wanted: Written) -> Written:
        """The collection's own record (its uid kept) when it matches ``wanted``."""
        where = f"collection {self.collection} in {self.target}"
        recorded = sink.written()
        if recorded is None:
            if sink.exists():
                raise SinkError(
                    f"{where} was not written by chunk-explorer (it records no model); "
                    "use another --collection"
                )
            return wanted
        refusal = recorded.refusal(wanted)
        if refusal is not None:
            raise SinkError(f"{where} {refusal}; use another --collection")
        return recorded

    @property
    def key(self) -> str:
        """This collection, as the run's ledger names it (a re-created one differs)."""
        return f"{self.target.key}|{self.collection}|{self.written.uid}"

    @property
    def sink(self) -> Sink:
        assert self._sink is not None, "the writer is closed"
        return self._sink

    def write(self, batch: Batch, progress: Progress | None = None) -> None:
        """Upsert ``batch`` in slices; ``progress(done, total, what)`` after each."""
        if len(batch) and batch.vectors.shape[1] != self.written.dimension:
            raise SinkError(
                f"{self.target}: vectors of {batch.vectors.shape[1]} dimensions, but the "
                f"collection {self.collection} holds {self.written.dimension}"
            )
        if not self._exists:
            self.sink.create(self.written)
            self._exists = True
        done = 0
        for part in batch.slices(self.sink.batch_size):
            self.sink.upsert(part, self.written.label)
            self._wrote = True
            done += len(part)
            if progress is not None:
                progress(done, len(batch), f"{self.target} · {self.collection}")

    @property
    def wrote(self) -> bool:
        """Whether any record has been sent to the database."""
        return self._wrote

    def count(self) -> int:
        return self.sink.count() if self._exists else 0

    def describe(self) -> str:
        """``lancedb:vectors collection recursive-400-tokens holds 1,204 records``."""
        return f"{self.target} collection {self.collection} holds {self.count():,} records"

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def abandon(self) -> None:
        """Close; remove the folder when this writer created it and wrote nothing."""
        self.close()
        if self._created and not self._wrote:
            shutil.rmtree(self.target.path, ignore_errors=True)


def write_records(
    target: str | Target,
    records: Sequence[Mapping[str, Any]],
    vectors: Any,
    *,
    config: Config,
    model: str,
    collection: str | None = None,
    progress: Progress | None = None,
) -> int:
    """Write chunk records and their vectors into ``target`` (``KIND:PATH``); return how
    many records the collection holds afterwards.

    ``records`` are :func:`chunking.output.export.chunk_records` rows with ``doc_id``
    and ``path`` added (``metadata`` an object or its JSON), ``vectors`` one row each,
    made by ``model`` (a name :func:`~chunking.embedding.models.get_embedder` loads).
    The collection defaults to the configuration's label; ``progress(done, total,
    what)`` hears each slice written. While the write runs, a marker in the folder says
    so (:mod:`.journal`): one left behind by a process that ended mid-write tells that
    the collection is incomplete, until a write of it completes. Raises
    :class:`SinkError` (a ``ValueError``) for a path that is not that database, a
    collection written another way, or a database another process is writing; nothing
    is written then.
    """
    from ..embedding.models import canonical_model_name

    batch = Batch.from_records(records, vectors)
    wanted = Written(
        model=canonical_model_name(model),
        dimension=int(batch.vectors.shape[1]),
        configuration=config.to_dict(),
        label=config.label(),
    )
    writer = SinkWriter(target, collection or collection_name(config.label()), wanted)
    journal: Journal | None = None
    try:
        journal = Journal.begin(writer.target.path, writer.collection, len(batch))
        writer.write(batch, journal.reporting(progress))
        count = writer.count()
        journal.finish()
        return count
    except BaseException:
        wrote = writer.wrote
        writer.abandon()
        if journal is not None:
            journal.stop(wrote)
        raise
    finally:
        writer.close()


# ------------------------------------------------------------------------ search


@dataclass(frozen=True)
class Found:
    """A search's answer: the nearest chunks, and the collection and model asked."""

    collection: str
    model: str
    hits: list[Hit]


def search(
    target: str | Target,
    question: str,
    *,
    k: int = 5,
    collection: str | None = None,
    model: str | None = None,
) -> Found:
    """The ``k`` chunks of a collection nearest to ``question``, embedded with the model
    the collection was written with; ``model``, when given, must be that one.

    ``collection`` may be left out when the database holds one.
    """
    from ..embedding.models import canonical_model_name, get_embedder

    target = target_of(target)
    if not question.strip():
        raise SinkError("the question is empty")
    if k < 1:
        raise SinkError(f"-k must be at least 1; got {k}")
    check_folder(target, must_exist=True)
    sink = connect(target, collection or "")
    try:
        sink.collection = _collection(sink, target, collection)
        written = sink.written()
        where = f"collection {sink.collection} in {target}"
        if written is None:
            raise SinkError(f"{where} was not written by chunk-explorer: no model to embed with")
        if model is not None and canonical_model_name(model) != written.model:
            raise SinkError(
                f"{where} was written with the model {written.model}; a question embedded "
                f"with {model} would not be comparable: leave --model out"
            )
        embedder = get_embedder(written.model)
        if embedder.dimension != written.dimension:
            raise SinkError(
                f"{where} holds {written.dimension}-dimensional vectors but {written.model} "
                f"makes {embedder.dimension} here"
            )
        vector = np.asarray(embedder.embed_queries([question])[0], dtype=np.float32)
        return Found(sink.collection, written.model, sink.search(vector, k))
    finally:
        sink.close()


def _collection(sink: Sink, target: Target, wanted: str | None) -> str:
    names = sorted(sink.collections())
    if wanted is not None:
        if wanted not in names:
            known = ", ".join(names) or "none"
            raise SinkError(f"{target} has no collection {wanted} (it has: {known})")
        return wanted
    if len(names) == 1:
        return names[0]
    if not names:
        raise SinkError(f"{target} holds no collection")
    raise SinkError(
        f"{target} holds {len(names)} collections ({', '.join(names)}); "
        "choose one with --collection"
    )
