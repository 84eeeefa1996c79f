"""LangChain's text splitters, run by LangChain itself (``langchain-text-splitters``,
``langchain-experimental`` for the semantic chunker).

Offsets are LangChain's ``start_index`` (``add_start_index=True``), which LangChain
recovers with ``str.find`` after splitting; :mod:`.align` checks each one against the
source and flags those that are wrong or ``-1`` (the token splitter, overlaps and
repeated text produce both). The Markdown header splitter reports no offsets and
rewrites its text (header lines into metadata, lines re-joined), so its chunks are found
by :mod:`.align` and flagged where their text differs from the source.

Tokens are cl100k_base, loaded offline: LangChain's own ``from_tiktoken_encoder`` and
``TokenTextSplitter`` are given the name tiktoken knows the bundled copy by (LangChain's
default ``gpt2`` is not available offline).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Piece
from ..params import Param
from ..units import Sizer
from .align import LibraryChunk, align
from .common import (
    ListVectors,
    chunk_overlap_param,
    chunk_size_param,
    declare,
    encoding_name,
    library_errors,
    model_param,
    overlap_not_above,
    require,
    unit_choice,
)

LIBRARY = "LangChain"
_SPLITTERS = ("langchain_text_splitters", "langchain-text-splitters")
KEEP = {"start": "start", "end": "end", "none": False}


def _splitters(strategy: str) -> Any:
    return require(*_SPLITTERS, strategy)


def _recursive_kwargs(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "chunk_size": p["chunk_size"],
        "chunk_overlap": p["chunk_overlap"],
        "separators": list(p["separators"]),
        "keep_separator": KEEP[p["keep_separator"]],
        "is_separator_regex": p["is_separator_regex"],
        "strip_whitespace": p["strip_whitespace"],
    }


def _recursive_splitter(lib: Any, p: Mapping[str, Any], **extra: Any) -> Any:
    kwargs = {**_recursive_kwargs(p), **extra}
    cls = lib.RecursiveCharacterTextSplitter
    if p["unit"] == "tokens":
        return cls.from_tiktoken_encoder(encoding_name=encoding_name(), **kwargs)
    return cls(**kwargs)


def _found(docs: list[Any]) -> list[LibraryChunk]:
    return [LibraryChunk(d.page_content, d.metadata.get("start_index")) for d in docs]


def _recursive(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    lib = _splitters("langchain.recursive")
    with library_errors("langchain.recursive", LIBRARY):
        docs = _recursive_splitter(lib, p, add_start_index=True).create_documents([text])
    return align(text, _found(docs), sizer, limit=p["chunk_size"])


def _token(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    lib = _splitters("langchain.token")
    with library_errors("langchain.token", LIBRARY):
        splitter = lib.TokenTextSplitter(
            encoding_name=encoding_name(),
            chunk_size=p["chunk_size"],
            chunk_overlap=p["chunk_overlap"],
            add_start_index=True,
        )
        docs = splitter.create_documents([text])
    return align(text, _found(docs), sizer, limit=p["chunk_size"])


def _markdown(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    lib = _splitters("langchain.markdown")
    headers = [(marker, f"Header {len(marker)}") for marker in p["headers_to_split_on"]]
    with library_errors("langchain.markdown", LIBRARY):
        sections = lib.MarkdownHeaderTextSplitter(
            headers_to_split_on=headers, strip_headers=p["strip_headers"]
        ).split_text(text)
        docs = _recursive_splitter(lib, p).split_documents(sections)
    found = []
    for d in docs:
        path = [d.metadata[name] for _, name in sorted(headers) if name in d.metadata]
        found.append(LibraryChunk(d.page_content, None, {"header_path": path} if path else {}))
    return align(text, found, sizer, reports_offsets=False, limit=p["chunk_size"])


def embeddings_adapter(vectors: ListVectors) -> Any:
    """Our embedder as a LangChain ``Embeddings``."""
    base = require("langchain_core.embeddings", "langchain-core", "langchain.semantic")

    class OurEmbeddings(base.Embeddings):  # type: ignore[name-defined]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return vectors.many(texts)

        def embed_query(self, text: str) -> list[float]:
            return vectors.one(text)

    return OurEmbeddings()


def _semantic(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    lib = require(
        "langchain_experimental.text_splitter", "langchain-experimental", "langchain.semantic"
    )
    adapter = embeddings_adapter(ListVectors(p))
    amount = p["breakpoint_threshold_amount"]
    with library_errors("langchain.semantic", LIBRARY):
        splitter = lib.SemanticChunker(
            adapter,
            buffer_size=p["buffer_size"],
            add_start_index=True,
            breakpoint_threshold_type=p["breakpoint_threshold_type"],
            breakpoint_threshold_amount=None if amount < 0 else amount,
            number_of_chunks=p["number_of_chunks"] or None,
            sentence_split_regex=p["sentence_split_regex"],
            min_chunk_size=p["min_chunk_size"] or None,
        )
        docs = splitter.create_documents([text])
    return align(text, _found(docs), sizer)


# --- declarations ---------------------------------------------------------------------

_SIZE_CHECK = (overlap_not_above("chunk_size", "chunk_overlap"),)

#: RecursiveCharacterTextSplitter's parameters, with LangChain's defaults.
_RECURSIVE_PARAMS = (
    chunk_size_param(4000, "Maximum chunk size, measured by the length function (see unit)."),
    chunk_overlap_param(200, "How much consecutive chunks share, measured like chunk_size."),
    Param(
        "separators",
        list,
        ["\n\n", "\n", " ", ""],
        "Separators tried in order (LangChain's default: paragraphs, lines, spaces, characters).",
    ),
    Param(
        "keep_separator",
        str,
        "start",
        "Where a separator stays: at the start of the next piece (LangChain's "
        "default, keep_separator=True), at the end of the previous one, or dropped.",
        choices=tuple(KEEP),
    ),
    Param("is_separator_regex", bool, False, "Read the separators as regular expressions."),
    Param(
        "strip_whitespace",
        bool,
        True,
        "Strip whitespace from the start and end of every chunk (LangChain's default).",
    ),
    unit_choice(("chars", "tokens"), "chars", "chunk_size"),
)

RECURSIVE = declare(
    LIBRARY,
    "langchain.recursive",
    "RecursiveCharacterTextSplitter",
    "LangChain's RecursiveCharacterTextSplitter, run by LangChain (length in characters, "
    "or cl100k_base tokens through from_tiktoken_encoder). Offsets are LangChain's "
    "start_index, checked against the document.",
    _RECURSIVE_PARAMS,
    split=_recursive,
    checks=_SIZE_CHECK,
)

TOKEN = declare(
    LIBRARY,
    "langchain.token",
    "TokenTextSplitter",
    "LangChain's TokenTextSplitter: windows of cl100k_base tokens decoded back to text. A "
    "character cut between two windows comes back as U+FFFD, and its start_index as -1 "
    "or wrong; both are flagged.",
    (
        chunk_size_param(4000, "Tokens per chunk."),
        chunk_overlap_param(200),
        unit_choice(("tokens",), "tokens", "chunk_size"),
    ),
    split=_token,
    checks=_SIZE_CHECK,
)

MARKDOWN = declare(
    LIBRARY,
    "langchain.markdown",
    "MarkdownHeaderTextSplitter + recursive",
    "LangChain's MarkdownHeaderTextSplitter (sections by header, headers moved to "
    "metadata), each section then cut by RecursiveCharacterTextSplitter, as LangChain's "
    "documentation chains them. LangChain reports no offsets and re-joins lines, so the "
    "chunks are located in the document and differences are flagged.",
    (
        Param(
            "headers_to_split_on",
            list,
            ["#", "##", "###"],
            "Header markers that start a section (named Header 1, Header 2, ...).",
        ),
        Param(
            "strip_headers",
            bool,
            True,
            "Leave header lines out of the chunks (LangChain's default); they stay in the "
            "header path.",
        ),
        *_RECURSIVE_PARAMS,
    ),
    split=_markdown,
    checks=_SIZE_CHECK,
)

SEMANTIC = declare(
    LIBRARY,
    "langchain.semantic",
    "SemanticChunker (experimental)",
    "langchain_experimental's SemanticChunker over our embedding model: cut "
    "where the distance between consecutive sentence windows is high. It re-joins "
    "sentences with single spaces, so chunks are flagged where whitespace differed.",
    (
        Param(
            "buffer_size",
            int,
            1,
            "Sentences on each side embedded with each sentence.",
            minimum=0,
            maximum=10,
        ),
        Param(
            "breakpoint_threshold_type",
            str,
            "percentile",
            "How the distance cutoff is chosen.",
            choices=("percentile", "standard_deviation", "interquartile", "gradient"),
        ),
        Param(
            "breakpoint_threshold_amount",
            float,
            -1.0,
            "The cutoff's amount; -1 uses LangChain's default for the type (percentile 95, "
            "standard_deviation 3, interquartile 1.5, gradient 95).",
            minimum=-1,
        ),
        Param(
            "number_of_chunks",
            int,
            0,
            "Aim for this many chunks instead of a threshold (0: off).",
            minimum=0,
            maximum=100_000,
        ),
        Param(
            "sentence_split_regex",
            str,
            r"(?<=[.?!])\s+",
            "Regular expression that separates sentences.",
        ),
        Param(
            "min_chunk_size",
            int,
            0,
            "Smallest chunk in characters (0: no minimum).",
            minimum=0,
            maximum=1_000_000,
        ),
        model_param(),
    ),
    split=_semantic,
    limit_param=None,
)

STRATEGIES = (RECURSIVE, TOKEN, MARKDOWN, SEMANTIC)
