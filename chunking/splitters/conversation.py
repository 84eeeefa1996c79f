"""Conversation chunking: whole chat messages packed up to the size limit.

A message starts at a *speaker line* and runs until the next one, so multi-line
messages, lists and ``> quoted`` lines stay with the message they belong to. Speaker
lines recognised:

- ``Speaker: text``
- ``[10:14] Speaker: text``, ``[2024-03-02 10:14] Speaker: text`` (any bracketed time)
- ``2024-03-02 10:14 - Speaker: text``, ``02/03/2024, 10:14 - Speaker: text`` (WhatsApp)
- ``<Speaker> text``, also after a timestamp (IRC)
- ``**Speaker:** text`` and ``**Speaker**: text`` (Markdown transcripts)
- ``Speaker  10:14 AM`` alone on a line, the message on the lines below (Slack)

Only lines that start with a timestamp may be indented (indented ``key: value`` lines
are YAML or code). A log uses one layout, so only the layout with the most speaker
lines counts; this keeps a header such as ``Channel: support`` above a timestamped log
out of the messages. Without timestamps, ``Word: text`` lines are common in ordinary
documents (``Note: ...``, ``Date: ...``, YAML), so such a layout counts only if its
speakers talk more than once on average, or, in a short log, if speaker lines make at
least a quarter of the lines and someone speaks twice. Text before the first message is
kept as a message without a speaker. When no layout qualifies, the text is not treated
as a chat: paragraphs are packed instead, and every chunk says so in
``metadata["note"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..engine.segments import pack_spans
from ..engine.spans import strip_span
from ..model import Piece
from ..units import Sizer
from .sentences import packing_strategy, paragraph_pieces

NO_CHAT_NOTE = "no chat messages detected; packed paragraphs"

_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?"
_DATE = r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{2,4})"
_STAMP = rf"(?:{_DATE}(?:,?\s+|T){_TIME}|{_DATE}|{_TIME})"
#: A candidate name; :func:`_plausible_name` decides.
_NAME = r"(?P<speaker>[^\W\d][^:<>*\n]{0,39}?)"
_NICK = r"<(?P<speaker>[@+%~&]?[^\s<>]{1,32})>"

_PREFIXES = {  # name -> pattern; a non-empty prefix is a timestamp
    "[time] ": rf"\[{_STAMP}\][ \t]*",
    "time - ": rf"{_DATE},?[ \t]+{_TIME}[ \t]+[-–—][ \t]+",
    "": "",
}
_STYLES = {
    "Speaker: text": rf"{_NAME}:[ \t]+\S",
    "<Speaker> text": rf"{_NICK}[ \t]+\S",
    "**Speaker:** text": rf"\*\*{_NAME}(?::\*\*|\*\*:)[ \t]+\S",
}


@dataclass(frozen=True)
class _Layout:
    """One way of writing speaker lines."""

    name: str
    pattern: re.Pattern[str]
    #: Lines start with a timestamp: specific enough to trust on its own.
    timed: bool
    #: Slack-like header: multi-word names must be capitalised.
    header: bool = False
    #: Check the name with :func:`_plausible_name` (IRC nicks are checked by the pattern).
    check_name: bool = True


def _layouts() -> list[_Layout]:
    """Every layout, the more specific first (they win ties)."""
    out = [
        # only timestamped lines may be indented: indented "key: value" is YAML or code
        _Layout(
            prefix_name + style_name,
            re.compile(rf"[ \t]*{prefix}{style}" if prefix else style),
            timed=bool(prefix),
            check_name=style != _STYLES["<Speaker> text"],
        )
        for prefix_name, prefix in _PREFIXES.items()
        for style_name, style in _STYLES.items()
    ]
    header = re.compile(rf"{_NAME}[ \t]+\[?{_TIME}\]?[ \t]*\r?$")
    out.append(_Layout("Speaker  10:14 AM", header, timed=False, header=True))
    return out


_LAYOUTS = _layouts()
_NOT_IN_NAMES = frozenset(',;!?"“”{}[]=/\\|#$%&+`~')


def _plausible_name(name: str, *, capitalised: bool = False) -> bool:
    """Whether ``name`` looks like a speaker rather than the start of a sentence.

    At most four words and 40 characters, starting with a letter or ``@``, without
    sentence punctuation or code symbols. With ``capitalised``, every word after the
    first must start with a capital, a digit or ``(`` (for Slack headers, where
    "See you at 10:30" would otherwise look like one).
    """
    words = name.split()
    if not words or len(words) > 4 or len(name) > 40:
        return False
    if not (name[0].isalpha() or name[0] == "@") or _NOT_IN_NAMES.intersection(name):
        return False
    if capitalised:
        return all(w[0].isupper() or w[0].isdigit() or w[0] == "(" for w in words[1:])
    return True


def _looks_like_chat(layout: _Layout, heads: list[tuple[int, str]], lines: int) -> bool:
    """Whether these speaker lines, out of ``lines`` non-blank lines, make a conversation.

    At least two are needed. Without timestamps, ``Word: text`` lines are common in
    ordinary documents (``Note: ...``, ``Date: ...``, YAML, code), so the speakers must
    also talk more than once on average, or, in a short log, the speaker lines must be
    at least a quarter of the lines with a speaker repeated.
    """
    if len(heads) < 2:
        return False
    if layout.timed:
        return True
    n, distinct = len(heads), len({speaker for _, speaker in heads})
    if distinct <= max(2, n // 2):
        return True
    return 4 * n >= lines and distinct < n and 4 * distinct <= 3 * n


@dataclass(frozen=True)
class Message:
    """A message's span (trimmed) and speaker; ``None`` for text before the first one."""

    start: int
    end: int
    speaker: str | None


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line's start offset and text (without its newline)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield start, text[start:end]
        start = end + 1


def _speaker_lines(text: str) -> tuple[str | None, list[tuple[int, str]]]:
    """The dominant layout and its speaker lines as (line start, speaker).

    ``(None, [])`` when no layout looks like a conversation.
    """
    found: dict[str, list[tuple[int, str]]] = {layout.name: [] for layout in _LAYOUTS}
    lines = 0
    for start, line in _lines(text):
        lines += bool(line.strip())
        for layout in _LAYOUTS:
            m = layout.pattern.match(line)
            if m is None:
                continue
            speaker = m.group("speaker").strip()
            if not layout.check_name or _plausible_name(speaker, capitalised=layout.header):
                found[layout.name].append((start, speaker))
                break
    chats = [layout for layout in _LAYOUTS if _looks_like_chat(layout, found[layout.name], lines)]
    if not chats:
        return None, []
    best = max(chats, key=lambda layout: len(found[layout.name]))  # first wins ties
    return best.name, found[best.name]


def detect_messages(text: str) -> tuple[str | None, list[Message]]:
    """The detected layout and the messages of ``text``; ``(None, [])`` if not a chat.

    Messages cover every non-whitespace character from the first speaker line on; text
    before it becomes a message with ``speaker=None``.
    """
    layout, heads = _speaker_lines(text)
    if not heads:
        return None, []
    messages = []
    starts = [start for start, _ in heads]
    if text[: starts[0]].strip():
        messages.append(Message(*strip_span(text, 0, starts[0]), None))
    for (start, speaker), end in zip(heads, [*starts[1:], len(text)], strict=True):
        a, b = strip_span(text, start, end)
        messages.append(Message(a, b, speaker))
    return layout, messages


def conversation_pieces(text: str, sizer: Sizer, size: int, overlap: int = 0) -> Iterator[Piece]:
    """Whole messages packed up to ``size``; ``overlap`` counts messages."""
    layout, messages = detect_messages(text)
    if not messages:
        return paragraph_pieces(text, sizer, size, overlap, lambda i, j: {"note": NO_CHAT_NOTE})

    def describe(first: int, stop: int) -> dict[str, Any]:
        chunk_messages = messages[first:stop]
        speakers = [m.speaker for m in chunk_messages if m.speaker is not None]
        return {
            "speakers": list(dict.fromkeys(speakers)),
            "messages": len(speakers),
            "chat_format": layout,
        }

    return pack_spans(
        text,
        [(m.start, m.end) for m in messages],
        sizer,
        size,
        kind="message",
        overlap_segments=overlap,
        describe=describe,
    )


CONVERSATION = packing_strategy(
    "conversation",
    "Conversation",
    "Whole chat messages packed into each chunk up to the size limit. Speaker lines are "
    "recognised in common chat-log layouts (Speaker: text, [time] Speaker: text, WhatsApp "
    "exports, IRC <nick>, **Speaker:**, Slack headers); a message runs until the next "
    "speaker line. Text that is not a chat is packed by paragraphs instead.",
    conversation_pieces,
    size=160,
    unit="tokens",
    what="messages",
    purpose=", to keep the context of a reply",
)
