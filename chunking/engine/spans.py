"""Sentence and paragraph spans with exact offsets.

Sentences come from Bling Fire (Microsoft's maintained segmenter), run paragraph by
paragraph. Its sentence *ends* are used to cut the source, so every character between
two ends belongs to exactly one sentence: nothing the segmenter skips or normalises can
be lost. Each span is then trimmed of surrounding whitespace.
"""

from __future__ import annotations

import re

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")


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


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Spans of sentences, trimmed; blank lines always end a sentence."""
    import blingfire

    spans: list[tuple[int, int]] = []
    for p_start, p_end in paragraph_spans(text):
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
