"""The entry points: :func:`chunk` and :func:`run` cut a document with one strategy."""

from __future__ import annotations

from typing import Any

from .config import Config
from .model import Chunk, build_chunks
from .units import get_sizer


def check_text(text: object) -> str:
    """Reject documents no strategy can cut, with a message that says why."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if not text:
        raise ValueError("the document is empty; give it some text")
    if text.isspace():
        raise ValueError("the document contains only whitespace; there is nothing to chunk")
    return text


def chunk(text: str, strategy: str = "recursive", **params: Any) -> list[Chunk]:
    """Cut ``text`` into chunks with exact offsets.

    For every chunk ``c``: ``text[c.start:c.end] == c.text``, ``c.size`` is measured in
    the configured unit on ``c.text``, starts never decrease and no chunk is empty.

        >>> [c.text for c in chunk("One. Two. Three.", "recursive", size=10)]
        ['One. Two.', 'Three.']
    """
    return run(text, Config.create(strategy, **params))


def run(text: str, config: Config) -> list[Chunk]:
    """Like :func:`chunk`, with an already validated :class:`Config`."""
    check_text(text)
    sizer = get_sizer(config.unit)
    pieces = config.spec.split(text, config.params, sizer)
    return build_chunks(text, pieces, sizer)
