"""semchunk, run by semchunk itself, with ``offsets=True``.

semchunk returns each chunk's ``(start, end)`` character offsets; :mod:`.align` checks
them. Its token counter is ours: characters, words or cl100k_base tokens (offline).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import Piece
from ..params import Param, Strategy
from ..units import Sizer
from .align import LibraryChunk, align
from .common import count_tokens, library_errors, require, size_param, unit_choice

LIBRARY = "semchunk"


def token_counter(unit: str) -> Callable[[str], int]:
    if unit == "chars":
        return len
    if unit == "words":
        return lambda text: len(text.split())
    return count_tokens()


def _semchunk(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    lib = require("semchunk", "semchunk", "semchunk")
    overlap = p["overlap"]
    with library_errors("semchunk", LIBRARY):
        chunker = lib.chunkerify(token_counter(p["unit"]), p["chunk_size"])
        texts, offsets = chunker(
            text, offsets=True, overlap=None if overlap == 0 else _overlap_value(overlap)
        )
    found = [LibraryChunk(t, start) for t, (start, _end) in zip(texts, offsets, strict=True)]
    return align(text, found, sizer, limit=p["chunk_size"])


def _overlap_value(overlap: float) -> float | int:
    """semchunk reads an overlap under 1 as a share of chunk_size, else as tokens."""
    return int(overlap) if overlap >= 1 else overlap


def _check_overlap(p: Mapping[str, Any]) -> None:
    overlap = p["overlap"]
    if overlap >= 1 and (overlap != int(overlap) or overlap >= p["chunk_size"]):
        raise ValueError(
            f"overlap ({overlap:g}) must be a share of chunk_size below 1 (like 0.2) or a "
            f"whole number of tokens below chunk_size ({p['chunk_size']})"
        )


SEMCHUNK = Strategy(
    "semchunk",
    label="semchunk",
    description="semchunk: split at the most meaningful separators available (new lines, "
    "tabs, spaces, sentence and clause punctuation), recursively, then merge up to "
    "chunk_size; whitespace at the edges is left out. Offsets are semchunk's own.",
    params=(
        size_param("chunk_size", 160, "Maximum tokens per chunk (see unit)."),
        Param(
            "overlap",
            float,
            0.0,
            "Overlap between chunks: under 1, a share of chunk_size (0.2 = 20%); from 1, a "
            "number of tokens; 0, none.",
            minimum=0,
            maximum=1_000_000,
        ),
        unit_choice(("tokens", "chars", "words"), "tokens", "chunk_size"),
    ),
    split=_semchunk,
    checks=(_check_overlap,),
    limit_param="chunk_size",
)

STRATEGIES = (SEMCHUNK,)
