"""Model answers into chunk metadata: the first usable sentence of an answer, and the
chunks with a metadata field set (offsets and text never change).

Both contextual retrieval (:mod:`.contextual`) and enrichment (:mod:`.enrich`) build on
this module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..model import Chunk

_BARE_TAG = re.compile(r"</?[\w-]+>")


def annotate(chunks: Sequence[Chunk], key: str, values: Sequence[Any]) -> list[Chunk]:
    """The chunks with ``metadata[key]`` set to each value (offsets and text unchanged);
    an empty value (``""``, ``[]``) leaves the chunk as it was."""
    if len(values) != len(chunks):
        raise ValueError(f"{len(values)} values for {len(chunks)} chunks")
    return [
        replace(c, metadata={**c.metadata, key: value}) if value else c
        for c, value in zip(chunks, values, strict=True)
    ]


def first_sentence(answer: str, limit: int = 300) -> str:
    """The first line of an answer that is not a bare tag (small models echo the
    prompt's ``<chunk>``), without quotes or a label, at most ``limit`` chars."""
    lines = (ln.strip() for ln in answer.splitlines())
    line = next((ln for ln in lines if ln and not _BARE_TAG.fullmatch(ln)), "")
    line = line.strip('"“”').strip()
    line = re.sub(r"^(?:summary|context)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = line.strip('"“”').strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
