"""One checker for the promises every strategy makes, shared by all tests."""

from __future__ import annotations

from collections.abc import Sequence

from chunking import Chunk, Config
from chunking.units import get_sizer


def uncovered(text: str, chunks: Sequence[Chunk]) -> list[int]:
    """Offsets of non-whitespace characters that no chunk covers."""
    missing = []
    reach = 0
    spans = sorted((c.start, c.end) for c in chunks)
    spans.append((len(text), len(text)))
    for start, end in spans:
        if start > reach:
            missing.extend(i for i in range(reach, start) if not text[i].isspace())
        reach = max(reach, end)
    return missing


def check_each_chunk(text: str, chunks: Sequence[Chunk], config: Config) -> None:
    """What every chunk of every strategy and library engine promises: numbered in
    order, the exact source slice at its offsets, not empty nor whitespace alone, starts
    never decreasing, its size measured on what a model reads (its text, or the visible
    text it carries, after the context it carries) and within the limit or flagged."""
    sizer = get_sizer(config.unit)
    limit = config.limit
    previous_start = 0
    for i, c in enumerate(chunks):
        where = f"chunk {i} ({c.start}-{c.end})"
        assert c.index == i, f"chunk {i} has index {c.index}"
        assert text[c.start : c.end] == c.text, f"{where}: offsets do not match its text"
        assert c.text, f"{where} is empty"
        assert not c.text.isspace(), f"{where} is only whitespace: {c.text!r}"
        assert c.start >= previous_start, f"{where} starts before chunk {i - 1}"
        previous_start = c.start
        # A strategy that measures the text a reader sees (HTML) keeps it as visible_text;
        # a group of table rows reads its header first (context).
        measured = c.embedding_text
        assert c.size == sizer.size(measured), f"{where}: size is not what a model reads"
        if limit is not None and c.size > limit:
            assert any(f.startswith("over limit:") for f in c.flags), (
                f"{where} has size {c.size} > {limit} {config.unit} without a flag: {c.text!r}"
            )


def check_invariants(text: str, chunks: Sequence[Chunk], config: Config) -> None:
    """Assert offsets exact, order, non-empty, sizes measured and limited, coverage."""
    check_each_chunk(text, chunks, config)
    missing = uncovered(text, chunks)
    assert not missing, f"non-whitespace characters not covered at {missing[:10]}"


#: Flags that say a library chunk's text is not the library's own text.
ALTERED = ("text altered", "text not found")


def check_library_invariants(text: str, chunks: Sequence[Chunk], config: Config) -> None:
    """What a library engine promises (:mod:`chunking.libraries`): every chunk is the
    exact source slice at its offsets; where the library's offset or text differed, the
    chunk is flagged and keeps the library's value; sizes are measured and flagged over
    the limit; non-whitespace text no chunk covers is flagged, range by range, on a
    chunk."""
    check_each_chunk(text, chunks, config)
    declared: list[tuple[int, int]] = []
    for i, c in enumerate(chunks):
        where = f"chunk {i} ({c.start}-{c.end})"
        library_text = c.metadata.get("library_text")
        if library_text is not None:
            assert library_text != c.text, f"{where}: library_text kept although equal"
            assert any(f.startswith(ALTERED) for f in c.flags), (
                f"{where}: the library's text differs from the source but is not flagged"
            )
        if any(f.startswith(ALTERED) for f in c.flags):
            assert library_text is not None, f"{where}: flagged altered without library_text"
        reported = c.metadata.get("library_start")
        if reported is not None:
            assert reported != c.start, f"{where}: library_start kept although equal"
            assert any(f.startswith(("library offset", "text not found")) for f in c.flags), (
                f"{where}: the library reported offset {reported} but no flag says so"
            )
        declared.extend((a, b) for a, b in c.metadata.get("left_out", ()))
    missing = [i for i in uncovered(text, chunks) if not any(a <= i < b for a, b in declared)]
    assert not missing, f"non-whitespace characters lost without a flag at {missing[:10]}"
