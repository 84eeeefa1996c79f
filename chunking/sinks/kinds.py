"""Which class writes which kind, and whether a folder is that kind of database.

The kinds' modules import their database library only when a sink is constructed, so
telling a Chroma folder from a LanceDB one needs none of them.
"""

from __future__ import annotations

from pathlib import Path

from .base import INSTALL_HINT, KINDS, Sink, SinkError, Target
from .chroma import ChromaSink
from .journal import JOURNAL_DIR
from .lance import LanceSink
from .qdrant import QdrantSink

SINKS: dict[str, type[Sink]] = {s.kind: s for s in (LanceSink, ChromaSink, QdrantSink)}
assert tuple(SINKS) == KINDS


def detect(folder: Path) -> type[Sink] | None:
    """The kind of database an existing folder holds, if any."""
    return next((s for s in SINKS.values() if s.looks_like(folder)), None)


def check_folder(target: Target, *, must_exist: bool) -> None:
    """Refuse a path that is not ``target``'s kind of database (a new or empty folder is
    one, unless ``must_exist``)."""
    path, kind = target.path, SINKS[target.kind]
    if not path.exists() or (
        path.is_dir() and all(p.name == JOURNAL_DIR for p in path.iterdir())
    ):  # empty, or holding only the marker of a write that stopped before creating it
        if must_exist:
            raise SinkError(f"{target}: no {kind.title} database there")
        return
    if not path.is_dir():
        raise SinkError(f"{target}: {path} is a file; give the {kind.title} database's folder")
    if kind.looks_like(path):
        return
    other = detect(path)
    hint = (
        f"it holds a {other.title} database: {other.kind}:{path}"
        if other is not None
        else f"give a new or empty folder, or one that {kind.title} wrote"
    )
    raise SinkError(f"{target}: {path} is not a {kind.title} database ({hint})")


def connect(target: Target, collection: str) -> Sink:
    """A client of ``target`` for ``collection``; a missing library names the extra."""
    kind = SINKS[target.kind]
    try:
        return kind(target, collection)
    except ImportError as exc:
        raise SinkError(
            f"{target.kind} sinks need {', '.join(kind.modules)} ({exc.name or exc}): "
            f"{INSTALL_HINT}"
        ) from None
