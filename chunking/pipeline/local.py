"""The local engine: documents read in this process, cut in a pool of processes.

The parent reads each document (so a file that cannot be read becomes an error row
here), skips the ones already done, and hands the rest to the workers; at most two
documents per worker are in flight, so memory stays bounded however long the corpus
is (``Executor.map`` would queue every document at once). Outcomes come back in the
order of the corpus, which keeps the part files deterministic.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

from ..documents.corpus import CorpusLimits, Source, doc_id, read_source
from .documents import Job, Outcome
from .output import DocKey

#: Documents in flight per worker: one being cut, one waiting.
IN_FLIGHT_PER_WORKER = 2

Pending = Outcome | Future[Outcome]


def local_outcomes(
    sources: Iterable[Source],
    job: Job,
    limits: CorpusLimits,
    *,
    workers: int,
    done: Callable[[DocKey], bool],
) -> Iterator[Outcome]:
    """Every source's outcome, in order; ``workers == 1`` cuts in this process."""
    if workers == 1:
        for source in sources:
            yield _result(_outcome(source, job, limits, done, job.chunk))
        return
    # spawn: a forked child would inherit the parent's threads (tokenizers, a loaded model)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context)
    try:
        window: deque[Pending] = deque()

        def submit(name: str, data: bytes) -> Pending:
            return pool.submit(job.chunk, name, data)

        for source in sources:
            window.append(_outcome(source, job, limits, done, submit))
            while len(window) > workers * IN_FLIGHT_PER_WORKER:
                yield _result(window.popleft())
        while window:
            yield _result(window.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _outcome(
    source: Source,
    job: Job,
    limits: CorpusLimits,
    done: Callable[[DocKey], bool],
    cut: Callable[[str, bytes], Pending],
) -> Pending:
    """Read one source: its error, its skip, or ``cut`` applied to its bytes."""
    try:
        data = read_source(source, limits)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return Outcome(source.name, None, source.size, error=f"cannot be read: {reason}")
    identity = doc_id(data)
    if done((identity, source.name)):
        return Outcome(source.name, identity, len(data), skipped=True)
    return cut(source.name, data)


def _result(pending: Pending) -> Outcome:
    return pending if isinstance(pending, Outcome) else pending.result()
