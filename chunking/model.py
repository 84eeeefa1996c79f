"""The immutable chunk record shared by every strategy, the app and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .units import Sizer

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Piece(NamedTuple):
    """A span a strategy proposes; :func:`build_chunks` turns pieces into chunks."""

    start: int
    end: int
    metadata: Mapping[str, Any] = _EMPTY
    #: The piece's size when the strategy has already measured it (saves a re-count).
    size: int | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a document.

    Invariant: ``source[chunk.start:chunk.end] == chunk.text`` for the ``source`` the
    chunk was cut from. ``size`` is measured in the configured unit on what a model reads,
    :attr:`embedding_text`: ``text`` itself unless the strategy set a visible text or a
    context.

    ``metadata`` is read-only. Keys used across strategies:

    - ``boundary``: why this chunk ends where it does (``"separator"``, ``"size"``,
      ``"header"``, ``"end"``, ...).
    - ``header_path``: list of enclosing headers (Markdown, HTML).
    - ``level``: hierarchy level (parent-child) or header level.
    - ``parent``: index of the parent chunk (parent-child).
    - ``flags``: list of strings such as ``"over limit: unsplittable"``.
    - ``visible_text``: the text a reader sees (HTML in visible-text mode); ``size``
      measures it, see :attr:`embedding_text`.
    - ``context``: text a model reads before the chunk (a table's header, carried by
      every group of rows after the first), see :attr:`embedding_text`.
    """

    index: int
    start: int
    end: int
    text: str
    size: int
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False)

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid chunk span [{self.start}, {self.end})")
        if len(self.text) != self.end - self.start:
            raise ValueError("chunk text length does not match its span")
        if type(self.metadata) is not MappingProxyType:
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(self.metadata.get("flags", ()))

    @property
    def embedding_text(self) -> str:
        """What a model reads, searches or embeds for this chunk: its visible text when
        the strategy measured one (``metadata["visible_text"]``: HTML in visible-text
        mode), otherwise its text, after its ``metadata["context"]`` if it has one
        (:func:`in_context`). Offsets always refer to ``text``."""
        text = str(self.metadata.get("visible_text", self.text))
        return in_context(str(self.metadata.get("context") or ""), text)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (the JSONL/CSV row format)."""
        return {
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "size": self.size,
            "text": self.text,
            "metadata": dict(self.metadata),
        }


def in_context(context: str, text: str) -> str:
    """``text`` as a model reads it after ``context``: the context, a line break, the
    text (a table's header then its rows reads as a table); ``text`` alone without one."""
    return f"{context}\n{text}" if context else text


#: Flag for a chunk that is over the size limit because it cannot be split further
#: (for example a single character worth more tokens than the limit).
UNSPLITTABLE = "over limit: unsplittable"

#: ``progress(done, total, what)``: how much of a long task is done, out of how much, and
#: what it is doing now. Every long-running function of the core reports through one.
Progress = Callable[[int, int, str], None]
#: The ``total`` of a task whose progress is known as a fraction:
#: ``progress(round(fraction * STEPS), STEPS, what)``.
STEPS = 1000


def report_fraction(progress: Progress | None, fraction: float, what: str) -> None:
    """Report ``fraction`` (0 to 1) of a task to ``progress``, if there is one."""
    if progress is not None:
        progress(round(min(max(fraction, 0.0), 1.0) * STEPS), STEPS, what)


def build_chunks(text: str, pieces: Iterable[Piece], sizer: Sizer) -> list[Chunk]:
    """Number the pieces, cut their text and measure them: the one place where every
    strategy's pieces become chunks.

    Empty pieces and pieces of whitespace alone are dropped: they carry nothing to
    embed or retrieve, and every non-whitespace character stays covered without them.
    """
    chunks: list[Chunk] = []
    for start, end, metadata, size in pieces:
        if end <= start:
            continue
        piece_text = text[start:end]
        if piece_text.isspace():
            continue
        if size is None:
            size = sizer.size(piece_text)
        chunks.append(Chunk(len(chunks), start, end, piece_text, size, metadata))
    return chunks
