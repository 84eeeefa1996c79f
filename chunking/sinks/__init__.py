"""Chunks and their vectors into an embedded vector database, and searched back.

Three kinds run in-process on a folder, without a server (``pip install
'chunk-explorer[sinks]'``): ``lancedb`` (:mod:`.lance`), ``chroma`` (:mod:`.chroma`)
and ``qdrant`` in local mode (:mod:`.qdrant`). Each implements :class:`~.base.Sink`;
:mod:`.writer` checks a target before writing (:class:`SinkWriter`, used by
``chunk-explorer run --sink`` through :mod:`chunking.pipeline.sync`), writes records
(:func:`write_records`, for the app) and searches (:func:`search`, ``chunk-explorer
search``). Problems are :class:`SinkError`, a ``ValueError`` with one line to show.
"""

from __future__ import annotations

from ..model import Progress
from .base import (
    INSTALL_HINT,
    KINDS,
    Batch,
    Hit,
    SinkError,
    Target,
    Written,
    collection_name,
    record_id,
)
from .writer import Found, SinkWriter, search, write_records

__all__ = [
    "INSTALL_HINT",
    "KINDS",
    "Batch",
    "Found",
    "Hit",
    "Progress",
    "SinkError",
    "SinkWriter",
    "Target",
    "Written",
    "collection_name",
    "record_id",
    "search",
    "write_records",
]
