"""LlamaIndex's node parsers, run by LlamaIndex itself (``llama-index-core``).

Offsets are the nodes' ``start_char_idx``, which LlamaIndex finds with ``str.find``
after splitting (``None`` when the text is not found); :mod:`.align` checks them. The
hierarchical parser reports a child's offset inside its parent's text: it is read as
the parent's start plus that offset, and each parent's children are placed, in order,
inside the parent.

Nothing global is touched: every parser gets its tokenizer (cl100k_base ``encode``,
offline, or one token per character) and its callback manager explicitly, so
LlamaIndex's global tokenizer and ``Settings`` are never read or set; the sentence
tokenizer data (NLTK punkt) ships inside ``llama-index-core``. LlamaIndex prints a
warning for chunk sizes under 50; it goes to stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import groupby, pairwise
from typing import Any

from ..model import Piece
from ..params import Param, Splitter
from ..units import Sizer
from .align import Aligner, LibraryChunk, Placed, align, to_pieces
from .common import (
    ListVectors,
    chunk_overlap_param,
    chunk_size_param,
    declare,
    library_errors,
    model_param,
    overlap_not_above,
    require,
    unit_choice,
)

LIBRARY = "LlamaIndex"
_PACKAGE = "llama-index-core"


def _parsers(strategy: str) -> Any:
    return require("llama_index.core.node_parser", _PACKAGE, strategy)


def _document(text: str, strategy: str) -> Any:
    return require("llama_index.core.schema", _PACKAGE, strategy).Document(text=text)


def _callbacks(strategy: str) -> Any:
    return require("llama_index.core.callbacks", _PACKAGE, strategy).CallbackManager([])


def tokenizer(unit: str) -> Callable[[str], list[Any]]:
    """What LlamaIndex counts with: cl100k_base token ids, or one item per character."""
    if unit == "chars":
        return list
    from ..units import get_encoding

    return get_encoding().encode_ordinary


def _header_path(node: Any) -> dict[str, Any]:
    path = node.metadata.get("header_path")
    if not isinstance(path, str):
        return {}
    parts = [part for part in path.split("/") if part]
    return {"header_path": parts} if parts else {}


def _nodes(strategy: str, parser: Any, text: str) -> list[Any]:
    with library_errors(strategy, LIBRARY):
        return list(parser.get_nodes_from_documents([_document(text, strategy)]))


def _found(nodes: list[Any]) -> list[LibraryChunk]:
    return [LibraryChunk(n.text, n.start_char_idx, _header_path(n)) for n in nodes]


def _split_with(class_name: str, strategy: str) -> Splitter:
    """Run LlamaIndex's ``class_name`` (a text splitter), given every parameter but unit
    by its own name, and the tokenizer for the unit."""

    def split(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
        parser = getattr(_parsers(strategy), class_name)(
            **{name: value for name, value in p.items() if name != "unit"},
            tokenizer=tokenizer(p["unit"]),
            callback_manager=_callbacks(strategy),
        )
        return align(text, _found(_nodes(strategy, parser, text)), sizer, limit=p["chunk_size"])

    return split


def _markdown(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "llamaindex.markdown"
    parser = _parsers(name).MarkdownNodeParser.from_defaults(
        header_path_separator="/", callback_manager=_callbacks(name)
    )
    return align(text, _found(_nodes(name, parser, text)), sizer)


def parse_chunk_sizes(value: str) -> list[int]:
    """``"2048,512,128"`` as a list of positive, strictly decreasing sizes."""
    hint = 'give whole numbers, largest first, separated by commas, like "2048,512,128"'
    try:
        sizes = [int(part) for part in value.replace(" ", "").split(",") if part]
    except ValueError:
        raise ValueError(f"chunk_sizes {value!r} is not a list of sizes; {hint}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise ValueError(f"chunk_sizes {value!r} needs positive sizes; {hint}")
    if any(b >= a for a, b in pairwise(sizes)):
        raise ValueError(f"chunk_sizes {value!r} must decrease; {hint}")
    return sizes


def _check_hierarchy(p: Mapping[str, Any]) -> None:
    smallest = parse_chunk_sizes(p["chunk_sizes"])[-1]
    if p["chunk_overlap"] > smallest:
        raise ValueError(
            f"chunk_overlap ({p['chunk_overlap']}) must be at most the smallest of "
            f"chunk_sizes ({smallest}); lower chunk_overlap"
        )


def _hierarchical(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "llamaindex.hierarchical"
    lib = _parsers(name)
    sizes = parse_chunk_sizes(p["chunk_sizes"])
    callbacks = _callbacks(name)
    ids = [f"chunk_size_{size}" for size in sizes]
    # As HierarchicalNodeParser.from_defaults builds them, with our tokenizer.
    parsers = {
        node_id: lib.SentenceSplitter(
            chunk_size=size,
            chunk_overlap=p["chunk_overlap"],
            tokenizer=tokenizer(p["unit"]),
            callback_manager=callbacks,
        )
        for node_id, size in zip(ids, sizes, strict=True)
    }
    parser = lib.HierarchicalNodeParser.from_defaults(
        node_parser_ids=ids, node_parser_map=parsers, callback_manager=callbacks
    )
    nodes = _nodes(name, parser, text)
    levels: dict[str, int] = {}
    parent_of: dict[str, str | None] = {}
    for n in nodes:  # parents come before their children
        parent = n.parent_node.node_id if n.parent_node is not None else None
        parent_of[n.node_id] = parent
        levels[n.node_id] = levels[parent] + 1 if parent in levels else 0
    aligner = Aligner(text)
    placed: dict[str, Placed] = {}
    order = 0
    for level in range(len(sizes)):
        batch = [(i, n) for i, n in enumerate(nodes) if levels[n.node_id] == level and n.text]
        # Each parent's children are one sequence, placed inside the parent.
        for parent, group in groupby(batch, key=lambda pair: parent_of[pair[1].node_id]):
            siblings = list(group)
            above = placed.get(parent) if parent is not None else None
            found = []
            for _, n in siblings:
                start = n.start_char_idx
                if above is not None and start is not None:
                    start = above.start + start
                metadata = {"level": level, "level_size": sizes[level]}
                found.append(LibraryChunk(n.text, start, metadata))
            within = (above.start, above.end) if above is not None else None
            spans = aligner.place(found, first_order=order, within=within)
            for (i, n), p_ in zip(siblings, spans, strict=True):
                p_.order = i
                placed[n.node_id] = p_
            order += len(siblings)
    ordered = sorted(placed.values(), key=_hierarchy_key)
    position = {id(p_): k for k, p_ in enumerate(ordered)}
    for node_id, p_ in placed.items():
        parent = parent_of[node_id]
        p_.metadata["parent"] = position[id(placed[parent])] if parent in placed else None
    return to_pieces(text, ordered, sizer, sort_key=_hierarchy_key)


def _hierarchy_key(p: Placed) -> tuple[int, int, int]:
    return (p.start, p.metadata["level"], p.order)


def embedding_adapter(vectors: ListVectors) -> Any:
    """Our embedder as a LlamaIndex ``BaseEmbedding``."""
    base = require("llama_index.core.base.embeddings.base", _PACKAGE, "llamaindex.semantic")

    class OurEmbedding(base.BaseEmbedding):  # type: ignore[name-defined]
        def _get_query_embedding(self, query: str) -> list[float]:
            return vectors.one(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return vectors.one(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return vectors.one(text)

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return vectors.many(texts)

    callbacks = _callbacks("llamaindex.semantic")
    return OurEmbedding(model_name=vectors.model.name, callback_manager=callbacks)


def _semantic(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
    name = "llamaindex.semantic"
    lib = _parsers(name)
    parser = lib.SemanticSplitterNodeParser.from_defaults(
        embed_model=embedding_adapter(ListVectors(p)),
        buffer_size=p["buffer_size"],
        breakpoint_percentile_threshold=p["breakpoint_percentile_threshold"],
        callback_manager=_callbacks(name),
    )
    return align(text, _found(_nodes(name, parser, text)), sizer)


# --- declarations ---------------------------------------------------------------------

_UNIT = unit_choice(("tokens", "chars"), "tokens", "chunk_size")
_SIZE = "Tokens per chunk (LlamaIndex's tokenizer; see unit)."
_SEPARATOR = Param("separator", str, " ", "Separator between words.")
_SIZE_CHECK = (overlap_not_above("chunk_size", "chunk_overlap"),)

SENTENCE = declare(
    LIBRARY,
    "llamaindex.sentence",
    "SentenceSplitter",
    "LlamaIndex's SentenceSplitter: paragraphs, then sentences (NLTK punkt), then phrases "
    "and words, merged up to chunk_size with chunk_overlap; chunks are stripped. Offsets "
    "are the nodes' start_char_idx, checked against the document.",
    (
        chunk_size_param(1024, _SIZE),
        chunk_overlap_param(200),
        _SEPARATOR,
        Param("paragraph_separator", str, "\n\n\n", "Separator between paragraphs."),
        _UNIT,
    ),
    split=_split_with("SentenceSplitter", "llamaindex.sentence"),
    checks=_SIZE_CHECK,
)

TOKEN = declare(
    LIBRARY,
    "llamaindex.token",
    "TokenTextSplitter",
    "LlamaIndex's TokenTextSplitter: words (then characters) merged up to chunk_size "
    "tokens with chunk_overlap; chunks are stripped.",
    (
        chunk_size_param(
            1024,
            _SIZE + " When it makes nodes, LlamaIndex keeps 2 of them for metadata, so "
            "chunks hold at most chunk_size - 2.",
            minimum=3,
        ),
        chunk_overlap_param(20),
        _SEPARATOR,
        _UNIT,
    ),
    split=_split_with("TokenTextSplitter", "llamaindex.token"),
    checks=_SIZE_CHECK,
)

MARKDOWN = declare(
    LIBRARY,
    "llamaindex.markdown",
    "MarkdownNodeParser",
    "LlamaIndex's MarkdownNodeParser: one node per header section (code blocks "
    "respected), with the path of enclosing headers; no size limit.",
    (),
    split=_markdown,
    limit_param=None,
)

HIERARCHICAL = declare(
    LIBRARY,
    "llamaindex.hierarchical",
    "HierarchicalNodeParser",
    "LlamaIndex's HierarchicalNodeParser: SentenceSplitter nodes at each of "
    "chunk_sizes, each level cut inside the nodes of the level above. All levels are "
    "shown, ordered by position; level and parent are in each chunk's metadata.",
    (
        Param(
            "chunk_sizes",
            str,
            "2048,512,128",
            "Chunk size of each level, largest first (LlamaIndex's default 2048,512,128).",
        ),
        chunk_overlap_param(20, "Tokens shared by consecutive chunks of a level."),
        _UNIT,
    ),
    split=_hierarchical,
    checks=(_check_hierarchy,),
    limit_param=None,
)

SEMANTIC = declare(
    LIBRARY,
    "llamaindex.semantic",
    "SemanticSplitterNodeParser",
    "LlamaIndex's SemanticSplitterNodeParser over our embedding model: "
    "sentences (NLTK punkt) grouped where the distance between neighbouring sentence "
    "windows stays under a percentile of all distances; no size limit.",
    (
        Param(
            "buffer_size",
            int,
            1,
            "Sentences on each side embedded with each sentence.",
            minimum=1,
            maximum=10,
        ),
        Param(
            "breakpoint_percentile_threshold",
            int,
            95,
            "Cut where the distance is above this percentile of all distances.",
            minimum=0,
            maximum=100,
        ),
        model_param(),
    ),
    split=_semantic,
    limit_param=None,
)

STRATEGIES = (SENTENCE, TOKEN, MARKDOWN, HIERARCHICAL, SEMANTIC)
