"""The Ray engine: the same run as a Ray Data pipeline, locally or on a cluster.

``read_binary_files`` -> cut each document in ``map_batches`` (tasks) -> embed in
``map_batches`` with an actor pool (:class:`EmbedBatch` loads the model once per actor)
-> ``write_parquet`` into a staging folder, which is renamed into ``parts/`` when the
whole dataset is written: an interrupted Ray run leaves only the staging folder, which
the next run removes, and starts again without duplicates.

The driver lists the corpus, extracts zip members into the staging folder (Ray reads
files, not members) and checks that each file opens, so a file that cannot be read is
an error line instead of a failed job. Workers record what became of every document
(chunks, skip, error) in small JSON Lines files in the staging folder, which the driver
reads into ``errors.jsonl`` and the counts. ``RAY_ADDRESS`` set: the run joins that
cluster, and ``--out`` must be on storage that every node sees.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..documents.corpus import CorpusLimits, Source, doc_id, read_source
from .documents import Job, Outcome, schema
from .output import DocKey, Done, RunOutput, embedding_texts, vectors_array
from .progress import Progress

if TYPE_CHECKING:
    from .settings import RunSettings

INSTALL_HINT = "pip install 'chunk-explorer[corpus]'"
#: Documents per chunking task batch: a few, since one document may be 50 MB.
DOCUMENTS_PER_BATCH = 8
#: Chunks per embedding batch.
CHUNKS_PER_BATCH = 256


def import_ray() -> Any:
    """Ray with Ray Data, or a ValueError naming the extra to install."""
    try:
        import ray
        import ray.data  # the submodule must load too
    except ImportError:
        raise ValueError(f"--engine ray needs Ray Data: {INSTALL_HINT}") from None
    return ray


def connect(ray: Any, cpus: int) -> bool:
    """Join ``RAY_ADDRESS`` when set, else start a quiet local instance with ``cpus``;
    True when this call started (and so must stop) Ray."""
    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if os.environ.get("RAY_ADDRESS"):
        ray.init(**quiet)
    else:
        ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
    return True


def run_ray(
    sources: Sequence[Source],
    job: Job,
    settings: RunSettings,
    limits: CorpusLimits,
    output: RunOutput,
    before: Done,
    progress: Progress,
) -> dict[str, float]:
    """Run the corpus on Ray; fill ``progress``'s counts; return the timings."""
    ray = import_ray()
    # Each embedding actor holds a CPU slot for good: with as many slots as workers,
    # the actors would leave none to the chunking tasks feeding them.
    actors = settings.workers if settings.embed_model is not None else 0
    started_here = connect(ray, settings.workers + actors)
    try:
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        ray.data.DataContext.get_current().enable_progress_bars = settings.progress
        staging = output.staging()
        log_dir = staging / "outcomes"
        log_dir.mkdir()
        readable, names = _stage(sources, limits, staging / "inputs", log_dir)
        if readable:
            dataset = _pipeline(ray, readable, names, job, settings, before, log_dir)
            dataset.write_parquet(str(staging / "parts"), min_rows_per_file=settings.part_rows)
            if (staging / "parts").is_dir():
                os.replace(staging / "parts", output.parts / f"ray-{output.run_id}")
        timings = _tally(log_dir, output, progress)
    finally:
        if started_here:
            ray.shutdown()
    return timings


def _stage(
    sources: Sequence[Source], limits: CorpusLimits, inputs: Path, log_dir: Path
) -> tuple[list[str], dict[str, str]]:
    """The paths Ray reads and the corpus name of each; zip members are extracted
    (under safe numbered names) and files that cannot be read are logged as errors."""
    paths: list[str] = []
    names: dict[str, str] = {}
    failures: list[Outcome] = []
    for number, source in enumerate(sources):
        try:
            path = _readable_path(source, limits, inputs / str(number))
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            failures.append(
                Outcome(source.name, None, source.size, error=f"cannot be read: {reason}")
            )
            continue
        paths.append(path)
        names[path] = source.name
    _log(log_dir, failures)
    return paths, names


def _readable_path(source: Source, limits: CorpusLimits, folder: Path) -> str:
    """A path Ray can read for ``source``; raises when it cannot be read."""
    if source.member is not None:
        data = read_source(source, limits)
        folder.mkdir(parents=True)
        path = folder / Path(source.name).name
        path.write_bytes(data)
        return os.path.abspath(path)
    if source.size > limits.max_file_bytes:
        read_source(source, limits)  # raises the size message without reading it all
    with open(source.path, "rb") as handle:
        handle.read(1)
    return os.path.abspath(source.path)


def _pipeline(
    ray: Any,
    paths: list[str],
    names: dict[str, str],
    job: Job,
    settings: RunSettings,
    before: Done,
    log_dir: Path,
) -> Any:
    dataset = ray.data.read_binary_files(paths, include_paths=True)
    dataset = dataset.map_batches(
        chunk_batch,
        batch_size=DOCUMENTS_PER_BATCH,
        batch_format="numpy",
        fn_kwargs={
            "job": job,
            "names": names,
            "done": frozenset(before.chunks),
            "log_dir": str(log_dir),
        },
    )
    if settings.embed_model is not None:
        dataset = dataset.map_batches(
            EmbedBatch,
            batch_size=CHUNKS_PER_BATCH,
            batch_format="pyarrow",
            fn_constructor_kwargs={"model": settings.embed_model},
            concurrency=settings.workers,
        )
    return dataset


def chunk_batch(
    batch: dict[str, Any], *, job: Job, names: dict[str, str], done: frozenset[DocKey], log_dir: str
) -> Any:
    """Cut a batch of documents (``bytes`` and ``path`` columns) into chunk rows."""
    import pyarrow as pa

    outcomes = []
    for data, path in zip(batch["bytes"], batch["path"], strict=True):
        name = names.get(path) or names.get("/" + str(path).lstrip("/"), str(path))
        data = bytes(data)
        identity = doc_id(data)
        if (identity, name) in done:
            outcomes.append(Outcome(name, identity, len(data), skipped=True))
        else:
            outcomes.append(job.chunk(name, data))
    _log(Path(log_dir), outcomes)
    kept = [o.columns for o in outcomes if o.columns is not None and not o.skipped]
    columns = {n: [v for c in kept for v in c[n]] for n in schema(False).names}
    return pa.table(columns, schema=schema(False))


class EmbedBatch:
    """Adds the ``embedding`` column; one model load per actor."""

    def __init__(self, model: str) -> None:
        from ..embedding.models import get_embedder

        self.embedder = get_embedder(model)

    def __call__(self, table: Any) -> Any:

        vectors = self.embedder.embed(
            embedding_texts(
                {
                    "text": table.column("text").to_pylist(),
                    "metadata": table.column("metadata").to_pylist(),
                }
            )
        )
        return table.append_column("embedding", vectors_array(vectors))


def _log(log_dir: Path, outcomes: list[Outcome]) -> None:
    """What became of each document, for the driver's counts and ``errors.jsonl``."""
    if not outcomes:
        return
    lines = [o.log_line() for o in outcomes]
    (log_dir / f"{uuid.uuid4().hex}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _tally(log_dir: Path, output: RunOutput, progress: Progress) -> dict[str, float]:
    """Read the workers' logs into ``errors.jsonl`` and the progress counts."""
    errors = output.errors()
    seconds = 0.0
    try:
        for path in sorted(log_dir.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                outcome, chunks = Outcome.from_log(json.loads(line))
                if outcome.error is not None:
                    errors.add(outcome.error_record())
                progress.advance(outcome)
                progress.chunks += chunks
                seconds += outcome.seconds
    finally:
        errors.close()
    return {"chunk_seconds": seconds}
