"""HTML that shows a question's gold spans and retrieved chunks on the document.

Every piece of document text goes through :func:`html.escape`; the only markup is the
``<div>``/``<span>`` elements built here, so the result is safe to show with
``unsafe_allow_html``. Only excerpts are drawn: each gold span and retrieved chunk with
``context`` characters around it; the text between excerpts is replaced by a marker
saying how much was left out.

Segments are classed ``ev-gold`` (gold, not retrieved), ``ev-ret`` (retrieved, not gold)
and ``ev-both`` (gold text that was retrieved). They differ in colour *and* in type (gold
is underlined, gold that was retrieved is also bold), so they stay apart without colour.
A badge ``#rank · score`` marks where each retrieved chunk starts; hovering a segment
names the chunks that cover it.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence

import numpy as np

from ..evaluation.spans import SpanArray, as_spans, union

#: Style for the classes below; a page injects it once.
EVIDENCE_CSS = """
.ev-doc { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace,
  SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; line-height: 1.6;
  padding: 0.75rem; border: 1px solid rgba(128,128,128,0.35); border-radius: 0.5rem;
  max-height: 560px; overflow-y: auto; }
.ev-doc .ev-gold { background: rgba(255, 193, 7, 0.45); text-decoration: underline
  solid 2px rgba(191, 120, 0, 0.95); text-underline-offset: 3px; }
.ev-doc .ev-ret { background: rgba(66, 133, 244, 0.18); }
.ev-doc .ev-both { background: rgba(46, 160, 67, 0.40); font-weight: 600;
  text-decoration: underline solid 2px rgba(21, 101, 36, 0.95); text-underline-offset: 3px; }
.ev-doc .ev-rank::before { content: attr(data-r); display: inline-block; font-family:
  sans-serif; font-size: 0.66rem; line-height: 1.2; color: #fff; background: #1a73e8;
  border-radius: 3px; padding: 0 4px; margin: 0 3px; vertical-align: 0.3em; }
.ev-doc .ev-gap { display: block; color: gray; font-style: italic; margin: 0.4rem 0;
  font-family: sans-serif; }
.ev-legend span { padding: 0 0.4rem; margin-right: 0.5rem; }
"""

LEGEND_HTML = (
    '<div class="ev-doc ev-legend" style="max-height:none;padding:0.3rem 0.6rem">'
    '<span class="ev-gold">gold, not retrieved</span>'
    '<span class="ev-both">gold and retrieved</span>'
    '<span class="ev-ret">retrieved, not gold</span></div>'
)

#: ``(start, end, rank, score)`` of one retrieved chunk.
Hit = tuple[int, int, int, float]


def excerpt_windows(length: int, marked: SpanArray, context: int) -> SpanArray:
    """The parts of a document to draw: every marked span widened by ``context``."""
    if len(marked) == 0:
        return as_spans([(0, min(length, 2 * context))]) if length else as_spans([])
    wide = np.column_stack(
        [np.clip(marked[:, 0] - context, 0, length), np.clip(marked[:, 1] + context, 0, length)]
    )
    return union(wide)


def _segment_class(gold: bool, ranks: list[int]) -> str:
    if gold and ranks:
        return "ev-both"
    if gold:
        return "ev-gold"
    return "ev-ret" if ranks else ""


def _segment_title(gold: bool, hits: list[Hit]) -> str:
    parts = ["gold"] if gold else []
    parts += [f"retrieved #{rank} (score {score:.3f})" for _, _, rank, score in hits]
    return ", ".join(parts)


def _window_html(text: str, lo: int, hi: int, gold: SpanArray, hits: Sequence[Hit]) -> str:
    cuts = {lo, hi}
    for s, e in gold:
        cuts.update(int(v) for v in (s, e) if lo < v < hi)
    for s, e, _, _ in hits:
        cuts.update(v for v in (s, e) if lo < v < hi)
    starts = {s: (rank, score) for s, _, rank, score in sorted(hits, key=lambda h: -h[2])}
    bounds = sorted(cuts)
    out = []
    for a, b in itertools.pairwise(bounds):
        if a in starts:
            rank, score = starts[a]
            out.append(f'<span class="ev-rank" data-r="#{rank} · {score:.2f}"></span>')
        covering = [h for h in hits if h[0] <= a and b <= h[1]]
        is_gold = bool(((gold[:, 0] <= a) & (b <= gold[:, 1])).any()) if len(gold) else False
        css = _segment_class(is_gold, [h[2] for h in covering])
        piece = html.escape(text[a:b])
        if css:
            title = html.escape(_segment_title(is_gold, covering), quote=True)
            out.append(f'<span class="{css}" title="{title}">{piece}</span>')
        else:
            out.append(piece)
    return "".join(out)


def _gap(characters: int) -> str:
    return f'<span class="ev-gap">[… {characters:,} characters not shown …]</span>'


def evidence_html(text: str, gold: SpanArray, hits: Sequence[Hit] = (), context: int = 200) -> str:
    """Excerpts of ``text`` with ``gold`` spans and retrieved ``hits`` marked.

    ``hits`` are ``(start, end, rank, score)``; ranks start at 1.
    """
    gold = union(as_spans(gold))
    retrieved = as_spans([(s, e) for s, e, _, _ in hits])
    windows = excerpt_windows(len(text), np.concatenate([gold, retrieved]), context)
    parts = []
    previous = 0
    for lo, hi in windows:
        lo, hi = int(lo), int(hi)
        if lo > previous:
            parts.append(_gap(lo - previous))
        parts.append(_window_html(text, lo, hi, gold, hits))
        previous = hi
    if previous < len(text):
        parts.append(_gap(len(text) - previous))
    return f'<div class="ev-doc">{"".join(parts)}</div>'
