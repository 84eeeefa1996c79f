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

- **contention** (:func:`contention`): the machine may be shared. A job is slowed
  down linearly by the other work, :data:`SLOPE` times the 1-minute load average per
  CPU above :data:`FREE_LOAD`: on a full machine each runnable task gets its share of
  the CPUs, and an embedding's threads wait for each other besides, so it loses more
  than its share. Measured here (2 CPUs, ``bench/bench_estimates.py --contention``),
  an embedding took 6.2 times its idle prior at a load of 3.6, 31 at 25.5 and 59 at
  33 (the law says 5.2, 35 and 45; the old law, the square of the load, said 7.7, 385
  and 650). The load average lags: when the load has just risen, the tasks running
  during the job predict it better than the average at its start. Busy loops in the
  job's own session slow it down by (its 2 threads + the loops) / 2 whatever the load
  average, the share Linux gives it within a session ("autogroup"). An estimate is
  scaled by the load now, and a measurement is compared with the prior scaled by the
  load when it started.
- **calibration**: every load, build and embedding run of at least
  :data:`MIN_SECONDS` is recorded with what the scaled prior predicted, per model and
  kind, in ``timings.json`` in the user's cache folder (``~/.cache/chunk-explorer``,
  ``XDG_CACHE_HOME`` honoured; never in the checkout). The next estimate is the scaled
  prior times measured over predicted, in which each new run counts as much as all
  the earlier ones together (:data:`DECAY`), so the estimate follows this machine.

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
#: Load average per CPU under which a job runs at full speed (:func:`contention`).
FREE_LOAD = 0.25
#: How much slower a job gets per unit of load average per CPU above :data:`FREE_LOAD`.
SLOPE = 2.7
#: The law the records were predicted with: records of another law are not read.
LAW = f"linear {SLOPE} above {FREE_LOAD}"
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


def slowdown(load: float, cpus: int) -> float:
    """How many times longer a CPU-bound job takes at this 1-minute load average on
    ``cpus`` CPUs than on an idle machine: 1, plus :data:`SLOPE` for every unit of load
    per CPU above :data:`FREE_LOAD`."""
    return 1.0 + SLOPE * max(0.0, load / max(cpus, 1) - FREE_LOAD)


def contention() -> float:
    """:func:`slowdown` at the machine's load now (1 where the load cannot be read)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1.0
    return slowdown(load, os.cpu_count() or 1)


def single_thread(slowdown: float) -> float:
    """The slowdown of work done on one thread (a database's write, UMAP's fit) where
    an embedding's is ``slowdown``: one thread gets its share of the CPUs and waits for
    no other, 1 plus the load per CPU above :data:`FREE_LOAD` (the map's UMAP fit took
    8.7 times its CPU seconds at a load of 12.7 on 2 CPUs; this says 7.1)."""
    return 1.0 + max(0.0, slowdown - 1.0) / SLOPE


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


def factor(model: str, kind: str) -> float:
    """Measured over predicted seconds of ``model``'s recorded runs of ``kind`` (1 when
    none is recorded), within :data:`FACTOR_RANGE`."""
    record = _read().get(model, {})
    entry = record.get(kind, {}) if isinstance(record, dict) else {}
    try:
        predicted, measured = float(entry["predicted"]), float(entry["measured"])
    except (KeyError, TypeError, ValueError):
        return 1.0
    if not (predicted > 0 and measured > 0 and math.isfinite(measured / predicted)):
        return 1.0
    low, high = FACTOR_RANGE
    return min(max(measured / predicted, low), high)


def estimate(model: str, kind: str, idle_seconds: float, load: float | None = None) -> float:
    """Seconds ``kind`` of work on ``model`` will take now: its idle prior, scaled by
    the contention (``load``, or now) and by what earlier runs here measured."""
    scale = contention() if load is None else load
    return idle_seconds * scale * factor(model, kind)


def record(model: str, kind: str, idle_seconds: float, measured: float, load: float) -> None:
    """Record a run: its idle prior, the contention when it started, the seconds it took."""
    predicted = idle_seconds * load
    if measured < MIN_SECONDS or predicted <= 0 or not math.isfinite(measured):
        return
    with _LOCK:
        data = _read()
        entries = data.get(model)
        entries = entries if isinstance(entries, dict) else {}
        old = entries.get(kind)
        old = old if isinstance(old, dict) else {}
        try:
            before = (float(old.get("predicted", 0.0)), float(old.get("measured", 0.0)))
        except (TypeError, ValueError):
            before = (0.0, 0.0)
        entries[kind] = {
            "predicted": before[0] * DECAY + predicted,
            "measured": before[1] * DECAY + measured,
        }
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
