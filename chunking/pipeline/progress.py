"""The progress line of a corpus run: documents, MB, chunks and time left.

Shown only on a terminal (a log file would fill with carriage returns), and redrawn
at most a few times a second so that a corpus of tiny files is not slowed by it.
"""

from __future__ import annotations

import time
from typing import TextIO

from .documents import Outcome

#: Seconds between two redraws.
REDRAW_EVERY = 0.2


def duration(seconds: float) -> str:
    """``'1:02:03'``, ``'4:05'``."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts documents, bytes and chunks; draws them on ``out`` when ``enabled``."""

    def __init__(self, documents: int, total_bytes: int, out: TextIO, *, enabled: bool) -> None:
        self.documents = documents
        self.total_bytes = max(total_bytes, 1)
        self.out = out
        self.enabled = enabled
        self.done = 0
        self.bytes = 0
        self.chunks = 0
        self.skipped = 0
        self.failed = 0
        self.started = time.perf_counter()
        self._drawn = 0.0

    def advance(self, outcome: Outcome) -> None:
        self.done += 1
        self.bytes += outcome.bytes
        self.chunks += outcome.chunks
        self.skipped += outcome.skipped
        self.failed += outcome.error is not None
        now = time.perf_counter()
        if self.enabled and (now - self._drawn >= REDRAW_EVERY or self.done == self.documents):
            self._drawn = now
            self.out.write("\r" + self.line(now - self.started))
            self.out.flush()

    def line(self, elapsed: float) -> str:
        fraction = min(self.bytes / self.total_bytes, 1.0)
        left = elapsed * (1 - fraction) / fraction if fraction > 0 else None
        eta = duration(left) if left is not None else "?"
        return (
            f"[{fraction:4.0%}] {self.done:,}/{self.documents:,} documents · "
            f"{self.bytes / 2**20:,.1f}/{self.total_bytes / 2**20:,.1f} MB · "
            f"{self.chunks:,} chunks · ETA {eta}  "
        )

    def close(self) -> None:
        if self.enabled and self.done:
            self.out.write("\n")
            self.out.flush()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started
