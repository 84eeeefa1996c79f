"""How long embedding work takes on this machine, said before it starts: loading a model,
building a derived one, embedding texts. Calibrated by what was measured here.

Each named model declares a prior (:class:`Speed`, in :mod:`.registry`): its load and
build seconds and its embedding cost on an idle machine, ``seconds_per_piece`` for
every word piece it reads plus ``text_pieces`` pieces' worth per text (tokenising,
padding and pooling cost something whatever a text's length: 300 sentence windows of
25,000 pieces took a third as long as 491 chunks of 122,000). Pieces past
``window_pieces`` cost nothing: the model truncates them. Word pieces, not characters:
a financial report's figures have half as many characters per piece as prose. The
pieces of many texts are counted on an even sample of them (:func:`piece_counts`).

Two corrections fit the prior to this machine:

- **contention** (:func:`contention`): the machine may be shared. Linux shares the
  CPUs between sessions first ("autogroup": a terminal, a server, a browser each get
  an equal share whatever their thread count), then between the threads of a session.
  So the 1-minute load average, which counts every runnable thread, says little: a test
  suite's ten threads in one session take no more from a job than one busy loop in
  another session. :func:`machine_demand` reads each session's CPU demand now from
  ``/proc`` (its runnable threads, or the CPU it used, sampled over
  :data:`SAMPLE_SECONDS`), and :func:`share_slowdown` gives the job its max-min fair
  share of the CPUs among them: a job of 2 threads on 2 CPUs against one busy session
  gets 1 CPU (twice as long), against six 2/7 of them (3.5 times). Where ``/proc``
  cannot be read, every task of the load average counts as a session of its own.
  A job of several threads that wait for each other loses more than its share (a
  thread descheduled holds up the others): each model declares its
  ``thread_wait``, and the job takes ``1 + thread_wait * (share slowdown - 1)`` times
  its idle seconds (torch about 2.2, ONNX Runtime without spinning about 1.2, work on
  one thread 1). An estimate is scaled by the demand now, and a measurement is
  compared with the prior scaled by the demand when it started.
- **calibration**: every load, build and embedding run of at least
  :data:`MIN_SECONDS` is recorded with its idle prior and the share slowdown it started
  under, per model and kind, in ``timings.json`` in the user's cache folder
  (``~/.cache/chunk-explorer``, ``XDG_CACHE_HOME`` honoured; never in the checkout).
  The next estimate is the scaled prior times measured over predicted, in which each
  new run counts as much as all the earlier ones together (:data:`DECAY`), so the
  estimate follows this machine.

This module is a leaf of :mod:`chunking.embedding`: the embedders record their runs
here and :mod:`.models` combines priors and records into estimates.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .cache import default_cache_dir

#: The kinds of work estimated.
LOAD, BUILD, EMBED = "load", "build", "embed"
#: Runs shorter than this are not recorded (timer noise, and no wait to announce).
MIN_SECONDS = 0.5
#: Weight left to the earlier runs when a new one is recorded.
DECAY = 0.5
#: Seconds over which the sessions' CPU demand is sampled, and how many samples.
SAMPLE_SECONDS, SAMPLES = 0.1, 5
#: Seconds a reading of the demand is reused (an estimate and the run it announces
#: read the same; a page's several estimates cost one reading).
DEMAND_TTL = 2.0
#: Threads a model's load keeps busy: it imports and reads files, work on one thread.
LOAD_THREADS = 1
#: The law the records were predicted with: records of another law are not read.
LAW = "autogroup share, thread wait"
#: Bounds of the calibration factor, so that one odd run cannot make estimates absurd.
FACTOR_RANGE = (0.2, 5.0)
#: Characters per word piece of English prose, for a text whose pieces are not counted.
CHARS_PER_PIECE = 4.7
#: Texts whose pieces are counted one by one; beyond, an even sample of this many.
SAMPLE_TEXTS = 256
#: The key of the records file that names the law they were predicted with.
LAW_KEY = "contention law"
#: Environment variable: another file for the records (a benchmark's own, say).
TIMINGS_ENV = "CHUNK_EXPLORER_TIMINGS"

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Speed:
    """A model's prior costs on an idle machine (seconds), measured with
    ``bench/bench_estimates.py``."""

    load_seconds: float
    build_seconds: float
    seconds_per_piece: float
    #: The fixed cost of one text, in word pieces' worth.
    text_pieces: float
    #: Word pieces the model reads of a text (its window); the rest is free.
    window_pieces: int
    #: How much more than its share an embedding loses on a shared machine (its
    #: threads wait for each other): its slowdown is ``1 + thread_wait * (share - 1)``.
    thread_wait: float = 1.0

    def embedding_seconds(self, pieces: Sequence[int]) -> float:
        """Idle seconds to embed texts of these lengths in word pieces."""
        read = sum(min(n, self.window_pieces) for n in pieces)
        return self.seconds_per_piece * (read + self.text_pieces * len(pieces))


def piece_counts(texts: Sequence[str], count: Callable[[list[str]], list[int]]) -> list[int]:
    """Each text's word pieces: counted by ``count`` for up to :data:`SAMPLE_TEXTS`
    texts; for more, each text's characters times the pieces per character of an even
    sample of them (counting them all would cost as much as a small model's run)."""
    if len(texts) <= SAMPLE_TEXTS:
        return count(list(texts))
    step = len(texts) / SAMPLE_TEXTS
    sample = [texts[int(i * step)] for i in range(SAMPLE_TEXTS)]
    chars = sum(len(t) for t in sample)
    per_char = sum(count(sample)) / chars if chars else 1 / CHARS_PER_PIECE
    return [round(len(t) * per_char) for t in texts]


@dataclass(frozen=True)
class Demand:
    """The CPU demand on the machine now, in CPUs' worth: each other session's, and
    the rest of this process's session (the thread reading it left out)."""

    others: tuple[float, ...]
    own: float
    cpus: int


def share_slowdown(threads: int, demand: Demand) -> float:
    """How many times longer a job of ``threads`` busy threads takes than alone: its
    session gets its max-min fair share of the CPUs among the sessions' demands (the
    job's threads added to its own session's), and the job its threads' part of it."""
    cpus = max(demand.cpus, 1)
    threads = max(threads, 1)
    own = demand.own + threads
    wants = sorted([d for d in demand.others if d > 0] + [own])
    left, level = float(cpus), float(cpus)
    for i, want in enumerate(wants):  # water-filling: the small demands are met first
        level = left / (len(wants) - i)
        if want > level:
            break
        left -= want
        level = float("inf")
    got = min(own, level) * threads / own
    return max(1.0, min(threads, cpus) / got)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _snapshot(proc: Path, me: int) -> tuple[dict[str, int], dict[str, tuple[str, float]]] | None:
    """Runnable threads by session ("autogroup"), ``me`` (this thread) left out, and
    each process's session and CPU seconds used so far; None where ``/proc`` has no
    autogroups."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    runnable: dict[str, int] = {}
    used: dict[str, tuple[str, float]] = {}
    seen = False
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            group = ((proc / pid / "autogroup").read_text().split() or ["?"])[0]
            stat = (proc / pid / "stat").read_bytes()
            tids = os.listdir(proc / pid / "task")
        except OSError:
            continue
        seen = True
        fields = stat[stat.rfind(b")") + 2 :].split()
        used[pid] = (group, (int(fields[11]) + int(fields[12])) / tick)
        for tid in tids:
            if int(tid) == me:
                continue
            try:
                task = (proc / pid / "task" / tid / "stat").read_bytes()
            except OSError:
                continue
            if task[task.rfind(b")") + 2 : task.rfind(b")") + 3] == b"R":
                runnable[group] = runnable.get(group, 0) + 1
    return (runnable, used) if seen else None


def read_demand(proc: Path = Path("/proc")) -> Demand | None:
    """Each session's CPU demand, sampled :data:`SAMPLES` times over
    :data:`SAMPLE_SECONDS`: its mean runnable threads, or the CPUs' worth it used
    meanwhile when more (a session whose threads run in bursts); this process's own
    session apart. None where ``/proc`` or its autogroups cannot be read."""
    try:
        own_group = ((proc / "self" / "autogroup").read_text().split() or ["?"])[0]
        me = threading.get_native_id()
        started = time.perf_counter()
        first = _snapshot(proc, me)
        if first is None:
            return None
        counts = dict(first[0])
        last = first
        for _ in range(SAMPLES - 1):
            time.sleep(SAMPLE_SECONDS / SAMPLES)
            last = _snapshot(proc, me) or last
            for group, n in last[0].items():
                counts[group] = counts.get(group, 0) + n
        elapsed = max(time.perf_counter() - started, 1e-3)
    except (OSError, ValueError, IndexError):
        return None
    used: dict[str, float] = {}
    for pid, (group, seconds) in last[1].items():  # processes there all along
        if pid in first[1]:
            used[group] = used.get(group, 0.0) + seconds - first[1][pid][1]
    demand = {
        group: max(counts.get(group, 0) / SAMPLES, used.get(group, 0.0) / elapsed)
        for group in set(counts) | set(used)
    }
    # this process's own use of the CPU is the estimating thread's, not a competitor
    own = max(0.0, counts.get(own_group, 0) / SAMPLES)
    others = tuple(d for g, d in demand.items() if g != own_group and d > 0.05)
    return Demand(others, own, _cpus())


_DEMAND: list[tuple[float, Demand | None]] = []


def machine_demand() -> Demand:
    """The demand now (:func:`read_demand`, reused for :data:`DEMAND_TTL` seconds);
    without ``/proc``, every task of the 1-minute load average counted as a session of
    its own (what Linux does without autogroups)."""
    now = time.monotonic()
    with _LOCK:
        if _DEMAND and now - _DEMAND[0][0] < DEMAND_TTL:
            demand = _DEMAND[0][1]
        else:
            demand = read_demand()
            _DEMAND[:] = [(now, demand)]
    if demand is not None:
        return demand
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return Demand((1.0,) * round(load), 0.0, _cpus())


def contention(threads: int = 0) -> float:
    """The share slowdown (:func:`share_slowdown`) of a job of ``threads`` threads (0:
    as many as the CPUs, an embedding's) on the machine now."""
    demand = machine_demand()
    return share_slowdown(threads or demand.cpus, demand)


def scaled(slowdown: float, thread_wait: float = 1.0) -> float:
    """Times its idle seconds a job takes at this share slowdown, its threads waiting
    ``thread_wait`` for each other (1: work on one thread, or threads that do not)."""
    return 1.0 + thread_wait * max(0.0, slowdown - 1.0)


def timings_path() -> Path:
    """``timings.json`` in the user's cache folder, next to the embedding cache (or the
    file :data:`TIMINGS_ENV` names)."""
    override = os.environ.get(TIMINGS_ENV)
    return Path(override) if override else default_cache_dir().parent / "timings.json"


def _read() -> dict[str, dict[str, dict[str, float]]]:
    """The records, by model and kind; none when they were predicted with another
    contention law than :data:`LAW` (their measured over predicted would be wrong)."""
    try:
        data = json.loads(timings_path().read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get(LAW_KEY) != LAW:
        return {}
    return {k: v for k, v in data.items() if k != LAW_KEY}


def factor(model: str, kind: str, thread_wait: float = 1.0) -> float:
    """Measured over predicted seconds of ``model``'s recorded runs of ``kind`` (1 when
    none is recorded), the predictions scaled with ``thread_wait``
    (:func:`scaled`), within :data:`FACTOR_RANGE`."""
    record = _read().get(model, {})
    entry = record.get(kind, {}) if isinstance(record, dict) else {}
    try:
        idle, excess = float(entry["idle"]), float(entry["excess"])
        measured = float(entry["measured"])
    except (KeyError, TypeError, ValueError):
        return 1.0
    predicted = idle + thread_wait * excess
    if not (predicted > 0 and measured > 0 and math.isfinite(measured / predicted)):
        return 1.0
    low, high = FACTOR_RANGE
    return min(max(measured / predicted, low), high)


def estimate(
    model: str,
    kind: str,
    idle_seconds: float,
    load: float | None = None,
    *,
    thread_wait: float = 1.0,
) -> float:
    """Seconds ``kind`` of work on ``model`` will take now: its idle prior, scaled by
    the share slowdown (``load``, or :func:`contention` now) with ``thread_wait``
    (:func:`scaled`), and by what earlier runs here measured."""
    slowdown = contention() if load is None else load
    return idle_seconds * scaled(slowdown, thread_wait) * factor(model, kind, thread_wait)


def record(model: str, kind: str, idle_seconds: float, measured: float, load: float) -> None:
    """Record a run: its idle prior, the share slowdown when it started
    (:func:`contention`), the seconds it took. Its idle seconds and their part lost to
    contention are kept apart, so that an estimate can weigh the latter with its
    model's thread wait (:func:`factor`)."""
    if measured < MIN_SECONDS or idle_seconds <= 0 or not math.isfinite(measured):
        return
    new = {
        "idle": idle_seconds,
        "excess": idle_seconds * max(0.0, load - 1.0),
        "measured": measured,
    }
    with _LOCK:
        data = _read()
        entries = data.get(model)
        entries = entries if isinstance(entries, dict) else {}
        old = entries.get(kind)
        old = old if isinstance(old, dict) else {}
        merged = {}
        for key, value in new.items():
            try:
                merged[key] = float(old.get(key, 0.0)) * DECAY + value
            except (TypeError, ValueError):
                merged[key] = value
        entries[kind] = merged
        data[model] = entries
        _write(timings_path(), {LAW_KEY: LAW, **data})


def _write(path: Path, data: object) -> None:
    """Write JSON atomically (a temporary file renamed into place); a cache that cannot
    be written only leaves the estimates uncalibrated."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".timings.", suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(name, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name)


def about(seconds: float) -> str:
    """A wait as people say it: ``"under a second"``, ``"about 8 s"``, ``"about 40 s"``,
    ``"about 3 min"``."""
    if seconds < 1:
        return "under a second"
    if seconds < 10:
        return f"about {round(seconds)} s"
    if seconds < 90:
        return f"about {5 * round(seconds / 5)} s"
    return f"about {round(seconds / 60)} min"
