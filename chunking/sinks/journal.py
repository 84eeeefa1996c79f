"""A write's journal: a marker in the database folder for as long as a write is unfinished.

:func:`chunking.sinks.write_records` writes a collection in slices. If the process ends
between two slices (the server restarted, the machine went down), the collection holds
some of the records and nothing in the database says so. So before the first record is
sent, :meth:`Journal.begin` leaves a small JSON marker in the folder
(``.chunk-explorer-writes/<collection>.json``: how many records, how many are written so
far, who writes), updates it after each slice and removes it once the write is complete.
A marker whose writer is gone means the collection is incomplete (:func:`unfinished`);
writing the same chunks again completes it without duplicates, because every record's id
is its document's content hash and the chunk's index and the sinks upsert.

Whether the writer is gone is told without touching the database's lock (a probe could
make a real writer fail): a marker of this process counts as running only while its
:class:`Journal` is open; one of another process while a process with that id and the
same start time lives on this machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import Progress

#: The folder of markers inside a database folder (the kinds' detection ignores it).
JOURNAL_DIR = ".chunk-explorer-writes"

#: Markers of the writes running in this process (resolved paths).
_OPEN: set[Path] = set()
_OPEN_LOCK = threading.Lock()


def marker_path(folder: Path, collection: str) -> Path:
    """Where the marker of ``collection``'s unfinished write in ``folder`` is kept."""
    return folder / JOURNAL_DIR / f"{collection}.json"


def _started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), so that a
    process id used again after a restart is not taken for the writer; "" elsewhere."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    return _started(pid) == started


@dataclass(frozen=True)
class Unfinished:
    """A write of ``collection`` that has not completed: ``done`` of ``total`` records
    were confirmed written (the slice being sent when the process died may have reached
    the database too); ``running`` when its writer is still at it."""

    collection: str
    total: int
    done: int
    started: str
    running: bool

    def message(self, where: str) -> str:
        """One line for the user (``where``: the database, e.g. ``lancedb:/data/vectors``)."""
        if self.running:
            return (
                f"Collection {self.collection} in {where} is being written right now "
                f"({self.done:,} of {self.total:,} records so far, started {self.started})."
            )
        return (
            f"Collection {self.collection} in {where} is incomplete: a write started "
            f"{self.started} stopped part-way ({self.done:,} of {self.total:,} records "
            "confirmed written; the server restarted or the write was interrupted). Write "
            "again to complete "
            "it: records are replaced by their id (document hash and chunk index), so "
            "nothing is duplicated."
        )


def _read(path: Path, collection: str) -> Unfinished | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pid, started = int(data["pid"]), str(data["process_started"])
        mine = pid == os.getpid() and data.get("host") == socket.gethostname()
        with _OPEN_LOCK:
            running = path.resolve() in _OPEN if mine else False
        if not mine and data.get("host") == socket.gethostname():
            running = _alive(pid, started)
        return Unfinished(
            collection=str(data.get("collection", collection)),
            total=int(data["total"]),
            done=int(data["done"]),
            started=str(data.get("started", "at an unknown time")),
            running=running,
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):  # a torn or foreign file
        return Unfinished(collection, 0, 0, "at an unknown time", running=False)


def unfinished(folder: Path, collection: str) -> Unfinished | None:
    """The unfinished write of ``collection`` in ``folder``, or None (also when the
    folder does not exist). Reads one small file: cheap enough for every rerun."""
    return _read(marker_path(folder, collection), collection)


def unfinished_in(folder: Path) -> list[Unfinished]:
    """Every unfinished write in ``folder``, by collection name."""
    journal = folder / JOURNAL_DIR
    if not journal.is_dir():
        return []
    found = (_read(p, p.stem) for p in sorted(journal.glob("*.json")))
    return [u for u in found if u is not None]


class Journal:
    """The marker of one write (:meth:`begin`, :meth:`advance`, :meth:`finish`)."""

    def __init__(self, path: Path, fields: dict[str, Any], previous: str | None) -> None:
        self.path = path
        self._fields = fields
        self._previous = previous

    @classmethod
    def begin(cls, folder: Path, collection: str, total: int) -> Journal:
        """Mark ``collection`` in ``folder`` (which exists, locked by the writer) as
        being written with ``total`` records; an earlier unfinished marker is kept
        aside, to be put back if this write ends before writing anything."""
        path = marker_path(folder, collection)
        try:
            previous: str | None = path.read_text(encoding="utf-8")
        except OSError:
            previous = None
        pid = os.getpid()
        fields = {
            "collection": collection,
            "total": total,
            "done": 0,
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "pid": pid,
            "process_started": _started(pid),
            "host": socket.gethostname(),
        }
        journal = cls(path, fields, previous)
        with _OPEN_LOCK:
            _OPEN.add(path.resolve())
        journal._store(fields)
        return journal

    def _store(self, fields: dict[str, Any]) -> None:
        self.path.parent.mkdir(exist_ok=True)
        partial = self.path.with_name(self.path.name + ".tmp")
        partial.write_text(json.dumps(fields), encoding="utf-8")
        partial.replace(self.path)  # atomic: a reader never sees half a marker

    def advance(self, done: int) -> None:
        """``done`` records are written."""
        self._fields["done"] = done
        self._store(self._fields)

    def reporting(self, progress: Progress | None) -> Progress:
        """A progress callback that advances the marker, then calls ``progress``."""

        def report(done: int, total: int, what: str) -> None:
            self.advance(done)
            if progress is not None:
                progress(done, total, what)

        return report

    def _close(self) -> None:
        with _OPEN_LOCK:
            _OPEN.discard(self.path.resolve())

    def finish(self) -> None:
        """The write is complete: remove the marker (and its folder when empty)."""
        self._close()
        self.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # other collections' markers, or already gone
            self.path.parent.rmdir()

    def stop(self, wrote: bool) -> None:
        """The write ended early: the marker stays (the collection is incomplete); when
        nothing was written the collection is as it was, so the earlier marker comes
        back, or none."""
        self._close()
        if wrote or not self.path.parent.is_dir():
            return
        if self._previous is None:
            self.finish()
        else:
            self.path.write_text(self._previous, encoding="utf-8")
