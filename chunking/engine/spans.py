"""Sentence and paragraph spans with exact offsets.

Sentences come from Bling Fire (Microsoft's maintained segmenter), run paragraph by
paragraph. Its sentence *ends* are used to cut the source, so every character between
two ends belongs to exactly one sentence: nothing the segmenter skips or normalises can
be lost. Each span is then trimmed of surrounding whitespace.
"""

from __future__ import annotations

import re

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
#: A heading number or list marker on its own: "1.", "2.1.", "IV.", "a)", "(b)".
_MARKER = re.compile(r"\(?(?:\d{1,3}(?:\.\d{1,3})*|[IVXLCDM]{1,7}|[ivxlcdm]{1,7}|[A-Za-z])[.)]")
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


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


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Spans of sentences, trimmed; blank lines always end a sentence, and a heading
    number or list marker stays with the text it numbers.

    The segmenter ends a sentence at the period of ``"1. Source Code."`` or of a
    ``"IV."`` that starts a line, leaving the marker as a sentence of its own or at the
    end of the previous one. A marker alone is joined to the sentence after it; a marker
    that ends the previous sentence on a line of its own moves to the next one. Never
    across a blank line.
    """
    out: list[tuple[int, int]] = []
    for a, b in _segmenter_spans(text):
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
