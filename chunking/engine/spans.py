"""Sentence and paragraph spans with exact offsets.

Sentences come from Bling Fire (Microsoft's maintained segmenter), run paragraph by
paragraph. Its sentence *ends* are used to cut the source, so every character between
two ends belongs to exactly one sentence: nothing the segmenter skips or normalises can
be lost. Each span is then trimmed of surrounding whitespace.

Chinese and Japanese sentences end at ``。！？`` (the segmenter's own ends) and at the
full stops it misses (``．`` outside a number, the half-width ``｡``); closing quotes
and brackets after the end, and a repeated end (``！？``), stay with the sentence.

Segmenting a long document costs about 0.2 s per megabyte, and the report, the sentence
strategy and the app's pages all need the same sentences of the same document:
:func:`document_sentences` segments each long text once per process (a small cache keyed
by the text itself, so a changed text is segmented anew) and gives an immutable tuple.
Both take a ``progress`` callback, told after every block of paragraphs how many
characters are segmented (a 20 MB document takes seconds, a minute on a busy machine).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextvars import ContextVar
from functools import lru_cache

from ..model import Progress

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
#: A heading number or list marker on its own: "1.", "2.1.", "IV.", "a)", "(b)".
_MARKER = re.compile(r"\(?(?:\d{1,3}(?:\.\d{1,3})*|[IVXLCDM]{1,7}|[ivxlcdm]{1,7}|[A-Za-z])[.)]")
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
#: Closing quotes and brackets that follow a sentence end: 」』）】〕〉》”’.
_CLOSERS = "\u300d\u300f\uff09\u3011\u3015\u3009\u300b\u201d\u2019"
#: A full-width sentence end (。．｡！？) and the closers after it.
_FULL_WIDTH_END = re.compile(f"[\u3002\uff0e\uff61\uff01\uff1f]+[{_CLOSERS}]*")
#: What belongs to the end of the sentence before, when a sentence starts with it.
_LEADING_END = re.compile(f"[\u3002\uff0e\uff61\uff01\uff1f{_CLOSERS}]+")
#: About how many characters :func:`sentence_spans` segments between two progress reports.
PROGRESS_CHARS = 250_000
#: What :func:`sentence_spans` tells its ``progress`` it is doing.
SEGMENTING = "Finding sentence ends"


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow ``[start, end)`` to exclude leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Spans of paragraphs: text separated by one or more blank lines, trimmed."""
    spans = []
    start = 0
    for m in _PARAGRAPH_BREAK.finditer(text):
        a, b = strip_span(text, start, m.start())
        if b > a:
            spans.append((a, b))
        start = m.end()
    a, b = strip_span(text, start, len(text))
    if b > a:
        spans.append((a, b))
    return spans


def _segmenter_spans(text: str) -> list[tuple[int, int]]:
    """Spans of sentences as the segmenter ends them, trimmed; blank lines always end a
    sentence."""
    return _segmented(text, paragraph_spans(text))


def _segmented(text: str, paragraphs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """:func:`_segmenter_spans` of the given paragraphs of ``text``."""
    import blingfire

    spans: list[tuple[int, int]] = []
    for p_start, p_end in paragraphs:
        paragraph = text[p_start:p_end]
        _, offsets = blingfire.text_to_sentences_and_offsets(paragraph)
        cut = 0
        ends = [end for _, end in offsets[:-1]] + [len(paragraph)]
        for end in ends:
            end = min(max(end, cut), len(paragraph))
            a, b = strip_span(text, p_start + cut, p_start + end)
            if b > a:
                spans.append((a, b))
            cut = end
    return spans


def _full_width_ends(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The segmenter's sentences with full-width ends fixed (see the module docstring):
    closers and repeated ends at a sentence's start go back to the sentence before (not
    across a blank line), and a sentence is cut after each full-width end inside it."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        lead = _LEADING_END.match(text, a, b)
        if lead and out and not _BLANK_LINE.search(text, out[-1][1], a):
            out[-1] = (out[-1][0], lead.end())
            a, b = strip_span(text, lead.end(), b)
        for end in _FULL_WIDTH_END.finditer(text, a, b):
            cut = end.end()
            if cut < b and not (text[cut - 1] == "\uff0e" and text[cut].isdigit()):
                out.append(strip_span(text, a, cut))
                a, b = strip_span(text, cut, b)
        if b > a:
            out.append((a, b))
    return out


def sentence_spans(text: str, progress: Progress | None = None) -> list[tuple[int, int]]:
    """Spans of sentences, trimmed; blank lines always end a sentence, and a heading
    number or list marker stays with the text it numbers.

    The segmenter ends a sentence at the period of ``"1. Source Code."`` or of a
    ``"IV."`` that starts a line, leaving the marker as a sentence of its own or at the
    end of the previous one. A marker alone is joined to the sentence after it; a marker
    that ends the previous sentence on a line of its own moves to the next one. Never
    across a blank line.

    ``progress(done, len(text), "Finding sentence ends")`` is called after every block
    of paragraphs (about :data:`PROGRESS_CHARS` characters; ``done`` the characters
    segmented so far) and once at the end with ``done == len(text)``. Since nothing
    moves across a blank line, a block is finished before the next one starts, and the
    spans are the same with or without ``progress``.
    """
    out: list[tuple[int, int]] = []
    block: list[tuple[int, int]] = []
    for paragraph in paragraph_spans(text):
        block.append(paragraph)
        if paragraph[1] - block[0][0] >= PROGRESS_CHARS:
            out.extend(_markers_kept(text, _full_width_ends(text, _segmented(text, block))))
            block = []
            if progress is not None:
                progress(paragraph[1], len(text), SEGMENTING)
    out.extend(_markers_kept(text, _full_width_ends(text, _segmented(text, block))))
    if progress is not None:
        progress(len(text), len(text), SEGMENTING)
    return out


def _markers_kept(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with heading numbers and list markers joined to the text they number
    (:func:`sentence_spans`)."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and not _BLANK_LINE.search(text, out[-1][1], a):
            pa, pb = out[-1]
            line = max(pa, text.rfind("\n", pa, pb) + 1)
            if _MARKER.fullmatch(text, line, pb):
                if line == pa:
                    out[-1] = (pa, b)
                    continue
                out[-1] = strip_span(text, pa, line)
                a = line
        out.append((a, b))
    return out


#: Shorter texts are segmented on every call (quick) rather than kept: sections and
#: paragraphs segmented one by one would otherwise push whole documents out of the cache.
SHARED_MIN_CHARS = 10_000
#: How many long texts' sentences are kept (a megabyte of text has about 10,000).
SHARED_TEXTS = 8


def document_sentences(text: str, progress: Progress | None = None) -> tuple[tuple[int, int], ...]:
    """:func:`sentence_spans` of ``text``, as a tuple: the same spans, segmented once per
    process for each long text (the last :data:`SHARED_TEXTS` of at least
    :data:`SHARED_MIN_CHARS` characters) and shared by everything that asks.

    ``progress`` is told how far the segmenting is (:func:`sentence_spans`), only when
    it happens: a text already segmented is not segmented again, and the callback is
    not part of the cache's key."""
    if len(text) < SHARED_MIN_CHARS:
        return tuple(sentence_spans(text, progress))
    token = _PROGRESS.set(progress)
    try:
        return _shared_sentences(text)
    finally:
        _PROGRESS.reset(token)


#: The ``progress`` of the :func:`document_sentences` call in this thread, outside the
#: cache's key (nothing keeps it after the call).
_PROGRESS: ContextVar[Progress | None] = ContextVar("sentence_progress", default=None)


@lru_cache(maxsize=SHARED_TEXTS)
def _shared_sentences(text: str) -> tuple[tuple[int, int], ...]:
    # Keyed by the text itself (equal texts, equal key): never a stale or colliding hash.
    return tuple(sentence_spans(text, _PROGRESS.get()))
