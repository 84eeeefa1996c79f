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


def check_invariants(text: str, chunks: Sequence[Chunk], config: Config) -> None:
    """Assert offsets exact, order, non-empty, sizes measured and limited, coverage."""
    sizer = get_sizer(config.unit)
    limit = config.limit
    previous_start = 0
    for i, c in enumerate(chunks):
        assert c.index == i, f"chunk {i} has index {c.index}"
        assert text[c.start : c.end] == c.text, f"chunk {i}: offsets do not match its text"
        assert c.text, f"chunk {i} is empty"
        assert c.start >= previous_start, f"chunk {i} starts before chunk {i - 1}"
        previous_start = c.start
        assert c.size == sizer.size(c.text), f"chunk {i}: size is not its own text's size"
        if limit is not None and c.size > limit:
            assert any(f.startswith("over limit:") for f in c.flags), (
                f"chunk {i} has size {c.size} > {limit} {config.unit} without a flag: {c.text!r}"
            )
    missing = uncovered(text, chunks)
    assert not missing, f"non-whitespace characters not covered at {missing[:10]}"
