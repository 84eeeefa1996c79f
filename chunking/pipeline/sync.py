"""The sinks of a run (``--sink KIND:PATH``), kept in step with its part files.

A committed part file is the run's unit of work (:mod:`.output`), so it is the sinks'
too: once a part is in ``parts/``, its records are upserted into every sink, and a line
of ``OUT/sinks.jsonl`` (the ledger) says so. A run starts by writing the committed
parts that a sink's ledger lacks — those of an earlier run interrupted between the
commit and the upsert, or all of them when a sink is added to an existing output or its
collection was deleted since (a re-created collection has a new uid) — so a re-run
always leaves every chunk in every sink. Records have stable ids (document hash and
index) and are upserted: a part written twice leaves one record per chunk.

The local engine hands each part over as it is committed; the Ray engine's parts are
written from the driver once the dataset is committed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..sinks import Batch, SinkWriter, Written, collection_name
from .documents import COLUMNS, EMBEDDING
from .output import SINK_LEDGER, RunOutput

if TYPE_CHECKING:
    import pyarrow as pa

    from .settings import RunSettings

#: Rows read from a part file at once.
READ_ROWS = 4096


def open_writers(
    settings: RunSettings, configuration: dict[str, Any], embedder: Any
) -> list[SinkWriter]:
    """A writer per ``settings.sinks``, each checked and locked; none when one fails."""
    if not settings.sinks:
        return []
    from ..embedding.models import canonical_model_name

    config = Config.from_dict(configuration)
    wanted = Written(
        model=canonical_model_name(settings.embed_model),
        dimension=int(embedder.dimension),
        configuration=configuration,
        label=config.label(),
    )
    collection = settings.collection or collection_name(config.label())
    writers: list[SinkWriter] = []
    try:
        for target in settings.sinks:
            writers.append(SinkWriter(target, collection, wanted))
    except BaseException:
        for writer in writers:
            writer.abandon()
        raise
    return writers


def as_batch(table: pa.Table | pa.RecordBatch) -> Batch:
    """A part's rows as a sink batch (the ``embedding`` column as vectors)."""
    columns = {name: table.column(name).to_pylist() for name in COLUMNS}
    embedding = table.column(EMBEDDING)
    if hasattr(embedding, "combine_chunks"):
        embedding = embedding.combine_chunks()
    flat = np.asarray(embedding.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
    return Batch(columns, flat.reshape(len(table), -1) if len(table) else flat.reshape(0, 0))


def part_batches(path: Path) -> Iterator[Batch]:
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(batch_size=READ_ROWS):
        yield as_batch(batch)


class SinkSync:
    """Every writer of a run, and the ledger of the part files each one holds."""

    def __init__(self, output: RunOutput, writers: Sequence[SinkWriter]) -> None:
        self.output = output
        self.writers = list(writers)
        self.ledger = output.folder / SINK_LEDGER
        self._held = self._read()
        #: Seconds spent writing into the sinks.
        self.seconds = 0.0

    def _read(self) -> set[tuple[str, str]]:
        held: set[tuple[str, str]] = set()
        if not self.ledger.is_file():
            return held
        for line in self.ledger.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                held.add((entry["sink"], entry["part"]))
            except (ValueError, KeyError, TypeError):  # a line cut by an interruption
                continue
        return held

    def _name(self, part: Path) -> str:
        return part.relative_to(self.output.folder).as_posix()

    def catch_up(self) -> None:
        """Write every committed part that a sink does not hold yet."""
        if not self.writers:
            return
        began = time.perf_counter()
        for part in self.output.part_files():
            missing = [w for w in self.writers if (w.key, self._name(part)) not in self._held]
            if missing:
                for batch in part_batches(part):
                    for writer in missing:
                        writer.write(batch)
                self._note(part, missing)
        self.seconds += time.perf_counter() - began

    def committed(self, part: Path, table: Any) -> None:
        """A part the local engine has just committed: into every sink."""
        if not self.writers:
            return
        began = time.perf_counter()
        batch = as_batch(table)
        for writer in self.writers:
            writer.write(batch)
        self._note(part, self.writers)
        self.seconds += time.perf_counter() - began

    def _note(self, part: Path, writers: Sequence[SinkWriter]) -> None:
        name = self._name(part)
        with self.ledger.open("a", encoding="utf-8") as handle:
            for writer in writers:
                handle.write(json.dumps({"sink": writer.key, "part": name}) + "\n")
                self._held.add((writer.key, name))

    def lines(self) -> tuple[str, ...]:
        """What each sink holds now, for the run's summary."""
        return tuple(w.describe() for w in self.writers)
