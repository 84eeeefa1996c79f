"""What the browser and the protocol clients share: the counts a session must show, the
documents, a phase's figures and problems, and where the CPU time of a phase went."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

import chunking
from chunking.documents.io import read_bytes
from tests.e2e.harness import cpu_seconds

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "datasets" / "chroma-eval" / "corpora"
NOVEL = ROOT.parent / "shared" / "datasets" / "books" / "pride_and_prejudice.txt"
SIZES = (600, 800, 400, 1200, 500)
DOC_CHARS = 1_000_000
TIMEOUT_MS = 180_000
#: A count other than the expected one, shown this long with the app idle, is wrong.
SETTLE_S = 10


def app_default() -> chunking.Config:
    """The configuration a new session starts with: the sidebar's strategy box starts at
    the registry's first strategy and every parameter at its default
    (``pages/config_controls.py``, ``param_widgets.param_start``)."""
    return chunking.Config.create(next(iter(chunking.strategies())))


def sample_path() -> Path:
    """The sample a new session opens (the app's ``DEFAULT_SAMPLE`` in its folder)."""
    from pages.sidebar import DEFAULT_SAMPLE, sample_dir

    return sample_dir() / DEFAULT_SAMPLE


def expected_count(text: str, size: int | None = None) -> str:
    """The core's chunk count for the app's default configuration (at ``size``), as the
    Chunks metric shows it."""
    config = app_default()
    if size is not None:
        config = chunking.Config.create(config.strategy, **{**config.params, "size": size})
    return f"{len(chunking.run(text, config)):,}"


def uploaded_text(data: bytes, name: str) -> str:
    """The text the app reads from an upload (the same reader)."""
    return read_bytes(data, name).text


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (nproc {os.cpu_count()})"


def percentile(seconds: list[float], q: float) -> float:
    """The ``q``-th percentile of ``seconds`` (not empty), the nearest rank."""
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def spread(seconds: list[float]) -> str:
    """p50, p95 and the maximum of ``seconds`` (not empty)."""
    p50, p95 = statistics.median(seconds), percentile(seconds, 95)
    return f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {max(seconds):.2f} s"


@dataclass
class Phase:
    """One phase's figures: the seconds until each expected count was shown, and
    (protocol clients) until each run's ``script_finished``; its problems."""

    name: str
    seconds: list[float] = field(default_factory=list)
    finished: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        problems = (
            f"wrong counts {len(self.wrong)}, time-outs {len(self.timeouts)}, "
            f"errors {len(self.errors)}"
        )
        if not self.seconds:
            return f"{self.name}: no measurement; {problems}"
        text = f"{self.name}: n={len(self.seconds)} {spread(self.seconds)}"
        if self.finished:
            text += f"; run finished {spread(self.finished)}"
        return f"{text}; {problems}"

    def problems(self) -> list[str]:
        """Every wrong count, time-out and error, one line each."""
        return (
            [f"wrong count: {w}" for w in self.wrong]
            + [f"time-out: {t}" for t in self.timeouts]
            + [f"error shown: {e}" for e in self.errors]
        )

    def absorb(self, other: Phase) -> None:
        """Take ``other``'s problems (a phase's opening steps) into this phase."""
        self.wrong.extend(other.wrong)
        self.timeouts.extend(other.timeouts)
        self.errors.extend(other.errors)


def documents(n: int, chars: int = DOC_CHARS) -> list[str]:
    """``n`` different documents of ``chars`` characters (1 MB) each, from the chroma-eval
    corpora."""
    sources = sorted(CORPORA.glob("*.md")) or sorted((ROOT / "sample_docs").glob("*.txt"))
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sources)
    while len(text) < 2 * chars:
        text += "\n\n" + text
    step = max(1, (len(text) - chars) // max(n, 1))
    return [f"Document {k}.\n\n" + text[k * step : k * step + chars] for k in range(n)]


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The server's resident memory in MB (``VmHWM``: its peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def attempt(phase: Phase, what: str, action: Awaitable[object]) -> bool:
    """Await ``action`` (a step of a phase: a fill, a click, an upload, a connection); a
    time-out or error is recorded in ``phase`` as a time-out with ``what`` was tried,
    never raised, so that the phase and the benchmark go on. True when it succeeded."""
    try:
        await action
    except Exception as exc:  # TimeoutError, a page or connection gone
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
        phase.timeouts.append(f"{what}: {type(exc).__name__} {first}".rstrip())
        return False
    return True


# ------------------------------------------------------------------ where the CPU went


def machine_cpu_seconds() -> float:
    """CPU seconds the whole machine has been busy, all cores together (``/proc/stat``:
    user, nice, system, irq, softirq and steal; guest time is counted within user)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(pid: int | None) -> float | None:
    """The server's user plus system CPU seconds (``/proc/PID/stat``), None when the bench
    did not start it or it is gone."""
    if pid is None:
        return None
    try:
        return cpu_seconds(pid)
    except OSError:
        return None


@dataclass(frozen=True)
class CpuMark:
    """The CPU clocks at one moment: wall time, the machine's busy seconds, the server's
    and this process's own (the benchmark's clients; Chromium is other processes)."""

    wall: float
    machine: float
    server: float | None
    bench: float

    @classmethod
    def now(cls, pid: int | None) -> CpuMark:
        return cls(
            time.perf_counter(), machine_cpu_seconds(), server_cpu_seconds(pid), time.process_time()
        )

    def since(self, before: CpuMark) -> str:
        """CPU seconds used from ``before`` to this mark, split between the server, this
        process and the rest of the machine (the browsers, other work)."""
        wall = self.wall - before.wall
        machine = self.machine - before.machine
        bench = self.bench - before.bench
        cores = os.cpu_count() or 1
        busy = f"{100 * machine / (cores * wall):.0f} %" if wall > 0 else "n/a"
        if self.server is None or before.server is None:
            server, rest = "server n/a (not started by the bench)", machine - bench
        else:
            used = self.server - before.server
            share = f"{100 * used / machine:.0f} %" if machine > 0 else "n/a"
            server, rest = f"server {used:.1f} s ({share} of the machine's)", machine - used - bench
        return (
            f"CPU: {server}, this process {bench:.1f} s, the rest {rest:.1f} s; machine "
            f"{machine:.1f} s of {cores} x {wall:.1f} s wall ({busy} busy)"
        )


async def measured(phases: list[Phase], phase: Phase, work: Awaitable[object], pid: int | None):
    """Run one phase (``work``, guarded by :func:`attempt`), then print its figures, the
    machine's load and where the CPU went during it."""
    phases.append(phase)
    before = CpuMark.now(pid)
    await attempt(phase, "the phase", work)  # whatever is left unguarded
    print(phase.line(), f"[{load()}]", flush=True)
    print(f"  {CpuMark.now(pid).since(before)}", flush=True)


def report_problems(phases: list[Phase]) -> None:
    for phase in phases:
        for problem in phase.problems():
            print(f"  {phase.name}: {problem}")
