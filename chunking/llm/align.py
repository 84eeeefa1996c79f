"""Find where a model's text (a proposition, a quoted excerpt) sits in the source.

A language model rewrites: it changes case, punctuation, a word or two. :func:`locate`
first looks for the text verbatim; failing that, it compares words (case and punctuation
ignored) with :class:`difflib.SequenceMatcher` around each run of shared words and keeps
the best window, if its similarity reaches the threshold. What it returns is always a
real span of the source, with how similar it is; a text that matches nowhere well enough
gets ``None``, never a guessed position.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_WORD = re.compile(r"\w+")
#: Runs of shared words tried as anchors of a near match (the longest first).
MAX_ANCHORS = 24


@dataclass(frozen=True)
class Match:
    """``source[start:end]`` matches the text: verbatim, or with ``similarity`` < 1
    (the word-level ratio, 0 to 1)."""

    start: int
    end: int
    similarity: float
    verbatim: bool

    def describe(self) -> str:
        return "verbatim" if self.verbatim else f"near match, similarity {self.similarity:.2f}"


def locate(
    text: str,
    source: str,
    lo: int = 0,
    hi: int | None = None,
    *,
    prefer: int | None = None,
    min_similarity: float = 0.8,
) -> Match | None:
    """Where ``text`` is in ``source[lo:hi]``: verbatim (the first occurrence at or after
    ``prefer``, else the first), else the most similar run of words if at least
    ``min_similarity``, else None."""
    hi = len(source) if hi is None else hi
    needle = text.strip()
    if not needle:
        return None
    for begin in (max(lo, prefer if prefer is not None else lo), lo):
        found = source.find(needle, begin, hi)
        if found != -1:
            return Match(found, found + len(needle), 1.0, True)
    return _near(needle, source, lo, hi, min_similarity)


def _words(
    text: str, lo: int = 0, hi: int | None = None
) -> tuple[list[str], list[tuple[int, int]]]:
    found = list(_WORD.finditer(text, lo, len(text) if hi is None else hi))
    return [m.group().casefold() for m in found], [m.span() for m in found]


def _near(needle: str, source: str, lo: int, hi: int, threshold: float) -> Match | None:
    wanted, _ = _words(needle)
    words, spans = _words(source, lo, hi)
    if not wanted or not words:
        return None
    matcher = difflib.SequenceMatcher(None, words, wanted, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    best: tuple[float, int, int] | None = None
    for block in sorted(blocks, key=lambda b: -b.size)[:MAX_ANCHORS]:
        first = max(0, block.a - block.b)
        window = words[first : first + len(wanted)]
        inner = difflib.SequenceMatcher(None, window, wanted, autojunk=False)
        shared = [b for b in inner.get_matching_blocks() if b.size]
        if not shared:
            continue
        start, end = first + shared[0].a, first + shared[-1].a + shared[-1].size
        score = difflib.SequenceMatcher(None, words[start:end], wanted, autojunk=False).ratio()
        if best is None or score > best[0]:
            best = (score, start, end)
    if best is None or best[0] < threshold:
        return None
    score, start, end = best
    return Match(spans[start][0], spans[end - 1][1], round(score, 4), False)
