"""One configuration over a whole corpus: the engine behind ``chunk-explorer run``.

::

    sources = list_sources(["docs/", "more.zip"], limits)
    summary = run_corpus(sources, Job(config.to_dict(), max_bytes), RunSettings("out/"))

Both engines cut each document with the same :meth:`Job.chunk
<chunking.pipeline.documents.Job.chunk>` and write the same Parquet schema to the same
output folder (:mod:`.output`: resumable, atomic part files, ``errors.jsonl``,
``manifest.json``); ``local`` (:mod:`.local`) uses a process pool, ``ray``
(:mod:`.ray_engine`) builds the pipeline with Ray Data, ``spark``
(:mod:`.spark_engine`) runs it as Spark jobs (``binaryFile`` -> ``mapInPandas``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..documents.corpus import CorpusLimits, Source
from ..sinks import SinkWriter
from .documents import Job, Outcome
from .local import local_outcomes
from .output import ERRORS, Done, PartWriter, RunOutput
from .progress import Progress, duration
from .settings import ENGINES, PART_ROWS, RunSettings
from .sync import SinkSync, open_writers

__all__ = ["ENGINES", "PART_ROWS", "Job", "RunSettings", "Summary", "run_corpus"]

Embed = Callable[[list[str]], Any]


@dataclass(frozen=True)
class Summary:
    """What one run did, and what the output holds afterwards."""

    processed: int
    chunks: int
    skipped: int
    failed: int
    bytes: int
    seconds: float
    total_documents: int
    total_chunks: int
    out: Path
    #: What each ``--sink`` holds afterwards (``lancedb:vectors collection … holds N records``).
    sinks: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 when every document is in the output, 1 when some failed."""
        return 1 if self.failed else 0

    def line(self) -> str:
        """The final summary line."""
        speed = self.bytes / 2**20 / self.seconds if self.seconds > 0 else 0.0
        parts = [
            f"{self.processed:,} documents chunked into {self.chunks:,} chunks",
            f"{self.skipped:,} already done",
            f"{self.failed:,} failed" + (f" (see {self.out / ERRORS})" if self.failed else ""),
            f"{self.bytes / 2**20:,.1f} MB in {duration(self.seconds)} ({speed:,.1f} MB/s)",
            f"{self.out} holds {self.total_documents:,} documents, {self.total_chunks:,} chunks",
            *self.sinks,
        ]
        return "; ".join(parts)


def run_corpus(
    sources: Sequence[Source],
    job: Job,
    settings: RunSettings,
    limits: CorpusLimits | None = None,
    *,
    stderr: TextIO | None = None,
) -> Summary:
    """Cut every source into ``settings.out``; documents already there are skipped.

    Raises ValueError for bad settings, a model that cannot load, or an output folder
    that holds another configuration; a document that fails is listed in
    ``errors.jsonl`` and counted in the summary instead.
    """
    settings.check()
    limits = limits or CorpusLimits()
    embedder = _embedder(settings.embed_model)
    fingerprint = {
        "configuration": job.config,
        "embedding_model": embedder.name if embedder is not None else None,
    }
    # Every sink and the output folder are checked before anything is written.
    writers = open_writers(settings, job.config, embedder)
    try:
        output = RunOutput(settings.out, fingerprint)
        before = output.open(force=settings.force)
    except BaseException:
        for writer in writers:
            writer.abandon()
        raise
    try:
        return _run(sources, job, settings, limits, output, before, embedder, writers, stderr)
    finally:
        for writer in writers:
            writer.close()


def _run(
    sources: Sequence[Source],
    job: Job,
    settings: RunSettings,
    limits: CorpusLimits,
    output: RunOutput,
    before: Done,
    embedder: Any,
    writers: list[SinkWriter],
    stderr: TextIO | None,
) -> Summary:
    sync = SinkSync(output, writers)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    output.write_manifest({"status": "running", "engine": settings.engine, "started": started})
    progress = Progress(
        len(sources), sum(s.size for s in sources), stderr or sys.stderr, enabled=settings.progress
    )
    try:
        if settings.engine == "ray":
            from .ray_engine import run_ray

            timings = run_ray(sources, job, settings, limits, output, before, progress)
        elif settings.engine == "spark":
            from .spark_engine import run_spark

            timings = run_spark(
                sources, job, settings, limits, output, before, progress, sync.catch_up
            )
        else:
            timings = _run_local(
                sources, job, settings, limits, output, before, progress, embedder, sync
            )
    finally:
        progress.close()
    # The parts no sink holds yet: the Ray engine's (written from the driver), and those
    # an earlier run committed but did not write into a sink (interrupted, or no --sink).
    sync.catch_up()
    timings["sink_seconds"] = sync.seconds
    after = output.done()
    summary = Summary(
        processed=after.documents - before.documents,
        chunks=after.total_chunks - before.total_chunks,
        skipped=progress.skipped,
        failed=progress.failed,
        bytes=progress.bytes,
        seconds=progress.seconds,
        total_documents=after.documents,
        total_chunks=after.total_chunks,
        out=output.folder,
        sinks=sync.lines(),
    )
    output.write_manifest(_manifest(settings, summary, started, timings, embedder))
    return summary


def _embedder(model: str | None) -> Any:
    """The embedder, loaded before any work so that a bad name fails fast."""
    if model is None:
        return None
    from ..embedding.models import get_embedder

    return get_embedder(model)


def _run_local(
    sources: Sequence[Source],
    job: Job,
    settings: RunSettings,
    limits: CorpusLimits,
    output: RunOutput,
    before: Done,
    progress: Progress,
    embedder: Any,
    sync: SinkSync,
) -> dict[str, float]:
    embed: Embed | None = embedder.embed if embedder is not None else None
    writer = PartWriter(output, max_rows=settings.part_rows, embed=embed, committed=sync.committed)
    errors = output.errors()
    chunk_seconds = 0.0
    try:
        outcomes = local_outcomes(
            sources, job, limits, workers=settings.workers, done=before.chunks.__contains__
        )
        for outcome in outcomes:
            _record(outcome, writer, errors.add)
            progress.advance(outcome)
            chunk_seconds += outcome.seconds
        writer.flush()
    finally:
        errors.close()
    return {
        "chunk_seconds": chunk_seconds,
        "embed_seconds": writer.embed_seconds,
        "write_seconds": writer.write_seconds,
    }


def _record(outcome: Outcome, writer: PartWriter, error: Callable[[dict[str, Any]], None]) -> None:
    if outcome.error is not None:
        error(outcome.error_record())
    elif not outcome.skipped:
        writer.add(outcome)


def _manifest(
    settings: RunSettings,
    summary: Summary,
    started: str,
    timings: dict[str, float],
    embedder: Any,
) -> dict[str, Any]:
    return {
        "status": "complete",
        "engine": settings.engine,
        "workers": settings.workers,
        "started": started,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "embedding_dimension": embedder.dimension if embedder is not None else None,
        "sinks": list(summary.sinks),
        "counts": {
            "documents": summary.total_documents,
            "chunks": summary.total_chunks,
            "processed": summary.processed,
            "skipped": summary.skipped,
            "failed": summary.failed,
            "bytes_read": summary.bytes,
        },
        "timings": {"wall_seconds": round(summary.seconds, 3)}
        | {k: round(v, 3) for k, v in timings.items()},
    }
