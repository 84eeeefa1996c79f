"""Context for embedding: a short text placed before each chunk when it is embedded or
indexed, never inside the chunk (its offsets and text stay as they are).

A context provider is ``(document, chunks, title) -> one string per chunk`` ("" for
none). Two are built in:

- ``headers``: the document's title and the chunk's heading path, e.g.
  ``"guide.md > Install > From source"``. The Markdown and HTML strategies record the
  path as ``header_path``; for every other strategy it is computed from the Markdown
  headings that precede the chunk's start (a document without headings gets its title
  alone). No model is needed. A group of table rows that carries its table's header
  (``metadata["context"]`` from the markdown, html or table strategy) keeps it, on the
  line after the path: ``"sales.csv\nid,region,amount"``.
- ``llm``: one situating sentence per chunk written by a language model
  (``chunking.llm.contextual.llm_contexts``, imported only when chosen), followed by
  the table header the same way.

:func:`with_context` stores the context in each chunk's metadata (key ``context``), so
that the app can show it; :func:`embedded_text` is what the model or BM25 then sees.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..model import Chunk
from ..splitters.markdown import markdown_layout, sections

#: ``(document_text, chunks, title) -> one context string per chunk``.
ContextProvider = Callable[[str, Sequence[Chunk], str], list[str]]
#: Metadata key the context is stored under.
CONTEXT_KEY = "context"
PATH_SEPARATOR = " > "
#: Deepest Markdown heading level (``######``).
_DEEPEST = 6


def heading_paths(document: str, chunks: Sequence[Chunk]) -> list[tuple[str, ...]]:
    """Each chunk's heading path: its ``header_path`` metadata where a strategy set
    one, else the Markdown headings enclosing its start."""
    found = [c.metadata.get("header_path") for c in chunks]
    if all(isinstance(p, (list, tuple)) for p in found):
        return [tuple(str(h) for h in p) for p in found if isinstance(p, (list, tuple))]
    parts = sections(document, markdown_layout(document).headings, _DEEPEST)
    starts = [s.start for s in parts]
    out = []
    for chunk, path in zip(chunks, found, strict=True):
        if isinstance(path, (list, tuple)):
            out.append(tuple(str(h) for h in path))
        else:
            out.append(parts[max(0, bisect.bisect_right(starts, chunk.start) - 1)].path)
    return out


def header_contexts(document: str, chunks: Sequence[Chunk], title: str) -> list[str]:
    """``title > heading > subheading`` for each chunk (empty parts left out), then the
    table header of a group of table rows (:func:`with_table_headers`)."""
    paths = [
        PATH_SEPARATOR.join(p for p in (title, *path) if p.strip())
        for path in heading_paths(document, chunks)
    ]
    return with_table_headers(chunks, paths)


def table_header(chunk: Chunk) -> str:
    """The header a group of table rows carries from its strategy (its ``context``);
    "" for any other chunk."""
    if "table_group" not in chunk.metadata:
        return ""
    return str(chunk.metadata.get(CONTEXT_KEY) or "")


def with_table_headers(chunks: Sequence[Chunk], contexts: Sequence[str]) -> list[str]:
    """Each context followed by the chunk's table header on the next line, if it has
    one: a context technique replaces ``metadata["context"]``, and a group of rows must
    not lose the names of its columns."""
    return [
        "\n".join(part for part in (context, table_header(c)) if part)
        for c, context in zip(chunks, contexts, strict=True)
    ]


def llm_provider(llm: Any) -> ContextProvider:
    """The ``llm`` context provider around a client of :mod:`chunking.llm`."""
    try:
        from ..llm.contextual import llm_contexts  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ValueError(
            "the llm context needs the chunking.llm package, which is not installed here"
        ) from None

    def provide(document: str, chunks: Sequence[Chunk], title: str) -> list[str]:
        return with_table_headers(chunks, llm_contexts(document, chunks, llm, title=title))

    return provide


def context_provider(name: str, llm: Any = None) -> ContextProvider | None:
    """The provider named ``name`` (``none`` gives ``None``)."""
    if name == "none":
        return None
    if name == "headers":
        return header_contexts
    if name == "llm":
        if llm is None:
            raise ValueError("the llm context needs a language model; none was given")
        return llm_provider(llm)
    raise ValueError(f"unknown context {name!r}; choose one of: none, headers, llm")


def with_context(chunks: Sequence[Chunk], contexts: Sequence[str]) -> tuple[Chunk, ...]:
    """The same chunks (offsets and text unchanged) with their context in the metadata."""
    return tuple(
        dataclasses.replace(c, metadata={**c.metadata, CONTEXT_KEY: ctx})
        for c, ctx in zip(chunks, contexts, strict=True)
    )


def embedded_text(chunk: Chunk) -> str:
    """What is embedded or indexed for a chunk: its context, a blank line, its text."""
    context = chunk.metadata.get(CONTEXT_KEY) or ""
    return f"{context}\n\n{chunk.text}" if context else chunk.text
