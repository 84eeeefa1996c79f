"""The output folder of ``chunk-explorer run``, and how it survives an interruption.

Layout::

    OUT/manifest.json       configuration, model, counts, versions, timings
    OUT/errors.jsonl        one line per document that could not be read or chunked
    OUT/parts/*.parquet     the chunks, one row each (the Ray engine: parts/ray-<run>/)

A part file is written under a temporary name and renamed into place: the rename is
the commit, so a part in ``parts/`` always holds every row of each of its documents,
and the parts themselves are the list of documents done. A document is identified by
``(doc_id, path)``: its content hash and its name in the corpus, so a changed file is
chunked again and two copies of one text under two names each get their rows. On
start, temporary files and the staging folders of an interrupted run are removed;
documents already in a part are skipped. A different configuration or model on the
same folder is refused (or, with ``force``, the old output is removed first): rows of
two configurations are never mixed.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..model import in_context
from .documents import COLUMNS, EMBEDDING, Outcome, schema

MANIFEST = "manifest.json"
ERRORS = "errors.jsonl"
#: Which sink holds which part file (:mod:`.sync`).
SINK_LEDGER = "sinks.jsonl"
PARTS = "parts"
STAGING_PREFIX = ".staging-"
TEMP_SUFFIX = ".tmp"
#: Packages whose versions the manifest records, when installed.
VERSIONED = ("chunk-explorer", "pyarrow", "tiktoken", "sentence-transformers", "ray", "pyspark")

#: A document already in the output: (content hash, name in the corpus).
DocKey = tuple[str, str]


def new_run_id() -> str:
    """A short id that keeps the part names of successive runs apart."""
    return time.strftime("%Y%m%d%H%M%S") + "-" + uuid.uuid4().hex[:6]


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


@dataclass(frozen=True)
class Done:
    """What the part files already hold: every document's chunk count."""

    chunks: dict[DocKey, int]

    @property
    def documents(self) -> int:
        return len(self.chunks)

    @property
    def total_chunks(self) -> int:
        return sum(self.chunks.values())


class RunOutput:
    """The output folder of one run: resumption, part files, errors and manifest."""

    def __init__(self, folder: str | os.PathLike[str], fingerprint: dict[str, Any]) -> None:
        self.folder = Path(folder)
        self.parts = self.folder / PARTS
        #: What must match for a run to continue an existing output.
        self.fingerprint = fingerprint
        self.run_id = new_run_id()

    # ---------------------------------------------------------------- start

    def open(self, *, force: bool) -> Done:
        """Prepare the folder and return what earlier runs finished.

        Raises ValueError when the folder holds another configuration's output (unless
        ``force``, which removes that output) or is not an output folder at all.
        """
        if self.folder.exists() and not self.folder.is_dir():
            raise ValueError(f"--out {self.folder} is a file; give a folder")
        previous = self._previous_fingerprint()
        if previous is not None and previous != self.fingerprint:
            if not force:
                raise ValueError(
                    f"{self.folder} holds the output of another configuration or model "
                    f"({_difference(previous, self.fingerprint)}); use another --out, or "
                    "--force to replace it"
                )
            self._clear()
        elif previous is None and not force and self._has_other_files():
            raise ValueError(
                f"{self.folder} is not empty and has no {MANIFEST}; use an empty or new "
                "folder (or --force to write into it anyway)"
            )
        self.parts.mkdir(parents=True, exist_ok=True)
        self._drop_leftovers()
        return self.done()

    def _has_other_files(self) -> bool:
        return self.folder.is_dir() and any(self.folder.iterdir())

    def _previous_fingerprint(self) -> dict[str, Any] | None:
        path = self.folder / MANIFEST
        if not path.is_file():
            return None
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
            return {key: manifest[key] for key in self.fingerprint}
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path} is damaged; use another --out or remove it") from None

    def _clear(self) -> None:
        shutil.rmtree(self.parts, ignore_errors=True)
        for name in (MANIFEST, ERRORS, SINK_LEDGER):
            (self.folder / name).unlink(missing_ok=True)

    def _drop_leftovers(self) -> None:
        """Temporary part files and staging folders are what an interrupted run left."""
        for path in self.parts.rglob(f"*{TEMP_SUFFIX}"):
            path.unlink()
        for path in self.folder.glob(f"{STAGING_PREFIX}*"):
            shutil.rmtree(path, ignore_errors=True)

    def done(self) -> Done:
        """Every document in the committed part files, with its chunk count."""
        import pyarrow.parquet as pq

        chunks: dict[DocKey, int] = {}
        for part in self.part_files():
            table = pq.read_table(part, columns=["doc_id", "path"])
            counts = table.group_by(["doc_id", "path"]).aggregate([([], "count_all")])
            for row in counts.to_pylist():
                key = (row["doc_id"], row["path"])
                chunks[key] = chunks.get(key, 0) + row["count_all"]
        return Done(chunks)

    def part_files(self) -> list[Path]:
        return sorted(self.parts.rglob("*.parquet"))

    def staging(self) -> Path:
        """A fresh staging folder for this run (removed by the next run if left)."""
        path = self.folder / f"{STAGING_PREFIX}{self.run_id}"
        path.mkdir(parents=True)
        return path

    # ------------------------------------------------------------- results

    def errors(self) -> ErrorLog:
        return ErrorLog(self.folder / ERRORS)

    def write_manifest(self, content: dict[str, Any]) -> None:
        """Replace the manifest atomically (a reader never sees half of it)."""
        path = self.folder / MANIFEST
        temporary = path.with_name(path.name + TEMP_SUFFIX)
        payload = {**self.fingerprint, **content, "versions": versions()}
        temporary.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(temporary, path)


def _difference(previous: dict[str, Any], current: dict[str, Any]) -> str:
    """What changed, setting by setting: ``size: 400 there, 300 now``."""
    before, now = _flat(previous), _flat(current)
    changed = [key for key in {**before, **now} if before.get(key) != now.get(key)]
    return "; ".join(
        f"{key}: {json.dumps(before.get(key))} there, {json.dumps(now.get(key))} now"
        for key in changed
    )


def _flat(fingerprint: dict[str, Any]) -> dict[str, Any]:
    config = fingerprint.get("configuration") or {}
    return {
        "strategy": config.get("strategy"),
        **dict(config.get("params") or {}),
        **{key: value for key, value in fingerprint.items() if key != "configuration"},
    }


class ErrorLog:
    """``errors.jsonl``, rewritten by every run: the documents that failed this time
    (a document that failed before is tried again, so the file never lists a
    document whose rows are in the output)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._handle = path.open("w", encoding="utf-8")

    def add(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        self.count += 1

    def close(self) -> None:
        self._handle.close()


class PartWriter:
    """Buffers documents' rows and commits them as part files of bounded size.

    ``embed`` (texts -> float32 rows) is applied to a part's texts just before it is
    written, so the model sees large batches and the memory holds one part at most.
    ``committed(path, table)`` hears each part once it is in place (the sinks).
    """

    def __init__(
        self,
        output: RunOutput,
        *,
        max_rows: int,
        max_text_bytes: int = 64 * 2**20,
        embed: Any = None,
        committed: Callable[[Path, Any], None] | None = None,
    ) -> None:
        self.output = output
        self.max_rows = max_rows
        self.max_text_bytes = max_text_bytes
        self.embed = embed
        self.committed = committed
        self.written = 0
        self.embed_seconds = 0.0
        self.write_seconds = 0.0
        self._pending: list[Outcome] = []
        self._rows = 0
        self._text_bytes = 0

    def add(self, outcome: Outcome) -> None:
        assert outcome.columns is not None
        self._pending.append(outcome)
        self._rows += outcome.chunks
        self._text_bytes += outcome.bytes
        if self._rows >= self.max_rows or self._text_bytes >= self.max_text_bytes:
            self.flush()

    def flush(self) -> None:
        """Write the buffered documents as one part file and rename it into place."""
        if not self._pending:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = _concatenated(self._pending)
        if self.embed is not None:
            began = time.perf_counter()
            columns[EMBEDDING] = vectors_array(self.embed(embedding_texts(columns)))
            self.embed_seconds += time.perf_counter() - began
        began = time.perf_counter()
        table = pa.table(columns, schema=schema(self.embed is not None))
        path = self.output.parts / f"part-{self.output.run_id}-{self.written:05d}.parquet"
        temporary = path.with_name(path.name + TEMP_SUFFIX)
        pq.write_table(table, temporary)
        os.replace(temporary, path)
        self.write_seconds += time.perf_counter() - began
        self.written += 1
        self._pending, self._rows, self._text_bytes = [], 0, 0
        if self.committed is not None:
            self.committed(path, table)


def _concatenated(outcomes: list[Outcome]) -> dict[str, Any]:
    return {name: [v for o in outcomes for v in (o.columns or {})[name]] for name in COLUMNS}


def vectors_array(vectors: Any) -> Any:
    """An (n, d) float32 array as a Parquet ``list<float32>`` column without copying rows."""
    import numpy as np
    import pyarrow as pa

    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    rows, dimension = matrix.shape
    offsets = pa.array(np.arange(0, (rows + 1) * dimension, dimension, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(matrix.reshape(-1)))


def embedding_texts(columns: Mapping[str, Any]) -> list[str]:
    """What the model reads for each row, by the rule of
    :attr:`~chunking.model.Chunk.embedding_text`: the chunk's visible text when its
    metadata has one (HTML in visible-text mode), otherwise its text, after its
    ``context`` (a table's header) when it carries one."""
    texts = []
    for text, meta in zip(columns["text"], columns["metadata"], strict=True):
        data = json.loads(meta) if "visible_text" in meta or "context" in meta else {}
        texts.append(
            in_context(str(data.get("context") or ""), str(data.get("visible_text", text)))
        )
    return texts
