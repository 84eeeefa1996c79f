"""Where models derived from the bundled all-MiniLM-L6-v2 (ONNX int8, static) are
built and kept: once per machine, under the user's cache directory, never half-written.

A build writes into a temporary folder next to its target and renames it into place
when it is complete; a rename is atomic, so a build that is killed leaves at most a
stray temporary folder (removed by the next build) and never a broken model. Two
processes building at once both succeed: the second rename finds the model there and
its own copy is dropped.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .cache import default_cache_dir

#: A temporary build folder older than this is from a build that died; it is removed.
STALE_SECONDS = 3600


def models_dir() -> Path:
    """Where derived models live: ``~/.cache/chunk-explorer/models`` (next to the
    embedding cache; ``XDG_CACHE_HOME`` moves both)."""
    return default_cache_dir().parent / "models"


def fingerprint(folder: Path) -> str:
    """A short digest of a model folder's file names and sizes: a derived model is built
    again when the model it comes from changes.

    The app asks on every rerun whether the derived models are built; walking the
    folder each time cost a tenth of a rerun. The digest is kept per folder and its
    modification time (one ``stat``), so a folder that changes is walked again."""
    return _fingerprint(folder.resolve(), folder.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _fingerprint(folder: Path, mtime_ns: int) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder)}:{path.stat().st_size};".encode())
    return digest.hexdigest()[:10]


def build_once(target: Path, make: Callable[[Path], None]) -> Path:
    """``target``, made by ``make(folder)`` into a temporary folder and renamed into
    place, unless it exists already."""
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target.parent)
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        make(folder)
        try:
            os.rename(folder, target)
        except OSError:
            if not target.is_dir():  # not another build's win: a real failure
                raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return target


def _remove_stale(parent: Path) -> None:
    now = time.time()
    for folder in parent.glob(".*.tmp"):
        try:
            if now - folder.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
